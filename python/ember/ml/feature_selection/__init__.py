"""Feature selection (scikit-learn's ``sklearn.feature_selection``)."""

from __future__ import annotations

from ._univariate import (
    SelectKBest,
    SelectPercentile,
    VarianceThreshold,
    chi2,
    f_classif,
    f_regression,
    r_regression,
)

__all__ = [
    "SelectKBest",
    "SelectPercentile",
    "VarianceThreshold",
    "chi2",
    "f_classif",
    "f_regression",
    "r_regression",
]
