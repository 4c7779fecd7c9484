"""``ember.keras.datasets.fashion_mnist.load_data(path)``: Fashion-MNIST IDX files from a folder
(the same file names and layout as MNIST)."""

from .mnist import load_data

__all__ = ["load_data"]
