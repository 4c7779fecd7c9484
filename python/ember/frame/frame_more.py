"""More DataFrame methods (mixed into DataFrame): row iteration, stack/unstack, memory_usage,
agg, cov/corrwith, idxmin/idxmax, update, filter, interpolate and the ewm/expanding/resample
windows."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

import ember as _em

from .column import Column, from_values


def column_bytes(col) -> int:
    """Bytes a column holds on its device (values, unpacked validity, offsets, text bytes,
    categories, list children)."""
    n = 0
    for a in (col.data, col.mask, col.offsets, col.chars):
        n += 0 if a is None else int(a.nbytes)
    for sub in (col.categories, col.child):
        n += 0 if sub is None else column_bytes(sub)
    return n


def index_bytes(index) -> int:
    from .index import MultiIndex, RangeIndex

    if isinstance(index, RangeIndex):  # nothing on the device: pandas' own figure for a range
        return int(index.to_pandas().memory_usage())
    if isinstance(index, MultiIndex):
        return sum(column_bytes(c) for c in index._columns)
    return column_bytes(index._col)


def _host_series(values, labels, device, name=None):
    from .series import Series

    return Series(pd.Series(values, index=pd.Index(labels), name=name), device=device)


def _fname(f):
    return f if isinstance(f, str) else getattr(f, "__name__", repr(f))


class FrameMore:
    """Mixed into DataFrame (kept apart so dataframe.py stays short)."""

    # ---- row iteration (Python objects: one explicit host copy) ------------------------------

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """A NumPy ufunc of a numeric frame (with scalars: ``np.sqrt(df)``, ``np.power(df, 2)``,
        as Dask's ``std`` calls it) applied column by column on the device (each column's
        ``Series.__array_ufunc__``); anything else raises TypeError instead of computing on a
        host copy."""
        if (
            method != "__call__"
            or kwargs
            or ufunc.nout != 1
            or not all(i is self or np.isscalar(i) for i in inputs)
            or any(c.kind != "num" for c in self._data.values())
        ):
            raise TypeError(
                f"ember.frame.DataFrame: numpy.{ufunc.__name__}.{method} runs on frames of "
                "numeric columns with scalars only"
            )
        from .dataframe import DataFrame

        cols = {k: ufunc(*[self[k] if i is self else i for i in inputs]) for k in self._data}
        return DataFrame(cols, index=self.index)

    def iterrows(self):
        """(label, row) pairs, each row a pandas Series: the frame is copied to the host once
        and iterated there (rows are Python objects; as slow as pandas' iterrows)."""
        yield from self.to_pandas().iterrows()

    def itertuples(self, index=True, name="Pandas"):
        """Rows as namedtuples, from one host copy of the frame (Python objects)."""
        yield from self.to_pandas().itertuples(index=index, name=name)

    # ---- reshape -----------------------------------------------------------------------------
    def stack(self, level=-1, dropna=None, sort=None, future_stack=True):
        from .reshape_more import stack

        return stack(self, level, dropna, sort, future_stack)

    def unstack(self, level=-1, fill_value=None, sort=True):
        from .reshape_more import unstack_frame

        return unstack_frame(self, level, fill_value)

    # ---- facts -------------------------------------------------------------------------------
    def memory_usage(self, index=True, deep=False):
        """Bytes per column held on the device (validity is one byte a row, unpacked), with the
        index first as 'Index' (a RangeIndex counts what pandas counts for one)."""
        names = (["Index"] if index else []) + list(self._data)
        vals = ([index_bytes(self.index)] if index else []) + [
            column_bytes(c) for c in self._data.values()
        ]
        return _host_series(np.asarray(vals, dtype=np.int64), names, self.device)

    # ---- aggregation -------------------------------------------------------------------------
    def _agg_one(self, k, f):
        s = self[k]
        if isinstance(f, str):
            m = getattr(s, f, None)
            if m is None or not callable(m):
                raise AttributeError(f"'{f}' is not a valid function for 'Series' object")
            return m()
        if callable(f):
            return f(s)
        raise TypeError(f"ember.frame.DataFrame.agg: func must be a str or callable, got {f!r}")

    def agg(self, func=None, axis=0, *args, **kwargs):
        """pandas' ``DataFrame.agg``: a name/callable reduces every column (a Series); a list
        gives one row per function; a dict picks functions per column. The reductions run on the
        device; their scalar results are host values gathered into the result."""
        from .stats import series_agg

        if axis not in (0, "index", "rows"):
            raise NotImplementedError("ember.frame.DataFrame.agg: axis=1 (row-wise)")
        if func is None:
            raise TypeError("ember.frame.DataFrame.agg: Must provide 'func'")
        if isinstance(func, str) or callable(func):
            vals = [self._agg_one(k, func) for k in self._data]
            return _host_series(vals, list(self._data), self.device)
        if isinstance(func, (list, tuple)):
            names = [_fname(f) for f in func]
            cols = {k: series_agg(self[k], list(func)) for k in self._data}
            from .dataframe import DataFrame

            out = DataFrame._from_columns({k: v._col for k, v in cols.items()})
            out.index = from_index_labels(names, self.device)
            return out
        if isinstance(func, dict):
            missing = [k for k in func if k not in self._data]
            if missing:
                raise KeyError(f"Column(s) {missing} do not exist")
            if not any(isinstance(v, (list, tuple)) for v in func.values()):
                vals = [self._agg_one(k, f) for k, f in func.items()]
                return _host_series(vals, list(func), self.device)
            rows = []
            for fs in func.values():
                for f in fs if isinstance(fs, (list, tuple)) else [fs]:
                    if _fname(f) not in rows:
                        rows.append(_fname(f))
            data = {}
            for k, fs in func.items():
                got = {
                    _fname(f): self._agg_one(k, f)
                    for f in (fs if isinstance(fs, (list, tuple)) else [fs])
                }
                data[k] = [got.get(r, np.nan) for r in rows]
            from .dataframe import DataFrame

            return DataFrame(pd.DataFrame(data, index=rows), device=self.device)
        raise TypeError(f"ember.frame.DataFrame.agg: unsupported func {func!r}")

    aggregate = agg

    def cov(self, min_periods=None, ddof=1, numeric_only=False):
        from .stats import cov_frame

        return cov_frame(self, min_periods, ddof, numeric_only)

    def corrwith(self, other, axis=0, drop=False, method="pearson", numeric_only=False):
        from .stats import corrwith

        if axis not in (0, "index", "rows"):
            raise NotImplementedError("ember.frame.DataFrame.corrwith: axis=1 (row-wise)")
        return corrwith(self, other, drop, method, numeric_only)

    def _idx_labels(self, mx, skipna, numeric_only):
        names = [k for k, c in self._data.items() if not numeric_only or c.kind == "num"]
        labels = [self[k]._idx(mx) for k in names]
        return _host_series(labels, names, self.device)

    def idxmax(self, axis=0, skipna=True, numeric_only=False):
        """Per column, the label of the first maximum (found on the device)."""
        return self._idx_labels(True, skipna, numeric_only)

    def idxmin(self, axis=0, skipna=True, numeric_only=False):
        return self._idx_labels(False, skipna, numeric_only)

    # ---- in place ----------------------------------------------------------------------------
    def update(self, other, join="left", overwrite=True, filter_func=None, errors="ignore"):
        """In place: this frame's values replaced by ``other``'s non-missing ones (aligned on the
        labels; with ``overwrite=False`` only where this frame is missing)."""
        from .align import reindex_column
        from .dataframe import DataFrame
        from .missing import choose
        from .series import Series

        if join != "left":
            raise NotImplementedError("Only left join is supported")
        if errors not in ("ignore", "raise"):
            raise ValueError("The parameter errors must be either 'ignore' or 'raise'")
        if isinstance(other, Series):
            other = other.to_frame()
        if not isinstance(other, DataFrame):
            other = DataFrame(other, device=self.device)
        other = other.to(self.device)
        for k, oc in other._data.items():
            if k not in self._data:
                continue
            mine = self._data[k]
            if not (len(other) == len(self) and other.index.equals(self.index)):
                oc = reindex_column(Series._from_column(oc, other.index), self.index, "update")
            ov, sv = oc.valid(), mine.valid()
            if filter_func is not None:  # pandas: update where filter_func(this) and that exists
                keep = from_values(filter_func(Series._from_column(mine).values), self.device)
                take = keep.data & ov
            else:
                if errors == "raise" and bool(_em.any(sv & ov)):  # host read: an overlap?
                    raise ValueError("Data overlaps.")
                take = ov if overwrite else ~sv
            new = choose(~take, mine, oc)
            if mine.kind == "num" and new.dtype != mine.dtype and mine.dtype.kind in "iu":
                same = _em.all(new.data == _em.floor(new.data)) if new.dtype.kind == "f" else True
                if bool(same) and not new.has_nulls():  # host read: keep the integer dtype
                    new = Column(mine.dtype, new.data.astype(mine.dtype), None)
            self._data[k] = new

    # ---- selection by label ------------------------------------------------------------------
    def filter(self, items=None, like=None, regex=None, axis=None):
        """Columns (default) or rows whose labels are in ``items``, contain ``like`` or match
        ``regex``. Column labels are host metadata; row labels are matched on the device (text
        labels; other labels are formatted on the host)."""
        given = sum(v is not None for v in (items, like, regex))
        if given > 1:
            raise TypeError("Keyword arguments `items`, `like`, or `regex` are mutually exclusive")
        if given == 0:
            raise TypeError("Must pass either `items`, `like`, or `regex`")
        if axis in (None, 1, "columns"):
            labels = list(self._data)
            if items is not None:
                keep = [k for k in items if k in self._data]
            elif like is not None:
                keep = [k for k in labels if like in str(k)]
            else:
                pat = re.compile(regex)
                keep = [k for k in labels if pat.search(str(k)) is not None]
            return self[keep]
        if axis not in (0, "index", "rows"):
            raise ValueError(f"No axis named {axis} for object type DataFrame")
        return self._take(_filter_rows(self.index, items, like, regex))

    # ---- windows, time bins, interpolation ---------------------------------------------------
    def interpolate(
        self,
        method="linear",
        *,
        axis=0,
        limit=None,
        inplace=False,
        limit_direction=None,
        limit_area=None,
        **kwargs,
    ):
        """Series.interpolate on every column (numeric columns only, as pandas)."""
        from .dataframe import DataFrame

        if axis not in (0, "index", "rows"):
            raise NotImplementedError("ember.frame.DataFrame.interpolate: axis=1")
        bad = [c.dtype for c in self._data.values() if c.kind != "num"]
        if bad:
            raise TypeError(f"Cannot interpolate with {bad[0]} dtype")
        cols = {}
        for k in self._data:
            s = self[k].interpolate(
                method, limit=limit, limit_direction=limit_direction, limit_area=limit_area
            )
            cols[k] = s._col
        return self._inplace(DataFrame._from_columns(cols, self.index), inplace)

    def resample(
        self, rule, on=None, closed=None, label=None, origin="start_day", offset=None, level=None
    ):
        from .resample import resample_frame

        return resample_frame(self, rule, on, closed, label, origin, offset, level)


def apply_rows(df, func, raw, result_type, args, kwargs):
    """``DataFrame.apply(func, axis=1)``: first as array code (``apply_vec.try_rows``: one call
    with whole columns for a function of the row's fields built of elementwise ops), else one
    Python call per row, so slow (as pandas'). A frame
    of numeric columns gives each row as a Series on the device (a row of ``df.values``, the
    common dtype, labelled by the column names); other frames are copied to the host once and
    each row is pandas' object row. ``raw=True`` passes the row's array. The results come back
    as one device column (scalars), a frame (Series with one index, or ``result_type="expand"``
    lists), or the frame's shape (``"broadcast"``)."""
    from .group_more import combine_results
    from .series import Series

    if result_type not in (None, "expand", "reduce", "broadcast"):
        raise ValueError(
            "invalid value for result_type, must be one of {None, 'reduce', 'broadcast', 'expand'}"
        )
    if not raw and result_type in (None, "reduce"):
        from .apply_vec import try_rows

        col = try_rows(df, func, args, kwargs)  # one call over whole columns, when it can be
        if col is not None:
            return Series._from_column(col, df.index)
    dev = df.device
    n = len(df)
    labels = df.index.to_pandas().tolist()  # host read: the rows' names
    cols = list(df._data.values())
    if cols and all(c.kind == "num" for c in cols):
        mat = df.values
        cidx = from_index_labels(list(df._data), dev)
        dtype = np.dtype(mat.dtype)
        if not raw and getattr(func, "__module__", None) == "ember":
            # an ember function (ember.sqrt, ember.sum) takes the row's device array
            user = func

            def func(r, *a, **kw):
                out = user(r.values, *a, **kw)
                if isinstance(out, _em.ndarray) and out.ndim == 1:
                    return Series._from_column(Column(np.dtype(out.dtype), out), cidx, r.name)
                return out

        def row(i):
            r = mat[i]
            return r if raw else Series._from_column(Column(dtype, r), cidx, labels[i])

    else:
        host = df.to_pandas()

        def row(i):
            return host.iloc[i].to_numpy() if raw else host.iloc[i]

    results = [func(row(i), *args, **kwargs) for i in range(n)]
    listlike = [
        isinstance(r, (list, tuple, np.ndarray, _em.ndarray)) and np.ndim(r) > 0 for r in results
    ]
    if result_type == "broadcast":
        from .dataframe import DataFrame

        host_rows = [np.broadcast_to(_host_row(r), (len(cols),)) for r in results]
        mat = np.asarray(host_rows).reshape(n, len(cols))
        data = {k: mat[:, j] for j, k in enumerate(df._data)}
        return DataFrame(pd.DataFrame(data, index=df.index.to_pandas()), device=dev)
    if results and all(listlike):
        if result_type != "expand":
            raise TypeError(
                "ember.frame.DataFrame.apply: rows returning lists would give pandas' object "
                "Series; pass result_type='expand' for columns"
            )
        from .dataframe import DataFrame

        host = pd.DataFrame([list(_host_row(r)) for r in results], index=df.index.to_pandas())
        return DataFrame(host, device=dev)
    return combine_results(results, df.index, False, None, dev, obj_index=df.index)


def _host_row(r):
    return _em.asnumpy(r) if isinstance(r, _em.ndarray) else np.asarray(r)


def from_index_labels(labels, device):
    from .index import as_index

    return as_index(pd.Index(labels), device)


def _filter_rows(index, items, like, regex):
    """Positions of the rows whose labels pass ``filter``'s test."""
    from .keys import lookup
    from .series import Series

    col = index._col
    dev = index.device
    if items is not None:
        wanted = from_values(list(items), dev)
        pos = lookup(col, wanted) if len(wanted) and len(col) else None
        if pos is None:
            return _em.zeros(0, dtype=_em.int64, device=dev)
        return pos[pos >= 0]
    if col.kind == "str":
        s = Series._from_column(col)
        hit = s.str.contains(like, regex=False) if like is not None else s.str.contains(regex)
        return _em.nonzero(hit._col.data)[0]
    labels = [str(v) for v in index.to_pandas().tolist()]  # host: non-text labels formatted
    pat = re.compile(regex) if regex is not None else None
    keep = [(like in v) if pat is None else (pat.search(v) is not None) for v in labels]
    return _em.asarray(np.nonzero(np.asarray(keep, dtype=bool))[0].astype(np.int64), device=dev)
