"""ember.keras.ops: Keras 3's backend-neutral ops, on ember arrays. NumPy-named ops
(``ops.matmul``, ``ops.mean``, ``ops.ones`` ...) are ember's own functions; the neural-network
ones (``ops.relu``, ``ops.softmax``, ``ops.sigmoid`` ...) are ember.keras.activations'; a few
Keras-only names (``convert_to_tensor``, ``cast``, ``shape``, ``one_hot``...) are defined here."""

from __future__ import annotations

import functools

import ember as _e

from . import activations as _act
from ._layer import to_array

__all__ = [
    "cast", "convert_to_numpy", "convert_to_tensor", "empty", "eye", "full", "in_top_k",
    "one_hot", "ones", "segment_max", "segment_sum", "shape", "top_k", "zeros",
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


def _converting(fn):
    """`fn` taking NumPy arrays, lists and numbers too (converted as Keras's ops convert)."""

    @functools.wraps(fn)
    def op(x, *args, **kwargs):
        return fn(to_array(x), *args, **kwargs)

    return op


_NN = {
    name: _converting(getattr(_act, name))
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


def top_k(x, k, sorted=True):  # noqa: A002  (Keras's name)
    """The `k` largest values along the last axis and their indices (int32, as Keras)."""
    r = _e.topk(to_array(x), int(k), dim=-1, largest=True, sorted=bool(sorted))
    return r.values, r.indices.astype(_e.int32)


def in_top_k(targets, predictions, k):
    """Whether each target's prediction is among the `k` largest of its row (ties at the
    boundary count as inside, as TensorFlow's; non-finite predictions are never inside)."""
    p = to_array(predictions)
    t = to_array(targets, device=p.device).astype(_e.int64)
    hot = _e.expand_dims(t, axis=-1) == _e.arange(p.shape[-1], device=p.device)
    mine = _e.sum(_e.where(hot, p, 0.0), axis=-1, keepdims=True)
    greater = _e.sum((p > mine).astype(_e.int64), axis=-1)
    return (greater < int(k)) & _e.isfinite(mine[..., 0]) & _e.any(hot, axis=-1)


def _segments(data, segment_ids, num_segments, who):
    data = to_array(data)
    ids = to_array(segment_ids, device=data.device).astype(_e.int64)
    if ids.ndim != 1 or ids.shape[0] != data.shape[0]:
        raise ValueError(
            f"{who}: `segment_ids` must be 1-d with one id per row of `data`; got shapes "
            f"{tuple(ids.shape)} and {tuple(data.shape)}"
        )
    if num_segments is None:
        num_segments = int(_e.max(ids)) + 1 if ids.shape[0] else 0  # one read-back
    return data, ids, int(num_segments)


def _expand_ids(ids, data):
    idx = ids.reshape((-1,) + (1,) * (data.ndim - 1))
    return _e.broadcast_to(idx, tuple(data.shape))


def segment_sum(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Sums of the rows of `data` per segment id: (num_segments, *data.shape[1:])."""
    data, ids, n = _segments(data, segment_ids, num_segments, "segment_sum")
    out = _e.zeros((n,) + tuple(data.shape[1:]), dtype=data.dtype, device=data.device)
    return _e.index_add(out, 0, ids, data)


def segment_max(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Maxima of the rows of `data` per segment id (empty segments: the dtype's lowest)."""
    data, ids, n = _segments(data, segment_ids, num_segments, "segment_max")
    lowest = -float("inf") if data.dtype.kind == "f" else int(_e.iinfo(data.dtype).min)
    out = _e.full((n,) + tuple(data.shape[1:]), lowest, dtype=data.dtype, device=data.device)
    return _e.scatter_reduce(out, 0, _expand_ids(ids, data), data, "amax", include_self=True)


def __getattr__(name):
    if name in _NN:
        return _NN[name]
    fn = getattr(_e, name, None)
    if fn is None or name.startswith("_"):
        raise AttributeError(f"module 'ember.keras.ops' has no attribute {name!r}")
    return fn


def __dir__():
    return sorted(set(__all__) | set(_NN) | {n for n in dir(_e) if not n.startswith("_")})
