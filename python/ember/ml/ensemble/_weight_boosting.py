"""``AdaBoostClassifier`` (SAMME) and ``AdaBoostRegressor`` (AdaBoost.R2), scikit-learn's
``sklearn.ensemble`` boosting (>= 1.6 semantics: SAMME only, no ``algorithm`` parameter).

The boosting weights live on X's device as ember arrays; each round fits a clone of the base
estimator (default: an ``ember.ml`` decision stump / depth-3 regression tree) on the same
device, and only the round's weighted error and the weights' sum (two scalars) come to the
host for scikit-learn's stopping rules. The classifier passes the weights to the base's
``fit`` (as scikit-learn); the regressor fits on a weighted resample with replacement
(inverse CDF: ``cumsum`` + ``searchsorted`` of uniform draws on the device), as scikit-learn.
Predictions combine the members on the device: weighted one-hot votes (classifier), the
weighted median (regressor). Random streams differ from scikit-learn's, so the regressor's
members (and any randomized base) differ; with a deterministic base the classifier follows
the same rounds as scikit-learn's whenever its base trees split alike.
"""

from __future__ import annotations

import inspect
import numbers
import warnings

import numpy as np

import ember

from ..base import BaseEstimator, ClassifierMixin, RegressorMixin, clone, is_regressor
from ..utils._labels import decode_labels, encode_labels
from ..utils._param_validation import HasMethods, Interval, StrOptions
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

__all__ = ["AdaBoostClassifier", "AdaBoostRegressor"]


def _on(a, dev):
    if is_ember(a):
        return to_device(a, dev)
    return to_device(np.asarray(a), dev)


def _has_sample_weight(est):
    try:
        return "sample_weight" in inspect.signature(est.fit).parameters
    except (TypeError, ValueError):
        return False


class _BaseWeightBoosting(BaseEstimator):
    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "n_estimators": [Interval(numbers.Integral, 1, None, closed="left")],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def _make_estimator(self, rng):
        est = clone(self.estimator_)
        params = est.get_params(deep=True)
        seeds = {k: int(rng.integers(0, 2**31 - 1, size=1)[0]) for k in params
                 if k == "random_state" or k.endswith("__random_state")}  # fmt: skip
        if seeds:
            est.set_params(**seeds)
        return est

    def _fit(self, X, y, sample_weight):
        self._validate_params()
        who = type(self).__name__
        regress = is_regressor(self)
        Xa, ya = check_X_y(X, y, estimator=self, y_numeric=regress)
        check_n_features(self, Xa, reset=True)
        dev = Xa.device
        sw = check_sample_weight(sample_weight, Xa, ember.float64)
        if bool((sw < 0).any()):
            raise ValueError(f"{who}: Negative values in data passed to `sample_weight`")
        sw = sw / sw.sum()
        self.estimator_ = (
            self.estimator if self.estimator is not None else self._default_estimator()
        )
        if not regress and not _has_sample_weight(self.estimator_):
            raise ValueError(f"{type(self.estimator_).__name__} doesn't support sample_weight.")
        if regress:
            target = ya.astype(ember.float64)
        else:
            check_classification_targets(ya, who)
            yk = ya if input_kind(y) == "ember" else (ember.asnumpy(ya) if is_ember(ya) else ya)
            self.classes_, target = encode_labels(yk, dev)
            self.n_classes_ = int(self.classes_.shape[0])
        self.estimators_ = []
        self.estimator_weights_ = np.zeros(self.n_estimators, dtype=np.float64)
        self.estimator_errors_ = np.ones(self.n_estimators, dtype=np.float64)
        rng = check_random_state(self.random_state)
        eps = float(np.finfo(np.float64).eps)
        zero = sw == 0.0
        for it in range(self.n_estimators):
            # scikit-learn's floor against vanishing weights (exact zeros stay zero)
            sw = ember.where(zero, 0.0, ember.maximum(sw, eps))
            sw, w_est, err = self._boost(it, Xa, target, sw, rng)
            if sw is None:
                break
            self.estimator_weights_[it] = w_est
            self.estimator_errors_[it] = err
            if err == 0:
                break
            total = float(sw.sum())
            if not np.isfinite(total):
                warnings.warn(
                    "Sample weights have reached infinite values, at iteration "
                    f"{it}, causing overflow. Iterations stopped. Try lowering the "
                    "learning rate.",
                    stacklevel=3,
                )
                break
            if total <= 0:
                break
            if it < self.n_estimators - 1:
                sw = sw / total
        self._kind = input_kind(X)
        return self

    def _pred(self, est, Xa):
        return _on(est.predict(Xa), Xa.device).reshape(-1)

    def _X(self, X):
        check_is_fitted(self, "estimators_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        return Xa

    @property
    def feature_importances_(self):
        """Estimator-weight-averaged feature importances of the members."""
        if not getattr(self, "estimators_", None):
            raise ValueError("Estimator not fitted, call `fit` before `feature_importances_`.")
        w = self.estimator_weights_
        norm = float(w.sum())
        acc = None
        for wk, est in zip(w, self.estimators_, strict=False):
            imp = getattr(est, "feature_importances_", None)
            if imp is None:
                raise AttributeError(
                    "Unable to compute feature importances since estimator does not have a "
                    "feature_importances_ attribute"
                )
            imp = imp if is_ember(imp) else ember.asarray(np.asarray(imp))
            acc = imp * float(wk) if acc is None else acc + imp * float(wk)
        return to_output(acc / norm, self._kind)


class AdaBoostClassifier(ClassifierMixin, _BaseWeightBoosting):
    """AdaBoost-SAMME classifier (Zhu et al. 2009) over ``ember.ml`` decision stumps by
    default."""

    def __init__(self, estimator=None, *, n_estimators=50, learning_rate=1.0, random_state=None):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.random_state = random_state

    def _default_estimator(self):
        from ..tree import DecisionTreeClassifier

        return DecisionTreeClassifier(max_depth=1)

    def fit(self, X, y, sample_weight=None):
        """Boost ``n_estimators`` rounds (fewer when a member is perfect or worse than
        chance)."""
        return self._fit(X, y, sample_weight)

    def _boost(self, it, Xa, yi, sw, rng):
        est = self._make_estimator(rng)
        self.estimators_.append(est)
        est.fit(Xa, yi, sample_weight=sw)
        wrong = (self._pred(est, Xa).astype(ember.int64) != yi).astype(ember.float64)
        err = float((wrong * sw).sum() / sw.sum())
        if err <= 0:
            return sw, 1.0, 0.0
        K = self.n_classes_
        if err >= 1.0 - 1.0 / K:
            self.estimators_.pop(-1)
            if not self.estimators_:
                raise ValueError(
                    "BaseClassifier in AdaBoostClassifier ensemble is worse than random, "
                    "ensemble can not be fit."
                )
            return None, None, None
        alpha = self.learning_rate * (np.log((1.0 - err) / err) + np.log(K - 1.0))
        if it != self.n_estimators - 1:
            sw = ember.where(sw > 0, sw * ember.exp(alpha * wrong), sw)
        return sw, float(alpha), err

    def _votes(self, Xa):
        """Per stage: the cumulative weighted symmetric votes (n, K) and weight sum; a member
        gives its weight to its predicted class and -weight/(K-1) to the others."""
        dev = Xa.device
        K = self.n_classes_
        ar = ember.arange(K, device=dev)[None, :]
        acc, norm = None, 0.0
        for w, est in zip(self.estimator_weights_, self.estimators_, strict=False):
            p = self._pred(est, Xa).astype(ember.int64)
            w = float(w)
            v = ember.where(p[:, None] == ar, w, -w / (K - 1))
            acc = v if acc is None else acc + v
            norm += w
            yield acc, norm

    def _decision(self, votes, norm):
        pred = votes / norm
        if self.n_classes_ == 2:
            return pred[:, 1] - pred[:, 0]
        return pred

    def _final(self, Xa):
        if self.n_classes_ == 1:
            return ember.zeros((int(Xa.shape[0]), 1), dtype=ember.float64, device=Xa.device)
        *_, (votes, _) = self._votes(Xa)  # the last stage: every member
        return self._decision(votes, float(self.estimator_weights_.sum()))

    def decision_function(self, X):
        """Weighted class votes / total weight; for two classes, the vote margin of class 1."""
        Xa = self._X(X)
        return to_output(self._final(Xa), input_kind(X))

    def staged_decision_function(self, X):
        Xa = self._X(X)
        kind = input_kind(X)
        for votes, norm in self._votes(Xa):
            yield to_output(self._decision(votes, norm), kind)

    def _label(self, d, kind):
        if self.n_classes_ == 2:
            idx = (d > 0).astype(ember.int64)
        else:
            idx = ember.argmax(d, axis=1)
        return decode_labels(self.classes_, idx, kind)

    def predict(self, X):
        Xa = self._X(X)
        return self._label(self._final(Xa), input_kind(X))

    def staged_predict(self, X):
        Xa = self._X(X)
        kind = input_kind(X)
        for votes, norm in self._votes(Xa):
            yield self._label(self._decision(votes, norm), kind)

    def _proba(self, d):
        K = self.n_classes_
        if K == 2:
            d = ember.stack([-d, d], axis=1) / 2.0
        else:
            d = d / (K - 1)
        d = d - d.max(axis=1, keepdims=True)
        e = ember.exp(d)
        return e / e.sum(axis=1, keepdims=True)

    def predict_proba(self, X):
        """Softmax of the decision function (scaled by 1/(K-1); two classes: (-d, d)/2)."""
        Xa = self._X(X)
        if self.n_classes_ == 1:
            return to_output(
                ember.ones((int(Xa.shape[0]), 1), dtype=ember.float64, device=Xa.device),
                input_kind(X),
            )
        return to_output(self._proba(self._final(Xa)), input_kind(X))

    def staged_predict_proba(self, X):
        Xa = self._X(X)
        kind = input_kind(X)
        for votes, norm in self._votes(Xa):
            yield to_output(self._proba(self._decision(votes, norm)), kind)

    def predict_log_proba(self, X):
        Xa = self._X(X)
        if self.n_classes_ == 1:
            z = ember.zeros((int(Xa.shape[0]), 1), dtype=ember.float64, device=Xa.device)
            return to_output(z, input_kind(X))
        return to_output(ember.log(self._proba(self._final(Xa))), input_kind(X))

    def staged_score(self, X, y, sample_weight=None):
        from ..metrics import accuracy_score

        for p in self.staged_predict(X):
            yield accuracy_score(y, p, sample_weight=sample_weight)


class AdaBoostRegressor(RegressorMixin, _BaseWeightBoosting):
    """AdaBoost.R2 regressor (Drucker 1997) over ``ember.ml`` depth-3 regression trees by
    default; predictions are the estimator-weighted median."""

    _parameter_constraints = {
        **_BaseWeightBoosting._parameter_constraints,
        "loss": [StrOptions({"linear", "square", "exponential"})],
    }

    def __init__(
        self,
        estimator=None,
        *,
        n_estimators=50,
        learning_rate=1.0,
        loss="linear",
        random_state=None,
    ):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.loss = loss
        self.random_state = random_state

    def _default_estimator(self):
        from ..tree import DecisionTreeRegressor

        return DecisionTreeRegressor(max_depth=3)

    def fit(self, X, y, sample_weight=None):
        """Boost ``n_estimators`` rounds, each on a resample drawn with the boosting weights."""
        return self._fit(X, y, sample_weight)

    def _boost(self, it, Xa, y, sw, rng):
        est = self._make_estimator(rng)
        self.estimators_.append(est)
        dev = Xa.device
        n = int(Xa.shape[0])
        cdf = ember.cumsum(sw)
        cdf = cdf / cdf[-1]
        u = rng.random((n,), device=dev)
        idx = ember.clip(ember.searchsorted(cdf, u, side="right"), 0, n - 1)
        est.fit(ember.take(Xa, idx, axis=0), ember.take(y, idx))
        err_v = ember.abs(self._pred(est, Xa).astype(ember.float64) - y)
        live = sw > 0
        emax = float(ember.where(live, err_v, 0.0).max())
        if emax != 0:
            err_v = err_v / emax
        if self.loss == "square":
            err_v = err_v * err_v
        elif self.loss == "exponential":
            err_v = 1.0 - ember.exp(-err_v)
        err = float(ember.where(live, sw * err_v, 0.0).sum())
        if err <= 0:
            return sw, 1.0, 0.0
        if err >= 0.5:
            if len(self.estimators_) > 1:
                self.estimators_.pop(-1)
            return None, None, None
        beta = err / (1.0 - err)
        w_est = self.learning_rate * np.log(1.0 / beta)
        if it != self.n_estimators - 1:
            sw = ember.where(live, sw * beta ** ((1.0 - err_v) * self.learning_rate), sw)
        return sw, float(w_est), err

    def _median(self, Xa, limit):
        dev = Xa.device
        ests = self.estimators_[:limit]
        P = ember.stack([self._pred(e, Xa).astype(ember.float64) for e in ests], axis=1)
        w = ember.asarray(self.estimator_weights_[: len(ests)], device=dev)
        order = ember.argsort(P, axis=1)
        cdf = ember.cumsum(ember.take(w, order), axis=1)
        above = cdf >= 0.5 * cdf[:, -1:]
        pick = ember.argmax(above.astype(ember.int8), axis=1)
        col = ember.take_along_axis(order, pick[:, None], axis=1)
        return ember.take_along_axis(P, col, axis=1)[:, 0]

    def predict(self, X):
        """The estimator-weighted median of the members' predictions."""
        Xa = self._X(X)
        return to_output(self._median(Xa, len(self.estimators_)), input_kind(X))

    def staged_predict(self, X):
        Xa = self._X(X)
        kind = input_kind(X)
        for i in range(len(self.estimators_)):
            yield to_output(self._median(Xa, i + 1), kind)

    def staged_score(self, X, y, sample_weight=None):
        from ..metrics import r2_score

        for p in self.staged_predict(X):
            yield r2_score(y, p, sample_weight=sample_weight)
