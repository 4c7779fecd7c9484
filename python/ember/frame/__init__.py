"""ember.frame: pandas' API on ember arrays (as RAPIDS cuDF offers it), on the GPU and the CPU.

``import ember.frame as pd``: DataFrame/Series/Index hold their columns on one ember device
("cuda" or "cpu", the default device unless ``device=`` says otherwise); every operation runs
there with ember's kernels. Host copies happen only at the boundaries: construction from host
data, ``to_pandas``/``to_numpy``/``repr``, file I/O, and the scalar results pandas returns.
"""

from __future__ import annotations

from .binning import Categorical, cut, interval_range, qcut
from .convert import factorize, to_numeric, to_timedelta, unique
from .dataframe import DataFrame
from .dtypes import CategoricalDtype
from .index import Index, MultiIndex, RangeIndex
from .io import read_csv, read_json, read_parquet
from .pivot import crosstab, melt
from .reshape import concat
from .series import Series
from .stats import get_dummies

NA = __import__("pandas").NA
NaT = __import__("pandas").NaT
# scalars are host objects, as in cuDF
Timestamp = __import__("pandas").Timestamp
Timedelta = __import__("pandas").Timedelta


def date_range(start=None, end=None, periods=None, freq=None, name=None, device=None, **kw):
    """pandas.date_range computed on the host (it is label metadata), held as a device Index."""
    import pandas as pd

    from .frame_base import default_device
    from .index import as_index

    idx = pd.date_range(start=start, end=end, periods=periods, freq=freq, name=name, **kw)
    return as_index(idx, str(device) if device else default_device())


def from_pandas(obj, device=None):
    """A DataFrame/Series/Index from a pandas object (the data is copied to ``device``)."""
    import pandas as pd

    if isinstance(obj, pd.DataFrame):
        return DataFrame(obj, device=device)
    if isinstance(obj, pd.Series):
        return Series(obj, device=device)
    if isinstance(obj, pd.Index):
        from .frame_base import default_device
        from .index import as_index

        return as_index(obj, str(device) if device else default_device())
    raise TypeError(
        f"ember.frame.from_pandas: expected a pandas DataFrame, Series or Index, "
        f"got {type(obj).__name__}"
    )


def from_arrow(obj, device=None):
    """A DataFrame from an Arrow Table/RecordBatch, a Series from an Arrow (Chunked)Array."""
    import pyarrow as pa

    from .io import from_table

    if isinstance(obj, pa.RecordBatch):
        obj = pa.Table.from_batches([obj])
    if isinstance(obj, pa.Table):
        return from_table(obj, device)
    if isinstance(obj, (pa.Array, pa.ChunkedArray)):
        return Series(obj, device=device)
    raise TypeError(
        f"ember.frame.from_arrow: expected an Arrow Table or Array, got {type(obj).__name__}"
    )


def merge(left, right, **kwargs):
    return left.merge(right, **kwargs)


def merge_asof(left, right, **kwargs):
    """pandas' ``merge_asof`` (``ember.frame.asof``)."""
    from .asof import merge_asof as _merge_asof

    return _merge_asof(left, right, **kwargs)


def isna(obj):
    return obj.isna()


isnull = isna


def notna(obj):
    return obj.notna()


notnull = notna


def to_datetime(arg, unit=None, format=None, errors="raise", device=None):  # noqa: A002
    """A device string Series is parsed on the device (ISO 8601); numbers with ``unit`` are
    reinterpreted; host data (lists, pandas objects) is parsed by pandas, then copied over."""
    import numpy as np
    import pandas as pd

    if isinstance(arg, Series):
        col = arg._col
        if col.kind == "num" and unit is not None:
            from .cast import astype

            s = Series._from_column(astype(col, "int64"), arg.index, arg.name)
            return s.astype(np.dtype(f"datetime64[{unit}]"))
        if col.kind == "time":
            return arg
        if col.kind == "str":
            if format not in (None, "ISO8601", "%Y-%m-%d", "%Y-%m-%d %H:%M:%S"):
                raise NotImplementedError(
                    f"ember.frame.to_datetime: format={format!r} on the device (ISO 8601 only)"
                )
            from .datetime import parse_iso

            return Series._from_column(parse_iso(col, errors), arg.index, arg.name)
        raise TypeError(f"ember.frame.to_datetime: cannot convert dtype {col.dtype}")
    out = pd.to_datetime(arg, unit=unit, format=format, errors=errors)
    if np.isscalar(out) or isinstance(out, pd.Timestamp):
        return out
    return Series(pd.Series(out), device=device)


def pivot_table(data, values=None, index=None, columns=None, aggfunc="mean", fill_value=None):
    return data.pivot_table(values, index, columns, aggfunc, fill_value)


__all__ = [
    "DataFrame",
    "Series",
    "Index",
    "RangeIndex",
    "MultiIndex",
    "CategoricalDtype",
    "concat",
    "merge",
    "merge_asof",
    "read_csv",
    "read_parquet",
    "read_json",
    "from_pandas",
    "from_arrow",
    "isna",
    "notna",
    "isnull",
    "notnull",
    "crosstab",
    "get_dummies",
    "melt",
    "pivot_table",
    "to_datetime",
    "NA",
    "NaT",
    "Timestamp",
    "Timedelta",
    "date_range",
    "cut",
    "qcut",
    "Categorical",
    "interval_range",
    "to_numeric",
    "to_timedelta",
    "factorize",
    "unique",
]
