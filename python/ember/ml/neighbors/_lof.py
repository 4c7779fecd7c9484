"""``LocalOutlierFactor``: local density of each point relative to its k nearest neighbours.

The k-neighbour search is the shared brute-force one (blocked distance matmul + ``topk`` on
the device); reachability distances, local reachability densities and their ratios are
gathers and row means there too. Only ``offset_`` (a percentile) is a host scalar.
"""

from __future__ import annotations

import warnings
from numbers import Real

import ember

from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import check_is_fitted, input_kind, to_output
from ._base import NeighborsBase

__all__ = ["LocalOutlierFactor"]


class _AvailableIf:
    """A method that exists only when ``check(self)`` passes (AttributeError otherwise), so
    ``hasattr(lof, 'predict')`` follows ``novelty`` as in scikit-learn."""

    def __init__(self, check, fn):
        self.check, self.fn = check, fn
        self.__doc__ = fn.__doc__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.fn
        self.check(obj)
        return self.fn.__get__(obj, owner)


def _novelty_only(what, extra):
    def check(self):
        if not self.novelty:
            raise AttributeError(f"{what} is not available when novelty=False{extra}")

    return check


def _no_novelty(self):
    if self.novelty:
        raise AttributeError(
            "fit_predict is not available when novelty=True. Use novelty=False if you want to "
            "predict on the training set."
        )


class LocalOutlierFactor(NeighborsBase):
    """Unsupervised outlier detection by the Local Outlier Factor (LOF)."""

    _parameter_constraints = {
        **NeighborsBase._parameter_constraints,
        "contamination": [StrOptions({"auto"}), Interval(Real, 0, 0.5, closed="right")],
        "novelty": ["boolean"],
    }
    _estimator_type = "outlier_detector"

    def __init__(
        self,
        n_neighbors=20,
        *,
        algorithm="auto",
        leaf_size=30,
        metric="minkowski",
        p=2,
        metric_params=None,
        contamination="auto",
        novelty=False,
        n_jobs=None,
    ):
        self.n_neighbors = n_neighbors
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.metric = metric
        self.p = p
        self.metric_params = metric_params
        self.contamination = contamination
        self.novelty = novelty
        self.n_jobs = n_jobs

    def _lrd(self, dist, ind):
        """Local reachability density of queries from their neighbour distances/indices."""
        kdist = ember.take(self._distances_fit_X_[:, self.n_neighbors_ - 1], ind)
        reach = ember.maximum(dist, kdist)
        return 1.0 / (reach.mean(axis=1) + 1e-10)

    def fit(self, X, y=None):
        """Neighbourhoods, densities and outlier factors of the training points."""
        Xa = self._fit(X)
        n = self.n_samples_fit_
        if self.n_neighbors > n:
            warnings.warn(
                f"n_neighbors ({self.n_neighbors}) is greater than the total number of samples "
                f"({n}). n_neighbors will be set to (n_samples - 1) for estimation.",
                stacklevel=2,
            )
        self.n_neighbors_ = max(1, min(self.n_neighbors, n - 1))
        kind = self._fit_kind
        self._fit_kind = "ember"  # keep the neighbour arrays on the device
        try:
            dist, ind = self.kneighbors(n_neighbors=self.n_neighbors_)
        finally:
            self._fit_kind = kind
        self._distances_fit_X_ = dist.astype(Xa.dtype)
        self._lrd_fit = self._lrd(self._distances_fit_X_, ind)
        ratios = ember.take(self._lrd_fit, ind) / self._lrd_fit[:, None]
        nof = -ratios.mean(axis=1)
        if self.contamination == "auto":
            self.offset_ = -1.5
        else:
            self.offset_ = float(ember.percentile(nof, 100.0 * self.contamination))
        if float(nof.min()) < -1e7 and not self.novelty:
            warnings.warn(
                "Duplicate values are leading to incorrect results. Increase the number of "
                "neighbors for more accurate results.",
                stacklevel=2,
            )
        self.negative_outlier_factor_ = to_output(nof, kind)
        return self

    def _fit_predict(self, X, y=None):
        """Fit on X and label its points 1 (inlier) or -1 (outlier)."""
        self.fit(X)
        nof = self.negative_outlier_factor_
        if isinstance(nof, ember.ndarray):
            return ember.where(nof < self.offset_, -1, 1).astype(ember.int64)
        import numpy as np

        return np.where(nof < self.offset_, -1, 1)

    fit_predict = _AvailableIf(_no_novelty, _fit_predict)

    def _score_samples(self, X):
        """Opposite LOF of new points (the lower, the more abnormal)."""
        check_is_fitted(self, "offset_")
        kind = input_kind(X)
        fk = self._fit_kind
        self._fit_kind = "ember"
        try:
            Q, _ = self._query(X)
            dist, ind = self.kneighbors(Q, n_neighbors=self.n_neighbors_)
        finally:
            self._fit_kind = fk
        dist = dist.astype(Q.dtype)
        lrd = self._lrd(dist, ind)
        ratios = ember.take(self._lrd_fit, ind) / lrd[:, None]
        return to_output(-ratios.mean(axis=1), kind)

    score_samples = _AvailableIf(
        _novelty_only(
            "score_samples",
            ". The scores of the training samples are always available through the "
            "negative_outlier_factor_ attribute. Use novelty=True if you want to use LOF for "
            "novelty detection and compute score_samples for new unseen data.",
        ),
        _score_samples,
    )

    def _decision_function(self, X):
        """``score_samples(X) - offset_``: negative for outliers."""
        return self._score_samples(X) - self.offset_

    decision_function = _AvailableIf(
        _novelty_only(
            "decision_function",
            ". Use novelty=True if you want to use LOF for novelty detection and compute "
            "decision_function for new unseen data. Note that the opposite LOF of the training "
            "samples is always available by considering the negative_outlier_factor_ attribute.",
        ),
        _decision_function,
    )

    def _predict(self, X=None):
        """1 for inliers, -1 for outliers of new points (of the training points for None)."""
        if X is None:
            check_is_fitted(self, "offset_")
            d = self.negative_outlier_factor_ - self.offset_
        else:
            d = self._decision_function(X)
        if isinstance(d, ember.ndarray):
            return ember.where(d < 0, -1, 1).astype(ember.int64)
        import numpy as np

        return np.where(d < 0, -1, 1)

    predict = _AvailableIf(
        _novelty_only(
            "predict",
            ", use fit_predict if you want to predict on training data. Use novelty=True if "
            "you want to use LOF for novelty detection and predict on new unseen data.",
        ),
        _predict,
    )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "outlier_detector"
        return tags
