"""``ember.ml.impute.SimpleImputer`` (scikit-learn's): missing values (NaN, or another marker)
replaced per feature by its mean, median, most frequent value or a constant, computed on the
input's device. Features with no observed value are dropped (``keep_empty_features=False``, as
scikit-learn) or kept as zeros/`fill_value`."""

from __future__ import annotations

import numbers

import numpy as np

import ember

from ._knn_imputer import KNNImputer
from .base import BaseEstimator, TransformerMixin
from .utils._mask import missing_mask
from .utils._param_validation import StrOptions
from .utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["KNNImputer", "SimpleImputer"]


class SimpleImputer(TransformerMixin, BaseEstimator):
    """Replaces missing values by a per-feature statistic (numeric data)."""

    _allow_nan = True

    _parameter_constraints = {
        "missing_values": [numbers.Real, None],
        "strategy": [StrOptions({"mean", "median", "most_frequent", "constant"}), callable],
        "fill_value": [numbers.Real, None],
        "copy": ["boolean"],
        "add_indicator": ["boolean"],
        "keep_empty_features": ["boolean"],
    }

    def __init__(
        self,
        *,
        missing_values=np.nan,
        strategy="mean",
        fill_value=None,
        copy=True,
        add_indicator=False,
        keep_empty_features=False,
    ):
        self.missing_values = missing_values
        self.strategy = strategy
        self.fill_value = fill_value
        self.copy = copy
        self.add_indicator = add_indicator
        self.keep_empty_features = keep_empty_features

    def _missing(self, Xa):  # noqa: N803
        return missing_mask(Xa, self.missing_values)

    def fit(self, X, y=None):
        self._validate_params()
        if self.add_indicator:
            raise NotImplementedError("ember.ml.impute.SimpleImputer: add_indicator=True")
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan", dtype="float64")
        check_n_features(self, Xa, reset=True)
        miss = self._missing(Xa)
        seen = (~miss).sum(axis=0)
        if self.strategy == "constant":
            stats = ember.full((Xa.shape[1],), 0.0 if self.fill_value is None else self.fill_value,
                               device=Xa.device)  # fmt: skip
        elif self.strategy == "mean":
            stats = ember.where(miss, 0.0, Xa).sum(axis=0) / ember.maximum(seen, 1)
        elif self.strategy == "median":
            stats = ember.nanmedian(ember.where(miss, float("nan"), Xa), axis=0)
        elif self.strategy == "most_frequent":
            stats = ember.asarray(
                np.array([_mode(Xa[:, j][~miss[:, j]]) for j in range(Xa.shape[1])]),
                device=Xa.device,
            )
        else:
            raise NotImplementedError("ember.ml.impute.SimpleImputer: a callable strategy")
        empty = seen == 0
        if self.strategy != "constant" or not self.keep_empty_features:
            fill = 0.0 if self.keep_empty_features else float("nan")
            stats = ember.where(empty, fill, stats)
        self._keep = None if self.keep_empty_features else ~empty
        if self._keep is not None and bool(empty.any()):  # a host read, as scikit-learn warns
            import warnings

            idx = ember.asnumpy(ember.nonzero(empty)[0]).tolist()
            warnings.warn(
                f"Skipping features without any observed values: {idx}. At least one "
                f"non-missing value is needed for imputation with strategy='{self.strategy}'.",
                UserWarning,
                stacklevel=2,
            )
        self.statistics_ = to_output(stats, input_kind(X))
        return self

    def get_feature_names_out(self, input_features=None):
        """The kept features' names (a feature never observed is dropped unless
        keep_empty_features), as scikit-learn's ``SimpleImputer.get_feature_names_out``."""
        check_is_fitted(self, "statistics_")
        n = self.n_features_in_
        if input_features is None:
            names = getattr(self, "feature_names_in_", None)
            input_features = names if names is not None else [f"x{i}" for i in range(n)]
        input_features = np.asarray(input_features, dtype=object)
        if len(input_features) != n:
            raise ValueError(
                f"input_features should have length equal to number of features ({n}), got "
                f"{len(input_features)}"
            )
        if self._keep is None:
            return input_features
        return input_features[np.asarray(ember.asnumpy(self._keep), dtype=bool)]

    def transform(self, X):
        check_is_fitted(self, "statistics_")
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan", dtype="float64")
        check_n_features(self, Xa, reset=False)
        stats = to_device(self.statistics_, Xa.device)
        out = ember.where(self._missing(Xa), stats, Xa)
        if self._keep is not None:
            keep = to_device(self._keep, Xa.device)
            if not bool(keep.all()):  # drop the features never observed (a host read)
                out = out[:, ember.nonzero(keep)[0]]
        return to_output(out, input_kind(X))


def _mode(col):
    """The most frequent value of a 1-d array (the smallest among ties; NaN when empty)."""
    if col.shape[0] == 0:
        return float("nan")
    values, counts = ember.unique(col, return_counts=True)
    return float(values[int(ember.argmax(counts))])  # unique is sorted: argmax takes the smallest
