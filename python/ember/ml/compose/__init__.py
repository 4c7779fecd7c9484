"""Composite transformers (scikit-learn's ``sklearn.compose``)."""

from __future__ import annotations

from ._column_transformer import ColumnTransformer, make_column_transformer
from ._target import TransformedTargetRegressor

__all__ = ["ColumnTransformer", "TransformedTargetRegressor", "make_column_transformer"]
