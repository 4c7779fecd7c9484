"""More Series methods (mixed into Series): interpolate, mode, monotonicity, combine_first,
factorize, windows (ewm, expanding), resample, unstack -- all on the column's device."""

from __future__ import annotations

import numpy as np

import ember as _em

from .column import Column


def _scan_max(a):
    """Inclusive running maximum by doubling (log2 n elementwise passes)."""
    n = a.shape[0]
    step = 1
    while step < n:
        a = _em.concatenate([a[:step], _em.maximum(a[step:], a[:-step])])
        step *= 2
    return a


def _neighbours(valid):
    """(previous valid row at or before, next valid row at or after): -1 / n where none."""
    n = valid.shape[0]
    dev = valid.device
    ar = _em.arange(n, dtype=_em.int64, device=dev)
    prev = _scan_max(_em.where(valid, ar, -1))
    back = _scan_max(_em.where(_em.flip(valid), ar, -1))
    nxt = _em.flip(_em.where(back >= 0, n - 1 - back, n))
    return prev, nxt


_METHODS = ("linear", "index", "values", "time", "pad", "ffill", "bfill", "backfill", "nearest")


def interpolate_column(col, xs, method, limit, limit_direction, limit_area, who):
    """pandas' 1-D ``interpolate``: each missing value from its valid neighbours, within
    ``limit`` rows of the direction(s) filled from; ``limit_area`` restricts to gaps inside or
    outside the valid values. Values before the first / after the last valid one repeat it (pandas'
    extrapolation by a constant) when that direction is filled."""
    if method not in _METHODS:
        raise ValueError(
            f"ember.frame.{who}: method must be one of {list(_METHODS)}, got {method!r}"
        )
    if col.kind != "num":
        raise TypeError(f"ember.frame.{who}: Cannot interpolate with all object-dtype columns")
    if limit_direction not in ("forward", "backward", "both"):
        raise ValueError(
            f"Invalid limit_direction: expecting one of ['forward', 'backward', 'both'], "
            f"got '{limit_direction}'."
        )
    if limit_area not in (None, "inside", "outside"):
        raise ValueError(
            f"Invalid limit_area: expecting one of ['inside', 'outside'], got {limit_area}."
        )
    if limit is not None and limit < 1:
        raise ValueError("Limit must be greater than 0")
    n = len(col)
    valid = col.valid()
    if n == 0 or (col.dtype.kind != "f" and col.mask is None):
        return col
    dev = col.device
    x = _em.where(valid, col.data.astype(_em.float64), np.nan)
    prev, nxt = _neighbours(valid)
    has_p, has_n = prev >= 0, nxt < n
    pc, nc = _em.clip(prev, 0, n - 1), _em.clip(nxt, 0, n - 1)
    y0, y1 = _em.take(x, pc), _em.take(x, nc)
    ar = _em.arange(n, dtype=_em.int64, device=dev)
    if method in ("pad", "ffill"):
        val = y0
    elif method in ("bfill", "backfill"):
        val = y1
    else:
        if method in ("linear", "nearest") or xs is None:
            xf = ar.astype(_em.float64)
        else:
            xf = xs.astype(_em.float64)
        x0, x1 = _em.take(xf, pc), _em.take(xf, nc)
        span = _em.where(x1 != x0, x1 - x0, 1.0)
        lin = y0 + (y1 - y0) * (xf - x0) / span
        if method == "nearest":
            lin = _em.where((xf - x0) <= (x1 - xf), y0, y1)
        both = has_p & has_n
        val = _em.where(both, lin, _em.where(has_p, y0, y1))
    big = n + 1 if limit is None else limit
    fwd = has_p & ((ar - prev) <= big)
    bwd = has_n & ((nxt - ar) <= big)
    if method in ("pad", "ffill"):
        bwd = _em.zeros_like(bwd)
    if method in ("bfill", "backfill"):
        fwd = _em.zeros_like(fwd)
    fill = {"forward": fwd, "backward": bwd, "both": fwd | bwd}[limit_direction]
    if method == "nearest":  # pandas' scipy methods leave the ends missing (no extrapolation)
        fill = fill & has_p & has_n
    if limit_area == "inside":
        fill = fill & has_p & has_n
    elif limit_area == "outside":
        fill = fill & ~(has_p & has_n)
    fill = fill & ~valid
    out = _em.where(valid, x, _em.where(fill, val, np.nan))
    return Column(np.dtype("float64"), out)


class SeriesMore:
    """Mixed into Series (kept apart so series.py stays short)."""

    def interpolate(
        self,
        method="linear",
        *,
        axis=0,
        limit=None,
        inplace=False,
        limit_direction=None,
        limit_area=None,
        **kwargs,
    ):
        """pandas' ``interpolate`` (linear on positions by default; ``index``/``values``/``time``
        on the index labels) computed on the device; ``limit_direction`` defaults to forward
        (backward for bfill)."""
        if limit_direction is None:
            limit_direction = "backward" if method in ("bfill", "backfill") else "forward"
        xs = None
        if method in ("index", "values", "time"):
            icol = self.index._col
            if icol.kind not in ("num", "time"):
                raise TypeError(
                    f"ember.frame.Series.interpolate: method={method!r} needs a numeric or "
                    f"datetime index, got {icol.dtype}"
                )
            xs = icol.data
        out = self._with(
            interpolate_column(
                self._col, xs, method, limit, limit_direction, limit_area, "Series.interpolate"
            )
        )
        return self._inplace(out, inplace)

    def mode(self, dropna=True):
        """The most frequent value(s), sorted (a Series with a RangeIndex, as pandas)."""
        from .index import RangeIndex
        from .keys import factorize

        col = self._col
        dev = self.device
        codes, first = factorize(col)
        k = first.shape[0]
        if not dropna:
            miss = _em.nonzero(codes < 0)[0]
            if miss.shape[0]:
                codes = _em.where(codes < 0, k, codes)
                first = _em.concatenate([first, miss[:1]])
                k += 1
        if k == 0:
            return self._take(_em.zeros(0, dtype=_em.int64, device=dev)).reset_index(drop=True)
        keep = codes >= 0
        counts = _em.bincount(
            _em.where(keep, codes, 0), weights=keep.astype(_em.int64), minlength=k
        )
        rows = _em.take(first, _em.nonzero(counts == _em.max(counts))[0])
        return type(self)._from_column(
            col.take(rows), RangeIndex(rows.shape[0], device=dev), self.name
        )

    @property
    def is_monotonic_increasing(self):
        from .index import Index

        return Index(self._col)._monotonic(True)

    @property
    def is_monotonic_decreasing(self):
        from .index import Index

        return Index(self._col)._monotonic(False)

    @property
    def is_unique(self):
        from .keys import group_codes

        return len(self) < 2 or group_codes([self._col], dropna=False)[2] == len(self)

    @property
    def hasnans(self):
        return self._col.has_nulls()

    def reindex(self, index=None, *, fill_value=None):
        """pandas' ``Series.reindex(index, fill_value=)``: the values at the new labels (a label
        the index lacks gives null, or ``fill_value``); the index must be unique."""
        from .align import reindex_column
        from .index import as_index
        from .missing import choose, scalar_column

        if index is None:
            return self.copy()
        target = as_index(index, self.device)
        col = reindex_column(self, target, "Series.reindex")
        if fill_value is not None and not (
            isinstance(fill_value, float) and fill_value != fill_value
        ):
            col = choose(col.valid(), col, scalar_column(fill_value, col))
        return type(self)._from_column(col, target, self.name)

    def combine_first(self, other):
        """Values of this Series, missing ones taken from ``other``, on the union of the labels
        (sorted, as pandas)."""
        from .align import reindex_column, union_index
        from .missing import choose

        other = other.to(self.device)
        if len(self) == len(other) and self.index.equals(other.index):
            idx, a, b = self.index, self._col, other._col
        else:
            idx = union_index([self.index, other.index], "Series.combine_first")
            a = reindex_column(self, idx, "Series.combine_first")
            b = reindex_column(other, idx, "Series.combine_first")
        return type(self)._from_column(choose(a.valid(), a, b), idx, self.name)

    def factorize(self, sort=False, use_na_sentinel=True):
        from .convert import factorize

        return factorize(self, sort=sort, use_na_sentinel=use_na_sentinel)

    def resample(self, rule, closed=None, label=None, origin="start_day", offset=None, level=None):
        from .resample import resample_series

        return resample_series(self, rule, closed, label, origin, offset, level)

    def unstack(self, level=-1, fill_value=None, sort=True):
        from .reshape_more import unstack_series

        return unstack_series(self, level, fill_value)

    def items(self):
        """(label, value) pairs: host values from one host copy (Python objects, as pandas)."""
        return self.to_pandas().items()

    def memory_usage(self, index=True, deep=False):
        from .frame_more import column_bytes, index_bytes

        return column_bytes(self._col) + (index_bytes(self.index) if index else 0)
