"""``ewm`` (exponentially weighted mean/sum/var/std) and ``expanding`` windows on the device.

pandas' EWM recurrences are first-order linear: each step is ``y_t = a_t * y_(t-1) + c_t``.
Such a recurrence is an associative scan over the pairs (a, c) -- composing two steps gives
``(a1 * a2, a2 * c1 + c2)`` -- computed here by Hillis-Steele doubling in log2(n) elementwise
passes, several recurrences at once as the columns of one 2-D array. With ``adjust=True`` the
scans are the decayed sums ``S = sum w x``, ``W = sum w`` (and ``sum w x**2``, ``sum w**2`` for
the variance), ``w = (1 - alpha)**age``; with ``adjust=False`` they carry pandas' normalized
weights step by step (a gap of d missing rows decays the old weight by ``(1 - alpha)**d``
unless ``ignore_na``). Decayed sums never divide by a shrinking weight, so long series neither
overflow nor underflow.
"""

from __future__ import annotations

import math

import numpy as np

import ember as _em

from .column import Column
from .window import Rolling


def linear_scan(a, c):
    """``y`` with ``y[t] = a[t] * y[t - 1] + c[t]`` and ``y[-1] = 0`` (arrays (n,) or (n, k))."""
    n = a.shape[0]
    step = 1
    while step < n:
        c = _em.concatenate([c[:step], a[step:] * c[:-step] + c[step:]])
        a = _em.concatenate([a[:step], a[step:] * a[:-step]])
        step *= 2
    return c


def center_of_mass(com, span, halflife, alpha):
    """pandas' ``get_center_of_mass`` (its checks and messages)."""
    given = sum(v is not None for v in (com, span, halflife, alpha))
    if given > 1:
        raise ValueError("comass, span, halflife, and alpha are mutually exclusive")
    if com is not None:
        if com < 0:
            raise ValueError("comass must satisfy: comass >= 0")
    elif span is not None:
        if span < 1:
            raise ValueError("span must satisfy: span >= 1")
        com = (span - 1) / 2
    elif halflife is not None:
        if halflife <= 0:
            raise ValueError("halflife must satisfy: halflife > 0")
        decay = 1 - math.exp(math.log(0.5) / halflife)
        com = 1 / decay - 1
    elif alpha is not None:
        if alpha <= 0 or alpha > 1:
            raise ValueError("alpha must satisfy: 0 < alpha <= 1")
        com = (1 - alpha) / alpha
    else:
        raise ValueError("Must pass one of comass, span, halflife, or alpha")
    return float(com)


_QUIRK = []


def _com1_quirk():
    """Whether the installed pandas gives a new observation after a gap the weight
    ``1 - old`` instead of ``alpha`` in ``ewm(com=1, adjust=False).mean()`` (pandas 3.1.1
    does; 3.1.2 and later, like the textbook recurrence, do not). Asked once of pandas itself
    on three numbers; without pandas, the textbook rule."""
    if not _QUIRK:
        try:
            import pandas as pd

            got = pd.Series([1.0, np.nan, 0.0]).ewm(com=1, adjust=False).mean().iloc[-1]
            # textbook: (0.25 * 1 + 0.5 * 0) / 0.75 = 1/3; the quirk: 0.25 / (0.25 + 0.75)
            _QUIRK.append(bool(abs(got - 0.25) < 1e-12))
        except Exception:
            _QUIRK.append(False)
    return _QUIRK[0]


def _numeric(col, who):
    if col.kind != "num":
        raise TypeError(f"ember.frame.{who}: not supported for dtype {col.dtype}")
    valid = col.valid()
    x = _em.where(valid, col.data.astype(_em.float64), 0.0)
    return x, valid


class EWM:
    """``obj.ewm(com=|span=|halflife=|alpha=, min_periods=0, adjust=True, ignore_na=False)``."""

    def __init__(
        self,
        obj,
        com=None,
        span=None,
        halflife=None,
        alpha=None,
        min_periods=0,
        adjust=True,
        ignore_na=False,
        axis=0,
        times=None,
        method="single",
    ):
        if times is not None:
            raise NotImplementedError("ember.frame.ewm: times= (halflife over timestamps)")
        if axis not in (0, "index", "rows"):
            raise ValueError(f"ember.frame.ewm: axis={axis!r} (columns are reduced along rows)")
        if method != "single":
            raise ValueError(f"ember.frame.ewm: method must be 'single', got {method!r}")
        self._obj = obj
        self.com = center_of_mass(com, span, halflife, alpha)
        self.alpha = 1.0 / (1.0 + self.com)
        self.min_periods = max(int(min_periods or 0), 0)
        self.adjust = bool(adjust)
        self.ignore_na = bool(ignore_na)

    # ---- the scans ---------------------------------------------------------------------------
    def _steps(self, valid, for_mean=False):
        """(a, b) per row for the normalized (adjust=False) recurrence ``y = a y + b x``. Some
        pandas versions' mean gives a new value the weight ``1 - old`` instead of ``alpha`` when
        com == 1 (``_com1_quirk``: the installed pandas decides); the variance keeps ``alpha``."""
        n = valid.shape[0]
        dev = valid.device
        f = 1.0 - self.alpha
        idx = _em.arange(n, dtype=_em.int64, device=dev)
        seen = _em.where(valid, idx, -1)
        step = 1
        while step < n:  # running max: the last valid row at or before each row
            seen = _em.concatenate([seen[:step], _em.maximum(seen[step:], seen[:-step])])
            step *= 2
        prev = _em.concatenate([_em.full(1, -1, dtype=_em.int64, device=dev), seen[:-1]])
        gap = (idx - prev).astype(_em.float64)
        old = f ** (gap if not self.ignore_na else _em.ones_like(gap))
        first = valid & (prev < 0)
        quirk = for_mean and self.com == 1.0 and _com1_quirk()
        new = 1.0 - old if quirk else self.alpha
        a = _em.where(valid, old / (old + new), 1.0)
        b = _em.where(valid, new / (old + new), 0.0)
        a = _em.where(first, 0.0, a)
        b = _em.where(first, 1.0, b)
        return a, b

    def _moments(self, col, who, var):
        """(mean, sum, var-or-None, count of observations) of one column."""
        x, valid = _numeric(col, who)
        n = x.shape[0]
        dev = x.device
        v = valid.astype(_em.float64)
        if self.adjust:
            f = 1.0 - self.alpha
            a = _em.full(n, f, dtype=_em.float64, device=dev)
            if self.ignore_na:
                a = _em.where(valid, a, 1.0)
            cs = [v * x, v] + ([v * x * x, v] if var else [])
            asx = [a, a] + ([a, a * a] if var else [])
            y = linear_scan(_em.stack(asx, axis=1), _em.stack(cs, axis=1))
            s, w = y[:, 0], y[:, 1]
            mean = s / _em.where(w > 0, w, 1.0)
            out_var = None
            if var:
                m2 = y[:, 2] / _em.where(w > 0, w, 1.0)
                w2 = y[:, 3]
                biased = _em.maximum(m2 - mean * mean, 0.0)
                out_var = (biased, w * w, w * w - w2)
            return mean, s, out_var, v
        a, b = self._steps(valid, for_mean=not var)
        cs = [b * x] + ([b * x * x, b * b] if var else [])
        asx = [a] + ([a, a * a] if var else [])
        y = linear_scan(_em.stack(asx, axis=1), _em.stack(cs, axis=1))
        mean = y[:, 0]
        out_var = None
        if var:
            biased = _em.maximum(y[:, 1] - mean * mean, 0.0)
            one = _em.ones_like(mean)
            out_var = (biased, one, one - y[:, 2])
        return mean, None, out_var, v

    @staticmethod
    def _hold(out, valid):
        """Each row's value at its last observation (pandas' output between observations; the
        decayed ratios are equal there, but 0/0 once the weights underflow)."""
        n = valid.shape[0]
        idx = _em.arange(n, dtype=_em.int64, device=valid.device)
        seen = _em.where(valid, idx, -1)
        step = 1
        while step < n:
            seen = _em.concatenate([seen[:step], _em.maximum(seen[step:], seen[:-step])])
            step *= 2
        return _em.where(seen >= 0, _em.take(out, _em.clip(seen, 0, None)), np.nan)

    def _finish(self, out, v):
        nobs = _em.cumsum(v)
        ok = nobs >= max(self.min_periods, 1)
        return Column(np.dtype("float64"), _em.where(ok, out, np.nan))

    def _one(self, col, how, bias):
        who = f"ewm.{how}"
        if how == "sum" and not self.adjust:
            raise NotImplementedError("sum is not implemented with adjust=False")
        var = how in ("var", "std")
        mean, s, vv, v = self._moments(col, who, var)
        valid = v > 0
        if how == "mean":
            return self._finish(self._hold(mean, valid), v)
        if how == "sum":
            return self._finish(s, v)
        biased, num, den = vv
        if bias:
            out = biased
        else:
            out = _em.where(den > 0, biased * num / _em.where(den > 0, den, 1.0), np.nan)
        if how == "std":
            out = _em.sqrt(out)
        return self._finish(self._hold(out, valid), v)

    def _apply(self, how, bias=False):
        from .dataframe import DataFrame

        obj = self._obj
        if isinstance(obj, DataFrame):
            return DataFrame._from_columns(
                {k: self._one(c, how, bias) for k, c in obj._data.items()}, obj.index
            )
        return obj._with(self._one(obj._col, how, bias))

    def mean(self, numeric_only=False):
        return self._apply("mean")

    def sum(self, numeric_only=False):
        return self._apply("sum")

    def var(self, bias=False, numeric_only=False):
        return self._apply("var", bias)

    def std(self, bias=False, numeric_only=False):
        return self._apply("std", bias)


class Expanding(Rolling):
    """``obj.expanding(min_periods=1)``: a rolling window as long as the data (prefix scans)."""

    def __init__(self, obj, min_periods=1, axis=0, method="single"):
        if axis not in (0, "index", "rows"):
            raise ValueError(f"ember.frame.expanding: axis={axis!r}")
        if min_periods is None or min_periods < 0:
            raise ValueError("min_periods must be >= 0")
        self._obj = obj
        self.window = max(len(obj), 1)
        self.center = False
        self.min_periods = int(min_periods)
