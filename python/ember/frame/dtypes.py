"""Column dtypes of ember.frame: NumPy dtypes for numbers, bools and times, pandas' ``str`` and
``category`` dtype objects for strings and categoricals (metadata only; the data is on the device).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# pandas 3's default string dtype ("str": missing values read as NaN); ember.frame keeps strings as
# Arrow does (offsets + UTF-8 bytes on the device) and reports this dtype, as pandas 3 does.
STRING = pd.StringDtype(na_value=np.nan)
CategoricalDtype = pd.CategoricalDtype

_TIME_UNITS = ("s", "ms", "us", "ns")
# nanoseconds in one unit
UNIT_NS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}

_NAMES = {
    "str": STRING,
    "string": STRING,
    "object": STRING,
    "category": "category",
    "Int8": np.dtype("int8"),
    "Int16": np.dtype("int16"),
    "Int32": np.dtype("int32"),
    "Int64": np.dtype("int64"),
    "UInt8": np.dtype("uint8"),
    "UInt16": np.dtype("uint16"),
    "UInt32": np.dtype("uint32"),
    "UInt64": np.dtype("uint64"),
    "Float32": np.dtype("float32"),
    "Float64": np.dtype("float64"),
    "boolean": np.dtype("bool"),
}


class ListDtype:
    """A list column's dtype (Arrow's large_list): per row, a run of a child column's values.
    pandas shows such a column as object; ``str(dtype)`` says ``list<child>``."""

    def __init__(self, child):
        self.child = child

    @property
    def name(self):
        return f"list<{self.child}>"

    kind = "O"

    def __str__(self):
        return self.name

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, ListDtype) and other.child == self.child

    def __hash__(self):
        return hash(("list", str(self.child)))


def is_list(dtype) -> bool:
    return isinstance(dtype, ListDtype)


def is_string(dtype) -> bool:
    return isinstance(dtype, pd.StringDtype)


def is_categorical(dtype) -> bool:
    return isinstance(dtype, pd.CategoricalDtype)


def is_datetime(dtype) -> bool:
    return isinstance(dtype, np.dtype) and dtype.kind == "M"


def is_timedelta(dtype) -> bool:
    return isinstance(dtype, np.dtype) and dtype.kind == "m"


def is_time(dtype) -> bool:
    return isinstance(dtype, np.dtype) and dtype.kind in "mM"


def is_numeric(dtype) -> bool:
    """int, uint, float or bool (bool counts as numeric, as in pandas' arithmetic)."""
    return isinstance(dtype, np.dtype) and dtype.kind in "iufb"


def is_integer(dtype) -> bool:
    return isinstance(dtype, np.dtype) and dtype.kind in "iu"


def is_float(dtype) -> bool:
    return isinstance(dtype, np.dtype) and dtype.kind == "f"


def is_bool(dtype) -> bool:
    return isinstance(dtype, np.dtype) and dtype.kind == "b"


def time_unit(dtype) -> str:
    unit, _ = np.datetime_data(dtype)
    return unit


def normalize(dtype, *, func="astype"):
    """Map a user dtype spelling (NumPy, pandas extension names, ember dtypes) to a column dtype."""
    if dtype is None:
        return None
    if isinstance(dtype, (pd.StringDtype, pd.CategoricalDtype)):
        return STRING if isinstance(dtype, pd.StringDtype) else dtype
    if isinstance(dtype, pd.api.extensions.ExtensionDtype):
        name = dtype.name
        if name in _NAMES:
            return _NAMES[name]
        if isinstance(dtype, pd.DatetimeTZDtype):
            raise NotImplementedError(f"ember.frame.{func}: timezone-aware datetimes ({dtype})")
        raise TypeError(f"ember.frame.{func}: unsupported dtype {dtype!r}")
    if dtype is str:
        return STRING
    if isinstance(dtype, str):
        if dtype in _NAMES:
            got = _NAMES[dtype]
            return pd.CategoricalDtype() if got == "category" else got
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"ember.frame.{func}: data type {dtype!r} not understood") from None
    if dt.kind in "OUS":
        return STRING
    if dt.kind in "mM":
        unit = time_unit(dt)
        if unit == "generic":
            dt = np.dtype("datetime64[ns]" if dt.kind == "M" else "timedelta64[ns]")
        elif unit not in _TIME_UNITS:
            raise TypeError(f"ember.frame.{func}: unsupported time unit {unit!r} in {dt}")
        return dt
    if dt.kind not in "iufb":
        raise TypeError(f"ember.frame.{func}: unsupported dtype {dt}")
    if dt.kind == "f" and dt.itemsize < 4:
        raise TypeError(f"ember.frame.{func}: unsupported dtype {dt}")
    return dt


def storage(dtype) -> np.dtype:
    """The NumPy dtype of a column's device data (int64 for times, codes dtype for category)."""
    if is_time(dtype):
        return np.dtype("int64")
    return dtype


def pandas_dtype(dtype, has_nulls: bool):
    """The dtype ``to_pandas`` produces: pandas' nullable dtype for ints/bools holding nulls."""
    if isinstance(dtype, np.dtype) and has_nulls:
        if dtype.kind in "iu":
            return pd.api.types.pandas_dtype(dtype.name.capitalize().replace("Uint", "UInt"))
        if dtype.kind == "b":
            return pd.BooleanDtype()
    return dtype
