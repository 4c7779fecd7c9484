"""Index alignment: the union of several indexes (sorted, as pandas) and reindexing a Series onto
an index, both by a joint factorization of the labels (no per-label host work)."""

from __future__ import annotations

import numpy as np

import ember as _em

from .column import Column
from .index import Index, RangeIndex


def _check_unique(index, func):
    from .keys import group_codes

    col = index._col
    _, _, k = group_codes([col], dropna=False, need_first=False)
    if k != len(col):
        raise ValueError(f"ember.frame.{func}: cannot reindex on an axis with duplicate labels")


def union_index(indexes, func="align") -> Index:
    from .keys import group_codes
    from .reshape import concat_columns

    both = concat_columns([i._col for i in indexes])
    codes, first, _ = group_codes([both], dropna=False)
    names = {i.name for i in indexes}
    return Index(both.take(first), name=indexes[0].name if len(names) == 1 else None)


def reindex_column(series, target: Index, func="align") -> Column:
    """``series``' values at the labels of ``target`` (null where a label is missing)."""
    from .keys import lookup

    if series.index.equals(target):
        return series._col
    _check_unique(series.index, func)
    pos = lookup(series.index._col, target._col)
    out = series._col.take(pos, nullable=True)
    if out.kind == "num" and out.dtype.kind == "f" and series._col.mask is None:
        out = Column(out.dtype, _em.where(pos >= 0, out.data, np.nan))
    return out


def align_series(series_list, func="align"):
    """(common index, one column per series): the union of the indexes when they differ."""
    first = series_list[0].index
    if all(s.index.equals(first) for s in series_list[1:]):
        return first, [s._col for s in series_list]
    if all(isinstance(s.index, RangeIndex) for s in series_list):
        longest = max(series_list, key=len).index
        target = longest
    else:
        target = union_index([s.index for s in series_list], func)
    return target, [reindex_column(s, target, func) for s in series_list]
