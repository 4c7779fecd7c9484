"""``MultiOutputRegressor`` and ``MultiOutputClassifier``: one clone of the base estimator per
target column (scikit-learn's ``sklearn.multioutput``).

X is validated once into an ember array on its device and each clone sees one column of Y;
the per-column predictions are stacked with ``ember.stack`` on that device (NumPy out for
host inputs). String class labels of host targets stay on the host, as class labels do in
every ``ember.ml`` classifier.
"""

from __future__ import annotations

import inspect

import numpy as np

import ember

from ..base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from ..utils._param_validation import HasMethods
from ..utils.validation import (
    _host,
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    is_ember,
    to_output,
)

__all__ = ["MultiOutputClassifier", "MultiOutputRegressor"]


def _stack_columns(cols, device):
    """Stack per-target predictions as columns: on ``device`` when they are numeric."""
    if all(is_ember(c) for c in cols):
        return ember.stack([c.reshape(-1) for c in cols], axis=1)
    hs = [ember.asnumpy(c) if is_ember(c) else np.asarray(c) for c in cols]
    if any(h.dtype.kind in "OUS" for h in hs):
        return np.stack([h.reshape(-1) for h in hs], axis=1)  # string labels: host by nature
    return ember.asarray(np.stack([h.reshape(-1) for h in hs], axis=1), device=device)


class _MultiOutputEstimator(BaseEstimator):
    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"])],
        "n_jobs": [int, None],
    }

    def __init__(self, estimator, *, n_jobs=None):
        self.estimator = estimator
        self.n_jobs = n_jobs

    def fit(self, X, y, sample_weight=None, **fit_params):
        self._validate_params()
        who = type(self).__name__
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=True)
        if y is None:
            raise ValueError(f"{who} requires y to be passed, but the target y is None")
        Y = _host(y)
        if Y.ndim == 1:
            raise ValueError(
                f"{who}: y must have at least two dimensions for multi-output regression but "
                "has only one."
            )
        if int(Y.shape[0]) != int(Xa.shape[0]):
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"[{int(Xa.shape[0])}, {int(Y.shape[0])}]"
            )
        if sample_weight is not None:
            if "sample_weight" not in inspect.signature(self.estimator.fit).parameters:
                raise ValueError("Underlying estimator does not support sample weights.")
            fit_params = {**fit_params, "sample_weight": sample_weight}
        if is_ember(Y) and str(Y.device) != str(Xa.device):
            Y = ember.asarray(Y, device=Xa.device)
        self.estimators_ = [
            clone(self.estimator).fit(Xa, Y[:, k], **fit_params) for k in range(int(Y.shape[1]))
        ]
        return self

    def _X(self, X):
        check_is_fitted(self, "estimators_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        return Xa

    def predict(self, X):
        """(n_samples, n_outputs): each target's estimator's prediction as a column."""
        Xa = self._X(X)
        out = _stack_columns([e.predict(Xa) for e in self.estimators_], Xa.device)
        return to_output(out, input_kind(X))


class MultiOutputRegressor(RegressorMixin, _MultiOutputEstimator):
    """One regressor per target (``score`` is R^2 averaged uniformly over the targets)."""

    _multi_output = True


class MultiOutputClassifier(ClassifierMixin, _MultiOutputEstimator):
    """One classifier per target; ``score`` is the subset accuracy (all targets right)."""

    _multi_output = True

    def fit(self, X, Y, sample_weight=None, **fit_params):
        super().fit(X, Y, sample_weight=sample_weight, **fit_params)
        self.classes_ = [e.classes_ for e in self.estimators_]
        return self

    def predict_proba(self, X):
        """A list with one (n_samples, n_classes) array per target."""
        Xa = self._X(X)
        if not all(hasattr(e, "predict_proba") for e in self.estimators_):
            raise AttributeError(
                f"MultiOutputClassifier: the base estimator {type(self.estimator).__name__} "
                "has no attribute 'predict_proba'"
            )
        kind = input_kind(X)
        return [to_output(e.predict_proba(Xa), kind) for e in self.estimators_]

    def score(self, X, y):
        """Subset accuracy: the fraction of samples with every target predicted right."""
        pred = self.predict(X)
        Y = _host(y)
        if is_ember(pred) and is_ember(Y):
            Y = ember.asarray(Y, device=pred.device)
            if tuple(Y.shape) != tuple(pred.shape):
                raise ValueError(
                    f"MultiOutputClassifier.score: y must have shape {tuple(pred.shape)}, got "
                    f"{tuple(Y.shape)}"
                )
            return float(ember.mean(ember.all(Y == pred, axis=1).astype(ember.float64)))
        p = ember.asnumpy(pred) if is_ember(pred) else np.asarray(pred)
        Yh = ember.asnumpy(Y) if is_ember(Y) else np.asarray(Y)
        if Yh.shape != p.shape:
            raise ValueError(
                f"MultiOutputClassifier.score: y must have shape {p.shape}, got {Yh.shape}"
            )
        return float(np.mean(np.all(Yh == p, axis=1)))
