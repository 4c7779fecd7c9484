"""ember.keras.utils: to_categorical, normalize, set_random_seed, clear_session,
pad_sequences, timeseries_dataset_from_array, PyDataset (Sequence)."""

from __future__ import annotations

import random as _pyrandom

import numpy as _np

import ember as _e

from ._layer import clear_session
from ._pydataset import PyDataset, Sequence
from ._trainer import pack_x_y_sample_weight, unpack_x_y_sample_weight
from ._utils_seq import pad_sequences, timeseries_dataset_from_array

__all__ = [
    "PyDataset",
    "Sequence",
    "clear_session",
    "normalize",
    "pack_x_y_sample_weight",
    "unpack_x_y_sample_weight",
    "pad_sequences",
    "set_random_seed",
    "timeseries_dataset_from_array",
    "to_categorical",
]


def to_categorical(x, num_classes=None):
    """One-hot rows for integer labels (NumPy in, NumPy out; an ember array stays on its device).
    A trailing axis of size 1 is dropped first, as Keras does."""
    if isinstance(x, _e.ndarray):
        labels = x
        if labels.ndim > 1 and labels.shape[-1] == 1:
            labels = _e.squeeze(labels, axis=-1)
        labels = labels.astype(_e.int64)
        if num_classes is None:
            num_classes = int(_e.max(labels)) + 1  # one read-back, only when not given
        eye = _e.eye(int(num_classes), dtype=_e.float32, device=labels.device)
        return eye[labels]
    a = _np.asarray(x)
    if a.dtype.kind == "f" and not _np.all(a == _np.round(a)):
        raise ValueError(f"to_categorical: labels must be integers, got {a.dtype} values")
    a = a.astype(_np.int64)
    if a.ndim > 1 and a.shape[-1] == 1:
        a = a[..., 0]
    if num_classes is None:
        num_classes = int(a.max()) + 1 if a.size else 0
    if a.size and (a.min() < 0 or a.max() >= num_classes):
        raise ValueError(
            f"to_categorical: labels must be in [0, num_classes={num_classes}), got values from "
            f"{a.min()} to {a.max()}"
        )
    out = _np.zeros(a.shape + (num_classes,), dtype=_np.float32)
    _np.put_along_axis(out, a[..., None], 1.0, axis=-1)
    return out


def normalize(x, axis=-1, order=2):
    """Rows scaled to unit `order`-norm (zero rows stay zero)."""
    if isinstance(x, _e.ndarray):
        from .. import linalg

        n = linalg.vector_norm(x, ord=order, axis=axis, keepdims=True)
        return x / _e.where(n == 0, 1.0, n)
    a = _np.asarray(x, dtype=_np.float32 if _np.asarray(x).dtype.kind != "f" else None)
    n = _np.linalg.norm(a, ord=order, axis=axis, keepdims=True)
    return a / _np.where(n == 0, 1, n)


def set_random_seed(seed):
    """Seeds Python's, NumPy's and ember's random numbers and Keras's initializers/shuffling."""
    if isinstance(seed, bool) or not isinstance(seed, (int, _np.integer)):
        raise ValueError(f"set_random_seed: seed must be an int, got {seed!r}")
    from .. import random as _random
    from . import initializers

    _pyrandom.seed(int(seed))
    _np.random.seed(int(seed))
    _random.seed(int(seed))
    initializers.set_seed(int(seed))
