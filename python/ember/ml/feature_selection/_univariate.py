"""Univariate feature scores (``f_classif``, ``f_regression``, ``r_regression``, ``chi2``)
and the selectors ``SelectKBest``, ``SelectPercentile``, ``VarianceThreshold``.

Scores are ember reductions on X's device (class sums as one matmul with the one-hot label
matrix); p-values use the regularised incomplete beta function (a Lentz continued fraction
evaluated elementwise on the device) and ``ember.special.gammaincc``. The kept-feature mask is
host bookkeeping (one boolean per feature); the columns are gathered on the device.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

import ember

from ..base import BaseEstimator, TransformerMixin
from ..utils._labels import encode_labels
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    check_X_y,
    input_kind,
    to_device,
    to_output,
)

__all__ = [
    "SelectKBest",
    "SelectPercentile",
    "VarianceThreshold",
    "chi2",
    "f_classif",
    "f_regression",
    "r_regression",
]


def _betainc(a, b, x):
    """Regularised incomplete beta I_x(a, b) for scalar a, b and an ember array x."""
    from math import lgamma

    x = ember.clip(x, 0.0, 1.0)
    flip = x > (a + 1) / (a + b + 2)
    xs = ember.where(flip, 1 - x, x)
    aa = ember.where(flip, float(b), float(a))
    bb = ember.where(flip, float(a), float(b))
    tiny = 1e-300
    qab, qap, qam = aa + bb, aa + 1, aa - 1
    c = ember.ones_like(xs)
    d = 1 - qab * xs / qap
    d = 1 / ember.where(ember.abs(d) < tiny, tiny, d)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        num = m * (bb - m) * xs / ((qam + m2) * (aa + m2))
        d = 1 + num * d
        d = 1 / ember.where(ember.abs(d) < tiny, tiny, d)
        c = 1 + num / c
        c = ember.where(ember.abs(c) < tiny, tiny, c)
        h = h * d * c
        num = -(aa + m) * (qab + m) * xs / ((aa + m2) * (qap + m2))
        d = 1 + num * d
        d = 1 / ember.where(ember.abs(d) < tiny, tiny, d)
        c = 1 + num / c
        c = ember.where(ember.abs(c) < tiny, tiny, c)
        delta = d * c
        h = h * delta
        if m % 20 == 0 and bool((ember.abs(delta - 1) < 1e-15).all()):
            break
    lbeta = lgamma(a + b) - lgamma(a) - lgamma(b)
    safe = ember.clip(xs, 1e-300, 1.0)
    safe1 = ember.clip(1 - xs, 1e-300, 1.0)
    front = ember.exp(
        lbeta + aa * ember.log(safe) + bb * ember.log(safe1) - ember.log(aa)
    )  # symmetric in a, b
    val = front * h
    val = ember.where(xs <= 0, 0.0, ember.where(xs >= 1, 1.0, val))
    return ember.where(flip, 1 - val, val)


def _f_sf(f, d1, d2):
    """Survival function of the F(d1, d2) distribution (NaN stays NaN)."""
    x = d2 / (d2 + d1 * ember.where(ember.isnan(f), 0.0, f))
    p = _betainc(d2 / 2.0, d1 / 2.0, x)
    p = ember.where(ember.isinf(f), 0.0, p)
    return ember.where(ember.isnan(f), float("nan"), p)


def _one_hot(y, device):
    classes, idx = encode_labels(y, device)
    K = int(classes.shape[0])
    return (idx[:, None] == ember.arange(K, device=device)[None, :]).astype(ember.float64)


def f_classif(X, y):
    """ANOVA F-statistic of each feature against the classes, and its p-value."""
    Xa, ya = check_X_y(X, y, estimator="f_classif")
    kind = input_kind(X)
    Xf = Xa.astype(ember.float64)
    Y = _one_hot(ya if input_kind(y) == "ember" else ember.asnumpy(ya), Xa.device)
    n, k = float(Xf.shape[0]), int(Y.shape[1])
    counts = Y.sum(axis=0)
    S = ember.matmul(Y.T, Xf)
    total = Xf.sum(axis=0)
    ss_all = (Xf * Xf).sum(axis=0)
    sq_tot = total * total / n
    ssbn = (S * S / counts[:, None]).sum(axis=0) - sq_tot
    sswn = ss_all - sq_tot - ssbn
    dfbn, dfwn = k - 1, n - k
    msb, msw = ssbn / dfbn, sswn / dfwn
    const = ember.asnumpy(Xf.max(axis=0) == Xf.min(axis=0))
    if const.any():
        warnings.warn(f"Features {np.flatnonzero(const)} are constant.", UserWarning, stacklevel=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = msb / msw
    f = ember.where(to_device(const, Xa.device), float("nan"), f)
    p = _f_sf(f, float(dfbn), float(dfwn))
    return to_output(f, kind), to_output(p, kind)


def _corr(Xa, ya, center, force_finite):
    Xf, yf = Xa.astype(ember.float64), ya.astype(ember.float64)
    n = float(Xf.shape[0])
    if center:
        yf = yf - yf.mean()
        xm = Xf.mean(axis=0)
        xn = ember.sqrt(ember.maximum((Xf * Xf).sum(axis=0) - n * xm * xm, 0.0))
    else:
        xn = ember.sqrt((Xf * Xf).sum(axis=0))
    den = xn * ember.sqrt((yf * yf).sum())
    r = ember.matmul(yf, Xf) / ember.where(den == 0, 1.0, den)
    return ember.where(den == 0, 0.0 if force_finite else float("nan"), r)


def r_regression(X, y, *, center=True, force_finite=True):
    """Pearson correlation of each feature with the target."""
    Xa, ya = check_X_y(X, y, estimator="r_regression", y_numeric=True)
    return to_output(_corr(Xa, ya, center, force_finite), input_kind(X))


def f_regression(X, y, *, center=True, force_finite=True):
    """F-statistic of each feature's univariate linear regression on y, and its p-value."""
    Xa, ya = check_X_y(X, y, estimator="f_regression", y_numeric=True)
    r = _corr(Xa, ya, center, force_finite)
    dof = int(Xa.shape[0]) - (2 if center else 1)
    r2 = r * r
    f = r2 / (1 - r2) * dof
    p = _f_sf(f, 1.0, float(dof))
    if force_finite:
        inf, nan = ember.isinf(f), ember.isnan(f)
        f = ember.where(inf, float(np.finfo(np.float64).max), ember.where(nan, 0.0, f))
        p = ember.where(inf, 0.0, ember.where(nan, 1.0, p))
    kind = input_kind(X)
    return to_output(f, kind), to_output(p, kind)


def chi2(X, y):
    """Chi-squared statistic of each non-negative feature against the classes, and its
    p-value."""
    Xa, ya = check_X_y(X, y, estimator="chi2")
    Xf = Xa.astype(ember.float64)
    if bool((Xf < 0).any()):
        raise ValueError("Input X must be non-negative.")
    Y = _one_hot(ya if input_kind(y) == "ember" else ember.asnumpy(ya), Xa.device)
    if Y.shape[1] == 1:
        Y = ember.concatenate([1 - Y, Y], axis=1)
    observed = ember.matmul(Y.T, Xf)
    expected = Y.mean(axis=0)[:, None] * Xf.sum(axis=0)[None, :]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stat = ((observed - expected) ** 2 / expected).sum(axis=0)
    k = int(Y.shape[1])
    p = ember.special.gammaincc((k - 1) / 2.0, stat / 2.0)
    kind = input_kind(X)
    return to_output(stat, kind), to_output(p, kind)


class _Selector(TransformerMixin, BaseEstimator):
    """``get_support``, ``transform`` (columns gathered on the device), ``inverse_transform``
    and ``get_feature_names_out`` from ``_get_support_mask``."""

    def get_support(self, indices=False):
        mask = self._get_support_mask()
        return np.flatnonzero(mask) if indices else mask

    def transform(self, X):
        check_is_fitted(self, "n_features_in_")
        Xa = check_array(X, estimator=self, dtype=None, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=False)
        mask = self._get_support_mask()
        if not mask.any():
            warnings.warn(
                "No features were selected: either the data is too noisy or the selection test "
                "too strict.",
                UserWarning,
                stacklevel=2,
            )
        idx = to_device(np.flatnonzero(mask).astype(np.int64), Xa.device)
        return to_output(ember.take(Xa, idx, axis=1), input_kind(X))

    def inverse_transform(self, X):
        mask = self._get_support_mask()
        Xa = check_array(X, dtype=None)
        if Xa.shape[1] != int(mask.sum()):
            raise ValueError("X has a different shape than during fitting.")
        E = np.zeros((int(mask.sum()), mask.size))
        E[np.arange(int(mask.sum())), np.flatnonzero(mask)] = 1.0
        out = ember.matmul(Xa, to_device(E, Xa.device).astype(Xa.dtype))
        return to_output(out, input_kind(X))

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "n_features_in_")
        names = input_features
        if names is None:
            names = getattr(self, "feature_names_in_", None)
            if names is None:
                names = [f"x{i}" for i in range(self.n_features_in_)]
        names = np.asarray([str(n) for n in names], dtype=object)
        return names[self._get_support_mask()]


class _BaseFilter(_Selector):
    def fit(self, X, y=None):
        """Score every feature with ``score_func``."""
        self._validate_params()
        if y is None:
            raise TypeError(
                "SelectKBest.fit() missing 1 required positional argument: 'y'"
                if isinstance(self, SelectKBest)
                else f"{type(self).__name__}.fit() missing 1 required positional argument: 'y'"
            )
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=True)
        self._check_params(Xa)
        res = self.score_func(X, y)
        if isinstance(res, (list, tuple)):
            self.scores_, self.pvalues_ = res
        else:
            self.scores_, self.pvalues_ = res, None
        return self

    def _scores_host(self):
        s = np.asarray(
            ember.asnumpy(self.scores_)
            if isinstance(self.scores_, ember.ndarray)
            else self.scores_,
            dtype=np.float64,
        )
        return np.where(np.isnan(s), np.finfo(np.float64).min, s)


class SelectKBest(_BaseFilter):
    """Keep the ``k`` highest-scoring features (ties: the later feature, a stable sort)."""

    _parameter_constraints = {
        "score_func": [callable],
        "k": [StrOptions({"all"}), Interval(numbers.Integral, 0, None, closed="left")],
    }

    def __init__(self, score_func=f_classif, *, k=10):
        self.score_func = score_func
        self.k = k

    def _check_params(self, X):
        if not isinstance(self.k, str) and self.k > X.shape[1]:
            warnings.warn(
                f"k={self.k} is greater than n_features={X.shape[1]}. All the features will be "
                "returned.",
                UserWarning,
                stacklevel=3,
            )

    def _get_support_mask(self):
        check_is_fitted(self, "scores_")
        s = self._scores_host()
        if self.k == "all" or self.k >= s.size:
            return np.ones(s.size, dtype=bool)
        mask = np.zeros(s.size, dtype=bool)
        if self.k == 0:
            return mask
        mask[np.argsort(s, kind="mergesort")[-self.k :]] = True
        return mask


class SelectPercentile(_BaseFilter):
    """Keep the top ``percentile`` percent of the features by score."""

    _parameter_constraints = {
        "score_func": [callable],
        "percentile": [Interval(numbers.Real, 0, 100, closed="both")],
    }

    def __init__(self, score_func=f_classif, *, percentile=10):
        self.score_func = score_func
        self.percentile = percentile

    def _check_params(self, X):
        pass

    def _get_support_mask(self):
        check_is_fitted(self, "scores_")
        s = self._scores_host()
        if self.percentile == 100:
            return np.ones(s.size, dtype=bool)
        if self.percentile == 0:
            return np.zeros(s.size, dtype=bool)
        thr = np.percentile(s, 100 - self.percentile)
        mask = s > thr
        ties = np.flatnonzero(s == thr)
        if ties.size:
            room = int(s.size * self.percentile / 100) - int(mask.sum())
            mask[ties[: max(room, 0)]] = True
        return mask


class VarianceThreshold(_Selector):
    """Drop the features whose variance is not above ``threshold``."""

    _allow_nan = True
    _parameter_constraints = {"threshold": [Interval(numbers.Real, 0, None, closed="left")]}

    def __init__(self, threshold=0.0):
        self.threshold = threshold

    def fit(self, X, y=None):
        self._validate_params()
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=True)
        Xf = Xa.astype(ember.float64)
        var = ember.nanvar(Xf, axis=0)
        if self.threshold == 0:  # the range too, so float round-off cannot keep a constant
            ptp = ember.nanmax(Xf, axis=0) - ember.nanmin(Xf, axis=0)
            var = ember.minimum(var, ptp)
        self.variances_ = to_output(var, input_kind(X))
        v = ember.asnumpy(var)
        if np.all(~np.isfinite(v) | (v <= self.threshold)):
            msg = f"No feature in X meets the variance threshold {self.threshold:.5f}"
            if Xa.shape[0] == 1:
                msg += " (X contains only one sample)"
            raise ValueError(msg)
        return self

    def _get_support_mask(self):
        check_is_fitted(self, "variances_")
        v = self.variances_
        v = ember.asnumpy(v) if isinstance(v, ember.ndarray) else np.asarray(v)
        return v > self.threshold
