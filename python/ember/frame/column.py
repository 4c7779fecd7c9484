"""Column: one typed column of a frame, its values as ember arrays on one device plus validity.

Layout (Arrow's, so ``from_arrow``/``to_arrow`` are buffer copies):
- numbers/bools: ``data`` (the values); datetime64/timedelta64: ``data`` int64 counts of the unit;
- strings: ``offsets`` (int64, n + 1) and ``chars`` (uint8 UTF-8 bytes), as Arrow's large_string;
- category: ``data`` (int32 codes) and ``categories`` (a Column of the distinct values).
Validity is ``mask`` (bool, True = valid) or None when every value is valid. It is kept unpacked
(one byte a row) on the device because every kernel reads it elementwise; it is packed to and
from Arrow's little-endian bitmap on the device (``ember.packbits``/``unpackbits``) at the Arrow
boundary, so only the packed bits cross the bus.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

import ember as _em

from . import dtypes as _dt


def _to_dev(a, device):
    return _em.asarray(np.ascontiguousarray(a), device=device)


def _host(a):
    """Explicit device-to-host copy (used only at the Arrow/pandas/repr boundaries)."""
    return _em.asnumpy(a)


def _unpack_bits(buf, offset, n, device):
    """Arrow bitmap (host bytes) -> bool ember array on ``device``; unpacking happens there."""
    nbytes = (offset + n + 7) // 8
    packed = np.frombuffer(buf, dtype=np.uint8, count=nbytes)
    bits = _em.unpackbits(_to_dev(packed, device), bitorder="little")
    return bits[offset : offset + n].astype(_em.bool)


def _pack_bits(mask):
    """bool ember array -> Arrow bitmap; packed on the device, then the bytes go to the host."""
    return pa.py_buffer(_host(_em.packbits(mask, bitorder="little")).tobytes())


class Column:
    """A frame column (see the module docstring for the layout)."""

    __slots__ = ("dtype", "data", "mask", "offsets", "chars", "categories", "child")

    def __init__(
        self, dtype, data=None, mask=None, offsets=None, chars=None, categories=None, child=None
    ):
        self.dtype = dtype
        self.data = data
        self.mask = mask
        self.offsets = offsets
        self.chars = chars
        self.categories = categories
        self.child = child  # list columns: the values the offsets index into

    # ---- basic facts -------------------------------------------------------------------------
    @property
    def kind(self) -> str:
        if _dt.is_list(self.dtype):
            return "list"
        if _dt.is_string(self.dtype):
            return "str"
        if _dt.is_categorical(self.dtype):
            return "cat"
        if _dt.is_time(self.dtype):
            return "time"
        return "num"

    def __len__(self) -> int:
        if self.offsets is not None:
            return self.offsets.shape[0] - 1
        return self.data.shape[0]

    @property
    def device(self) -> str:
        a = self.offsets if self.offsets is not None else self.data
        return str(a.device)

    def to(self, device):
        if device == self.device:
            return self

        def mv(a):
            return None if a is None else a.to(device)

        cats = None if self.categories is None else self.categories.to(device)
        child = None if self.child is None else self.child.to(device)
        return Column(
            self.dtype, mv(self.data), mv(self.mask), mv(self.offsets), mv(self.chars), cats, child
        )

    def valid(self):
        """bool array, True where the value is present (not null and not NaN)."""
        n = len(self)
        v = self.mask if self.mask is not None else _em.ones(n, dtype=_em.bool, device=self.device)
        if self.kind == "num" and _dt.is_float(self.dtype):
            v = v & ~_em.isnan(self.data)
        return v

    def isnull(self):
        return ~self.valid()

    def has_nulls(self) -> bool:
        """One scalar device-to-host read (is any value missing?)."""
        if self.mask is None and not (self.kind == "num" and _dt.is_float(self.dtype)):
            return False
        return bool(_em.any(self.isnull())) if len(self) else False

    def null_count(self) -> int:
        return int(_em.sum(self.isnull())) if len(self) else 0

    # ---- construction ------------------------------------------------------------------------
    @staticmethod
    def full_null(dtype, n, device):
        dtype = _dt.STRING if dtype is None else dtype
        mask = _em.zeros(n, dtype=_em.bool, device=device)
        if _dt.is_string(dtype):
            return Column(
                dtype,
                offsets=_em.zeros(n + 1, dtype=_em.int64, device=device),
                chars=_em.zeros(0, dtype=_em.uint8, device=device),
                mask=mask,
            )
        if _dt.is_categorical(dtype):
            cats = from_pandas_index(dtype.categories, device)
            return Column(
                dtype, _em.zeros(n, dtype=_em.int32, device=device), mask, None, None, cats
            )
        st = _dt.storage(dtype)
        return Column(dtype, _em.zeros(n, dtype=st, device=device), mask)

    @staticmethod
    def from_scalar(value, n, device, dtype=None):
        if dtype is None:
            if isinstance(value, str):
                dtype = _dt.STRING
            else:
                dtype = _dt.normalize(np.asarray(value).dtype)
        if _dt.is_string(dtype):
            b = np.frombuffer(str(value).encode(), dtype=np.uint8)
            chars = _to_dev(np.tile(b, n), device)
            offsets = _em.arange(n + 1, dtype=_em.int64, device=device) * len(b)
            return Column(dtype, offsets=offsets, chars=chars)
        if _dt.is_time(dtype):
            v = np.asarray(value).astype(dtype).view(np.int64)
            return Column(dtype, _em.full(n, int(v), dtype=_em.int64, device=device))
        return Column(dtype, _em.full(n, value, dtype=dtype, device=device))

    # ---- gathers -----------------------------------------------------------------------------
    def take(self, idx, nullable=False):
        """Rows at ``idx`` (int64 ember array); with ``nullable``, -1 gives a null row."""
        m = idx.shape[0]
        dev = self.device
        if nullable:
            miss = idx < 0
            if len(self) == 0:
                return Column.full_null(self.dtype, m, dev)
            idx = _em.where(miss, 0, idx)
        mask = None if self.mask is None else _em.take(self.mask, idx)
        if nullable:
            mask = ~miss if mask is None else mask & ~miss
        if self.kind == "str":
            lens = _em.take(self.offsets[1:] - self.offsets[:-1], idx)
            if nullable:
                lens = _em.where(miss, 0, lens)
            offsets, chars = _gather_bytes(self.offsets, self.chars, idx, lens, dev)
            return Column(self.dtype, offsets=offsets, chars=chars, mask=mask)
        if self.kind == "list":
            from .lists import take_lists

            return take_lists(self, idx, miss if nullable else None, mask)
        data = _em.take(self.data, idx)
        return Column(self.dtype, data, mask, categories=self.categories)

    def filter(self, keep):
        return self.take(_em.nonzero(keep)[0])

    def slice(self, start, stop):
        n = len(self)
        start, stop, _ = slice(start, stop).indices(n)
        stop = max(stop, start)
        if self.kind in ("str", "list"):
            return self.take(_em.arange(start, stop, dtype=_em.int64, device=self.device))
        mask = None if self.mask is None else self.mask[start:stop]
        return Column(self.dtype, self.data[start:stop], mask, categories=self.categories)

    def with_mask(self, mask):
        return Column(
            self.dtype, self.data, mask, self.offsets, self.chars, self.categories, self.child
        )

    # ---- Arrow -------------------------------------------------------------------------------
    def to_arrow(self) -> pa.Array:
        n = len(self)
        validity = None if self.mask is None else _pack_bits(self.mask)
        k = self.kind
        if k == "list":
            offs = pa.py_buffer(_host(self.offsets).astype(np.int64).tobytes())
            child = self.child.to_arrow()
            t = pa.large_list(child.type)
            return pa.Array.from_buffers(t, n, [validity, offs], children=[child])
        if k == "str":
            offs = pa.py_buffer(_host(self.offsets).astype(np.int64).tobytes())
            chars = pa.py_buffer(_host(self.chars).tobytes())
            return pa.Array.from_buffers(pa.large_string(), n, [validity, offs, chars])
        if k == "cat":
            idx = pa.Array.from_buffers(
                pa.int32(), n, [validity, pa.py_buffer(_host(self.data).tobytes())]
            )
            return pa.DictionaryArray.from_arrays(
                idx, self.categories.to_arrow(), ordered=bool(self.dtype.ordered)
            )
        if k == "time":
            unit = _dt.time_unit(self.dtype)
            t = pa.timestamp(unit) if _dt.is_datetime(self.dtype) else pa.duration(unit)
            return pa.Array.from_buffers(t, n, [validity, pa.py_buffer(_host(self.data).tobytes())])
        if _dt.is_bool(self.dtype):
            return pa.Array.from_buffers(pa.bool_(), n, [validity, _pack_bits(self.data)])
        t = pa.from_numpy_dtype(self.dtype)
        return pa.Array.from_buffers(t, n, [validity, pa.py_buffer(_host(self.data).tobytes())])

    def to_pandas(self, nullable=False):
        """A pandas array (ints/bools holding nulls become pandas' nullable arrays: pd.NA)."""
        k = self.kind
        if k == "list":
            out = np.empty(len(self), dtype=object)
            out[:] = self.to_arrow().to_pylist()  # Python lists, as pandas' split makes
            if self.mask is not None:  # a missing list reads NaN, as pandas' object columns
                out[_host(~self.mask)] = np.nan
            return out
        if k == "str":
            return pd.array(self.to_arrow().to_numpy(zero_copy_only=False), dtype=_dt.STRING)
        if k == "cat":
            codes = _host(_em.where(self.valid(), self.data, -1))
            return pd.Categorical.from_codes(codes, dtype=self.dtype)
        data = _host(self.data)
        valid = None if self.mask is None else _host(self.mask)
        if k == "time":
            data = data.view(self.dtype).copy()
            if valid is not None:
                data[~valid] = np.datetime64("NaT") if _dt.is_datetime(self.dtype) else 0
                if _dt.is_timedelta(self.dtype):
                    data[~valid] = np.timedelta64("NaT")
            return data
        if valid is None or (valid.all() and not nullable):
            if nullable and self.dtype.kind in "iub":
                return pd.array(data, dtype=_dt.pandas_dtype(self.dtype, True))
            return data
        if self.dtype.kind == "f":
            data = data.copy()
            data[~valid] = np.nan
            return data
        if self.dtype.kind == "b":
            return pd.arrays.BooleanArray(data, ~valid)
        return pd.arrays.IntegerArray(data, ~valid)

    def to_numpy_host(self):
        """Host NumPy values (object for strings/nullable, as pandas' to_numpy)."""
        return np.asarray(pd.Series(self.to_pandas()).to_numpy())


def _gather_bytes(offsets, chars, idx, lens, device):
    """Byte gather for a string take: output row r copies source row idx[r]."""
    m = idx.shape[0]
    zero = _em.zeros(1, dtype=_em.int64, device=device)
    new_off = _em.concatenate([zero, _em.cumsum(lens.astype(_em.int64))])
    total = int(new_off[-1]) if m else 0  # host read: the output byte count sizes the allocation
    if total == 0:
        return new_off, _em.zeros(0, dtype=_em.uint8, device=device)
    rows = _em.repeat(_em.arange(m, dtype=_em.int64, device=device), lens)
    starts = _em.take(offsets, idx)
    pos = _em.arange(total, dtype=_em.int64, device=device) - _em.take(new_off, rows)
    pos = pos + _em.take(starts, rows)
    return new_off, _em.take(chars, pos)


# ---- conversions in --------------------------------------------------------------------------
def from_arrow(arr, device) -> Column:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    t = arr.type
    n = len(arr)
    off = arr.offset
    bufs = arr.buffers()
    mask = None
    if arr.null_count and bufs[0] is not None:
        mask = _unpack_bits(bufs[0], off, n, device)
    if pa.types.is_null(t):
        return Column(
            np.dtype("float64"),
            _em.full(n, np.nan, dtype=_em.float64, device=device),
            _em.zeros(n, dtype=_em.bool, device=device),
        )
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        if not pa.types.is_large_list(t):
            arr = arr.cast(pa.large_list(t.value_type))
            off, bufs = arr.offset, arr.buffers()
        offs = np.frombuffer(bufs[1], dtype=np.int64, count=off + n + 1)[off:]
        base, end = int(offs[0]), int(offs[-1])
        child = from_arrow(arr.values.slice(base, end - base), device)
        return Column(
            _dt.ListDtype(child.dtype), mask=mask, offsets=_to_dev(offs - base, device), child=child
        )
    if pa.types.is_dictionary(t):
        cats = from_arrow(arr.dictionary, device)
        codes = arr.indices.to_numpy(zero_copy_only=False)
        codes = np.nan_to_num(codes, nan=0).astype(np.int32)
        dtype = pd.CategoricalDtype(arr.dictionary.to_pandas(), ordered=t.ordered)
        if _dt.is_string(cats.dtype):
            dtype = pd.CategoricalDtype(
                pd.Index(arr.dictionary.to_pylist(), dtype=_dt.STRING), ordered=t.ordered
            )
        return Column(dtype, _to_dev(codes, device), mask, categories=cats)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        if not pa.types.is_large_string(t):
            arr = arr.cast(pa.large_string())
            off, bufs = arr.offset, arr.buffers()
        offs = np.frombuffer(bufs[1], dtype=np.int64, count=off + n + 1)[off:]
        base, end = int(offs[0]), int(offs[-1])
        chars = (
            np.frombuffer(bufs[2], dtype=np.uint8, count=end)[base:]
            if bufs[2] is not None
            else np.zeros(0, np.uint8)
        )
        return Column(
            _dt.STRING,
            offsets=_to_dev(offs - base, device),
            chars=_to_dev(chars, device),
            mask=mask,
        )
    if pa.types.is_date(t):
        return from_arrow(arr.cast(pa.timestamp("s")), device)
    if pa.types.is_timestamp(t) or pa.types.is_duration(t):
        if getattr(t, "tz", None) is not None:
            raise NotImplementedError(f"ember.frame.from_arrow: timezone-aware timestamps ({t})")
        kind = "datetime64" if pa.types.is_timestamp(t) else "timedelta64"
        data = np.frombuffer(bufs[1], dtype=np.int64, count=off + n)[off:]
        return Column(np.dtype(f"{kind}[{t.unit}]"), _to_dev(data, device), mask)
    if pa.types.is_boolean(t):
        return Column(np.dtype(bool), _unpack_bits(bufs[1], off, n, device), mask)
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        npt = np.dtype(t.to_pandas_dtype())
        if npt == np.float16:
            raise TypeError(f"ember.frame.from_arrow: unsupported Arrow type {t}")
        data = np.frombuffer(bufs[1], dtype=npt, count=off + n)[off:]
        return Column(npt, _to_dev(data, device), mask)
    if pa.types.is_decimal(t):
        return from_arrow(arr.cast(pa.float64()), device)
    raise TypeError(f"ember.frame.from_arrow: unsupported Arrow type {t}")


def from_pandas_index(index, device) -> Column:
    return from_pandas_series(pd.Series(index, copy=False), device)


def _interval_labels(s: pd.Series, device) -> Column:
    """Intervals have no device layout: they are held as their text (``"(0.5, 1.0]"``), which is
    what category columns of intervals (``cut``'s result) decode to, as pandas' ``astype(str)``."""
    vals = [None if pd.isna(v) else str(v) for v in s.tolist()]
    return from_arrow(pa.array(vals, type=pa.large_string()), device)


def from_pandas_series(s: pd.Series, device) -> Column:
    dt = s.dtype
    if isinstance(dt, pd.IntervalDtype):
        return _interval_labels(s, device)
    if isinstance(dt, np.dtype) and dt.kind in "iufb":
        if dt == np.float16:
            raise TypeError("ember.frame: unsupported dtype float16")
        return Column(dt, _to_dev(s.to_numpy(), device))
    if isinstance(dt, np.dtype) and dt.kind in "mM":
        vals = s.to_numpy()
        unit = _dt.time_unit(dt)
        nat = np.isnat(vals)
        mask = _to_dev(~nat, device) if nat.any() else None
        return Column(np.dtype(dt), _to_dev(vals.view(np.int64), device), mask)
    if isinstance(dt, pd.CategoricalDtype):
        codes = s.cat.codes.to_numpy()
        cats = from_pandas_index(dt.categories, device)
        mask = _to_dev(codes >= 0, device) if (codes < 0).any() else None
        dtype = dt
        if _dt.is_string(cats.dtype) and not isinstance(
            dt.categories.dtype, (pd.StringDtype, pd.IntervalDtype)
        ):
            dtype = pd.CategoricalDtype(dt.categories.astype(_dt.STRING), ordered=dt.ordered)
        return Column(
            dtype, _to_dev(np.maximum(codes, 0).astype(np.int32), device), mask, None, None, cats
        )
    if isinstance(dt, np.dtype) and dt.kind == "O":
        inferred = pd.api.types.infer_dtype(s, skipna=True)
        if inferred in ("string", "empty"):
            arr = pa.array(s, type=pa.large_string(), from_pandas=True)
            return from_arrow(arr, device)
        if inferred in ("integer", "floating", "mixed-integer-float", "boolean"):
            return from_arrow(pa.array(s, from_pandas=True), device)
        if inferred in ("datetime", "datetime64", "date"):
            return from_pandas_series(pd.Series(pd.to_datetime(s)), device)
        if inferred in ("timedelta", "timedelta64"):
            return from_pandas_series(pd.Series(pd.to_timedelta(s)), device)
        if inferred == "mixed" and _is_listlike_values(s):
            return from_arrow(pa.array(s.tolist(), from_pandas=True), device)  # list column
        raise TypeError(f"ember.frame: cannot hold object values of inferred type {inferred!r}")
    unit = None
    del unit
    return from_arrow(pa.array(s, from_pandas=True), device)


def from_values(values, device, dtype=None) -> Column:
    """A column from a list, NumPy array, ember array, pandas or Arrow object."""
    if isinstance(values, Column):
        col = values.to(device)
    elif hasattr(values, "_col") and not isinstance(values, type):  # ember.frame Series/Index
        col = values._col.to(device)
    elif isinstance(values, _em.ndarray):
        if values.ndim != 1:
            raise ValueError(f"ember.frame: a column needs 1-D data, got shape {values.shape}")
        col = Column(np.dtype(values.dtype), values.to(device))
    elif isinstance(values, (pa.Array, pa.ChunkedArray)):
        col = from_arrow(values, device)
    elif isinstance(values, (pd.Series, pd.Index)):
        col = from_pandas_series(pd.Series(values, copy=False), device)
    elif isinstance(values, (pd.api.extensions.ExtensionArray, pd.Categorical)):
        col = from_pandas_series(pd.Series(values, copy=False), device)
    else:
        arr = values if isinstance(values, np.ndarray) else None
        if arr is None:
            values = list(values) if not isinstance(values, (list, tuple)) else values
            if any(isinstance(v, _em.ndarray) and v.ndim == 0 for v in values):
                # device scalars (e.g. Dask's per-partition statistics): stacked where they
                # live, no host round trip; Python numbers beside them join on that device
                dev = next(v.device for v in values if isinstance(v, _em.ndarray))
                stacked = _em.stack([_em.asarray(v, device=dev) for v in values])
                col = from_values(stacked, device)
                return col if dtype is None else astype(col, dtype)
            if not values and dtype is not None:
                return Column.full_null(_dt.normalize(dtype, func="Series"), 0, device)
            if _is_listlike_values(values):
                col = from_arrow(pa.array(list(values), from_pandas=True), device)
                return col if dtype is None else astype(col, dtype)
            arr = np.asarray(values) if values else np.asarray([], dtype=np.float64)
            if arr.dtype == object or arr.dtype.kind in "US":
                col = from_pandas_series(pd.Series(list(values), dtype=object), device)
                return col if dtype is None else astype(col, dtype)
        if arr.ndim != 1:
            raise ValueError(f"ember.frame: a column needs 1-D data, got shape {arr.shape}")
        col = from_pandas_series(pd.Series(arr, copy=False), device)
    if dtype is not None:
        col = astype(col, dtype)
    return col


def _is_listlike_values(values):
    """Do the (non-missing) values hold lists (a list column), as ``[[1, 2], [3]]``?"""
    for v in values:
        if v is None or (isinstance(v, float) and v != v):
            continue
        return isinstance(v, (list, tuple, np.ndarray))
    return False


def astype(col, dtype, func="astype"):
    from .cast import astype as _astype

    return _astype(col, dtype, func)
