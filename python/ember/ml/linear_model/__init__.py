"""Linear models (scikit-learn's ``sklearn.linear_model``)."""

from __future__ import annotations

from ._base import LinearRegression
from ._coordinate_descent import ElasticNet, Lasso
from ._logistic import LogisticRegression
from ._logistic_cv import LogisticRegressionCV
from ._ridge import Ridge, ridge_regression
from ._ridge_cv import RidgeCV
from ._sgd import SGDClassifier, SGDRegressor

__all__ = [
    "ElasticNet",
    "Lasso",
    "LinearRegression",
    "LogisticRegression",
    "LogisticRegressionCV",
    "Ridge",
    "RidgeCV",
    "SGDClassifier",
    "SGDRegressor",
    "ridge_regression",
]
