"""ember.linalg: the Array API linear-algebra extension. This version has the matrix-product
part (``matmul``, ``matrix_transpose``, ``tensordot``, ``vecdot``, ``outer``, ``diagonal``,
``trace``); the factorizations are not in it yet."""

from __future__ import annotations

from . import _core, _linalg
from ._core import matmul, matrix_transpose
from ._linalg import outer, tensordot, vecdot

__all__ = ["diagonal", "matmul", "matrix_transpose", "outer", "tensordot", "trace", "vecdot"]


def diagonal(x, /, *, offset=0):
    """The ``offset`` diagonal of the last two axes (a view)."""
    return _core._diagonal_view(_linalg._arr(x), int(offset))


def trace(x, /, *, offset=0, dtype=None):
    """Sum of the ``offset`` diagonal of the last two axes."""
    from . import sum as _sum

    return _sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)
