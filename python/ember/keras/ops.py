"""ember.keras.ops: Keras 3's backend-neutral ops, on ember arrays. NumPy-named ops
(``ops.matmul``, ``ops.mean``, ``ops.ones`` ...) are ember's own functions; the neural-network
ones (``ops.relu``, ``ops.softmax``, ``ops.sigmoid`` ...) are ember.keras.activations'; a few
Keras-only names (``convert_to_tensor``, ``cast``, ``shape``, ``one_hot``...) are defined here."""

from __future__ import annotations

import ember as _e

from . import activations as _act
from ._layer import to_array

__all__ = [
    "cast", "convert_to_numpy", "convert_to_tensor", "empty", "eye", "full", "one_hot", "ones",
    "shape", "zeros",
]  # fmt: skip


# Keras creates floating arrays in its floatx (float32), where NumPy (and ember) use float64
def ones(shape, dtype=None):
    return _e.ones(shape, dtype=dtype or "float32")


def zeros(shape, dtype=None):
    return _e.zeros(shape, dtype=dtype or "float32")


def empty(shape, dtype=None):
    return _e.empty(shape, dtype=dtype or "float32")


def full(shape, fill_value, dtype=None):
    if dtype is None and isinstance(fill_value, float):
        dtype = "float32"
    return _e.full(shape, fill_value, dtype=dtype)


def eye(N, M=None, k=0, dtype=None):  # noqa: N803  (Keras's names)
    return _e.eye(N, M, k=k, dtype=dtype or "float32")


_NN = {
    name: getattr(_act, name)
    for name in (
        "relu", "relu6", "sigmoid", "tanh", "softmax", "log_softmax", "softplus", "softsign",
        "silu", "swish", "gelu", "elu", "selu", "leaky_relu", "hard_sigmoid", "hard_silu", "mish",
    )
}  # fmt: skip


def convert_to_tensor(x, dtype=None):
    """An ember array (NumPy float64 data becomes float32, Keras's floatx)."""
    return to_array(x, dtype=dtype)


def convert_to_numpy(x):
    return _e.asnumpy(x)


def cast(x, dtype):
    return convert_to_tensor(x).astype(dtype)


def shape(x):
    return tuple(x.shape)


def one_hot(x, num_classes, axis=-1, dtype="float32"):
    x = convert_to_tensor(x)
    hot = _e.expand_dims(x, axis=-1) == _e.arange(num_classes, device=x.device)
    out = hot.astype(dtype)
    return out if axis in (-1, out.ndim - 1) else _e.moveaxis(out, -1, axis)


def __getattr__(name):
    if name in _NN:
        return _NN[name]
    fn = getattr(_e, name, None)
    if fn is None or name.startswith("_"):
        raise AttributeError(f"module 'ember.keras.ops' has no attribute {name!r}")
    return fn


def __dir__():
    return sorted(set(__all__) | set(_NN) | {n for n in dir(_e) if not n.startswith("_")})
