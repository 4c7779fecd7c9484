"""``OneVsRestClassifier`` and ``OneVsOneClassifier`` (scikit-learn's ``sklearn.multiclass``).

The labels are encoded to 0..K-1 on X's device; each binary problem is handed to a clone of
the base estimator as an ember array on that device, and the per-estimator scores are stacked
and combined with ember ops (argmax, vote counts, normalisation), so results stay on the
input's device (NumPy out for host inputs, as every ``ember.ml`` estimator).
"""

from __future__ import annotations

import ember

from ..base import BaseEstimator, ClassifierMixin, clone
from ..utils._labels import decode_labels, encode_labels
from ..utils._param_validation import HasMethods
from ..utils.validation import (
    _host,
    check_array,
    check_classification_targets,
    check_is_fitted,
    check_n_features,
    check_X_y,
    input_kind,
    is_ember,
    to_output,
)

__all__ = ["OneVsOneClassifier", "OneVsRestClassifier"]


def _as_ember(a, device):
    """A base estimator's output as an ember array on ``device``."""
    if is_ember(a):
        return a if str(a.device) == str(device) else ember.asarray(a, device=device)
    return ember.asarray(a, device=device)


def _binary_score(est, X):
    """Score of the positive class: ``decision_function`` if any, else ``predict_proba[:, 1]``."""
    if hasattr(est, "decision_function"):
        s = _as_ember(est.decision_function(X), X.device)
        return s.reshape(-1) if s.ndim == 2 and s.shape[1] == 1 else s
    if hasattr(est, "predict_proba"):
        return _as_ember(est.predict_proba(X), X.device)[:, 1]
    raise AttributeError(
        f"{type(est).__name__}: the base estimator has neither 'decision_function' nor "
        "'predict_proba'"
    )


def _fit_classes(est, X, y):
    """Validated (X, encoded y) and ``classes_``/``n_features_in_`` set on ``est``."""
    who = type(est).__name__
    Xa, ya = check_X_y(X, y, estimator=est)
    check_classification_targets(ya, who)
    check_n_features(est, Xa, reset=True)
    yk = ya if input_kind(y) == "ember" else (ember.asnumpy(ya) if is_ember(ya) else ya)
    classes, yi = encode_labels(yk, Xa.device)
    est.classes_ = classes
    return Xa, yi


def _check_X(est, X):
    check_is_fitted(est, "estimators_")
    Xa = check_array(X, estimator=est)
    check_n_features(est, Xa, reset=False)
    return Xa


class OneVsRestClassifier(ClassifierMixin, BaseEstimator):
    """One classifier per class (that class against all others), as scikit-learn's.

    With two classes a single estimator is fitted (for the second class), as scikit-learn
    does. A 2-D 0/1 indicator target is a multilabel problem: one estimator per column,
    ``predict`` returns the indicator matrix.
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"])],
        "n_jobs": [int, None],
        "verbose": [int, "boolean"],
    }

    def __init__(self, estimator, *, n_jobs=None, verbose=0):
        self.estimator = estimator
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y, **fit_params):
        self._validate_params()
        if y is not None and len(_host(y).shape) == 2 and int(_host(y).shape[1]) > 1:
            return self._fit_multilabel(X, y, fit_params)
        Xa, yi = _fit_classes(self, X, y)
        self.multilabel_ = False
        K = int(self.classes_.shape[0])
        if K < 2:
            raise ValueError(
                f"OneVsRestClassifier: needs samples of at least 2 classes in the data, but the "
                f"data contains only one class: {self.classes_!r}"
            )
        targets = [1] if K == 2 else range(K)
        self.estimators_ = []
        for k in targets:
            yb = (yi == k).astype(ember.int64)
            self.estimators_.append(clone(self.estimator).fit(Xa, yb, **fit_params))
        return self

    def _fit_multilabel(self, X, y, fit_params):
        """A 2-D 0/1 indicator target: one estimator per column (label)."""
        Xa, Y = check_X_y(X, y, estimator=self, multi_output=True)
        check_n_features(self, Xa, reset=True)
        Y = Y if is_ember(Y) else ember.asarray(Y, device=Xa.device)
        if not bool(((Y == 0) | (Y == 1)).all()):
            raise ValueError(
                "OneVsRestClassifier: Multioutput target data is not supported with label "
                "binarization (a 2-D y must be a 0/1 label indicator matrix)"
            )
        Y = Y.astype(ember.int64)
        self.multilabel_ = True
        self.classes_ = ember.arange(int(Y.shape[1]), device=Xa.device)
        if input_kind(y) == "numpy":
            self.classes_ = ember.asnumpy(self.classes_)
        self.estimators_ = [
            clone(self.estimator).fit(Xa, Y[:, k], **fit_params) for k in range(int(Y.shape[1]))
        ]
        return self

    @property
    def n_classes_(self):
        return int(self.classes_.shape[0])

    def _scores(self, Xa):
        return ember.stack([_binary_score(e, Xa) for e in self.estimators_], axis=1)

    def decision_function(self, X):
        """(n_samples, n_classes) scores; (n_samples,) for two classes."""
        Xa = _check_X(self, X)
        if not hasattr(self.estimators_[0], "decision_function"):
            raise AttributeError(
                f"OneVsRestClassifier: the base estimator {type(self.estimators_[0]).__name__} "
                "has no attribute 'decision_function'"
            )
        s = ember.stack(
            [_as_ember(e.decision_function(Xa), Xa.device).reshape(-1) for e in self.estimators_],
            axis=1,
        )
        if len(self.estimators_) == 1 and not self.multilabel_:
            s = s.reshape(-1)
        return to_output(s, input_kind(X))

    def predict_proba(self, X):
        """Per-class probabilities of the binary estimators, normalised to sum to 1."""
        Xa = _check_X(self, X)
        if not hasattr(self.estimators_[0], "predict_proba"):
            raise AttributeError(
                f"OneVsRestClassifier: the base estimator {type(self.estimators_[0]).__name__} "
                "has no attribute 'predict_proba'"
            )
        P = ember.stack(
            [_as_ember(e.predict_proba(Xa), Xa.device)[:, 1] for e in self.estimators_], axis=1
        )
        if self.multilabel_:
            pass  # independent labels: each column is its own probability
        elif len(self.estimators_) == 1:
            P = ember.concatenate([1 - P, P], axis=1)
        else:
            P = P / ember.sum(P, axis=1, keepdims=True)
        return to_output(P, input_kind(X))

    def predict(self, X):
        Xa = _check_X(self, X)
        S = self._scores(Xa)
        if self.multilabel_:
            thr = 0.0 if hasattr(self.estimators_[0], "decision_function") else 0.5
            return to_output((S > thr).astype(ember.int64), input_kind(X))
        if len(self.estimators_) == 1:
            thr = 0.0 if hasattr(self.estimators_[0], "decision_function") else 0.5
            idx = (S[:, 0] > thr).astype(ember.int64)
        else:
            idx = ember.argmax(S, axis=1)
        return decode_labels(self.classes_, idx, input_kind(X))


class OneVsOneClassifier(ClassifierMixin, BaseEstimator):
    """One classifier per pair of classes; prediction by votes, ties broken by the summed
    (bounded) confidences, as scikit-learn's."""

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"])],
        "n_jobs": [int, None],
    }

    def __init__(self, estimator, *, n_jobs=None):
        self.estimator = estimator
        self.n_jobs = n_jobs

    def fit(self, X, y, **fit_params):
        self._validate_params()
        Xa, yi = _fit_classes(self, X, y)
        K = int(self.classes_.shape[0])
        if K < 2:
            raise ValueError("OneVsOneClassifier can not be fit when only one class is present.")
        self.estimators_ = []
        for i in range(K):
            for j in range(i + 1, K):
                mask = (yi == i) | (yi == j)
                rows = ember.nonzero(mask)[0]
                Xs = ember.take(Xa, rows, axis=0)
                ys = (ember.take(yi, rows) == j).astype(ember.int64)
                self.estimators_.append(clone(self.estimator).fit(Xs, ys, **fit_params))
        self.pairwise_indices_ = None
        return self

    @property
    def n_classes_(self):
        return int(self.classes_.shape[0])

    def decision_function(self, X):
        """Votes plus bounded confidences, (n_samples, n_classes); (n_samples,) for 2 classes."""
        Xa = _check_X(self, X)
        Y = self._votes(Xa)
        if self.n_classes_ == 2:
            Y = Y[:, 1]
        return to_output(Y, input_kind(X))

    def _votes(self, Xa):
        K = self.n_classes_
        n = int(Xa.shape[0])
        dev = Xa.device
        ar = ember.arange(K, device=dev)
        votes = ember.zeros((n, K), dtype=ember.float64, device=dev)
        conf = ember.zeros((n, K), dtype=ember.float64, device=dev)
        k = 0
        for i in range(K):
            for j in range(i + 1, K):
                est = self.estimators_[k]
                pred = _as_ember(est.predict(Xa), dev).reshape(-1).astype(ember.int64)
                c = _binary_score(est, Xa).astype(ember.float64)
                onei = (ar == i).astype(ember.float64)
                onej = (ar == j).astype(ember.float64)
                conf = conf + c[:, None] * (onej - onei)[None, :]
                winner = ember.where(pred == 1, j, i)
                votes = votes + (winner[:, None] == ar[None, :]).astype(ember.float64)
                k += 1
        return votes + conf / (3 * (ember.abs(conf) + 1))

    def predict(self, X):
        Xa = _check_X(self, X)
        Y = self._votes(Xa)
        if self.n_classes_ == 2:
            idx = (Y[:, 1] > 0).astype(ember.int64)
        else:
            idx = ember.argmax(Y, axis=1)
        return decode_labels(self.classes_, idx, input_kind(X))
