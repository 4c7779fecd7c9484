"""astype for columns: numeric casts, times, categories, numbers to strings (on the device)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import ember as _em

from . import dtypes as _dt
from .column import Column


def astype(col: Column, dtype, func="astype") -> Column:
    target = _dt.normalize(dtype, func=func)
    if isinstance(target, pd.CategoricalDtype):
        return to_category(col, target)
    if col.kind == "cat":
        n = len(col)
        codes = _em.where(col.valid(), col.data.astype(_em.int64), -1)
        if n == 0:
            return Column.full_null(target, 0, col.device)
        return astype(col.categories.take(codes, nullable=True), target, func)
    if _dt.is_string(target):
        return to_string(col, func)
    if col.kind == "str":
        from .parse import parse_float, parse_int

        if _dt.is_integer(target):
            return parse_int(col, target, func)
        if _dt.is_datetime(target):
            from .datetime import parse_iso

            return _time_cast(parse_iso(col, "raise", func), target, func)
        if _dt.is_float(target):
            return parse_float(col, target, func)
        raise NotImplementedError(
            f"ember.frame.{func}: parsing strings to {target} on the device (use read_csv's "
            "dtype=/parse_dates= to parse while loading)"
        )
    if col.dtype == target:
        return col
    if col.kind == "time" or _dt.is_time(target):
        return _time_cast(col, target, func)
    data = col.data
    mask = col.mask
    if target.kind in "iu" and col.dtype.kind == "f":
        nan = _em.isnan(data)
        if bool(_em.any(nan | _em.isinf(data))):  # one host read: are there values to null?
            mask = ~nan if mask is None else mask & ~nan
            if bool(_em.any(_em.isinf(data))):
                raise ValueError(
                    f"ember.frame.{func}: cannot convert non-finite values (inf) to {target}"
                )
            data = _em.where(nan, 0, data)
    if target.kind == "b":
        out = data != 0
    else:
        out = data.astype(target)
    return Column(target, out, mask)


def _time_cast(col, target, func):
    if col.kind == "time" and _dt.is_time(target):
        if col.dtype.kind != target.kind:
            raise TypeError(f"ember.frame.{func}: cannot cast {col.dtype} to {target}")
        a = _dt.UNIT_NS[_dt.time_unit(col.dtype)]
        b = _dt.UNIT_NS[_dt.time_unit(target)]
        data = col.data * (a // b) if a >= b else _em.floor_divide(col.data, b // a)
        return Column(target, data, col.mask)
    if col.kind == "time" and target == np.dtype("int64"):
        return Column(target, col.data, col.mask)
    if _dt.is_time(target) and col.kind == "num" and col.dtype.kind in "iu":
        return Column(target, col.data.astype(_em.int64), col.mask)
    raise TypeError(f"ember.frame.{func}: cannot cast {col.dtype} to {target}")


def to_category(col: Column, target) -> Column:
    from .keys import factorize

    if col.kind == "cat" and (target.categories is None or target == col.dtype):
        return col
    if col.kind == "cat":
        col = astype(col, col.categories.dtype)
    if target.categories is None:
        codes, uniq_idx = factorize(col, sort=True)
        cats = col.take(uniq_idx)
        pdcats = pd.Index(cats.to_pandas())
        dtype = pd.CategoricalDtype(pdcats, ordered=bool(target.ordered))
        valid = codes >= 0
        mask = None if col.mask is None and not col.has_nulls() else valid
        return Column(dtype, _em.where(valid, codes, 0).astype(_em.int32), mask, categories=cats)
    from .column import from_pandas_index

    cats = from_pandas_index(target.categories, col.device)
    from .keys import lookup

    pos = lookup(cats, col)  # -1 where the value is not a category
    valid = (pos >= 0) & col.valid()
    return Column(target, _em.where(valid, pos, 0).astype(_em.int32), valid, categories=cats)


def to_string(col: Column, func="astype") -> Column:
    """Numbers and bools to their decimal text, computed on the device."""
    dev = col.device
    n = len(col)
    if col.kind == "str":
        return col
    if col.kind == "num" and _dt.is_bool(col.dtype):
        from .reshape import concat_columns

        words = Column.from_scalar("False", 1, dev)
        words = concat_columns([words, Column.from_scalar("True", 1, dev)])
        out = words.take(col.data.astype(_em.int64))
        return out.with_mask(col.mask)
    if col.kind == "num" and col.dtype.kind in "iu":
        x = col.data.astype(_em.int64) if col.dtype != np.uint64 else col.data
        neg = x < 0
        mag = _em.where(neg, -x, x).astype(_em.uint64)
        # digit count: 1 + number of powers of ten <= magnitude
        ndig = _em.ones(n, dtype=_em.int64, device=dev)
        p = 10
        for _ in range(19):
            ndig = ndig + (mag >= np.uint64(p)).astype(_em.int64)
            p *= 10
            if p > np.iinfo(np.uint64).max:
                break
        lens = ndig + neg.astype(_em.int64)
        zero = _em.zeros(1, dtype=_em.int64, device=dev)
        offsets = _em.concatenate([zero, _em.cumsum(lens)])
        total = int(offsets[-1]) if n else 0  # host read: output byte count
        rows = _em.repeat(_em.arange(n, dtype=_em.int64, device=dev), lens)
        pos = _em.arange(total, dtype=_em.int64, device=dev) - _em.take(offsets, rows)
        from_end = _em.take(lens, rows) - 1 - pos  # digit index counted from the last digit
        rmag = _em.take(mag, rows)
        pw = _em.asarray(np.array([10**k for k in range(20)], dtype=np.uint64), device=dev)
        dig = (rmag // _em.take(pw, _em.clip(from_end, 0, 19))) % np.uint64(10)
        ch = (dig + np.uint64(48)).astype(_em.uint8)
        minus = _em.take(neg, rows) & (pos == 0)
        ch = _em.where(minus, np.uint8(45), ch).astype(_em.uint8)
        return Column(_dt.STRING, offsets=offsets, chars=ch, mask=col.mask)
    raise NotImplementedError(
        f"ember.frame.{func}: formatting {col.dtype} values as strings on the device"
    )
