"""``VotingClassifier`` and ``VotingRegressor`` (scikit-learn's ``sklearn.ensemble``).

The members are fitted on X validated once into an ember array on its device (classifiers
on the labels encoded to 0..K-1, as scikit-learn's LabelEncoder does). Hard votes are one-hot
matrices ``(pred[:, None] == arange(K))`` weighted and summed, soft votes and regression
averages are weighted sums of the members' outputs: all ember ops on the input's device.
"""

from __future__ import annotations

import numbers

import numpy as np

import ember

from ..base import BaseEstimator, ClassifierMixin, RegressorMixin, TransformerMixin, clone
from ..utils._bunch import Bunch
from ..utils._labels import decode_labels, encode_labels
from ..utils._param_validation import StrOptions
from ..utils.validation import (
    check_array,
    check_classification_targets,
    check_is_fitted,
    check_n_features,
    check_X_y,
    input_kind,
    is_ember,
    to_output,
)

__all__ = ["VotingClassifier", "VotingRegressor"]


def _as_ember(a, device):
    if is_ember(a):
        return a if str(a.device) == str(device) else ember.asarray(a, device=device)
    return ember.asarray(np.asarray(a), device=device)


class _BaseVoting(TransformerMixin, BaseEstimator):
    def _check_estimators(self):
        who = type(self).__name__
        est = self.estimators
        bad = ValueError(
            f"{who}: Invalid 'estimators' attribute, 'estimators' should be a non-empty list "
            "of (string, estimator) tuples."
        )
        if not isinstance(est, (list, tuple)) or len(est) == 0:
            raise bad
        for item in est:
            if not (isinstance(item, (list, tuple)) and len(item) == 2):
                raise bad
            if not isinstance(item[0], str):
                raise bad
        names = [n for n, _ in est]
        if len(set(names)) != len(names):
            raise ValueError(f"{who}: Names provided are not unique: {names!r}")
        for n in names:
            if "__" in n:
                raise ValueError(f"{who}: Estimator names must not contain __: got {n!r}")
        if self.weights is not None and len(self.weights) != len(est):
            raise ValueError(
                f"{who}: Number of `estimators` and weights must be equal; got "
                f"{len(self.weights)} weights, {len(est)} estimators"
            )
        kept = [(n, e) for n, e in est if e != "drop"]
        if not kept:
            raise ValueError(
                f"{who}: All estimators are dropped. At least one is required to be an estimator."
            )
        for n, e in kept:
            if not hasattr(e, "fit"):
                raise TypeError(f"{who}: estimator {n!r} ({e!r}) does not implement 'fit'")
            if self._need_kind is not None and getattr(e, "_estimator_type", None) not in (
                self._need_kind,
            ):
                raise ValueError(
                    f"{who}: The estimator {type(e).__name__} should be a {self._need_kind}."
                )
        return kept

    def _fit_members(self, Xa, y, sample_weight):
        kept = self._check_estimators()
        w = None
        if self.weights is not None:
            w = [
                float(wi)
                for (_, e), wi in zip(self.estimators, self.weights, strict=True)
                if e != "drop"
            ]
        self._weights_not_none = w
        kw = {} if sample_weight is None else {"sample_weight": sample_weight}
        self.estimators_ = [clone(e).fit(Xa, y, **kw) for _, e in kept]
        self.named_estimators_ = Bunch()
        it = iter(self.estimators_)
        for n, e in self.estimators:
            self.named_estimators_[n] = "drop" if e == "drop" else next(it)

    @property
    def named_estimators(self):
        return Bunch(**dict(self.estimators))

    def _X(self, X):
        check_is_fitted(self, "estimators_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        return Xa

    def _weight_vector(self, device):
        m = len(self.estimators_)
        w = self._weights_not_none if self._weights_not_none is not None else [1.0] * m
        return ember.asarray(w, dtype=ember.float64, device=device)


class VotingClassifier(ClassifierMixin, _BaseVoting):
    """Majority (``'hard'``) or averaged-probability (``'soft'``) vote of fitted classifiers."""

    _need_kind = "classifier"
    _parameter_constraints = {
        "estimators": [list],
        "voting": [StrOptions({"hard", "soft"})],
        "weights": ["array-like", None],
        "n_jobs": [numbers.Integral, None],
        "flatten_transform": ["boolean"],
        "verbose": ["boolean"],
    }

    def __init__(
        self,
        estimators,
        *,
        voting="hard",
        weights=None,
        n_jobs=None,
        flatten_transform=True,
        verbose=False,
    ):
        self.estimators = estimators
        self.voting = voting
        self.weights = weights
        self.n_jobs = n_jobs
        self.flatten_transform = flatten_transform
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        who = type(self).__name__
        Xa, ya = check_X_y(X, y, estimator=self)
        check_classification_targets(ya, who)
        check_n_features(self, Xa, reset=True)
        yk = ya if input_kind(y) == "ember" else (ember.asnumpy(ya) if is_ember(ya) else ya)
        self.classes_, yi = encode_labels(yk, Xa.device)
        self._fit_members(Xa, yi, sample_weight)
        return self

    def _predictions(self, Xa):
        return ember.stack(
            [_as_ember(e.predict(Xa), Xa.device).reshape(-1) for e in self.estimators_], axis=1
        ).astype(ember.int64)

    def _collect_probas(self, Xa):
        return [_as_ember(e.predict_proba(Xa), Xa.device) for e in self.estimators_]

    def _check_soft(self, name):
        if self.voting == "hard":
            raise AttributeError(f"{name} is not available when voting={self.voting!r}")

    def predict_proba(self, X):
        """Weighted average of the members' class probabilities (soft voting only)."""
        self._check_soft("predict_proba")
        Xa = self._X(X)
        return to_output(self._avg_proba(Xa), input_kind(X))

    def _avg_proba(self, Xa):
        w = self._weight_vector(Xa.device)
        P = ember.stack(self._collect_probas(Xa), axis=0).astype(ember.float64)
        return ember.sum(P * w[:, None, None], axis=0) / ember.sum(w)

    def predict(self, X):
        Xa = self._X(X)
        if self.voting == "soft":
            idx = ember.argmax(self._avg_proba(Xa), axis=1)
        else:
            pred = self._predictions(Xa)
            K = int(self.classes_.shape[0])
            ar = ember.arange(K, device=Xa.device)
            w = self._weight_vector(Xa.device)
            onehot = (pred[:, :, None] == ar[None, None, :]).astype(ember.float64)
            idx = ember.argmax(ember.sum(onehot * w[None, :, None], axis=1), axis=1)
        return decode_labels(self.classes_, idx, input_kind(X))

    def transform(self, X):
        """Members' probabilities (soft; flattened to (n, m*K) when ``flatten_transform``) or
        their encoded class predictions (hard, (n, m))."""
        Xa = self._X(X)
        if self.voting == "soft":
            P = self._collect_probas(Xa)
            out = ember.concatenate(P, axis=1) if self.flatten_transform else ember.stack(P)
        else:
            out = self._predictions(Xa)
        return to_output(out, input_kind(X))


class VotingRegressor(RegressorMixin, _BaseVoting):
    """Weighted average of the predictions of fitted regressors."""

    _need_kind = "regressor"
    _parameter_constraints = {
        "estimators": [list],
        "weights": ["array-like", None],
        "n_jobs": [numbers.Integral, None],
        "verbose": ["boolean"],
    }

    def __init__(self, estimators, *, weights=None, n_jobs=None, verbose=False):
        self.estimators = estimators
        self.weights = weights
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        Xa, ya = check_X_y(X, y, estimator=self, y_numeric=True)
        check_n_features(self, Xa, reset=True)
        self._fit_members(Xa, ya, sample_weight)
        return self

    def _preds(self, Xa):
        return ember.stack(
            [_as_ember(e.predict(Xa), Xa.device).reshape(-1) for e in self.estimators_], axis=1
        ).astype(ember.float64)

    def predict(self, X):
        Xa = self._X(X)
        w = self._weight_vector(Xa.device)
        out = ember.sum(self._preds(Xa) * w[None, :], axis=1) / ember.sum(w)
        return to_output(out, input_kind(X))

    def transform(self, X):
        """The members' predictions, (n_samples, n_estimators)."""
        Xa = self._X(X)
        return to_output(self._preds(Xa), input_kind(X))
