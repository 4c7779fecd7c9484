"""Frozen estimators (scikit-learn's ``sklearn.frozen``)."""

from __future__ import annotations

from ._frozen import FrozenEstimator

__all__ = ["FrozenEstimator"]
