"""Series: one Column plus an Index and a name; pandas' API, computed on the column's device."""

from __future__ import annotations

import numpy as np
import pandas as pd

import ember as _em

from . import algos, missing, ops
from .column import Column, from_values
from .frame_base import FrameBase, default_device
from .index import Index, RangeIndex, as_index
from .series_more import SeriesMore


class Series(SeriesMore, FrameBase):
    """A labelled column (``pandas.Series``) whose values live on an ember device."""

    _ndim = 1

    def __init__(self, data=None, index=None, dtype=None, name=None, copy=None, device=None):
        del copy
        if isinstance(data, Series):
            col, idx, name = data._col, data.index, name if name is not None else data.name
            dev = device or data.device
            if dtype is not None:
                col = col.astype(dtype) if hasattr(col, "astype") else from_values(col, dev, dtype)
            self._init(col.to(dev), idx.to(dev) if index is None else as_index(index, dev), name)
            return
        dev = str(device) if device is not None else default_device(data)
        if isinstance(data, pd.Series):
            name = data.name if name is None else name
            if index is None:
                index = data.index
            data = data.array if not isinstance(data.dtype, np.dtype) else data.to_numpy()
            if isinstance(data, pd.arrays.NumpyExtensionArray):
                data = data.to_numpy()
        if isinstance(data, dict):
            index = list(data.keys()) if index is None else index
            data = list(data.values())
        if data is None:
            data = []
        if np.isscalar(data) or data is pd.NA:
            n = len(index) if index is not None else 1
            col = Column.from_scalar(data, n, dev)
            if dtype is not None:
                col = from_values(col, dev, dtype)
        else:
            col = from_values(data, dev, dtype)
        n = len(col)
        idx = as_index(index, dev, n)
        if len(idx) != n:
            raise ValueError(
                f"ember.frame.Series: Length of values ({n}) does not match length of index "
                f"({len(idx)})"
            )
        self._init(col, idx, name)

    def _init(self, col, index, name):
        self._col = col
        self.index = index
        self.name = name

    @classmethod
    def _from_column(cls, col, index=None, name=None):
        s = cls.__new__(cls)
        s._init(col, index if index is not None else RangeIndex(len(col), device=col.device), name)
        return s

    def _with(self, col, index=None, name=None):
        return Series._from_column(
            col, self.index if index is None else index, self.name if name is None else name
        )

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        idx = self.__dict__.get("_index")
        if type(idx) is Index and idx._col.kind == "str":  # a text label, as pandas' ``row.a``
            try:
                return self.loc[name]
            except KeyError:
                pass
        from .frame_base import unsupported

        raise unsupported("Series", name)

    # ---- facts -------------------------------------------------------------------------------
    def __len__(self):
        return len(self._col)

    @property
    def dtype(self):
        return self._col.dtype

    dtypes = dtype

    @property
    def shape(self):
        return (len(self),)

    @property
    def size(self):
        return len(self)

    @property
    def ndim(self):
        return 1

    @property
    def empty(self):
        return len(self) == 0

    @property
    def device(self):
        return self._col.device

    def to(self, device):
        return Series._from_column(self._col.to(str(device)), self.index.to(str(device)), self.name)

    @property
    def values(self):
        """The values as an ember array on the column's device (as cuDF returns a CuPy array);
        nulls read as NaN for floats. Strings/categories have no flat array: use to_numpy."""
        c = self._col
        if c.kind != "num" and c.kind != "time":
            raise TypeError(
                f"ember.frame.Series.values: no device array for dtype {c.dtype}; "
                "use to_numpy() (a host copy)"
            )
        if c.mask is not None and c.kind == "num" and c.dtype.kind != "f" and c.has_nulls():
            raise ValueError(
                "ember.frame.Series.values: cannot convert a column with nulls "
                f"of dtype {c.dtype}; fillna first"
            )
        return c.data

    # ---- conversions -------------------------------------------------------------------------
    def to_pandas(self, nullable=False):
        return pd.Series(
            self._col.to_pandas(nullable), index=self.index.to_pandas(), name=self.name
        )

    def to_arrow(self):
        return self._col.to_arrow()

    def to_numpy(self, dtype=None, na_value=None):
        out = self.to_pandas()
        if na_value is not None:
            return out.to_numpy(dtype=dtype, na_value=na_value)
        return out.to_numpy(dtype=dtype)

    def tolist(self):
        return self.to_pandas().tolist()

    to_list = tolist

    def to_frame(self, name=None):
        from .dataframe import DataFrame

        key = name if name is not None else (self.name if self.name is not None else 0)
        return DataFrame._from_columns({key: self._col}, self.index)

    def __repr__(self):
        return repr(self.to_pandas())

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.to_numpy(), dtype=dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """A NumPy ufunc on a numeric Series (with scalars) runs ember's ufunc of the same name
        on the device, keeping the index, name and missing values (``np.sqrt(s)``, as Dask's
        ``std`` calls it); other calls compute on a host copy, as through ``__array__``."""
        f = getattr(_em, ufunc.__name__, None)
        ok = (
            method == "__call__"
            and not kwargs
            and ufunc.nout == 1
            and f is not None
            and self._col.kind == "num"
            and all(i is self or np.isscalar(i) for i in inputs)
        )
        if not ok:
            host = [np.asarray(i) if isinstance(i, Series) else i for i in inputs]
            return getattr(ufunc, method)(*host, **kwargs)
        data = f(*[self._col.data if i is self else i for i in inputs])
        col = Column(np.dtype(data.dtype), data, self._col.mask)
        return Series._from_column(col, self.index, self.name)

    def __iter__(self):
        return iter(self.tolist())

    # ---- selection ---------------------------------------------------------------------------
    def _take(self, idx):
        return Series._from_column(self._col.take(idx), self.index.take(idx), self.name)

    def _slice(self, start, stop):
        return Series._from_column(
            self._col.slice(start, stop), self.index.slice(start, stop), self.name
        )

    def __getitem__(self, key):
        if isinstance(key, slice) and all(
            v is None or isinstance(v, (int, np.integer)) for v in (key.start, key.stop, key.step)
        ):
            return self.iloc[key]  # integer slices are positional, as pandas
        return self.loc[key]

    def __setitem__(self, key, value):
        from .indexing import setitem_rows

        self._col = setitem_rows(self, key, value)

    # ---- arithmetic --------------------------------------------------------------------------
    def _binop(self, other, op, reflected=False):
        if isinstance(other, Series):
            if len(other) != len(self) or not self.index.equals(other.index):
                from .align import align_series

                idx, (a, b) = align_series([self, other], f"Series.{op}")
                name = self.name if other.name == self.name else None
                return Series._from_column(ops.binary(a, b, op, reflected), idx, name)
            o = other._col
        elif isinstance(other, (list, np.ndarray, _em.ndarray)):
            o = from_values(other, self.device)
            if len(o) != len(self):
                raise ValueError(
                    f"ember.frame.Series.{op}: Lengths must match to compare "
                    f"({len(self)} vs {len(o)})"
                )
        elif hasattr(other, "_data") and not np.isscalar(other):
            return NotImplemented
        else:
            o = other
        name = self.name
        if isinstance(other, Series) and other.name != self.name:
            name = None
        return Series._from_column(ops.binary(self._col, o, op, reflected), self.index, name)

    def _unop(self, op):
        return self._with(ops.unary(self._col, op))

    def __invert__(self):
        return self._unop("invert")

    def __neg__(self):
        return self._unop("neg")

    def __abs__(self):
        return self._unop("abs")

    def abs(self):
        return self._unop("abs")

    # ---- missing -----------------------------------------------------------------------------
    def isna(self):
        return self._with(Column(np.dtype(bool), self._col.isnull()))

    isnull = isna

    def notna(self):
        return self._with(Column(np.dtype(bool), self._col.valid()))

    notnull = notna

    def fillna(self, value=None, *, method=None, limit=None, inplace=False):
        if method is not None:
            raise TypeError(
                "ember.frame.Series.fillna: method= was removed in pandas 3; use ffill()/bfill()"
            )
        if value is None:
            raise ValueError("ember.frame.Series.fillna: Must specify a fill 'value'")
        v = value._col if isinstance(value, Series) else value
        out = self._with(missing.fillna(self._col, v))
        return self._inplace(out, inplace)

    def ffill(self, limit=None):
        return self._with(missing.ffill(self._col, limit))

    def bfill(self, limit=None):
        return self._with(missing.ffill(self._col, limit, backward=True))

    def dropna(self, *, ignore_index=False, inplace=False):
        out = self._take(_em.nonzero(self._col.valid())[0])
        if ignore_index:
            out.index = RangeIndex(len(out), device=self.device)
        return self._inplace(out, inplace)

    def _inplace(self, out, inplace):
        if not inplace:
            return out
        self._init(out._col, out.index, out.name)
        return None

    def where(self, cond, other=np.nan):
        c = self._cond(cond, "where")
        if isinstance(other, Series):
            o = other._col
        elif other is None or other is pd.NA or (isinstance(other, float) and np.isnan(other)):
            if self._col.kind == "num" and self._col.dtype.kind in "iub":
                o = Column.full_null(self.dtype, len(self), self.device)
                if self.dtype.kind != "b":
                    base = Column(
                        np.dtype("float64"), self._col.data.astype(_em.float64), self._col.mask
                    )
                    return self._with(
                        missing.choose(
                            c,
                            base,
                            Column(
                                np.dtype("float64"),
                                _em.full(len(self), np.nan, dtype=_em.float64, device=self.device),
                            ),
                        )
                    )
            else:
                o = Column.full_null(self.dtype, len(self), self.device)
                if self._col.kind == "num":
                    o = Column(
                        self.dtype,
                        _em.full(len(self), np.nan, dtype=self.dtype, device=self.device),
                    )
        else:
            o = missing.scalar_column(other, self._col)
        return self._with(missing.choose(c, self._col, o))

    def mask(self, cond, other=np.nan):
        c = self._cond(cond, "mask")
        return self.where(Series._from_column(Column(np.dtype(bool), ~c), self.index), other)

    def _cond(self, cond, func):
        if isinstance(cond, Series):
            if cond.dtype != np.dtype(bool):
                raise ValueError(
                    f"ember.frame.Series.{func}: Boolean array expected for the "
                    f"condition, not {cond.dtype}"
                )
            return cond._col.data & cond._col.valid()
        c = from_values(cond, self.device)
        return c.data

    def replace(self, to_replace=None, value=None):
        return self._with(missing.replace(self._col, to_replace, value))

    def squeeze(self, axis=None):
        """pandas' ``squeeze``: the value of a one-row Series (a host scalar), else the Series."""
        _axis0(axis, "Series.squeeze")
        return self.iloc[0] if len(self) == 1 else self

    def clip(self, lower=None, upper=None, *, axis=None, inplace=False):
        _axis0(axis, "Series.clip")
        if inplace:
            self._col = self.clip(lower, upper)._col
            return None
        lo = lower._col if isinstance(lower, Series) else lower
        hi = upper._col if isinstance(upper, Series) else upper
        return self._with(missing.clip(self._col, lo, hi))

    def round(self, decimals=0):
        c = self._col
        if c.kind != "num":
            raise TypeError(f"ember.frame.Series.round: not supported for dtype {c.dtype}")
        if c.dtype.kind != "f":
            return self._with(c)
        return self._with(Column(c.dtype, _em.round(c.data, decimals), c.mask))

    # ---- types -------------------------------------------------------------------------------
    def astype(self, dtype, copy=None, errors="raise"):
        from .cast import astype

        del copy
        if errors not in ("raise", "ignore"):
            raise ValueError(
                f"ember.frame.Series.astype: errors must be 'raise' or 'ignore', got {errors!r}"
            )
        return self._with(astype(self._col, dtype, "Series.astype"))

    def copy(self, deep=True):
        return self._with(self._col)

    def rename(self, index=None, *, inplace=False):
        if callable(index) or isinstance(index, dict):
            raise NotImplementedError("ember.frame.Series.rename: relabelling the index")
        out = Series._from_column(self._col, self.index, index)
        return self._inplace(out, inplace)

    # ---- reductions --------------------------------------------------------------------------
    def _reduce(self, how, skipna=True, axis=None, numeric_only=False, **kw):
        # axis/numeric_only: pandas' signature (a Series has one axis; numeric_only on a
        # non-numeric Series raises TypeError as in pandas)
        if axis not in (None, 0, "index", "rows"):
            raise ValueError(f"No axis named {axis} for object type Series")
        if numeric_only and self._col.kind != "num":
            raise TypeError(
                f"Series.{how} does not allow numeric_only=True with non-numeric dtypes."
            )
        return ops.reduce(self._col, how, skipna=skipna, **kw)

    def sum(self, axis=None, skipna=True, numeric_only=False, min_count=0):
        return self._reduce("sum", skipna, axis, numeric_only, min_count=min_count)

    def prod(self, axis=None, skipna=True, numeric_only=False, min_count=0):
        return self._reduce("prod", skipna, axis, numeric_only, min_count=min_count)

    def mean(self, axis=None, skipna=True, numeric_only=False):
        return self._reduce("mean", skipna, axis, numeric_only)

    def median(self, axis=None, skipna=True, numeric_only=False):
        return self._reduce("median", skipna, axis, numeric_only)

    def min(self, axis=None, skipna=True, numeric_only=False):
        return self._reduce("min", skipna, axis, numeric_only)

    def max(self, axis=None, skipna=True, numeric_only=False):
        return self._reduce("max", skipna, axis, numeric_only)

    def std(self, axis=None, skipna=True, ddof=1, numeric_only=False):
        return self._reduce("std", skipna, axis, numeric_only, ddof=ddof)

    def var(self, axis=None, skipna=True, ddof=1, numeric_only=False):
        return self._reduce("var", skipna, axis, numeric_only, ddof=ddof)

    def sem(self, axis=None, skipna=True, ddof=1, numeric_only=False):
        return self._reduce("sem", skipna, axis, numeric_only, ddof=ddof)

    def count(self):
        return self._reduce("count")

    def any(self, axis=None, bool_only=False, skipna=True):
        return self._reduce("any", skipna, axis)

    def all(self, axis=None, bool_only=False, skipna=True):
        return self._reduce("all", skipna, axis)

    def idxmax(self, skipna=True):
        return self._idx(True)

    def idxmin(self, skipna=True):
        return self._idx(False)

    def _idx(self, mx):
        c = self._col
        valid = c.valid()
        if not bool(_em.any(valid)):
            raise ValueError(
                "ember.frame.Series.idxmax: attempt to get argmax of an empty sequence"
            )
        from .keys import sort_key

        k = sort_key(c)
        pos = _em.nonzero(valid)[0]
        kv = _em.take(k, pos)
        i = _em.argmax(kv) if mx else _em.argmin(kv)
        return self.index.take(_em.take(pos, i.reshape(1))).tolist()[0]

    def nunique(self, dropna=True):
        first, _ = algos.value_counts(self._col, dropna=dropna, sort=False)
        return int(first.shape[0])

    def unique(self):
        """Distinct values in order of appearance, as a Series (cuDF returns a Series too)."""
        rows = algos.unique_rows(self._col)
        return Series._from_column(self._col.take(rows), None, self.name)

    def value_counts(self, normalize=False, sort=True, ascending=False, dropna=True):
        first, counts = algos.value_counts(self._col, dropna, sort, ascending)
        idx = Index(self._col.take(first), name=self.name)
        if normalize:
            tot = int(_em.sum(counts)) if counts.shape[0] else 1
            col = Column(np.dtype("float64"), counts.astype(_em.float64) / max(tot, 1))
            return Series._from_column(col, idx, "proportion")
        return Series._from_column(Column(np.dtype("int64"), counts), idx, "count")

    def describe(self, percentiles=None):
        from .describe import describe_series

        return describe_series(self, percentiles)

    def quantile(self, q=0.5, interpolation="linear"):
        from .describe import quantile

        return quantile(self, q, interpolation)

    # ---- rows --------------------------------------------------------------------------------
    def sort_values(
        self,
        *,
        ascending=True,
        kind=None,
        na_position="last",
        ignore_index=False,
        inplace=False,
        key=None,
    ):
        from .keys import argsort_columns
        from .sorting import check_sort_args, key_columns

        asc = check_sort_args([self.name], ascending, na_position, "Series.sort_values")
        order = argsort_columns(key_columns([self], key, "Series.sort_values"), asc, na_position)
        out = self._take(order)
        if ignore_index:
            out.index = RangeIndex(len(out), device=self.device)
        return self._inplace(out, inplace)

    def sort_index(self, *, ascending=True, na_position="last", ignore_index=False):
        from .keys import argsort_columns

        order = argsort_columns([self.index._col], [bool(ascending)], na_position)
        out = self._take(order)
        if ignore_index:
            out.index = RangeIndex(len(out), device=self.device)
        return out

    def nlargest(self, n=5, keep="first"):
        return self.sort_values(ascending=False, kind="stable").head(n)

    def nsmallest(self, n=5, keep="first"):
        return self.sort_values(ascending=True, kind="stable").head(n)

    def argsort(self):
        from .keys import argsort_columns

        return Series._from_column(
            Column(np.dtype("int64"), argsort_columns([self._col], [True])), self.index
        )

    def duplicated(self, keep="first"):
        d = algos.duplicated([self._col], keep, "Series.duplicated")
        return self._with(Column(np.dtype(bool), d))

    def drop_duplicates(self, *, keep="first", ignore_index=False, inplace=False):
        d = algos.duplicated([self._col], keep, "Series.drop_duplicates")
        out = self._take(_em.nonzero(~d)[0])
        if ignore_index:
            out.index = RangeIndex(len(out), device=self.device)
        return self._inplace(out, inplace)

    def explode(self, ignore_index=False):
        """One row per list element (list columns, as ``str.split`` makes); other columns are
        returned unchanged, as pandas does for scalars."""
        if self._col.kind != "list":
            return self.copy()
        from .lists import explode

        return explode(self, ignore_index)

    def isin(self, values):
        return self._with(algos.isin(self._col, values))

    def between(self, left, right, inclusive="both"):
        lo = {"both": "ge", "left": "ge", "right": "gt", "neither": "gt"}.get(inclusive)
        if lo is None:
            raise ValueError(
                "ember.frame.Series.between: Inclusive has to be either string of "
                f"'both','left', 'right', or 'neither', got {inclusive!r}"
            )
        hi = "le" if inclusive in ("both", "right") else "lt"
        return self._binop(left, lo) & self._binop(right, hi)

    def shift(self, periods=1, fill_value=None):
        return self._with(algos.shift(self._col, periods, fill_value))

    def diff(self, periods=1):
        return self._with(algos.diff(self._col, periods))

    def pct_change(self, periods=1, fill_method=None, freq=None):
        from .stats import pct_change

        return pct_change(self, periods, fill_method, freq)

    def agg(self, func=None, axis=0, *args, **kwargs):
        from .stats import series_agg

        return series_agg(self, func)

    aggregate = agg

    def corr(self, other, method="pearson", min_periods=None):
        from .stats import corr_series

        return corr_series(self, other, method, min_periods)

    def cumsum(self, axis=None, skipna=True, *args, **kwargs):
        _axis0(axis, "Series.cumsum")
        return self._with(algos.cumulative(self._col, "cumsum", skipna))

    def cumprod(self, axis=None, skipna=True, *args, **kwargs):
        _axis0(axis, "Series.cumprod")
        return self._with(algos.cumulative(self._col, "cumprod", skipna))

    def cummax(self, axis=None, skipna=True, *args, **kwargs):
        _axis0(axis, "Series.cummax")
        return self._with(algos.cumulative(self._col, "cummax", skipna))

    def cummin(self, axis=None, skipna=True, *args, **kwargs):
        _axis0(axis, "Series.cummin")
        return self._with(algos.cumulative(self._col, "cummin", skipna))

    def rank(self, method="average", ascending=True, na_option="keep", pct=False):
        return self._with(algos.rank(self._col, method, ascending, na_option, pct))

    def rolling(self, window, min_periods=None, center=False, win_type=None, on=None,
                axis=0, closed=None, step=None, method="single"):  # fmt: skip
        from .window import Rolling, check_rolling_options

        check_rolling_options("Series.rolling", win_type, on, axis, closed, step)
        return Rolling(self, window, min_periods, center)

    def apply(self, func, convert_dtype=None, args=(), **kwargs):
        """Apply an elementwise function of ember arrays (a ufunc such as ``ember.sqrt`` or a
        Python function composed of ember operations) to the values on the device."""
        from .apply import apply_column

        return self._with(apply_column(self._col, func, args, kwargs, "Series.apply"))

    def map(self, arg, na_action=None):
        """A dict/Series maps values by lookup (on the device: a joint factorization of the
        keys and the values, then a gather); a callable runs as ``apply``."""
        from .keys import lookup

        if na_action not in (None, "ignore"):
            raise ValueError(
                f"ember.frame.Series.map: na_action must either be 'ignore' or "
                f"None, {na_action!r} was passed"
            )
        if not isinstance(arg, (dict, pd.Series, Series)):
            return self.apply(arg)
        if isinstance(arg, dict):
            keys, vals = list(arg.keys()), list(arg.values())
            kcol = from_values(keys, self.device)
            vcol = from_values(vals, self.device)
        elif isinstance(arg, pd.Series):
            kcol = from_values(arg.index, self.device)
            vcol = from_values(arg, self.device)
        else:
            kcol, vcol = arg.index._col, arg._col
        try:
            pos = lookup(kcol, self._col) if len(kcol) else None
        except TypeError:
            pos = None
        if pos is None:
            pos = _em.full(len(self), -1, dtype=_em.int64, device=self.device)
        out = vcol.take(pos, nullable=True)
        if out.kind == "num" and out.dtype.kind in "iub" and bool(_em.any(pos < 0)):
            data = _em.where(pos >= 0, out.data.astype(_em.float64), np.nan)
            out = Column(np.dtype("float64"), data)
        elif out.kind == "num" and out.dtype.kind == "f":
            out = Column(out.dtype, _em.where(pos >= 0, out.data, np.nan))
        return self._with(out)

    def searchsorted(self, value, side="left", sorter=None):
        """pandas' ``Series.searchsorted`` for numbers and datetimes: insertion positions of
        ``value`` (a scalar, array or Series) in this sorted Series, an ember int64 array on
        this Series' device (pandas returns NumPy's)."""
        col = self._col
        if col.kind not in ("num", "time", "str"):
            raise TypeError(f"ember.frame.Series.searchsorted: not supported for dtype {col.dtype}")
        if side not in ("left", "right"):
            raise ValueError(f"ember.frame.Series.searchsorted: side={side!r} (left or right)")
        if col.kind == "str":
            # strings: joint group codes, which are ranks in sort order, then integers
            from .keys import joint_codes

            vcol = value._col if isinstance(value, Series) else None
            if vcol is None:
                vals = [value] if isinstance(value, str) else list(value)
                vcol = from_values(np.asarray(vals, dtype=object), self.device, col.dtype)
            if vcol.kind != "str":
                raise TypeError(
                    f"ember.frame.Series.searchsorted: value dtype {vcol.dtype} vs {col.dtype}"
                )
            if sorter is not None:
                col = col.take(_em.asarray(sorter, device=self.device).astype(_em.int64))
            if not len(col) or not len(vcol):
                return _em.zeros(len(vcol), dtype=_em.int64, device=self.device)
            a, v, _ = joint_codes([col], [vcol])
            return _em.searchsorted(a, v, side=side)
        if isinstance(value, Series):
            vcol = value._col
            if vcol.kind != col.kind:
                raise TypeError(
                    f"ember.frame.Series.searchsorted: value dtype {vcol.dtype} vs {col.dtype}"
                )
            v = vcol.data
        elif col.kind == "time":
            v = _em.asarray(np.asarray(value, dtype=col.dtype).astype("int64"), device=self.device)
        else:
            v = _em.asarray(value, device=self.device)
        a = col.data
        dt = np.result_type(np.dtype(a.dtype), np.dtype(v.dtype))
        a = a if sorter is None else _em.take(a, _em.asarray(sorter, device=self.device))
        return _em.searchsorted(a.astype(dt), v.astype(dt), side=side)

    def groupby(self, by=None, sort=True, dropna=True, level=None, group_keys=True, observed=True):
        from .frame_methods import _check_observed
        from .groupby import SeriesGroupBy

        _check_observed(observed, "Series")

        if level is not None:
            from .groupby import level_keys
            from .index import MultiIndex

            if isinstance(self.index, MultiIndex):
                by = level_keys(self.index, level)
            else:
                by = Series._from_column(self.index._col, self.index, self.index.name)
        out = SeriesGroupBy(self, by, sort=sort, dropna=dropna)
        out._group_keys = group_keys
        return out

    def reset_index(self, drop=False, name=None):
        if drop:
            return Series._from_column(
                self._col, RangeIndex(len(self), device=self.device), self.name
            )
        return self.to_frame(name).reset_index()

    # ---- accessors ---------------------------------------------------------------------------
    @property
    def str(self):
        from .strings import StringMethods

        return StringMethods(self)

    @property
    def dt(self):
        from .datetime import DatetimeMethods

        return DatetimeMethods(self)

    @property
    def cat(self):
        from .categorical import CategoricalAccessor

        return CategoricalAccessor(self)


Series._add_operators()


def _axis0(axis, who):
    """A Series has one axis: pandas' accepted spellings of it."""
    if axis not in (None, 0, "index", "rows"):
        raise ValueError(f"No axis named {axis!r} for object type Series ({who})")
