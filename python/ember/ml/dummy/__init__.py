"""Baseline estimators (scikit-learn's ``sklearn.dummy``)."""

from __future__ import annotations

from ._dummy import DummyClassifier, DummyRegressor

__all__ = ["DummyClassifier", "DummyRegressor"]
