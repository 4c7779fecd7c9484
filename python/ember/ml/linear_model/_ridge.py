"""Ridge regression: cholesky (normal or kernel equations), svd, lsqr, sparse_cg solvers."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

import ember

from ..base import RegressorMixin
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import input_kind
from ._base import LinearModel, fit_xy, preprocess_data

__all__ = ["Ridge", "ridge_regression"]


def _alphas(alpha, t):
    a = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
    if a.size == 1:
        return np.repeat(a, t)
    if a.size != t:
        raise ValueError(
            f"Number of targets and number of penalties do not correspond: {a.size} != {t}"
        )
    return a


def _solve_cholesky(X, Y, alphas):
    n, d = X.shape
    eye = None
    cols = []
    if d <= n:
        A = X.T @ X
        B = X.T @ Y
        eye = ember.eye(d, dtype=X.dtype, device=X.device)
        if np.all(alphas == alphas[0]):
            return ember.linalg.solve(A + alphas[0] * eye, B).T
        for t, a in enumerate(alphas):
            cols.append(ember.linalg.solve(A + a * eye, B[:, t : t + 1])[:, 0])
        return ember.stack(cols)
    # Kernel form for n < d: w = X^T (X X^T + a I)^-1 y.
    K = X @ X.T
    eye = ember.eye(n, dtype=X.dtype, device=X.device)
    for t, a in enumerate(alphas):
        dual = ember.linalg.solve(K + a * eye, Y[:, t : t + 1])
        cols.append((X.T @ dual)[:, 0])
    return ember.stack(cols)


def _solve_svd(X, Y, alphas):
    U, s, Vt = ember.linalg.svd(X, full_matrices=False)
    UtY = U.T @ Y
    cols = []
    keep = s > 1e-15
    s = ember.where(keep, s, 0.0)
    for t, a in enumerate(alphas):
        dvec = s / (s * s + a)
        cols.append(Vt.T @ (dvec * UtY[:, t]))
    return ember.stack(cols)


def _lsqr(X, y, damp, atol, btol, iter_lim):
    """Paige & Saunders' LSQR for min |Xw - y|^2 + damp^2 |w|^2 (ember arrays)."""
    n, d = X.shape
    x = ember.zeros((d,), dtype=X.dtype, device=X.device)
    u = y
    beta = float(ember.sqrt((u * u).sum()))
    if beta == 0:
        return x, 0
    u = u / beta
    v = X.T @ u
    alfa = float(ember.sqrt((v * v).sum()))
    if alfa == 0:
        return x, 0
    v = v / alfa
    w = v
    phibar, rhobar = beta, alfa
    bnorm = beta
    anorm = 0.0
    dampsq = damp * damp
    it = 0
    for it in range(1, iter_lim + 1):  # noqa: B007  (read after the loop)
        u = X @ v - alfa * u
        beta = float(ember.sqrt((u * u).sum()))
        if beta > 0:
            u = u / beta
            anorm = math.sqrt(anorm**2 + alfa**2 + beta**2 + dampsq)
            v = X.T @ u - beta * v
            alfa = float(ember.sqrt((v * v).sum()))
            if alfa > 0:
                v = v / alfa
        rhobar1 = math.sqrt(rhobar**2 + dampsq)
        cs1 = rhobar / rhobar1
        sn1 = damp / rhobar1
        psi = sn1 * phibar
        phibar = cs1 * phibar
        rho = math.sqrt(rhobar1**2 + beta**2)
        cs = rhobar1 / rho
        sn = beta / rho
        theta = sn * alfa
        rhobar = -cs * alfa
        phi = cs * phibar
        phibar = sn * phibar
        x = x + (phi / rho) * w
        w = v - (theta / rho) * w
        rnorm = math.sqrt(phibar**2 + psi**2)
        arnorm = alfa * abs(sn * phi)
        xnorm = float(ember.sqrt((x * x).sum()))
        test1 = rnorm / bnorm
        test2 = arnorm / (anorm * rnorm) if anorm * rnorm > 0 else 0.0
        if test2 <= atol or test1 <= btol + atol * anorm * xnorm / bnorm:
            break
    return x, it


def _solve_lsqr(X, Y, alphas, tol, max_iter):
    cols, iters = [], []
    for t, a in enumerate(alphas):
        w, it = _lsqr(X, Y[:, t], math.sqrt(a), tol, tol, max_iter or 2 * X.shape[1] + 10)
        cols.append(w)
        iters.append(it)
    return ember.stack(cols), iters


def _solve_cg(X, Y, alphas, tol, max_iter):
    """Conjugate gradients on (X^T X + a I) w = X^T y, matrix-free."""
    cols, iters = [], []
    d = X.shape[1]
    for t, a in enumerate(alphas):
        b = X.T @ Y[:, t]
        w = ember.zeros((d,), dtype=X.dtype, device=X.device)
        r = b
        p = r
        rr = float((r * r).sum())
        bn = math.sqrt(float((b * b).sum())) or 1.0
        it = 0
        for it in range(1, (max_iter or 10 * d + 10) + 1):  # noqa: B007  (read after the loop)
            if math.sqrt(rr) <= tol * bn:
                break
            Ap = X.T @ (X @ p) + a * p
            step = rr / float((p * Ap).sum())
            w = w + step * p
            r = r - step * Ap
            rr_new = float((r * r).sum())
            p = r + (rr_new / rr) * p
            rr = rr_new
        cols.append(w)
        iters.append(it)
    return ember.stack(cols), iters


def _ridge(X, Y, alphas, solver, tol, max_iter, positive):
    if positive:
        from ._coordinate_descent import enet_path_gram

        coefs = []
        for t, a in enumerate(alphas):
            c, _, _ = enet_path_gram(
                X,
                Y[:, t],
                0.0,
                float(a),
                positive=True,
                max_iter=max_iter or 10000,
                tol=min(tol, 1e-8),
            )
            coefs.append(c)
        return ember.stack(coefs), None
    if solver in ("auto", "cholesky", "sag", "saga", "lbfgs"):
        # sag, saga and lbfgs reach the same minimiser; it is computed exactly here.
        return _solve_cholesky(X, Y, alphas), None
    if solver == "svd":
        return _solve_svd(X, Y, alphas), None
    if solver == "lsqr":
        return _solve_lsqr(X, Y, alphas, tol, max_iter)
    return _solve_cg(X, Y, alphas, tol, max_iter)


_SOLVERS = {"auto", "svd", "cholesky", "lsqr", "sparse_cg", "sag", "saga", "lbfgs"}


class Ridge(RegressorMixin, LinearModel):
    """Linear least squares with an L2 penalty ``alpha`` (scalar or one per target)."""

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="left"), np.ndarray, list],
        "fit_intercept": ["boolean"],
        "copy_X": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="left")],
        "solver": [StrOptions(_SOLVERS)],
        "positive": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        alpha=1.0,
        *,
        fit_intercept=True,
        copy_X=True,
        max_iter=None,
        tol=1e-4,
        solver="auto",
        positive=False,
        random_state=None,
    ):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.positive = positive
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        """Fit the penalised least squares; sets ``coef_``, ``intercept_``, ``n_iter_``."""
        self._validate_params()
        if self.positive and self.solver not in ("auto", "lbfgs"):
            raise ValueError(
                f"solver='{self.solver}' does not support positive fitting. Please set the "
                "solver to 'auto' or 'lbfgs', or set `positive=False`"
            )
        Xa, ya, w = fit_xy(self, X, y, sample_weight)
        if np.any(np.asarray(self.alpha) < 0):
            raise ValueError(f"Ridge: alpha must be >= 0, got {self.alpha!r}")
        Xc, yc, X_off, y_off = preprocess_data(Xa, ya, self.fit_intercept, w)
        Y = yc[:, None] if yc.ndim == 1 else yc
        alphas = _alphas(self.alpha, Y.shape[1])
        coef, n_iter = _ridge(Xc, Y, alphas, self.solver, self.tol, self.max_iter, self.positive)
        if ya.ndim == 1:
            coef = coef[0]
        self.n_iter_ = None if n_iter is None else np.asarray(n_iter, dtype=np.int32)
        self.solver_ = "cholesky" if self.solver == "auto" else self.solver
        self._set_intercept(coef, X_off, y_off, input_kind(X))
        return self


def ridge_regression(
    X,
    y,
    alpha,
    *,
    sample_weight=None,
    solver="auto",
    max_iter=None,
    tol=1e-4,
    positive=False,
    return_n_iter=False,
    return_intercept=False,
):
    """Solve the ridge equation; returns ``coef`` (and optionally ``n_iter``/``intercept``)."""
    est = Ridge(
        alpha=alpha,
        fit_intercept=return_intercept,
        solver=solver,
        max_iter=max_iter,
        tol=tol,
        positive=positive,
    )
    est.fit(X, y, sample_weight=sample_weight)
    out = [est.coef_]
    if return_n_iter:
        out.append(est.n_iter_)
    if return_intercept:
        out.append(est.intercept_)
    return out[0] if len(out) == 1 else tuple(out)
