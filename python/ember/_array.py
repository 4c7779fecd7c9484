"""Conversions between ember arrays and NumPy / DLPack / Python objects, and the parts of the
ndarray class that are naturally Python (printing, iteration, the NumPy protocols)."""

import builtins
import sys

import numpy as _np

from . import _core
from ._core import ndarray


def _bfloat16():
    try:
        import ml_dtypes
    except ImportError as e:  # pragma: no cover - ml_dtypes is a declared dependency
        raise TypeError("ember: bfloat16 <-> NumPy needs the ml_dtypes package") from e
    return _np.dtype(ml_dtypes.bfloat16)


def _is_bfloat16(dt):
    return dt.name == "bfloat16" and dt.itemsize == 2 and dt.kind == "V"


def asarray(obj, /, *, dtype=None, device=None, copy=None, requires_grad=False):
    """Converts `obj` to an ember array on `device` (the default device when None).

    Accepts ember arrays, Python scalars and nested sequences, NumPy arrays and scalars, objects
    with the buffer protocol or ``__dlpack__``. CPU NumPy arrays are shared, not copied, unless
    `copy` is True, a dtype or device change needs a copy, or they are read-only. With
    `requires_grad`, the result is a leaf that requires gradients.
    """
    if requires_grad:
        return _asarray(obj, dtype, device, copy).requires_grad_()
    return _asarray(obj, dtype, device, copy)


def _asarray(obj, dtype, device, copy):
    if type(obj) is ndarray or isinstance(obj, (builtins.bool, int, float, complex)):
        return _core._asarray(obj, dtype, device, copy)
    if isinstance(obj, (_np.ndarray, _np.generic)):
        a = _np.asarray(obj)
        if _is_bfloat16(a.dtype):
            raw = _core._asarray(a.view(_np.uint16), None, None, copy, a.flags.writeable)
            return _core._asarray(_core._view_as(raw, _core.bfloat16), dtype, device, None)
        if not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
        if a.dtype.kind not in "biufc":
            raise TypeError(f"ember.asarray: unsupported NumPy dtype {a.dtype}")
        return _core._asarray(a, dtype, device, copy, builtins.bool(a.flags.writeable))
    if hasattr(obj, "__dlpack__"):
        return (
            from_dlpack(obj, device=device, copy=copy)
            if dtype is None
            else asarray(from_dlpack(obj, device=device, copy=copy), dtype=dtype)
        )
    if hasattr(obj, "__cuda_array_interface__"):  # Numba device arrays, PyCUDA, ...
        a = _core._cai_import(obj, device, copy)
        return a if dtype is None else _core._asarray(a, dtype, None, None)
    if isinstance(obj, (bytes, bytearray)):
        raise TypeError(
            "ember.asarray: raw bytes have no dtype; wrap them with numpy.frombuffer first"
        )
    try:
        a = _np.asarray(obj)
    except (ValueError, TypeError) as e:
        if isinstance(obj, (list, tuple)) and _holds_device_array(obj):
            return _stack_nested(obj, dtype, device)
        raise type(e)(f"ember.asarray: cannot convert {type(obj).__name__}: {e}") from None
    if a.dtype.kind not in "biufc":
        raise TypeError(
            f"ember.asarray: cannot convert an object of type {type(obj).__name__} "
            f"(it gives a NumPy array of dtype {a.dtype})"
        )
    if copy is False:
        raise ValueError("ember.asarray: copy=False is impossible for a Python sequence")
    return _core._asarray(a, dtype, device, None, True)


def _holds_device_array(seq):
    """Whether a nested list/tuple holds an ember array that NumPy cannot see (not on the CPU)."""
    for e in seq:
        if type(e) is ndarray:
            if e.device.type != "cpu":
                return True
        elif isinstance(e, (list, tuple)) and _holds_device_array(e):
            return True
    return False


def _stack_nested(seq, dtype, device):
    """A nested list/tuple of GPU ember arrays and scalars as one array, built on the device the
    arrays are on (CuPy's asarray of a list of device arrays): the leaves take NumPy's result
    type of a list (Python scalars as float64/int64/complex128, not weak), then are stacked."""
    leaves = []

    def walk(s):
        for e in s:
            if isinstance(e, (list, tuple)):
                walk(e)
            else:
                leaves.append(e)

    walk(seq)
    devs = {e.device for e in leaves if type(e) is ndarray}
    if device is None:
        if len(devs) > 1:
            raise ValueError(
                "ember.asarray: the arrays in the list are on different devices "
                f"({', '.join(sorted(map(str, devs)))}); pass device= to choose one"
            )
        device = devs.pop()
    if dtype is None:
        kinds = [e.dtype if type(e) is ndarray else _np.asarray(e).dtype for e in leaves]
        from ._dtypes import result_type

        dtype = result_type(*kinds) if kinds else None

    def build(s):
        parts = [
            build(e) if isinstance(e, (list, tuple)) else _asarray(e, dtype, device, None)
            for e in s
        ]
        if not parts:
            return _core._asarray(_np.asarray(s), dtype, device, None)
        return _stack(parts)

    return build(seq)


def _stack(parts):
    from ._joining import stack

    try:
        return stack(parts)
    except ValueError as e:
        raise ValueError(f"ember.asarray: the nested sequence is ragged: {e}") from None


def from_dlpack(x, /, *, device=None, copy=None):
    """Imports an object supporting the DLPack protocol (``__dlpack__``, or a bare DLPack
    capsule), zero-copy unless `copy` is True, `device` names another device or the producer
    marks its memory read-only. The result stays on the producer's device when `device` is None
    and keeps the producer alive while ember uses its memory.

    For CUDA producers, ember passes its current stream as ``stream=`` so the producer makes it
    wait for the producer's work (no host synchronization) and asks for a versioned capsule
    (``max_version=(1, 0)``), falling back to the legacy protocol for older producers.
    """
    return _core._from_dlpack(x, device, copy)


def _cuda_array_interface(self):
    """The ``__cuda_array_interface__`` (version 3) of a CUDA array: shape, typestr, descr, data,
    strides (None when C-contiguous, else bytes) and ember's current stream of the device, which
    consumers make their work wait for. CPU arrays raise AttributeError; bfloat16 has no typestr
    in this protocol and raises AttributeError too (use DLPack for it)."""
    return _core._cai_export(self)


def _record_stream(self, stream):
    """Marks this array's memory as used by work queued on `stream` (an ``ember.cuda.Stream``):
    when the memory is freed, its reuse waits for that work (PyTorch's ``record_stream``). A
    no-op for CPU arrays and memory ember did not allocate."""
    handle = getattr(stream, "_s", None)
    if handle is None:
        raise TypeError(
            "ember.ndarray.record_stream: expected an ember.cuda.Stream, got "
            f"{type(stream).__name__}"
        )
    _core._cuda.record_stream(self, handle)


def asnumpy(x):
    """Returns a NumPy array with the contents of `x` (a view for CPU arrays, a copy otherwise;
    bfloat16 arrays come back as ``ml_dtypes.bfloat16``)."""
    if not isinstance(x, ndarray):
        return _np.asarray(x)
    if x.device.type != "cpu":
        x = _core._debug.to_host(x, "ember.asnumpy", True)
    v = x._numpy_view()
    if x.dtype == _core.bfloat16:
        v = v.view(_bfloat16())
    elif v.dtype.char in "qQ":  # DLPack gives long long; NumPy's default int is long
        v = v.view(_np.int64 if v.dtype.char == "q" else _np.uint64)
    if not x._writeable:  # a view of a read-only array is read-only in NumPy too
        v.flags.writeable = False
    return v


class flagsobj:
    """NumPy's ``ndarray.flags`` for an ember array: the layout flags, and WRITEABLE, which can
    be set (views of a read-only array are read-only; ``broadcast_to`` views are read-only).
    OWNDATA is true for an array that spans the whole of a block ember allocated (ember keeps
    no ``base``, so an unchanged full view of such a block reads as owning it too)."""

    __slots__ = ("_a",)
    _keys = {
        "C": "c_contiguous",
        "C_CONTIGUOUS": "c_contiguous",
        "CONTIGUOUS": "c_contiguous",
        "F": "f_contiguous",
        "F_CONTIGUOUS": "f_contiguous",
        "FORTRAN": "f_contiguous",
        "O": "owndata",
        "OWNDATA": "owndata",
        "W": "writeable",
        "WRITEABLE": "writeable",
        "A": "aligned",
        "ALIGNED": "aligned",
        "X": "writebackifcopy",
        "WRITEBACKIFCOPY": "writebackifcopy",
    }

    def __init__(self, a):
        self._a = a

    def _contiguous(self, dims):
        a = self._a
        if 0 in a.shape:
            return True
        expect = a.itemsize
        for d in dims:
            if a.shape[d] != 1:
                if a.strides[d] != expect:
                    return False
                expect *= a.shape[d]
        return True

    @property
    def c_contiguous(self):
        return self._contiguous(range(self._a.ndim - 1, -1, -1))

    @property
    def f_contiguous(self):
        return self._contiguous(range(self._a.ndim))

    @property
    def owndata(self):
        return self._a._owndata

    @property
    def writeable(self):
        return self._a._writeable

    @writeable.setter
    def writeable(self, value):
        self._a._writeable = builtins.bool(value)

    aligned = property(lambda self: True)
    writebackifcopy = property(lambda self: False)
    contiguous = c_contiguous
    fortran = f_contiguous

    def _name(self, key):
        name = self._keys.get(key.upper()) if isinstance(key, str) else None
        if name is None:
            raise KeyError(f"ember.ndarray.flags: unknown flag {key!r}")
        return name

    def __getitem__(self, key):
        return getattr(self, self._name(key))

    def __setitem__(self, key, value):
        if self._name(key) != "writeable":
            raise ValueError(f"ember.ndarray.flags: cannot set flag {key!r}")
        self.writeable = value

    def __eq__(self, other):
        if not isinstance(other, flagsobj):
            return NotImplemented
        names = set(self._keys.values())
        return all(getattr(self, k) == getattr(other, k) for k in names)

    __hash__ = None

    def __repr__(self):
        rows = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED")
        return "\n".join(f"  {k} : {self[k]}" for k in rows + ("WRITEBACKIFCOPY",)) + "\n"


def _array(self, dtype=None, copy=None):
    if self.device.type != "cpu":
        raise TypeError(
            f"ember: the array is on {self.device}; NumPy can only see CPU arrays. "
            "Use ember.asnumpy(x) to copy it to the host explicitly."
        )
    a = asnumpy(self)
    if dtype is not None:
        a = a.astype(dtype, copy=False)
    if copy:
        a = a.copy()
    return a


def _host(x, op):
    """x on the host for `op` (repr, str, tolist): an implicit read for ember.debug."""
    return x if x.device.type == "cpu" else _core._debug.to_host(x, op, False)


def _repr(self):
    text = _np.array_repr(asnumpy(_host(self, "repr(x)")))
    # ml_dtypes >= 0.7 makes NumPy print its dtypes as "dtype=dtype(bfloat16)"
    text = text.replace("dtype=dtype(bfloat16)", "dtype=bfloat16")
    if self.device.type != "cpu":
        text = f"{text[:-1]}, device='{self.device}')"
    if self.requires_grad:  # as PyTorch shows them
        fn = self.grad_fn
        text = f"{text[:-1]}, " + (f"grad_fn={fn})" if fn is not None else "requires_grad=True)")
    return text


def _str(self):
    return _np.array_str(asnumpy(_host(self, "str(x)")))


def _iter(self):
    if self.ndim == 0:
        raise TypeError("ember: iteration over a 0-d array")
    return (self[i] for i in range(self.shape[0]))


def _tolist(self):
    a = asnumpy(_host(self, "ember.ndarray.tolist"))
    if self.dtype == _core.bfloat16:
        a = a.astype(_np.float32)
    return a.tolist()


def _array_namespace(self, /, *, api_version=None):
    if api_version not in (None, "2023.12", "2024.12"):
        raise ValueError(f"ember: unsupported Array API version {api_version!r}")
    # the package, complete by the time an array exists to ask
    return sys.modules[__package__]


# ---- pickle and copy: the values travel through the host; the device is kept ---------------


def _rebuild(data, dtype, device, requires_grad):
    """Unpickles an array: `data` is a NumPy array (bfloat16 as its uint16 bits)."""
    if dtype == "bfloat16":
        data = data.view(_bfloat16())
    a = _asarray(data, None, device, True)
    return a.requires_grad_() if requires_grad else a


def _reduce(self):
    # NumPy's pickle of the host copy carries shape and dtype; views come back contiguous.
    a = asnumpy(self.detach())
    if self.dtype == _core.bfloat16:
        a = a.view(_np.uint16)
    return (_rebuild, (_np.array(a, copy=True), self.dtype.name, str(self.device), _grad(self)))


def _grad(x):
    return builtins.bool(x.requires_grad and x.is_leaf)


def _copy(self):
    """``copy.copy``: a new array with the same values (NumPy's and PyTorch's semantics)."""
    return self.copy()


def _deepcopy(self, memo):
    """``copy.deepcopy``: a new array on the same device; a leaf that requires gradients is
    copied as one (as PyTorch does)."""
    if id(self) in memo:
        return memo[id(self)]
    result = self.detach().copy()
    if _grad(self):
        result.requires_grad_()
    memo[id(self)] = result
    return result


def _device_reduce(self):
    return (_core.Device, (str(self),))


ndarray.__reduce__ = _reduce
ndarray.__copy__ = _copy
ndarray.__deepcopy__ = _deepcopy
_core.Device.__reduce__ = _device_reduce
_core.Device.__copy__ = lambda self: self
_core.Device.__deepcopy__ = lambda self, memo: self

ndarray.__array__ = _array
ndarray.flags = property(flagsobj, doc="NumPy's array flags (WRITEABLE can be set).")
ndarray.__cuda_array_interface__ = property(_cuda_array_interface)
ndarray.record_stream = _record_stream
ndarray.__repr__ = _repr
ndarray.__str__ = _str
ndarray.__iter__ = _iter
ndarray.tolist = _tolist
ndarray.__array_namespace__ = _array_namespace
ndarray.__array_priority__ = 100  # NumPy defers mixed operators to ember


def defers_to(obj):
    """Whether ember leaves a mixed operation with `obj` to `obj`'s own type (NEP 13): `obj`
    overrides NumPy's ufuncs (``__array_ufunc__``, or opts out with None) and reaches ember only
    through ``__array__`` (neither ``__dlpack__`` nor ``__cuda_array_interface__``). Dask
    arrays, xarray, pandas and pint objects are such higher-level containers: converting one
    would compute or unwrap it behind the user's back."""
    t = type(obj)
    if issubclass(t, (ndarray, _np.ndarray, _np.generic)) or not hasattr(t, "__array_ufunc__"):
        return False
    return not (hasattr(t, "__dlpack__") or hasattr(t, "__cuda_array_interface__"))


def _operand(obj, /, *, dtype=None, device=None, copy=None):
    """The core's conversion of a non-ember object (src/python/convert.cpp): ``asarray``. An
    operand (``x + obj``, ``ember.add(x, obj)``: the core passes ``device="cpu"``) that is a
    container ember defers to raises TypeError instead, which makes ``x + obj`` return
    NotImplemented, so that `obj`'s reflected operator runs. An argument of a function
    (``ember.sum(obj)``: no device) is converted, as ``ember.asarray(obj)`` would."""
    deferred = getattr(type(obj), "__ember_array__", None)
    if deferred is not None:  # a deferred value of ember.compile: computed now, used as is
        return deferred(obj)
    if device is not None and defers_to(obj):
        t = type(obj)
        raise TypeError(
            f"ember: a {t.__module__}.{t.__qualname__} handles operations with ember arrays "
            "itself (it overrides NumPy's ufuncs); convert it with ember.asarray first"
        )
    return _asarray(obj, dtype, device, copy)


_core._set_asarray_hook(_operand)
