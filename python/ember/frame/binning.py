"""``cut``/``qcut`` (bin codes by a device ``searchsorted`` against the edges), ``Categorical`` and
``interval_range``.

The edges and their labels are metadata: for ``cut(x, n)`` pandas' edge rule depends only on the
data's minimum and maximum (two scalars read from the device), and ``qcut``'s edges are the
quantiles computed on the device (k + 1 scalars read back); pandas then formats the k + 1 edges
into its Interval labels on the host, so the categories print exactly as pandas prints them. The
data itself never leaves the device. Interval categories are held on the device as their text
(what ``astype(str)`` gives); the column's dtype keeps pandas' IntervalIndex.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import ember as _em

from . import dtypes as _dt
from .column import Column, from_pandas_index, from_values


def _input_column(x, func):
    """(Column, the Series or None, device) of cut/qcut's input."""
    from .series import Series

    if isinstance(x, Series):
        return x._col, x, x.device
    if isinstance(x, Categorical):
        return x._col, None, x.device
    if isinstance(x, _em.ndarray):
        return from_values(x, str(x.device)), None, str(x.device)
    from .frame_base import default_device

    dev = default_device(x)
    if np.ndim(x) != 1:
        raise ValueError(f"ember.frame.{func}: Input array must be 1 dimensional")
    return from_values(x, dev), None, dev


def _values(col, func):
    """The comparable values: float64 for numbers (pandas casts nullable ints to float), int64
    counts for datetimes/timedeltas."""
    if col.kind == "cat":
        from .cast import astype

        col = astype(col, col.categories.dtype)
    if col.kind == "time":
        return col.data, col.valid(), col
    if col.kind != "num":
        raise TypeError(
            f"ember.frame.{func}: unsupported dtype {col.dtype} (numbers, datetimes and "
            "timedeltas can be binned)"
        )
    return col.data.astype(_em.float64), col.valid(), col


def _host_proto(col, values):
    """A pandas Series of ``values`` (host scalars) with the column's dtype, for pandas' edge
    and label rules."""
    if col.kind == "time":
        return pd.Series(np.asarray(values, dtype=np.int64).view(col.dtype))
    return pd.Series(np.asarray(values, dtype=np.float64))


def _edges_on_device(edges, col, dev):
    e = np.asarray(edges)
    if col.kind == "time":
        e = np.asarray(pd.Index(edges).as_unit(_dt.time_unit(col.dtype))).view(np.int64)
        return _em.asarray(e, device=dev)
    return _em.asarray(e.astype(np.float64), device=dev)


def _finish(codes, na, cats_pd, ordered, labels, series, dev, retbins, edges, mapping=None):
    """Wrap bin codes (int64, -1 .. k-1) as pandas' result: categorical (or the codes when
    ``labels`` is False), a Series for a Series input."""
    from .series import Series

    if labels is False:
        if bool(_em.any(na)):  # host read: pandas gives float codes when a value has no bin
            col = Column(np.dtype("float64"), _em.where(na, np.nan, codes.astype(_em.float64)))
        else:
            col = Column(np.dtype("int64"), codes)
    else:
        if mapping is not None:
            codes = _em.take(_em.asarray(mapping, device=dev), _em.clip(codes, 0, None))
        dtype = pd.CategoricalDtype(cats_pd, ordered=ordered)
        any_na = bool(_em.any(na))  # host read: does the result need a validity mask?
        col = Column(
            dtype,
            _em.where(na, 0, codes).astype(_em.int32),
            ~na if any_na else None,
            categories=from_pandas_index(dtype.categories, dev),
        )
    if series is not None:
        out = Series._from_column(col, series.index, series.name)
    elif labels is False:
        out = col.data
    else:
        out = Categorical._from_column(col)
    return (out, edges) if retbins else out


def _interval_codes(vals, valid, col, bins, dev):
    """Bin codes for an IntervalIndex of bins (non-overlapping): the interval whose left edge is
    the last one at or below the value, kept when the value lies inside it."""
    if bins.is_overlapping:
        raise ValueError("Overlapping IntervalIndex is not accepted.")
    order = np.argsort(np.asarray(bins.left), kind="stable")  # host: k intervals (metadata)
    sb = bins[order]
    left = _edges_on_device(sb.left, col, dev)
    right = _edges_on_device(sb.right, col, dev)
    k = len(sb)
    closed_left = bins.closed in ("left", "both")
    closed_right = bins.closed in ("right", "both")
    i = _em.searchsorted(left, vals, side="right" if closed_left else "left") - 1
    ic = _em.clip(i, 0, max(k - 1, 0))
    lo, hi = _em.take(left, ic), _em.take(right, ic)
    inside = (vals >= lo if closed_left else vals > lo) & (
        vals <= hi if closed_right else vals < hi
    )
    na = ~valid | (i < 0) | ~inside
    codes = _em.take(_em.asarray(order.astype(np.int64), device=dev), ic)
    return _em.where(na, -1, codes), na


def cut(
    x,
    bins,
    right=True,
    labels=None,
    retbins=False,
    precision=3,
    include_lowest=False,
    duplicates="raise",
    ordered=True,
):
    """``pandas.cut``: the bin of each value, computed on the device (``searchsorted`` of the
    values against the edges). ``bins``: a count of equal-width bins over the data's range, a
    sequence of edges, or an IntervalIndex. The result is a category Series (for a Series
    input) or ``Categorical`` whose categories are pandas' Intervals (or ``labels``); with
    ``labels=False`` the integer bin codes. Edges and labels are host metadata (see the module
    docstring)."""
    col, series, dev = _input_column(x, "cut")
    args = (right, labels, retbins, precision, include_lowest, duplicates, ordered)
    return _cut(col, series, dev, bins, *args)


def _cut(
    col, series, dev, bins, right, labels, retbins, precision, include_lowest, duplicates, ordered
):
    vals, valid, col = _values(col, "cut")
    if isinstance(bins, pd.IntervalIndex):
        codes, na = _interval_codes(vals, valid, col, bins, dev)
        cats = pd.CategoricalDtype(bins, ordered=True).categories
        return _finish(codes, na, cats, True, labels, series, dev, retbins, bins)
    if not np.iterable(bins):
        if np.ndim(bins) == 0 and bins < 1:
            raise ValueError("`bins` should be a positive integer.")
        if len(col) == 0:
            raise ValueError("Cannot cut empty array")
        v = vals[valid]
        if v.shape[0]:
            lo, hi = _em.min(v), _em.max(v)  # two host reads: pandas' edges follow from them
            rng = [lo.item(), hi.item()]
        else:
            rng = [np.nan, np.nan]
        _, edges = pd.cut(_host_proto(col, rng), bins, right=right, retbins=True)
    else:
        edges = bins
    proto, edges = pd.cut(
        _host_proto(col, []),
        edges,
        right=right,
        labels=labels,
        retbins=True,
        precision=precision,
        include_lowest=include_lowest,
        duplicates=duplicates,
        ordered=ordered,
    )  # labels and the deduplicated edges: pandas' rules on the k + 1 edges only
    e = _edges_on_device(edges, col, dev)
    ids = _em.searchsorted(e, vals, side="left" if right else "right")
    nb = len(edges)
    if include_lowest and nb:
        ids = _em.where(vals == e[0], 1, ids)
    na = ~valid | (ids == nb) | (ids == 0)
    codes = _em.where(na, -1, ids - 1)
    cats = mapping = None
    if labels is not False:
        cats = proto.cat.categories
        if labels is not None:
            mapping = cats.get_indexer(list(labels)).astype(np.int64)  # host: k labels
    return _finish(codes, na, cats, ordered, labels, series, dev, retbins, edges, mapping)


def qcut(x, q, labels=None, retbins=False, precision=3, duplicates="raise"):
    """``pandas.qcut``: bins at the quantiles of the data (linear interpolation, computed on the
    device), then ``cut`` with those edges (``include_lowest``)."""
    col, series, dev = _input_column(x, "qcut")
    vals, valid, col = _values(col, "qcut")
    if col.kind == "time":
        raise TypeError(f"ember.frame.qcut: unsupported dtype {col.dtype} (numbers)")
    if isinstance(q, (int, np.integer)) and not isinstance(q, bool):
        if q < 1:
            raise ValueError("`q` should be a positive integer.")
        quantiles = np.linspace(0, 1, q + 1)
        # pandas: round up rather than to nearest where q * quantile is not exact
        np.putmask(quantiles, q * quantiles != np.arange(q + 1), np.nextafter(quantiles, 1))
    elif np.iterable(q):
        quantiles = np.asarray(q, dtype=np.float64)
    else:
        raise ValueError("`q` should be a positive integer or list-like of quantiles.")
    v = vals[valid]
    if v.shape[0]:
        qa = _em.asarray(quantiles, device=dev)
        edges = _em.asnumpy(_em.quantile(v, qa))  # host read: k + 1 edges (metadata)
    else:
        edges = np.full(len(quantiles), np.nan)
    uniq = pd.unique(edges)
    if duplicates == "raise" and len(uniq) < len(edges) and len(edges) != 2:
        raise ValueError(
            f"Bin edges must be unique: {pd.Index(edges)!r}.\n"
            "You can drop duplicate edges by setting the 'duplicates' kwarg"
        )
    return _cut(
        col, series, dev, pd.Index(edges), True, labels, retbins, precision, True, duplicates, True
    )


class Categorical:
    """``pandas.Categorical``: int32 codes and a column of categories on one ember device.
    Usable wherever a Series' data is (``Series(cat)``, ``DataFrame({"k": cat})``)."""

    def __init__(
        self, values=None, categories=None, ordered=None, dtype=None, copy=True, device=None
    ):
        from .cast import to_category
        from .frame_base import default_device

        if isinstance(dtype, pd.CategoricalDtype):
            categories = dtype.categories if categories is None else categories
            ordered = dtype.ordered if ordered is None else ordered
        elif dtype not in (None, "category"):
            raise ValueError(f"ember.frame.Categorical: dtype must be categorical, got {dtype!r}")
        dev = str(device) if device is not None else default_device(values)
        col = from_values([] if values is None else values, dev)
        target = pd.CategoricalDtype(categories, ordered=bool(ordered))
        out = to_category(col, target)
        if bool(out.dtype.ordered) != bool(ordered) or (
            categories is None and col.kind == "cat" and ordered is not None
        ):
            out = Column(
                pd.CategoricalDtype(out.dtype.categories, ordered=bool(ordered)),
                out.data,
                out.mask,
                categories=out.categories,
            )
        self._col = out

    @classmethod
    def _from_column(cls, col):
        out = cls.__new__(cls)
        out._col = col
        return out

    @classmethod
    def from_codes(cls, codes, categories=None, ordered=None, dtype=None, device=None):
        """Codes (-1 for missing) into ``categories`` (host or device codes)."""
        from .frame_base import default_device

        if isinstance(dtype, pd.CategoricalDtype):
            categories, ordered = dtype.categories, dtype.ordered
        dev = str(device) if device is not None else default_device(codes)
        c = from_values(codes, dev)
        if c.kind != "num" or c.dtype.kind not in "iu":
            raise ValueError("codes need to be array-like integers")
        pdt = pd.CategoricalDtype(categories, ordered=bool(ordered))
        k = len(pdt.categories)
        data = c.data.astype(_em.int64)
        if len(c) and bool(_em.any((data < -1) | (data >= k))):  # host read: validation
            raise ValueError("codes need to be between -1 and len(categories)-1")
        miss = data < 0
        any_na = bool(_em.any(miss)) if len(c) else False  # host read: a mask needed?
        col = Column(
            pdt,
            _em.where(miss, 0, data).astype(_em.int32),
            ~miss if any_na else None,
            categories=from_pandas_index(pdt.categories, dev),
        )
        return cls._from_column(col)

    @property
    def dtype(self):
        return self._col.dtype

    @property
    def categories(self):
        return self._col.dtype.categories

    @property
    def ordered(self):
        return bool(self._col.dtype.ordered)

    @property
    def codes(self):
        """The codes as an ember int8/int32 array on the device (-1 for missing)."""
        from .series import Series

        return Series._from_column(self._col).cat.codes.values

    @property
    def device(self):
        return self._col.device

    def to(self, device):
        return Categorical._from_column(self._col.to(str(device)))

    def __len__(self):
        return len(self._col)

    @property
    def shape(self):
        return (len(self),)

    def isna(self):
        return self._col.isnull()

    def to_pandas(self):
        return self._col.to_pandas()

    def tolist(self):
        return self.to_pandas().tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.to_pandas(), dtype=dtype)

    def __repr__(self):
        return repr(self.to_pandas())


def interval_range(start=None, end=None, periods=None, freq=None, name=None, closed="right"):
    """``pandas.interval_range``: a pandas IntervalIndex (host labels, like ``date_range``'s
    computation), usable as ``cut``'s bins."""
    return pd.interval_range(
        start=start, end=end, periods=periods, freq=freq, name=name, closed=closed
    )
