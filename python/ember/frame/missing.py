"""Missing values: fillna (scalar, column, ffill/bfill), where/mask, replace, clip."""

from __future__ import annotations

import numpy as np
import pandas as pd

import ember as _em

from . import dtypes as _dt
from .column import Column


def choose(cond, a: Column, b: Column) -> Column:
    """Rows of ``a`` where ``cond`` (bool array) else rows of ``b`` (same length, same kind)."""
    from .reshape import concat_columns

    n = len(a)
    dev = a.device
    if a.kind == "num" and b.kind == "num":
        dt = np.result_type(a.dtype, b.dtype)
        data = _em.where(cond, a.data.astype(dt), b.data.astype(dt))
        mask = None
        if a.mask is not None or b.mask is not None:
            mask = (
                _em.where(cond, a.valid(), b.valid())
                if dt.kind != "f"
                else _em.where(
                    cond,
                    a.mask if a.mask is not None else True,
                    b.mask if b.mask is not None else True,
                )
            )
        return Column(dt, data, mask)
    if a.kind == "time" and b.kind == "time" and a.dtype == b.dtype:
        mask = None
        if a.mask is not None or b.mask is not None:
            mask = _em.where(cond, a.valid(), b.valid())
        return Column(a.dtype, _em.where(cond, a.data, b.data), mask)
    both = concat_columns([a, b])
    ar = _em.arange(n, dtype=_em.int64, device=dev)
    return both.take(_em.where(cond, ar, ar + n))


def scalar_column(value, like: Column):
    n = len(like)
    dev = like.device
    if like.kind == "str":
        if not isinstance(value, str):
            raise TypeError(f"ember.frame.fillna: Invalid value '{value!r}' for dtype 'str'")
        return Column.from_scalar(value, n, dev)
    if like.kind == "cat":
        from .keys import lookup

        p = int(lookup(like.categories, Column.from_scalar(value, 1, dev))[0])  # host read
        if p < 0:
            raise TypeError(
                "ember.frame.fillna: Cannot setitem on a Categorical with a new category "
                f"({value!r}), set the categories first"
            )
        return Column(
            like.dtype, _em.full(n, p, dtype=_em.int32, device=dev), categories=like.categories
        )
    if like.kind == "time":
        from .ops import _time_scalar

        return Column(
            like.dtype,
            _em.full(n, _time_scalar(value, like.dtype, "fillna"), dtype=_em.int64, device=dev),
        )
    if isinstance(value, str):
        raise TypeError(f"ember.frame.fillna: Invalid value {value!r} for dtype {like.dtype}")
    v = np.asarray(value)
    dt = like.dtype
    if v.dtype.kind == "f" and dt.kind in "iu" and float(value) != int(value):
        dt = np.dtype("float64")
    elif v.dtype.kind == "b" and dt.kind != "b":
        pass
    return Column(dt, _em.full(n, value, dtype=dt, device=dev))


def fillna(col: Column, value) -> Column:
    if isinstance(value, Column):
        other = value
    else:
        if value is None or value is pd.NA:
            return col
        if col.mask is None and not (col.kind == "num" and col.dtype.kind == "f"):
            return col  # nothing to fill: pandas does not check the value then
        other = scalar_column(value, col)
    out = choose(col.valid(), col, other)
    if not isinstance(value, Column):
        if col.kind == "num" and out.dtype.kind == "f":
            return Column(out.dtype, out.data)
        return out.with_mask(None)
    return out


def ffill(col: Column, limit=None, backward=False) -> Column:
    """Forward (backward) fill: each null takes the last (next) valid row, via a max-scan."""
    n = len(col)
    dev = col.device
    if n == 0:
        return col
    if limit is not None:
        raise NotImplementedError("ember.frame.ffill: limit=")
    valid = col.valid()
    ar = _em.arange(n, dtype=_em.int64, device=dev)
    if backward:
        valid = _em.flip(valid)
    src = _em.where(valid, ar, -1)
    step = 1
    while step < n:  # inclusive running max by doubling
        src = _em.concatenate([src[:step], _em.maximum(src[step:], src[:-step])])
        step *= 2
    if backward:
        src = _em.where(src >= 0, n - 1 - src, -1)
        src = _em.flip(src)
    out = col.take(src, nullable=True)
    if col.kind == "num" and _dt.is_float(col.dtype):
        return Column(
            col.dtype, _em.where(src >= 0, out.data, np.nan), None if col.mask is None else out.mask
        )
    return out


def clip(col: Column, lower=None, upper=None) -> Column:
    if col.kind != "num":
        raise TypeError(f"ember.frame.clip: not supported for dtype {col.dtype}")
    data = col.data
    if lower is not None:
        lo = lower.data if isinstance(lower, Column) else lower
        data = _em.where(data < lo, lo, data)
    if upper is not None:
        hi = upper.data if isinstance(upper, Column) else upper
        data = _em.where(data > hi, hi, data)
    if _dt.is_float(col.dtype):
        data = _em.where(_em.isnan(col.data), np.nan, data)
    return Column(np.dtype(data.dtype), data, col.mask)


def replace(col: Column, to_replace, value) -> Column:
    from .algos import isin

    if isinstance(to_replace, dict):
        out = col
        for k, v in to_replace.items():
            out = replace(out, k, v)
        return out
    if isinstance(to_replace, (list, tuple)):
        if isinstance(value, (list, tuple)):
            if len(value) != len(to_replace):
                raise ValueError(
                    f"ember.frame.replace: Replacement lists must match in length. Expecting "
                    f"{len(to_replace)} got {len(value)}"
                )
            out = col
            for k, v in zip(to_replace, value, strict=False):
                out = replace(out, k, v)
            return out
        hit = isin(col, to_replace).data
    else:
        if to_replace is None or (isinstance(to_replace, float) and np.isnan(to_replace)):
            hit = ~col.valid()
        else:
            from .ops import binary

            r = binary(col, to_replace, "eq")
            hit = r.data & r.valid()
    if value is None or value is pd.NA:
        valid = col.valid() & ~hit
        return col.with_mask(valid)
    other = scalar_column(value, col)
    return choose(~hit, col, other)
