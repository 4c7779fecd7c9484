"""The exception of a PyTorch-only function's bad argument: PyTorch raises RuntimeError for these
(a shape or dtype it cannot take), ember's NumPy side ValueError; TorchArgumentError is both, so
``except RuntimeError`` (PyTorch code) and ``except ValueError`` (ember's rule) catch it."""

from __future__ import annotations


class TorchArgumentError(RuntimeError, ValueError):
    """A bad argument to one of ember's PyTorch-only functions (names the function and value)."""
