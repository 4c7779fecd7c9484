"""Nearest neighbours (scikit-learn's ``sklearn.neighbors``), brute force on the device."""

from __future__ import annotations

from ._classes import KNeighborsClassifier, KNeighborsRegressor, NearestNeighbors
from ._kde import KernelDensity
from ._radius import RadiusNeighborsClassifier, RadiusNeighborsRegressor

__all__ = [
    "KNeighborsClassifier",
    "KNeighborsRegressor",
    "KernelDensity",
    "NearestNeighbors",
    "RadiusNeighborsClassifier",
    "RadiusNeighborsRegressor",
]

from ._lof import LocalOutlierFactor  # noqa: E402
from ._nearest_centroid import NearestCentroid  # noqa: E402

__all__ += ["LocalOutlierFactor", "NearestCentroid"]
