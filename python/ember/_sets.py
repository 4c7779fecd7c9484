"""Set functions, composed from sort, searchsorted, boolean-mask selection and scatter-add (so
they run on any device, with no host copy of the data): the Array API's unique_values,
unique_counts, unique_inverse, unique_all and isin, and NumPy's unique, intersect1d, union1d,
setdiff1d and setxor1d. Counting and binning (bincount, histogram, ...) are in _histograms.

NaN: the Array API's unique_* treat every NaN as distinct (NaN != NaN); NumPy's ``unique``
collapses them into one by default (``equal_nan=True``). -0.0 and 0.0 are one value."""

from __future__ import annotations

import operator
from typing import NamedTuple

from . import _core
from ._dtypes import result_type
from ._joining import concat
from ._manipulation import _asarray, moveaxis
from ._scan import cumulative_sum, nonzero
from ._sorting import argsort, lexsort, searchsorted, sort

__all__ = [
    "intersect1d",
    "isin",
    "setdiff1d",
    "setxor1d",
    "union1d",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
]


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
    flat = x.reshape((-1,))
    if need_perm:
        perm = argsort(flat, stable=True)
        s = _core.take(flat, perm)
    else:
        perm, s = None, sort(flat)
    n = s.shape[0]
    first = _core.ones(min(n, 1), dtype=_core.bool, device=x.device)
    if n > 1:
        new = s[1:] != s[:-1]
        if equal_nan and s.dtype.kind in "fc":
            new = new & ~(_core.isnan(s[1:]) & _core.isnan(s[:-1]))
        first = concat([first, new])
    return s, perm, first


def _starts_and_counts(first, n, device):
    (starts,) = nonzero(first)
    ends = concat([starts[1:], _core.full((1,), n, dtype=starts.dtype, device=device)])
    return starts, ends - starts


def _inverse(first, perm, shape):
    group = cumulative_sum(first.astype(_core.int64)) - 1
    # group is indexed by sorted position; the inverse permutation takes it to x's order
    return _core.take(group, argsort(perm)).reshape(shape)


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
    x = _asarray(x)
    s, perm, first = _groups(x)
    starts, counts = _starts_and_counts(first, s.shape[0], x.device)
    indices = _core.take(perm, starts)  # the stable sort keeps each run's first occurrence first
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
    x = _asarray(ar)
    if axis is not None:
        return _unique_axis(x, axis, return_index, return_inverse, return_counts)
    s, perm, first = _groups(x, equal_nan=equal_nan, need_perm=return_index or return_inverse)
    out = [s[first]]
    if not (return_index or return_inverse or return_counts):
        return out[0]
    starts, counts = _starts_and_counts(first, s.shape[0], x.device)
    if return_index:
        out.append(_core.take(perm, starts))
    if return_inverse:
        out.append(_inverse(first, perm, x.shape))
    if return_counts:
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


def _unique_axis(x, axis, return_index, return_inverse, return_counts):
    """unique of the slices along `axis`: rows compared lexicographically (lexsort of the
    flattened slices, last key first)."""
    who = "ember.unique"
    if x.ndim == 0:
        raise ValueError(f"{who}: axis is not allowed for a 0-d array")
    ax = operator.index(axis)
    if not -x.ndim <= ax < x.ndim:
        raise _core.AxisError(
            f"{who}: axis {axis} is out of bounds for an array of dimension {x.ndim}"
        )
    ax %= x.ndim
    moved = moveaxis(x, ax, 0)
    n = moved.shape[0]
    rows = moved.reshape((n, -1))
    width = rows.shape[1]
    if n == 0 or width == 0:
        perm = _core.arange(n, device=x.device)
    else:
        perm = lexsort([rows[:, k] for k in range(width - 1, -1, -1)])
    srt = _core.take(rows, perm, axis=0)
    first = _core.ones(n, dtype=_core.bool, device=x.device)
    if n > 1:
        first = concat([first[:1], _core.any(srt[1:] != srt[:-1], axis=1)])
    values = moveaxis(srt[first].reshape((-1, *moved.shape[1:])), 0, ax)
    out = [values]
    starts, counts = _starts_and_counts(first, n, x.device)
    if return_index:
        out.append(_core.take(perm, starts))
    if return_inverse:
        out.append(_inverse(first, perm, (n,)))
    if return_counts:
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


def isin(x1, x2, /, *, invert=False, assume_unique=False, kind=None):
    """Whether each element of x1 is in x2 (x1's shape); NaN is in nothing."""
    a, b = _asarray(x1), _asarray(x2)
    if a.device != b.device:
        raise ValueError(f"ember.isin: x1 is on {a.device} but x2 is on {b.device}")
    if kind not in (None, "sort", "table"):
        raise ValueError(f"ember.isin: kind must be None, 'sort' or 'table', got {kind!r}")
    flat = b.reshape((-1,))
    if flat.shape[0] == 0:
        found = _core.zeros(a.shape, dtype=_core.bool, device=a.device)
    else:
        t = result_type(a, b)
        a_t, s = a.astype(t), sort(flat.astype(t))
        pos = searchsorted(s, a_t.reshape((-1,)))
        pos = _core.clip(pos, 0, s.shape[0] - 1)
        found = (_core.take(s, pos) == a_t.reshape((-1,))).reshape(a.shape)
    return ~found if invert else found


def union1d(ar1, ar2):
    """The sorted distinct values in either array."""
    return unique(concat([_asarray(ar1).reshape((-1,)), _asarray(ar2).reshape((-1,))]))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted distinct values in both arrays (with their first indices in each when
    return_indices)."""
    a, b = _asarray(ar1).reshape((-1,)), _asarray(ar2).reshape((-1,))
    if return_indices:
        ua, ia = unique(a, return_index=True)
        ub, ib = unique(b, return_index=True)
    else:
        ua, ub = (a, b) if assume_unique else (unique(a), unique(b))
    both = ua[isin(ua, ub)]
    if assume_unique and not return_indices:
        both = sort(both)
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


def setxor1d(ar1, ar2, assume_unique=False):
    """The sorted values in exactly one of the arrays."""
    a = _asarray(ar1).reshape((-1,))
    b = _asarray(ar2).reshape((-1,))
    ua, ub = (a, b) if assume_unique else (unique(a), unique(b))
    both = concat([ua[isin(ua, ub, invert=True)], ub[isin(ub, ua, invert=True)]])
    return sort(both)
