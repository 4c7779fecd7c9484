"""``BayesianRidge``: evidence maximisation (MacKay) for Bayesian ridge regression.

One thin SVD of the centred (sqrt-weighted) design on the device gives every quantity the
updates need: with eigenvalues ``e = s^2`` the posterior mean is
``V diag(1 / (e + lambda/alpha)) V^T X^T y`` (or its kernel form for n <= d),
``gamma = sum(alpha e / (lambda + alpha e))``, ``lambda = (gamma + 2 l1) / (|w|^2 + 2 l2)``,
``alpha = (n - gamma + 2 a1) / (SSE + 2 a2)`` until the coefficients move by less than ``tol``
(L1), as scikit-learn. ``scores_`` is the log marginal likelihood per iteration; the
hyperparameters are host scalars, the vectors stay on the device.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import ember

from ..base import RegressorMixin
from ..utils._param_validation import Interval
from ..utils.validation import check_array, input_kind, to_device, to_output
from ._base import LinearModel, fit_xy, preprocess_data

__all__ = ["BayesianRidge"]


class BayesianRidge(RegressorMixin, LinearModel):
    """Bayesian ridge regression (Gamma priors on the noise and weight precisions)."""

    _multi_output = False
    _parameter_constraints = {
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "alpha_1": [Interval(Real, 0, None, closed="left")],
        "alpha_2": [Interval(Real, 0, None, closed="left")],
        "lambda_1": [Interval(Real, 0, None, closed="left")],
        "lambda_2": [Interval(Real, 0, None, closed="left")],
        "alpha_init": [None, Interval(Real, 0, None, closed="left")],
        "lambda_init": [None, Interval(Real, 0, None, closed="left")],
        "compute_score": ["boolean"],
        "fit_intercept": ["boolean"],
        "copy_X": ["boolean"],
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
    }

    def __init__(
        self,
        *,
        max_iter=300,
        tol=1.0e-3,
        alpha_1=1.0e-6,
        alpha_2=1.0e-6,
        lambda_1=1.0e-6,
        lambda_2=1.0e-6,
        alpha_init=None,
        lambda_init=None,
        compute_score=False,
        fit_intercept=True,
        copy_X=True,
        verbose=False,
    ):
        self.max_iter = max_iter
        self.tol = tol
        self.alpha_1 = alpha_1
        self.alpha_2 = alpha_2
        self.lambda_1 = lambda_1
        self.lambda_2 = lambda_2
        self.alpha_init = alpha_init
        self.lambda_init = lambda_init
        self.compute_score = compute_score
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.verbose = verbose

    def _log_ml(self, n, d, sw_sum, e, alpha, lam, coef, sse):
        if n > d:
            logdet = -float(ember.log(lam + alpha * e).sum())
        else:
            logdet = -(float(ember.log(lam + alpha * e).sum()) + (d - e.shape[0]) * math.log(lam))
        score = self.lambda_1 * math.log(lam) - self.lambda_2 * lam
        score += self.alpha_1 * math.log(alpha) - self.alpha_2 * alpha
        score += 0.5 * (
            d * math.log(lam)
            + sw_sum * math.log(alpha)
            - alpha * sse
            - lam * float((coef * coef).sum())
            + logdet
            - sw_sum * math.log(2 * math.pi)
        )
        return score

    def fit(self, X, y, sample_weight=None):
        """Fit by evidence maximisation; sets ``coef_``, ``alpha_``, ``lambda_``, ``sigma_``."""
        self._validate_params()
        Xa, ya, w = fit_xy(self, X, y, sample_weight, multi_output=False)
        if ya.ndim != 1:
            if ya.shape[1] != 1:
                raise ValueError("BayesianRidge: y should be a 1d array")
            ya = ya[:, 0]
        n, d = Xa.shape
        if w is None:
            sw_sum = float(n)
            y_var = float(ya.var())
        else:
            sw_sum = float(w.sum())
            ym = (ya * w).sum() / sw_sum
            y_var = float((w * (ya - ym) ** 2).sum()) / sw_sum
        Xc, yc, X_off, y_off = preprocess_data(Xa, ya, self.fit_intercept, w)
        eps = 2.220446049250313e-16
        alpha = 1.0 / (y_var + eps) if self.alpha_init is None else float(self.alpha_init)
        lam = 1.0 if self.lambda_init is None else float(self.lambda_init)
        XTy = Xc.T @ yc
        U, S, Vt = ember.linalg.svd(Xc, full_matrices=False)
        e = S * S
        UTy = U.T @ yc

        def update(alpha, lam):
            if n > d:
                coef = Vt.T @ ((Vt @ XTy) / (e + lam / alpha))
            else:
                coef = Xc.T @ (U @ (UTy / (e + lam / alpha)))
            r = yc - Xc @ coef
            return coef, float((r * r).sum())

        scores = []
        old = None
        it = 0
        for it in range(self.max_iter):  # noqa: B007  (read after the loop)
            coef, sse = update(alpha, lam)
            if self.compute_score:
                scores.append(self._log_ml(n, d, sw_sum, e, alpha, lam, coef, sse))
            gamma = float((alpha * e / (lam + alpha * e)).sum())
            lam = (gamma + 2 * self.lambda_1) / (float((coef * coef).sum()) + 2 * self.lambda_2)
            alpha = (sw_sum - gamma + 2 * self.alpha_1) / (sse + 2 * self.alpha_2)
            if it != 0 and float(ember.abs(old - coef).sum()) < self.tol:
                break
            old = coef
        self.n_iter_ = it + 1
        coef, sse = update(alpha, lam)
        if self.compute_score:
            scores.append(self._log_ml(n, d, sw_sum, e, alpha, lam, coef, sse))
        kind = input_kind(X)
        self.alpha_ = alpha
        self.lambda_ = lam
        # posterior covariance (lambda I + alpha X^T X)^-1; directions beyond the rank of X
        # keep the prior precision lambda
        K = e.shape[0]
        sigma = Vt.T @ (Vt / (alpha * e + lam)[:, None])
        if K < d:
            eye = ember.eye(d, dtype=Xc.dtype, device=Xc.device)
            sigma = sigma + (eye - Vt.T @ Vt) / lam
        self.sigma_ = to_output(sigma, kind)
        if self.compute_score:
            import numpy as np

            self.scores_ = np.asarray(scores)
        self.X_offset_ = to_output(X_off, kind)
        self.X_scale_ = to_output(ember.ones_like(X_off), kind)
        self._set_intercept(coef, X_off, y_off, kind)
        return self

    def predict(self, X, return_std=False):
        """Predictive mean (and standard deviation with ``return_std``)."""
        mean = self._decision_function(X)
        kind = input_kind(X)
        if not return_std:
            return to_output(mean, kind)
        Xa = check_array(X, estimator=self)
        S = to_device(self.sigma_, Xa.device)
        Xa = Xa.astype(S.dtype) - to_device(self.X_offset_, Xa.device)
        var = ((Xa @ S) * Xa).sum(axis=1) + 1.0 / self.alpha_
        return to_output(mean, kind), to_output(ember.sqrt(var), kind)
