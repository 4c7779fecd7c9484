"""ember.datasets: small datasets shipped with ember, and readers for common file formats.

- ``load_digits()``: the 8x8 handwritten digits (1,797 samples), shipped inside the package.
- ``mnist(path, kind="train")``: MNIST-style IDX files (MNIST, Fashion-MNIST, ...) from a folder.
- ``read_idx(path)``: one IDX file as an ember array.
"""

from ._digits import load_digits
from ._idx import mnist, read_idx

__all__ = ["load_digits", "mnist", "read_idx"]
