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
