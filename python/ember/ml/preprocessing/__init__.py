"""Preprocessing (scikit-learn's ``sklearn.preprocessing``)."""

from __future__ import annotations

from ._data import MinMaxScaler, PolynomialFeatures, StandardScaler, minmax_scale, scale
from ._encoders import LabelEncoder, OneHotEncoder
from ._label import LabelBinarizer, label_binarize
from ._more import Normalizer, RobustScaler, normalize

__all__ = [
    "LabelBinarizer",
    "LabelEncoder",
    "MinMaxScaler",
    "Normalizer",
    "OneHotEncoder",
    "PolynomialFeatures",
    "RobustScaler",
    "StandardScaler",
    "label_binarize",
    "minmax_scale",
    "normalize",
    "scale",
]
