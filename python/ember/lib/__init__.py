"""NumPy's ``numpy.lib`` namespace, as far as ember has it: ``ember.lib.stride_tricks``."""

from . import stride_tricks

__all__ = ["stride_tricks"]
