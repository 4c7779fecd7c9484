"""SGDClassifier and SGDRegressor: linear models trained by stochastic gradient descent.

Updates run on mini-batches of ``_batch_size`` samples (one fused step per batch on the device
instead of scikit-learn's sample-by-sample loop): the step applies the summed per-sample loss
gradients at the current learning rate and shrinks the weights by the product of the per-sample
L2 factors, so one epoch covers the same learning-rate schedule (``optimal``, ``constant``,
``invscaling``, ``adaptive``; ``t`` counts samples). Multiclass classification is
one-versus-all with all classes' weights updated together as one (K, d) matrix; each problem
stops by scikit-learn's rule (its running epoch loss, summed before each update, fails to beat
the best by ``tol * n`` for ``n_iter_no_change`` epochs) and then keeps its weights while the
others go on (``adaptive`` lowers one shared rate). The iterates
are not sample-for-sample identical to scikit-learn's; the fitted models reach the same
quality (tests compare accuracy and R^2).
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, ClassifierMixin, RegressorMixin
from ..exceptions import ConvergenceWarning
from ..utils._labels import decode_labels, encode_labels
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_classification_targets,
    check_is_fitted,
    check_n_features,
    check_random_state,
    check_sample_weight,
    check_X_y,
    input_kind,
    is_ember,
    to_device,
    to_output,
)
from ._logistic import compute_class_weight

__all__ = ["SGDClassifier", "SGDRegressor"]

_CLF_LOSSES = {
    "hinge",
    "log_loss",
    "modified_huber",
    "squared_hinge",
    "perceptron",
    "squared_error",
    "huber",
    "epsilon_insensitive",
    "squared_epsilon_insensitive",
}
_REG_LOSSES = {"squared_error", "huber", "epsilon_insensitive", "squared_epsilon_insensitive"}


def _dloss(loss, p, y, eps):
    """d loss / d prediction, elementwise (y in {-1, 1} for the classification losses)."""
    if loss == "hinge" or loss == "perceptron":
        thr = 1.0 if loss == "hinge" else 0.0
        return ember.where(p * y <= thr, -y, 0.0)
    if loss == "squared_hinge":
        z = 1.0 - p * y
        return ember.where(z > 0, -2.0 * y * z, 0.0)
    if loss == "log_loss":
        return -y * ember.sigmoid(-p * y)
    if loss == "modified_huber":
        z = p * y
        return ember.where(z >= 1, 0.0, ember.where(z >= -1, -2.0 * (1.0 - z) * y, -4.0 * y))
    r = p - y
    if loss == "squared_error":
        return r
    if loss == "huber":
        return ember.clip(r, -eps, eps)
    if loss == "epsilon_insensitive":
        return ember.where(r > eps, 1.0, ember.where(r < -eps, -1.0, 0.0))
    # squared_epsilon_insensitive
    return ember.where(r > eps, 2.0 * (r - eps), ember.where(r < -eps, 2.0 * (r + eps), 0.0))


def _loss(loss, p, y, eps):
    if loss == "hinge":
        return ember.maximum(1.0 - p * y, 0.0)
    if loss == "perceptron":
        return ember.maximum(-p * y, 0.0)
    if loss == "squared_hinge":
        return ember.maximum(1.0 - p * y, 0.0) ** 2
    if loss == "log_loss":
        return ember.logaddexp(0.0, -p * y)
    if loss == "modified_huber":
        z = p * y
        return ember.where(z >= -1, ember.maximum(1.0 - z, 0.0) ** 2, -4.0 * z)
    r = ember.abs(p - y)
    if loss == "squared_error":
        return 0.5 * r * r
    if loss == "huber":
        return ember.where(r <= eps, 0.5 * r * r, eps * r - 0.5 * eps * eps)
    if loss == "epsilon_insensitive":
        return ember.maximum(r - eps, 0.0)
    return ember.maximum(r - eps, 0.0) ** 2


def _dloss_scalar(loss, p, y, eps):
    return float(_dloss(loss, ember.asarray([p]), ember.asarray([y]), eps)[0])


class _BaseSGD(BaseEstimator):
    _non_deterministic = True
    _batch_size = None  # None: about 128 steps per epoch, between 1 and 4096 samples

    def _lr_params(self):
        if self.learning_rate in ("constant", "invscaling", "adaptive") and self.eta0 <= 0:
            raise ValueError(f"eta0 must be > 0 for learning_rate={self.learning_rate!r}")
        if self.learning_rate == "optimal" and self.alpha == 0:
            raise ValueError(
                "alpha must be > 0 since learning_rate is 'optimal'. alpha is used to compute "
                "the optimal learning rate."
            )

    def _optimal_t0(self):
        typw = math.sqrt(1.0 / math.sqrt(self.alpha))
        eta0 = typw / max(1.0, _dloss_scalar(self.loss, -typw, 1.0, self.epsilon))
        return 1.0 / (eta0 * self.alpha)

    def _eta(self, t, eta_adaptive, t0):
        lr = self.learning_rate
        if lr == "constant":
            return self.eta0
        if lr == "optimal":
            return 1.0 / (self.alpha * (t0 + t - 1))
        if lr == "invscaling":
            return self.eta0 / (t**self.power_t)
        return eta_adaptive

    def _sgd(self, X, Y, sw, W, b, rng):
        """Epochs of mini-batch SGD on the (n, K) targets Y; returns W, b, n_iter, t."""
        n, d = X.shape
        alpha = self.alpha
        pen = self.penalty
        l1r = {"l2": 0.0, "l1": 1.0, "elasticnet": self.l1_ratio, None: 0.0}[pen]
        l2 = 0.0 if pen is None else alpha * (1.0 - l1r)
        l1 = 0.0 if pen is None else alpha * l1r
        t0 = self._optimal_t0() if self.learning_rate == "optimal" else 0.0
        t = getattr(self, "t_", 1.0) if self.warm_start else 1.0
        eta_ad = self.eta0
        best = math.inf
        no_imp = 0
        bs = self._batch_size or min(max(n // 128, 1), 4096)
        bs = max(1, min(bs, n))
        Xv = Yv = None
        if self.early_stopping:
            n_val = max(1, int(round(self.validation_fraction * n)))
            perm = rng.permutation(n, device=X.device)
            vi, ti = perm[:n_val], perm[n_val:]
            Xv, Yv = ember.take(X, vi, axis=0), ember.take(Y, vi, axis=0)
            X, Y, sw = ember.take(X, ti, axis=0), ember.take(Y, ti, axis=0), ember.take(sw, ti)
            n = X.shape[0]
            best_score = -math.inf
        avg_W = avg_b = None
        n_avg = 0
        fi = self.fit_intercept
        ep = 0
        K = W.shape[0]
        # scikit-learn's stopping rule, per one-versus-all problem: the epoch's running loss
        # (each sample's loss before its update, summed) against the best so far minus tol;
        # a problem that stops keeps its weights while the others go on
        per_class = self.tol is not None and not self.early_stopping
        best_k = np.full(K, np.inf)
        no_imp_k = np.zeros(K, dtype=np.int64)
        active = np.ones(K, dtype=bool)
        act = None  # device mask of the active rows (None: all)
        for ep in range(1, self.max_iter + 1):  # noqa: B007  (read after the loop)
            if self.shuffle:
                # One gather per epoch; the batches are then contiguous slices (views).
                perm = rng.permutation(n, device=X.device)
                Xp, Yp, Wp = (
                    ember.take(X, perm, axis=0),
                    ember.take(Y, perm, axis=0),
                    ember.take(sw, perm),
                )
            else:
                Xp, Yp, Wp = X, Y, sw
            total = 0.0
            run_k = None  # the running loss per problem (on the device)
            for s in range(0, n, bs):
                xb, yb, wb = Xp[s : s + bs], Yp[s : s + bs], Wp[s : s + bs]
                m = xb.shape[0]
                etas = [self._eta(t + i, eta_ad, t0) for i in range(m)]
                eta = sum(etas) / m
                P = xb @ W.T + b
                if per_class:
                    lk = (_loss(self.loss, P, yb, self.epsilon) * wb[:, None]).sum(axis=0)
                    run_k = lk if run_k is None else run_k + lk
                # Clipped as scikit-learn's MAX_DLOSS, so diverging margins stay finite.
                G = ember.clip(_dloss(self.loss, P, yb, self.epsilon), -1e12, 1e12)
                G = G * wb[:, None]
                shrink = 1.0
                if l2:
                    for e in etas:
                        shrink *= max(1.0 - e * l2, 0.0)
                W_new = W * shrink - eta * (G.T @ xb)
                b_new = b - eta * G.sum(axis=0) if fi else b
                if l1:
                    thr = eta * l1 * m
                    W_new = ember.sign(W_new) * ember.maximum(ember.abs(W_new) - thr, 0.0)
                if act is None:
                    W, b = W_new, b_new
                else:  # stopped problems keep their weights
                    W = ember.where(act[:, None], W_new, W)
                    b = ember.where(act, b_new, b) if fi else b
                t += m
                if self.average:
                    start = 1 if self.average is True else int(self.average)
                    if t >= start:
                        n_avg += 1
                        avg_W = W if avg_W is None else avg_W + (W - avg_W) / n_avg
                        avg_b = b if avg_b is None else avg_b + (b - avg_b) / n_avg
            if self.tol is None:
                continue
            if not per_class:
                P = X @ W.T + b
                total = float((_loss(self.loss, P, Y, self.epsilon) * sw[:, None]).sum()) / n
                if pen is not None:
                    total += alpha * (
                        (1 - l1r) * 0.5 * float((W * W).sum()) + l1r * float(ember.abs(W).sum())
                    )
            if per_class:
                losses = ember.asnumpy(run_k).astype(np.float64)  # K numbers per epoch
                worse = losses > best_k - self.tol * n
                no_imp_k = np.where(active & worse, no_imp_k + 1, np.where(active, 0, no_imp_k))
                best_k = np.where(active, np.minimum(best_k, losses), best_k)
                done = active & (no_imp_k >= self.n_iter_no_change)
                if done.any():
                    if self.learning_rate == "adaptive" and eta_ad > 1e-6:
                        eta_ad /= 5.0
                        no_imp_k[done] = 0
                    else:
                        active &= ~done
                        if not active.any():
                            break
                        act = ember.asarray(active, device=W.device)
                continue
            if self.early_stopping:
                score = self._val_score(Xv, Yv, W, b)
                if score < best_score + self.tol:
                    no_imp += 1
                else:
                    no_imp = 0
                best_score = max(best_score, score)
            else:
                if total > best - self.tol:
                    no_imp += 1
                else:
                    no_imp = 0
                best = min(best, total)
            if no_imp >= self.n_iter_no_change:
                if self.learning_rate == "adaptive" and eta_ad > 1e-6:
                    eta_ad /= 5.0
                    no_imp = 0
                else:
                    break
        else:
            if self.tol is not None:
                warnings.warn(
                    "Maximum number of iteration reached before convergence. Consider "
                    "increasing max_iter to improve the fit.",
                    ConvergenceWarning,
                    stacklevel=3,
                )
        if self.average and avg_W is not None:
            W, b = avg_W, avg_b
        return W, b, ep, t

    def _common_constraints():  # noqa: N805  (a table builder, not a method)
        return {
            "penalty": [StrOptions({"l2", "l1", "elasticnet"}), None],
            "alpha": [Interval(Real, 0, None, closed="left")],
            "l1_ratio": [Interval(Real, 0, 1, closed="both")],
            "fit_intercept": ["boolean"],
            "max_iter": [Interval(Integral, 1, None, closed="left")],
            "tol": [Interval(Real, None, None, closed="neither"), None],
            "shuffle": ["boolean"],
            "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
            "epsilon": [Interval(Real, 0, None, closed="left")],
            "random_state": ["random_state"],
            "learning_rate": [StrOptions({"constant", "optimal", "invscaling", "adaptive"})],
            "eta0": [Interval(Real, 0, None, closed="left")],
            "power_t": [Interval(Real, None, None, closed="neither")],
            "early_stopping": ["boolean"],
            "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
            "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
            "warm_start": ["boolean"],
            "average": [Interval(Integral, 0, None, closed="left"), "boolean"],
        }


class SGDClassifier(ClassifierMixin, _BaseSGD):
    """Linear classifier (SVM, logistic, ...) trained by SGD; one-versus-all for K > 2."""

    _parameter_constraints = {
        **_BaseSGD._common_constraints(),
        "loss": [StrOptions(_CLF_LOSSES)],
        "n_jobs": [Integral, None],
        "class_weight": [StrOptions({"balanced"}), dict, None],
    }

    def __init__(
        self,
        loss="hinge",
        *,
        penalty="l2",
        alpha=0.0001,
        l1_ratio=0.15,
        fit_intercept=True,
        max_iter=1000,
        tol=1e-3,
        shuffle=True,
        verbose=0,
        epsilon=0.1,
        n_jobs=None,
        random_state=None,
        learning_rate="optimal",
        eta0=0.01,
        power_t=0.5,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=5,
        class_weight=None,
        warm_start=False,
        average=False,
    ):
        self.loss = loss
        self.penalty = penalty
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.shuffle = shuffle
        self.verbose = verbose
        self.epsilon = epsilon
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.power_t = power_t
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.average = average

    def _val_score(self, Xv, Yv, W, b):
        P = Xv @ W.T + b
        if P.shape[1] == 1:
            return float(((P[:, 0] > 0) == (Yv[:, 0] > 0)).astype(ember.float64).mean())
        return float(
            (ember.argmax(P, axis=1) == ember.argmax(Yv, axis=1)).astype(ember.float64).mean()
        )

    def fit(self, X, y, coef_init=None, intercept_init=None, sample_weight=None):
        """Fit by SGD; sets ``coef_``, ``intercept_``, ``classes_``, ``n_iter_``, ``t_``."""
        self._validate_params()
        self._lr_params()
        Xa, ya = check_X_y(X, y, estimator=self)
        check_classification_targets(ya, type(self).__name__)
        check_n_features(self, Xa, reset=True)
        dev = Xa.device
        classes, yi = encode_labels(ya, dev)
        K = int(classes.shape[0])
        if K < 2:
            raise ValueError("The number of classes has to be greater than one; got 1 class")
        sw = check_sample_weight(sample_weight, Xa)
        if self.class_weight is not None:
            cw = compute_class_weight(
                self.class_weight,
                classes=ember.asnumpy(classes) if is_ember(classes) else classes,
                y=ya,
            )
            sw = sw * ember.take(ember.asarray(cw, device=dev).astype(Xa.dtype), yi)
        nc = 1 if K == 2 else K
        if K == 2:
            Y = ember.where(yi == 1, 1.0, -1.0)[:, None].astype(Xa.dtype)
        else:
            Y = ember.where(yi[:, None] == ember.arange(K, device=dev)[None, :], 1.0, -1.0)
            Y = Y.astype(Xa.dtype)
        d = Xa.shape[1]
        W = ember.zeros((nc, d), dtype=Xa.dtype, device=dev)
        b = ember.zeros((nc,), dtype=Xa.dtype, device=dev)
        if coef_init is not None:
            W = to_device(coef_init, dev).astype(Xa.dtype).reshape(nc, d)
        elif self.warm_start and hasattr(self, "coef_"):
            W = to_device(self.coef_, dev).astype(Xa.dtype).reshape(nc, d)
        if intercept_init is not None:
            b = to_device(np.atleast_1d(intercept_init), dev).astype(Xa.dtype).reshape(nc)
        elif self.warm_start and hasattr(self, "intercept_"):
            b = to_device(self.intercept_, dev).astype(Xa.dtype).reshape(nc)
        rng = check_random_state(self.random_state)
        if nc == 1:
            W, b, n_iter, t = self._sgd(Xa, Y, sw, W, b, rng)
        else:
            # One-versus-all: each class is its own binary problem with its own stopping.
            rows, bs_, iters, ts = [], [], [], []
            for k in range(nc):
                Wk, bk, it, tk = self._sgd(Xa, Y[:, k : k + 1], sw, W[k : k + 1], b[k : k + 1], rng)
                rows.append(Wk)
                bs_.append(bk)
                iters.append(it)
                ts.append(tk)
            W, b = ember.concatenate(rows), ember.concatenate(bs_)
            n_iter, t = max(iters), ts[-1]
        kind = input_kind(X)
        self.classes_ = (
            classes
            if kind == "ember"
            else (ember.asnumpy(classes) if is_ember(classes) else classes)
        )
        self.coef_ = to_output(W, kind)
        self.intercept_ = to_output(b, kind)
        self.n_iter_ = n_iter
        self.t_ = float(t)
        return self

    def _scores(self, X):
        check_is_fitted(self, "coef_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        W = to_device(self.coef_, Xa.device)
        Z = Xa.astype(W.dtype) @ W.T + to_device(self.intercept_, Xa.device)
        return Z[:, 0] if Z.shape[1] == 1 else Z

    def decision_function(self, X):
        """Signed distances to the hyperplanes."""
        return to_output(self._scores(X), input_kind(X))

    def predict(self, X):
        """Class with the largest score."""
        Z = self._scores(X)
        idx = (Z > 0).astype(ember.int64) if Z.ndim == 1 else ember.argmax(Z, axis=1)
        return decode_labels(self.classes_, idx, input_kind(X))

    @property
    def predict_proba(self):
        """Probabilities for ``log_loss`` (logistic) and ``modified_huber`` losses (the
        attribute does not exist for the other losses, as scikit-learn's)."""
        if self.loss not in ("log_loss", "modified_huber"):
            raise AttributeError(f"probability estimates are not available for loss={self.loss!r}")
        return self._predict_proba

    @property
    def predict_log_proba(self):
        """Log of ``predict_proba`` (same availability)."""
        self.predict_proba  # noqa: B018  (raises AttributeError when unavailable)
        return self._predict_log_proba

    def _predict_log_proba(self, X):
        P = self._predict_proba(X)
        return ember.log(P) if is_ember(P) else np.log(P)

    def _predict_proba(self, X):
        Z = self._scores(X)
        if self.loss == "log_loss":
            if Z.ndim == 1:
                p = ember.sigmoid(Z)
                P = ember.stack([1.0 - p, p], axis=1)
            else:
                P = ember.sigmoid(Z)
                s = P.sum(axis=1, keepdims=True)
                P = P / ember.where(s == 0, 1.0, s)
        else:
            P = (ember.clip(Z, -1.0, 1.0) + 1.0) / 2.0
            if Z.ndim == 1:
                P = ember.stack([1.0 - P, P], axis=1)
            else:
                s = P.sum(axis=1, keepdims=True)
                K = P.shape[1]
                P = ember.where(s == 0, 1.0 / K, P / ember.where(s == 0, 1.0, s))
        return to_output(P, input_kind(X))


class SGDRegressor(RegressorMixin, _BaseSGD):
    """Linear regressor trained by SGD (squared, Huber, epsilon-insensitive losses)."""

    _parameter_constraints = {
        **_BaseSGD._common_constraints(),
        "loss": [StrOptions(_REG_LOSSES)],
    }

    def __init__(
        self,
        loss="squared_error",
        *,
        penalty="l2",
        alpha=0.0001,
        l1_ratio=0.15,
        fit_intercept=True,
        max_iter=1000,
        tol=1e-3,
        shuffle=True,
        verbose=0,
        epsilon=0.1,
        random_state=None,
        learning_rate="invscaling",
        eta0=0.01,
        power_t=0.25,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=5,
        warm_start=False,
        average=False,
    ):
        self.loss = loss
        self.penalty = penalty
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.shuffle = shuffle
        self.verbose = verbose
        self.epsilon = epsilon
        self.random_state = random_state
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.power_t = power_t
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.warm_start = warm_start
        self.average = average

    def _val_score(self, Xv, Yv, W, b):
        P = (Xv @ W.T + b)[:, 0]
        y = Yv[:, 0]
        den = float(((y - y.mean()) ** 2).sum())
        return 1.0 - float(((y - P) ** 2).sum()) / (den if den else 1.0)

    def fit(self, X, y, coef_init=None, intercept_init=None, sample_weight=None):
        """Fit by SGD; sets ``coef_``, ``intercept_``, ``n_iter_``, ``t_``."""
        self._validate_params()
        self._lr_params()
        Xa, ya = check_X_y(X, y, estimator=self, y_numeric=True)
        check_n_features(self, Xa, reset=True)
        dev = Xa.device
        sw = check_sample_weight(sample_weight, Xa)
        d = Xa.shape[1]
        W = ember.zeros((1, d), dtype=Xa.dtype, device=dev)
        b = ember.zeros((1,), dtype=Xa.dtype, device=dev)
        if coef_init is not None:
            W = to_device(coef_init, dev).astype(Xa.dtype).reshape(1, d)
        elif self.warm_start and hasattr(self, "coef_"):
            W = to_device(self.coef_, dev).astype(Xa.dtype).reshape(1, d)
        if intercept_init is not None:
            b = to_device(np.atleast_1d(intercept_init), dev).astype(Xa.dtype).reshape(1)
        elif self.warm_start and hasattr(self, "intercept_"):
            b = to_device(self.intercept_, dev).astype(Xa.dtype).reshape(1)
        rng = check_random_state(self.random_state)
        W, b, n_iter, t = self._sgd(Xa, ya.astype(Xa.dtype)[:, None], sw, W, b, rng)
        kind = input_kind(X)
        self.coef_ = to_output(W[0], kind)
        self.intercept_ = to_output(b, kind)
        self.n_iter_ = n_iter
        self.t_ = float(t)
        return self

    def predict(self, X):
        """Predicted targets."""
        check_is_fitted(self, "coef_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        w = to_device(self.coef_, Xa.device)
        out = Xa.astype(w.dtype) @ w + to_device(self.intercept_, Xa.device)
        return to_output(out, input_kind(X))
