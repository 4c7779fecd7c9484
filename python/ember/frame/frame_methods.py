"""DataFrame methods applied column by column or over row keys (mixed into DataFrame)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import ember as _em

from . import algos, missing, ops
from . import dtypes as _dt
from .column import Column
from .index import RangeIndex


def _df(cols, index):
    from .dataframe import DataFrame

    return DataFrame._from_columns(cols, index)


def _aligned_binop(a, b, op, reflected):
    """Frames with differing labels: union of the row labels (via align) and of the column names
    (label metadata, sorted as pandas does); a column missing on one side gives nulls."""
    from .align import reindex_column, union_index
    from .series import Series

    if a.index.equals(b.index):
        idx = a.index
    else:
        idx = union_index([a.index, b.index], f"DataFrame.{op}")
    names = pd.Index(list(a._data)).union(pd.Index(list(b._data)))
    n = len(idx)
    cols = {}
    for k in names:
        parts = []
        for f in (a, b):
            if k in f._data:
                parts.append(reindex_column(Series._from_column(f._data[k], f.index), idx))
            else:
                parts.append(
                    Column(
                        np.dtype("float64"), _em.full(n, np.nan, dtype=_em.float64, device=a.device)
                    )
                )
        cols[k] = ops.binary(parts[0], parts[1], op, reflected)
    return _df(cols, idx)


class FrameMethods:
    # ---- helpers -----------------------------------------------------------------------------
    def _map(self, fn):
        return _df({k: fn(c) for k, c in self._data.items()}, self.index)

    def _keys(self, by, func):
        if by is None:
            return list(self._data)
        names = [by] if not isinstance(by, (list, tuple)) else list(by)
        for k in names:
            if k not in self._data:
                raise KeyError(k)
        return names

    def _inplace(self, out, inplace):
        if not inplace:
            return out
        self._init(out._data, out.index)
        return None

    # ---- arithmetic --------------------------------------------------------------------------
    def _binop(self, other, op, reflected=False):
        from .dataframe import DataFrame
        from .series import Series

        if isinstance(other, DataFrame):
            if list(other._data) != list(self._data) or not self.index.equals(other.index):
                return _aligned_binop(self, other, op, reflected)
            return _df(
                {k: ops.binary(c, other._data[k], op, reflected) for k, c in self._data.items()},
                self.index,
            )
        if isinstance(other, Series):
            # pandas matches a Series' labels against the columns
            vals = dict(zip(other.index.tolist(), other.tolist(), strict=False))
            return _df(
                {k: ops.binary(c, vals.get(k), op, reflected) for k, c in self._data.items()},
                self.index,
            )
        return _df(
            {k: ops.binary(c, other, op, reflected) for k, c in self._data.items()}, self.index
        )

    def __invert__(self):
        return self._map(lambda c: ops.unary(c, "invert"))

    def __neg__(self):
        return self._map(lambda c: ops.unary(c, "neg"))

    def abs(self):
        return self._map(lambda c: ops.unary(c, "abs"))

    # ---- missing -----------------------------------------------------------------------------
    def isna(self):
        return self._map(lambda c: Column(np.dtype(bool), c.isnull()))

    isnull = isna

    def notna(self):
        return self._map(lambda c: Column(np.dtype(bool), c.valid()))

    notnull = notna

    def fillna(self, value=None, *, inplace=False):
        if value is None:
            raise ValueError("ember.frame.DataFrame.fillna: Must specify a fill 'value'")
        if isinstance(value, dict):
            out = _df(
                {
                    k: missing.fillna(c, value[k]) if k in value else c
                    for k, c in self._data.items()
                },
                self.index,
            )
        else:
            out = self._map(lambda c: missing.fillna(c, value))
        return self._inplace(out, inplace)

    def ffill(self):
        return self._map(missing.ffill)

    def bfill(self):
        return self._map(lambda c: missing.ffill(c, backward=True))

    def dropna(
        self, *, axis=0, how=None, thresh=None, subset=None, ignore_index=False, inplace=False
    ):
        if axis not in (0, "index"):
            raise NotImplementedError("ember.frame.DataFrame.dropna: axis=1")
        if how is not None and thresh is not None:
            raise TypeError(
                "ember.frame.DataFrame.dropna: You cannot set both the how and "
                "thresh arguments at the same time."
            )
        how = how or "any"
        if how not in ("any", "all"):
            raise ValueError(f"ember.frame.DataFrame.dropna: invalid how option: {how}")
        names = self._keys(subset, "dropna")
        n = len(self)
        nvalid = _em.zeros(n, dtype=_em.int64, device=self.device)
        for k in names:
            nvalid = nvalid + self._data[k].valid().astype(_em.int64)
        if thresh is not None:
            keep = nvalid >= thresh
        elif how == "any":
            keep = nvalid == len(names)
        else:
            keep = nvalid > 0
        out = self._take(_em.nonzero(keep)[0])
        if ignore_index:
            out.index = RangeIndex(len(out), device=self.device)
        return self._inplace(out, inplace)

    def where(self, cond, other=np.nan):
        return self._cond_map(cond, other, False)

    def mask(self, cond, other=np.nan):
        return self._cond_map(cond, other, True)

    def _cond_map(self, cond, other, invert):
        from .dataframe import DataFrame

        out = {}
        for k in self._data:
            s = self[k]
            cc = cond[k] if isinstance(cond, DataFrame) else cond
            out[k] = (s.mask(cc, other) if invert else s.where(cc, other))._col
        return _df(out, self.index)

    def replace(self, to_replace=None, value=None):
        return self._map(lambda c: missing.replace(c, to_replace, value))

    def clip(self, lower=None, upper=None, *, axis=None, inplace=False):
        return self._inplace(self._map(lambda c: missing.clip(c, lower, upper)), inplace)

    def squeeze(self, axis=None):
        """pandas' ``squeeze``: a one-column frame as a Series, a one-row frame (axis 0) as a
        Series of its row, 1 x 1 as its value (a host scalar); else the frame."""
        nrow, ncol = self.shape
        if axis in (None, 1, "columns") and ncol == 1:
            s = self[next(iter(self._data))]
            return s.squeeze() if axis is None else s
        if axis in (None, 0, "index", "rows") and nrow == 1:
            return self.iloc[0]
        return self

    def _get_numeric_data(self):
        """The numeric and boolean columns (what pandas' and Dask's reductions use)."""
        return self.select_dtypes(include=["number", "bool"])

    def round(self, decimals=0):
        return _df({k: self[k].round(decimals)._col for k in self._data}, self.index)

    def astype(self, dtype, copy=None, errors="raise"):
        from .cast import astype

        if isinstance(dtype, dict):
            for k in dtype:
                if k not in self._data:
                    raise KeyError(
                        "Only a column name can be used for the key in a dtype "
                        f"mappings argument. '{k}' not found in columns."
                    )
            return _df(
                {
                    k: astype(c, dtype[k], "DataFrame.astype") if k in dtype else c
                    for k, c in self._data.items()
                },
                self.index,
            )
        return self._map(lambda c: astype(c, dtype, "DataFrame.astype"))

    def transpose(self):
        """Rows become columns, for frames of numeric/bool columns (one common dtype, as
        pandas gives; pandas' object columns for mixed kinds have no device form here). The
        new column labels are the index labels (host metadata)."""
        from .index import as_index

        cols = list(self._data.values())
        bad = sorted({str(c.dtype) for c in cols if c.kind != "num"})
        if bad:
            raise NotImplementedError(
                f"ember.frame.DataFrame.transpose: columns of dtype {', '.join(bad)} "
                "(pandas makes object columns)"
            )
        dev = self.device
        labels = self.index.to_pandas().tolist()
        new_index = as_index(pd.Index(self.columns), dev)
        if not cols:
            return type(self)._from_columns({}, new_index)
        dtype = np.result_type(*[c.dtype for c in cols])
        mat = _em.stack([c.data.astype(dtype) for c in cols], axis=1)
        masks = None
        if any(c.mask is not None for c in cols):
            masks = _em.stack([c.valid() for c in cols], axis=1)
        out = {}
        for j, lab in enumerate(labels):
            out[lab] = Column(
                dtype,
                _em.ascontiguousarray(mat[j]),
                None if masks is None else _em.ascontiguousarray(masks[j]),
            )
        return type(self)._from_columns(out, new_index)

    @property
    def T(self):
        return self.transpose()

    def corr(self, method="pearson", min_periods=1, numeric_only=False):
        from .stats import corr_frame

        return corr_frame(self, method, min_periods, numeric_only)

    def pct_change(self, periods=1, fill_method=None, freq=None):
        from .stats import pct_change

        return pct_change(self, periods, fill_method, freq)

    def quantile(self, q=0.5, axis=0, numeric_only=False, interpolation="linear", method="single"):
        """pandas' ``DataFrame.quantile``: per numeric column ("single"), or whole rows of the
        frame sorted by all its columns ("table", with interpolation lower/higher/nearest:
        works for strings too)."""
        from .series import Series

        _check_axis(axis, "quantile")
        scalar = np.isscalar(q)
        qs = np.atleast_1d(np.asarray(q, dtype="float64"))
        if method == "table":
            from .keys import argsort_columns

            if interpolation not in ("lower", "higher", "nearest"):
                raise ValueError(
                    "ember.frame.DataFrame.quantile: method='table' takes interpolation "
                    f"'lower', 'higher' or 'nearest', not {interpolation!r}"
                )
            cols = list(self._data.values())
            order = argsort_columns(cols, [True] * len(cols), "last")
            rnd = {"lower": np.floor, "higher": np.ceil, "nearest": np.round}[interpolation]
            pos = rnd(qs * max(len(self) - 1, 0)).astype("int64")  # host positions (metadata)
            rows = _em.take(order, _em.asarray(pos, device=self.device))
            out = type(self)._from_columns({k: c.take(rows) for k, c in self._data.items()})
            from .index import as_index

            out.index = as_index(pd.Index(qs), self.device)
            return out.iloc[0] if scalar else out
        if method != "single":
            raise ValueError(f"ember.frame.DataFrame.quantile: invalid method {method!r}")
        names = [k for k, c in self._data.items() if not numeric_only or c.kind == "num"]
        vals = {k: self[k].quantile(qs.tolist(), interpolation) for k in names}
        if scalar:
            return Series(
                pd.Series({k: v.to_pandas().iloc[0] for k, v in vals.items()}, name=q),
                device=self.device,
            )
        return type(self)._from_columns(
            {k: v._col for k, v in vals.items()}, next(iter(vals.values())).index if vals else None
        )

    def select_dtypes(self, include=None, exclude=None):
        """pandas' ``select_dtypes``: the columns whose dtypes match (decided by pandas on an
        empty host frame of the same dtypes: metadata only)."""
        probe = pd.DataFrame(
            {i: pd.Series([], dtype=dt) for i, dt in enumerate(self.dtypes.tolist())}
        )
        keep = probe.select_dtypes(include=include, exclude=exclude).columns.tolist()
        names = list(self._data)
        return type(self)._from_columns({names[i]: self._data[names[i]] for i in keep}, self.index)

    # ---- reductions --------------------------------------------------------------------------
    def _reduce(self, how, numeric_only=False, axis=None, skipna=True, **kw):
        from .series import Series

        if axis in (1, "columns"):
            from .rowwise import reduce_rows

            return reduce_rows(self, how, skipna=skipna, numeric_only=numeric_only, **kw)
        _check_axis(axis, how)
        names, vals = [], []
        for k, c in self._data.items():
            if numeric_only and c.kind != "num":
                continue
            names.append(k)
            vals.append(ops.reduce(c, how, skipna=skipna, **kw))
        return Series(pd.Series(vals, index=pd.Index(names, dtype=object)), device=self.device)

    def sum(self, axis=None, skipna=True, numeric_only=False, min_count=0):
        return self._reduce("sum", numeric_only, axis, skipna, min_count=min_count)

    def prod(self, axis=None, skipna=True, numeric_only=False, min_count=0):
        return self._reduce("prod", numeric_only, axis, skipna, min_count=min_count)

    def mean(self, axis=None, skipna=True, numeric_only=False):
        return self._reduce("mean", numeric_only, axis, skipna)

    def median(self, axis=None, skipna=True, numeric_only=False):
        return self._reduce("median", numeric_only, axis, skipna)

    def min(self, axis=None, skipna=True, numeric_only=False):
        return self._reduce("min", numeric_only, axis, skipna)

    def max(self, axis=None, skipna=True, numeric_only=False):
        return self._reduce("max", numeric_only, axis, skipna)

    def std(self, axis=None, skipna=True, ddof=1, numeric_only=False):
        return self._reduce("std", numeric_only, axis, skipna, ddof=ddof)

    def var(self, axis=None, skipna=True, ddof=1, numeric_only=False):
        return self._reduce("var", numeric_only, axis, skipna, ddof=ddof)

    def count(self, axis=None, numeric_only=False):
        return self._reduce("count", numeric_only, axis)

    def any(self, axis=None, bool_only=False, skipna=True):
        return self._reduce("any", False, axis, skipna)

    def all(self, axis=None, bool_only=False, skipna=True):
        return self._reduce("all", False, axis, skipna)

    def nunique(self, dropna=True):
        return self._reduce_series(lambda s: s.nunique(dropna=dropna))

    def _reduce_series(self, fn):
        from .series import Series

        vals = [fn(self[k]) for k in self._data]
        return Series(
            pd.Series(vals, index=pd.Index(list(self._data), dtype=object)), device=self.device
        )

    def describe(self, percentiles=None, include=None, exclude=None):
        """pandas' ``describe``: numeric columns' count/mean/std/min/percentiles/max (an ember
        frame on the frame's device); ``include``/``exclude`` select columns as pandas does
        (``"all"``, dtypes, ``"number"``, ``"object"``...). A summary that holds text columns
        (count/unique/top/freq) is an object table: returned as a pandas DataFrame, as
        ``Series.describe`` of text is; its statistics are computed on the device."""
        from .describe import describe_numbers, describe_series

        def numeric(c):
            return c.kind == "num" and not _dt.is_bool(c.dtype)

        if include == "all":
            if exclude is not None:
                raise ValueError("exclude must be None when include is 'all'")
            names = list(self._data)
        elif include is None and exclude is None:
            names = [k for k, c in self._data.items() if numeric(c)] or list(self._data)
        else:
            names = list(self.select_dtypes(include=include, exclude=exclude).columns)
        if not names:
            raise ValueError("No objects to concatenate")
        if all(numeric(self._data[k]) for k in names):
            out, labels = {}, None
            for k in names:
                labels, vals = describe_numbers(self[k], percentiles)
                out[k] = np.asarray(vals, dtype=np.float64)
            from .dataframe import DataFrame

            return DataFrame(out, index=pd.Index(labels, dtype=object), device=self.device)
        parts = {}
        for k in names:
            d = describe_series(self[k], percentiles)
            parts[k] = d.to_pandas() if hasattr(d, "to_pandas") else d
        order = []  # pandas' row order: the columns' label lists, shortest first, united
        for labels in sorted((list(d.index) for d in parts.values()), key=len):
            order += [r for r in labels if r not in order]
        table = pd.DataFrame(
            {k: d if numeric(self._data[k]) else d.astype(object) for k, d in parts.items()}
        ).reindex(order)
        return table[names]

    def pivot(self, *, columns, index=None, values=None):
        """pandas' ``pivot``: reshape by unique (index, columns) pairs without aggregation
        (ValueError on duplicate pairs, as pandas); built on ``pivot_table`` with 'first'."""
        if index is None:
            raise TypeError(
                "ember.frame.DataFrame.pivot: index= is required (the row labels as index are "
                "not supported)"
            )
        keys = [index] if not isinstance(index, list) else list(index)
        keys += [columns] if not isinstance(columns, list) else list(columns)
        if bool(self.duplicated(subset=keys).any()):  # host read: one bool
            raise ValueError("Index contains duplicate entries, cannot reshape")
        if values is None:
            values = [c for c in self.columns if c not in keys]
        return self.pivot_table(values=values, index=index, columns=columns, aggfunc="first")

    def to_records(self, index=True, column_dtypes=None, index_dtypes=None):
        """pandas' ``to_records``: a NumPy record array, so an explicit copy to the host."""
        return self.to_pandas().to_records(
            index=index, column_dtypes=column_dtypes, index_dtypes=index_dtypes
        )

    # ---- rows --------------------------------------------------------------------------------
    def sort_values(
        self,
        by,
        *,
        axis=0,
        ascending=True,
        inplace=False,
        kind=None,
        na_position="last",
        ignore_index=False,
        key=None,
    ):
        from .keys import argsort_columns
        from .sorting import check_sort_args, key_columns

        names = self._keys(by, "sort_values")
        asc = check_sort_args(names, ascending, na_position, "DataFrame.sort_values")
        if len(self) == 0:
            out = self.copy()
        else:
            cols = key_columns([self[k] for k in names], key, "DataFrame.sort_values")
            order = argsort_columns(cols, asc, na_position)
            out = self._take(order)
        if ignore_index:
            out.index = RangeIndex(len(out), device=self.device)
        return self._inplace(out, inplace)

    def sort_index(self, *, ascending=True, na_position="last", ignore_index=False):
        from .keys import argsort_columns

        if len(self) == 0:
            return self.copy()
        order = argsort_columns([self.index._col], [bool(ascending)], na_position)
        out = self._take(order)
        if ignore_index:
            out.index = RangeIndex(len(out), device=self.device)
        return out

    def nlargest(self, n, columns, keep="first"):
        return self.sort_values(columns, ascending=False).head(n)

    def nsmallest(self, n, columns, keep="first"):
        return self.sort_values(columns, ascending=True).head(n)

    def duplicated(self, subset=None, keep="first"):
        from .series import Series

        names = self._keys(subset, "duplicated")
        d = algos.duplicated([self._data[k] for k in names], keep, "DataFrame.duplicated")
        return Series._from_column(Column(np.dtype(bool), d), self.index)

    def drop_duplicates(self, subset=None, *, keep="first", inplace=False, ignore_index=False):
        names = self._keys(subset, "drop_duplicates")
        if len(self) == 0:
            return self._inplace(self.copy(), inplace)
        d = algos.duplicated([self._data[k] for k in names], keep, "DataFrame.drop_duplicates")
        out = self._take(_em.nonzero(~d)[0])
        if ignore_index:
            out.index = RangeIndex(len(out), device=self.device)
        return self._inplace(out, inplace)

    def value_counts(self, subset=None, normalize=False, sort=True, ascending=False):
        from .groupby import GroupBy

        names = self._keys(subset, "value_counts")
        out = GroupBy(self, names, dropna=True).size()
        out = out.sort_values(ascending=ascending, kind="stable") if sort else out
        if normalize:
            out = out / int(out.sum())
            out.name = "proportion"
        else:
            out.name = "count"
        return out

    def explode(self, column, ignore_index=False):
        """One row per element of the list column ``column``; other columns repeat."""
        from .lists import explode_rows

        if column not in self._data:
            raise KeyError(column)
        col = self._data[column]
        if col.kind != "list":
            return self.copy()
        rows, out = explode_rows(col)
        cols = {k: (out if k == column else c.take(rows)) for k, c in self._data.items()}
        idx = (
            RangeIndex(rows.shape[0], device=self.device) if ignore_index else self.index.take(rows)
        )
        return _df(cols, idx)

    def isin(self, values):
        if isinstance(values, dict):
            return _df(
                {
                    k: algos.isin(c, values[k])
                    if k in values
                    else Column(
                        np.dtype(bool), _em.zeros(len(c), dtype=_em.bool, device=self.device)
                    )
                    for k, c in self._data.items()
                },
                self.index,
            )
        return self._map(lambda c: algos.isin(c, values))

    def query(self, expr, *, inplace=False, **kwargs):
        from .query import evaluate

        mask = evaluate(self, expr, kwargs.get("local_dict"))
        return self._inplace(self[mask], inplace)

    def eval(self, expr, *, inplace=False, local_dict=None, **kwargs):
        """An expression of the columns (its value), or ``"c = a + b"`` assignments (a new
        frame with those columns, or this one with ``inplace=True``)."""
        from .query import eval_frame

        return eval_frame(self, expr, inplace, local_dict)

    # ---- column-wise transforms --------------------------------------------------------------
    def shift(self, periods=1, fill_value=None):
        return self._map(lambda c: algos.shift(c, periods, fill_value))

    def diff(self, periods=1):
        return self._map(lambda c: algos.diff(c, periods))

    def cumsum(self, axis=None, skipna=True, *args, **kwargs):
        if axis not in (None, 0, "index", "rows"):
            raise ValueError(f"DataFrame.cumsum: only axis=0 is supported here, got {axis!r}")
        return self._map(lambda c: algos.cumulative(c, "cumsum", skipna))

    def cumprod(self, axis=None, skipna=True, *args, **kwargs):
        if axis not in (None, 0, "index", "rows"):
            raise ValueError(f"DataFrame.cumprod: only axis=0 is supported here, got {axis!r}")
        return self._map(lambda c: algos.cumulative(c, "cumprod", skipna))

    def cummax(self, axis=None, skipna=True, *args, **kwargs):
        if axis not in (None, 0, "index", "rows"):
            raise ValueError(f"DataFrame.cummax: only axis=0 is supported here, got {axis!r}")
        return self._map(lambda c: algos.cumulative(c, "cummax", skipna))

    def cummin(self, axis=None, skipna=True, *args, **kwargs):
        if axis not in (None, 0, "index", "rows"):
            raise ValueError(f"DataFrame.cummin: only axis=0 is supported here, got {axis!r}")
        return self._map(lambda c: algos.cumulative(c, "cummin", skipna))

    def rank(self, method="average", ascending=True, pct=False):
        return self._map(lambda c: algos.rank(c, method, ascending, "keep", pct))

    def rolling(self, window, min_periods=None, center=False, win_type=None, on=None,
                axis=0, closed=None, step=None, method="single"):  # fmt: skip
        from .window import Rolling, check_rolling_options

        check_rolling_options("DataFrame.rolling", win_type, on, axis, closed, step)
        return Rolling(self, window, min_periods, center)

    def apply(self, func, axis=0, raw=False, result_type=None, args=(), **kwargs):
        """Apply an ember elementwise function to each column (axis=0) on the device; a
        reduction function (returning a scalar per column) gives a Series. ``axis=1`` calls
        ``func`` once per row with the row as a Series (slow, as pandas'; see
        ``frame_more.apply_rows``)."""
        from .apply import apply_column

        if axis in (1, "columns"):
            from .frame_more import apply_rows

            return apply_rows(self, func, raw, result_type, args, kwargs)
        if axis not in (0, "index", "rows"):
            raise ValueError(f"No axis named {axis} for object type DataFrame")
        outs = {
            k: apply_column(c, func, args, kwargs, "DataFrame.apply", allow_reduce=True)
            for k, c in self._data.items()
        }
        if outs and all(not isinstance(v, Column) for v in outs.values()):
            from .series import Series

            return Series(
                pd.Series(list(outs.values()), index=pd.Index(list(outs))), device=self.device
            )
        if any(not isinstance(v, Column) for v in outs.values()):
            raise TypeError("ember.frame.DataFrame.apply: func reduced some columns and not others")
        return _df(outs, self.index)

    def applymap(self, func):
        return self.apply(func)

    map = applymap

    # ---- group-by, joins, reshape ------------------------------------------------------------
    def groupby(
        self,
        by=None,
        *,
        level=None,
        as_index=True,
        sort=True,
        dropna=True,
        group_keys=True,
        observed=True,
    ):
        # group_keys (apply's index) and observed (only observed categories: pandas 3's
        # default) are accepted for pandas' signature
        from .groupby import GroupBy

        _check_observed(observed, "DataFrame")

        if level is not None:
            from .groupby import level_keys

            by = level_keys(self.index, level)
        out = GroupBy(self, by, as_index=as_index, sort=sort, dropna=dropna)
        out._group_keys = group_keys
        return out

    def merge(
        self,
        right,
        how="inner",
        on=None,
        left_on=None,
        right_on=None,
        left_index=False,
        right_index=False,
        sort=False,
        suffixes=("_x", "_y"),
        indicator=False,
        validate=None,
    ):
        from .joins import merge

        return merge(
            self,
            right,
            how=how,
            on=on,
            left_on=left_on,
            right_on=right_on,
            left_index=left_index,
            right_index=right_index,
            sort=sort,
            suffixes=suffixes,
            indicator=indicator,
            validate=validate,
        )

    def join(self, other, on=None, how="left", lsuffix="", rsuffix="", sort=False):
        from .joins import join

        return join(self, other, on=on, how=how, lsuffix=lsuffix, rsuffix=rsuffix, sort=sort)

    def pivot_table(self, values=None, index=None, columns=None, aggfunc="mean", fill_value=None):
        from .pivot import pivot_table

        return pivot_table(self, values, index, columns, aggfunc, fill_value)

    def melt(self, id_vars=None, value_vars=None, var_name=None, value_name="value"):
        from .pivot import melt

        return melt(self, id_vars, value_vars, var_name, value_name)

    # ---- output ------------------------------------------------------------------------------
    def to_parquet(self, path, index=None, **kwargs):
        from .io import to_parquet

        return to_parquet(self, path, index=index, **kwargs)

    def to_csv(self, path_or_buf=None, sep=",", index=True, header=True, **kwargs):
        from .io import to_csv

        return to_csv(self, path_or_buf, sep=sep, index=index, header=header, **kwargs)

    def to_json(self, path_or_buf=None, orient=None, lines=False):
        from .io import to_json

        return to_json(self, path_or_buf, orient=orient, lines=lines)

    def to_dict(self, orient="dict"):
        return self.to_pandas().to_dict(orient=orient)


def _check_observed(observed, owner):
    if observed is False:
        raise NotImplementedError(
            f"ember.frame.{owner}.groupby: observed=False (groups are the observed keys)"
        )


def _check_axis(axis, how):
    if axis not in (None, 0, "index", "rows"):
        raise NotImplementedError(
            f"ember.frame.DataFrame.{how}: axis={axis!r} (row-wise reductions); "
            "reduce the transpose's columns instead"
        )
