"""Logic functions, as NumPy's reference groups them: comparison (isclose, allclose,
array_equal, array_equiv), array contents (isposinf, isneginf) and type testing (iscomplex,
isreal, iscomplexobj, isrealobj, isscalar, isfortran, iterable). The elementwise comparisons and
isfinite/isinf/isnan are rows of the C++ op table."""

from __future__ import annotations

import builtins

import numpy as _np

from . import _core
from ._creation import _is_c_contiguous
from ._manipulation import _asarray, broadcast_shapes

__all__ = [
    "allclose",
    "array_equal",
    "array_equiv",
    "isclose",
    "iscomplex",
    "iscomplexobj",
    "isfortran",
    "isneginf",
    "isposinf",
    "isreal",
    "isrealobj",
    "isscalar",
    "iterable",
]


# ---- comparison -----------------------------------------------------------------------------


def isclose(a, b, /, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|a - b| <= atol + rtol * |b|`` elementwise; infinities are close only to themselves."""
    a, b = _asarray(a), _asarray(b)
    with _np.errstate(invalid="ignore"):  # inf - inf: infinities are compared below, as NumPy
        close = _core.abs(a - b) <= atol + rtol * _core.abs(b)
    out = (a == b) | (close & _core.isfinite(a) & _core.isfinite(b))
    if equal_nan:
        out = out | (_core.isnan(a) & _core.isnan(b))
    return out


def allclose(a, b, /, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of a is close to b (see isclose), as a Python bool."""
    return builtins.bool(_core.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def array_equal(a, b, /, equal_nan=False):
    """True when a and b have the same shape and elements (NaNs equal with `equal_nan`)."""
    a, b = _asarray(a), _asarray(b)
    if tuple(a.shape) != tuple(b.shape):
        return False
    eq = a == b
    if equal_nan:
        eq = eq | (_core.isnan(a) & _core.isnan(b))
    return builtins.bool(_core.all(eq))


def array_equiv(a1, a2):
    """Whether the arrays are shape-consistent (broadcastable) and equal everywhere."""
    x, y = _asarray(a1), _asarray(a2)
    try:
        broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return False
    return bool(_core.all(x == y).item())


# ---- array contents -------------------------------------------------------------------------


def isposinf(x, /):
    x = _asarray(x)
    return (
        _core.isinf(x) & (x > 0)
        if x.dtype.kind == "f"
        else _core.zeros(x.shape, dtype=_core.bool, device=x.device)
    )


def isneginf(x, /):
    x = _asarray(x)
    return (
        _core.isinf(x) & (x < 0)
        if x.dtype.kind == "f"
        else _core.zeros(x.shape, dtype=_core.bool, device=x.device)
    )


# ---- type testing ---------------------------------------------------------------------------


def iscomplex(x):
    """Whether each element has a non-zero imaginary part."""
    x = _asarray(x)
    if x.dtype.kind != "c":
        return _core.zeros(x.shape, dtype=_core.bool, device=x.device)
    return _core.imag(x) != 0


def isreal(x):
    """Whether each element has a zero imaginary part."""
    return ~iscomplex(x)


def iscomplexobj(x):
    return getattr(x, "dtype", None) is not None and _asarray(x).dtype.kind == "c"


def isrealobj(x):
    return not iscomplexobj(x)


def isscalar(element):
    """NumPy's isscalar: Python and NumPy scalars (an ember array, even 0-d, is not one)."""
    return not isinstance(element, _core.ndarray) and _np.isscalar(element)


def isfortran(a):
    """Whether a is Fortran-ordered and not C-ordered (never true of ember's 2-d+ arrays
    except transposed views)."""
    x = _asarray(a)
    if x.ndim < 2:
        return False
    expected = x.itemsize
    for n, s in zip(x.shape, x.strides, strict=True):
        if n != 1 and s != expected:
            return False
        expected *= n
    return not _is_c_contiguous(x)


def iterable(y):
    try:
        iter(y)
    except TypeError:
        return False
    return True
