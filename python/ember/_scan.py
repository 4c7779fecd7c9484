"""Scans and compaction: cumulative_sum/cumulative_prod (Array API), cumsum/cumprod, nonzero,
argwhere and flatnonzero (NumPy), over the core's scan and compaction families."""

from __future__ import annotations

from . import _core
from ._array import asarray
from ._joining import concat, stack

__all__ = [
    "argwhere",
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "flatnonzero",
    "nonzero",
]


def _check(x, who):
    if not isinstance(x, _core.ndarray):
        raise TypeError(f"{who}: expected an ember.ndarray, got {type(x).__name__}")


def _zero_d(x, axis, who):
    # NumPy scans a 0-d array as a 1-element line (axis None, 0 or -1).
    if axis not in (None, 0, -1):
        raise _core.AxisError(f"{who}: axis {axis} is out of bounds for array of dimension 0")
    return x.reshape((1,))


def _scan(fn, x, axis, dtype, who):
    if not isinstance(x, _core.ndarray):
        x = asarray(x)  # NumPy's array-likes: lists, tuples, scalars, NumPy arrays
    if x.ndim == 0:
        x, axis = _zero_d(x, axis, who), None
    return fn(x, axis, dtype)


def cumsum(a, axis=None, dtype=None):
    """Cumulative sum along `axis` (of the flattened array when None), NumPy's cumsum: bool and
    integer inputs accumulate in int64 (unsigned ones in uint64) unless `dtype` is given."""
    return _scan(_core._cumsum, a, axis, dtype, "ember.cumsum")


def cumprod(a, axis=None, dtype=None):
    """Cumulative product along `axis` (of the flattened array when None), NumPy's cumprod.
    Not differentiable (its backward raises)."""
    return _scan(_core._cumprod, a, axis, dtype, "ember.cumprod")


def _cumulative(fn, x, axis, dtype, include_initial, identity, who):
    _check(x, who)
    if x.ndim == 0:
        x = _zero_d(x, axis, who)
        axis = 0
    if axis is None:
        if x.ndim > 1:
            raise ValueError(
                f"{who}: for arrays which have more than one dimension the axis argument is "
                f"required (x has shape {x.shape})"
            )
        axis = 0
    r = fn(x, axis, dtype)
    if not include_initial:
        return r
    ax = axis + r.ndim if axis < 0 else axis
    shape = list(r.shape)
    shape[ax] = 1
    first = _core.full(tuple(shape), identity, dtype=r.dtype, device=r.device)
    return concat([first, r], axis=ax)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Array API cumulative_sum: inclusive sums along `axis` (required for ndim > 1); with
    `include_initial`, a leading zero along that axis."""
    return _cumulative(_core._cumsum, x, axis, dtype, include_initial, 0, "ember.cumulative_sum")


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Array API cumulative_prod: inclusive products along `axis` (required for ndim > 1); with
    `include_initial`, a leading one along that axis. Not differentiable."""
    return _cumulative(_core._cumprod, x, axis, dtype, include_initial, 1, "ember.cumulative_prod")


def nonzero(x, /):
    """Indices of the nonzero elements: a tuple of int64 arrays, one per dimension, in C order.
    Raises ValueError for 0-d arrays (as the Array API and NumPy 2)."""
    _check(x, "ember.nonzero")
    return _core._nonzero(x)


def flatnonzero(a):
    """Positions (int64) of the nonzero elements of the flattened array."""
    _check(a, "ember.flatnonzero")
    return _core._flatnonzero(a)


def argwhere(a):
    """Indices of the nonzero elements as an (N, a.ndim) int64 array (NumPy's argwhere)."""
    _check(a, "ember.argwhere")
    if a.ndim == 0:
        n = 1 if bool(a != 0) else 0
        return _core.zeros((n, 0), dtype=_core.int64, device=a.device)
    return stack(list(_core._nonzero(a)), axis=1)


def _method_cumsum(self, axis=None, dtype=None):
    return cumsum(self, axis, dtype)


def _method_cumprod(self, axis=None, dtype=None):
    return cumprod(self, axis, dtype)


def _method_nonzero(self):
    return nonzero(self)


_core.ndarray.cumsum = _method_cumsum


_core.ndarray.cumprod = _method_cumprod


_core.ndarray.nonzero = _method_nonzero
