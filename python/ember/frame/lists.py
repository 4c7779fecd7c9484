"""List columns (Arrow's large_list: int64 offsets into a child column): what
``str.split(expand=False)`` makes; ``str.get``/``str.len``/``explode`` read them on the device."""

from __future__ import annotations

import numpy as np

import ember as _em

from . import dtypes as _dt
from .column import Column


def _ar(n, dev):
    return _em.arange(n, dtype=_em.int64, device=dev)


def lens(col):
    return col.offsets[1:] - col.offsets[:-1]


def element_rows(col):
    return _em.repeat(_ar(len(col), col.device), lens(col))


def take_lists(col, idx, miss, mask):
    """Rows ``idx`` of a list column (``miss``: rows that become null and empty)."""
    dev = col.device
    m = idx.shape[0]
    ln = _em.take(lens(col), idx)
    if miss is not None:
        ln = _em.where(miss, 0, ln)
    zero = _em.zeros(1, dtype=_em.int64, device=dev)
    offsets = _em.concatenate([zero, _em.cumsum(ln)])
    total = int(offsets[-1]) if m else 0  # host read: the child's new length
    rows = _em.repeat(_ar(m, dev), ln)
    src = _ar(total, dev) - _em.take(offsets, rows) + _em.take(_em.take(col.offsets, idx), rows)
    child = col.child.take(src)
    return Column(col.dtype, mask=mask, offsets=offsets, child=child)


def from_parts(child: Column, counts, mask):
    """A list column whose row r holds the next ``counts[r]`` values of ``child``."""
    dev = child.device
    zero = _em.zeros(1, dtype=_em.int64, device=dev)
    offsets = _em.concatenate([zero, _em.cumsum(counts.astype(_em.int64))])
    return Column(_dt.ListDtype(child.dtype), mask=mask, offsets=offsets, child=child)


def get(col, i):
    """Element ``i`` of each list (negative counts from the end); null when out of range."""
    ln = lens(col)
    pos = _em.where(ln > 0, _em.where(i < 0, ln + i, i), -1) if isinstance(i, int) else None
    ok = (pos >= 0) & (pos < ln) & col.valid()
    src = _em.where(ok, col.offsets[:-1] + pos, -1)
    return col.child.take(src, nullable=True)


def length(col):
    ln = lens(col).astype(_em.float64)
    if col.mask is not None:
        return Column(np.dtype("float64"), _em.where(col.mask, ln, np.nan))
    return Column(np.dtype("int64"), lens(col))


def explode_rows(col):
    """(source row of each output row, exploded values): an empty or null list gives one null."""
    dev = col.device
    n = len(col)
    ln = _em.where(col.valid(), lens(col), 0)
    reps = _em.where(ln > 0, ln, 1)
    rows = _em.repeat(_ar(n, dev), reps)
    total = rows.shape[0]
    zero = _em.zeros(1, dtype=_em.int64, device=dev)
    starts = _em.concatenate([zero, _em.cumsum(reps)])[:-1]
    within = _ar(total, dev) - _em.take(starts, rows)
    has = _em.take(ln, rows) > 0
    src = _em.where(has, _em.take(col.offsets[:-1], rows) + within, -1)
    out = col.child.take(src, nullable=True)
    if out.kind == "num" and out.dtype.kind == "f":
        out = Column(out.dtype, _em.where(has, out.data, np.nan), out.mask)
    return rows, out


def explode(series, ignore_index=False):
    """Series.explode of a list column (index labels repeat)."""
    from .index import RangeIndex
    from .series import Series

    rows, out = explode_rows(series._col)
    total = rows.shape[0]
    idx = RangeIndex(total, device=series.device) if ignore_index else series.index.take(rows)
    return Series._from_column(out, idx, series.name)
