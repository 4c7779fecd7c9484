"""Joining and splitting arrays: concat/concatenate, stack, split, unstack (NumPy's and the Array
API's semantics), on any device. Composed of slicing and slice assignment, which autograd records,
so gradients flow through them (a join's backward is the slices of the gradient)."""

from __future__ import annotations

import builtins
import operator

from . import _core
from ._array import asarray
from ._dtypes import result_type

__all__ = ["concat", "concatenate", "split", "stack", "unstack"]


def _arrays(xs, who):
    if isinstance(xs, _core.ndarray) or not hasattr(xs, "__iter__"):
        raise TypeError(f"{who}: expected a sequence of arrays, got {type(xs).__name__}")
    arrays = []
    for x in xs:
        if not isinstance(x, _core.ndarray):
            x = asarray(x)
        arrays.append(x)
    if not arrays:
        raise ValueError(f"{who}: need at least one array")
    dev = arrays[0].device
    for i, x in enumerate(arrays):
        if x.device != dev:
            raise ValueError(
                f"{who}: arrays are on different devices ({dev} and {x.device} for array {i}); "
                "move one with .to(device)"
            )
    return arrays


def _axis(axis, ndim, who):
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{who}: axis must be an integer, got {axis!r}") from None
    if not -ndim <= a < ndim:
        raise _core.AxisError(f"{who}: axis {axis} is out of bounds for {ndim} dimensions")
    return a % ndim


def concat(arrays, /, *, axis=0, dtype=None):
    """Joins arrays along an existing axis (``axis=None``: flattened first). The result has
    their promoted dtype (or `dtype`); shapes must match except along `axis`."""
    who = "ember.concat"
    xs = _arrays(arrays, who)
    if axis is None:
        xs = [x.reshape(-1) for x in xs]
        axis = 0
    nd = xs[0].ndim
    if nd == 0:
        raise ValueError(f"{who}: zero-dimensional arrays cannot be concatenated")
    for i, x in enumerate(xs):
        if x.ndim != nd:
            raise ValueError(
                f"{who}: all arrays must have the same number of dimensions; array 0 has {nd} "
                f"and array {i} has {x.ndim}"
            )
    ax = _axis(axis, nd, who)
    shape = list(xs[0].shape)
    for i, x in enumerate(xs[1:], 1):
        for d in range(nd):
            if d != ax and x.shape[d] != shape[d]:
                raise ValueError(
                    f"{who}: array {i} has shape {tuple(x.shape)}, which does not match "
                    f"{tuple(xs[0].shape)} except along axis {ax}"
                )
    shape[ax] = builtins.sum(x.shape[ax] for x in xs)
    out_dtype = result_type(*xs) if dtype is None else dtype
    out = _core.empty(tuple(shape), dtype=out_dtype, device=xs[0].device)
    lead = (slice(None),) * ax
    start = 0
    for x in xs:
        n = x.shape[ax]
        if n:
            out[lead + (slice(start, start + n),)] = x
        start += n
    return out


def concatenate(arrays, /, axis=0, out=None, *, dtype=None):
    """NumPy's name for :func:`concat` (with ``out=``)."""
    r = concat(arrays, axis=axis, dtype=dtype)
    if out is None:
        return r
    if tuple(out.shape) != tuple(r.shape):
        raise ValueError(
            f"ember.concatenate: out has shape {tuple(out.shape)}, expected {tuple(r.shape)}"
        )
    out[...] = r
    return out


def stack(arrays, /, *, axis=0, dtype=None):
    """Joins arrays of one shape along a new axis."""
    who = "ember.stack"
    xs = _arrays(arrays, who)
    shape = tuple(xs[0].shape)
    for i, x in enumerate(xs):
        if tuple(x.shape) != shape:
            raise ValueError(
                f"{who}: all arrays must have the same shape; array 0 has {shape} and array {i} "
                f"has {tuple(x.shape)}"
            )
    ax = _axis(axis, len(shape) + 1, who)
    return concat([_core.expand_dims(x, ax) for x in xs], axis=ax, dtype=dtype)


# More parts than this (beyond the axis length) would only be empty views filling memory.
_MAX_EMPTY_PARTS = 1 << 24


def _sections(value, n, who):
    """The number of sections of an axis of length `n`, checked."""
    k = operator.index(value)
    if k <= 0:
        raise ValueError(f"{who}: the number of sections must be positive, got {k}")
    if k > builtins.max(n, _MAX_EMPTY_PARTS):
        raise ValueError(
            f"{who}: {k} sections of an axis of length {n} would be mostly empty arrays "
            f"(at most {builtins.max(n, _MAX_EMPTY_PARTS)})"
        )
    return k


def split(x, indices_or_sections, /, axis=0):
    """NumPy's split: an int N gives N equal parts (ValueError when the axis does not divide),
    a sequence of indices gives the parts between them. The parts are views of `x`."""
    who = "ember.split"
    x = asarray(x)
    if x.ndim == 0:
        raise ValueError(f"{who}: a zero-dimensional array cannot be split")
    ax = _axis(axis, x.ndim, who)
    n = x.shape[ax]
    if not hasattr(indices_or_sections, "__iter__") or getattr(indices_or_sections, "ndim", 1) == 0:
        k = _sections(indices_or_sections, n, who)
        if n % k:
            raise ValueError(f"{who}: an axis of length {n} does not split into {k} equal parts")
        bounds = [i * (n // k) for i in range(k + 1)]
    else:
        idx = [operator.index(i) for i in indices_or_sections]
        bounds = [0, *(builtins.min(builtins.max(i if i >= 0 else i + n, 0), n) for i in idx), n]
    lead = (slice(None),) * ax
    parts = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        parts.append(x[lead + (slice(a, builtins.max(a, b)),)])
    return parts


def unstack(x, /, *, axis=0):
    """The arrays along `axis` (views), as a tuple: the inverse of :func:`stack`."""
    x = asarray(x)
    ax = _axis(axis, x.ndim, "ember.unstack") if x.ndim else None
    if ax is None:
        raise ValueError("ember.unstack: a zero-dimensional array cannot be unstacked")
    lead = (slice(None),) * ax
    return tuple(x[lead + (i,)] for i in range(x.shape[ax]))
