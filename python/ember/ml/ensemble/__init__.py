"""Tree ensembles (scikit-learn's ``sklearn.ensemble``): random forests and extra-trees."""

from __future__ import annotations

from ._forest import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)

__all__ = [
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
    "RandomForestClassifier",
    "RandomForestRegressor",
]
from ._bagging import BaggingClassifier, BaggingRegressor  # noqa: E402
from ._voting import VotingClassifier, VotingRegressor  # noqa: E402

__all__ += [
    "BaggingClassifier",
    "BaggingRegressor",
    "VotingClassifier",
    "VotingRegressor",
]
