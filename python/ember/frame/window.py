"""rolling(window): sums and counts from prefix scans; min/max by doubling over the window."""

from __future__ import annotations

import numpy as np

import ember as _em

from .column import Column


def check_rolling_options(who, win_type, on, axis, closed, step):
    """pandas' rolling options this house does not have raise ValueError naming the argument
    (their defaults are accepted, as Dask passes them)."""
    for name, value, default in (("win_type", win_type, None), ("on", on, None),
                                 ("closed", closed, None), ("step", step, None)):  # fmt: skip
        if value is not default and value != default:
            raise ValueError(f"{who}: {name}={value!r} is not supported (only {name}={default})")
    if axis not in (0, "index", "rows"):
        raise ValueError(f"{who}: axis={axis!r} is not supported (only axis=0)")


class Rolling:
    def __init__(self, obj, window, min_periods=None, center=False):
        if not isinstance(window, (int, np.integer)) or window <= 0:
            raise ValueError(
                f"ember.frame.rolling: window must be an integer 0 or greater, got {window!r}"
            )
        self._obj = obj
        self.window = int(window)
        self.center = bool(center)
        self.min_periods = self.window if min_periods is None else int(min_periods)

    def _roll(self, col, how):
        if not self.center:
            return _roll(col, how, self.window, self.min_periods)
        # a centred window is the trailing window ending (w - 1) // 2 rows later
        from .reshape import concat_columns

        off = (self.window - 1) // 2
        if col.kind != "num":
            raise TypeError(f"ember.frame.rolling: not supported for dtype {col.dtype}")
        pad = Column.full_null(col.dtype, off, col.device)
        out = _roll(concat_columns([col, pad]), how, self.window, self.min_periods)
        return out.slice(off, off + len(col))

    def _apply(self, how):
        from .dataframe import DataFrame

        obj = self._obj
        if isinstance(obj, DataFrame):
            return DataFrame._from_columns(
                {k: self._roll(c, how) for k, c in obj._data.items()},
                obj.index,
            )
        return obj._with(self._roll(obj._col, how))

    def sum(self):
        return self._apply("sum")

    def mean(self):
        return self._apply("mean")

    def min(self):
        return self._apply("min")

    def max(self):
        return self._apply("max")

    def std(self):
        return self._apply("std")

    def var(self):
        return self._apply("var")

    def count(self):
        return self._apply("count")


def _window_diff(prefix, w):
    """prefix[i] - prefix[i - w] (prefix has a leading zero, length n + 1)."""
    n = prefix.shape[0] - 1
    hi = prefix[1:]
    lo_idx = _em.clip(_em.arange(n, dtype=_em.int64, device=prefix.device) + 1 - w, 0, n)
    return hi - _em.take(prefix, lo_idx)


def _roll(col: Column, how, w, min_periods):
    if col.kind != "num":
        raise TypeError(f"ember.frame.rolling: not supported for dtype {col.dtype}")
    n = len(col)
    dev = col.device
    valid = col.valid()
    x = _em.where(valid, col.data.astype(_em.float64), 0.0)
    zero = _em.zeros(1, dtype=_em.float64, device=dev)
    cnt = _window_diff(_em.concatenate([zero, _em.cumsum(valid.astype(_em.float64))]), w)
    ok = cnt >= max(min_periods, 1 if how not in ("count", "sum") else 0)
    if how == "count":
        # pandas checks min_periods against the rows in the window, NaN included
        rows_in = _em.minimum(_em.arange(1, n + 1, dtype=_em.int64, device=dev), w)
        return Column(np.dtype("float64"), _em.where(rows_in >= min_periods, cnt, np.nan))
    s = _window_diff(_em.concatenate([zero, _em.cumsum(x)]), w)
    if how == "sum":
        out = s
    elif how == "mean":
        out = s / _em.where(cnt > 0, cnt, 1.0)
    elif how in ("std", "var"):
        mean = s / _em.where(cnt > 0, cnt, 1.0)
        ss = _window_diff(_em.concatenate([zero, _em.cumsum(x * x)]), w)
        var = (ss - cnt * mean * mean) / _em.where(cnt > 1, cnt - 1, 1.0)
        var = _em.where(var < 0, 0.0, var)
        ok = ok & (cnt > 1)
        out = _em.sqrt(var) if how == "std" else var
    else:
        fill = np.inf if how == "min" else -np.inf
        fn = _em.minimum if how == "min" else _em.maximum
        out = _em.where(valid, col.data.astype(_em.float64), fill)
        span = 1
        # out[i] covers (i - span, i]; double the span until it reaches the window
        while span < w:
            step = min(span, w - span)
            prev = (
                _em.concatenate(
                    [_em.full(step, fill, dtype=_em.float64, device=dev), out[: n - step]]
                )
                if n > step
                else _em.full(n, fill, dtype=_em.float64, device=dev)
            )
            out = fn(out, prev)
            span += step
    del n
    return Column(np.dtype("float64"), _em.where(ok, out, np.nan))
