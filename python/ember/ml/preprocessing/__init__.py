"""Preprocessing (scikit-learn's ``sklearn.preprocessing``)."""

from __future__ import annotations

from ._data import MinMaxScaler, PolynomialFeatures, StandardScaler, minmax_scale, scale
from ._encoders import LabelEncoder, OneHotEncoder

__all__ = [
    "LabelEncoder",
    "MinMaxScaler",
    "OneHotEncoder",
    "PolynomialFeatures",
    "StandardScaler",
    "minmax_scale",
    "scale",
]
