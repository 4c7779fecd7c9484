"""Linear models (scikit-learn's ``sklearn.linear_model``)."""

from __future__ import annotations

from ._base import LinearRegression
from ._bayes import BayesianRidge
from ._coordinate_descent import ElasticNet, Lasso
from ._coordinate_descent_cv import ElasticNetCV, LassoCV
from ._huber import HuberRegressor
from ._logistic import LogisticRegression
from ._logistic_cv import LogisticRegressionCV
from ._perceptron import Perceptron
from ._ridge import Ridge, ridge_regression
from ._ridge_classifier import RidgeClassifier, RidgeClassifierCV
from ._ridge_cv import RidgeCV
from ._sgd import SGDClassifier, SGDRegressor

__all__ = [
    "BayesianRidge",
    "ElasticNet",
    "ElasticNetCV",
    "HuberRegressor",
    "Lasso",
    "LassoCV",
    "LinearRegression",
    "LogisticRegression",
    "LogisticRegressionCV",
    "Perceptron",
    "Ridge",
    "RidgeCV",
    "RidgeClassifier",
    "RidgeClassifierCV",
    "SGDClassifier",
    "SGDRegressor",
    "ridge_regression",
]

from ._glm import GammaRegressor, PoissonRegressor, TweedieRegressor  # noqa: E402

__all__ += ["GammaRegressor", "PoissonRegressor", "TweedieRegressor"]

from ._quantile import QuantileRegressor  # noqa: E402

__all__ += ["QuantileRegressor"]

from ._theil_sen import TheilSenRegressor  # noqa: E402

__all__ += ["TheilSenRegressor"]

from ._ransac import RANSACRegressor  # noqa: E402

__all__ += ["RANSACRegressor"]
