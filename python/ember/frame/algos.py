"""Row algorithms shared by Series and DataFrame: duplicated, unique, value_counts, rank, shift,
cumulative ops, isin -- all composed of keys' codes, bincount, scans and gathers."""

from __future__ import annotations

import numpy as np

import ember as _em

from . import dtypes as _dt
from .column import Column
from .keys import group_codes, joint_codes


def _keep_arg(keep, func):
    if keep not in ("first", "last", False):
        raise ValueError(
            f"ember.frame.{func}: keep must be either 'first', 'last' or False, got {keep!r}"
        )


def last_rows(codes, ngroups, dev):
    """Index of the last row of each group (codes all >= 0)."""
    order = _em.argsort(codes, stable=True)
    counts = _em.bincount(codes, minlength=ngroups)
    ends = _em.cumsum(counts) - 1
    return _em.take(order, ends)


def duplicated(cols, keep="first", func="duplicated"):
    _keep_arg(keep, func)
    n = len(cols[0])
    dev = cols[0].device
    if n == 0:
        return _em.zeros(0, dtype=_em.bool, device=dev)
    codes, first, g = group_codes(cols, dropna=False)
    if keep is False:
        counts = _em.bincount(codes, minlength=g)
        return _em.take(counts, codes) > 1
    keepers = first if keep == "first" else last_rows(codes, g, dev)
    dup = _em.ones(n, dtype=_em.bool, device=dev)
    dup[keepers] = _em.zeros(keepers.shape[0], dtype=_em.bool, device=dev)
    return dup


def unique_rows(col: Column):
    """Row indices of the first occurrence of each distinct value (nulls included), in order."""
    n = len(col)
    dev = col.device
    if n == 0:
        return _em.zeros(0, dtype=_em.int64, device=dev)
    codes, first, _ = group_codes([col], dropna=False)
    return _em.sort(first)


def value_counts(col: Column, dropna=True, sort=True, ascending=False):
    """(first row of each value, counts) ordered as pandas' value_counts."""
    n = len(col)
    dev = col.device
    if n == 0:
        z = _em.zeros(0, dtype=_em.int64, device=dev)
        return z, z
    codes, first, g = group_codes([col], dropna=dropna)
    keep = codes >= 0
    counts = _em.bincount(_em.where(keep, codes, 0), weights=keep.astype(_em.int64), minlength=g)
    counts = counts.astype(_em.int64)
    # groups in order of first appearance, then (stably) by count
    order = _em.argsort(first, stable=True)
    if sort:
        c = _em.take(counts, order)
        order = _em.take(order, _em.argsort(c, stable=True, descending=not ascending))
    return _em.take(first, order), _em.take(counts, order)


def isin(col: Column, values) -> Column:
    from .column import from_values

    n = len(col)
    dev = col.device
    if isinstance(values, str):
        raise TypeError(
            "ember.frame.isin: only list-like objects are allowed to be passed to isin(), "
            "you passed a `str`"
        )
    other = values._col if hasattr(values, "_col") else None
    if other is None:
        vals = list(values)
        if col.kind == "str":
            vals = [v for v in vals if isinstance(v, str)]
            other = from_values(vals, dev, _dt.STRING) if vals else None
        elif col.kind == "cat":
            return isin(_decode(col), values)
        elif col.kind == "time":
            import pandas as pd

            other = from_values(pd.Series(vals).astype(col.dtype), dev)
        else:
            vals = [v for v in vals if isinstance(v, (int, float, bool, np.number))]
            other = from_values(np.asarray(vals), dev) if vals else None
    if other is None or len(other) == 0 or n == 0:
        return Column(np.dtype(bool), _em.zeros(n, dtype=_em.bool, device=dev))
    if col.kind == "cat":
        col = _decode(col)
    if other.kind == "cat":
        other = _decode(other)
    if col.kind != other.kind:
        return Column(np.dtype(bool), _em.zeros(n, dtype=_em.bool, device=dev))
    if col.kind == "num" and col.dtype != other.dtype:
        dt = np.result_type(col.dtype, other.dtype)
        col = Column(dt, col.data.astype(dt), col.mask)
        other = Column(dt, other.data.astype(dt), other.mask)
    lc, rc, k = joint_codes([col], [other])
    present = _em.zeros(k, dtype=_em.bool, device=dev)
    present[rc] = _em.ones(rc.shape[0], dtype=_em.bool, device=dev)
    out = _em.take(present, lc)
    has_null = any(v is None or (isinstance(v, float) and np.isnan(v)) for v in _peek(values))
    if not has_null:
        out = out & col.valid()
    return Column(np.dtype(bool), out)


def _peek(values):
    try:
        return list(values) if not hasattr(values, "_col") else []
    except TypeError:
        return []


def _decode(col):
    from .cast import astype

    return astype(col, col.categories.dtype)


def shift(col: Column, periods=1, fill_value=None) -> Column:
    n = len(col)
    dev = col.device
    src = _em.arange(n, dtype=_em.int64, device=dev) - periods
    src = _em.where((src < 0) | (src >= n), -1, src)
    out = col.take(src, nullable=True)
    if fill_value is not None:
        from .missing import fillna

        filled = fillna(
            Column(out.dtype, out.data, (src >= 0), out.offsets, out.chars, out.categories),
            fill_value,
        )
        if out.mask is not None and col.mask is not None:
            filled = filled.with_mask(_em.where(src >= 0, out.mask, True))
        return filled
    if col.kind == "num" and col.dtype.kind in "iub" and fill_value is None:
        # pandas turns int/bool columns with introduced NaN into float64 / object
        if col.dtype.kind != "b":
            data = _em.where(out.valid(), out.data.astype(_em.float64), np.nan)
            return Column(np.dtype("float64"), data)
    if col.kind == "num" and _dt.is_float(col.dtype):
        return Column(col.dtype, _em.where(out.valid(), out.data, np.nan))
    return out


def cumulative(col: Column, how: str, skipna=True) -> Column:
    if col.kind not in ("num", "time"):
        raise TypeError(f"ember.frame.{how}: not supported for dtype {col.dtype}")
    valid = col.valid()
    data = col.data
    if how in ("cumsum", "cumprod"):
        neutral = 0 if how == "cumsum" else 1
        if _dt.is_bool(col.dtype):
            data = data.astype(_em.int64)
        x = _em.where(valid, data, neutral)
        out = _em.cumsum(x) if how == "cumsum" else _em.cumprod(x)
    else:
        # running max/min via a scan on the order: sort-free doubling (log2 n steps)
        big = np.inf if _dt.is_float(col.dtype) else None
        if big is None:
            info = np.iinfo(np.int64 if col.kind == "time" else col.dtype)
            big = info.max if how == "cummin" else info.min
        elif how == "cummax":
            big = -np.inf
        out = _em.where(valid, data, big)
        n = len(col)
        step = 1
        fn = _em.maximum if how == "cummax" else _em.minimum
        while step < n:
            shifted = _em.concatenate([out[:step], fn(out[step:], out[:-step])])
            out = shifted
            step *= 2
    if not skipna:
        bad = _em.cumsum((~valid).astype(_em.int64)) > 0
        valid = ~bad
    mask = col.mask
    if _dt.is_float(col.dtype) or (mask is None and col.kind == "num"):
        if _dt.is_float(col.dtype):
            out = _em.where(valid, out, np.nan)
        return Column(np.dtype(out.dtype) if col.kind != "time" else col.dtype, out)
    return Column(
        col.dtype if col.kind == "time" else np.dtype(out.dtype),
        out,
        valid if mask is not None else None,
    )


def diff(col: Column, periods=1) -> Column:
    from .ops import binary

    prev = shift(col, periods)
    if col.kind == "num" and col.dtype.kind in "iub":
        cur = Column(np.dtype("float64"), col.data.astype(_em.float64), col.mask)
        return binary(cur, prev, "sub")
    return binary(col, prev, "sub")


def rank(col: Column, method="average", ascending=True, na_option="keep", pct=False) -> Column:
    from .keys import argsort_columns

    if method not in ("average", "min", "max", "first", "dense"):
        raise ValueError(f"ember.frame.rank: invalid method {method!r}")
    n = len(col)
    dev = col.device
    order = argsort_columns([col], [ascending], "last")
    codes, _, _ = group_codes([col], dropna=True, need_first=False)
    sc = _em.take(codes, order)
    pos = _em.arange(1, n + 1, dtype=_em.int64, device=dev).astype(_em.float64)
    start = _em.concatenate([_em.ones(min(n, 1), dtype=_em.bool, device=dev), sc[1:] != sc[:-1]])
    seg = _em.cumsum(start.astype(_em.int64)) - 1
    nseg = int(seg[-1]) + 1 if n else 0  # host read: number of tie groups
    if method == "first":
        r = pos
    elif method == "dense":
        r = (seg + 1).astype(_em.float64)
    else:
        lo = _em.zeros(nseg, dtype=_em.float64, device=dev)
        cnt = _em.bincount(seg, minlength=nseg).astype(_em.float64)
        firstpos = _em.take(pos, _em.nonzero(start)[0])
        lo = firstpos
        hi = lo + cnt - 1
        r = {"min": lo, "max": hi, "average": (lo + hi) / 2}[method]
        r = _em.take(r, seg)
    out = _em.zeros(n, dtype=_em.float64, device=dev)
    out[order] = r
    valid = col.valid()
    if pct:
        denom = int(_em.sum(valid)) if method != "dense" else nseg
        out = out / max(denom, 1)
    out = _em.where(valid, out, np.nan)
    return Column(np.dtype("float64"), out)
