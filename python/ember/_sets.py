"""Set functions, counting and binning, composed from sort, searchsorted, boolean-mask selection
and scatter-add (so they run on any device, with no host copy of the data): the Array API's
unique_values, unique_counts, unique_inverse, unique_all and isin, and NumPy's unique,
intersect1d, union1d, setdiff1d, bincount, histogram, digitize and interp.

NaN: the Array API's unique_* treat every NaN as distinct (NaN != NaN); NumPy's ``unique``
collapses them into one by default (``equal_nan=True``). -0.0 and 0.0 are one value."""

from __future__ import annotations

import builtins
import operator
from typing import NamedTuple

from . import _core
from ._manipulation import _asarray

__all__ = [
    "bincount",
    "digitize",
    "histogram",
    "interp",
    "intersect1d",
    "isin",
    "setdiff1d",
    "union1d",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
]


def _ember():
    import ember

    return ember


class UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def _groups(x, equal_nan=False, need_perm=True):
    """The flattened x sorted (stably), the permutation that sorts it (None unless
    need_perm), and the mask of the first element of each run of equal values."""
    em = _ember()
    flat = x.reshape((-1,))
    if need_perm:
        perm = em.argsort(flat, stable=True)
        s = em.take(flat, perm)
    else:
        perm, s = None, em.sort(flat)
    n = s.shape[0]
    first = em.ones(n, dtype=em.bool, device=x.device)
    if n > 1:
        new = s[1:] != s[:-1]
        if equal_nan and s.dtype.kind in "fc":
            new = new & ~(em.isnan(s[1:]) & em.isnan(s[:-1]))
        first = em.concat([first[:1], new])
    return s, perm, first


def _starts_and_counts(first, n, device):
    em = _ember()
    (starts,) = em.nonzero(first)
    ends = em.concat([starts[1:], em.full((1,), n, dtype=starts.dtype, device=device)])
    return starts, ends - starts


def _inverse(first, perm, shape):
    em = _ember()
    group = em.cumulative_sum(first.astype(em.int64)) - 1
    # group is indexed by sorted position; the inverse permutation takes it to x's order
    return em.take(group, em.argsort(perm)).reshape(shape)


def unique_values(x, /):
    """The distinct values of x, sorted (flattened)."""
    x = _asarray(x)
    s, _, first = _groups(x, need_perm=False)
    return s[first]


def unique_counts(x, /):
    """(values, counts): the distinct values and how often each occurs."""
    x = _asarray(x)
    s, _, first = _groups(x, need_perm=False)
    _, counts = _starts_and_counts(first, s.shape[0], x.device)
    return UniqueCountsResult(s[first], counts)


def unique_inverse(x, /):
    """(values, inverse_indices): values[inverse_indices] reconstructs x (x's shape)."""
    x = _asarray(x)
    s, perm, first = _groups(x)
    return UniqueInverseResult(s[first], _inverse(first, perm, x.shape))


def unique_all(x, /):
    """(values, indices, inverse_indices, counts); indices are each value's first occurrence in
    the flattened x."""
    em = _ember()
    x = _asarray(x)
    s, perm, first = _groups(x)
    starts, counts = _starts_and_counts(first, s.shape[0], x.device)
    indices = em.take(perm, starts)  # the stable sort keeps each run's first occurrence first
    return UniqueAllResult(s[first], indices, _inverse(first, perm, x.shape), counts)


def unique(
    ar,
    return_index=False,
    return_inverse=False,
    return_counts=False,
    axis=None,
    *,
    equal_nan=True,
    sorted=True,  # noqa: A002 (NumPy's name)
):
    """NumPy's unique of the flattened array (axis=None) or of the slices along `axis`."""
    em = _ember()
    x = _asarray(ar)
    if axis is not None:
        return _unique_axis(x, axis, return_index, return_inverse, return_counts)
    s, perm, first = _groups(x, equal_nan=equal_nan, need_perm=return_index or return_inverse)
    out = [s[first]]
    if not (return_index or return_inverse or return_counts):
        return out[0]
    starts, counts = _starts_and_counts(first, s.shape[0], x.device)
    if return_index:
        out.append(em.take(perm, starts))
    if return_inverse:
        out.append(_inverse(first, perm, x.shape))
    if return_counts:
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


def _unique_axis(x, axis, return_index, return_inverse, return_counts):
    """unique of the slices along `axis`: rows compared lexicographically (lexsort of the
    flattened slices, last key first)."""
    em = _ember()
    who = "ember.unique"
    if x.ndim == 0:
        raise ValueError(f"{who}: axis is not allowed for a 0-d array")
    ax = operator.index(axis)
    if not -x.ndim <= ax < x.ndim:
        raise _core.AxisError(
            f"{who}: axis {axis} is out of bounds for an array of dimension {x.ndim}"
        )
    ax %= x.ndim
    moved = em.moveaxis(x, ax, 0)
    n = moved.shape[0]
    rows = moved.reshape((n, -1))
    width = rows.shape[1]
    if n == 0 or width == 0:
        perm = em.arange(n, device=x.device)
    else:
        perm = em.lexsort([rows[:, k] for k in range(width - 1, -1, -1)])
    srt = em.take(rows, perm, axis=0)
    first = em.ones(n, dtype=em.bool, device=x.device)
    if n > 1:
        first = em.concat([first[:1], em.any(srt[1:] != srt[:-1], axis=1)])
    values = em.moveaxis(srt[first].reshape((-1, *moved.shape[1:])), 0, ax)
    out = [values]
    starts, counts = _starts_and_counts(first, n, x.device)
    if return_index:
        out.append(em.take(perm, starts))
    if return_inverse:
        out.append(_inverse(first, perm, (n,)))
    if return_counts:
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


def isin(x1, x2, /, *, invert=False, assume_unique=False, kind=None):
    """Whether each element of x1 is in x2 (x1's shape); NaN is in nothing."""
    em = _ember()
    a, b = _asarray(x1), _asarray(x2)
    if a.device != b.device:
        raise ValueError(f"ember.isin: x1 is on {a.device} but x2 is on {b.device}")
    if kind not in (None, "sort", "table"):
        raise ValueError(f"ember.isin: kind must be None, 'sort' or 'table', got {kind!r}")
    flat = b.reshape((-1,))
    if flat.shape[0] == 0:
        found = em.zeros(a.shape, dtype=em.bool, device=a.device)
    else:
        t = em.result_type(a, b)
        a_t, s = a.astype(t), em.sort(flat.astype(t))
        pos = em.searchsorted(s, a_t.reshape((-1,)))
        pos = em.clip(pos, 0, s.shape[0] - 1)
        found = (em.take(s, pos) == a_t.reshape((-1,))).reshape(a.shape)
    return ~found if invert else found


def union1d(ar1, ar2):
    """The sorted distinct values in either array."""
    em = _ember()
    return unique(em.concat([_asarray(ar1).reshape((-1,)), _asarray(ar2).reshape((-1,))]))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted distinct values in both arrays (with their first indices in each when
    return_indices)."""
    em = _ember()
    a, b = _asarray(ar1).reshape((-1,)), _asarray(ar2).reshape((-1,))
    if return_indices:
        ua, ia = unique(a, return_index=True)
        ub, ib = unique(b, return_index=True)
    else:
        ua, ub = (a, b) if assume_unique else (unique(a), unique(b))
    both = ua[isin(ua, ub)]
    if assume_unique and not return_indices:
        both = em.sort(both)
    if not return_indices:
        return both
    in_a = isin(ua, ub)
    in_b = isin(ub, ua)
    return both, ia[in_a], ib[in_b]


def setdiff1d(ar1, ar2, assume_unique=False):
    """The sorted distinct values of ar1 that are not in ar2 (ar1's order when
    assume_unique)."""
    a = _asarray(ar1).reshape((-1,))
    ua = a if assume_unique else unique(a)
    return ua[isin(ua, _asarray(ar2), invert=True)]


def bincount(x, /, weights=None, minlength=0):
    """Counts of each value of a 1-D array of non-negative integers (sums of `weights` when
    given), of length max(x) + 1 or `minlength`."""
    em = _ember()
    who = "ember.bincount"
    x = _asarray(x)
    if x.ndim != 1:
        raise ValueError(f"{who}: expected a 1-D array, got shape {x.shape}")
    if x.dtype.kind not in "iub":
        raise TypeError(f"{who}: expected integers, got dtype {x.dtype}")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError(f"{who}: minlength must be non-negative, got {minlength}")
    n = 0
    if x.shape[0]:
        lo = int(em.min(x).item())
        if lo < 0:
            raise ValueError(f"{who}: the values must be non-negative, got {lo}")
        n = int(em.max(x).item()) + 1
    size = builtins.max(n, minlength)
    if weights is None:
        out = em.zeros(size, dtype=em.int64, device=x.device)
        if x.shape[0]:
            _core._add_at(out, x, 1)
        return out
    w = _asarray(weights)
    if w.shape != x.shape:
        raise ValueError(f"{who}: weights have shape {w.shape} but x has {x.shape}")
    t = em.complex128 if w.dtype.kind == "c" else em.float64
    out = em.zeros(size, dtype=t, device=x.device)
    if x.shape[0]:
        _core._add_at(out, x, w.astype(t))
    return out


def digitize(x, bins, right=False):
    """The index of the bin of each value (NumPy's digitize): for increasing bins, i with
    bins[i-1] <= x < bins[i] (bins[i-1] < x <= bins[i] when right)."""
    em = _ember()
    x, b = _asarray(x), _asarray(bins)
    if b.ndim != 1:
        raise ValueError(f"ember.digitize: bins must be 1-D, got shape {b.shape}")
    side = "left" if right else "right"
    n = b.shape[0]
    if n > 1 and bool((b[1:] < b[:-1]).any().item()):
        if bool((b[1:] > b[:-1]).any().item()):
            raise ValueError("ember.digitize: bins must be monotonically increasing or decreasing")
        return n - em.searchsorted(em.flip(b), x, side=side)
    return em.searchsorted(b, x, side=side)


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """(hist, bin_edges) of the flattened array, as NumPy's histogram: `bins` equal-width bins
    over `range` (default: the data's min and max), or explicit increasing edges; the last bin
    includes its right edge."""
    em = _ember()
    who = "ember.histogram"
    x = _asarray(a).reshape((-1,))
    if not isinstance(bins, _core.ndarray) and not hasattr(bins, "__len__"):
        bins = operator.index(bins)  # a count of bins (else explicit edges)
    if isinstance(bins, int):
        if bins < 1:
            raise ValueError(f"{who}: bins must be a positive integer, got {bins}")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif x.shape[0]:
            lo, hi = float(em.min(x).item()), float(em.max(x).item())
        else:
            lo, hi = 0.0, 1.0
        if (
            not (lo <= hi)
            or lo in (float("inf"), float("-inf"))
            or hi
            in (
                float("inf"),
                float("-inf"),
            )
        ):
            raise ValueError(f"{who}: range must be finite with min <= max, got ({lo}, {hi})")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = em.linspace(lo, hi, bins + 1, device=x.device)
    else:
        edges = _asarray(bins).astype(em.float64)
        if edges.ndim != 1 or edges.shape[0] < 2:
            raise ValueError(f"{who}: bin edges must be a 1-D array of at least 2 values")
        if bool((edges[1:] < edges[:-1]).any().item()):
            raise ValueError(f"{who}: bin edges must increase monotonically")
        edges = edges.to(x.device)
    nb = edges.shape[0] - 1
    xf = x.astype(em.float64) if x.dtype.kind != "f" else x
    inside = (xf >= edges[0]) & (xf <= edges[-1])
    if range is not None or not isinstance(bins, int):
        keep = inside
        xf = xf[keep]
        w = None if weights is None else _asarray(weights).reshape((-1,))[keep]
    else:
        w = None if weights is None else _asarray(weights).reshape((-1,))
    idx = em.searchsorted(edges, xf.astype(edges.dtype), side="right") - 1
    idx = em.clip(idx, 0, nb - 1)  # the last edge belongs to the last bin
    hist = bincount(idx, weights=w, minlength=nb)
    if w is not None:
        hist = hist.astype(w.dtype)  # NumPy's: the weights' dtype
    if density:
        widths = edges[1:] - edges[:-1]
        hist = hist.astype(em.float64) / (widths * em.sum(hist))
    return hist, edges


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points (xp, fp) at x (NumPy's interp): xp must
    increase; beyond the ends, `left`/`right` (default fp[0]/fp[-1]); with `period`, x and xp
    are taken modulo it."""
    em = _ember()
    who = "ember.interp"
    x, xp, fp = _asarray(x), _asarray(xp), _asarray(fp)
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape != fp.shape:
        raise ValueError(
            f"{who}: xp and fp must be 1-D of the same length, got shapes {xp.shape} and {fp.shape}"
        )
    if xp.shape[0] == 0:
        raise ValueError(f"{who}: xp and fp must not be empty")
    t = em.complex128 if fp.dtype.kind == "c" else em.float64
    x, xp, fp = x.astype(em.float64), xp.astype(em.float64), fp.astype(t)
    if period is not None:
        period = abs(float(period))
        if period == 0:
            raise ValueError(f"{who}: period must be non-zero")
        x = em.remainder(x, period)
        xp = em.remainder(xp, period)
        order = em.argsort(xp)
        xp, fp = em.take(xp, order), em.take(fp, order)
        xp = em.concat([xp[-1:] - period, xp, xp[:1] + period])
        fp = em.concat([fp[-1:], fp, fp[:1]])
    n = xp.shape[0]
    if n == 1:
        out = em.full(x.shape, 0, dtype=t, device=x.device) + fp[0]
    else:
        j = em.clip(em.searchsorted(xp, x, side="right") - 1, 0, n - 2)
        x0, x1 = em.take(xp, j), em.take(xp, j + 1)
        f0, f1 = em.take(fp, j), em.take(fp, j + 1)
        slope = (f1 - f0) / (x1 - x0)
        out = f0 + slope * (x - x0)
        # exact at the sample points (and no 0 * inf where slopes overflow)
        out = em.where(x == x1, f1, em.where(x == x0, f0, out))
    if period is None:
        lo = fp[0] if left is None else left
        hi = fp[-1] if right is None else right
        out = em.where(x < xp[0], lo, em.where(x > xp[-1], hi, out))
    return em.where(em.isnan(x), float("nan"), out) if t == em.float64 else out
