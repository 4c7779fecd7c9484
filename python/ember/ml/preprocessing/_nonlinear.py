"""``QuantileTransformer``, ``PowerTransformer`` and ``KBinsDiscretizer`` (scikit-learn's
``sklearn.preprocessing``), computed with ember ops on X's device.

The power transforms' lambdas maximise each column's profile log-likelihood (as scikit-learn's
Brent search does) by a device-wide search over all columns at once: a grid over [-10, 10]
brackets the optimum, then golden-section steps shrink the bracket to ~1e-12.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

import ember

from ..base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    check_random_state,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["PowerTransformer", "QuantileTransformer", "quantile_transform"]

_BOUNDS = 1e-7


def _subsample_rows(Xa, subsample, random_state):
    n = int(Xa.shape[0])
    if subsample is None or n <= subsample:
        return Xa
    rng = check_random_state(random_state)
    idx = rng.permutation(n)[:subsample]
    return ember.take(Xa, to_device(idx, Xa.device), axis=0)


class QuantileTransformer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Map each feature through its empirical CDF to a uniform or normal distribution."""

    _allow_nan = True
    _parameter_constraints = {
        "n_quantiles": [Interval(numbers.Integral, 1, None, closed="left")],
        "output_distribution": [StrOptions({"uniform", "normal"})],
        "ignore_implicit_zeros": ["boolean"],
        "subsample": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "copy": ["boolean"],
    }

    def __init__(
        self,
        *,
        n_quantiles=1000,
        output_distribution="uniform",
        ignore_implicit_zeros=False,
        subsample=10_000,
        random_state=None,
        copy=True,
    ):
        self.n_quantiles = n_quantiles
        self.output_distribution = output_distribution
        self.ignore_implicit_zeros = ignore_implicit_zeros
        self.subsample = subsample
        self.random_state = random_state
        self.copy = copy

    def fit(self, X, y=None):
        """Compute ``n_quantiles_`` quantiles of every feature (NaNs ignored)."""
        self._validate_params()
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=True)
        n = int(Xa.shape[0])
        if self.subsample is not None and self.n_quantiles > self.subsample:
            raise ValueError(
                f"The number of quantiles cannot be greater than the number of samples used. "
                f"Got {self.n_quantiles} quantiles and {self.subsample} samples."
            )
        self.n_quantiles_ = max(1, min(self.n_quantiles, n))
        if self.n_quantiles > n:
            warnings.warn(
                f"n_quantiles ({self.n_quantiles}) is greater than the total number of samples "
                f"({n}). n_quantiles is set to n_samples.",
                UserWarning,
                stacklevel=2,
            )
        refs = np.linspace(0, 1, self.n_quantiles_, endpoint=True)
        sub = _subsample_rows(Xa, self.subsample, self.random_state)
        q = ember.nanpercentile(sub, (refs * 100).tolist(), axis=0)
        q = ember.cummax(q, 0).values  # monotone despite rounding, as scikit-learn enforces
        kind = input_kind(X)
        self.quantiles_ = to_output(q, kind)
        self.references_ = refs
        return self

    def _transform(self, Xa, inverse):
        q = to_device(self.quantiles_, Xa.device).astype(ember.float64)
        refs = ember.asarray(self.references_, device=Xa.device)
        X = Xa.astype(ember.float64)
        normal = self.output_distribution == "normal"
        cols = []
        for j in range(X.shape[1]):
            x = X[:, j]
            qj = q[:, j]
            nan = ember.isnan(x)
            if inverse:
                lo_x, hi_x, lo_y, hi_y = 0.0, 1.0, qj[0], qj[-1]
                if normal:
                    x = ember.special.ndtr(x)
            else:
                lo_x, hi_x, lo_y, hi_y = qj[0], qj[-1], 0.0, 1.0
            if normal:
                lo = x - _BOUNDS < lo_x
                hi = x + _BOUNDS > hi_x
            else:
                lo = x == lo_x
                hi = x == hi_x
            xs = ember.where(nan, 0.0, x)
            if inverse:
                v = ember.interp(xs, refs, qj)
            else:  # the mean of the left and right interpolations handles repeated quantiles
                v = 0.5 * (
                    ember.interp(xs, qj, refs)
                    - ember.interp(-xs, -ember.flip(qj, axis=0), -ember.flip(refs, axis=0))
                )
            v = ember.where(hi, hi_y, v)
            v = ember.where(lo, lo_y, v)
            if normal and not inverse:
                eps = float(np.spacing(1))
                v = ember.special.ndtri(v)
                c_min = float(ember.special.ndtri(ember.asarray(_BOUNDS - eps)))
                c_max = float(ember.special.ndtri(ember.asarray(1 - (_BOUNDS - eps))))
                v = ember.clip(v, c_min, c_max)
            cols.append(ember.where(nan, float("nan"), v))
        return ember.stack(cols, axis=1).astype(Xa.dtype)

    def transform(self, X):
        check_is_fitted(self, "quantiles_")
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=False)
        return to_output(self._transform(Xa, False), input_kind(X))

    def inverse_transform(self, X):
        check_is_fitted(self, "quantiles_")
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=False)
        return to_output(self._transform(Xa, True), input_kind(X))


def quantile_transform(
    X,
    *,
    axis=0,
    n_quantiles=1000,
    output_distribution="uniform",
    ignore_implicit_zeros=False,
    subsample=100_000,
    random_state=None,
    copy=True,
):
    """Functional form of ``QuantileTransformer`` (``axis=1`` transforms the rows)."""
    qt = QuantileTransformer(
        n_quantiles=n_quantiles,
        output_distribution=output_distribution,
        ignore_implicit_zeros=ignore_implicit_zeros,
        subsample=subsample,
        random_state=random_state,
        copy=copy,
    )
    if axis == 0:
        return qt.fit_transform(X)
    if axis == 1:
        return qt.fit_transform(X.T).T
    raise ValueError(f"axis should be either equal to 0 or 1. Got axis={axis}")


# ------------------------------------------------------------------------ power transforms


def _yeo_johnson(x, lmb):
    """Yeo-Johnson of x with one lambda per column (broadcast over rows)."""
    tiny = float(np.spacing(1.0))
    pos = x >= 0
    xp_ = ember.log1p(ember.where(pos, x, 0.0))
    xn_ = ember.log1p(-ember.where(pos, 0.0, x))
    l0 = ember.abs(lmb) < tiny
    l2 = ember.abs(lmb - 2) < tiny
    safe_l = ember.where(l0, 1.0, lmb)
    safe_2 = ember.where(l2, 1.0, 2 - lmb)
    tp = ember.where(l0, xp_, ember.expm1(lmb * xp_) / safe_l)
    tn = ember.where(l2, -xn_, -ember.expm1((2 - lmb) * xn_) / safe_2)
    return ember.where(pos, tp, tn)


def _box_cox(x, lmb):
    tiny = float(np.spacing(1.0))
    lx = ember.log(x)
    l0 = ember.abs(lmb) < tiny
    return ember.where(l0, lx, ember.expm1(lmb * lx) / ember.where(l0, 1.0, lmb))


def _neg_loglik(X, valid, n, lmb, method, jac):
    """Minus the profile log-likelihood of each column at its lambda (inf at zero variance)."""
    T = (_yeo_johnson if method == "yeo-johnson" else _box_cox)(X, lmb[None, :])
    T = ember.where(valid, T, 0.0)
    mean = T.sum(axis=0) / n
    var = (ember.where(valid, (T - mean) ** 2, 0.0)).sum(axis=0) / n
    tiny = float(np.finfo(np.float64).tiny)
    ll = -n / 2 * ember.log(ember.where(var < tiny, 1.0, var)) + (lmb - 1) * jac
    bad = (var < tiny) | ember.isnan(var) | ember.isinf(var)
    return ember.where(bad, float("inf"), -ll)


def _optimal_lambdas(X, valid, method):
    """Per-column argmin of the negative log-likelihood: grid bracket + golden section."""
    dev = X.device
    n = valid.astype(ember.float64).sum(axis=0)
    Xs = ember.where(valid, X, 1.0 if method == "box-cox" else 0.0)
    if method == "yeo-johnson":
        jac = ember.where(valid, ember.sign(Xs) * ember.log1p(ember.abs(Xs)), 0.0).sum(axis=0)
    else:
        jac = ember.where(valid, ember.log(Xs), 0.0).sum(axis=0)
    d = int(X.shape[1])
    grid = np.linspace(-10.0, 10.0, 81)
    vals = []
    for g in grid:
        lmb = ember.full((d,), float(g), dtype=ember.float64, device=dev)
        vals.append(_neg_loglik(Xs, valid, n, lmb, method, jac))
    F = ember.stack(vals, axis=0)
    best = ember.argmin(ember.where(ember.isnan(F), float("inf"), F), axis=0)
    G = ember.asarray(grid, device=dev)
    a = ember.take(G, ember.clip(best - 1, 0, len(grid) - 1))
    b = ember.take(G, ember.clip(best + 1, 0, len(grid) - 1))
    r = (math.sqrt(5) - 1) / 2
    c = b - r * (b - a)
    e = a + r * (b - a)
    fc = _neg_loglik(Xs, valid, n, c, method, jac)
    fe = _neg_loglik(Xs, valid, n, e, method, jac)
    for _ in range(60):
        left = fc < fe  # the minimum lies in [a, e]
        a = ember.where(left, a, c)
        b = ember.where(left, e, b)
        new_c = b - r * (b - a)
        new_e = a + r * (b - a)
        c_next = ember.where(left, new_c, e)
        e_next = ember.where(left, c, new_e)
        f_new = _neg_loglik(Xs, valid, n, ember.where(left, new_c, new_e), method, jac)
        fc, fe = ember.where(left, f_new, fe), ember.where(left, fc, f_new)
        c, e = c_next, e_next
    return (a + b) / 2


class PowerTransformer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Yeo-Johnson or Box-Cox power transform per feature (maximum-likelihood lambdas), then
    zero mean and unit variance when ``standardize``."""

    _allow_nan = True
    _parameter_constraints = {
        "method": [StrOptions({"yeo-johnson", "box-cox"})],
        "standardize": ["boolean"],
        "copy": ["boolean"],
    }

    def __init__(self, method="yeo-johnson", *, standardize=True, copy=True):
        self.method = method
        self.standardize = standardize
        self.copy = copy

    def _check(self, X, reset):
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=reset)
        Xa = Xa.astype(ember.float64) if Xa.dtype != ember.float64 else Xa
        if self.method == "box-cox" and bool((Xa <= 0).any()):
            raise ValueError(
                "The Box-Cox transformation can only be applied to strictly positive data"
            )
        return Xa

    def fit(self, X, y=None):
        self._fit(X)
        return self

    def fit_transform(self, X, y=None):
        return self._fit(X)

    def _fit(self, X):
        self._validate_params()
        Xin = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        Xa = self._check(Xin, reset=True)
        valid = ~ember.isnan(Xa)
        lmb = _optimal_lambdas(Xa, valid, self.method)
        kind = input_kind(X)
        self.lambdas_ = to_output(lmb, kind)
        T = self._power(Xa, lmb)
        if self.standardize:
            from ._data import StandardScaler

            self._scaler = StandardScaler().fit(T)
            T = self._scaler.transform(T)
        return to_output(T.astype(Xin.dtype), kind)

    def _power(self, Xa, lmb, inverse=False):
        valid = ~ember.isnan(Xa)
        Xs = ember.where(valid, Xa, 1.0)
        L = lmb[None, :]
        if not inverse:
            T = (_yeo_johnson if self.method == "yeo-johnson" else _box_cox)(Xs, L)
        elif self.method == "box-cox":
            tiny = float(np.spacing(1.0))
            l0 = ember.abs(L) < tiny
            T = ember.where(
                l0, ember.exp(Xs), ember.exp(ember.log1p(Xs * L) / ember.where(l0, 1.0, L))
            )
        else:
            tiny = float(np.spacing(1.0))
            pos = Xs >= 0
            l0 = ember.abs(L) < tiny
            l2 = ember.abs(L - 2) < tiny
            xp_ = ember.where(pos, Xs, 0.0)
            xn_ = ember.where(pos, 0.0, Xs)
            tp = ember.where(
                l0, ember.expm1(xp_), ember.expm1(ember.log1p(xp_ * L) / ember.where(l0, 1.0, L))
            )
            tn = ember.where(
                l2,
                -ember.expm1(-xn_),
                -ember.expm1(ember.log1p(-(2 - L) * xn_) / ember.where(l2, 1.0, 2 - L)),
            )
            T = ember.where(pos, tp, tn)
        return ember.where(valid, T, float("nan"))

    def transform(self, X):
        check_is_fitted(self, "lambdas_")
        Xin = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        Xa = self._check(Xin, reset=False)
        T = self._power(Xa, to_device(self.lambdas_, Xa.device).astype(ember.float64))
        if self.standardize:
            T = self._scaler.transform(T)
        return to_output(T.astype(Xin.dtype), input_kind(X))

    def inverse_transform(self, X):
        check_is_fitted(self, "lambdas_")
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=False)
        T = Xa.astype(ember.float64)
        if self.standardize:
            T = self._scaler.inverse_transform(T)
        lmb = to_device(self.lambdas_, Xa.device).astype(ember.float64)
        return to_output(self._power(T, lmb, inverse=True).astype(Xa.dtype), input_kind(X))
