"""Nearest neighbours (scikit-learn's ``sklearn.neighbors``), brute force on the device."""

from __future__ import annotations

from ._classes import KNeighborsClassifier, KNeighborsRegressor, NearestNeighbors

__all__ = ["KNeighborsClassifier", "KNeighborsRegressor", "NearestNeighbors"]
