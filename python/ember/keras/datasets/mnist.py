"""``ember.keras.datasets.mnist.load_data(path)``: MNIST IDX files from a local folder."""

from __future__ import annotations

import numpy as _np


def load_data(path=None):
    """``(x_train, y_train), (x_test, y_test)`` as NumPy uint8 arrays (images ``(n, 28, 28)``)
    read from the IDX files in the folder `path` (ember downloads nothing: pass the folder that
    holds ``train-images-idx3-ubyte[.gz]`` etc.)."""
    from ...datasets import mnist

    if path is None:
        raise ValueError(
            "mnist.load_data: ember does not download datasets; pass path= a folder holding "
            "the MNIST IDX files (train-images-idx3-ubyte.gz, ...)"
        )
    xtr, ytr = mnist(path, "train")
    xte, yte = mnist(path, "test")
    return (
        (_np.asarray(xtr), _np.asarray(ytr).astype(_np.uint8)),
        (_np.asarray(xte), _np.asarray(yte).astype(_np.uint8)),
    )
