"""The NumPy face of ember's dtype objects: ``.dtype`` (the numpy.dtype NumPy reads when handed
an ember dtype: np.dtype(x.dtype), dtype= arguments, and through them pandas, Dask, SciPy),
NumPy's attributes (.type, .char, .str, .byteorder, ...) and pickling/copying.

The functions here are installed on the nanobind class: this module must hold no dtype
instance in its globals (they would outlive nanobind's leak check at exit through the class).
"""

from __future__ import annotations

import numpy as _np

from . import _core

# NumPy converts any object with a ``.dtype`` attribute holding a numpy.dtype. The attributes
# are NumPy's, except .kind, which stays ember's ("f" for bfloat16, where ml_dtypes says "V").

_NUMPY_DTYPES = {}


def _numpy_dtype(self):
    name = self.name
    dt = _NUMPY_DTYPES.get(name)
    if dt is None:
        if name == "bfloat16":
            import ml_dtypes

            dt = _np.dtype(ml_dtypes.bfloat16)
        else:
            dt = _np.dtype(name)
        _NUMPY_DTYPES[name] = dt
    return dt


def _from_numpy(attr, doc):
    return property(lambda self: getattr(_numpy_dtype(self), attr), doc=doc)


_core.dtype.dtype = property(
    _numpy_dtype,
    doc="The numpy.dtype of the same data type (ml_dtypes.bfloat16 for bfloat16): what NumPy "
    "reads when it is handed an ember dtype.",
)
_core.dtype.type = _from_numpy("type", "NumPy's scalar type (numpy.float32, ...).")
_core.dtype.char = _from_numpy("char", "NumPy's one-character code ('f' for float32, ...).")
_core.dtype.str = _from_numpy("str", "NumPy's array-protocol type string ('<f4', ...).")
_core.dtype.byteorder = _from_numpy("byteorder", "'=' (native), or '|' for one-byte types.")
_core.dtype.num = _from_numpy("num", "NumPy's type number.")
_core.dtype.alignment = _from_numpy("alignment", "The alignment in bytes.")
_core.dtype.descr = _from_numpy("descr", "NumPy's __array_interface__ description.")
_core.dtype.isnative = property(lambda self: True, doc="Always True: ember stores native order.")
_core.dtype.isbuiltin = _from_numpy("isbuiltin", "NumPy's isbuiltin.")
_core.dtype.hasobject = property(lambda self: False, doc="Always False.")
_core.dtype.ndim = property(lambda self: 0, doc="0: ember dtypes have no sub-array.")
_core.dtype.shape = property(lambda self: (), doc="(): ember dtypes have no sub-array.")
_core.dtype.subdtype = property(lambda self: None, doc="None: ember dtypes have no sub-array.")
_core.dtype.base = property(lambda self: self, doc="The dtype itself (no sub-array).")
_core.dtype.names = property(lambda self: None, doc="None: ember dtypes have no fields.")
_core.dtype.fields = property(lambda self: None, doc="None: ember dtypes have no fields.")
_core.dtype.metadata = property(lambda self: None, doc="None.")


def _dtype_reduce(self):
    return (_core.dtype, (self.name,))


_core.dtype.__reduce__ = _dtype_reduce
_core.dtype.__copy__ = lambda self: self
_core.dtype.__deepcopy__ = lambda self, memo: self
