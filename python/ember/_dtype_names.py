"""NumPy's other names of the dtypes: the C type names (``ember.double``, ``ember.intp``, ...;
``float_`` and friends left NumPy 2 and are not here either).

Only names: a module whose globals hold dtype objects must define no function that could end up
on a nanobind class (the objects would outlive nanobind's leak check at exit).
"""

from . import _core

__all__ = [
    "bool_",
    "byte",
    "cdouble",
    "csingle",
    "double",
    "half",
    "intc",
    "intp",
    "long",
    "longlong",
    "short",
    "single",
    "ubyte",
    "uintc",
    "uintp",
    "ulong",
    "ulonglong",
    "ushort",
]

bool_ = _core.bool
byte, ubyte = _core.int8, _core.uint8
short, ushort = _core.int16, _core.uint16
intc, uintc = _core.int32, _core.uint32
long, ulong = _core.int64, _core.uint64  # C long: 64-bit on the platforms ember builds for
longlong, ulonglong = _core.int64, _core.uint64
intp, uintp = _core.int64, _core.uint64
half, single, double = _core.float16, _core.float32, _core.float64
csingle, cdouble = _core.complex64, _core.complex128
