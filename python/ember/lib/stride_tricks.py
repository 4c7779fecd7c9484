"""NumPy's ``numpy.lib.stride_tricks`` on ember arrays (views checked against their storage:
see ember/_strided.py)."""

from .._core import broadcast_to
from .._manipulation import broadcast_arrays, broadcast_shapes
from .._strided import np_as_strided as as_strided
from .._strided import sliding_window_view

__all__ = [
    "as_strided",
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "sliding_window_view",
]
