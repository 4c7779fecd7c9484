"""Activations, their derivatives and the losses of the multi-layer perceptrons, as ember
expressions (scikit-learn's ``sklearn.neural_network._base``)."""

from __future__ import annotations

import ember

__all__ = ["ACTIVATIONS", "DERIVATIVES", "LOSSES"]


def _logistic(z):
    # 1 / (1 + exp(-z)) without overflow for large |z|
    e = ember.exp(-ember.abs(z))
    return ember.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _softmax(z):
    e = ember.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


ACTIVATIONS = {
    "identity": lambda z: z,
    "logistic": _logistic,
    "tanh": ember.tanh,
    "relu": lambda z: ember.maximum(z, 0.0),
    "softmax": _softmax,
    "exp": ember.exp,
}

# derivative of the activation written in terms of its output a, times the incoming delta
DERIVATIVES = {
    "identity": lambda a, d: d,
    "logistic": lambda a, d: d * a * (1.0 - a),
    "tanh": lambda a, d: d * (1.0 - a * a),
    "relu": lambda a, d: ember.where(a > 0, d, 0.0),
}


def _average(v, sw):
    """Per-column (weighted) mean of v (n, k)."""
    if sw is None:
        return v.mean(axis=0)
    return (v * sw[:, None]).sum(axis=0) / sw.sum()


def _xlogy(x, y):
    return ember.where(x == 0, 0.0, x * ember.log(ember.where(x == 0, 1.0, y)))


def squared_loss(y, p, sw):
    d = y - p
    return 0.5 * _average(d * d, sw).mean()


def log_loss(y, p, sw):
    eps = float(ember.finfo(p.dtype).eps)
    p = ember.clip(p, eps, 1.0 - eps)
    if p.shape[1] == 1:
        p = ember.concatenate([1.0 - p, p], axis=1)
    if y.shape[1] == 1:
        y = ember.concatenate([1.0 - y, y], axis=1)
    return -_average(_xlogy(y, p), sw).sum()


def binary_log_loss(y, p, sw):
    eps = float(ember.finfo(p.dtype).eps)
    p = ember.clip(p, eps, 1.0 - eps)
    return -_average(_xlogy(y, p) + _xlogy(1.0 - y, 1.0 - p), sw).sum()


def poisson_loss(y, p, sw):
    return _average(_xlogy(y, y / p) - y + p, sw).sum()


LOSSES = {
    "squared_error": squared_loss,
    "log_loss": log_loss,
    "binary_log_loss": binary_log_loss,
    "poisson": poisson_loss,
}
