"""ember's benchmark suite: ember against NumPy, CuPy and PyTorch on the same work.

Run it with ``python -m ember.bench --help``; ``main(argv)`` does the same from Python.
"""

from ._cli import main

__all__ = ["main"]
