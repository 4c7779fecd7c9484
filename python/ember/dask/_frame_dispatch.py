"""ember.frame objects as Dask DataFrame partitions: the registrations dask_cudf makes for cuDF
(``dask.dataframe.dispatch`` and ``dask._dispatch``), made for ember.frame.

- metadata: ``make_meta`` (an empty frame of the same columns, dtypes, index and device),
  ``make_meta_obj`` (dtype descriptions -> empty ember frames on the backend device),
  ``meta_nonempty`` (two fake rows: pandas' fakes, moved to the meta's device; metadata is a
  few host values, so the host is the natural place to make them);
- partition algebra: ``concat``, ``tolist``, ``is_categorical_dtype``, ``union_categoricals``,
  ``categorical_dtype``, ``grouper``;
- shuffles: ``hash_object_dispatch`` (``_frame_hash``: a 64-bit hash of every row computed on
  the partition's device) and ``group_split_dispatch`` (a stable sort by output partition, then
  slices);
- quantiles (``set_index``/``sort_values`` divisions): ``percentile_lookup`` on the device; the
  few quantile values Dask merges into divisions are host metadata;
- collection types (``get_parallel_type``/``get_collection_type``), ``sizeof``, tokens
  (``normalize_token``: the columns' ember arrays' own device digests).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from dask import _dispatch as _dask_dispatch
from dask.array.dispatch import percentile_lookup
from dask.base import normalize_token
from dask.dataframe import backends as _pd_backends
from dask.dataframe import dispatch as _dd
from dask.sizeof import sizeof

import ember

__all__ = ["register"]


def _frame():
    import ember.frame as ef

    return ef


def _types():
    ef = _frame()
    return ef.DataFrame, ef.Series, ef.Index


def frame_device():
    """The device the "ember" dataframe backend creates partitions on: the Dask config value
    ``dataframe.ember.device`` when set, else ember's default device of the calling thread."""
    import dask

    dev = dask.config.get("dataframe.ember.device", None)
    if dev is None:
        return str(ember.get_default_device())
    try:
        return str(ember.Device(str(dev)))
    except Exception as e:
        raise ValueError(
            f"ember.dask: the Dask config value dataframe.ember.device={dev!r} is not a device"
        ) from e


def from_pandas_obj(obj, device=None):
    """A pandas object (or a scalar) as its ember.frame counterpart on ``device``."""
    if isinstance(obj, (pd.DataFrame, pd.Series, pd.Index)):
        return _frame().from_pandas(obj, device=device or frame_device())
    return obj


# ---- metadata ------------------------------------------------------------------------------
def _make_meta_frame(x, index=None):
    return x.iloc[:0]


def _make_meta_index(x, index=None):
    return x.slice(0, 0)


def _make_meta_obj(x, index=None):
    dev = frame_device()
    if index is not None and not isinstance(index, pd.Index):
        index = index.to_pandas()
    out = _pd_backends.make_meta_object(x, index=index)
    return from_pandas_obj(out, dev)


def _meta_nonempty(x):
    # pandas' two fake rows of each dtype, moved to the meta's device (host metadata)
    fake = _pd_backends.meta_nonempty(x.to_pandas())
    return from_pandas_obj(fake, x.device)


# ---- partition algebra ---------------------------------------------------------------------
def _concat(
    dfs, axis=0, join="outer", uniform=False, filter_warning=True, ignore_index=False, **kwargs
):
    ef = _frame()
    kwargs.pop("ignore_order", None)
    if isinstance(dfs[0], ef.Index):
        from ember.frame.index import concat_indexes

        return concat_indexes(list(dfs))
    return ef.concat(list(dfs), axis=axis, join=join, ignore_index=ignore_index)


def _tolist(obj):
    return obj.tolist()


def _is_categorical_dtype(obj):
    dtype = getattr(obj, "dtype", obj)
    return isinstance(dtype, pd.CategoricalDtype)


def _categorical_dtype(categories=None, ordered=False):
    return pd.CategoricalDtype(categories=categories, ordered=ordered)


def _union_categoricals(to_union, sort_categories=False, ignore_order=False):
    """pandas' ``union_categoricals`` for ember category Series/Indexes: the categories of all,
    in order of first appearance (sorted with ``sort_categories``), and the values recoded."""
    ef = _frame()
    from ember.frame.reshape import concat_columns

    parts = [s if isinstance(s, ef.Series) else ef.Series(s) for s in to_union]
    for s in parts:
        if not _is_categorical_dtype(s):
            raise TypeError("ember.dask.union_categoricals: all inputs must be categorical")
    col = concat_columns([s._col.categories for s in parts])
    cats = ef.Series._from_column(col, ef.RangeIndex(len(col), device=col.device), None)
    cats = cats.drop_duplicates()
    if sort_categories:
        cats = cats.sort_values()
    ordered = bool(parts[0].dtype.ordered) and not ignore_order
    # the categories are dtype metadata (host values), as in pandas
    dtype = pd.CategoricalDtype(cats.to_pandas().tolist(), ordered=ordered)
    values = ef.concat([s.astype(s.dtype.categories.dtype) for s in parts], ignore_index=True)
    return values.astype(dtype)


def _grouper(obj):
    return pd.Grouper


# ---- shuffles ------------------------------------------------------------------------------
def _hash_object(obj, index=True, encoding="utf8", hash_key=None, categorize=True):
    from ._frame_hash import hash_frame

    return hash_frame(obj, index=index)


def _group_split(df, c, k, ignore_index=False):
    """``df``'s rows split by ``c`` (output partition numbers in [0, k)) into a dict
    {i: rows of partition i}, each keeping its rows' order (a stable sort, then slices)."""
    from dask.dataframe.backends import ShuffleGroupResult

    ef = _frame()
    if isinstance(c, (ef.Series, ef.Index)):
        c = c._col.data
    elif not isinstance(c, ember.ndarray):
        c = ember.asarray(np.asarray(c), device=df.device)
    c = c.astype(ember.int64)
    order = ember.argsort(c, stable=True)
    counts = ember.bincount(c, minlength=k)
    # the k + 1 split points are host metadata (one small copy)
    bounds = np.concatenate([[0], np.cumsum(ember.asnumpy(counts))]).tolist()
    df2 = df.take(order)
    parts = {}
    for i in range(k):
        p = df2.iloc[bounds[i] : bounds[i + 1]]
        parts[i] = p.reset_index(drop=True) if ignore_index else p
    return ShuffleGroupResult(parts)


def _partd_encode(meta):
    """The partd store of Dask's "disk" shuffle (the threaded scheduler's default): partitions
    pickled whole (ember.frame objects pickle their columns' arrays; a GPU column's bytes go
    through the host), joined with ember.frame.concat."""
    import pickle
    from functools import partial

    import partd

    empty = meta.iloc[:0]

    def join(parts):
        return _concat(list(parts)) if len(parts) > 1 else (parts[0] if parts else empty)

    dumps = partial(pickle.dumps, protocol=pickle.HIGHEST_PROTOCOL)
    return partial(partd.Encode, dumps, pickle.loads, join)


def _to_arrow_table(obj, preserve_index=None, **kwargs):
    """An Arrow table of the partition (Dask's p2p shuffle moves partitions as Arrow tables):
    the columns are copied to the host (Arrow buffers here are host memory)."""
    from ember.frame.io import _with_metadata

    table = obj.to_arrow(preserve_index=preserve_index)
    return table if preserve_index is False else _with_metadata(obj, table, preserve_index)


def _from_arrow_table(meta, table, self_destruct=None, **kwargs):
    """The partition back from an Arrow table, on the meta's device."""
    from ember.frame.io import from_table

    return from_table(table, device=meta.device)


def _pyarrow_schema(obj, preserve_index=None):
    return obj.to_arrow(preserve_index=preserve_index).schema


# ---- quantiles -----------------------------------------------------------------------------
def _percentile(a, q, interpolation="linear"):
    """Dask's ``_percentile`` contract (values, count) for an ember Series/Index: the quantiles
    are computed on the device; they come back as a small host array because Dask merges them
    into divisions (host metadata)."""
    col = a._col
    n = len(a)
    if not n:
        return None, 0
    q = np.asarray(q, dtype="float64")
    if col.kind == "cat":
        codes = col.data[col.valid()]
        vals = ember.quantile(
            codes.astype(ember.float64),
            ember.asarray(q / 100.0, device=codes.device),
            method="nearest",
        )
        cats = col.categories.to_pandas()
        return pd.Categorical.from_codes(ember.asnumpy(vals).astype("int64"), cats), n
    s = a if isinstance(a, _frame().Series) else _frame().Series(a)
    s = s.dropna()
    if not len(s):
        return None, 0
    if col.kind == "str":
        srt = s.sort_values()
        pos = np.clip(np.round(q / 100.0 * (len(srt) - 1)).astype("int64"), 0, len(srt) - 1)
        return np.asarray(srt.iloc[pos.tolist()].to_pandas().to_numpy(), dtype=object), n
    data = s._col.data
    method = "nearest" if col.kind == "time" or interpolation == "nearest" else interpolation
    x = data.astype(ember.float64) if method == "linear" else data
    vals = ember.quantile(x, ember.asarray(q / 100.0, device=data.device), method=method)
    out = ember.asnumpy(vals)
    if col.kind == "time" or not np.issubdtype(col.dtype, np.floating) and method != "linear":
        out = out.astype(col.dtype)
    return out, n


# ---- tokens and sizes ----------------------------------------------------------------------
def _column_arrays(col):
    out = []
    for name in ("data", "mask", "offsets", "chars"):
        a = getattr(col, name)
        out.append(None if a is None else normalize_token(a))
    if col.categories is not None:
        out.append(_column_arrays(col.categories))
    if col.child is not None:
        out.append(_column_arrays(col.child))
    return out


def _index_token(idx):
    from ember.frame.index import MultiIndex, RangeIndex

    if isinstance(idx, MultiIndex):
        return ("MultiIndex", list(idx.names), [_column_arrays(c) for c in idx._columns])
    if isinstance(idx, RangeIndex):
        return ("RangeIndex", idx.start, idx.stop, idx.step, idx.name, idx.device)
    return (
        type(idx).__name__,
        str(idx.dtype),
        _column_arrays(idx._col),
        getattr(idx, "name", None),
        getattr(idx, "names", None),
    )


def _tokenize_frame(df):
    ef = _frame()
    if isinstance(df, ef.DataFrame):
        cols = [(k, str(c.dtype), _column_arrays(c)) for k, c in df._data.items()]
        return ("ember.frame.DataFrame", cols, _index_token(df.index))
    if isinstance(df, ef.Series):
        return (
            "ember.frame.Series",
            df.name,
            str(df.dtype),
            _column_arrays(df._col),
            _index_token(df.index),
        )
    return ("ember.frame.Index", _index_token(df))


def _column_nbytes(col):
    n = 0
    for name in ("data", "mask", "offsets", "chars"):
        a = getattr(col, name)
        n += 0 if a is None else int(a.nbytes)
    for sub in (col.categories, col.child):
        n += 0 if sub is None else _column_nbytes(sub)
    return n


def _sizeof_frame(df):
    ef = _frame()
    from ember.frame.index import MultiIndex, RangeIndex

    idx = df if isinstance(df, ef.Index) else df.index
    if isinstance(idx, MultiIndex):
        n = sum(_column_nbytes(c) for c in idx._columns)
    else:
        n = 0 if isinstance(idx, RangeIndex) else _column_nbytes(idx._col)
    if isinstance(df, ef.DataFrame):
        n += sum(_column_nbytes(c) for c in df._data.values())
    elif isinstance(df, ef.Series):
        n += _column_nbytes(df._col)
    return n + 100


# ---- collection types ----------------------------------------------------------------------
_EMBER_DATAFRAME = []


def _ember_dataframe_collection():
    """Dask's DataFrame collection for ember.frame partitions (dask_cudf's model: a subclass
    where a method needs ember's own path). ``to_parquet``: Dask's pyarrow writer only takes
    pandas partitions, so each partition is copied to the host explicitly first."""
    if not _EMBER_DATAFRAME:
        from dask.dataframe.dask_expr import _collection

        class DataFrame(_collection.DataFrame):
            __doc__ = _collection.DataFrame.__doc__

            def to_parquet(self, path, **kwargs):
                from .frame_backend import to_parquet

                return to_parquet(self, path, **kwargs)

        DataFrame.__module__ = "ember.dask"
        _EMBER_DATAFRAME.append(DataFrame)
    return _EMBER_DATAFRAME[0]


def _collection_type(name):
    def get(_):
        if name == "DataFrame":
            return _ember_dataframe_collection()
        from dask.dataframe.dask_expr import _collection

        return getattr(_collection, name)

    return get


_registered = False


def register():
    """Registers ember.frame's DataFrame/Series/Index with dask.dataframe (idempotent)."""
    global _registered
    if _registered:
        return
    DataFrame, Series, Index = _types()
    frames = (DataFrame, Series)
    allt = (DataFrame, Series, Index)
    _dd.make_meta_dispatch.register(frames, _make_meta_frame)
    _dd.make_meta_dispatch.register(Index, _make_meta_index)
    _dd.make_meta_obj.register(allt, _make_meta_obj)
    _dd.meta_nonempty.register(allt, _meta_nonempty)
    _dd.concat_dispatch.register(allt, _concat)
    _dd.tolist_dispatch.register((Series, Index), _tolist)
    _dd.is_categorical_dtype_dispatch.register((Series, Index), _is_categorical_dtype)
    _dd.categorical_dtype_dispatch.register(allt, _categorical_dtype)
    _dd.union_categoricals_dispatch.register(allt, _union_categoricals)
    _dd.grouper_dispatch.register(frames, _grouper)
    _dd.hash_object_dispatch.register(allt, _hash_object)
    _dd.group_split_dispatch.register(allt, _group_split)
    _dd.partd_encode_dispatch.register(DataFrame, _partd_encode)
    _dd.to_pyarrow_table_dispatch.register(DataFrame, _to_arrow_table)
    _dd.from_pyarrow_table_dispatch.register(DataFrame, _from_arrow_table)
    _dd.pyarrow_schema_dispatch.register(DataFrame, _pyarrow_schema)
    percentile_lookup.register((Series, Index), _percentile)
    for t, name in ((DataFrame, "DataFrame"), (Series, "Series"), (Index, "Index")):
        _dd.get_parallel_type.register(t, _collection_type(name))
        _dask_dispatch.get_collection_type.register(t, _collection_type(name))
    normalize_token.register(allt, _tokenize_frame)
    sizeof.register(allt, _sizeof_frame)
    _registered = True
