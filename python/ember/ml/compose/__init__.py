"""Composite transformers (scikit-learn's ``sklearn.compose``)."""

from __future__ import annotations

from ._column_transformer import ColumnTransformer, make_column_transformer

__all__ = ["ColumnTransformer", "make_column_transformer"]
