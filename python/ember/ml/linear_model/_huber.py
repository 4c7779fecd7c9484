"""``HuberRegressor``: linear regression robust to outliers (scikit-learn's objective).

Minimises ``sum_i sw_i (sigma + H_eps(r_i / sigma) sigma) + alpha |w|^2`` jointly over the
coefficients, the intercept and the scale ``sigma`` (Owen's concomitant scale), where
``H_eps`` is quadratic for ``|r| <= eps sigma`` and linear beyond. Loss and gradient are ember
expressions on X's device (float64); the minimiser is ``utils._optimize.lbfgs_minimize`` over
``(w, b, log sigma)``: the log keeps the scale positive without scikit-learn's box bound
(L-BFGS-B) and reaches the same minimiser, the problem being jointly convex in ``sigma > 0``.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import ember

from ..base import RegressorMixin
from ..exceptions import ConvergenceWarning
from ..utils._optimize import lbfgs_minimize
from ..utils._param_validation import Interval
from ..utils.validation import check_sample_weight, input_kind, to_device, to_output
from ._base import LinearModel, fit_xy

__all__ = ["HuberRegressor"]


def _huber_loss_grad(theta, X, y, sw, eps, alpha, fit_intercept):
    """Loss and gradient in ``(w, b, sigma)`` (scikit-learn's ``_huber_loss_and_gradient``)."""
    d = X.shape[1]
    w = theta[:d]
    sigma = theta[-1]
    r = y - X @ w
    if fit_intercept:
        r = r - theta[d]
    out = ember.abs(r) > eps * sigma
    inl = ~out
    swo = ember.where(out, sw, 0.0)
    swi = ember.where(inl, sw, 0.0)
    n_sw = sw.sum()
    n_sw_out = swo.sum()
    wr = swi * r
    sq = (wr * r).sum() / sigma
    loss = (
        n_sw * sigma
        + sq
        + 2.0 * eps * (swo * ember.abs(r)).sum()
        - sigma * n_sw_out * eps**2
        + alpha * (w * w).sum()
    )
    s = swo * ember.sign(r)
    g_w = -(2.0 / sigma) * (X.T @ wr) - 2.0 * eps * (X.T @ s) + 2.0 * alpha * w
    parts = [g_w]
    if fit_intercept:
        parts.append((-(2.0 / sigma) * wr.sum() - 2.0 * eps * s.sum()).reshape(1))
    parts.append((n_sw - n_sw_out * eps**2 - sq / sigma).reshape(1))
    return loss, ember.concatenate(parts)


class HuberRegressor(RegressorMixin, LinearModel):
    """L2-regularised linear regression with the Huber loss and a fitted scale."""

    _multi_output = False
    _parameter_constraints = {
        "epsilon": [Interval(Real, 1.0, None, closed="left")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "warm_start": ["boolean"],
        "fit_intercept": ["boolean"],
        "tol": [Interval(Real, 0.0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        epsilon=1.35,
        max_iter=100,
        alpha=0.0001,
        warm_start=False,
        fit_intercept=True,
        tol=1e-05,
    ):
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.alpha = alpha
        self.warm_start = warm_start
        self.fit_intercept = fit_intercept
        self.tol = tol

    def fit(self, X, y, sample_weight=None):
        """Fit ``coef_``, ``intercept_``, ``scale_`` and ``outliers_``."""
        self._validate_params()
        Xa, ya, _ = fit_xy(self, X, y, None, multi_output=False)
        if ya.ndim != 1:
            ya = ya.reshape(-1) if ya.shape[1] == 1 else ya
            if ya.ndim != 1:
                raise ValueError("HuberRegressor: y should be a 1d array")
        f64 = ember.float64
        X64, y64 = Xa.astype(f64), ya.astype(f64)
        sw = check_sample_weight(sample_weight, X64).astype(f64)
        d = Xa.shape[1]
        fi = self.fit_intercept
        dev = Xa.device
        if self.warm_start and hasattr(self, "coef_"):
            c0 = to_device(self.coef_, dev).astype(f64)
            parts = [c0]
            if fi:
                parts.append(ember.asarray([float(self.intercept_)], device=dev).astype(f64))
            parts.append(ember.asarray([math.log(float(self.scale_))], device=dev).astype(f64))
            theta0 = ember.concatenate(parts)
        else:
            theta0 = ember.zeros((d + (2 if fi else 1),), dtype=f64, device=dev)
        eps, alpha = float(self.epsilon), float(self.alpha)

        def fun(p):
            # the last entry is log(sigma); chain rule on the scale's derivative
            sigma = ember.exp(p[-1:])
            theta = ember.concatenate([p[:-1], sigma])
            loss, g = _huber_loss_grad(theta, X64, y64, sw, eps, alpha, fi)
            g = ember.concatenate([g[:-1], g[-1:] * sigma])
            return float(loss), g

        theta, _, n_iter, ok = lbfgs_minimize(
            fun, theta0, max_iter=self.max_iter, gtol=self.tol, ftol=1e-15
        )
        if not ok and self.max_iter > 0:
            warnings.warn(
                "lbfgs failed to converge after "
                f"{n_iter} iteration(s) (status=1):\nSTOP: TOTAL NO. OF ITERATIONS REACHED "
                "LIMIT\n\nIncrease the number of iterations to improve the convergence "
                f"(max_iter={self.max_iter}).",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.n_iter_ = min(int(n_iter), self.max_iter)
        kind = input_kind(X)
        dt = Xa.dtype
        coef = theta[:d]
        b = float(theta[d]) if fi else 0.0
        scale = math.exp(float(theta[-1]))
        self.scale_ = scale
        self.intercept_ = b
        self.coef_ = to_output(coef.astype(dt), kind)
        resid = ember.abs(y64 - X64 @ coef - b)
        self.outliers_ = to_output(resid > scale * eps, kind)
        return self
