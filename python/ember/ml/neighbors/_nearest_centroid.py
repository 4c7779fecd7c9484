"""``NearestCentroid``: each class is represented by its centroid (mean, or median for the
manhattan metric), optionally shrunken towards the overall centroid.

Class means are one-hot matmuls on X's device; medians one masked ``nanmedian`` per class.
Prediction is an argmin of the query-to-centroid distances (uniform priors) or scikit-learn's
discriminant score -d^2 + 2 log prior on within-class-std-normalised features.
"""

from __future__ import annotations

import warnings

import numpy as np

import ember

from ..base import BaseEstimator, ClassifierMixin
from ..metrics.pairwise import distances
from ..utils._labels import decode_labels, encode_labels
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    _host,
    check_array,
    check_classification_targets,
    check_is_fitted,
    check_n_features,
    check_X_y,
    input_kind,
    is_ember,
    to_device,
    to_output,
)

__all__ = ["NearestCentroid"]


def _euclidean_only(self):
    if self.metric != "euclidean":
        raise AttributeError(
            f"This 'NearestCentroid' has no attribute for metric={self.metric!r}: "
            "decision_function and predict_proba need metric='euclidean'"
        )


class _AvailableIf:
    def __init__(self, check, fn):
        self.check, self.fn = check, fn
        self.__doc__ = fn.__doc__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.fn
        self.check(obj)
        return self.fn.__get__(obj, owner)


class NearestCentroid(ClassifierMixin, BaseEstimator):
    """Nearest centroid classifier."""

    _parameter_constraints = {
        "metric": [StrOptions({"manhattan", "euclidean"})],
        "shrink_threshold": [Interval(float, 0, None, closed="neither"), None],
        "priors": ["array-like", StrOptions({"empirical", "uniform"})],
    }

    def __init__(self, metric="euclidean", *, shrink_threshold=None, priors="uniform"):
        self.metric = metric
        self.shrink_threshold = shrink_threshold
        self.priors = priors

    def fit(self, X, y):
        """Class centroids, within-class standard deviations and shrunken deviations."""
        self._validate_params()
        Xa, ya = check_X_y(X, y, estimator=self)
        check_classification_targets(ya, "NearestCentroid")
        check_n_features(self, Xa, reset=True)
        kind = input_kind(X)
        dev = Xa.device
        Xf = Xa.astype(ember.float64)
        n, d = Xf.shape
        yk = ya if input_kind(y) == "ember" else (ember.asnumpy(ya) if is_ember(ya) else ya)
        classes, yi = encode_labels(yk, dev)
        K = int(classes.shape[0])
        if K < 2:
            raise ValueError(f"The number of classes has to be greater than one; got {K} class")
        onehot = (yi[:, None] == ember.arange(K, device=dev)[None, :]).astype(ember.float64)
        nk = onehot.sum(axis=0)
        if isinstance(self.priors, str) and self.priors == "empirical":
            prior = ember.asnumpy(nk) / n
        elif isinstance(self.priors, str):
            prior = np.full(K, 1.0 / K)
        else:
            h = _host(self.priors)
            prior = np.asarray(ember.asnumpy(h) if is_ember(h) else h, dtype=np.float64)
        if (prior < 0).any():
            raise ValueError("priors must be non-negative")
        if not np.isclose(prior.sum(), 1.0):
            warnings.warn(
                "The priors do not sum to 1. Normalizing such that it sums to one.",
                UserWarning,
                stacklevel=2,
            )
            prior = prior / prior.sum()
        if self.metric == "manhattan":
            rows = [
                ember.nanmedian(ember.where(onehot[:, k][:, None] > 0, Xf, float("nan")), axis=0)
                for k in range(K)
            ]
            cent = ember.stack(rows, axis=0)
        else:
            cent = (onehot.T @ Xf) / nk[:, None]
        resid = Xf - ember.take(cent, yi, axis=0)
        std = ember.sqrt((resid**2).sum(axis=0) / (n - K))
        if bool((std == 0).any()):
            warnings.warn(
                "self.within_class_std_dev_ has at least 1 zero standard deviation.Inputs "
                "within the same classes for at least 1 feature are identical.",
                stacklevel=2,
            )
        if bool(((Xf.max(axis=0) - Xf.min(axis=0)) == 0).all()):
            raise ValueError("All features have zero variance. Division by zero.")
        overall = Xf.mean(axis=0)
        m = ember.sqrt(1.0 / nk - 1.0 / n)
        s = std + ember.median(std)
        ms = m[:, None] * s[None, :]
        dev_ = (cent - overall[None, :]) / ms
        if self.shrink_threshold:
            sign = ember.sign(dev_)
            dev_ = ember.maximum(ember.abs(dev_) - self.shrink_threshold, 0.0) * sign
            cent = overall[None, :] + ms * dev_
        self.classes_ = (
            classes
            if kind == "ember"
            else (ember.asnumpy(classes) if is_ember(classes) else classes)
        )
        self.class_prior_ = prior
        self.centroids_ = to_output(cent, kind)
        self.within_class_std_dev_ = to_output(std, kind)
        self.deviations_ = to_output(dev_, kind)
        return self

    def _check_X(self, X):
        check_is_fitted(self, "centroids_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        return Xa.astype(ember.float64)

    def _scores(self, Xf):
        dev = Xf.device
        cent = to_device(self.centroids_, dev).astype(ember.float64)
        std = to_device(self.within_class_std_dev_, dev).astype(ember.float64)
        scale = ember.where(std != 0, std, 1.0)
        Xn, Cn = Xf / scale[None, :], cent / scale[None, :]
        D = ((Xn[:, None, :] - Cn[None, :, :]) ** 2).sum(axis=2)
        return -D + 2.0 * to_device(np.log(self.class_prior_), dev)[None, :]

    def predict(self, X):
        """Class of the nearest centroid (the discriminant score's argmax with priors)."""
        Xf = self._check_X(X)
        if np.isclose(self.class_prior_, 1 / len(self.classes_)).all():
            cent = to_device(self.centroids_, Xf.device).astype(ember.float64)
            idx = ember.argmin(distances(Xf, cent, self.metric, 2), axis=1)
        else:
            idx = ember.argmax(self._scores(Xf), axis=1)
        return decode_labels(self.classes_, idx, input_kind(X))

    def _decision_function(self, X):
        """Discriminant scores (binary: the positive minus the negative class's)."""
        s = self._scores(self._check_X(X))
        if len(self.classes_) == 2:
            s = s[:, 1] - s[:, 0]
        return to_output(s, input_kind(X))

    def _predict_log_proba(self, X):
        """Log of the softmax of the discriminant scores."""
        s = self._scores(self._check_X(X))
        return to_output(s - ember.special.logsumexp(s, 1, keepdim=True), input_kind(X))

    def _predict_proba(self, X):
        """Softmax of the discriminant scores."""
        s = self._scores(self._check_X(X))
        return to_output(ember.exp(s - ember.special.logsumexp(s, 1, keepdim=True)), input_kind(X))

    decision_function = _AvailableIf(_euclidean_only, _decision_function)
    predict_log_proba = _AvailableIf(_euclidean_only, _predict_log_proba)
    predict_proba = _AvailableIf(_euclidean_only, _predict_proba)
