"""Generalized linear models: ``PoissonRegressor``, ``GammaRegressor``, ``TweedieRegressor``.

scikit-learn's objective: the (sample-weighted) mean half Tweedie deviance of y given
mu = h(X w + b) (h = exp for the log link, the identity otherwise) plus ``alpha/2 |w|^2``.
Loss and gradient are ember expressions on X's device in float64 (one matmul each way);
the minimiser is ``utils._optimize.lbfgs_minimize`` (scikit-learn's 'lbfgs' solver is
scipy's L-BFGS-B; both reach the same minimiser of this smooth strictly convex problem).
The run continues to ``tol * 1e-4`` on max |gradient| so coefficients agree with an exact
solution to ~1e-6; it counts as converged (no warning) once max |gradient| <= ``tol``.
The intercept starts at link(mean y), the coefficients at 0, as scikit-learn's.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import ember

from ..base import RegressorMixin
from ..exceptions import ConvergenceWarning
from ..utils._optimize import lbfgs_minimize
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    check_sample_weight,
    input_kind,
    to_device,
    to_output,
)
from ._base import LinearModel, fit_xy

__all__ = ["GammaRegressor", "PoissonRegressor", "TweedieRegressor"]


def _half_loss_grad(raw, y, power, log_link):
    """Per-sample half Tweedie deviance (up to terms free of ``raw``) and its derivative in
    the raw prediction."""
    p = power
    if log_link:
        if p == 1:
            e = ember.exp(raw)
            return e - y * raw, e - y
        if p == 2:
            e = ember.exp(-raw)
            return raw + y * e, 1 - y * e
        e1, e2 = ember.exp(raw * (1 - p)), ember.exp(raw * (2 - p))
        return e2 / (2 - p) - y * e1 / (1 - p), e2 - y * e1
    mu = raw
    if p == 0:
        return 0.5 * (mu - y) ** 2, mu - y
    if p == 1:
        return mu - y * ember.log(mu), 1 - y / mu
    if p == 2:
        return ember.log(mu) + y / mu, 1 / mu - y / mu**2
    return mu ** (2 - p) / (2 - p) - y * mu ** (1 - p) / (1 - p), mu ** (1 - p) - y * mu ** (-p)


def _y_ok(y, power):
    if power <= 0:
        return True
    if power < 2:
        return bool((y >= 0).all())
    return bool((y > 0).all())


class _GeneralizedLinearRegressor(RegressorMixin):
    _multi_output = False
    _parameter_constraints = {
        "alpha": [Interval(Real, 0.0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "solver": [StrOptions({"lbfgs", "newton-cholesky"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "warm_start": ["boolean"],
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
    }
    _loss_name = "HalfSquaredError"

    def _power_link(self):
        """(Tweedie power, log link?) of the model's distribution."""
        return 0.0, False

    def fit(self, X, y, sample_weight=None):
        """Minimise the penalised mean deviance; sets ``coef_``, ``intercept_``, ``n_iter_``."""
        self._validate_params()
        power, log_link = self._power_link()
        Xa, ya, _ = fit_xy(self, X, y, None, multi_output=False)
        f64 = ember.float64
        X64, y64 = Xa.astype(f64), ya.astype(f64)
        if not _y_ok(y64, power):
            raise ValueError(
                f"Some value(s) of y are out of the valid range of the loss {self._loss_name!r}."
            )
        sw = check_sample_weight(sample_weight, X64).astype(f64)
        sw = sw / sw.sum()
        n, d = X64.shape
        fi = self.fit_intercept
        dev = Xa.device
        if self.warm_start and hasattr(self, "coef_"):
            parts = [to_device(self.coef_, dev).astype(f64)]
            if fi:
                parts.append(ember.asarray([float(self.intercept_)], device=dev).astype(f64))
            theta0 = ember.concatenate(parts)
        else:
            theta0 = ember.zeros((d + (1 if fi else 0),), dtype=f64, device=dev)
            if fi:
                m = float((sw * y64).sum())
                theta0[d] = math.log(m) if log_link else m
        alpha = float(self.alpha)

        def fun(t):
            w = t[:d]
            raw = X64 @ w
            if fi:
                raw = raw + t[d]
            loss, g = _half_loss_grad(raw, y64, power, log_link)
            gw = sw * g
            val = float((sw * loss).sum()) + 0.5 * alpha * float((w * w).sum())
            if not math.isfinite(val):
                val = float("inf")
            parts = [X64.T @ gw + alpha * w]
            if fi:
                parts.append(gw.sum().reshape(1))
            return val, ember.concatenate(parts)

        theta, _, n_iter, _ = lbfgs_minimize(
            fun, theta0, max_iter=self.max_iter, gtol=self.tol * 1e-4, ftol=1e-16
        )
        gmax = float(ember.abs(fun(theta)[1]).max())
        if gmax > self.tol:
            warnings.warn(
                f"lbfgs failed to converge after {n_iter} iteration(s) (status=1):\nSTOP: "
                "TOTAL NO. OF ITERATIONS REACHED LIMIT\n\nIncrease the number of iterations to "
                f"improve the convergence (max_iter={self.max_iter}).",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.n_iter_ = int(n_iter)
        kind = input_kind(X)
        self.coef_ = to_output(theta[:d].astype(Xa.dtype), kind)
        self.intercept_ = float(theta[d]) if fi else 0.0
        return self

    def _linear_predictor(self, X):
        check_is_fitted(self, "coef_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        coef = to_device(self.coef_, Xa.device).astype(Xa.dtype)
        return Xa @ coef + self.intercept_

    def predict(self, X):
        """Predicted mean h(X @ coef_ + intercept_)."""
        raw = self._linear_predictor(X)
        mu = ember.exp(raw) if self._power_link()[1] else raw
        return to_output(mu, input_kind(X))

    def score(self, X, y, sample_weight=None):
        """D^2: the fraction of (weighted) deviance explained, relative to the mean of y."""
        from ..metrics._regression_more import _deviance

        power, log_link = self._power_link()
        raw = self._linear_predictor(X).astype(ember.float64)
        mu = ember.exp(raw) if log_link else raw
        yv = check_array(y, estimator=self, ensure_2d=False, device=raw.device).astype(
            ember.float64
        )
        if not _y_ok(yv, power):
            raise ValueError(
                f"Some value(s) of y are out of the valid range of the loss {self._loss_name}."
            )
        sw = check_sample_weight(sample_weight, yv.reshape(-1, 1)).astype(ember.float64)
        a, b = yv.reshape(-1, 1), mu.reshape(-1, 1)
        dev = float((_deviance(a, b, power)[:, 0] * sw).sum())
        mean = (yv * sw).sum() / sw.sum()
        null = float(
            (_deviance(a, ember.broadcast_to(mean.reshape(1, 1), a.shape), power)[:, 0] * sw).sum()
        )
        return 1.0 - dev / null

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = self._power_link()[0] > 0
        return tags


def _init_common(self, alpha, fit_intercept, solver, max_iter, tol, warm_start, verbose):
    self.alpha = alpha
    self.fit_intercept = fit_intercept
    self.solver = solver
    self.max_iter = max_iter
    self.tol = tol
    self.warm_start = warm_start
    self.verbose = verbose


class PoissonRegressor(_GeneralizedLinearRegressor, LinearModel):
    """GLM with a Poisson distribution and the log link (counts, rates)."""

    _loss_name = "HalfPoissonLoss"

    def __init__(
        self,
        *,
        alpha=1.0,
        fit_intercept=True,
        solver="lbfgs",
        max_iter=100,
        tol=1e-4,
        warm_start=False,
        verbose=0,
    ):
        _init_common(self, alpha, fit_intercept, solver, max_iter, tol, warm_start, verbose)

    def _power_link(self):
        return 1.0, True


class GammaRegressor(_GeneralizedLinearRegressor, LinearModel):
    """GLM with a Gamma distribution and the log link (positive, skewed targets)."""

    _loss_name = "HalfGammaLoss"

    def __init__(
        self,
        *,
        alpha=1.0,
        fit_intercept=True,
        solver="lbfgs",
        max_iter=100,
        tol=1e-4,
        warm_start=False,
        verbose=0,
    ):
        _init_common(self, alpha, fit_intercept, solver, max_iter, tol, warm_start, verbose)

    def _power_link(self):
        return 2.0, True


class TweedieRegressor(_GeneralizedLinearRegressor, LinearModel):
    """GLM with a Tweedie distribution of the given ``power`` (0 normal, 1 Poisson, (1, 2)
    compound Poisson-gamma, 2 gamma, 3 inverse Gaussian); link 'auto' is the identity for
    power <= 0 and the log otherwise."""

    _parameter_constraints = {
        **_GeneralizedLinearRegressor._parameter_constraints,
        "power": [Interval(Real, None, None, closed="neither")],
        "link": [StrOptions({"auto", "identity", "log"})],
    }

    def __init__(
        self,
        *,
        power=0.0,
        alpha=1.0,
        fit_intercept=True,
        link="auto",
        solver="lbfgs",
        max_iter=100,
        tol=1e-4,
        warm_start=False,
        verbose=0,
    ):
        self.power = power
        self.link = link
        _init_common(self, alpha, fit_intercept, solver, max_iter, tol, warm_start, verbose)

    @property
    def _loss_name(self):
        log = self._power_link()[1]
        return "HalfTweedieLoss" if log else "HalfTweedieLossIdentity"

    def _power_link(self):
        p = float(self.power)
        if 0 < p < 1:
            raise ValueError(
                "Tweedie distribution is only defined for power<=0 and power>=1, got "
                f"power={self.power}"
            )
        log = p > 0 if self.link == "auto" else self.link == "log"
        return p, log
