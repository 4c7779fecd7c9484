"""Row hashes of ember.frame objects on their device: Dask's ``hash_object_dispatch`` for
ember.frame (what ``pd.util.hash_pandas_object`` is for pandas), used by hash shuffles
(``groupby(..., split_out>1)``, ``merge``, ``drop_duplicates``, ``shuffle``).

Equal values give equal hashes in every partition and every process; the values need not match
pandas' (Dask only compares hashes of the same backend). Each column becomes one uint64 per row,
computed with ember ops on the column's device:
- numbers: the float64 value's bits (Dask casts numeric keys to float64 before hashing, and
  ints/bools/floats that are equal become equal floats; -0.0 and NaN are made canonical),
  datetimes/timedeltas: the int64 count;
- strings: a position-keyed SplitMix64 mix of every byte, summed per row (a prefix sum read at
  the offsets: the same kernels as the array tokens and the string kernels);
- categories: the hash of each category value, gathered by the codes (so partitions whose
  categories differ still agree);
- missing values: one fixed hash.
Columns (and the index, when asked) are folded left to right with a multiply and a mix."""

from __future__ import annotations

import numpy as np

import ember

__all__ = ["hash_frame"]

_M1 = 0xBF58476D1CE4E5B9  # SplitMix64's finalizer constants
_M2 = 0x94D049BB133111EB
_GOLDEN = 0x9E3779B97F4A7C15
_NULL = 0x5A5A5A5A12345678
_FOLD = 0x100000001B3


def _u64(v, dev):
    return ember.asarray(v, dtype=ember.uint64, device=dev)


def _mix(z, dev):
    z = z ^ (z >> _u64(30, dev))
    z = z * _u64(_M1, dev)
    z = z ^ (z >> _u64(27, dev))
    z = z * _u64(_M2, dev)
    return z ^ (z >> _u64(31, dev))


def _num_bits(data):
    x = data.astype(ember.float64)
    x = ember.where(x == 0.0, 0.0, x)  # -0.0 == 0.0
    x = ember.where(ember.isnan(x), np.nan, x)
    return ember.ascontiguousarray(x).view(ember.uint64)


def _str_hash(col, dev):
    n = len(col)
    offsets = col.offsets
    nb = col.chars.shape[0]
    lens = offsets[1:] - offsets[:-1]
    if nb == 0 or n == 0:
        return _mix(lens.astype(ember.uint64), dev)
    at = ember.arange(nb, dtype=ember.int64, device=dev)
    # each byte's row (bytes outside every row's range are never summed below) and its
    # position inside the row: the same bytes at the same positions mix the same everywhere
    row = ember.clip(ember.searchsorted(offsets[1:], at, side="right"), 0, n - 1)
    pos = (at - offsets[:-1][row]).astype(ember.uint64)
    z = _mix(col.chars.astype(ember.uint64) ^ (pos * _u64(_GOLDEN, dev)), dev)
    csum = ember.concatenate(
        [ember.zeros(1, dtype=ember.uint64, device=dev), ember.cumsum(z, dtype=ember.uint64)]
    )
    per_row = csum[offsets[1:]] - csum[offsets[:-1]]
    return _mix(per_row ^ lens.astype(ember.uint64), dev)


def column_hash(col):
    """One uint64 per row of an ember.frame Column (see the module docstring)."""
    dev = col.device
    kind = col.kind
    if kind == "str":
        h = _str_hash(col, dev)
    elif kind == "cat":
        cats = column_hash(col.categories)
        codes = ember.clip(col.data.astype(ember.int64), 0, max(len(col.categories) - 1, 0))
        h = cats[codes] if len(col.categories) else ember.zeros(len(col), ember.uint64, device=dev)
    elif kind == "time":
        h = _mix(ember.ascontiguousarray(col.data.astype(ember.int64)).view(ember.uint64), dev)
    elif kind == "num":
        h = _mix(_num_bits(col.data), dev)
    else:
        raise TypeError(f"ember.dask: cannot hash a column of dtype {col.dtype} (hash_object)")
    if col.mask is not None or kind == "cat":
        h = ember.where(col.valid() if kind != "num" else col.mask, h, _u64(_NULL, dev))
    return h


def hash_frame(obj, index=True):
    """``hash_pandas_object(obj, index=index)`` for ember.frame: a uint64 Series of row hashes
    with ``obj``'s index."""
    import ember.frame as ef

    if isinstance(obj, ef.Index):
        cols, idx = [obj._col], obj
    elif isinstance(obj, ef.Series):
        cols, idx = [obj._col], obj.index
    else:
        cols, idx = list(obj._data.values()), obj.index
    if index and not isinstance(obj, ef.Index):
        cols = cols + [idx._col]
    dev = obj.device
    n = len(obj)
    h = ember.zeros(n, dtype=ember.uint64, device=dev)
    for c in cols:
        h = _mix(h * _u64(_FOLD, dev) + column_hash(c), dev)
    from ember.frame.column import Column

    idx_out = idx if not isinstance(obj, ef.Index) else ef.RangeIndex(n, device=dev)
    return ef.Series._from_column(Column(np.dtype("uint64"), h), idx_out, None)
