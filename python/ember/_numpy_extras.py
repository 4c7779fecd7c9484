"""NumPy functions beyond the Array API that compose from ember ops (so they run on any device and
differentiate through their primitives): take_along_axis, tri, identity, indices, logspace,
geomspace, diag, diagflat, ptp, average, around, cov, corrcoef, and the NaN-ignoring reductions
nansum, nanmean, nanmax, nanmin, nanvar, nanstd, nanargmax, nanargmin."""

from __future__ import annotations

import builtins
import math
import operator

from . import _core
from ._joining import _axis
from ._linalg import diagonal as _diagonal
from ._manipulation import _asarray

__all__ = [
    "average",
    "around",
    "corrcoef",
    "cov",
    "diag",
    "diagflat",
    "geomspace",
    "identity",
    "indices",
    "logspace",
    "nanargmax",
    "nanargmin",
    "nanmax",
    "nanmean",
    "nanmin",
    "nanstd",
    "nansum",
    "nanvar",
    "ptp",
    "take_along_axis",
    "tri",
]


def take_along_axis(x, indices, /, *, axis=-1):
    """``x`` indexed along `axis` by an integer array of the same number of dimensions (other
    dimensions broadcast), as NumPy's take_along_axis. Negative indices count from the end."""
    who = "ember.take_along_axis"
    x, idx = _asarray(x), _asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{who}: indices must be integers, got dtype {idx.dtype}")
    if idx.ndim != x.ndim:
        raise ValueError(f"{who}: indices have {idx.ndim} dimensions but the array has {x.ndim}")
    d = _axis(axis, x.ndim, who)
    n = x.shape[d]
    shape = []
    for k in range(x.ndim):
        if k == d:
            shape.append(idx.shape[k])
        elif idx.shape[k] == x.shape[k] or idx.shape[k] == 1 or x.shape[k] == 1:
            shape.append(builtins.max(idx.shape[k], x.shape[k]))
        else:
            raise ValueError(
                f"{who}: indices of shape {tuple(idx.shape)} do not broadcast with the array's "
                f"shape {tuple(x.shape)} outside axis {d}"
            )
    idx = _core.where(idx < 0, idx + n, idx).astype(_core.int64)
    # Flat offsets into x broadcast to `shape` (with its own extent n along d), C order.
    full = list(shape)
    full[d] = n
    src = _core.broadcast_to(x, tuple(full)).reshape(-1)
    strides = [1] * x.ndim
    for k in range(x.ndim - 2, -1, -1):
        strides[k] = strides[k + 1] * full[k + 1]
    off = _core.broadcast_to(idx, tuple(shape)) * strides[d]
    for k in range(x.ndim):
        if k != d and shape[k] > 1:
            view = [1] * x.ndim
            view[k] = shape[k]
            coord = _core.arange(shape[k], dtype=_core.int64, device=x.device)
            off = off + coord.reshape(tuple(view)) * strides[k]
    return _core.take(src, off.reshape(-1)).reshape(tuple(shape))


def tri(N, M=None, k=0, dtype=None, *, device=None):
    """Ones at and below diagonal `k` of an N x M array, zeros elsewhere (float64 by default)."""
    M = N if M is None else M
    rows = _core.arange(N, device=device).reshape(N, 1)
    cols = _core.arange(M, device=device).reshape(1, M)
    out = cols - rows <= operator.index(k)
    return out.astype(_core.float64 if dtype is None else dtype)


def identity(n, dtype=None, *, device=None):
    """The n x n identity matrix."""
    return _core.eye(n, dtype=dtype, device=device)


def indices(dimensions, dtype=None, *, device=None):
    """An array of shape (len(dimensions), *dimensions): entry i holds each element's index
    along dimension i."""
    dims = tuple(operator.index(d) for d in dimensions)
    out = []
    for i, n in enumerate(dims):
        view = [1] * len(dims)
        view[i] = n
        a = _core.arange(n, dtype=_core.int64 if dtype is None else dtype, device=device)
        out.append(_core.broadcast_to(a.reshape(tuple(view)), dims).copy())
    from ._joining import stack

    if not out:
        return _core.zeros((0,), dtype=_core.int64 if dtype is None else dtype, device=device)
    return stack(out)


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


def diag(v, k=0):
    """A 1-D array's values on diagonal `k` of a square matrix, or a 2-D array's diagonal `k`."""
    v = _asarray(v)
    k = operator.index(k)
    if v.ndim == 2:
        return _diagonal(v, offset=k).copy()
    if v.ndim != 1:
        raise ValueError(f"ember.diag: the input must be 1-D or 2-D, got {v.ndim} dimensions")
    n = v.shape[0] + builtins.abs(k)
    rows = _core.arange(n, device=v.device).reshape(n, 1)
    cols = _core.arange(n, device=v.device).reshape(1, n)
    on = cols - rows == k
    # the value for row r (k >= 0) or column c (k < 0): v padded at the end to length n
    pad = _core.zeros((builtins.abs(k),), dtype=v.dtype, device=v.device)
    from ._joining import concat

    vals = concat([v, pad]) if k else v
    line = vals.reshape(n, 1) if k >= 0 else vals.reshape(1, n)
    return _core.where(on, line, _core.zeros((), dtype=v.dtype, device=v.device))


def diagflat(v, k=0):
    """diag of the flattened input."""
    return diag(_asarray(v).reshape(-1), k)


def ptp(x, axis=None, keepdims=False):
    """max - min (along `axis`)."""
    x = _asarray(x)
    return _core.max(x, axis=axis, keepdims=keepdims) - _core.min(x, axis=axis, keepdims=keepdims)


def average(x, axis=None, weights=None, returned=False, *, keepdims=False):
    """The (weighted) mean along `axis`; with `returned`, also the sum of the weights."""
    x = _asarray(x)
    if weights is None:
        avg = _core.mean(x, axis=axis, keepdims=keepdims)
        if not returned:
            return avg
        count = x.size if axis is None else x.size // builtins.max(avg.size, 1)
        return avg, _core.full(avg.shape, float(count), dtype=avg.dtype, device=x.device)
    w = _asarray(weights)
    if tuple(w.shape) != tuple(x.shape):
        if axis is None or w.ndim != 1:
            raise ValueError(
                "ember.average: weights must have the array's shape, or be 1-D along `axis`"
            )
        d = _axis(axis, x.ndim, "ember.average")
        if w.shape[0] != x.shape[d]:
            raise ValueError(
                f"ember.average: {w.shape[0]} weights for an axis of length {x.shape[d]}"
            )
        view = [1] * x.ndim
        view[d] = w.shape[0]
        w = w.reshape(tuple(view))
    total = _core.sum(x * w, axis=axis, keepdims=keepdims)
    wsum = _core.sum(_core.broadcast_to(w, tuple(x.shape)), axis=axis, keepdims=keepdims)
    if builtins.bool(_core.any(wsum == 0)):
        raise ZeroDivisionError("ember.average: the weights sum to zero")
    avg = total / wsum
    return (avg, wsum.astype(avg.dtype)) if returned else avg


def around(x, decimals=0, out=None):
    """Rounds to `decimals` decimals (half to even, as NumPy)."""
    x = _asarray(x)
    decimals = operator.index(decimals)
    if decimals == 0:
        r = _core.round(x)
    elif x.dtype.kind in "iu" and decimals > 0:
        r = x.copy()
    else:
        scale = 10.0**decimals
        r = _core.round(x * scale) / scale
        if x.dtype.kind in "iu":
            r = r.astype(x.dtype)
        elif r.dtype != x.dtype:
            r = r.astype(x.dtype)
    if out is not None:
        out[...] = r
        return out
    return r


def cov(m, y=None, rowvar=True, bias=False, ddof=None):
    """The covariance matrix of the variables in the rows (`rowvar`) or columns of `m`
    (and `y`)."""
    from ._joining import concat

    x = _asarray(m)
    if x.ndim > 2:
        raise ValueError("ember.cov: m has more than 2 dimensions")
    if x.dtype.kind not in "fc":
        x = x.astype(_core.float64)
    x = x.reshape(1, -1) if x.ndim < 2 else x
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        yy = _asarray(y).astype(x.dtype)
        yy = yy.reshape(1, -1) if yy.ndim < 2 else yy
        if not rowvar and yy.shape[0] != 1:
            yy = yy.T
        x = concat([x, yy], axis=0)
    n = x.shape[1]
    d = (0 if bias else 1) if ddof is None else ddof
    xc = x - _core.mean(x, axis=1, keepdims=True)
    c = _core.matmul(xc, _core.conj(xc).T) / (n - d)
    return c.reshape(()) if c.shape == (1, 1) else c


def corrcoef(x, y=None, rowvar=True):
    """Pearson correlation coefficients (cov normalized by the standard deviations, clipped to
    [-1, 1] for real input)."""
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return c / c
    d = _core.sqrt(_core.real(_diagonal(c)))
    r = c / d.reshape(-1, 1) / d.reshape(1, -1)
    return _core.clip(r, -1, 1) if r.dtype.kind == "f" else r


# ---- NaN-ignoring reductions ----------------------------------------------------------------


def _fill_nan(x, value):
    x = _asarray(x)
    if x.dtype.kind not in "fc":
        return x
    return _core.where(_core.isnan(x), _core.full((), value, dtype=x.dtype, device=x.device), x)


def nansum(x, axis=None, dtype=None, keepdims=False):
    """sum treating NaN as zero."""
    return _core.sum(_fill_nan(x, 0), axis=axis, dtype=dtype, keepdims=keepdims)


def _count(x, axis, keepdims):
    return _core.sum(~_core.isnan(x), axis=axis, dtype=_core.int64, keepdims=keepdims)


def nanmean(x, axis=None, dtype=None, keepdims=False):
    """mean of the non-NaN elements (NaN where all are NaN)."""
    x = _asarray(x)
    if x.dtype.kind not in "fc":
        return _core.mean(x, axis=axis, dtype=dtype, keepdims=keepdims)
    s = nansum(x, axis=axis, dtype=dtype, keepdims=keepdims)
    return s / _count(x, axis, keepdims).astype(s.dtype)


def nanvar(x, axis=None, dtype=None, ddof=0, keepdims=False):
    """var of the non-NaN elements."""
    x = _asarray(x)
    if x.dtype.kind not in "fc":
        return _core.var(x, axis=axis, ddof=ddof, keepdims=keepdims)
    m = nanmean(x, axis=axis, dtype=dtype, keepdims=True)
    dev = _core.abs(x - m) ** 2 if x.dtype.kind == "c" else (x - m) ** 2
    s = nansum(dev, axis=axis, keepdims=keepdims)
    n = _count(x, axis, keepdims).astype(s.dtype) - ddof
    return s / _core.where(n > 0, n, _core.full((), float("nan"), dtype=s.dtype, device=s.device))


def nanstd(x, axis=None, dtype=None, ddof=0, keepdims=False):
    """std of the non-NaN elements."""
    return _core.sqrt(nanvar(x, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))


def nanmax(x, axis=None, keepdims=False):
    """max ignoring NaN (NaN where all are NaN)."""
    x = _asarray(x)
    if x.dtype.kind != "f":
        return _core.max(x, axis=axis, keepdims=keepdims)
    m = _core.max(_fill_nan(x, float("-inf")), axis=axis, keepdims=keepdims)
    allnan = _count(x, axis, keepdims) == 0
    return _core.where(allnan, _core.full((), float("nan"), dtype=m.dtype, device=m.device), m)


def nanmin(x, axis=None, keepdims=False):
    """min ignoring NaN (NaN where all are NaN)."""
    x = _asarray(x)
    if x.dtype.kind != "f":
        return _core.min(x, axis=axis, keepdims=keepdims)
    m = _core.min(_fill_nan(x, float("inf")), axis=axis, keepdims=keepdims)
    allnan = _count(x, axis, keepdims) == 0
    return _core.where(allnan, _core.full((), float("nan"), dtype=m.dtype, device=m.device), m)


def _nanarg(x, axis, keepdims, big, fn, who):
    x = _asarray(x)
    if x.dtype.kind != "f":
        return fn(x, axis=axis, keepdims=keepdims)
    if builtins.bool(_core.any(_core.all(_core.isnan(x), axis=axis))):
        raise ValueError(f"{who}: All-NaN slice encountered")
    return fn(_fill_nan(x, big), axis=axis, keepdims=keepdims)


def nanargmax(x, axis=None, keepdims=False):
    """argmax ignoring NaN (ValueError for an all-NaN slice, as NumPy)."""
    return _nanarg(x, axis, keepdims, float("-inf"), _core.argmax, "ember.nanargmax")


def nanargmin(x, axis=None, keepdims=False):
    """argmin ignoring NaN (ValueError for an all-NaN slice, as NumPy)."""
    return _nanarg(x, axis, keepdims, float("inf"), _core.argmin, "ember.nanargmin")
