"""More GroupBy methods (mixed into GroupBy): column attributes (``df.groupby("b").a``), ``nth``,
``shift``/``diff`` within groups, and ``apply`` of a Python function per group.

``apply`` runs the Python function once per group on that group's rows, a device slice of the
frame (a gather by the group's row positions), as cuDF does: the groups are the device's group
codes and only the loop over them is on the host. Results are combined as pandas combines them:
scalars into a Series by group key, Series with one common index into a DataFrame, other Series
and DataFrames concatenated under the group keys (``group_keys=True``) or as they are.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

import ember as _em

from .column import Column


def _is_frame_or_series(v):
    return hasattr(v, "_col") or hasattr(v, "_data") or isinstance(v, (pd.Series, pd.DataFrame))


def _kind(v):
    if hasattr(v, "_data") or isinstance(v, pd.DataFrame):
        return "frame"
    return "series" if _is_frame_or_series(v) else "scalar"


def _to_ember(v, device):
    from .dataframe import DataFrame
    from .series import Series

    if isinstance(v, pd.DataFrame):
        return DataFrame(v, device=device)
    if isinstance(v, pd.Series):
        return Series(v, device=device)
    return v.to(device)


def _keyed_index(keys_index, lens, inner):
    """The index of concatenated per-group results: the group keys repeated over each result's
    rows, then the results' own index levels."""
    from .index import Index, MultiIndex, concat_indexes

    dev = keys_index.device
    g = len(lens)
    rep = _em.repeat(
        _em.arange(g, dtype=_em.int64, device=dev),
        _em.asarray(np.asarray(lens, np.int64), device=dev),
    )
    if isinstance(keys_index, MultiIndex):
        levels, names = [c.take(rep) for c in keys_index._columns], list(keys_index.names)
    else:
        levels, names = [keys_index._col.take(rep)], [keys_index.name]
    joined = concat_indexes(inner)
    if isinstance(joined, MultiIndex):
        levels += list(joined._columns)
        names += list(joined.names)
    else:
        levels.append(joined._col)
        names.append(joined.name)
    return MultiIndex(levels, names) if len(levels) > 1 else Index(levels[0], name=names[0])


def combine_results(results, keys_index, group_keys, name, device, obj_index=None, empty=None):
    """pandas' combination of ``apply``'s per-group (or per-row) results."""
    from .index import concat_indexes
    from .reshape import concat
    from .series import Series

    if not results:  # no groups: pandas gives the empty frame (or Series) it was given
        if empty is not None:
            return empty
        return Series([], index=keys_index, name=name, device=device)
    kinds = {_kind(r) for r in results}
    if kinds == {"scalar"}:
        vals = [r.item() if hasattr(r, "item") and np.ndim(r) == 0 else r for r in results]
        host = pd.Series(vals, name=name)
        return Series._from_column(Series(host, device=device)._col, keys_index, name)
    if len(kinds) > 1:
        raise TypeError(
            "ember.frame.apply: func returned a mix of scalars, Series and DataFrames across groups"
        )
    results = [_to_ember(r, device) for r in results]
    if kinds == {"series"}:
        first = results[0].index
        same = all(len(r) == len(first) and r.index.equals(first) for r in results[1:])
        if same and obj_index is None:
            out = concat([r.to_frame(i) for i, r in enumerate(results)], axis=1)
            out = out.T if all(c.kind == "num" for c in out._data.values()) else None
            if out is None:
                raise TypeError(
                    "ember.frame.groupby.apply: Series results of mixed dtypes would need "
                    "pandas' object columns"
                )
            out.index = keys_index
            return out
        if same and obj_index is not None:  # row-wise apply: one row per result
            out = concat([r.to_frame(i) for i, r in enumerate(results)], axis=1).T
            out.index = obj_index
            return out
    if obj_index is not None:
        raise TypeError("ember.frame.DataFrame.apply: row results of differing shapes")
    out = concat(results, axis=0)
    if group_keys:
        out.index = _keyed_index(keys_index, [len(r) for r in results], [r.index for r in results])
    else:
        out.index = concat_indexes([r.index for r in results])
    if isinstance(out, Series) and name is not None and all(r.name == name for r in results):
        out.name = name
    return out


class GroupByMore:
    """Mixed into GroupBy."""

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        obj = self.__dict__.get("_obj")
        data = getattr(obj, "_data", None) if obj is not None else None
        if self.__dict__.get("_series") is None and data is not None and name in data:
            return self[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _result_like(self, cols):
        """A frame of per-row columns (the object's index), a Series for SeriesGroupBy."""
        from .dataframe import DataFrame

        out = DataFrame._from_columns(cols, self._obj.index)
        return self._to_series(out) if hasattr(self, "_to_series") else out

    def nth(self, n, dropna=None):
        """The rows at positions ``n`` (an int or list; negative from the end) of each group, in
        the original order (pandas' filter form of ``nth``)."""
        from .groupby import SeriesGroupBy

        wanted = [n] if isinstance(n, (int, np.integer)) else list(n)
        if not all(isinstance(k, (int, np.integer)) for k in wanted):
            raise TypeError("ember.frame.groupby.nth: n must be an int or a list of ints")

        def pick(pos, size):
            keep = None
            for k in wanted:
                hit = pos == k if k >= 0 else (pos - size) == k
                keep = hit if keep is None else keep | hit
            return keep

        out = self._nth_rows(pick)
        if isinstance(self, SeriesGroupBy):
            return self._to_series(out)
        if self._selection is not None:
            sel = self._selection
            return out[sel if isinstance(sel, list) else [sel]]
        return out

    def _shift_sources(self, periods):
        """Per row, the row ``periods`` earlier in its group (-1: none, or a dropped group)."""
        from .groupby import _seg_starts

        codes = self._codes
        n = codes.shape[0]
        dev = codes.device
        g = self.ngroups
        gid = _em.where(codes >= 0, codes, g)
        order, _, _ = _seg_starts(gid, g + 1, dev)
        sg = _em.take(gid, order)
        pos = _em.arange(n, dtype=_em.int64, device=dev)
        src = pos - periods
        inside = (src >= 0) & (src < n)
        srcc = _em.clip(src, 0, max(n - 1, 0))
        ok = inside & (_em.take(sg, srcc) == sg) & (sg < g)
        out = _em.zeros(n, dtype=_em.int64, device=dev)
        out[order] = _em.where(ok, _em.take(order, srcc), -1)
        return out

    def shift(self, periods=1, freq=None, fill_value=None):
        """Each value moved ``periods`` rows down within its group (nulls where none)."""
        if freq is not None:
            raise NotImplementedError("ember.frame.groupby.shift: freq=")
        if not isinstance(periods, (int, np.integer)):
            raise TypeError("ember.frame.groupby.shift: periods must be an integer")
        src = self._shift_sources(int(periods))
        cols = {}
        for k in self._value_names():
            col = self._obj._data[k]
            cols[k] = _shift_by(col, src, fill_value)
        return self._result_like(cols)

    def diff(self, periods=1):
        """Differences with the row ``periods`` earlier in the same group."""
        from .ops import binary

        src = self._shift_sources(int(periods))
        cols = {}
        for k in self._value_names():
            col = self._obj._data[k]
            prev = col.take(src, nullable=True)
            if col.kind == "num" and col.dtype.kind in "iub":
                cur = Column(np.dtype("float64"), col.data.astype(_em.float64), col.mask)
                prev = Column(
                    np.dtype("float64"),
                    _em.where(prev.valid(), prev.data.astype(_em.float64), np.nan),
                )
            else:
                cur = col
                if col.kind == "num":
                    prev = Column(prev.dtype, _em.where(prev.valid(), prev.data, np.nan))
            cols[k] = binary(cur, prev, "sub")
        return self._result_like(cols)

    def apply(self, func, *args, include_groups=False, **kwargs):
        """``func`` called once per group on the group's rows (a device slice; the grouping
        columns left out, as pandas 3), results combined as pandas does (module docstring)."""
        from .groupby import SeriesGroupBy

        if include_groups:
            raise ValueError("include_groups=True is no longer allowed.")
        is_series = isinstance(self, SeriesGroupBy)
        results = []
        for _, part in self:
            if is_series:
                part = self._to_series(part)
            else:
                keep = [k for k in self._value_names()]
                part = part[keep]
            results.append(func(part, *args, **kwargs))
        name = self._name if is_series else None
        group_keys = self.__dict__.get("_group_keys", True)
        idx = self._result_index()
        empty = None
        if not results:
            frame = self._obj[self._value_names()]
            empty = self._to_series(frame.iloc[:0]) if is_series else frame.iloc[:0]
            empty.index = idx
        return combine_results(results, idx, group_keys, name, self._obj.device, empty=empty)

    def pipe(self, func, *args, **kwargs):
        return func(self, *args, **kwargs)

    def rolling(self, window, min_periods=None):
        """pandas' ``groupby(...).rolling(window)``: a window of rows within each group."""
        return GroupRolling(self, window, min_periods)


def _shift_by(col, src, fill_value):
    """``col``'s rows at ``src`` (-1: none), with algos.shift's dtype rules: without a fill,
    integer columns become float64 (NaN where nothing moved in), as pandas."""
    out = col.take(src, nullable=True)
    moved = src >= 0
    if fill_value is not None:
        from .missing import choose, scalar_column

        return choose(moved, out, scalar_column(fill_value, out))
    if col.kind == "num" and col.dtype.kind in "iu":
        data = _em.where(out.valid(), out.data.astype(_em.float64), np.nan)
        return Column(np.dtype("float64"), data)
    if col.kind == "num" and col.dtype.kind == "f":
        return Column(col.dtype, _em.where(out.valid(), out.data, np.nan))
    return out


class GroupRolling:
    """``groupby(...).rolling(window, min_periods)``: a fixed window of rows within each group
    (rows in group order, then their order in the frame), as pandas. The window's values are
    ``window`` shifted copies of the group-ordered column (NaN outside the group), reduced
    with NaN-skipping ops on the device: O(rows x window) work, for the small windows this is
    used with. The result's index is (group keys..., the row's label), as pandas'."""

    _HOW = ("sum", "mean", "min", "max", "count", "std", "var", "median")

    def __init__(self, gb, window, min_periods=None):
        if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 0:
            raise ValueError("window must be an integer 0 or greater")
        self._gb, self._w = gb, int(window)
        mp = self._w if min_periods is None else int(min_periods)
        if mp < 0 or mp > max(self._w, 0) and self._w:
            raise ValueError(f"min_periods {mp} must be <= window {self._w}")
        self._mp = mp

    def __getattr__(self, how):
        if how in GroupRolling._HOW:
            return lambda *args, **kw: self._agg(how, **kw)
        raise AttributeError(f"'GroupRolling' object has no attribute '{how}'")

    def _agg(self, how, ddof=1):
        from .column import Column
        from .dataframe import DataFrame
        from .index import Index

        gb = self._gb
        order, counts = gb._group_rows()
        dev = order.device
        n = order.shape[0]
        starts = _em.cumsum(counts) - counts
        gid = _em.repeat(_em.arange(counts.shape[0], dtype=_em.int64, device=dev), counts)
        pos = _em.arange(n, dtype=_em.int64, device=dev) - _em.take(starts, gid)  # in group
        cols = {}
        for k in gb._value_names():
            col = gb._obj._data[k]
            if col.kind != "num":
                raise TypeError(f"ember.frame: rolling {how} of a {col.dtype} column")
            part = col.take(order)
            x = _em.where(part.valid(), part.data.astype(_em.float64), _em.nan)
            w = max(self._w, 1)
            stack = _em.full((w, n), _em.nan, dtype=_em.float64, device=dev)
            for j in range(w):  # the j-th previous row of the same group
                ok = pos >= j
                src = _em.clip(_em.arange(n, dtype=_em.int64, device=dev) - j, 0, max(n - 1, 0))
                stack[j] = _em.where(ok, _em.take(x, src), _em.nan) if n else stack[j]
            cnt = _em.sum(~_em.isnan(stack), axis=0)
            with warnings.catch_warnings(), _em.errstate(all="ignore"):
                warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN windows give NaN
                if how == "count":
                    val = cnt.astype(_em.float64)
                elif how in ("std", "var"):
                    val = getattr(_em, "nan" + how)(stack, axis=0, ddof=ddof)
                    val = _em.where(cnt > ddof, val, _em.nan)
                else:
                    val = getattr(_em, "nan" + how)(stack, axis=0)
            val = _em.where(cnt >= max(self._mp, 1), val, _em.nan)
            cols[k] = Column(np.dtype(np.float64), val)
        keys = gb._result_index()
        labels = gb._obj.index.take(order) if hasattr(gb._obj.index, "take") else None
        inner = [labels if labels is not None else Index(order)]
        idx = _keyed_index(keys, _em.asnumpy(counts).tolist(), inner)  # host: group sizes
        out = DataFrame._from_columns(cols, idx)
        return gb._to_series(out) if hasattr(gb, "_to_series") else out
