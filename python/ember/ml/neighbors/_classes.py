"""NearestNeighbors, KNeighborsClassifier and KNeighborsRegressor (brute force)."""

from __future__ import annotations

import ember

from ..base import ClassifierMixin, RegressorMixin
from ..utils._labels import decode_labels, encode_labels
from ..utils._param_validation import StrOptions
from ..utils.validation import (
    check_classification_targets,
    check_X_y,
    input_kind,
    to_device,
    to_output,
)
from ._base import NeighborsBase

__all__ = ["KNeighborsClassifier", "KNeighborsRegressor", "NearestNeighbors"]


class NearestNeighbors(NeighborsBase):
    """Unsupervised nearest-neighbour search (``kneighbors``, ``radius_neighbors``)."""

    def __init__(
        self,
        *,
        n_neighbors=5,
        radius=1.0,
        algorithm="auto",
        leaf_size=30,
        metric="minkowski",
        p=2,
        metric_params=None,
        n_jobs=None,
    ):
        self.n_neighbors = n_neighbors
        self.radius = radius
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.metric = metric
        self.p = p
        self.metric_params = metric_params
        self.n_jobs = n_jobs

    def fit(self, X, y=None):
        """Store the training points."""
        self._fit(X)
        return self


def _weights(dist, weights):
    """Neighbour weights: None (uniform), 1/d (exact matches take all the weight), callable."""
    if weights in (None, "uniform"):
        return None
    if weights == "distance":
        zero = dist == 0
        inv = 1.0 / ember.where(zero, 1.0, dist)
        has_zero = zero.any(axis=1, keepdims=True)
        return ember.where(has_zero, zero.astype(dist.dtype), inv)
    return to_device(weights(dist), dist.device)


_WEIGHTS = [StrOptions({"uniform", "distance"}), callable, None]


class KNeighborsClassifier(ClassifierMixin, NeighborsBase):
    """Vote among the k nearest neighbours (uniform or distance weights)."""

    _parameter_constraints = {**NeighborsBase._parameter_constraints, "weights": _WEIGHTS}
    _parameter_constraints.pop("radius")

    def __init__(
        self,
        n_neighbors=5,
        *,
        weights="uniform",
        algorithm="auto",
        leaf_size=30,
        p=2,
        metric="minkowski",
        metric_params=None,
        n_jobs=None,
    ):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.p = p
        self.metric = metric
        self.metric_params = metric_params
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Store the training points and their labels."""
        Xa, ya = check_X_y(X, y, estimator=self)
        check_classification_targets(ya, type(self).__name__)
        self._fit(Xa)
        self._fit_kind = input_kind(X)
        classes, yi = encode_labels(ya, Xa.device)
        self.classes_ = classes if input_kind(X) == "ember" else to_output(classes, "numpy")
        self._y = yi
        self.outputs_2d_ = False
        return self

    def _proba(self, X):
        dist, ind = self.kneighbors(X)
        dist = to_device(dist, self._fit_X.device)
        ind = to_device(ind, self._fit_X.device)
        labels = ember.take(self._y, ind.reshape(-1)).reshape(ind.shape)
        w = _weights(dist, self.weights)
        K = int(self.classes_.shape[0])
        onehot = (labels[:, :, None] == ember.arange(K, device=labels.device)).astype(dist.dtype)
        if w is not None:
            onehot = onehot * w[:, :, None]
        votes = onehot.sum(axis=1)
        tot = votes.sum(axis=1, keepdims=True)
        return votes / ember.where(tot == 0, 1.0, tot)

    def predict_proba(self, X):
        """Fraction of (weighted) neighbour votes for each class."""
        return to_output(self._proba(X), input_kind(X) if X is not None else self._fit_kind)

    def predict(self, X):
        """Most voted class (ties: the smallest label)."""
        P = self._proba(X)
        kind = input_kind(X) if X is not None else self._fit_kind
        return decode_labels(self.classes_, ember.argmax(P, axis=1), kind)


class KNeighborsRegressor(RegressorMixin, NeighborsBase):
    """Mean (or distance-weighted mean) of the k nearest neighbours' targets."""

    _multi_output = True

    _parameter_constraints = {**NeighborsBase._parameter_constraints, "weights": _WEIGHTS}
    _parameter_constraints.pop("radius")

    def __init__(
        self,
        n_neighbors=5,
        *,
        weights="uniform",
        algorithm="auto",
        leaf_size=30,
        p=2,
        metric="minkowski",
        metric_params=None,
        n_jobs=None,
    ):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.p = p
        self.metric = metric
        self.metric_params = metric_params
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Store the training points and targets."""
        Xa, ya = check_X_y(X, y, estimator=self, y_numeric=True, multi_output=True)
        self._fit(Xa)
        self._fit_kind = input_kind(X)
        self._y = ya.astype(Xa.dtype)
        return self

    def predict(self, X):
        """Target predicted from the neighbours."""
        dist, ind = self.kneighbors(X)
        dev = self._fit_X.device
        dist, ind = to_device(dist, dev), to_device(ind, dev)
        Yn = ember.take(self._y, ind.reshape(-1), axis=0).reshape(
            tuple(ind.shape) + tuple(self._y.shape[1:])
        )
        w = _weights(dist, self.weights)
        if w is None:
            out = Yn.mean(axis=1)
        else:
            ww = w if Yn.ndim == 2 else w[:, :, None]
            out = (Yn * ww).sum(axis=1) / ww.sum(axis=1)
        return to_output(out, input_kind(X) if X is not None else self._fit_kind)
