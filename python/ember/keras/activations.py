"""ember.keras.activations: Keras's activation functions, by name or as callables, composed of
ember.nn.functional and ember ops (differentiable on every device)."""

from __future__ import annotations

import threading

import ember as _e

from ..nn import functional as F

__all__ = [
    "elu",
    "exponential",
    "gelu",
    "get",
    "hard_sigmoid",
    "hard_silu",
    "leaky_relu",
    "linear",
    "log_softmax",
    "mish",
    "relu",
    "relu6",
    "selu",
    "serialize",
    "deserialize",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "softsign",
    "swish",
    "tanh",
]


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """Keras's relu: ``max(x, 0)``, with an optional leak below `threshold` and a cap."""
    if negative_slope == 0.0 and max_value is None and threshold == 0.0:
        return F.relu(x)
    y = _e.where(x >= threshold, x, negative_slope * (x - threshold))
    if max_value is not None:
        y = _e.minimum(y, max_value)
    return y


def leaky_relu(x, negative_slope=0.2):
    return F.leaky_relu(x, negative_slope)


def relu6(x):
    return F.relu6(x)


def elu(x, alpha=1.0):
    return F.elu(x, alpha)


def selu(x):
    return F.selu(x)


def gelu(x, approximate=False):
    return F.gelu(x, approximate="tanh" if approximate else "none")


def sigmoid(x):
    return F.sigmoid(x)


def hard_sigmoid(x):
    """Keras 3's hard sigmoid: ``relu6(x + 3) / 6``."""
    return F.hardsigmoid(x)


def hard_silu(x):
    return F.hardswish(x)


def silu(x):
    return F.silu(x)


swish = silu
hard_swish = hard_silu


def tanh(x):
    return F.tanh(x)


def softplus(x):
    return F.softplus(x)


def softsign(x):
    return x / (1 + _e.abs(x))


def mish(x):
    return F.mish(x)


def exponential(x):
    return _e.exp(x)


def linear(x):
    return x


_LAST_SOFTMAX = threading.local()


def softmax(x, axis=-1):
    out = F.softmax(x, dim=axis)
    if axis in (-1, x.ndim - 1):
        # remembered so that a cross-entropy of this very output can start from the logits,
        # as Keras's TensorFlow backend does (`_keras_logits`): exact, and one fused kernel
        _LAST_SOFTMAX.pair = (out, x)
    return out


def softmax_logits(y, peek=False):
    """The logits `y` was computed from by ``softmax`` (the latest call only), else None."""
    pair = getattr(_LAST_SOFTMAX, "pair", None)
    if pair is not None and pair[0] is y:
        if not peek:
            _LAST_SOFTMAX.pair = None
        return pair[1]
    return None


def log_softmax(x, axis=-1):
    return F.log_softmax(x, dim=axis)


_ALL = {
    "relu": relu,
    "leaky_relu": leaky_relu,
    "relu6": relu6,
    "elu": elu,
    "selu": selu,
    "gelu": gelu,
    "sigmoid": sigmoid,
    "hard_sigmoid": hard_sigmoid,
    "hard_silu": hard_silu,
    "hard_swish": hard_silu,
    "silu": silu,
    "swish": silu,
    "tanh": tanh,
    "softplus": softplus,
    "softsign": softsign,
    "mish": mish,
    "exponential": exponential,
    "linear": linear,
    "softmax": softmax,
    "log_softmax": log_softmax,
}


def get(identifier):
    """An activation from a name, a callable or None (linear)."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        fn = _ALL.get(identifier)
        if fn is None:
            raise ValueError(
                f"Could not interpret activation function identifier: {identifier!r}; known "
                f"activations: {', '.join(sorted(_ALL))}"
            )
        return fn
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret activation function identifier: {identifier!r}")


def serialize(activation):
    for name, fn in _ALL.items():
        if fn is activation:
            return name
    name = getattr(activation, "__name__", None)
    if name in _ALL:
        return name
    if hasattr(activation, "get_config"):
        return {"class_name": type(activation).__name__, "config": activation.get_config()}
    raise ValueError(
        f"activations.serialize: cannot serialize {activation!r}; register it by name with "
        "ember.keras.saving.register_keras_serializable"
    )


def deserialize(config, custom_objects=None):
    if isinstance(config, str):
        if custom_objects and config in custom_objects:
            return custom_objects[config]
        return get(config)
    from ._layer import registered

    cls = registered(config["class_name"], custom_objects, "activations.deserialize")
    return cls(**config.get("config", {}))
