"""Model selection (scikit-learn's ``sklearn.model_selection``)."""

from __future__ import annotations

from ._curves import cross_val_predict, learning_curve, validation_curve
from ._search import GridSearchCV, ParameterGrid, ParameterSampler, RandomizedSearchCV
from ._split import KFold, ShuffleSplit, StratifiedKFold, train_test_split
from ._split_more import (
    GroupKFold,
    LeaveOneOut,
    RepeatedKFold,
    RepeatedStratifiedKFold,
    StratifiedGroupKFold,
    StratifiedShuffleSplit,
    TimeSeriesSplit,
)
from ._validation import check_cv, cross_val_score, cross_validate

__all__ = [
    "GridSearchCV",
    "ParameterGrid",
    "ParameterSampler",
    "RandomizedSearchCV",
    "cross_val_predict",
    "learning_curve",
    "validation_curve",
    "KFold",
    "ShuffleSplit",
    "StratifiedKFold",
    "check_cv",
    "cross_val_score",
    "cross_validate",
    "train_test_split",
    "GroupKFold",
    "LeaveOneOut",
    "RepeatedKFold",
    "RepeatedStratifiedKFold",
    "StratifiedGroupKFold",
    "StratifiedShuffleSplit",
    "TimeSeriesSplit",
]
