"""Lasso and ElasticNet by cyclic coordinate descent (scikit-learn's objective and stop rule).

The d x d Gram matrix ``X^T X``, ``X^T y`` and ``y^T y`` are computed on the device (the
O(n d^2) work); the coordinate sweeps then run on those d^2 numbers, which are copied to the
host explicitly: one coordinate update is a handful of scalar operations, latency-bound on a
GPU, and the sweep never touches the n samples again. The duality gap is evaluated from the
same Gram quantities, so ``dual_gap_`` and ``n_iter_`` mean what they mean in scikit-learn.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

import ember

from ..base import RegressorMixin
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import check_random_state, input_kind
from ._base import LinearModel, fit_xy, preprocess_data

__all__ = ["ElasticNet", "Lasso", "enet_path_gram"]


def _gap(w, q, b, yy, l1, l2, positive):
    """Duality gap of the elastic-net problem from the Gram quantities (q = G @ w)."""
    R2 = max(yy - 2.0 * w @ b + w @ q, 0.0)
    XtR = b - q
    ry = yy - w @ b
    if positive:
        dual = np.max(XtR - l2 * w)
    else:
        dual = np.max(np.abs(XtR - l2 * w))
    if dual > l1:
        const = l1 / dual
        gap = 0.5 * (R2 + R2 * const**2)
    else:
        const = 1.0
        gap = R2
    return gap + l1 * np.abs(w).sum() - const * ry + 0.5 * l2 * (1 + const**2) * (w @ w)


def _cd_gram(G, b, yy, l1, l2, positive, max_iter, tol, order, w0=None, check_first=False):
    """min 0.5 w'Gw - b'w + 0.5 yy + l1 |w|_1 + 0.5 l2 |w|^2 on host arrays (one target).

    ``check_first``: return the start unchanged (0 iterations) when its duality gap already
    meets the tolerance, as scikit-learn's path does for warm starts."""
    d = G.shape[0]
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=np.float64)
    q = G @ w  # G @ w, kept up to date
    diag = np.diag(G).copy()
    tol_abs = tol * yy
    if check_first:
        gap = _gap(w, q, b, yy, l1, l2, positive)
        if 0 <= gap <= tol_abs:
            return w, gap, 0
    gap = tol_abs + 1.0
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        w_max = 0.0
        d_w_max = 0.0
        for j in order(d):
            if diag[j] == 0.0:
                continue
            wj = w[j]
            rho = b[j] - q[j] + diag[j] * wj
            if positive and rho < 0:
                new = 0.0
            else:
                new = np.sign(rho) * max(abs(rho) - l1, 0.0) / (diag[j] + l2)
            if new != wj:
                q += G[:, j] * (new - wj)
                w[j] = new
            d_w_max = max(d_w_max, abs(new - wj))
            w_max = max(w_max, abs(new))
        if w_max == 0.0 or d_w_max / w_max <= tol or n_iter == max_iter:
            gap = _gap(w, q, b, yy, l1, l2, positive)
            if gap <= tol_abs:
                break
    return w, gap, n_iter


def enet_path_gram(
    Xc,
    yc,
    l1,
    l2,
    *,
    positive=False,
    max_iter=1000,
    tol=1e-4,
    selection="cyclic",
    rng=None,
    coef_init=None,
):
    """Coordinate descent for 0.5|y - Xw|^2 + l1|w|_1 + 0.5 l2|w|^2 (centred Xc, yc).

    Returns (coef on Xc's device, (d,) or (t, d); gaps; n_iters).
    """
    G = Xc.T @ Xc
    B = Xc.T @ yc
    YY = (yc * yc).sum(axis=0)
    # Explicit host copy of the d x d Gram statistics for the scalar coordinate sweeps.
    Gh = ember.asnumpy(G).astype(np.float64)
    Bh = ember.asnumpy(B).astype(np.float64)
    YYh = np.atleast_1d(ember.asnumpy(YY).astype(np.float64))
    single = Bh.ndim == 1
    Bh = Bh[:, None] if single else Bh
    if selection == "random":
        seed = int(ember.asnumpy(rng.integers(0, 2**31 - 1, size=1))[0])
        host_rng = np.random.default_rng(seed)

        def order(d):
            return host_rng.permutation(d)
    else:

        def order(d):
            return range(d)

    coefs, gaps, iters = [], [], []
    for t in range(Bh.shape[1]):
        w0 = None if coef_init is None else coef_init[t]
        w, gap, it = _cd_gram(Gh, Bh[:, t], YYh[t], l1, l2, positive, max_iter, tol, order, w0)
        coefs.append(w)
        gaps.append(gap)
        iters.append(it)
    coef = np.stack(coefs)
    coef = coef[0] if single else coef
    out = ember.asarray(coef, device=Xc.device).astype(Xc.dtype)
    return out, gaps, iters


class ElasticNet(RegressorMixin, LinearModel):
    """Linear regression with combined L1 and L2 penalties (coordinate descent)."""

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "l1_ratio": [Interval(Real, 0, 1, closed="both")],
        "fit_intercept": ["boolean"],
        "precompute": ["boolean", StrOptions({"auto"}), "array-like"],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "copy_X": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "warm_start": ["boolean"],
        "positive": ["boolean"],
        "random_state": ["random_state"],
        "selection": [StrOptions({"cyclic", "random"})],
    }

    def __init__(
        self,
        alpha=1.0,
        *,
        l1_ratio=0.5,
        fit_intercept=True,
        precompute=False,
        max_iter=1000,
        copy_X=True,
        tol=1e-4,
        warm_start=False,
        positive=False,
        random_state=None,
        selection="cyclic",
    ):
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.max_iter = max_iter
        self.copy_X = copy_X
        self.tol = tol
        self.warm_start = warm_start
        self.positive = positive
        self.random_state = random_state
        self.selection = selection

    def fit(self, X, y, sample_weight=None, check_input=True):
        """Fit by coordinate descent; sets ``coef_``, ``intercept_``, ``n_iter_``,
        ``dual_gap_``."""
        self._validate_params()
        Xa, ya, w = fit_xy(self, X, y, sample_weight)
        n = Xa.shape[0]
        if sample_weight is not None:
            w = w * (n / float(w.sum()))
        Xc, yc, X_off, y_off = preprocess_data(Xa, ya, self.fit_intercept, w)
        l1 = self.alpha * self.l1_ratio * n
        l2 = self.alpha * (1.0 - self.l1_ratio) * n
        rng = check_random_state(self.random_state)
        coef_init = None
        if self.warm_start and hasattr(self, "coef_"):
            # Host copy of the previous (t, d) coefficients to start the sweeps from.
            c0 = self.coef_
            c0 = np.atleast_2d(ember.asnumpy(c0) if isinstance(c0, ember.ndarray) else c0)
            if c0.shape == (1 if ya.ndim == 1 else ya.shape[1], Xa.shape[1]):
                coef_init = c0
        coef, gaps, iters = enet_path_gram(
            Xc,
            yc,
            l1,
            l2,
            positive=self.positive,
            max_iter=self.max_iter or 1000,
            tol=self.tol,
            selection=self.selection,
            rng=rng,
            coef_init=coef_init,
        )
        if ya.ndim == 1:
            self.dual_gap_ = gaps[0] / n
            self.n_iter_ = iters[0]
        else:
            self.dual_gap_ = np.asarray(gaps) / n
            self.n_iter_ = iters
        tol_abs = self.tol * float((yc * yc).sum())
        if max(gaps) > tol_abs and max(iters) >= (self.max_iter or 1000):
            warnings.warn(
                f"Objective did not converge. You might want to increase the number of "
                f"iterations. Duality gap: {max(gaps):.3e}, tolerance: {tol_abs:.3e}",
                ConvergenceWarning,
                stacklevel=2,
            )
        self._set_intercept(coef, X_off, y_off, input_kind(X))
        return self

    @property
    def sparse_coef_(self):
        return self.coef_


class Lasso(ElasticNet):
    """Linear regression with an L1 penalty (ElasticNet with ``l1_ratio=1``)."""

    _parameter_constraints = {
        k: v for k, v in ElasticNet._parameter_constraints.items() if k != "l1_ratio"
    }

    def __init__(
        self,
        alpha=1.0,
        *,
        fit_intercept=True,
        precompute=False,
        copy_X=True,
        max_iter=1000,
        tol=1e-4,
        warm_start=False,
        positive=False,
        random_state=None,
        selection="cyclic",
    ):
        super().__init__(
            alpha=alpha,
            l1_ratio=1.0,
            fit_intercept=fit_intercept,
            precompute=precompute,
            max_iter=max_iter,
            copy_X=copy_X,
            tol=tol,
            warm_start=warm_start,
            positive=positive,
            random_state=random_state,
            selection=selection,
        )
