"""Linear models (scikit-learn's ``sklearn.linear_model``)."""

from __future__ import annotations

from ._base import LinearRegression
from ._coordinate_descent import ElasticNet, Lasso
from ._logistic import LogisticRegression
from ._ridge import Ridge, ridge_regression
from ._sgd import SGDClassifier, SGDRegressor

__all__ = [
    "ElasticNet",
    "Lasso",
    "LinearRegression",
    "LogisticRegression",
    "Ridge",
    "SGDClassifier",
    "SGDRegressor",
    "ridge_regression",
]
