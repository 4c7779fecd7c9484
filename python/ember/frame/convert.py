"""Top-level conversions of pandas on the device: ``to_numeric`` (strings parsed by the device
kernels of ``parse.py``), ``to_timedelta`` (numbers scaled to a time unit), ``factorize`` and
``unique`` (the group codes of ``keys.py``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import ember as _em

from . import dtypes as _dt
from .column import Column, from_values


def _wrap_in(arg, func):
    """(Column, how to wrap a result column like ``arg``): Series -> Series, Index -> Index,
    arrays/lists -> an ember array (pandas returns NumPy's), on the input's device."""
    from .frame_base import default_device
    from .index import Index
    from .series import Series

    if isinstance(arg, Series):
        return arg._col, lambda c: Series._from_column(c, arg.index, arg.name)
    if isinstance(arg, Index):
        return arg._col, lambda c: Index(c, name=arg.name)
    if isinstance(arg, (pd.Series, pd.Index)):
        dev = default_device()
        s = Series(arg, device=dev) if isinstance(arg, pd.Series) else None
        if s is not None:
            return s._col, lambda c: Series._from_column(c, s.index, s.name)
        return from_values(arg, dev), lambda c: Index(c, name=arg.name)
    if np.ndim(arg) != 1:
        raise TypeError(f"ember.frame.{func}: arg must be a list, tuple, 1-d array, or Series")
    dev = default_device(arg)
    col = from_values(arg, dev)

    def array(c):
        if c.kind == "num" and c.mask is not None and c.dtype.kind == "f":
            return _em.where(c.mask, c.data, np.nan)
        return c.data if c.kind in ("num", "time") else Index(c)

    return col, array


def _parse_strings(col, errors):
    """Strings to int64 when every present value is an integer literal and none is missing (as
    pandas), else float64; ``errors="coerce"`` turns unparsable values into NaN."""
    from .parse import parse_float, parse_int

    valid = col.valid()
    ints = parse_int(col, np.dtype("int64"), "to_numeric", errors="coerce")
    if len(col) == 0 or bool(_em.all(ints.mask)):  # host read: all integers, none missing?
        return Column(np.dtype("int64"), ints.data)
    flt = parse_float(col, np.dtype("float64"), "to_numeric", errors="coerce")
    bad = valid & ~flt.mask
    # pandas reads "" as missing
    from .strkernels import lens, strip

    bad = bad & (lens(strip(col)) > 0)
    if errors == "raise" and bool(_em.any(bad)):  # host read: an unparsable value?
        pos = int(_em.nonzero(bad)[0][0])
        val = col.take(_em.asarray([pos], device=col.device)).to_pandas()[0]
        raise ValueError(f"Unable to parse string {val!r} at position {pos}")
    return Column(np.dtype("float64"), _em.where(flt.mask, flt.data, np.nan))


def _downcast(col, downcast):
    """pandas' downcast: the smallest integer (or float) type, no wider than the column's, that
    holds every present value (floats: within pandas' 5e-4 tolerance)."""
    if col.kind != "num" or col.dtype.kind == "b" or len(col) == 0:
        return col
    valid = col.valid()
    data = col.data
    if downcast == "float":
        cands = ["float32", "float64"]
    elif downcast == "unsigned":
        if bool(_em.any(valid & (data < 0))):  # host read: negative values stay signed
            return col
        cands = ["uint8", "uint16", "uint32", "uint64"]
    else:
        cands = ["int8", "int16", "int32", "int64"]
    for name in cands:
        t = np.dtype(name)
        if t.itemsize > col.dtype.itemsize or t == col.dtype:
            break
        if t.kind != "f" and col.dtype.kind == "f" and not bool(_em.all(valid)):
            break  # host read above: NaN cannot become an integer
        new = data.astype(t)
        if t.kind == "f":
            ok = _em.abs(new.astype(_em.float64) - data.astype(_em.float64)) <= 5e-4
        elif col.dtype.kind == "f":
            ok = new.astype(_em.float64) == data
        else:
            ok = (new.astype(_em.int64) == data.astype(_em.int64)) & ((data >= 0) | (t.kind == "i"))
        if bool(_em.all(ok | ~valid)):  # host read: does this type hold every value?
            return Column(t, new, col.mask)
    return col


def to_numeric(arg, errors="raise", downcast=None, dtype_backend=None):
    """``pandas.to_numeric``: strings are parsed on the device (integer literals give int64,
    other numbers float64); datetimes/timedeltas give their int64 counts; numbers pass through.
    ``downcast`` picks the smallest integer/float dtype that holds the values."""
    if errors not in ("raise", "coerce"):
        raise ValueError("invalid error value specified")
    if downcast not in (None, "integer", "signed", "unsigned", "float"):
        raise ValueError("invalid downcasting method provided")
    if np.isscalar(arg) or arg is None:
        return pd.to_numeric(arg, errors=errors, downcast=downcast)  # a host scalar
    col, wrap = _wrap_in(arg, "to_numeric")
    if col.kind == "cat":
        from .cast import astype

        col = astype(col, col.categories.dtype)
    if col.kind == "str":
        col = _parse_strings(col, errors)
    elif col.kind == "time":
        col = Column(np.dtype("int64"), col.data, col.mask)
    elif col.kind != "num":
        raise TypeError(f"ember.frame.to_numeric: Invalid object type for dtype {col.dtype}")
    if downcast is not None:
        col = _downcast(col, downcast)
    return wrap(col)


def _unit_ns(unit):
    try:
        td = pd.Timedelta(1, unit=unit)
    except (ValueError, TypeError):
        raise ValueError(f"invalid unit abbreviation: {unit}") from None
    return int(td.to_timedelta64().astype("timedelta64[ns]").astype(np.int64))


def to_timedelta(arg, unit=None, errors="raise"):
    """``pandas.to_timedelta``: numbers (counts of ``unit``) are scaled to pandas' result unit on
    the device; text columns are parsed on the device (``tdparse.py``); timedeltas pass
    through. Host data that is text is parsed by pandas (as ``to_datetime`` does), then copied
    to the device."""
    from .index import Index
    from .series import Series

    if errors not in ("raise", "coerce"):
        raise ValueError("errors must be one of 'raise', or 'coerce'.")
    if np.isscalar(arg) or arg is None:
        return pd.to_timedelta(arg, unit=unit, errors=errors)  # a host scalar
    if not isinstance(arg, (Series, Index, _em.ndarray)):
        host = list(arg) if not isinstance(arg, (np.ndarray, pd.Series, pd.Index)) else arg
        probe = pd.Series(host, dtype=object) if not len(host) else pd.Series(host)
        if probe.dtype.kind not in "iufbm":
            out = pd.to_timedelta(arg, unit=unit, errors=errors)  # host text: pandas parses
            if isinstance(out, pd.Series):
                return Series(out)
            return Index(np.asarray(out), name=getattr(out, "name", None))
    col, wrap = _wrap_in(arg, "to_timedelta")
    if isinstance(arg, (list, tuple, np.ndarray)):
        wrap_idx = Index

        def wrap(c):
            return wrap_idx(c)

    if col.kind == "time":
        if _dt.is_datetime(col.dtype):
            raise TypeError(f"dtype {col.dtype} cannot be converted to timedelta64[ns]")
        return wrap(col)
    if col.kind == "str":
        from .tdparse import parse_timedelta

        if unit is not None:
            raise ValueError("unit must not be specified if the input contains a str")
        return wrap(parse_timedelta(col, errors))
    if col.kind != "num":
        raise TypeError(f"dtype {col.dtype} cannot be converted to timedelta64[ns]")
    # the result unit is the installed pandas' own choice (it differs between pandas
    # versions), asked of a one-element host probe of the column's dtype: metadata only
    scale = _unit_ns(unit or "ns")
    # (pandas 3.1 picks a finer unit for floats with a fraction: one host bool says which)
    pv = 1
    if col.dtype.kind == "f":
        x = col.data[col.valid()]
        pv = 0.5 if x.shape[0] and bool(_em.any(x != _em.floor(x))) else 1
    probe = pd.to_timedelta(pd.Series(np.full(1, pv, dtype=np.dtype(col.dtype))), unit=unit)
    out_dt = np.dtype(probe.dtype)
    out_ns = _dt.UNIT_NS[_dt.time_unit(out_dt)]
    valid = col.valid()
    if col.dtype.kind == "f":
        x = _em.where(valid, col.data, 0.0) * (scale / out_ns)
        data = _em.round(x).astype(_em.int64)
    else:
        data = col.data.astype(_em.int64) * (scale // out_ns)
    mask = None if col.mask is None and col.dtype.kind != "f" else valid
    if mask is not None and bool(_em.all(mask)):  # host read: drop an all-valid mask
        mask = None
    return wrap(Column(np.dtype(out_dt), data, mask))


def factorize_column(col, sort=False, use_na_sentinel=True):
    """(int64 codes, rows of the uniques): codes in order of first appearance (or of the sorted
    values), -1 for missing unless ``use_na_sentinel`` is False (then missing is a value)."""
    from .keys import factorize

    dev = col.device
    codes, first = factorize(col)
    k = first.shape[0]
    if not use_na_sentinel:
        miss = _em.nonzero(codes < 0)[0]
        if miss.shape[0]:
            codes = _em.where(codes < 0, k, codes)
            first = _em.concatenate([first, miss[:1]])
            k += 1
    if not sort and k:
        order = _em.argsort(first, stable=True)
        rank = _em.zeros(k, dtype=_em.int64, device=dev)
        rank[order] = _em.arange(k, dtype=_em.int64, device=dev)
        codes = _em.where(codes >= 0, _em.take(rank, _em.clip(codes, 0, k - 1)), -1)
        first = _em.take(first, order)
    return codes, first


def factorize(values, sort=False, use_na_sentinel=True, size_hint=None):
    """``pandas.factorize``: (codes, uniques) with codes an ember int64 array on the values'
    device, uniques an Index (an ember array for array input), computed with the group codes."""
    from .index import Index
    from .series import Series

    del size_hint
    col, _ = _wrap_in(values, "factorize")
    codes, first = factorize_column(col, sort, use_na_sentinel)
    uniq = col.take(first)
    if isinstance(values, (Series, Index, pd.Series, pd.Index)) or uniq.kind not in ("num",):
        name = getattr(values, "name", None) if isinstance(values, Index) else None
        return codes, Index(uniq, name=name)
    return codes, (
        _em.where(uniq.valid(), uniq.data, np.nan) if uniq.mask is not None else uniq.data
    )


def unique(values):
    """``pandas.unique``: distinct values in order of appearance. A Series gives a Series and an
    Index an Index (as ``cudf.unique``); arrays and lists give an ember array (an Index for
    text)."""
    from .algos import unique_rows
    from .index import Index
    from .series import Series

    if isinstance(values, Series):
        return values.unique()
    col, wrap = _wrap_in(values, "unique")
    out = col.take(unique_rows(col))
    if isinstance(values, Index):
        return Index(out, name=values.name)
    return wrap(out)
