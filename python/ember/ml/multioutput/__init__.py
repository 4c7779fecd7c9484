"""Multi-output meta-estimators (scikit-learn's ``sklearn.multioutput``)."""

from __future__ import annotations

from ._multioutput import MultiOutputClassifier, MultiOutputRegressor

__all__ = ["MultiOutputClassifier", "MultiOutputRegressor"]
