"""Tree ensembles (scikit-learn's ``sklearn.ensemble``): random forests, extra-trees, bagging,
voting, gradient boosting (classic and histogram-based)."""

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
from ._gb import GradientBoostingClassifier, GradientBoostingRegressor  # noqa: E402
from ._hist_gb import (  # noqa: E402
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)

__all__ += [
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
    "HistGradientBoostingClassifier",
    "HistGradientBoostingRegressor",
]
from ._iforest import IsolationForest  # noqa: E402
from ._weight_boosting import AdaBoostClassifier, AdaBoostRegressor  # noqa: E402

__all__ += ["AdaBoostClassifier", "AdaBoostRegressor", "IsolationForest"]
from ._stacking import StackingClassifier, StackingRegressor  # noqa: E402

__all__ += ["StackingClassifier", "StackingRegressor"]
