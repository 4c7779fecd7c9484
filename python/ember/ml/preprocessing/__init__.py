"""Preprocessing (scikit-learn's ``sklearn.preprocessing``)."""

from __future__ import annotations

from ._data import MinMaxScaler, PolynomialFeatures, StandardScaler, minmax_scale, scale
from ._discretization import KBinsDiscretizer
from ._encoders import LabelEncoder, OneHotEncoder
from ._label import LabelBinarizer, label_binarize
from ._more import Normalizer, RobustScaler, normalize
from ._nonlinear import PowerTransformer, QuantileTransformer, quantile_transform
from ._simple import Binarizer, FunctionTransformer, MaxAbsScaler, OrdinalEncoder, maxabs_scale
from ._spline import SplineTransformer
from ._target_encoder import TargetEncoder

__all__ = [
    "Binarizer",
    "FunctionTransformer",
    "KBinsDiscretizer",
    "LabelBinarizer",
    "LabelEncoder",
    "MaxAbsScaler",
    "MinMaxScaler",
    "Normalizer",
    "OneHotEncoder",
    "OrdinalEncoder",
    "PolynomialFeatures",
    "PowerTransformer",
    "QuantileTransformer",
    "RobustScaler",
    "SplineTransformer",
    "StandardScaler",
    "TargetEncoder",
    "label_binarize",
    "maxabs_scale",
    "minmax_scale",
    "normalize",
    "quantile_transform",
    "scale",
]

from ._multilabel import MultiLabelBinarizer  # noqa: E402

__all__ += ["MultiLabelBinarizer"]
