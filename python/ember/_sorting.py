"""Sorting and order statistics: sort and argsort (Array API and NumPy spellings), searchsorted,
lexsort, partition, argpartition, median, percentile, quantile and their NaN-ignoring variants,
composed from the backends' sort family (a radix sort on the GPU) and ember ops, so they run on
any device without host copies. Every sort is stable; NaN sorts last (first when descending),
-0.0 equals 0.0, complex numbers order by real then imaginary part (NumPy's order)."""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from . import _core
from ._array import asarray
from ._dtypes import result_type
from ._joining import _axis
from ._manipulation import _asarray, _axes
from ._numpy_extras import take_along_axis

__all__ = [
    "argpartition",
    "argsort",
    "lexsort",
    "median",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "partition",
    "percentile",
    "quantile",
    "searchsorted",
    "sort",
]

_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _check_kind(kind, order, who):
    if kind not in _KINDS:
        raise ValueError(f"{who}: kind must be one of {_KINDS[1:]} or None, got {kind!r}")
    if order is not None:
        raise ValueError(f"{who}: order is only for structured arrays, which ember does not have")


def _sort_args(x, axis, who):
    x = _asarray(x)
    if axis is None:
        return x.reshape(-1), -1
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{who}: axis must be an integer or None, got {axis!r}") from None
    if x.ndim == 0:
        raise _core.AxisError(f"{who}: axis {a} is out of bounds for a 0-dimensional array")
    return x, _axis(a, x.ndim, who)


def sort(x, /, axis=-1, kind=None, order=None, *, descending=False, stable=True):
    """A sorted copy of ``x`` along `axis` (``None``: flattened). Stable; NaN last;
    ``descending=True`` is the reverse order (NaN first) with equal elements in input order.
    Differentiable: the gradient flows back through the permutation."""
    who = "ember.sort"
    _check_kind(kind, order, who)
    x, a = _sort_args(x, axis, who)
    return _core._sort(x, a, builtins.bool(descending), builtins.bool(stable))


def argsort(x, /, axis=-1, kind=None, order=None, *, descending=False, stable=True):
    """The int64 indices that sort ``x`` along `axis` (``None``: flattened), stable (ties keep
    their input order, also with ``descending=True``). Not differentiable (integer output)."""
    who = "ember.argsort"
    _check_kind(kind, order, who)
    x, a = _sort_args(x, axis, who)
    return _core._argsort(x, a, builtins.bool(descending), builtins.bool(stable))


def searchsorted(x1, x2, /, side="left", sorter=None):
    """Insertion positions (int64) of ``x2``'s elements in the ascending 1-D ``x1`` that keep it
    sorted: before equal elements for ``side='left'``, after them for ``'right'``. ``sorter``
    holds indices that sort ``x1``. Runs on the device (a binary search per element)."""
    who = "ember.searchsorted"
    if side not in ("left", "right"):
        raise ValueError(f"{who}: side must be 'left' or 'right', got {side!r}")
    x1 = _asarray(x1)
    if x1.ndim != 1:
        raise ValueError(f"{who}: x1 must be 1-dimensional, got {x1.ndim} dimensions")
    if sorter is not None:
        sorter = _asarray(sorter)
        if sorter.dtype.kind not in "iu":
            raise TypeError(f"{who}: sorter must be integers, got dtype {sorter.dtype}")
        if sorter.shape != x1.shape:
            raise ValueError(f"{who}: sorter has shape {sorter.shape} but x1 has {x1.shape}")
        x1 = _core.take(x1, sorter)
    if isinstance(x2, builtins.bool | int | float | complex):
        dt = result_type(x1, x2)
        v = _core.full((), x2, dtype=dt, device=x1.device)
    else:
        v = x2 if isinstance(x2, _core.ndarray) else asarray(x2, device=x1.device)
        dt = result_type(x1, v)
    if x1.device != v.device:
        raise ValueError(f"{who}: x1 is on {x1.device} but x2 is on {v.device}")
    x1 = x1 if x1.dtype == dt else x1.astype(dt)
    v = v if v.dtype == dt else v.astype(dt)
    return _core._searchsorted(x1, v, side == "right")


def lexsort(keys, axis=-1):
    """Indices that sort by several keys, the last key primary (NumPy's lexsort): repeated
    stable argsorts, from the first key to the last."""
    who = "ember.lexsort"
    if isinstance(keys, _core.ndarray):
        if keys.ndim == 0:
            raise TypeError(f"{who}: need a sequence of keys, got a 0-d array")
        ks = [keys[i] for i in range(keys.shape[0])]
    else:
        ks = [_asarray(k) for k in keys]
    if not ks:
        raise TypeError(f"{who}: need at least one key")
    shape = ks[0].shape
    for k in ks[1:]:
        if k.shape != shape:
            raise ValueError(f"{who}: all keys need the same shape, got {shape} and {k.shape}")
    if len(shape) == 0:
        raise _core.AxisError(f"{who}: axis {axis} is out of bounds for 0-dimensional keys")
    a = _axis(axis, len(shape), who)
    idx = _core._argsort(ks[0], a, False, True)
    for k in ks[1:]:
        order = _core._argsort(take_along_axis(k, idx, axis=a), a, False, True)
        idx = take_along_axis(idx, order, axis=a)
    return idx


def _check_kth(kth, n, who):
    ks = kth if isinstance(kth, list | tuple) else [kth]
    try:
        ks = [operator.index(k) for k in ks]
    except TypeError:
        raise TypeError(f"{who}: kth must be an integer or a sequence of integers") from None
    for k in ks:
        if not -n <= k < n:
            raise ValueError(f"{who}: kth(={k}) out of bounds ({n})")


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A copy of ``a`` with the k-th element of each slice along `axis` where a sort would put it,
    smaller ones before, larger ones after (NumPy's partition property). Computed by a sort."""
    who = "ember.partition"
    if kind != "introselect":
        raise ValueError(f"{who}: kind must be 'introselect', got {kind!r}")
    _check_kind(None, order, who)
    x, ax = _sort_args(a, axis, who)
    _check_kth(kth, x.shape[ax], who)
    return _core._sort(x, ax, False, True)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """Indices that partition ``a`` (see partition). Computed by a stable argsort."""
    who = "ember.argpartition"
    if kind != "introselect":
        raise ValueError(f"{who}: kind must be 'introselect', got {kind!r}")
    _check_kind(None, order, who)
    x, ax = _sort_args(a, axis, who)
    _check_kth(kth, x.shape[ax], who)
    return _core._argsort(x, ax, False, True)


# ---- order statistics -------------------------------------------------------------------------

_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _reduced_last(x, axis, who):
    """``x`` with the reduced axes merged into one last axis, and the kept shape with keepdims."""
    if axis is None:
        return x.reshape(-1), (1,) * x.ndim
    axes = _axes(axis, x.ndim, who)
    rest = [d for d in range(x.ndim) if d not in axes]
    moved = _core.permute_dims(x, tuple(rest + axes))
    kept = tuple(x.shape[d] for d in rest)
    n = math.prod(x.shape[d] for d in axes)
    keep = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim))
    return moved.reshape(kept + (n,)), keep


def _lerp(a, b, t):
    # NumPy's formula: from the nearer end, so t = 1 gives b exactly.
    diff = b - a
    return _core.where(t >= 0.5, b - diff * (1 - t), a + diff * t)


def _quantile(x, q, axis, method, keepdims, who, ignore_nan, scale=1.0):
    x = _asarray(x)
    if x.dtype.kind == "c":
        raise TypeError(f"{who}: x must be real, got dtype {x.dtype}")
    if method not in _METHODS:
        raise ValueError(f"{who}: method must be one of {_METHODS}, got {method!r}")
    weak_q = isinstance(q, int | float) and not isinstance(q, builtins.bool)
    if isinstance(q, _core.ndarray):
        qa = q.astype(_core.float64)
        if qa.device != x.device:
            raise ValueError(f"{who}: q is on {qa.device} but x is on {x.device}")
    else:
        qa = asarray(np.asarray(q, dtype=np.float64), device=x.device)
    if scale != 1.0:
        qa = qa / scale
    if qa.size and builtins.bool(_core.any((qa < 0) | (qa > 1) | _core.isnan(qa))):
        lim = "[0, 100]" if scale != 1.0 else "[0, 1]"
        raise ValueError(f"{who}: q must be in the range {lim}")
    xs, keep = _reduced_last(x, axis, who)
    n = xs.shape[-1]
    if n == 0:
        raise IndexError(f"{who}: cannot take a quantile of an empty slice")
    s = _core._sort(xs, -1, False, True)
    qflat = qa.reshape(-1)
    nq = qflat.shape[0]
    lead = xs.ndim - 1
    floating = x.dtype.kind == "f"
    if ignore_nan and floating:
        cnt = _core.sum(~_core.isnan(xs), axis=-1, keepdims=True, dtype=_core.int64)
        last = _core.maximum(cnt - 1, 0).astype(_core.float64)
    else:
        cnt = None
        last = _core.full((1,) * lead + (1,), n - 1, dtype=_core.float64, device=x.device)
    virt = last * qflat.reshape((1,) * lead + (nq,))  # (..., nq)
    lo_f = _core.floor(virt)
    top = last.astype(_core.int64)
    lo = _core.minimum(lo_f.astype(_core.int64), top)
    hi = _core.minimum(lo + 1, top)
    if method == "lower":
        r = take_along_axis(s, lo, axis=-1)
    elif method == "higher":
        r = take_along_axis(s, _core.minimum(_core.ceil(virt).astype(_core.int64), top), axis=-1)
    elif method == "nearest":
        r = take_along_axis(s, _core.minimum(_core.round(virt).astype(_core.int64), top), axis=-1)
    else:
        ct = x.dtype if floating and weak_q else _core.float64
        a = take_along_axis(s, lo, axis=-1).astype(ct)
        b = take_along_axis(s, hi, axis=-1).astype(ct)
        g = virt - lo_f
        if method == "midpoint":
            g = _core.where(g == 0, 0.0, 0.5)
        r = _lerp(a, b, g.astype(ct))
    if floating:
        nan = _core.full((), float("nan"), dtype=r.dtype, device=r.device)
        if cnt is not None:
            r = _core.where(cnt == 0, nan, r)
        else:
            r = _core.where(_core.isnan(s[..., n - 1 : n]), nan, r)
    # (kept..., nq) -> q.shape + kept (+ keepdims ones).
    r = _core.permute_dims(r, (lead,) + tuple(range(lead)))
    out_rest = keep if keepdims else xs.shape[:-1]
    return r.reshape(tuple(qa.shape) + tuple(out_rest))


def quantile(
    a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, **kw
):
    """NumPy's quantile (q in [0, 1]) with methods 'linear' (default), 'lower', 'higher',
    'nearest' and 'midpoint'; NaN in a slice gives NaN."""
    _no_out(out, kw, "ember.quantile")
    return _quantile(a, q, axis, method, keepdims, "ember.quantile", False)


def percentile(
    a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, **kw
):
    """NumPy's percentile (q in [0, 100]); see quantile."""
    _no_out(out, kw, "ember.percentile")
    return _quantile(a, q, axis, method, keepdims, "ember.percentile", False, 100.0)


def nanquantile(
    a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, **kw
):
    """quantile ignoring NaN (NaN for an all-NaN slice)."""
    _no_out(out, kw, "ember.nanquantile")
    return _quantile(a, q, axis, method, keepdims, "ember.nanquantile", True)


def nanpercentile(
    a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, **kw
):
    """percentile ignoring NaN (NaN for an all-NaN slice)."""
    _no_out(out, kw, "ember.nanpercentile")
    return _quantile(a, q, axis, method, keepdims, "ember.nanpercentile", True, 100.0)


def _no_out(out, kw, who):
    if out is not None:
        raise ValueError(f"{who}: out= is not supported")
    for k in kw:
        if k != "interpolation" and k != "weights":
            raise TypeError(f"{who}: unexpected keyword argument {k!r}")
        if k == "weights" and kw[k] is not None:
            raise ValueError(f"{who}: weights are not supported")
        if k == "interpolation":
            raise TypeError(f"{who}: 'interpolation' was renamed 'method' in NumPy 1.22")


def _median(a, axis, keepdims, who, ignore_nan):
    x = _asarray(a)
    if x.dtype.kind == "c":
        raise TypeError(f"{who}: x must be real, got dtype {x.dtype}")
    xs, keep = _reduced_last(x, axis, who)
    n = xs.shape[-1]
    out_shape = keep if keepdims else xs.shape[:-1]
    ct = x.dtype if x.dtype.kind == "f" else _core.float64
    if n == 0:
        return _core.full(out_shape, float("nan"), dtype=ct, device=x.device)
    s = _core._sort(xs, -1, False, True)
    floating = x.dtype.kind == "f"
    if ignore_nan and floating:
        cnt = _core.sum(~_core.isnan(xs), axis=-1, keepdims=True, dtype=_core.int64)
        c1 = _core.maximum(cnt - 1, 0)
        lo = c1 // 2
        hi = c1 - lo
        r = (take_along_axis(s, lo, axis=-1) + take_along_axis(s, hi, axis=-1)) / 2
        r = _core.where(cnt == 0, float("nan"), r.astype(ct))
    else:
        lo, hi = (n - 1) // 2, n // 2
        a_lo = s[..., lo : lo + 1].astype(ct)
        r = a_lo if lo == hi else (a_lo + s[..., hi : hi + 1].astype(ct)) / 2
        if floating:
            r = _core.where(_core.isnan(s[..., n - 1 : n]), float("nan"), r)
    return r.astype(ct).reshape(tuple(out_shape))


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along `axis` (None: all elements): the mean of the two middle elements of an
    even count; NaN in a slice gives NaN; integers give float64."""
    _no_out(out, {}, "ember.median")
    return _median(a, axis, keepdims, "ember.median", False)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """median ignoring NaN (NaN for an all-NaN slice)."""
    _no_out(out, {}, "ember.nanmedian")
    return _median(a, axis, keepdims, "ember.nanmedian", True)


# ---- ndarray methods ------------------------------------------------------------------------


def _method_sort(self, axis=-1, kind=None, order=None, *, descending=False, stable=True):
    """Sorts the array in place along `axis` (NumPy's ndarray.sort)."""
    who = "ember.ndarray.sort"
    _check_kind(kind, order, who)
    if axis is None:
        raise ValueError(f"{who}: axis=None is not allowed for an in-place sort")
    x, a = _sort_args(self, axis, who)
    self[...] = _core._sort(x, a, builtins.bool(descending), builtins.bool(stable))


def _method_argsort(self, axis=-1, kind=None, order=None, *, descending=False, stable=True):
    """The indices that sort the array (see ember.argsort)."""
    return argsort(self, axis, kind, order, descending=descending, stable=stable)


def _method_searchsorted(self, v, side="left", sorter=None):
    """Insertion positions of v in this sorted 1-D array (see ember.searchsorted)."""
    return searchsorted(self, v, side=side, sorter=sorter)


def _method_partition(self, kth, axis=-1, kind="introselect", order=None):
    """Partitions the array in place (see ember.partition)."""
    self[...] = partition(self, kth, axis, kind, order)


def _method_argpartition(self, kth, axis=-1, kind="introselect", order=None):
    """Indices that partition the array (see ember.argpartition)."""
    return argpartition(self, kth, axis, kind, order)


_core.ndarray.sort = _method_sort
_core.ndarray.argsort = _method_argsort
_core.ndarray.searchsorted = _method_searchsorted
_core.ndarray.partition = _method_partition
_core.ndarray.argpartition = _method_argpartition
