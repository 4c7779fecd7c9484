"""NumPy's dispatch protocols on ember arrays and the Array API's inspection namespace.

``np.sin(x)``, ``np.add.reduce(x)``, ``np.concatenate([x, y])`` on ember arrays run the ember
function of the same name and return ember arrays on the arrays' device (``__array_ufunc__``,
``__array_function__``). A NumPy function ember lacks raises a TypeError naming it: ember never
falls back to a hidden copy to the host. Also ``__array_namespace_info__()`` and the NumPy/CuPy
methods ``fill``, ``view``, ``get`` and ``set``."""

from __future__ import annotations

import sys

import numpy as _np

from . import _core, cuda
from ._array import asarray, asnumpy, defers_to

ndarray = _core.ndarray

__all__ = ["__array_namespace_info__"]


def _namespace():
    """The ember namespace, for the lookups by NumPy's function names: the package has finished
    importing by the time an array exists to dispatch on."""
    return sys.modules[__package__]


# ---- __array_namespace_info__ -------------------------------------------------------------

_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
_KINDS["numeric"] = _KINDS["integral"] + _KINDS["real floating"] + _KINDS["complex floating"]


class _Info:
    """The Array API inspection namespace (``ember.__array_namespace_info__()``)."""

    __module__ = "ember"

    def capabilities(self):
        return {
            "boolean indexing": True,
            "data-dependent shapes": True,
            "max dimensions": 64,
        }

    def default_device(self):
        return _core.get_default_device()

    def devices(self):
        return [_core.Device("cpu")] + [
            _core.Device(f"cuda:{i}") for i in range(cuda.device_count())
        ]

    def default_dtypes(self, *, device=None):
        self._check_device(device, "default_dtypes")
        return {
            "real floating": _core.float64,
            "complex floating": _core.complex128,
            "integral": _core.int64,
            "indexing": _core.int64,
        }

    def dtypes(self, *, device=None, kind=None):
        """The dtypes of `kind` (None: all; a kind name; or a tuple of them), by name. Every
        device has every dtype."""
        self._check_device(device, "dtypes")
        names = []
        if kind is None:
            names = list(_KINDS["bool"] + _KINDS["numeric"])
        else:
            for k in kind if isinstance(kind, tuple) else (kind,):
                if k not in _KINDS:
                    raise ValueError(
                        f"ember.__array_namespace_info__().dtypes: unknown kind {k!r} "
                        f"(one of {sorted(_KINDS)})"
                    )
                names += [n for n in _KINDS[k] if n not in names]
        return {n: getattr(_core, n) for n in names}

    @staticmethod
    def _check_device(device, who):
        if device is not None and not isinstance(device, _core.Device):
            try:
                _core.Device(device)
            except Exception as e:
                raise ValueError(
                    f"ember.__array_namespace_info__().{who}: not a device: {device!r}"
                ) from e

    def __repr__(self):
        return "ember.__array_namespace_info__()"


def __array_namespace_info__():
    return _Info()


# ---- methods NumPy and CuPy users expect ----------------------------------------------------


def _fill(self, value):
    """Sets every element to `value` (cast to the array's dtype)."""
    self[...] = value


def _view(self, dtype=None, type=None):
    """A view of the same data; with `dtype`, the bytes read as that dtype (the last axis is
    rescaled when the item sizes differ, as in NumPy)."""
    if type is not None:
        raise TypeError("ember.ndarray.view: type= is not supported")
    if dtype is None:
        return self[...]
    return _core._view_as(self, dtype)


def _get(self, stream=None, order="C", out=None, blocking=True):
    """A NumPy copy of the array (CuPy's ``get``)."""
    a = asnumpy(self)
    if out is not None:
        _np.copyto(out, a)
        return out
    return a


def _set(self, arr, stream=None):
    """Copies a host array of the same shape into this array (CuPy's ``set``)."""
    a = _np.asarray(arr)
    if a.shape != self.shape:
        raise ValueError(
            f"ember.ndarray.set: the array has shape {self.shape} but the data has {a.shape}"
        )
    self[...] = asarray(a, dtype=self.dtype, device=self.device)


def _round(self, decimals=0, out=None):
    """NumPy's ``x.round(decimals=0)``: half to even."""
    from ._math import around

    return around(self, decimals, out=out)


def _dot(self, other, out=None):
    from ._linalg import dot

    r = dot(self, other)
    if out is not None:
        out[...] = r
        return out
    return r


def _trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    from ._linalg import trace

    r = trace(self, offset, axis1, axis2, dtype)
    if out is not None:
        out[...] = r
        return out
    return r


def _diagonal(self, offset=0, axis1=0, axis2=1):
    from ._linalg import diagonal

    return diagonal(self, offset, axis1, axis2)


def _put(self, indices, values, mode="raise"):
    from ._indexing import put

    put(self, indices, values, mode)


def _tobytes(self, order="C"):
    """The data's bytes (an explicit copy to the host for a GPU array)."""
    return asnumpy(self).tobytes(order=order)


ndarray.fill = _fill
ndarray.view = _view
ndarray.get = _get
ndarray.set = _set
# NumPy's methods that are functions of ember's namespace
ndarray.round = _round
ndarray.dot = _dot
ndarray.trace = _trace
ndarray.diagonal = _diagonal
ndarray.put = _put
ndarray.tobytes = _tobytes


# ---- __array_ufunc__ ----------------------------------------------------------------------

# ufunc.reduce / accumulate as ember reductions and scans.
_REDUCE = {
    "add": "sum",
    "multiply": "prod",
    "maximum": "max",
    "minimum": "min",
    "logical_and": "all",
    "logical_or": "any",
}
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}


def _unsupported(what):
    return TypeError(f"ember: {what} is not supported on ember arrays (no host fallback)")


def _with_out(result, out):
    """Writes `result` (an array or tuple of arrays) into the `out` arrays."""
    if out is None:
        return result
    outs = out if isinstance(out, tuple) else (out,)
    results = result if isinstance(result, tuple) else (result,)
    if len(outs) != len(results):
        raise ValueError(f"ember: expected {len(results)} output arrays, got {len(outs)}")
    for o, r in zip(outs, results, strict=True):
        if not isinstance(o, ndarray):
            raise TypeError("ember: out= must hold ember arrays")
        o[...] = r
    return outs[0] if not isinstance(result, tuple) else outs


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    em = _namespace()
    name = ufunc.__name__
    out = kwargs.get("out", None)
    # NEP 13: a container that overrides ufuncs itself (a Dask array, xarray, pandas) gets the
    # call; NumPy hands it over when every override before it answers NotImplemented.
    if any(defers_to(a) for a in inputs + (out if isinstance(out, tuple) else (out,))):
        return NotImplemented
    out = kwargs.pop("out", None)
    if isinstance(out, tuple) and all(o is None for o in out):
        out = None
    if method == "__call__":
        fn = getattr(em, name, None)
        if fn is None or not callable(fn):
            raise _unsupported(f"numpy.{name}")
        where = kwargs.pop("where", True)
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("casting", None)
        kwargs.pop("subok", None)
        if kwargs.pop("order", "K") not in ("K", "C", "A"):
            raise _unsupported(f"numpy.{name} with order=")
        if kwargs:
            raise _unsupported(f"numpy.{name} with {', '.join(sorted(kwargs))}=")
        result = fn(*inputs)
        if dtype is not None:
            result = result.astype(dtype)
        if where is not True:
            if out is None:
                raise _unsupported(f"numpy.{name} with where= but no out=")
            o = out[0] if isinstance(out, tuple) else out
            result = _core.where(asarray(where, device=o.device), result, o)
        return _with_out(result, out)
    if method == "reduce" and name in _REDUCE:
        x = inputs[0]
        axis = kwargs.pop("axis", 0)
        keepdims = kwargs.pop("keepdims", False)
        dtype = kwargs.pop("dtype", None)
        initial = kwargs.pop("initial", _np._NoValue)
        if initial is not _np._NoValue or kwargs.pop("where", True) is not True:
            raise _unsupported(f"numpy.{name}.reduce with initial= or where=")
        if kwargs:
            raise _unsupported(f"numpy.{name}.reduce with {', '.join(sorted(kwargs))}=")
        fn = getattr(em, _REDUCE[name])
        extra = {"dtype": dtype} if dtype is not None else {}
        return _with_out(fn(x, axis=axis, keepdims=keepdims, **extra), out)
    if method == "accumulate" and name in _ACCUMULATE and hasattr(em, _ACCUMULATE[name]):
        x = inputs[0]
        axis = kwargs.pop("axis", 0)
        dtype = kwargs.pop("dtype", None)
        if kwargs:
            raise _unsupported(f"numpy.{name}.accumulate with {', '.join(sorted(kwargs))}=")
        fn = getattr(em, _ACCUMULATE[name])
        return _with_out(fn(x, axis=axis, dtype=dtype), out)
    raise _unsupported(f"numpy.{name}.{method}")


ndarray.__array_ufunc__ = _array_ufunc


# ---- __array_function__ -------------------------------------------------------------------

_SUBMODULES = {"numpy.linalg": "linalg", "numpy.fft": "fft"}


def _ember_function(func):
    """The ember function standing for the NumPy function `func`, or None."""
    em = _namespace()
    module = getattr(func, "__module__", "") or ""
    ns = em
    for prefix, sub in _SUBMODULES.items():
        if module.startswith(prefix):
            ns = getattr(em, sub)
            break
    fn = getattr(ns, func.__name__, None)
    return fn if callable(fn) and fn is not func else None


# NumPy's creation functions reach ember only through ``like=`` (``np.asarray(data, like=x)``,
# as Dask calls them with its ``_meta``): new arrays go to the device of `like`, as they go to
# its type. An ember array given as data keeps its own device (no hidden transfer).
_LIKE_CREATION = frozenset(
    "array asarray asanyarray empty ones zeros full arange identity eye tri frombuffer fromiter "
    "fromfunction fromstring fromfile loadtxt genfromtxt".split()
)


def _array_function(self, func, types, args, kwargs):
    if not all(issubclass(t, ndarray | _np.ndarray) for t in types):
        return NotImplemented
    fn = _ember_function(func)
    if fn is None:
        module = getattr(func, "__module__", "numpy") or "numpy"
        module = "numpy" if module.startswith("numpy._core") else module
        raise _unsupported(f"{module}.{func.__name__}")
    if (
        func.__name__ in _LIKE_CREATION
        and kwargs.get("device") is None
        and not (args and isinstance(args[0], ndarray))
    ):
        kwargs = {**kwargs, "device": self.device}
        if func.__name__ == "arange" and len(args) == 4:  # NumPy's dtype may come 4th
            args, kwargs = args[:3], {**kwargs, "dtype": args[3]}
    return fn(*args, **kwargs)


ndarray.__array_function__ = _array_function


# ---- Dask ---------------------------------------------------------------------------------


def _dask_tokenize(self):
    """Dask's token of the array: its contents hashed in place, on its device (no host copy;
    ember/dask/_tokenize.py). Dask asks for it as soon as it meets an ember array
    (``da.from_array``), so this first contact also registers ember with Dask."""
    from .dask import _tokenize

    return _tokenize.token(self)


ndarray.__dask_tokenize__ = _dask_tokenize
