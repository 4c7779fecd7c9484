"""``ember.keras.datasets.digits.load_data()``: the digits shipped with ember, split Keras's way."""

from __future__ import annotations

import numpy as _np


def load_data(test_split=0.2, seed=113):
    """``(x_train, y_train), (x_test, y_test)`` as NumPy arrays: images uint8 of shape
    ``(n, 8, 8)`` with pixel values 0..16, labels uint8 0..9. The samples are shuffled with
    `seed` and the last `test_split` fraction is the test set."""
    from ...datasets import load_digits

    if not 0.0 <= test_split < 1.0:
        raise ValueError(f"digits.load_data: test_split must be in [0, 1), got {test_split!r}")
    x, y = load_digits()
    x = _np.asarray(x).astype(_np.uint8).reshape(-1, 8, 8)
    y = _np.asarray(y).astype(_np.uint8)
    order = _np.random.RandomState(seed).permutation(len(x))
    x, y = x[order], y[order]
    n_train = int(len(x) * (1.0 - test_split))
    return (x[:n_train], y[:n_train]), (x[n_train:], y[n_train:])
