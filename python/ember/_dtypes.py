"""Data-type functions: the Array API's result_type, can_cast, finfo, iinfo and isdtype, and
NumPy's promote_types, issubdtype, common_type, min_scalar_type, mintypecode and typename; the
dtype objects' NumPy face is in _dtype_face, NumPy's other names of the dtypes in _dtype_names."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as _np

from . import _core, _dtype_face  # noqa: F401  (_dtype_face: the dtypes' NumPy attributes)
from ._array import asarray
from ._core import ndarray

__all__ = [
    "can_cast",
    "common_type",
    "finfo",
    "iinfo",
    "isdtype",
    "issubdtype",
    "min_scalar_type",
    "mintypecode",
    "promote_types",
    "result_type",
    "typename",
]


def result_type(*arrays_and_dtypes):
    """The dtype NumPy 2 / the Array API promote the arguments to (Python scalars are weak)."""
    return _core._result_type(*arrays_and_dtypes)


_KIND_RANK = {"b": 0, "u": 1, "i": 2, "f": 3, "c": 4}


_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def _cast_dtype(x, who, what):
    """The dtype of a dtype-like, an ember or NumPy array, or a NumPy scalar."""
    if isinstance(x, bool | int | float | complex):
        raise TypeError(
            f"{who}: {what} must be a dtype or an array, got the Python scalar {x!r} (as in "
            "NumPy 2: the answer would depend on the value; use result_type instead)"
        )
    if not isinstance(x, _core.dtype | str | type) and hasattr(x, "dtype"):
        x = x.dtype
    return _core.dtype(x)


def can_cast(from_, to, /, casting="safe"):
    """Whether `from_` (a dtype or array) casts to `to` under NumPy's `casting` rule: "safe"
    (without loss, the Array API's meaning), "same_kind" (also downcasts within a kind, and to a
    higher kind), "no"/"equiv" (the same dtype), "unsafe" (always)."""
    who = "ember.can_cast"
    if casting not in _CASTINGS:
        raise ValueError(f"{who}: casting must be one of {_CASTINGS}, got {casting!r}")
    f, t = _cast_dtype(from_, who, "from_"), _cast_dtype(to, who, "to")
    if casting == "unsafe":
        return True
    if casting in ("no", "equiv"):
        return f == t
    safe = bool(_core._can_cast(f, t))
    if casting == "safe" or safe:
        return safe
    return _KIND_RANK[f.kind] <= _KIND_RANK[t.kind]


@dataclass(frozen=True)
class finfo_object:
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    smallest_subnormal: float
    resolution: float
    precision: int
    dtype: _core.dtype

    @property
    def tiny(self):
        return self.smallest_normal


@dataclass(frozen=True)
class iinfo_object:
    bits: int
    min: int
    max: int
    dtype: _core.dtype


def finfo(type, /):
    """Machine limits of a floating (or complex) dtype."""
    if isinstance(type, _core.ndarray):
        type = type.dtype
    return finfo_object(*_core._finfo(type))


def iinfo(type, /):
    """Machine limits of an integer dtype."""
    if isinstance(type, _core.ndarray):
        type = type.dtype
    return iinfo_object(*_core._iinfo(type))


_KINDS = {
    "bool": ("b",),
    "signed integer": ("i",),
    "unsigned integer": ("u",),
    "integral": ("i", "u"),
    "real floating": ("f",),
    "complex floating": ("c",),
    "numeric": ("i", "u", "f", "c"),
}


def isdtype(dtype, kind):
    """Whether `dtype` is of `kind` (a dtype, a kind name, or a tuple of these)."""
    dtype = _core.dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"ember.isdtype: unknown kind {kind!r}")
        return dtype.kind in _KINDS[kind]
    return dtype == _core.dtype(kind)


def promote_types(type1, type2):
    """The smallest dtype both cast to safely (the dtypes' result_type)."""
    return result_type(type1, type2)


def issubdtype(arg1, arg2):
    """NumPy's issubdtype for ember dtypes, with NumPy's abstract types as the second
    argument (np.floating, np.integer, ...)."""
    kinds = {
        _np.bool_: "bool",
        _np.signedinteger: "signed integer",
        _np.unsignedinteger: "unsigned integer",
        _np.integer: "integral",
        _np.floating: "real floating",
        _np.complexfloating: "complex floating",
        _np.inexact: ("real floating", "complex floating"),
        _np.number: "numeric",
        _np.generic: ("bool", "numeric"),
    }
    d1 = arg1.dtype if isinstance(arg1, ndarray) else arg1
    if arg2 in kinds:
        return isdtype(d1, kinds[arg2])
    return d1 == (arg2.dtype if isinstance(arg2, ndarray) else arg2)


def common_type(*arrays):
    """The inexact dtype all arrays convert to (integers count as float64)."""
    ts = []
    for a in arrays:
        d = (a if isinstance(a, _core.ndarray) else asarray(a)).dtype
        ts.append(_core.float64 if d.kind in "biu" else d)
    return result_type(*ts)


def min_scalar_type(a):
    """The smallest dtype that holds the value (NumPy's rule, for Python and NumPy scalars)."""
    if isinstance(a, _core.ndarray):
        return a.dtype
    t = _np.min_scalar_type(a)
    if t.kind not in "biufc":
        raise TypeError(f"ember.min_scalar_type: no ember dtype holds {type(a).__name__} values")
    return getattr(_core, str(t))


mintypecode = _np.mintypecode


typename = _np.typename
