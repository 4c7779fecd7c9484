"""Creation functions composed from the core ones (zeros, full, eye, arange, linspace): the
*_like family, from existing data (array, asanyarray, ascontiguousarray, asfortranarray,
asarray_chkfinite, require, copy, fromfunction), and ones and ranges (identity, logspace,
geomspace, meshgrid). The matrices (tri, diag, vander, ...) are in _matrices; NumPy's readers
from text and files are in _io."""

from __future__ import annotations

import math
import operator

from . import _core
from ._array import asarray
from ._indexing import indices
from ._manipulation import _asarray

__all__ = [
    "array",
    "asanyarray",
    "asarray_chkfinite",
    "ascontiguousarray",
    "asfortranarray",
    "copy",
    "empty_like",
    "fromfunction",
    "full_like",
    "geomspace",
    "identity",
    "logspace",
    "meshgrid",
    "ones_like",
    "require",
    "zeros_like",
]


def _like(x, dtype, device, shape, order, who):
    """The shape (`shape` when given: NumPy's ``shape=`` override), dtype and device of `x`."""
    if order not in ("K", "A", "C", "F"):
        raise ValueError(f"ember.{who}: order must be one of 'K', 'A', 'C', 'F', got {order!r}")
    x = _asarray(x)
    if shape is None:
        shape = x.shape
    elif not hasattr(shape, "__len__"):
        shape = (operator.index(shape),)
    else:
        shape = tuple(operator.index(s) for s in shape)
    return shape, x.dtype if dtype is None else dtype, x.device if device is None else device


# NumPy's signatures (dtype, order, subok, shape); an ember array has no subclasses to keep.
# order="K" keeps the memory order of `x`'s axes (a channels_last image batch, a transpose),
# as NumPy does; "F" (and "A" for an F-contiguous `x`) is
# column-major; everything else is C-ordered.


def _like_order(x, order, shape):
    """The axis permutation to create a *_like result in (its memory order, slowest first), or
    None for C order."""
    if shape is not None or order == "C" or not isinstance(x, _core.ndarray) or x.ndim < 2:
        return None
    if order == "F" or (order == "A" and _is_f_contiguous(x) and not _is_c_contiguous(x)):
        return tuple(reversed(range(x.ndim)))
    if order != "K" or _is_c_contiguous(x):
        return None
    st = x.strides  # axes by decreasing stride (stable): x's memory order, as NumPy's "K"
    perm = tuple(sorted(range(x.ndim), key=lambda d: -abs(st[d])))
    return None if perm == tuple(range(x.ndim)) else perm


def _in_order(make, shape, perm):
    if perm is None:
        return make(shape)
    inv = [0] * len(perm)
    for i, d in enumerate(perm):
        inv[d] = i
    return make(tuple(shape[d] for d in perm)).transpose(tuple(inv))


def empty_like(
    x, /, dtype=None, order="K", subok=True, shape=None, *, device=None, requires_grad=False
):
    """An uninitialized array with the shape of `x` (or `shape`), and by default its dtype and
    device."""
    perm = _like_order(x, order, shape)
    shape, dt, dev = _like(x, dtype, device, shape, order, "empty_like")
    out = _in_order(lambda s: _core.empty(s, dtype=dt, device=dev), shape, perm)
    return out.requires_grad_() if requires_grad else out


def zeros_like(
    x, /, dtype=None, order="K", subok=True, shape=None, *, device=None, requires_grad=False
):
    """Zeros with the shape of `x` (or `shape`), and by default its dtype and device."""
    perm = _like_order(x, order, shape)
    shape, dt, dev = _like(x, dtype, device, shape, order, "zeros_like")
    out = _in_order(lambda s: _core.zeros(s, dtype=dt, device=dev), shape, perm)
    return out.requires_grad_() if requires_grad else out


def ones_like(
    x, /, dtype=None, order="K", subok=True, shape=None, *, device=None, requires_grad=False
):
    """Ones with the shape of `x` (or `shape`), and by default its dtype and device."""
    perm = _like_order(x, order, shape)
    shape, dt, dev = _like(x, dtype, device, shape, order, "ones_like")
    out = _in_order(lambda s: _core.ones(s, dtype=dt, device=dev), shape, perm)
    return out.requires_grad_() if requires_grad else out


def full_like(
    x,
    /,
    fill_value,
    dtype=None,
    order="K",
    subok=True,
    shape=None,
    *,
    device=None,
    requires_grad=False,
):
    """`fill_value` with the shape of `x` (or `shape`), and by default its dtype and device."""
    perm = _like_order(x, order, shape)
    shape, dt, dev = _like(x, dtype, device, shape, order, "full_like")
    out = _in_order(lambda s: _core.full(s, fill_value, dtype=dt, device=dev), shape, perm)
    return out.requires_grad_() if requires_grad else out


# ---- from existing data ---------------------------------------------------------------------


def array(object, dtype=None, *, copy=True, ndmin=0, device=None):  # noqa: A002
    """NumPy's array: a new array (a copy unless copy=False allows reusing `object`), with at
    least `ndmin` dimensions."""
    x = asarray(object, dtype=dtype, copy=True if copy else None, device=device)
    ndmin = operator.index(ndmin)
    if x.ndim < ndmin:
        x = x.reshape((1,) * (ndmin - x.ndim) + tuple(x.shape))
    return x


def copy(a, order="K"):
    """A copy of `a` (C order)."""
    if order not in ("K", "C", "A"):
        raise ValueError(f"ember.copy: only C-ordered copies exist, got order={order!r}")
    return asarray(a, copy=True)


def asanyarray(a, dtype=None, order=None, *, device=None):
    """asarray (ember has no array subclasses to keep)."""
    return asarray(a, dtype=dtype, device=device)


def ascontiguousarray(a, dtype=None):
    """A C-contiguous array with the data of `a` (at least 1-D), copying only when needed."""
    same_dtype = dtype is None or (isinstance(a, _core.ndarray) and a.dtype == dtype)
    x = a if isinstance(a, _core.ndarray) and same_dtype else asarray(a, dtype=dtype)
    if x.ndim == 0:
        x = x.reshape((1,))
    return x if _is_c_contiguous(x) else x.copy()


def asfortranarray(a, dtype=None):
    """An F-contiguous (column-major) array with the data of `a` (at least 1-D), copying only
    when needed. ember's ops accept any layout; this one is for code that hands memory on."""
    same_dtype = dtype is None or (isinstance(a, _core.ndarray) and a.dtype == dtype)
    x = a if isinstance(a, _core.ndarray) and same_dtype else asarray(a, dtype=dtype)
    if x.ndim == 0:
        x = x.reshape((1,))
    if _is_f_contiguous(x):
        return x
    axes = tuple(reversed(range(x.ndim)))
    return _core.permute_dims(_core.permute_dims(x, axes).copy(), axes)


def _is_f_contiguous(x):
    if x.size == 0:
        return True  # NumPy counts empty arrays as contiguous either way
    expected = x.itemsize
    for n, s in zip(x.shape, x.strides, strict=True):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def _is_c_contiguous(x):
    expected = x.itemsize  # strides are in bytes, as NumPy's
    for n, s in zip(reversed(x.shape), reversed(x.strides), strict=True):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def asarray_chkfinite(a, dtype=None):
    """asarray, raising ValueError when the array holds inf or NaN."""
    x = asarray(a, dtype=dtype)
    if x.dtype.kind in "fc" and not bool(_core.all(_core.isfinite(x)).item()):
        raise ValueError("ember.asarray_chkfinite: array must not contain infs or NaNs")
    return x


def require(a, dtype=None, requirements=None, *, like=None):
    """asarray (every ember array is aligned, writeable and owns or views C-ordered memory;
    'F' and 'FORTRAN' are not available)."""
    if isinstance(requirements, str):
        requirements = [requirements]
    reqs = set()
    for r in requirements or []:
        if not isinstance(r, str):
            raise TypeError(f"ember.require: requirements must be strings, got {r!r}")
        reqs.add(r.upper())
    if reqs & {"F", "F_CONTIGUOUS", "FORTRAN"}:
        raise ValueError("ember.require: Fortran-ordered arrays are not supported")
    x = asarray(a, dtype=dtype)
    return ascontiguousarray(x) if reqs & {"C", "C_CONTIGUOUS", "CONTIGUOUS"} and x.ndim else x


def fromfunction(function, shape, *, dtype=float, device=None, **kwargs):
    """function(*indices) with one index array per dimension of `shape`."""
    dt = _core.float64 if dtype is float else dtype
    grids = indices(tuple(shape), dtype=dt if dt != _core.bool else _core.int64)
    if device is not None:
        grids = grids.to(device)
    return function(*[g for g in grids], **kwargs)


# ---- ones, ranges and grids -----------------------------------------------------------------


def identity(n, dtype=None, *, device=None):
    """The n x n identity matrix."""
    return _core.eye(n, dtype=dtype, device=device)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, *, device=None):
    """``base ** linspace(start, stop, num)``."""
    y = _core.linspace(start, stop, num, endpoint=endpoint, device=device, dtype=_core.float64)
    out = _core.pow(base, y)
    return out if dtype is None else out.astype(dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, *, device=None):
    """Numbers spaced evenly on a log scale from `start` to `stop` (same sign, non-zero); the
    ends are exact."""
    if start == 0 or stop == 0:
        raise ValueError("ember.geomspace: start and stop must be non-zero")
    if (start < 0) != (stop < 0):
        raise ValueError("ember.geomspace: start and stop must have the same sign")
    sign = -1.0 if start < 0 else 1.0
    lo, hi = math.log10(abs(start)), math.log10(abs(stop))
    out = logspace(lo, hi, num, endpoint=endpoint, device=device) * sign
    if num > 0:
        out[0] = float(start)
        if endpoint and num > 1:
            out[-1] = float(stop)
    return out if dtype is None else out.astype(dtype)


def meshgrid(*arrays, indexing="xy"):
    """Coordinate arrays from 1-D arrays (``indexing="xy"``: the first two axes swapped, as
    NumPy's default)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"ember.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [_asarray(a).reshape(-1) for a in arrays]
    shape = [x.shape[0] for x in xs]
    if indexing == "xy" and len(xs) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xs):
        pos = i
        if indexing == "xy" and len(xs) >= 2 and i < 2:
            pos = 1 - i
        view = [1] * len(xs)
        view[pos] = x.shape[0]
        out.append(_core.broadcast_to(x.reshape(tuple(view)), tuple(shape)).copy())
    return out
