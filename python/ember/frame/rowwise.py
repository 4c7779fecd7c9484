"""Row-wise reductions of a DataFrame (``df.sum(axis=1)``, ``mean``, ``min``, ``max``, ``std``,
``var``, ``median``, ``prod``, ``count``, ``any``, ``all``): the numeric columns stacked into one
(rows, columns) array on the frame's device and reduced along its second axis, with pandas'
missing-value rules (skipna, min_count, all-missing rows give NaN)."""

from __future__ import annotations

import numpy as np

import ember as _em

from .column import Column

_FLOAT_RESULT = ("mean", "std", "var", "median")


def _numeric_columns(df, how, numeric_only):
    names, cols = [], []
    for k, c in df._data.items():
        if c.kind == "num" or (how == "count" and not numeric_only):
            names.append(k)
            cols.append(c)
        elif not numeric_only:
            raise TypeError(
                f"ember.frame.DataFrame.{how}: a row-wise {how} needs numeric columns, but "
                f"column {k!r} has dtype {c.dtype} (pass numeric_only=True to leave it out)"
            )
    return names, cols


def reduce_rows(df, how, skipna=True, numeric_only=False, ddof=1, min_count=0):
    """The Series of one row-wise reduction (index: the frame's)."""
    from .series import Series

    n = len(df)
    dev = df.device
    names, cols = _numeric_columns(df, how, numeric_only)
    if how == "count":
        if not cols:
            data = _em.zeros(n, dtype=_em.int64, device=dev)
        else:
            data = _em.stack([c.valid() for c in cols], axis=1).sum(axis=1, dtype=_em.int64)
        return Series._from_column(Column(np.dtype("int64"), data), df.index)
    kinds = [c.dtype for c in cols]
    if how in ("any", "all"):
        if not cols:
            data = _em.full(n, how == "all", dtype=_em.bool, device=dev)
        else:
            b = _em.stack(
                [_em.where(c.valid(), c.data != 0, how == "all" or not skipna) for c in cols],
                axis=1,
            )
            data = b.any(axis=1) if how == "any" else b.all(axis=1)
        return Series._from_column(Column(np.dtype("bool"), data), df.index)
    all_int = bool(cols) and all(k.kind in "iub" for k in kinds)
    if how in _FLOAT_RESULT or not all_int:
        work = np.dtype("float64") if how in _FLOAT_RESULT else np.result_type(*kinds)
        if work.kind != "f":
            work = np.dtype("float64")
    else:
        work = np.dtype("uint64") if all(k.kind == "u" for k in kinds) else np.dtype("int64")
        if how in ("min", "max"):
            work = np.result_type(*kinds)
            if work == np.bool_:
                work = np.dtype("bool")
    if not cols:
        fill = 0 if how == "sum" else 1 if how == "prod" else np.nan
        if how in ("sum", "prod") and min_count > 0:
            fill = np.nan
        dt = np.dtype("float64") if fill is np.nan else np.dtype("int64")
        return Series._from_column(Column(dt, _em.full(n, fill, dtype=dt, device=dev)), df.index)
    x = _em.stack([c.data.astype(work, copy=False) for c in cols], axis=1)
    v = _em.stack([c.valid() for c in cols], axis=1)
    cnt = v.sum(axis=1, dtype=_em.int64)
    k = len(cols)
    mask = None
    if how in ("sum", "prod"):
        neutral = 0 if how == "sum" else 1
        xs = _em.where(v, x, neutral) if skipna else x
        data = xs.sum(axis=1) if how == "sum" else xs.prod(axis=1)
        bad = None
        if not skipna:
            bad = cnt < k
        if min_count > 0:
            short = cnt < min_count
            bad = short if bad is None else bad | short
        if bad is not None:
            data, mask = _nan_or_mask(data, bad)
    elif how in ("min", "max"):
        if work.kind == "f":
            fill = np.inf if how == "min" else -np.inf
        elif work == np.bool_:
            fill = how == "min"
        else:
            info = np.iinfo(work)
            fill = info.max if how == "min" else info.min
        xs = _em.where(v, x, fill)
        data = xs.min(axis=1) if how == "min" else xs.max(axis=1)
        bad = cnt == 0 if skipna else cnt < k
        data, mask = _nan_or_mask(data, bad)
    elif how == "mean":
        s = _em.where(v, x, 0.0).sum(axis=1)
        data = s / _em.where(cnt > 0, cnt, 1).astype(_em.float64)
        data = _em.where((cnt > 0) if skipna else (cnt == k), data, np.nan)
    elif how in ("var", "std"):
        c = _em.where(cnt > 0, cnt, 1).astype(_em.float64)
        mean = _em.where(v, x, 0.0).sum(axis=1) / c
        d = _em.where(v, x - mean[:, None], 0.0)
        den = (cnt - ddof).astype(_em.float64)
        var = (d * d).sum(axis=1) / _em.where(den > 0, den, 1.0)
        ok = (den > 0) if skipna else ((den > 0) & (cnt == k))
        data = _em.where(ok, var, np.nan)
        if how == "std":
            data = _em.sqrt(data)
    elif how == "median":
        xs = _em.where(v, x, np.nan)
        data = _em.nanmedian(xs, axis=1) if skipna else _em.median(xs, axis=1)
    else:  # pragma: no cover - the callers name only the reductions above
        raise ValueError(f"ember.frame.DataFrame: unknown row-wise reduction {how!r}")
    return Series._from_column(Column(np.dtype(data.dtype), data, mask), df.index)


def _nan_or_mask(data, bad):
    """Rows ``bad`` become NaN (an integer result turns float64 then, as pandas')."""
    if data.dtype.kind == "f":
        return _em.where(bad, np.nan, data), None
    if not bool(_em.any(bad)):  # host read: keep the integer dtype when nothing is missing
        return data, None
    return _em.where(bad, np.nan, data.astype(_em.float64)), None
