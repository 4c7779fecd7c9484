"""I/O through pyarrow: files are parsed on the host (Arrow's readers), then the decoded columns
are copied to the device once; writers copy the columns back to the host once."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute.cast)

from . import dtypes as _dt
from .frame_base import default_device

_PANDAS_NA = [
    "",
    "#N/A",
    "#N/A N/A",
    "#NA",
    "-1.#IND",
    "-1.#QNAN",
    "-NaN",
    "-nan",
    "1.#IND",
    "1.#QNAN",
    "<NA>",
    "N/A",
    "NA",
    "NULL",
    "NaN",
    "None",
    "n/a",
    "nan",
    "null",
]


def _arrow_type(dtype, func):
    dt = _dt.normalize(dtype, func=func)
    if _dt.is_string(dt):
        return pa.large_string()
    if isinstance(dt, pd.CategoricalDtype):
        return pa.dictionary(pa.int32(), pa.large_string())
    if _dt.is_datetime(dt):
        return pa.timestamp(_dt.time_unit(dt))
    if _dt.is_timedelta(dt):
        return pa.duration(_dt.time_unit(dt))
    return pa.from_numpy_dtype(dt)


def from_table(table: pa.Table, device=None):
    """A DataFrame from an Arrow table, restoring a pandas index recorded in its metadata."""
    from .dataframe import DataFrame
    from .index import Index, RangeIndex

    dev = str(device) if device is not None else default_device()
    meta = table.schema.pandas_metadata or {}
    idx_cols = meta.get("index_columns", [])
    index = None
    names = list(table.column_names)
    if len(idx_cols) == 1:
        ic = idx_cols[0]
        if isinstance(ic, dict) and ic.get("kind") == "range":
            r = range(ic["start"], ic["stop"], ic["step"])
            if len(r) == table.num_rows:
                index = RangeIndex(ic["start"], ic["stop"], ic["step"], ic.get("name"), dev)
        elif isinstance(ic, str) and ic in names:
            from .column import from_arrow

            name = None if ic.startswith("__index_level_") else ic
            for c in meta.get("columns", []):
                if c.get("field_name") == ic:
                    name = c.get("name")
            index = Index(from_arrow(table.column(ic), dev), name=name)
            table = table.drop_columns([ic])
    df = DataFrame(table, device=dev)
    if index is not None:
        df.index = index
    return df


def read_csv(
    filepath_or_buffer,
    sep=",",
    delimiter=None,
    header="infer",
    names=None,
    usecols=None,
    dtype=None,
    parse_dates=None,
    na_values=None,
    keep_default_na=True,
    skiprows=None,
    nrows=None,
    device=None,
    **kwargs,
):
    from pyarrow import csv

    if kwargs:
        raise NotImplementedError(f"ember.frame.read_csv: arguments {sorted(kwargs)}")
    sep = delimiter if delimiter is not None else sep
    if not isinstance(sep, str) or len(sep) != 1:
        raise ValueError(f"ember.frame.read_csv: sep must be one character, got {sep!r}")
    ro = {}
    if names is not None:
        ro["column_names"] = list(names)
        if header == 0:
            ro["skip_rows"] = 1
    elif header is None:
        ro["autogenerate_column_names"] = True
    elif header not in ("infer", 0):
        raise NotImplementedError(f"ember.frame.read_csv: header={header!r}")
    if skiprows:
        ro["skip_rows"] = ro.get("skip_rows", 0) + int(skiprows)
    nulls = list(_PANDAS_NA) if keep_default_na else []
    if na_values is not None:
        nulls += [str(v) for v in ([na_values] if isinstance(na_values, str) else na_values)]
    co = {"null_values": nulls, "strings_can_be_null": True}
    if usecols is not None:
        co["include_columns"] = [str(u) for u in usecols]
    types = {}
    if dtype is not None:
        if isinstance(dtype, dict):
            types = {str(k): _arrow_type(v, "read_csv") for k, v in dtype.items()}
        else:
            types = None
            co["column_types"] = None
    if types:
        co["column_types"] = types
    if co.get("column_types", 1) is None:
        del co["column_types"]
    if hasattr(filepath_or_buffer, "read") and not isinstance(
        filepath_or_buffer, (io.BufferedIOBase, io.RawIOBase)
    ):
        text = filepath_or_buffer.read()  # a text buffer (io.StringIO): Arrow reads bytes
        if isinstance(text, str):
            text = text.encode("utf-8")
        filepath_or_buffer = io.BytesIO(text)
    table = csv.read_csv(
        filepath_or_buffer,
        read_options=csv.ReadOptions(**ro),
        parse_options=csv.ParseOptions(delimiter=sep),
        convert_options=csv.ConvertOptions(**co),
    )
    if dtype is not None and not isinstance(dtype, dict):
        t = _arrow_type(dtype, "read_csv")
        table = pa.table([c.cast(t) for c in table.columns], names=table.column_names)
    if header is None and names is None:
        table = table.rename_columns([str(i) for i in range(table.num_columns)])
    if nrows is not None:
        table = table.slice(0, int(nrows))
    if parse_dates:
        cols = [parse_dates] if isinstance(parse_dates, str) else list(parse_dates)
        for c in cols:
            i = table.column_names.index(c)
            col = table.column(i)
            if pa.types.is_date(col.type):
                col = col.cast(pa.timestamp("s"))
            elif not pa.types.is_timestamp(col.type):
                col = pa.compute.cast(col, pa.timestamp("us"))
            table = table.set_column(i, c, col)
    df = from_table(table, device)
    if header is None and names is None:
        df.columns = list(range(len(df.columns)))
    return df


def read_parquet(path, columns=None, filters=None, device=None, **kwargs):
    import pyarrow.parquet as pq

    if kwargs:
        raise NotImplementedError(f"ember.frame.read_parquet: arguments {sorted(kwargs)}")
    table = pq.read_table(path, columns=columns, filters=filters)
    if columns is not None:
        meta = table.schema.pandas_metadata
        if meta is not None:
            keep = set(columns) | {c for c in meta.get("index_columns", []) if isinstance(c, str)}
            table = table.select([c for c in table.column_names if c in keep])
    return from_table(table, device)


def read_json(path_or_buf, lines=False, orient=None, device=None):
    if lines:
        from pyarrow import json

        return from_table(json.read_json(path_or_buf), device)
    from .dataframe import DataFrame

    return DataFrame(pd.read_json(path_or_buf, orient=orient), device=device)


def _with_metadata(df, table, index):
    """Add pandas' schema metadata so pandas reads the same index back."""
    from .index import RangeIndex

    idx = df.index
    cols = [
        {
            "name": str(k),
            "field_name": str(k),
            "pandas_type": "unknown",
            "numpy_type": str(c.dtype),
            "metadata": None,
        }
        for k, c in df._data.items()
    ]
    if isinstance(idx, RangeIndex) and index is not True:
        ic = [
            {
                "kind": "range",
                "name": idx.name,
                "start": idx.start,
                "stop": idx.stop,
                "step": idx.step,
            }
        ]
    else:
        name = idx.name if idx.name is not None else "__index_level_0__"
        ic = [name]
        if name not in table.column_names:
            table = table.append_column(name, idx._col.to_arrow())
        cols.append(
            {
                "name": idx.name,
                "field_name": name,
                "pandas_type": "unknown",
                "numpy_type": str(idx.dtype),
                "metadata": None,
            }
        )
    import json

    meta = {
        "index_columns": ic,
        "column_indexes": [],
        "columns": cols,
        "creator": {"library": "ember.frame"},
        "pandas_version": pd.__version__,
    }
    return table.replace_schema_metadata({b"pandas": json.dumps(meta).encode()})


def to_parquet(df, path, index=None, compression="snappy", **kwargs):
    import pyarrow.parquet as pq

    table = df.to_arrow(preserve_index=bool(index))
    if index is not False:
        table = _with_metadata(df, table, index)
    pq.write_table(table, path, compression=compression, **kwargs)


def to_csv(df, path_or_buf=None, sep=",", index=True, header=True, **kwargs):
    # CSV text is formatted on the host (an explicit copy of the columns), with pandas' format
    return df.to_pandas().to_csv(path_or_buf, sep=sep, index=index, header=header, **kwargs)


def to_json(df, path_or_buf=None, orient=None, lines=False):
    pdf = df.to_pandas()
    if lines:
        orient = "records"
    return pdf.to_json(path_or_buf, orient=orient, lines=lines)


_ = np
