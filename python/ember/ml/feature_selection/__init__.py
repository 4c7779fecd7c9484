"""Feature selection (scikit-learn's ``sklearn.feature_selection``)."""

from __future__ import annotations

from ._from_model import SelectFromModel
from ._mutual_info import mutual_info_classif, mutual_info_regression
from ._rfe import RFE
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
    "RFE",
    "SelectFromModel",
    "SelectKBest",
    "SelectPercentile",
    "VarianceThreshold",
    "chi2",
    "f_classif",
    "f_regression",
    "mutual_info_classif",
    "mutual_info_regression",
    "r_regression",
]

from ._rfecv import RFECV, SequentialFeatureSelector  # noqa: E402

__all__ += ["RFECV", "SequentialFeatureSelector"]
