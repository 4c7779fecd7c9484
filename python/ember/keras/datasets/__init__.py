"""ember.keras.datasets: Keras-style ``load_data()`` for the data ember ships or reads.

- ``digits.load_data()``: the 8x8 handwritten digits shipped with ember (1,797 images).
- ``mnist.load_data(path)`` / ``fashion_mnist.load_data(path)``: MNIST-format IDX files from a
  local folder (ember downloads nothing).
"""

from . import digits, fashion_mnist, mnist

__all__ = ["digits", "fashion_mnist", "mnist"]
