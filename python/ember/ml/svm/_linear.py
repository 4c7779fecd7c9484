"""Linear support vector machines: ``LinearSVC`` and ``LinearSVR`` (liblinear's objectives).

As liblinear, the intercept is a weight on a constant feature of value ``intercept_scaling``
and is regularised with the other weights: minimise
``1/2 |w~|^2 + sum_i C_i loss(y_i, w~ . x~_i)`` with ``x~ = [x, intercept_scaling]`` and
``C_i = C * class_weight[y_i] * sample_weight_i`` (liblinear's one-vs-rest gives the negative
samples of each problem the unweighted ``C``).

* Squared losses (``squared_hinge``, ``squared_epsilon_insensitive``) are once continuously
  differentiable and strongly convex: L-BFGS on the primal (one matmul forward, one back).
* ``penalty='l1'`` with ``squared_hinge`` (``dual=False``): FISTA with soft-thresholding.
* Non-smooth losses (``hinge``, ``epsilon_insensitive``): greedy dual coordinate descent
  (``_qp.box_cd``; the dual is a box-constrained QP whose columns ``X~ x~_t`` are computed
  on the fly, so nothing of size n^2 is stored) and ``w~ = X~' (y * alpha)``; every few steps
  the free variables take a Newton step together. ``max_iter`` bounds L-BFGS iterations, ten
  times as many FISTA iterations, or ``10 * max_iter`` coordinate/Newton steps.
* ``multi_class='crammer_singer'`` is not implemented (ValueError naming it).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, ClassifierMixin, RegressorMixin
from ..exceptions import ConvergenceWarning
from ..utils._labels import decode_labels, encode_labels
from ..utils._optimize import fista_minimize, lbfgs_minimize
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_classification_targets,
    check_is_fitted,
    check_n_features,
    check_sample_weight,
    check_X_y,
    input_kind,
    is_ember,
    to_device,
    to_output,
)
from ._qp import box_cd, host_vector

__all__ = ["LinearSVC", "LinearSVR"]


def _augment(Xa, fit_intercept, scaling):
    if not fit_intercept:
        return Xa
    ones = ember.full((Xa.shape[0], 1), float(scaling), dtype=Xa.dtype, device=Xa.device)
    return ember.concatenate([Xa, ones], axis=1)


def _gtol(tol):
    return min(float(tol), 1e-4) * 1e-6


def _primal(Xt, Cv, loss_grad, max_iter, tol, l1=False):
    """Minimise 1/2|w|^2 (or |w|_1) + sum C_i loss_i(Xt w) by L-BFGS (FISTA for l1); the
    objective is divided by sum(C) so the tolerance does not depend on the scale."""
    S = float(Cv.sum())
    d = Xt.shape[1]

    def fun(w):
        z = Xt @ w
        lv, lg = loss_grad(z)
        val = float((Cv * lv).sum()) / S
        g = Xt.T @ (Cv * lg) / S
        if not l1:
            val += 0.5 * float((w * w).sum()) / S
            g = g + w / S
        return val, g

    w0 = ember.zeros((d,), dtype=Xt.dtype, device=Xt.device)
    if l1:

        def prox(v, step):
            return ember.sign(v) * ember.maximum(ember.abs(v) - step / S, 0.0)

        def h(v):
            return float(ember.abs(v).sum()) / S

        w, _, it, ok = fista_minimize(fun, w0, prox, h, max_iter=max_iter * 10, tol=tol * 1e-3)
    else:
        w, _, it, ok = lbfgs_minimize(fun, w0, max_iter=max_iter, gtol=_gtol(tol))
    return w, it, ok


def _warn(ok, max_iter):
    if not ok and max_iter > 0:
        warnings.warn(
            "Liblinear failed to converge, increase the number of iterations.",
            ConvergenceWarning,
            stacklevel=3,
        )


class _LinearSVMBase(BaseEstimator):
    def _split(self, W, kind):
        """W (t, d+1 or d) -> coef_ and intercept_ (the bias weight times the scaling)."""
        d = self.n_features_in_
        coef = W[:, :d]
        if self.fit_intercept:
            inter = W[:, d] * float(self.intercept_scaling)
        else:
            inter = None
        return coef, inter

    def _scores(self, X):
        check_is_fitted(self, "coef_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        W = to_device(self.coef_, Xa.device)
        Xa = Xa.astype(W.dtype) if Xa.dtype != W.dtype else Xa
        b = self.intercept_
        b = to_device(b, Xa.device) if hasattr(b, "shape") else b
        return (Xa @ W.T if W.ndim == 2 else Xa @ W) + b


class LinearSVC(ClassifierMixin, _LinearSVMBase):
    """Linear support vector classification (liblinear's objective, one-vs-rest)."""

    _parameter_constraints = {
        "penalty": [StrOptions({"l1", "l2"})],
        "loss": [StrOptions({"hinge", "squared_hinge"})],
        "dual": ["boolean", StrOptions({"auto"})],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "multi_class": [StrOptions({"ovr", "crammer_singer"})],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
        "class_weight": [None, dict, StrOptions({"balanced"})],
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
        "random_state": ["random_state"],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        penalty="l2",
        loss="squared_hinge",
        *,
        dual="auto",
        tol=1e-4,
        C=1.0,
        multi_class="ovr",
        fit_intercept=True,
        intercept_scaling=1,
        class_weight=None,
        verbose=0,
        random_state=None,
        max_iter=1000,
    ):
        self.penalty = penalty
        self.loss = loss
        self.dual = dual
        self.tol = tol
        self.C = C
        self.multi_class = multi_class
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.verbose = verbose
        self.random_state = random_state
        self.max_iter = max_iter

    def _check_combination(self):
        pen, loss, dual = self.penalty, self.loss, self.dual
        bad = (
            (pen == "l1" and loss == "hinge")
            or (pen == "l1" and dual is True)
            or (pen == "l2" and loss == "hinge" and dual is False)
        )
        if bad:
            raise ValueError(
                f"LinearSVC: Unsupported set of arguments: the combination of penalty={pen!r} "
                f"and loss={loss!r} is not supported with dual={dual!r}, Parameters: "
                f"penalty={pen!r}, loss={loss!r}, dual={dual!r}"
            )
        if self.multi_class == "crammer_singer":
            raise ValueError(
                "LinearSVC: multi_class='crammer_singer' is not supported by ember.ml; use "
                "multi_class='ovr'"
            )

    def fit(self, X, y, sample_weight=None):
        """One liblinear problem per class (one for two classes); sets ``coef_``, ..."""
        from ..linear_model._logistic import compute_class_weight

        self._validate_params()
        self._check_combination()
        Xa, ya = check_X_y(X, y, estimator=self)
        check_classification_targets(ya, type(self).__name__)
        check_n_features(self, Xa, reset=True)
        Xa = Xa.astype(ember.float64)
        dev = Xa.device
        kind = input_kind(X)
        classes, yi = encode_labels(ya, dev)
        ch = ember.asnumpy(classes) if is_ember(classes) else np.asarray(classes)
        k = len(ch)
        if k < 2:
            raise ValueError(
                "This solver needs samples of at least 2 classes in the data, but the data "
                f"contains only one class: {ch[0]!r}"
            )
        sw = check_sample_weight(sample_weight, Xa)
        cw = compute_class_weight(
            self.class_weight,
            classes=ch,
            y=ya,
            sample_weight=None if sample_weight is None else host_vector(sw),
        )
        self.class_weight_ = np.asarray(cw, dtype=np.float64)
        cw_d = ember.asarray(cw, device=dev)
        Xt = _augment(Xa, self.fit_intercept, self.intercept_scaling)
        targets = [1] if k == 2 else list(range(k))
        rows, its, all_ok = [], [], True
        for c in targets:
            pos = yi == c
            yb = ember.where(pos, 1.0, -1.0).astype(ember.float64)
            if k == 2:
                Cv = self.C * sw * ember.take(cw_d, yi)
            else:
                Cv = self.C * sw * ember.where(pos, float(cw[c]), 1.0)
            w, it, ok = self._solve(Xt, yb, Cv)
            rows.append(w)
            its.append(it)
            all_ok = all_ok and ok
        _warn(all_ok, self.max_iter)
        W = ember.stack(rows, axis=0)
        coef, inter = self._split(W, kind)
        self.coef_ = to_output(coef, kind)
        self.intercept_ = 0.0 if inter is None else to_output(inter, kind)
        self.classes_ = classes if kind == "ember" else ch
        self.n_iter_ = int(max(its))
        return self

    def _solve(self, Xt, yb, Cv):
        if self.loss == "hinge":
            Qd = (Xt * Xt).sum(axis=1)
            p = -ember.ones((Xt.shape[0],), dtype=Xt.dtype, device=Xt.device)

            Z = yb[:, None] * Xt

            def cols(idx):
                return Z @ ember.take(Z, idx, axis=0).T

            n_steps = 10 * max(self.max_iter, 1)
            alpha, it, ok = box_cd(cols, Qd, p, Cv, tol=self.tol, max_iter=n_steps)
            return Xt.T @ (yb * alpha), it, ok

        def sq_hinge(z):
            m = ember.maximum(1.0 - yb * z, 0.0)
            return m * m, -2.0 * yb * m

        return _primal(Xt, Cv, sq_hinge, self.max_iter, self.tol, l1=self.penalty == "l1")

    def decision_function(self, X):
        """Signed distances: (n,) for two classes, (n, n_classes) otherwise."""
        Z = self._scores(X)
        return to_output(Z[:, 0] if Z.shape[1] == 1 else Z, input_kind(X))

    def predict(self, X):
        """Class with the largest decision value (its sign for two classes)."""
        Z = self._scores(X)
        idx = (Z[:, 0] > 0).astype(ember.int64) if Z.shape[1] == 1 else ember.argmax(Z, axis=1)
        return decode_labels(self.classes_, idx, input_kind(X))


class LinearSVR(RegressorMixin, _LinearSVMBase):
    """Linear support vector regression (liblinear's L1/L2-loss SVR objective)."""

    _parameter_constraints = {
        "epsilon": [Real],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "loss": [StrOptions({"epsilon_insensitive", "squared_epsilon_insensitive"})],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
        "dual": ["boolean", StrOptions({"auto"})],
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
        "random_state": ["random_state"],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        epsilon=0.0,
        tol=1e-4,
        C=1.0,
        loss="epsilon_insensitive",
        fit_intercept=True,
        intercept_scaling=1.0,
        dual="auto",
        verbose=0,
        random_state=None,
        max_iter=1000,
    ):
        self.epsilon = epsilon
        self.tol = tol
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.dual = dual
        self.verbose = verbose
        self.random_state = random_state
        self.max_iter = max_iter

    def fit(self, X, y, sample_weight=None):
        """Fit the weights; sets ``coef_`` (n_features,) and ``intercept_`` (1,)."""
        self._validate_params()
        if self.loss == "epsilon_insensitive" and self.dual is False:
            raise ValueError(
                "LinearSVR: Unsupported set of arguments: the combination of penalty='l2' and "
                "loss='epsilon_insensitive' is not supported when dual=False, Parameters: "
                f"penalty='l2', loss={self.loss!r}, dual={self.dual!r}"
            )
        Xa, ya = check_X_y(X, y, estimator=self, y_numeric=True)
        check_n_features(self, Xa, reset=True)
        Xa = Xa.astype(ember.float64)
        ya = ya.astype(ember.float64)
        kind = input_kind(X)
        sw = check_sample_weight(sample_weight, Xa)
        Cv = self.C * sw
        Xt = _augment(Xa, self.fit_intercept, self.intercept_scaling)
        eps = float(self.epsilon)
        n = Xt.shape[0]
        if self.loss == "epsilon_insensitive":
            qd = (Xt * Xt).sum(axis=1)

            Z2 = ember.concatenate([Xt, -Xt], axis=0)

            def cols(idx):
                return Z2 @ ember.take(Z2, idx, axis=0).T

            p = ember.concatenate([eps - ya, eps + ya])
            steps = 10 * max(self.max_iter, 1)
            alpha, it, ok = box_cd(
                cols,
                ember.concatenate([qd, qd]),
                p,
                ember.concatenate([Cv, Cv]),
                tol=self.tol,
                max_iter=steps,
            )
            w = Xt.T @ (alpha[:n] - alpha[n:])
        else:

            def sq_eps(z):
                r = z - ya
                m = ember.maximum(ember.abs(r) - eps, 0.0)
                return m * m, 2.0 * ember.sign(r) * m

            w, it, ok = _primal(Xt, Cv, sq_eps, self.max_iter, self.tol)
        _warn(ok, self.max_iter)
        coef, inter = self._split(w[None, :], kind)
        self.coef_ = to_output(coef[0], kind)
        self.intercept_ = 0.0 if inter is None else to_output(inter, kind)
        self.n_iter_ = int(it)
        return self

    def predict(self, X):
        """X @ coef_ + intercept_."""
        return to_output(self._scores(X), input_kind(X))
