"""ember.keras: Keras 3's way of building and training models, on ember's engine.

``Sequential`` / functional ``Model(inputs, outputs)`` / subclassed ``Model``; ``compile``,
``fit``, ``evaluate``, ``predict``; layers, activations, initializers, regularizers, losses,
metrics, optimizers and callbacks with Keras's names, defaults and semantics. Pure Python over
``ember.nn``, ``ember.optim`` and ember's autograd: layers are ``ember.nn.Module`` s and weights
are ``ember.nn.Parameter`` s, so the two APIs mix. Images are channels_last, as in Keras.
"""

from . import (
    activations,
    backend,
    callbacks,
    constraints,
    datasets,
    initializers,
    layers,
    losses,
    metrics,
    mixed_precision,
    models,
    ops,
    optimizers,
    regularizers,
    saving,
    utils,
)
from ._layer import Input, KerasTensor, Layer, Variable
from ._model import Model
from ._sequential import Sequential

Loss = losses.Loss
Metric = metrics.Metric
Optimizer = optimizers.Optimizer
Initializer = initializers.Initializer
Regularizer = regularizers.Regularizer
__version__ = "3.0.0-ember"

__all__ = [
    "Initializer",
    "Input",
    "KerasTensor",
    "Layer",
    "Loss",
    "Metric",
    "Model",
    "Optimizer",
    "Regularizer",
    "Sequential",
    "Variable",
    "activations",
    "backend",
    "callbacks",
    "constraints",
    "datasets",
    "initializers",
    "layers",
    "losses",
    "metrics",
    "mixed_precision",
    "models",
    "ops",
    "optimizers",
    "regularizers",
    "saving",
    "utils",
]
