"""``QuantileRegressor``: linear quantile regression with an L1 penalty (scikit-learn's LP).

scikit-learn minimises ``sum_i s_i pinball_q(y_i - x_i w - b) + alpha sum(s) |w|_1`` with
HiGHS. The penalty is the pinball loss of 2d pseudo-observations (x = +-e_j, y = 0, weight
alpha sum(s)): pinball_q(-w_j) + pinball_q(w_j) = |w_j|. The resulting weighted quantile
regression is solved through its dual, a box-constrained LP

    max  (s y)^T a   s.t.  X~^T S a = (1 - q) X~^T s,   0 <= a <= 1,

by a Mehrotra predictor-corrector interior-point method (the Frisch-Newton approach of
quantile regression codes). Every iteration is ember work on X's device: one (p x m) scaled
product A D^-1 A^T (p = features + intercept), a p x p Cholesky solve and elementwise
updates; the coefficients are the equality constraints' multipliers. A unique LP optimum (the
generic case) is reached to ~1e-9, so results agree with HiGHS's vertex; where the optimum is
not unique the interior point returns the centre of the optimal face instead of a vertex.
"""

from __future__ import annotations

import warnings
from numbers import Real

import ember

from ..base import RegressorMixin
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import check_sample_weight, input_kind, to_output
from ._base import LinearModel, fit_xy

__all__ = ["QuantileRegressor"]


def _max_step(v, dv):
    """Largest t in (0, 1] keeping v + t dv >= 0."""
    neg = dv < 0
    ratio = ember.where(neg, -v / ember.where(neg, dv, -1.0), float("inf"))
    return min(1.0, float(ratio.min()))


def _newton(state, rz, rw):
    """The Newton direction for complementarity right-hand sides rz (a z) and rw (t w),
    through the p x p normal equations (Cholesky factor L of A D^-1 A^T)."""
    A, L, D, rb, rc, a, t, z, w = state
    r1 = rc - rz / a + rw / t
    rhs = rb + A @ (r1 / D)
    dy = ember.linalg.solve(L.T, ember.linalg.solve(L, rhs))
    da = (A.T @ dy - r1) / D
    dt = -da
    dz = (rz - z * da) / a
    dw = (rw - w * dt) / t
    return da, dt, dy, dz, dw


def _interior_point(A, b, g, max_iter=200, tol=1e-11):
    """min g^T a s.t. A a = b, 0 <= a <= 1. Returns (a, y, n_iter, converged) with y the
    multipliers of A a = b (A^T y + z - w = g)."""
    p, m = A.shape
    dev = A.device
    f64 = ember.float64
    a = ember.full((m,), 0.5, dtype=f64, device=dev)
    t = 1.0 - a
    y = ember.zeros((p,), dtype=f64, device=dev)
    z = ember.maximum(g, 0.0) + 1.0
    w = ember.maximum(-g, 0.0) + 1.0
    # start from an a satisfying A a = b: the least-squares correction of 0.5
    r0 = b - A @ a
    a = a + A.T @ ember.linalg.solve(A @ A.T, r0)
    a = ember.clip(a, 1e-3, 1 - 1e-3)
    t = 1.0 - a
    scale = 1.0 + float(ember.abs(g).max())
    eye = ember.eye(p, dtype=f64, device=dev)
    for it in range(1, max_iter + 1):
        rb = b - A @ a
        rc = g - A.T @ y - z + w
        gap = float((a * z).sum() + (t * w).sum())
        if (
            gap <= tol * scale * m
            and float(ember.abs(rb).max()) <= tol * scale
            and float(ember.abs(rc).max()) <= tol * scale
        ):
            return a, y, it - 1, True
        D = z / a + w / t
        M = (A / D[None, :]) @ A.T
        M = M + (1e-14 * float(ember.abs(M).max())) * eye
        L = ember.linalg.cholesky(M)
        state = (A, L, D, rb, rc, a, t, z, w)
        # predictor (affine scaling)
        da, dt, dy, dz, dw = _newton(state, -a * z, -t * w)
        tp = min(_max_step(a, da), _max_step(t, dt))
        td = min(_max_step(z, dz), _max_step(w, dw))
        mu = gap / (2 * m)
        mu_aff = float(
            ((a + tp * da) * (z + td * dz)).sum() + ((t + tp * dt) * (w + td * dw)).sum()
        ) / (2 * m)
        sigma = (mu_aff / mu) ** 3 if mu > 0 else 0.0
        # corrector
        da, dt, dy, dz, dw = _newton(
            state, sigma * mu - a * z - da * dz, sigma * mu - t * w - dt * dw
        )
        tp = 0.99995 * min(_max_step(a, da), _max_step(t, dt))
        td = 0.99995 * min(_max_step(z, dz), _max_step(w, dw))
        a, t = a + tp * da, t + tp * dt
        y, z, w = y + td * dy, z + td * dz, w + td * dw
    return a, y, max_iter, False


class QuantileRegressor(RegressorMixin, LinearModel):
    """Linear regression for the conditional ``quantile`` (pinball loss, L1 penalty)."""

    _multi_output = False
    _parameter_constraints = {
        "quantile": [Interval(Real, 0, 1, closed="neither")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "solver": [
            StrOptions({"highs-ds", "highs-ipm", "highs", "interior-point", "revised simplex"})
        ],
        "solver_options": [dict, None],
    }

    def __init__(
        self, *, quantile=0.5, alpha=1.0, fit_intercept=True, solver="highs", solver_options=None
    ):
        self.quantile = quantile
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.solver_options = solver_options

    def fit(self, X, y, sample_weight=None):
        """Solve the LP; sets ``coef_``, ``intercept_`` and ``n_iter_``."""
        self._validate_params()
        if self.solver == "interior-point":
            raise ValueError(f"Solver {self.solver} is not anymore available in SciPy >= 1.11.0.")
        Xa, ya, _ = fit_xy(self, X, y, None, multi_output=False)
        f64 = ember.float64
        X64, y64 = Xa.astype(f64), ya.astype(f64)
        s = check_sample_weight(sample_weight, X64).astype(f64)
        keep = s != 0
        if not bool(keep.all()):
            idx = ember.nonzero(keep)[0]
            X64, y64, s = ember.take(X64, idx, axis=0), ember.take(y64, idx), ember.take(s, idx)
        n, d = X64.shape
        dev = X64.device
        q = float(self.quantile)
        pen = float(self.alpha) * float(s.sum())
        cols = [X64]
        if self.fit_intercept:
            cols.insert(0, ember.ones((n, 1), dtype=f64, device=dev))
        Xt = ember.concatenate(cols, axis=1) if len(cols) > 1 else X64
        rows, targets, weights = [Xt], [y64], [s]
        if pen > 0 and d > 0:
            E = ember.eye(d, dtype=f64, device=dev)
            if self.fit_intercept:
                E = ember.concatenate([ember.zeros((d, 1), dtype=f64, device=dev), E], axis=1)
            rows += [E, -E]
            targets.append(ember.zeros((2 * d,), dtype=f64, device=dev))
            weights.append(ember.full((2 * d,), pen, dtype=f64, device=dev))
        Xall = ember.concatenate(rows, axis=0)
        yall = ember.concatenate(targets)
        sall = ember.concatenate(weights)
        A = (Xall * sall[:, None]).T  # (p, m)
        b = (1.0 - q) * (A @ ember.ones((A.shape[1],), dtype=f64, device=dev))
        g = -(sall * yall)
        _, beta, n_iter, ok = _interior_point(A, b, g)
        if not ok:
            warnings.warn(
                "Linear programming for QuantileRegressor did not succeed.\nStatus is 1: "
                "Iteration limit reached.\n",
                ConvergenceWarning,
                stacklevel=2,
            )
        beta = -beta  # the multipliers of the minimised dual are -coefficients
        self.n_iter_ = int(n_iter)
        kind = input_kind(X)
        if self.fit_intercept:
            self.intercept_ = float(beta[0])
            coef = beta[1:]
        else:
            self.intercept_ = 0.0
            coef = beta
        self.coef_ = to_output(coef.astype(Xa.dtype), kind)
        return self
