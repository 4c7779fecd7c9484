"""Decision trees (scikit-learn's ``sklearn.tree``) on binned features, grown level by level."""

from __future__ import annotations

from ._tree import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreeClassifier,
    ExtraTreeRegressor,
)

__all__ = [
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "ExtraTreeClassifier",
    "ExtraTreeRegressor",
]

from ._export import export_text  # noqa: E402

__all__ += ["export_text"]
