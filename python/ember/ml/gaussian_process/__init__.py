"""Gaussian processes (scikit-learn's ``sklearn.gaussian_process``): GaussianProcessRegressor
and the kernels in ``ember.ml.gaussian_process.kernels``."""

from __future__ import annotations

from . import kernels
from ._gpr import GaussianProcessRegressor

__all__ = ["GaussianProcessRegressor", "kernels"]
