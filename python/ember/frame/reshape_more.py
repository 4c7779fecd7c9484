"""concat along the columns (with index alignment and keys), stack and unstack: gathers and one
scatter built on the group-by codes of ``keys.py``; the labels that become column names are read
to the host (metadata)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import ember as _em

from .column import Column, from_values
from .index import Index, MultiIndex


def _ar(n, dev):
    return _em.arange(n, dtype=_em.int64, device=dev)


def _ordered_union(indexes, sort):
    """The labels of all ``indexes``: in order of first appearance (pandas' ``sort=False``), or
    sorted."""
    from .keys import group_codes
    from .reshape import concat_columns

    both = concat_columns([i._col for i in indexes])
    _, first, _ = group_codes([both], dropna=False)
    rows = first if sort else _em.sort(first)
    names = {i.name for i in indexes}
    return Index(both.take(rows), name=indexes[0].name if len(names) == 1 else None)


def _intersection(indexes, sort):
    """The labels of the first index present in every other one (first index's order)."""
    from .keys import lookup

    first = indexes[0]
    keep = _em.ones(len(first), dtype=_em.bool, device=first.device)
    for other in indexes[1:]:
        keep = keep & (lookup(other._col, first._col) >= 0)
    out = first.take(_em.nonzero(keep)[0])
    if sort:
        from .keys import argsort_columns

        out = out.take(argsort_columns([out._col], [True]))
    names = {i.name for i in indexes}
    out.name = first.name if len(names) == 1 else None
    return out


def concat_columns_axis(objs, join, ignore_index, keys, sort):
    """``pandas.concat(objs, axis=1)``: the frames side by side on the union (``join="outer"``)
    or intersection (``"inner"``) of their row labels; labels one frame lacks give nulls.
    Column labels must stay unique (ember.frame keeps one column per label, as cuDF)."""
    from .align import reindex_column
    from .dataframe import DataFrame, check_unique_labels
    from .series import Series

    frames, unnamed = [], 0
    for i, o in enumerate(objs):
        if isinstance(o, Series):
            if keys is not None:
                name = keys[i]
            elif o.name is not None:
                name = o.name
            else:
                name, unnamed = unnamed, unnamed + 1
            o = DataFrame._from_columns({name: o._col}, o.index)
        elif keys is not None:
            o = DataFrame._from_columns({(keys[i], k): c for k, c in o._data.items()}, o.index)
        frames.append(o)
    dev = frames[0].device
    frames = [f.to(dev) for f in frames]
    indexes = [f.index for f in frames]
    first = indexes[0]
    if all(len(i) == len(first) and i.equals(first) for i in indexes[1:]):
        target = first
    elif any(isinstance(i, MultiIndex) for i in indexes):
        raise NotImplementedError(
            "ember.frame.concat(axis=1): aligning frames whose MultiIndexes differ"
        )
    elif join == "inner":
        target = _intersection(indexes, sort)
    else:
        target = _ordered_union(indexes, sort)
    data = {}
    names = [k for f in frames for k in f._data]
    if ignore_index:
        names = list(range(len(names)))
    check_unique_labels(names, "concat(axis=1)")
    it = iter(names)
    for f in frames:
        for k, c in f._data.items():
            s = Series._from_column(c, f.index, k)
            data[next(it)] = c if target is f.index else reindex_column(s, target, "concat")
    return DataFrame._from_columns(data, target)


# ---- stack / unstack ------------------------------------------------------------------------
def _levels(index):
    if isinstance(index, MultiIndex):
        return list(index._columns), list(index.names)
    return [index._col], [index.name]


def _label_column(labels, dev):
    """A device column of host labels (column names: metadata)."""
    labels = list(labels)
    if labels and all(isinstance(v, str) for v in labels):
        return from_values(np.asarray(labels, dtype=object), dev)
    return from_values(pd.Index(labels), dev)


def stack(df, level=-1, dropna=None, sort=None, future_stack=True):
    """``DataFrame.stack()`` of single-level columns: a Series whose MultiIndex is (row label,
    column label), row-major, keeping missing values (pandas 3). The values are one gather of
    the concatenated columns; columns of string and non-string kinds together would need
    pandas' object dtype and raise TypeError."""
    from .reshape import concat_columns
    from .series import Series

    if level not in (-1, 0):
        raise IndexError(f"ember.frame.DataFrame.stack: Too many levels: {level!r}")
    cols = list(df._data.values())
    if any(isinstance(k, tuple) for k in df._data):
        raise NotImplementedError("ember.frame.DataFrame.stack: MultiIndex columns")
    n, k = len(df), len(cols)
    dev = df.device
    if k == 0:
        raise ValueError("ember.frame.DataFrame.stack: no columns to stack")
    kinds = {c.kind for c in cols}
    if len(kinds) > 1 and "str" in kinds:
        raise TypeError(
            "ember.frame.DataFrame.stack: string and non-string columns together would give "
            "pandas' object dtype, which has no device column"
        )
    allc = concat_columns(cols)
    pos = _ar(n * k, dev)
    i = _em.floor_divide(pos, k)
    j = pos - i * k
    values = allc.take(j * n + i)
    levels, names = _levels(df.index)
    lv = [c.take(i) for c in levels]
    lv.append(_label_column(df._data.keys(), dev).take(j))
    cname = df.columns.name
    return Series._from_column(values, MultiIndex(lv, names + [cname]), None)


def _level_pos(index, level, func):
    names = list(index.names)
    if isinstance(level, int) and level not in names:
        i = level + index.nlevels if level < 0 else level
        if not 0 <= i < index.nlevels:
            raise IndexError(
                f"ember.frame.{func}: Too many levels: Index has only {index.nlevels} levels"
            )
        return i
    if level not in names:
        raise KeyError(f"Level {level} not found")
    return names.index(level)


def unstack_parts(index, level, func):
    """(row index of the result, the level's labels (host), positions (nr, kc) of the source
    row for each result cell, -1 where none): one scatter on the joint codes."""
    from .keys import group_codes

    if not isinstance(index, MultiIndex):
        raise ValueError(f"ember.frame.{func}: the index must be a MultiIndex to unstack a level")
    lp = _level_pos(index, level, func)
    cols = list(index._columns)
    lvcol = cols.pop(lp)
    names = list(index.names)
    lvname = names.pop(lp)
    dev = index.device
    n = len(index)
    rcodes, rfirst, nr = group_codes(cols, dropna=False)
    ccodes, cfirst, kc = group_codes([lvcol], dropna=False)
    flat = rcodes * kc + ccodes
    _, _, nd = group_codes([Column(np.dtype("int64"), flat)], dropna=False, need_first=False)
    if nd != n:
        raise ValueError("Index contains duplicate entries, cannot reshape")
    pos = _em.full(nr * kc, -1, dtype=_em.int64, device=dev)
    pos[flat] = _ar(n, dev)
    rows = [c.take(rfirst) for c in cols]
    ridx = Index(rows[0], name=names[0]) if len(rows) == 1 else MultiIndex(rows, names)
    labels = pd.Index(lvcol.take(cfirst).to_pandas(), name=lvname)  # host: new column labels
    return ridx, labels, lvname, pos.reshape((nr, kc))


def _cell_column(col, pos_j, fill_value):
    out = col.take(pos_j, nullable=True)
    if out.kind == "num" and out.dtype.kind == "f" and col.mask is None:
        out = Column(out.dtype, _em.where(pos_j >= 0, out.data, np.nan))
    if fill_value is not None:
        from .missing import fillna

        out = fillna(out, fill_value)
    return out


def unstack_frame(df, level=-1, fill_value=None):
    """``DataFrame.unstack``: the ``level`` of a MultiIndex becomes the inner level of the
    columns, (value column, level label). A frame without a MultiIndex gives a Series indexed by
    (column, row label), as pandas."""
    from .dataframe import DataFrame
    from .reshape import concat_columns
    from .series import Series

    if not isinstance(df.index, MultiIndex):
        cols = list(df._data.values())
        n, k = len(df), len(cols)
        dev = df.device
        pos = _ar(n * k, dev)
        j = _em.floor_divide(pos, max(n, 1))
        i = pos - j * n
        lv = [_label_column(df._data.keys(), dev).take(j), df.index._col.take(i)]
        idx = MultiIndex(lv, [df.columns.name, df.index.name])
        return Series._from_column(concat_columns(cols), idx, None)
    ridx, labels, lvname, pos = unstack_parts(df.index, level, "DataFrame.unstack")
    out = {}
    for v, col in df._data.items():
        for j, lab in enumerate(labels):
            out[(v, lab)] = _cell_column(col, _em.ascontiguousarray(pos[:, j]), fill_value)
    res = DataFrame._from_columns(out, ridx)
    proto = pd.MultiIndex.from_arrays([df.columns[:0], labels[:0]], names=[df.columns.name, lvname])
    return res._with_colaxis(proto)


def unstack_series(s, level=-1, fill_value=None):
    """``Series.unstack``: a DataFrame with one column per label of ``level``."""
    from .dataframe import DataFrame

    ridx, labels, lvname, pos = unstack_parts(s.index, level, "Series.unstack")
    out = {
        lab: _cell_column(s._col, _em.ascontiguousarray(pos[:, j]), fill_value)
        for j, lab in enumerate(labels)
    }
    res = DataFrame._from_columns(out, ridx)
    return res._with_colaxis(labels)
