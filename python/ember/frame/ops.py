"""Elementwise column operations with null propagation, and column reductions."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

import ember as _em

from . import dtypes as _dt
from .column import Column

_ARITH = {
    "add": _em.add,
    "sub": _em.subtract,
    "mul": _em.multiply,
    "truediv": _em.true_divide,
    "floordiv": _em.floor_divide,
    "mod": _em.remainder,
    "pow": _em.power,
}
_CMP = {
    "eq": _em.equal,
    "ne": _em.not_equal,
    "lt": _em.less,
    "le": _em.less_equal,
    "gt": _em.greater,
    "ge": _em.greater_equal,
}
_LOGIC = {"and": _em.logical_and, "or": _em.logical_or, "xor": _em.logical_xor}
_SWAP = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}


def _is_na_scalar(x):
    return x is None or x is pd.NA or x is pd.NaT


def _and_masks(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def _time_scalar(value, dtype, func):
    """A datetime/timedelta scalar as an int64 count of ``dtype``'s unit."""
    try:
        # to_datetime64/to_timedelta64 keep the scalar's own unit; cast it to the column's
        if _dt.is_datetime(dtype):
            v = pd.Timestamp(value).to_datetime64()
        else:
            v = pd.Timedelta(value).to_timedelta64()
        return int(v.astype(dtype).view(np.int64))
    except (ValueError, TypeError):
        raise TypeError(
            f"ember.frame.{func}: cannot compare/combine {dtype} with {value!r}"
        ) from None


def binary(a: Column, b, op: str, reflected=False) -> Column:
    """``a <op> b`` (``b <op> a`` when reflected); b is a Column or a scalar."""
    n = len(a)
    dev = a.device
    if _is_na_scalar(b):
        if op in _CMP:
            return Column.full_null(np.dtype(bool), n, dev)
        return Column.full_null(a.dtype if a.kind != "str" else _dt.STRING, n, dev)
    if isinstance(b, Column) and len(b) != n:
        raise ValueError(f"ember.frame: operands have lengths {n} and {len(b)}")
    if a.kind == "cat" or (isinstance(b, Column) and b.kind == "cat"):
        return _cat_binary(a, b, op, reflected)
    if a.kind == "str" or (isinstance(b, Column) and b.kind == "str"):
        return _str_binary(a, b, op, reflected)
    if a.kind == "time" or (isinstance(b, Column) and b.kind == "time"):
        return _time_binary(a, b, op, reflected)
    if isinstance(b, str):
        if op in ("eq", "ne"):
            return Column(np.dtype(bool), _em.full(n, op == "ne", dtype=_em.bool, device=dev))
        raise TypeError(f"ember.frame: '{op}' not supported between {a.dtype} and str")
    x = a.data
    y = b.data if isinstance(b, Column) else b
    mask = _and_masks(a.mask, b.mask if isinstance(b, Column) else None)
    if reflected:
        x, y = y, x
    if op in _ARITH:
        if op in ("truediv",) and _dt.is_bool(a.dtype):
            x = x.astype(_em.float64) if isinstance(x, _em.ndarray) else x
        with _em.errstate(all="ignore"):
            out = _ARITH[op](x, y)
        return Column(_dt.normalize(np.dtype(out.dtype)), out, mask)
    if op in _CMP:
        return Column(np.dtype(bool), _CMP[op](x, y), mask)
    if op in _LOGIC:
        if not isinstance(x, _em.ndarray):
            x = _em.full(n, bool(x), dtype=_em.bool, device=dev)
        if not isinstance(y, _em.ndarray):
            y = _em.full(n, bool(y), dtype=_em.bool, device=dev)
        if _dt.is_bool(a.dtype):
            return Column(np.dtype(bool), _LOGIC[op](x, y), mask)
        fn = {"and": _em.bitwise_and, "or": _em.bitwise_or, "xor": _em.bitwise_xor}[op]
        out = fn(x, y)
        return Column(np.dtype(out.dtype), out, mask)
    raise ValueError(f"ember.frame: unknown operator {op!r}")


def _str_binary(a, b, op, reflected):
    from .keys import joint_codes

    n = len(a)
    if op == "add":
        from .strings import cat_columns

        other = b if isinstance(b, Column) else Column.from_scalar(str(b), n, a.device)
        if not isinstance(b, (Column, str)):
            raise TypeError(
                f"ember.frame: can only concatenate str (not {type(b).__name__}) to str"
            )
        return cat_columns([other, a] if reflected else [a, other])
    if op not in _CMP:
        raise TypeError(f"ember.frame: operation '{op}' not supported for dtype str")
    if isinstance(b, Column) and (a.kind != "str" or b.kind != "str"):
        if op in ("eq", "ne"):
            return Column(np.dtype(bool), _em.full(n, op == "ne", dtype=_em.bool, device=a.device))
        raise TypeError(f"ember.frame: '{op}' not supported between str and {b.dtype}")
    if not isinstance(b, Column):
        if not isinstance(b, str):
            if op in ("eq", "ne"):
                return Column(
                    np.dtype(bool), _em.full(n, op == "ne", dtype=_em.bool, device=a.device)
                )
            raise TypeError(f"ember.frame: '{op}' not supported between str and {type(b).__name__}")
        b1 = Column.from_scalar(b, 1, a.device)
        lc, rc, _ = joint_codes([a], [b1])
        x, y = lc, rc[0]
        mask = a.mask
    else:
        lc, rc, _ = joint_codes([a], [b])
        x, y = lc, rc
        mask = _and_masks(a.mask, b.mask)
    if reflected:
        op = _SWAP[op]
    out = _CMP[op](x, y)
    # pandas' "str" dtype: comparisons with a missing value are False ("ne": True), not NA
    if mask is not None:
        out = _em.where(mask, out, op == "ne")
    return Column(np.dtype(bool), out)


def _cat_binary(a, b, op, reflected):
    from .cast import astype

    if op not in ("eq", "ne") and not (a.kind == "cat" and a.dtype.ordered):
        raise TypeError(
            f"ember.frame: Unordered Categoricals can only compare equality or not (got {op!r})"
        )
    if a.kind == "cat" and not isinstance(b, Column) and op not in ("eq", "ne"):
        from .keys import lookup

        pos = lookup(a.categories, Column.from_scalar(b, 1, a.device))
        p = int(pos[0])  # host read: the scalar's category position
        if p < 0:
            raise TypeError(f"ember.frame: Invalid comparison: {b!r} is not a category")
        out = _CMP[_SWAP[op] if reflected else op](a.data, p)
        return Column(np.dtype(bool), _em.where(a.valid(), out, False))
    a2 = astype(a, a.categories.dtype) if a.kind == "cat" else a
    b2 = astype(b, b.categories.dtype) if isinstance(b, Column) and b.kind == "cat" else b
    res = binary(a2, b2, op, reflected)
    return Column(np.dtype(bool), _em.where(res.valid(), res.data, op == "ne"))


def _time_operand(b, like: Column, n):
    """A scalar operand of a time column as a Column in the finer of the column's unit and the
    scalar's own (pandas keeps the finer unit, so no precision of either is lost)."""
    import datetime as _pydt

    unit = _dt.time_unit(like.dtype)
    if isinstance(b, (pd.Timedelta, np.timedelta64, _pydt.timedelta)):
        kind = "timedelta64"
    elif isinstance(b, (pd.Timestamp, np.datetime64, _pydt.datetime, _pydt.date)):
        kind = "datetime64"
    elif isinstance(b, str):
        kind = "datetime64" if _dt.is_datetime(like.dtype) else "timedelta64"
    else:
        raise TypeError(f"ember.frame: cannot combine {like.dtype} with {type(b).__name__} {b!r}")
    try:
        own = pd.Timestamp(b) if kind == "datetime64" else pd.Timedelta(b)
        own_unit = own.unit
    except (ValueError, TypeError):
        raise TypeError(f"ember.frame: cannot combine {like.dtype} with {b!r}") from None
    if own_unit in _dt.UNIT_NS and _dt.UNIT_NS[own_unit] < _dt.UNIT_NS[unit]:
        unit = own_unit
    dtype = np.dtype(f"{kind}[{unit}]")
    v = _time_scalar(b, dtype, "Series")
    return Column(dtype, _em.full(n, v, dtype=_em.int64, device=like.device))


def _time_binary(a, b, op, reflected):
    n = len(a)
    if isinstance(b, Column) and a.kind != "time":
        a, b, reflected = b, a, not reflected
    if not isinstance(b, Column):
        if isinstance(b, (int, float, np.integer, np.floating)) and not isinstance(b, bool):
            if (
                _dt.is_timedelta(a.dtype)
                and op in ("mul", "floordiv", "truediv")
                and (op == "mul" or not reflected)
            ):
                if op == "mul":
                    out = (a.data * b).astype(_em.int64)
                else:
                    out = _em.floor_divide(a.data, b).astype(_em.int64)
                return Column(a.dtype, out, a.mask)
            raise TypeError(f"ember.frame: unsupported operand '{op}' for {a.dtype} and a number")
        b = _time_operand(b, a, n)
    if b.kind != "time":
        raise TypeError(f"ember.frame: unsupported operand '{op}' for {a.dtype} and {b.dtype}")
    if _dt.time_unit(a.dtype) != _dt.time_unit(b.dtype):
        from .cast import astype

        fine = min(a.dtype, b.dtype, key=lambda d: _dt.UNIT_NS[_dt.time_unit(d)])
        unit = _dt.time_unit(fine)
        a = astype(a, np.dtype(f"{a.dtype.name.split('[')[0]}[{unit}]"))
        b = astype(b, np.dtype(f"{b.dtype.name.split('[')[0]}[{unit}]"))
    if reflected:
        a, b = b, a
    x, y = a.data, b.data
    mask = _and_masks(a.mask, b.mask)
    ak = "M" if _dt.is_datetime(a.dtype) else "m"
    bk = "M" if _dt.is_datetime(b.dtype) else "m"
    if op in _CMP:
        if ak != bk:
            raise TypeError(f"ember.frame: Invalid comparison between {a.dtype} and {b.dtype}")
        out = _CMP[op](x, y)
        if mask is not None:  # NaT compares False (!= True), as pandas' datetime64
            out = _em.where(mask, out, op == "ne")
        return Column(np.dtype(bool), out)
    unit = _dt.time_unit(a.dtype)
    td = np.dtype(f"timedelta64[{unit}]")
    dtt = np.dtype(f"datetime64[{unit}]")
    if op == "sub" and ak == "M" and bk == "M":
        return Column(td, x - y, mask)
    if op == "add" and not (ak == "M" and bk == "M"):
        return Column(dtt if "M" in (ak, bk) else td, x + y, mask)
    if op == "sub" and bk == "m":
        return Column(dtt if ak == "M" else td, x - y, mask)
    if op == "truediv" and ak == bk == "m":
        return Column(np.dtype("float64"), x / y, mask)
    if op == "floordiv" and ak == bk == "m":
        return Column(np.dtype("int64"), _em.floor_divide(x, y), mask)
    raise TypeError(f"ember.frame: unsupported operand '{op}' for {a.dtype} and {b.dtype}")


def unary(a: Column, op: str) -> Column:
    if a.kind != "num":
        if op == "neg" and _dt.is_timedelta(a.dtype):
            return Column(a.dtype, -a.data, a.mask)
        raise TypeError(f"ember.frame: bad operand type for unary {op}: {a.dtype}")
    if op == "neg":
        if _dt.is_bool(a.dtype):
            raise TypeError("ember.frame: negation of a bool Series; use ~")
        return Column(a.dtype, -a.data, a.mask)
    if op == "invert":
        out = ~a.data
        return Column(a.dtype, out, a.mask)
    if op == "abs":
        return Column(a.dtype, _em.abs(a.data), a.mask)
    raise ValueError(op)


# ---- reductions ------------------------------------------------------------------------------
def _scalar(x, dtype):
    v = x.item() if hasattr(x, "item") else x
    if dtype is not None and isinstance(dtype, np.dtype):
        return dtype.type(v)
    return v


def reduce(col: Column, how: str, skipna=True, ddof=1, min_count=0):
    """A pandas Series reduction; one scalar comes back to the host (the result)."""
    func = f"Series.{how}"
    if col.kind == "str" and how not in ("count", "min", "max", "nunique", "sum"):
        raise TypeError(f"ember.frame.{func}: not supported for dtype str")
    valid = col.valid()
    if how == "count":
        return int(_em.sum(valid))
    if col.kind == "str":
        return _str_reduce(col, how, valid)
    if col.kind == "cat":
        raise TypeError(f"ember.frame.{func}: Categorical cannot perform the operation {how}")
    nvalid = int(_em.sum(valid))
    if not skipna and nvalid < len(col):
        if how in ("any", "all"):
            pass
        elif col.kind == "time":
            return pd.NaT
        else:
            return np.nan if col.mask is None or _dt.is_float(col.dtype) else pd.NA
    vals = col.data[valid] if nvalid < len(col) else col.data
    if how in ("any", "all"):
        return bool(_em.any(vals != 0)) if how == "any" else bool(_em.all(vals != 0))
    if col.kind == "time":
        return _time_reduce(col, how, vals, nvalid)
    dt = col.dtype
    if how in ("sum", "prod"):
        if nvalid < min_count:
            return np.nan
        acc = (
            dt if dt.kind == "f" else (np.dtype("uint64") if dt.kind == "u" else np.dtype("int64"))
        )
        r = _em.sum(vals, dtype=acc) if how == "sum" else _em.prod(vals, dtype=acc)
        return _scalar(r, acc)
    if nvalid == 0:
        return np.nan
    if how == "mean":
        return float(_em.mean(vals.astype(_em.float64)))
    if how in ("min", "max"):
        r = _em.min(vals) if how == "min" else _em.max(vals)
        return _scalar(r, dt)
    if how in ("std", "var"):
        if nvalid - ddof <= 0:
            return np.nan
        v = vals.astype(_em.float64)
        m = _em.mean(v)
        var = float(_em.sum((v - m) ** 2)) / (nvalid - ddof)
        return math.sqrt(var) if how == "std" else var
    if how == "median":
        return float(_em.median(vals.astype(_em.float64)))
    if how == "sem":
        return reduce(col, "std", ddof=ddof) / math.sqrt(nvalid)
    raise ValueError(f"ember.frame: unknown reduction {how!r}")


def _time_reduce(col, how, vals, nvalid):
    unit = _dt.time_unit(col.dtype)
    if nvalid == 0:
        return pd.NaT
    if how in ("min", "max"):
        v = int(_em.min(vals) if how == "min" else _em.max(vals))
    elif how == "mean":
        v = int(round(float(_em.mean(vals.astype(_em.float64)))))
    elif how == "sum" and _dt.is_timedelta(col.dtype):
        v = int(_em.sum(vals))
    else:
        raise TypeError(f"ember.frame.Series.{how}: not supported for dtype {col.dtype}")
    if _dt.is_datetime(col.dtype):
        return pd.Timestamp(v, unit=unit)
    return pd.Timedelta(v, unit=unit)


def _str_reduce(col, how, valid):
    from .keys import string_ranks

    if how == "sum":
        raise TypeError("ember.frame.Series.sum: not supported for dtype str on the device")
    idx = _em.nonzero(valid)[0]
    if idx.shape[0] == 0:
        return np.nan
    r = _em.take(string_ranks(col), idx)
    pos = _em.argmin(r) if how == "min" else _em.argmax(r)
    one = col.take(_em.take(idx, pos.reshape(1)))
    return one.to_pandas()[0]
