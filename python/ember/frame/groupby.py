"""Sort-based group-by: dense group codes (keys.group_codes), then segmented reductions built of
scatter-add (sum/count/mean/var), stable sorts + segment starts (min/max/first/last/median) and
segmented scans (cumsum/cumcount)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import ember as _em
from ember import _core

from . import dtypes as _dt
from .column import Column
from .group_more import GroupByMore
from .index import Index, MultiIndex
from .keys import group_codes

_AGGS = (
    "sum",
    "mean",
    "min",
    "max",
    "count",
    "size",
    "std",
    "var",
    "first",
    "last",
    "median",
    "nunique",
    "prod",
)


def _zeros(n, dtype, dev):
    return _em.zeros(n, dtype=dtype, device=dev)


def _seg_starts(gid, g, dev):
    """(order, counts, starts): rows sorted stably by group, group sizes, segment starts."""
    order = _em.argsort(gid, stable=True)
    counts = (
        _em.bincount(gid, minlength=g).astype(_em.int64)
        if gid.shape[0]
        else _zeros(g, _em.int64, dev)
    )
    starts = _em.cumsum(counts) - counts
    return order, counts, starts


def _scatter_sum(gid, x, g, dtype, dev):
    """Per-group sums of ``x`` (an array, or a number for every row) in ``dtype``; rows add in
    order (deterministic)."""
    out = _zeros(g, dtype, dev)
    if gid.shape[0]:
        _core._add_at(out, gid, x if not hasattr(x, "astype") else x.astype(dtype, copy=False))
    return out


def agg_column(col: Column, gid, g, how, ddof=1) -> Column:
    """One aggregation of one column over groups ``gid`` (int64, 0..g-1, one per row)."""
    dev = col.device
    valid = col.valid()
    if how == "size":
        return Column(np.dtype("int64"), _scatter_sum(gid, 1, g, _em.int64, dev))
    if how == "count":
        return Column(np.dtype("int64"), _scatter_sum(gid, valid, g, _em.int64, dev))
    if how in ("first", "last"):
        vidx = _em.nonzero(valid)[0]
        g2 = _em.take(gid, vidx)
        order, counts, starts = _seg_starts(g2, g, dev)
        pos = starts if how == "first" else starts + counts - 1
        has = counts > 0
        pick = (
            _em.take(order, _em.clip(pos, 0, max(vidx.shape[0] - 1, 0)))
            if vidx.shape[0]
            else _zeros(g, _em.int64, dev)
        )
        rows = _em.where(has, _em.take(vidx, pick) if vidx.shape[0] else pick, -1)
        return _nullable_take(col, rows)
    if how == "nunique":
        gcol = Column(np.dtype("int64"), gid)
        codes, first, _ = group_codes([gcol, col], dropna=True)
        gfirst = _em.take(gid, first)
        out = (
            _em.bincount(gfirst, minlength=g).astype(_em.int64)
            if first.shape[0]
            else _zeros(g, _em.int64, dev)
        )
        return Column(np.dtype("int64"), out)
    if how in ("min", "max"):
        from .keys import sort_key

        if col.kind == "cat" and not col.dtype.ordered:
            raise TypeError(
                f"ember.frame.groupby.{how}: Cannot perform {how} with non-ordered Categorical"
            )
        key = sort_key(col)
        vidx = _em.nonzero(valid)[0]
        kv = _em.take(key, vidx)
        o1 = _em.argsort(kv, stable=True, descending=(how == "max"))
        g2 = _em.take(gid, _em.take(vidx, o1))
        o2 = _em.argsort(g2, stable=True)
        ordered_rows = _em.take(vidx, _em.take(o1, o2))
        counts = (
            _em.bincount(g2, minlength=g).astype(_em.int64)
            if vidx.shape[0]
            else _zeros(g, _em.int64, dev)
        )
        starts = _em.cumsum(counts) - counts
        has = counts > 0
        if vidx.shape[0] == 0:
            rows = _em.full(g, -1, dtype=_em.int64, device=dev)
        else:
            rows = _em.where(
                has, _em.take(ordered_rows, _em.clip(starts, 0, vidx.shape[0] - 1)), -1
            )
        return _nullable_take(col, rows)
    if col.kind == "time":
        if how == "mean":
            s = agg_column(
                Column(np.dtype("float64"), col.data.astype(_em.float64), col.mask), gid, g, "mean"
            )
            data = _em.round(_em.where(s.valid(), s.data, 0)).astype(_em.int64)
            return Column(col.dtype, data, s.valid())
        if how == "sum" and _dt.is_timedelta(col.dtype):
            s = agg_column(Column(np.dtype("int64"), col.data, col.mask), gid, g, "sum")
            return Column(col.dtype, s.data)
        raise TypeError(f"ember.frame.groupby.{how}: not supported for dtype {col.dtype}")
    if col.kind != "num":
        raise TypeError(f"ember.frame.groupby.{how}: not supported for dtype {col.dtype}")
    data = col.data
    x = data if col.mask is None and not _dt.is_float(col.dtype) else _em.where(valid, data, 0)
    if how == "sum":
        acc = (
            col.dtype
            if _dt.is_float(col.dtype)
            else (_em.uint64 if col.dtype.kind == "u" else _em.int64)
        )
        out = _scatter_sum(gid, x, g, acc, dev)
        return Column(np.dtype(out.dtype), out)
    cnt = _scatter_sum(gid, valid, g, _em.int64, dev)
    if how == "prod":
        acc = col.dtype if _dt.is_float(col.dtype) else _em.int64
        return Column(np.dtype(acc), _seg_prod(_em.where(valid, data, 1).astype(acc), gid, g, dev))
    xf = x.astype(_em.float64, copy=False)
    s = _scatter_sum(gid, xf, g, _em.float64, dev)
    mean = s / _em.where(cnt > 0, cnt, 1).astype(_em.float64)
    if how == "mean":
        return Column(np.dtype("float64"), _em.where(cnt > 0, mean, np.nan))
    if how in ("var", "std"):
        d = _em.where(valid, xf - _em.take(mean, gid), 0.0)
        ss = _scatter_sum(gid, d * d, g, _em.float64, dev)
        den = (cnt - ddof).astype(_em.float64)
        var = _em.where(den > 0, ss / _em.where(den > 0, den, 1.0), np.nan)
        return Column(np.dtype("float64"), _em.sqrt(var) if how == "std" else var)
    if how == "median":
        vidx = _em.nonzero(valid)[0]
        vals = _em.take(xf, vidx)
        o1 = _em.argsort(vals, stable=True)
        g2 = _em.take(_em.take(gid, vidx), o1)
        o2 = _em.argsort(g2, stable=True)
        sv = _em.take(_em.take(vals, o1), o2)
        starts = _em.cumsum(cnt) - cnt
        if vidx.shape[0] == 0:
            return Column(np.dtype("float64"), _em.full(g, np.nan, device=dev))
        last = vidx.shape[0] - 1
        lo = _em.take(sv, _em.clip(starts + (cnt - 1) // 2, 0, last))
        hi = _em.take(sv, _em.clip(starts + cnt // 2, 0, last))
        return Column(np.dtype("float64"), _em.where(cnt > 0, (lo + hi) / 2, np.nan))
    raise ValueError(f"ember.frame.groupby: unknown aggregation {how!r}")


def _seg_prod(x, gid, g, dev):
    """Product per group: a segmented inclusive scan (Hillis-Steele doubling) over rows sorted
    by group, read at each segment's end; an empty group's product is 1."""
    n = x.shape[0]
    order, counts, starts = _seg_starts(gid, g, dev)
    if n == 0:
        return _em.ones(g, dtype=x.dtype, device=dev)
    sx = _em.take(x, order)
    sg = _em.take(gid, order)
    step = 1
    while step < n:
        same = sg[step:] == sg[:-step]
        tail = _em.where(same, sx[step:] * sx[:-step], sx[step:])
        sx = _em.concatenate([sx[:step], tail])
        step *= 2
    ends = _em.clip(starts + counts - 1, 0, n - 1)
    return _em.where(counts > 0, _em.take(sx, ends), _em.ones(g, dtype=x.dtype, device=dev))


def _group_rank(col, codes, method, ascending, pct):
    """Ranks within groups: rows sorted by (group, value) with one stable sort per key, tie runs
    and group runs found by comparing neighbours, positions read relative to the run starts."""
    from .keys import argsort_columns

    if method not in ("average", "min", "max", "first", "dense"):
        raise ValueError(f"ember.frame.groupby.rank: invalid method {method!r}")
    n = len(col)
    dev = col.device
    if n == 0:
        return Column(np.dtype("float64"), _zeros(0, _em.float64, dev))
    gcol = Column(np.dtype("int64"), codes)
    valid = col.valid() & (codes >= 0)
    order = argsort_columns([gcol, col], [True, ascending], "last")
    pcodes, _, _ = group_codes([gcol, col], dropna=True, need_first=False)
    sp = _em.take(pcodes, order)
    sg = _em.take(codes, order)
    one = _em.ones(1, dtype=_em.bool, device=dev)
    gstart = _em.concatenate([one, sg[1:] != sg[:-1]])
    tstart = _em.concatenate([one, sp[1:] != sp[:-1]]) | gstart
    idx = _em.arange(n, dtype=_em.int64, device=dev)
    gseg = _em.cumsum(gstart.astype(_em.int64)) - 1
    tseg = _em.cumsum(tstart.astype(_em.int64)) - 1
    g0 = _em.take(_em.take(idx, _em.nonzero(gstart)[0]), gseg)  # first position of the group
    t0 = _em.take(_em.take(idx, _em.nonzero(tstart)[0]), tseg)  # first position of the tie run
    tcount = _em.bincount(tseg).astype(_em.int64)
    t1 = t0 + _em.take(tcount, tseg) - 1
    if method == "first":
        r = (idx - g0 + 1).astype(_em.float64)
    elif method == "min":
        r = (t0 - g0 + 1).astype(_em.float64)
    elif method == "max":
        r = (t1 - g0 + 1).astype(_em.float64)
    elif method == "average":
        r = (t0 + t1).astype(_em.float64) / 2 - g0.astype(_em.float64) + 1
    else:
        tfirst = _em.take(tseg, _em.take(idx, _em.nonzero(gstart)[0]))
        r = (tseg - _em.take(tfirst, gseg) + 1).astype(_em.float64)
    if pct:
        sv = _em.take(valid, order)
        gsize = _em.scatter_add(
            _zeros(int(gseg[-1]) + 1, _em.int64, dev), 0, gseg, sv.astype(_em.int64)
        )
        if method == "dense":
            dcount = _em.scatter_add(
                _zeros(gsize.shape[0], _em.int64, dev), 0, gseg, (tstart & sv).astype(_em.int64)
            )
            gsize = dcount
        r = r / _em.take(_em.where(gsize > 0, gsize, 1), gseg).astype(_em.float64)
    out = _zeros(n, _em.float64, dev)
    out[order] = r
    return Column(np.dtype("float64"), _em.where(valid, out, np.nan))


def _nullable_take(col, rows):
    out = col.take(rows, nullable=True)
    if col.kind == "num" and _dt.is_float(col.dtype) and col.mask is None:
        return Column(col.dtype, _em.where(rows >= 0, out.data, np.nan))
    return out


def level_keys(index, level):
    """``groupby(level=...)``'s keys: the index, or the chosen levels of a MultiIndex (as
    single-level Indexes, by position or by name)."""
    if not isinstance(index, MultiIndex):
        return index
    levels = level if isinstance(level, (list, tuple)) else [level]
    out = []
    for lv in levels:
        i = lv if isinstance(lv, int) and lv not in index.names else None
        if i is None:
            if lv not in index.names:
                raise KeyError(f"Level {lv} not found")
            i = index.names.index(lv)
        if not -index.nlevels <= i < index.nlevels:
            raise IndexError(f"Too many levels: Index has only {index.nlevels} levels, not {i + 1}")
        out.append(Index(index._columns[i], name=index.names[i]))
    return out


class GroupBy(GroupByMore):
    """``DataFrame.groupby(by)``: keys are column names, Series or an Index (same rows)."""

    def __init__(self, obj, by, as_index=True, sort=True, dropna=True, selection=None):
        from .series import Series

        if by is None:
            raise TypeError("ember.frame.groupby: You have to supply one of 'by' and 'level'")
        self._obj = obj
        self._as_index = as_index
        self._dropna = dropna
        self._sort = sort
        bys = by if isinstance(by, list) else [by]
        names, cols = [], []
        for b in bys:
            if isinstance(b, MultiIndex):
                names.extend(b.names)
                cols.extend(b._columns)
            elif isinstance(b, Series):
                names.append(b.name)
                cols.append(b._col)
            elif isinstance(b, Index):
                names.append(b.name)
                cols.append(b._col)
            elif hasattr(obj, "_data") and b in obj._data:
                names.append(b)
                cols.append(obj._data[b])
            else:
                raise KeyError(b)
        self._key_names = names
        self._key_cols = cols
        self._selection = selection
        direct = []  # one key coded by direct addressing: its group values, for free
        codes, first, g = group_codes(cols, dropna=dropna, need_first=not sort, values_out=direct)
        self._direct_values = direct[0] if direct and sort else None
        dev = cols[0].device
        if not sort and g:
            order = _em.argsort(first, stable=True)
            rank = _zeros(g, _em.int64, dev)
            rank[order] = _em.arange(g, dtype=_em.int64, device=dev)
            codes = _em.where(codes >= 0, _em.take(rank, _em.clip(codes, 0, g - 1)), -1)
            first = _em.take(first, order)
        self._codes, self._first, self.ngroups = codes, first, g
        keep = codes >= 0
        if bool(_em.all(keep)) if len(keep.shape) and keep.shape[0] else True:  # host read
            self._rows, self._gid = None, codes
        else:
            self._rows = _em.nonzero(keep)[0]
            self._gid = _em.take(codes, self._rows)

    @property
    def _first(self):
        """First row of each group (computed when the result's keys are first needed)."""
        if self._first_rows is None:
            from .keys import first_rows

            self._first_rows = first_rows(self._codes, self.ngroups, self._codes.device)
        return self._first_rows

    @_first.setter
    def _first(self, value):
        self._first_rows = value

    # ---- pieces ------------------------------------------------------------------------------
    def _value_names(self):
        if self._selection is not None:
            return self._selection if isinstance(self._selection, list) else [self._selection]
        return [k for k in self._obj._data if k not in self._key_names]

    def _key_values(self, col):
        """A key column's value per group. Fixed-width keys scatter their rows to their group
        (rows of one group hold one value, so the writes agree: no sort needed); strings take
        each group's first row."""
        if (
            self._first_rows is not None
            or col.kind not in ("num", "time", "cat")
            or (_dt.is_float(col.dtype))
        ):
            return col.take(self._first)
        dev = col.device
        g = self.ngroups
        dv = getattr(self, "_direct_values", None)
        if dv is not None and len(self._key_cols) == 1 and col is self._key_cols[0]:
            data = dv.astype(col.data.dtype, copy=False)
            return Column(col.dtype, data, categories=col.categories)
        gid = self._gid
        part = col if self._rows is None else col.take(self._rows)
        data = _zeros(g, col.data.dtype, dev)
        data[gid] = part.data
        mask = None
        if col.mask is not None:
            mask = _zeros(g, _em.bool, dev)
            mask[gid] = part.mask
        return Column(col.dtype, data, mask, categories=col.categories)

    def _result_index(self):
        fixed = self.__dict__.get("_fixed_index")  # resample's bins: labels made up front
        if fixed is not None:
            return fixed
        keys = [self._key_values(c) for c in self._key_cols]
        if len(keys) == 1:
            return Index(keys[0], name=self._key_names[0])
        return MultiIndex(keys, self._key_names)

    def _agg_col(self, col, how, **kw):
        if how not in _AGGS:
            raise AttributeError(
                f"ember.frame.groupby: '{how}' is not a supported aggregation ({', '.join(_AGGS)})"
            )
        rows = col if self._rows is None else col.take(self._rows)
        return agg_column(rows, self._gid, self.ngroups, how, **kw)

    def _frame(self, cols):
        from .dataframe import DataFrame
        from .index import RangeIndex

        idx = self._result_index()
        if self._as_index:
            return DataFrame._from_columns(cols, idx)
        out = {}
        if isinstance(idx, MultiIndex):
            out.update(zip(idx.names, idx._columns, strict=False))
        else:
            out[idx.name] = idx._col
        out.update(cols)
        return DataFrame._from_columns(out, RangeIndex(self.ngroups, device=idx.device))

    def __getitem__(self, key):
        if isinstance(key, pd.Index):
            key = key.tolist()
        if isinstance(key, list):
            for k in key:
                if k not in self._obj._data:
                    raise KeyError(f"Columns not found: {k!r}")
            out = object.__new__(GroupBy)
            out.__dict__.update(self.__dict__)
            out._selection = key
            return out
        if key not in self._obj._data:
            raise KeyError(f"Column not found: {key!r}")
        return SeriesGroupBy(
            self._obj[key], None, sort=self._sort, dropna=self._dropna, parent=self
        )

    def _by_objs(self):
        from .series import Series

        return [
            Series._from_column(c, self._obj.index, n)
            for n, c in zip(self._key_names, self._key_cols, strict=False)
        ]

    # ---- groups ------------------------------------------------------------------------------
    def _host_keys(self):
        """Each group's key as a host value (a tuple for several keys), in result order."""
        return self._result_index().to_pandas().tolist()

    def _rows_of_group(self, g):
        return _em.nonzero(self._codes == g)[0]

    @property
    def groups(self):
        """pandas' ``GroupBy.groups``: {key: Index of the group's row labels}."""
        idx = self._obj.index
        return {k: idx.take(self._rows_of_group(g)) for g, k in enumerate(self._host_keys())}

    def get_group(self, name):
        """pandas' ``GroupBy.get_group``: the rows of the group with key ``name``."""
        keys = self._host_keys()
        if name not in keys:
            raise KeyError(name)
        out = self._obj._take(self._rows_of_group(keys.index(name)))
        return out if self._selection is None else out[self._selection]

    # ---- aggregations ------------------------------------------------------------------------
    def _simple(self, how, numeric_only=False, **kw):
        cols = {}
        for k in self._value_names():
            c = self._obj._data[k]
            if numeric_only and c.kind != "num":
                continue
            cols[k] = self._agg_col(c, how, **kw)
        return self._frame(cols)

    def sum(self, numeric_only=False):
        return self._simple("sum", numeric_only)

    def mean(self, numeric_only=False):
        return self._simple("mean", numeric_only)

    def prod(self, numeric_only=False):
        return self._simple("prod", numeric_only)

    def median(self, numeric_only=False):
        return self._simple("median", numeric_only)

    def min(self, numeric_only=False):
        return self._simple("min", numeric_only)

    def max(self, numeric_only=False):
        return self._simple("max", numeric_only)

    def std(self, ddof=1, numeric_only=False):
        return self._simple("std", numeric_only, ddof=ddof)

    def var(self, ddof=1, numeric_only=False):
        return self._simple("var", numeric_only, ddof=ddof)

    def count(self):
        return self._simple("count")

    def first(self, numeric_only=False):
        return self._simple("first", numeric_only)

    def last(self, numeric_only=False):
        return self._simple("last", numeric_only)

    def nunique(self, dropna=True):
        return self._simple("nunique")

    def size(self):
        from .series import Series

        col = agg_column(Column(np.dtype("int64"), self._gid), self._gid, self.ngroups, "size")
        if self._as_index:
            return Series._from_column(col, self._result_index(), None)
        return self._frame({"size": col})

    def agg(self, func=None, *args, **kwargs):
        if func is None and kwargs:
            cols = {}
            for out_name, spec in kwargs.items():
                if not (isinstance(spec, tuple) and len(spec) == 2):
                    raise TypeError(
                        "ember.frame.groupby.agg: named aggregations take "
                        f"(column, func) tuples, got {spec!r} for {out_name!r}"
                    )
                col, how = spec
                cols[out_name] = self._agg_col(self._obj._data[col], how)
            return self._frame(cols)
        if isinstance(func, str):
            if func == "size":
                return self.size()
            return self._simple(func)
        if isinstance(func, (list, tuple)):
            cols = {}
            for k in self._value_names():
                for how in func:
                    cols[(k, _fname(how))] = self._agg_col(self._obj._data[k], _fname(how))
            return self._frame(cols)
        if isinstance(func, dict):
            nested = any(isinstance(v, (list, tuple)) for v in func.values())
            cols = {}
            for k, hows in func.items():
                if k not in self._obj._data:
                    raise KeyError(f"Column(s) ['{k}'] do not exist")
                for how in hows if isinstance(hows, (list, tuple)) else [hows]:
                    name = (k, _fname(how)) if nested else k
                    cols[name] = self._agg_col(self._obj._data[k], _fname(how))
            return self._frame(cols)
        if callable(func):
            return self._simple(_fname(func))
        raise TypeError(
            f"ember.frame.groupby.agg: func must be a str, list, dict or named "
            f"aggregations, got {type(func).__name__}"
        )

    aggregate = agg

    def transform(self, func):
        """The group aggregate broadcast back to every row (rows in dropped groups: null)."""
        from .dataframe import DataFrame

        how = _fname(func)
        cols = {}
        for k in self._value_names():
            res = self._agg_col(self._obj._data[k], how)
            cols[k] = _nullable_take(res, self._codes)
        return DataFrame._from_columns(cols, self._obj.index)

    def _scan(self, how):
        from .dataframe import DataFrame

        return DataFrame._from_columns(
            {k: self._scan_col(self._obj._data[k], how) for k in self._value_names()},
            self._obj.index,
        )

    def _scan_col(self, col, how):
        dev = col.device
        n = len(col)
        codes = self._codes
        keep = codes >= 0
        gid = _em.where(keep, codes, self.ngroups)
        order, counts, starts = _seg_starts(gid, self.ngroups + 1, dev)
        sg = _em.take(gid, order)
        if how == "cumcount":
            pos = _em.arange(n, dtype=_em.int64, device=dev) - _em.take(starts, sg)
            out = _zeros(n, _em.int64, dev)
            out[order] = pos
            return Column(np.dtype("int64"), out)
        if col.kind != "num":
            raise TypeError(f"ember.frame.groupby.{how}: not supported for dtype {col.dtype}")
        valid = col.valid()
        acc = col.dtype if _dt.is_float(col.dtype) else _em.int64
        x = _em.take(_em.where(valid, col.data, 0).astype(acc), order)
        cs = _em.cumsum(x)
        before = cs - x
        seg_base = _em.take(before, _em.clip(starts, 0, max(n - 1, 0)))
        res = cs - _em.take(seg_base, sg)
        out = _zeros(n, acc, dev)
        out[order] = res
        mask = valid & keep
        if _dt.is_float(col.dtype):
            return Column(np.dtype(acc), _em.where(mask, out, np.nan))
        return Column(
            np.dtype(out.dtype),
            out,
            None
            if col.mask is None and self._dropna is False
            else (mask if (col.mask is not None or not bool(_em.all(keep))) else None),
        )

    def cumsum(self):
        return self._scan("cumsum")

    def rank(self, method="average", ascending=True, pct=False):
        from .dataframe import DataFrame

        return DataFrame._from_columns(
            {
                k: _group_rank(self._obj._data[k], self._codes, method, ascending, pct)
                for k in self._value_names()
            },
            self._obj.index,
        )

    def cumcount(self):
        from .series import Series

        return Series._from_column(self._scan_col(self._key_cols[0], "cumcount"), self._obj.index)

    def _group_rows(self):
        dev = self._codes.device
        keep = _em.nonzero(self._codes >= 0)[0]
        c = _em.take(self._codes, keep)
        order = _em.take(keep, _em.argsort(c, stable=True))
        counts = (
            _em.bincount(c, minlength=self.ngroups).astype(_em.int64)
            if c.shape[0]
            else _zeros(self.ngroups, _em.int64, dev)
        )
        return order, counts

    def __iter__(self):
        """(key, sub-frame) per group, in group order; each sub-frame stays on the device (the
        keys and group sizes are read to the host to drive the loop)."""
        order, counts = self._group_rows()
        sizes = _em.asnumpy(counts).tolist()
        keys = self._result_index().to_pandas().tolist()
        start = 0
        for key, size in zip(keys, sizes, strict=True):
            yield key, self._obj._take(order[start : start + size])
            start += size

    def head(self, n=5):
        """The first ``n`` rows of each group, in the original row order."""
        return self._nth_rows(lambda pos, size: pos < n)

    def tail(self, n=5):
        return self._nth_rows(lambda pos, size: pos >= size - n)

    def _nth_rows(self, pick):
        cc = self._scan_col(self._key_cols[0], "cumcount").data
        sizes = agg_column(Column(np.dtype("int64"), self._gid), self._gid, self.ngroups, "size")
        size = _em.take(sizes.data, _em.clip(self._codes, 0, max(self.ngroups - 1, 0)))
        keep = pick(cc, size) & (self._codes >= 0)
        return self._obj._take(_em.nonzero(keep)[0])


def _fname(how):
    if isinstance(how, str):
        return how
    name = getattr(how, "__name__", None)
    aliases = {"amin": "min", "amax": "max", "nanmean": "mean", "nansum": "sum", "len": "size"}
    if name in _AGGS:
        return name
    if name in aliases:
        return aliases[name]
    raise TypeError(f"ember.frame.groupby.agg: unsupported function {how!r}")


class SeriesGroupBy(GroupBy):
    def __init__(self, series, by, sort=True, dropna=True, parent=None):
        from .dataframe import DataFrame

        self._series = series
        name = series.name if series.name is not None else 0
        frame = DataFrame._from_columns({name: series._col}, series.index)
        if parent is not None:  # reuse the parent's group codes
            self.__dict__.update(parent.__dict__)
            self._obj = frame
            self._as_index = True
            self._selection = [name]
        else:
            if isinstance(by, str):
                raise KeyError(by)
            super().__init__(frame, by, True, sort, dropna, selection=[name])
        self._name = series.name

    def _to_series(self, df):
        from .series import Series

        if not hasattr(df, "_data"):
            return df
        cols = list(df._data.values())
        if len(cols) == 1:
            return Series._from_column(cols[0], df.index, self._name)
        return df

    def _simple(self, how, numeric_only=False, **kw):
        return self._to_series(super()._simple(how, numeric_only, **kw))

    def agg(self, func=None, *args, **kwargs):
        if isinstance(func, (list, tuple)):
            from .dataframe import DataFrame

            col = self._frame_col()
            cols = {_fname(h): self._agg_col(col, _fname(h)) for h in func}
            return DataFrame._from_columns(cols, self._result_index())
        return self._to_series(super().agg(func, *args, **kwargs))

    aggregate = agg

    def _frame_col(self):
        return next(iter(self._obj._data.values()))

    def transform(self, func):
        return self._to_series(super().transform(func))

    def cumsum(self):
        return self._to_series(super().cumsum())

    def rank(self, method="average", ascending=True, pct=False):
        return self._to_series(super().rank(method, ascending, pct))

    def value_counts(self):
        raise NotImplementedError("ember.frame.SeriesGroupBy.value_counts")

    def unique(self):
        raise NotImplementedError("ember.frame.SeriesGroupBy.unique")


_ = pd  # pandas names appear in messages only
