"""Statistics composed from ember's reductions and sort, as NumPy's "Statistics" reference
groups them: order statistics (amax, amin, ptp, quantile, percentile, median), averages and
variances (average), correlation (cov, corrcoef), and every NaN-ignoring function (nansum,
nanprod, nancumsum, nancumprod, nanmean, nanvar, nanstd, nanmax, nanmin, nanargmax, nanargmin,
nanquantile, nanpercentile, nanmedian: NumPy's nanfunctions, in one place). The quantiles sort
along the reduced axes and pick or interpolate the order statistics (NumPy 2's methods)."""

from __future__ import annotations

import builtins
import math

import numpy as np

from . import _core
from ._array import asarray
from ._creation import ones_like, zeros_like
from ._indexing import take_along_axis
from ._joining import _axis, concat
from ._linalg import diagonal as _diagonal
from ._manipulation import _asarray, _axes
from ._scan import cumprod, cumsum

__all__ = [
    "amax",
    "amin",
    "average",
    "corrcoef",
    "cov",
    "median",
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmean",
    "nanmedian",
    "nanmin",
    "nanpercentile",
    "nanprod",
    "nanquantile",
    "nanstd",
    "nansum",
    "nanvar",
    "percentile",
    "ptp",
    "quantile",
]


# ---- order statistics -----------------------------------------------------------------------


def amax(a, axis=None, out=None, keepdims=False, *, initial=None, where=None):
    """max (NumPy's other name)."""
    return _core.max(_asarray(a), axis, out, keepdims, initial=initial, where=where)


def amin(a, axis=None, out=None, keepdims=False, *, initial=None, where=None):
    """min (NumPy's other name)."""
    return _core.min(_asarray(a), axis, out, keepdims, initial=initial, where=where)


def ptp(x, axis=None, keepdims=False):
    """max - min (along `axis`)."""
    x = _asarray(x)
    return _core.max(x, axis=axis, keepdims=keepdims) - _core.min(x, axis=axis, keepdims=keepdims)


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


# ---- averages, variances and correlation ----------------------------------------------------


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


def cov(m, y=None, rowvar=True, bias=False, ddof=None):
    """The covariance matrix of the variables in the rows (`rowvar`) or columns of `m`
    (and `y`)."""
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


# ---- NaN-ignoring reductions and scans ------------------------------------------------------


def _fill_nan(x, value):
    x = _asarray(x)
    if x.dtype.kind not in "fc":
        return x
    return _core.where(_core.isnan(x), _core.full((), value, dtype=x.dtype, device=x.device), x)


def _into(r, out, who):
    """`r`, or written into `out` (same shape, unsafe cast, as NumPy's reductions) and `out`."""
    if out is None:
        return r
    if not isinstance(out, _core.ndarray):
        raise TypeError(f"{who}: out must be an ember array, got {type(out).__name__}")
    if tuple(out.shape) != tuple(r.shape):
        raise ValueError(
            f"{who}: output parameter has shape {tuple(out.shape)}, expected {tuple(r.shape)}"
        )
    out[...] = r.astype(out.dtype)
    return out


def nansum(x, axis=None, dtype=None, out=None, keepdims=False, *, initial=None, where=None):
    """sum treating NaN as zero."""
    return _core.sum(_fill_nan(x, 0), axis, dtype, out, keepdims, initial=initial, where=where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, *, initial=None, where=None):
    """The product treating NaN as 1."""
    x = _asarray(a)
    if x.dtype.kind in "fc":
        x = _core.where(_core.isnan(x), ones_like(x), x)
    return _core.prod(x, axis, dtype, out, keepdims, initial=initial, where=where)


def nancumsum(a, axis=None, dtype=None):
    """cumsum treating NaN as 0."""
    x = _asarray(a)
    if x.dtype.kind in "fc":
        x = _core.where(_core.isnan(x), zeros_like(x), x)
    return cumsum(x, axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None):
    """cumprod treating NaN as 1."""
    x = _asarray(a)
    if x.dtype.kind in "fc":
        x = _core.where(_core.isnan(x), ones_like(x), x)
    return cumprod(x, axis=axis, dtype=dtype)


def _count(x, axis, keepdims):
    return _core.sum(~_core.isnan(x), axis=axis, dtype=_core.int64, keepdims=keepdims)


def nanmean(x, axis=None, dtype=None, out=None, keepdims=False):
    """mean of the non-NaN elements (NaN where all are NaN)."""
    x = _asarray(x)
    if x.dtype.kind not in "fc":
        return _core.mean(x, axis, dtype, out, keepdims)
    s = nansum(x, axis=axis, dtype=dtype, keepdims=keepdims)
    return _into(s / _count(x, axis, keepdims).astype(s.dtype), out, "ember.nanmean")


def nanvar(x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """var of the non-NaN elements."""
    return _into(_nanvar(x, axis, dtype, ddof, keepdims), out, "ember.nanvar")


def _nanvar(x, axis, dtype, ddof, keepdims):
    x = _asarray(x)
    if x.dtype.kind not in "fc":
        return _core.var(x, axis=axis, ddof=ddof, keepdims=keepdims)
    m = nanmean(x, axis=axis, dtype=dtype, keepdims=True)
    dev = _core.abs(x - m) ** 2 if x.dtype.kind == "c" else (x - m) ** 2
    s = nansum(dev, axis=axis, keepdims=keepdims)
    n = _count(x, axis, keepdims).astype(s.dtype) - ddof
    return s / _core.where(n > 0, n, _core.full((), float("nan"), dtype=s.dtype, device=s.device))


def nanstd(x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """std of the non-NaN elements."""
    r = _core.sqrt(_nanvar(x, axis, dtype, ddof, keepdims))
    return _into(r, out, "ember.nanstd")


def _nanextremum(fn, fill, who, x, axis, out, keepdims, initial, where):
    x = _asarray(x)
    if x.dtype.kind != "f":
        return fn(x, axis, out, keepdims, initial=initial, where=where)
    m = fn(_fill_nan(x, fill), axis=axis, keepdims=keepdims, initial=initial, where=where)
    if initial is None:  # all-NaN slices (under the mask) give NaN
        valid = ~_core.isnan(x)
        if where is not None and where is not True:
            valid = valid & asarray(where, device=x.device)
        allnan = _core.sum(valid, axis=axis, keepdims=keepdims) == 0
        m = _core.where(allnan, _core.full((), float("nan"), dtype=m.dtype, device=m.device), m)
    return _into(m, out, who)


def nanmax(x, axis=None, out=None, keepdims=False, *, initial=None, where=None):
    """max ignoring NaN (NaN where all are NaN)."""
    return _nanextremum(
        _core.max, float("-inf"), "ember.nanmax", x, axis, out, keepdims, initial, where
    )


def nanmin(x, axis=None, out=None, keepdims=False, *, initial=None, where=None):
    """min ignoring NaN (NaN where all are NaN)."""
    return _nanextremum(
        _core.min, float("inf"), "ember.nanmin", x, axis, out, keepdims, initial, where
    )


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
