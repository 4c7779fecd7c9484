"""LogisticRegression: binary logistic or multinomial loss; L2 (or no) penalty by L-BFGS, L1 and
elastic-net penalties (``solver='saga'``) by accelerated proximal gradient (FISTA).

The loss and its gradient are ember expressions (one matmul forward, one back); the optimiser
is ``utils._optimize.lbfgs_minimize``. The objective is scikit-learn's, normalised by the
total sample weight, so ``tol`` bounds the same gradient and ``C`` means the same thing.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, ClassifierMixin
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

__all__ = ["LogisticRegression", "compute_class_weight"]


def logsumexp_rows(Z):
    m = Z.max(axis=1, keepdims=True)
    return (ember.log(ember.exp(Z - m).sum(axis=1, keepdims=True)) + m)[:, 0]


def softmax_rows(Z):
    e = ember.exp(Z - Z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def compute_class_weight(class_weight, *, classes, y, sample_weight=None):
    """Per-class weights: 'balanced' = total weight / (n_classes * weight per class), or a
    dict (computed on the host from the labels; only n_classes numbers)."""
    classes = np.asarray(classes)
    yh = ember.asnumpy(y) if is_ember(y) else np.asarray(y)
    if class_weight is None or (isinstance(class_weight, dict) and not class_weight):
        return np.ones(len(classes))
    if class_weight == "balanced":
        idx = np.searchsorted(classes, yh)
        if not np.all(classes[np.clip(idx, 0, len(classes) - 1)] == yh):
            raise ValueError("classes should include all valid labels that can be in y")
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        counts = np.bincount(idx, weights=sw, minlength=len(classes))
        total = len(yh) if sw is None else sw.sum()
        return total / (len(classes) * counts.astype(np.float64))
    if not isinstance(class_weight, dict):
        raise ValueError(f"class_weight must be dict, 'balanced', or None, got: {class_weight!r}")
    w = np.ones(len(classes))
    for c, v in class_weight.items():
        pos = np.nonzero(classes == c)[0]
        if pos.size == 0:
            raise ValueError(f"The classes, {[c]}, are not in class_weight")
        w[pos[0]] = v
    return w


class LogisticRegression(ClassifierMixin, BaseEstimator):
    """Logistic regression (L-BFGS; binary loss for 2 classes, multinomial otherwise)."""

    _parameter_constraints = {
        "penalty": [StrOptions({"l1", "l2", "elasticnet", "deprecated"}), None],
        "C": [Interval(Real, 0, None, closed="right")],
        "l1_ratio": [Interval(Real, 0, 1, closed="both"), None],
        "dual": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "random_state": ["random_state"],
        "solver": [StrOptions({"lbfgs", "newton-cg", "newton-cholesky", "sag", "saga"})],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
        "warm_start": ["boolean"],
        "n_jobs": [None, Integral],
    }

    def __init__(
        self,
        penalty="deprecated",
        *,
        C=1.0,
        l1_ratio=0.0,
        dual=False,
        tol=1e-4,
        fit_intercept=True,
        intercept_scaling=1,
        class_weight=None,
        random_state=None,
        solver="lbfgs",
        max_iter=100,
        verbose=0,
        warm_start=False,
        n_jobs=None,
    ):
        self.penalty = penalty
        self.C = C
        self.l1_ratio = l1_ratio
        self.dual = dual
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.random_state = random_state
        self.solver = solver
        self.max_iter = max_iter
        self.verbose = verbose
        self.warm_start = warm_start
        self.n_jobs = n_jobs

    def fit(self, X, y, sample_weight=None):
        """Fit by L-BFGS; sets ``classes_``, ``coef_``, ``intercept_``, ``n_iter_``."""
        self._validate_params()
        penalty = self._effective_penalty()
        if penalty in ("l1", "elasticnet") and self.solver != "saga":
            raise ValueError(
                f"Solver {self.solver} supports only 'l2' or None penalties, got {penalty} penalty."
            )
        if self.dual:
            raise ValueError("LogisticRegression: dual=True is only for liblinear; use False")
        Xa, ya = check_X_y(X, y, estimator=self)
        check_classification_targets(ya, type(self).__name__)
        check_n_features(self, Xa, reset=True)
        dev = Xa.device
        classes, yi = encode_labels(ya, dev)
        K = int(classes.shape[0])
        if K < 2:
            only = ember.asnumpy(classes)[0] if is_ember(classes) else classes[0]
            raise ValueError(
                "This solver needs samples of at least 2 classes in the data, but the data "
                f"contains only one class: {only!r}"
            )
        sw = check_sample_weight(sample_weight, Xa)
        if self.class_weight is not None:
            cw = compute_class_weight(
                self.class_weight,
                classes=ember.asnumpy(classes) if is_ember(classes) else classes,
                y=ya,
                # n weights for the per-class totals (host copy of a 1-D vector).
                sample_weight=None if sample_weight is None else ember.asnumpy(sw),
            )
            sw = sw * ember.take(ember.asarray(cw, device=dev).astype(Xa.dtype), yi)
        n, d = Xa.shape
        S = float(sw.sum())
        no_pen = penalty is None
        rho = {"l1": 1.0, "elasticnet": float(self.l1_ratio or 0.0)}.get(penalty, 0.0)
        lam = 0.0 if no_pen else (1.0 - rho) / (self.C * S)
        lam1 = 0.0 if no_pen else rho / (self.C * S)
        fi = self.fit_intercept
        binary = K == 2
        nc = 1 if binary else K
        swn = sw / S
        if binary:
            y01 = yi.astype(Xa.dtype)
        else:
            onehot = (yi[:, None] == ember.arange(K, device=dev)[None, :]).astype(Xa.dtype)

        def fun(theta):
            W = theta[: nc * d].reshape(nc, d)
            b = theta[nc * d :] if fi else None
            Z = Xa @ W.T
            if fi:
                Z = Z + b
            if binary:
                z = Z[:, 0]
                loss_i = ember.logaddexp(0.0, z) - y01 * z
                G = (ember.sigmoid(z) - y01)[:, None]
            else:
                loss_i = logsumexp_rows(Z) - (Z * onehot).sum(axis=1)
                G = softmax_rows(Z) - onehot
            G = G * swn[:, None]
            val = float((loss_i * swn).sum()) + 0.5 * lam * float((W * W).sum())
            gW = G.T @ Xa + lam * W
            parts = [gW.reshape(-1)]
            if fi:
                parts.append(G.sum(axis=0))
            return val, ember.concatenate(parts)

        size = nc * d + (nc if fi else 0)
        theta0 = ember.zeros((size,), dtype=Xa.dtype, device=dev)
        if self.warm_start and hasattr(self, "coef_"):
            c0 = to_device(self.coef_, dev).astype(Xa.dtype)
            if tuple(c0.shape) == (nc, d):
                parts = [c0.reshape(-1)]
                if fi:
                    parts.append(to_device(np.atleast_1d(self.intercept_), dev).astype(Xa.dtype))
                theta0 = ember.concatenate(parts)
        if lam1 > 0:
            nw = nc * d

            def prox(v, step):
                # Soft-threshold the weights; the intercepts are not penalised.
                w_part = v[:nw]
                w_part = ember.sign(w_part) * ember.maximum(ember.abs(w_part) - step * lam1, 0.0)
                return ember.concatenate([w_part, v[nw:]]) if fi else w_part

            def l1(v):
                return lam1 * float(ember.abs(v[:nw]).sum())

            theta, _, n_iter, ok = fista_minimize(
                fun, theta0, prox, l1, max_iter=self.max_iter, tol=self.tol
            )
        else:
            theta, _, n_iter, ok = lbfgs_minimize(
                fun, theta0, max_iter=self.max_iter, gtol=self.tol
            )
        if not ok and self.max_iter > 0 and lam1 > 0:
            warnings.warn(
                "The max_iter was reached which means the coef_ did not converge",
                ConvergenceWarning,
                stacklevel=2,
            )
        elif not ok and self.max_iter > 0:
            warnings.warn(
                "lbfgs failed to converge after "
                f"{n_iter} iteration(s) (status=1):\nSTOP: TOTAL NO. OF ITERATIONS REACHED "
                "LIMIT\n\nIncrease the number of iterations to improve the convergence "
                f"(max_iter={self.max_iter}).",
                ConvergenceWarning,
                stacklevel=2,
            )
        kind = input_kind(X)
        W = theta[: nc * d].reshape(nc, d)
        b = theta[nc * d :] if fi else ember.zeros((nc,), dtype=Xa.dtype, device=dev)
        self.classes_ = (
            classes
            if kind == "ember"
            else (ember.asnumpy(classes) if is_ember(classes) else classes)
        )
        self.coef_ = to_output(W, kind)
        self.intercept_ = to_output(b, kind)
        self.n_iter_ = np.asarray([n_iter], dtype=np.int32)
        return self

    def _effective_penalty(self):
        """scikit-learn 1.8's rule: with the default penalty='deprecated', l1_ratio picks l2
        (0), l1 (1) or elasticnet; C=inf or penalty=None mean no penalty."""
        p = self.penalty
        if p == "deprecated":
            r = self.l1_ratio
            p = "l2" if r in (0, None) else ("l1" if r == 1 else "elasticnet")
            if self.C == float("inf"):
                p = None
        else:
            warnings.warn(
                "'penalty' was deprecated in version 1.8 and will be removed in 1.10. To avoid "
                "this warning, leave 'penalty' set to its default value and use 'l1_ratio' or "
                "'C' instead.",
                FutureWarning,
                stacklevel=3,
            )
        if p == "elasticnet" and self.l1_ratio is None:
            raise ValueError("l1_ratio must be specified when penalty is elasticnet.")
        return p

    def decision_function(self, X):
        """Confidence scores: (n,) for two classes, (n, n_classes) otherwise."""
        return to_output(self._scores(X), input_kind(X))

    def _scores(self, X):
        check_is_fitted(self, "coef_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        W = to_device(self.coef_, Xa.device)
        Xa = Xa.astype(W.dtype) if Xa.dtype != W.dtype else Xa
        Z = Xa @ W.T + to_device(self.intercept_, Xa.device)
        return Z[:, 0] if Z.shape[1] == 1 else Z

    def predict_proba(self, X):
        """Class probabilities (columns in ``classes_`` order)."""
        Z = self._scores(X)
        if Z.ndim == 1:
            p = ember.sigmoid(Z)
            P = ember.stack([1.0 - p, p], axis=1)
        else:
            P = softmax_rows(Z)
        return to_output(P, input_kind(X))

    def predict_log_proba(self, X):
        """Log of ``predict_proba``."""
        Z = self._scores(X)
        if Z.ndim == 1:
            P = ember.stack([-ember.logaddexp(0.0, Z), -ember.logaddexp(0.0, -Z)], axis=1)
        else:
            P = Z - logsumexp_rows(Z)[:, None]
        return to_output(P, input_kind(X))

    def predict(self, X):
        """Most probable class label for each sample."""
        Z = self._scores(X)
        idx = (Z > 0).astype(ember.int64) if Z.ndim == 1 else ember.argmax(Z, axis=1)
        return decode_labels(self.classes_, idx, input_kind(X))
