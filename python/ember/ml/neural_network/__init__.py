"""Multi-layer perceptrons (scikit-learn's ``sklearn.neural_network``) trained by
backpropagation in ember ops on the data's device."""

from __future__ import annotations

from ._multilayer_perceptron import MLPClassifier, MLPRegressor

__all__ = ["MLPClassifier", "MLPRegressor"]
