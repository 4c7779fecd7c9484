"""``IsotonicRegression``, ``isotonic_regression`` and ``check_increasing`` (scikit-learn's
``sklearn.isotonic``).

Sorting by (x, y), merging equal x into weighted means and the final linear interpolation
(SciPy ``interp1d``'s formula, so predictions equal scikit-learn's) run as ember ops on the
data's device. The pool-adjacent-violators pass itself is sequential: it runs on an explicit
host copy of the m merged values and weights (O(m) Python steps), and only its m fitted
values go back to the device.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

import ember

from .base import BaseEstimator, RegressorMixin, TransformerMixin
from .utils._param_validation import Interval, StrOptions
from .utils.validation import _host as _host_view
from .utils.validation import (
    check_is_fitted,
    device_of,
    input_kind,
    is_ember,
    to_device,
    to_output,
)

__all__ = ["IsotonicRegression", "check_increasing", "isotonic_regression"]


def _as_1d(x, name, who, dev=None, dtype=None):
    h = _host_view(x)
    a = to_device(h, dev if dev is not None else device_of(x))
    if a.dtype not in (ember.float32, ember.float64):
        a = a.astype(ember.float64)
    if dtype is not None:
        a = a.astype(dtype)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a.reshape(-1)
    if a.ndim != 1:
        raise ValueError(
            f"{who}: Isotonic regression input {name} should be a 1d array or 2d array with 1 "
            f"feature, got shape {tuple(a.shape)}"
        )
    if a.shape[0] and not bool(ember.isfinite(a).all()):
        raise ValueError(f"Input {name} contains NaN or infinity. ({who})")
    return a


def _pava(y, w):
    """Weighted pool-adjacent-violators (non-decreasing fit) of host arrays."""
    n = len(y)
    vals, wts, lens = [0.0] * n, [0.0] * n, [0] * n
    top = -1
    for i in range(n):
        top += 1
        vals[top], wts[top], lens[top] = float(y[i]), float(w[i]), 1
        while top > 0 and vals[top - 1] > vals[top]:
            wsum = wts[top - 1] + wts[top]
            vals[top - 1] = (wts[top - 1] * vals[top - 1] + wts[top] * vals[top]) / wsum
            wts[top - 1] = wsum
            lens[top - 1] += lens[top]
            top -= 1
    return np.repeat(np.asarray(vals[: top + 1]), lens[: top + 1])


def _isotonic(y, w, y_min, y_max, increasing):
    """Isotonic fit of ember y (already sorted by x) with weights w; returns an ember array."""
    dev = y.device
    yh = ember.asnumpy(y.astype(ember.float64))
    wh = ember.asnumpy(w.astype(ember.float64))
    if not increasing:
        yh, wh = yh[::-1], wh[::-1]
    fit = _pava(yh, wh) if len(yh) else yh
    if not increasing:
        fit = fit[::-1]
    out = ember.asarray(np.ascontiguousarray(fit), device=dev).astype(y.dtype)
    if y_min is not None or y_max is not None:
        lo = -math.inf if y_min is None else float(y_min)
        hi = math.inf if y_max is None else float(y_max)
        out = ember.clip(out, lo, hi)
    return out


def isotonic_regression(y, *, sample_weight=None, y_min=None, y_max=None, increasing=True):
    """The isotonic (non-decreasing, or non-increasing) least-squares fit of ``y`` in order."""
    who = "isotonic_regression"
    ya = _as_1d(y, "y", who)
    w = (
        ember.ones(ya.shape, dtype=ya.dtype, device=ya.device)
        if sample_weight is None
        else _as_1d(sample_weight, "sample_weight", who, ya.device, ya.dtype)
    )
    if w.shape != ya.shape:
        raise ValueError(
            f"{who}: sample_weight.shape == {tuple(w.shape)}, expected {tuple(ya.shape)}!"
        )
    return to_output(_isotonic(ya, w, y_min, y_max, increasing), input_kind(y))


def _avg_ranks(x):
    s = ember.sort(x)
    left = ember.searchsorted(s, x, side="left")
    right = ember.searchsorted(s, x, side="right")
    return (left + right - 1).astype(ember.float64) / 2.0


def check_increasing(x, y):
    """Whether y tends to increase with x (Spearman's rho >= 0), warning when its 95%
    confidence interval spans zero."""
    who = "check_increasing"
    xa = _as_1d(x, "x", who)
    ya = _as_1d(y, "y", who, xa.device)
    rx, ry = _avg_ranks(xa), _avg_ranks(ya)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    den = float(ember.sqrt((rx * rx).sum() * (ry * ry).sum()))
    rho = float((rx * ry).sum()) / den if den > 0 else math.nan
    increasing = bool(rho >= 0)
    n = int(xa.shape[0])
    if rho not in (-1.0, 1.0) and n > 3 and not math.isnan(rho):
        F = 0.5 * math.log((1.0 + rho) / (1.0 - rho))
        se = 1 / math.sqrt(n - 3)
        lo, hi = math.tanh(F - 1.96 * se), math.tanh(F + 1.96 * se)
        if np.sign(lo) != np.sign(hi):
            warnings.warn(
                "Confidence interval of the Spearman correlation coefficient spans zero. "
                "Determination of ``increasing`` may be suspect.",
                UserWarning,
                stacklevel=2,
            )
    return increasing


class IsotonicRegression(RegressorMixin, TransformerMixin, BaseEstimator):
    """Isotonic regression: the monotone step-wise-linear fit of y on one feature."""

    _parameter_constraints = {
        "y_min": [Interval(numbers.Real, None, None, closed="both"), None],
        "y_max": [Interval(numbers.Real, None, None, closed="both"), None],
        "increasing": ["boolean", StrOptions({"auto"})],
        "out_of_bounds": [StrOptions({"nan", "clip", "raise"})],
    }

    def __init__(self, *, y_min=None, y_max=None, increasing=True, out_of_bounds="nan"):
        self.y_min = y_min
        self.y_max = y_max
        self.increasing = increasing
        self.out_of_bounds = out_of_bounds

    def _build_y(self, X, y, sample_weight):
        who = type(self).__name__
        Xa = _as_1d(X, "X", who)
        dev = Xa.device
        ya = _as_1d(y, "y", who, dev)
        if ya.shape[0] != Xa.shape[0]:
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"[{int(Xa.shape[0])}, {int(ya.shape[0])}]"
            )
        if Xa.shape[0] == 0:
            raise ValueError(
                f"Found array with 0 sample(s) (shape=(0,)) while a minimum of 1 is required "
                f"by {who}."
            )
        ya = ya.astype(Xa.dtype)
        if self.increasing == "auto":
            self.increasing_ = check_increasing(Xa, ya)
        else:
            self.increasing_ = bool(self.increasing)
        if sample_weight is None:
            w = ember.ones(Xa.shape, dtype=Xa.dtype, device=dev)
        else:
            w = _as_1d(sample_weight, "sample_weight", who, dev, Xa.dtype)
            if w.shape != Xa.shape:
                raise ValueError(
                    f"sample_weight.shape == {tuple(w.shape)}, expected {tuple(Xa.shape)}!"
                )
        keep = ember.nonzero(w > 0)[0]
        Xa, ya, w = ember.take(Xa, keep), ember.take(ya, keep), ember.take(w, keep)
        order = ember.lexsort((ya, Xa))
        Xs, ys, ws = ember.take(Xa, order), ember.take(ya, order), ember.take(w, order)
        # merge equal x: weighted mean of y, summed weight
        m = int(Xs.shape[0])
        res = float(np.finfo(np.float64 if Xs.dtype == ember.float64 else np.float32).resolution)
        new = ember.concatenate(
            [ember.ones((1,), dtype=ember.bool, device=dev), (Xs[1:] - Xs[:-1]) >= res]
        )
        grp = ember.cumsum(new.astype(ember.int64)) - 1
        G = int(grp[-1]) + 1 if m else 0
        wsum = ember.bincount(grp, weights=ws.astype(ember.float64), minlength=G)
        ysum = ember.bincount(grp, weights=(ws * ys).astype(ember.float64), minlength=G)
        first = ember.nonzero(new)[0]
        ux = ember.take(Xs, first)
        uy = (ysum / wsum).astype(Xs.dtype)
        fit = _isotonic(uy, wsum, self.y_min, self.y_max, self.increasing_)
        self.X_min_, self.X_max_ = float(ux.min()), float(ux.max())
        if G > 2:  # keep the ends of every constant run only
            inner = (fit[1:-1] != fit[:-2]) | (fit[1:-1] != fit[2:])
            one = ember.ones((1,), dtype=ember.bool, device=dev)
            kept = ember.nonzero(ember.concatenate([one, inner, one]))[0]
            ux, fit = ember.take(ux, kept), ember.take(fit, kept)
        return ux, fit

    def fit(self, X, y, sample_weight=None):
        """Fit the isotonic curve of y on X (1-d, or 2-d with one column)."""
        self._validate_params()
        Xt, yt = self._build_y(X, y, sample_weight)
        self._Xt, self._yt = Xt, yt
        self._kind = input_kind(X)
        h = _host_view(X)
        self.n_features_in_ = 1
        if getattr(h, "ndim", 1) == 2 and hasattr(X, "columns"):
            self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        else:
            self.__dict__.pop("feature_names_in_", None)
        return self

    @property
    def X_thresholds_(self):
        check_is_fitted(self, "_Xt")
        return to_output(self._Xt, self._kind)

    @property
    def y_thresholds_(self):
        check_is_fitted(self, "_Xt")
        return to_output(self._yt, self._kind)

    def _transform(self, T):
        check_is_fitted(self, "_Xt")
        who = type(self).__name__
        dev = self._Xt.device
        Ta = _as_1d(T, "T", who, dev) if not is_ember(T) else _as_1d(T, "T", who, T.device)
        Ta = to_device(Ta, dev)
        dtype = Ta.dtype
        xt, yt = self._Xt.astype(ember.float64), self._yt.astype(ember.float64)
        t = Ta.astype(ember.float64)
        if self.out_of_bounds == "clip":
            t = ember.clip(t, self.X_min_, self.X_max_)
        m = int(xt.shape[0])
        if m == 1:
            out = ember.full(t.shape, float(yt[0]), dtype=ember.float64, device=dev)
        else:
            below, above = t < xt[0], t > xt[-1]
            if self.out_of_bounds == "raise":
                if bool(below.any()):
                    raise ValueError(f"{who}: A value in x_new is below the interpolation range.")
                if bool(above.any()):
                    raise ValueError(f"{who}: A value in x_new is above the interpolation range.")
            hi = ember.clip(ember.searchsorted(xt, t, side="left"), 1, m - 1)
            lo = hi - 1
            x0, x1 = ember.take(xt, lo), ember.take(xt, hi)
            y0, y1 = ember.take(yt, lo), ember.take(yt, hi)
            out = (y1 - y0) / (x1 - x0) * (t - x0) + y0
            if self.out_of_bounds == "nan":
                out = ember.where(below | above, math.nan, out)
        return out.astype(dtype)

    def transform(self, T):
        """The fitted curve at T (linear between the thresholds)."""
        return to_output(self._transform(T), input_kind(T))

    def predict(self, T):
        """The fitted curve at T (same as ``transform``)."""
        return self.transform(T)

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "_Xt")
        return np.asarray(["isotonicregression0"], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.one_d_array = True
        tags.input_tags.two_d_array = False
        return tags
