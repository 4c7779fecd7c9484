"""Data-type functions of the Array API: result_type, can_cast, finfo, iinfo, isdtype."""

from dataclasses import dataclass

from . import _core


def result_type(*arrays_and_dtypes):
    """The dtype NumPy 2 / the Array API promote the arguments to (Python scalars are weak)."""
    return _core._result_type(*arrays_and_dtypes)


_KIND_RANK = {"b": 0, "u": 1, "i": 2, "f": 3, "c": 4}
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def can_cast(from_, to, /, casting="safe"):
    """Whether `from_` (a dtype or array) casts to `to` under NumPy's `casting` rule: "safe"
    (without loss, the Array API's meaning), "same_kind" (also downcasts within a kind, and to a
    higher kind), "no"/"equiv" (the same dtype), "unsafe" (always)."""
    if casting not in _CASTINGS:
        raise ValueError(f"ember.can_cast: casting must be one of {_CASTINGS}, got {casting!r}")
    if casting == "unsafe":
        _core._can_cast(from_, to)  # the arguments are still checked
        return True
    safe = _core._can_cast(from_, to)
    f = getattr(from_, "dtype", from_)
    if casting in ("no", "equiv"):
        return safe and f == to
    if casting == "safe" or safe:
        return safe
    return _KIND_RANK[f.kind] <= _KIND_RANK[to.kind]


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
