"""ember: NumPy-compatible arrays on NVIDIA GPUs and the CPU, with a C++ core.

``import ember as np`` covers the array object, creation, elementwise math, reductions and basic
indexing with NumPy 2 semantics (dtype promotion with weak Python scalars included). Arrays live
on a device (``"cpu"`` or ``"cuda"``); ``ember.asnumpy`` and ``np.asarray`` move them to NumPy.
"""

from . import _core
from . import _calls  # first: wraps every nanobind function and method (ember/_calls.py)
from . import _cuda_paths  # installs the finder of CUDA's libraries before any loads
from . import _op_names

from ._array import asarray, asnumpy, from_dlpack
from ._core import (
    AxisError,
    CompileError,
    Device,
    dtype,
    get_default_device,
    ndarray,
    set_default_device,
)
from ._core import (
    broadcast_to,
    empty,
    expand_dims,
    eye,
    full,
    linspace,
    matrix_transpose,
    ones,
    permute_dims,
    reshape,
    squeeze,
    swapaxes,
    transpose,
    var,
    zeros,
    arange,
    astype,
    mean,
    std,
)
from ._core import (
    bfloat16,
    bool,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._core import matmul, take
from ._joining import concat, concatenate, split, stack, unstack

# NumPy's namespace by topic, one module each (its __all__ lists its names).
from . import _creation, _dtype_names, _dtypes, _einsum, _linalg, _manipulation, _protocols
from ._creation import *  # noqa: F403
from ._dtype_names import *  # noqa: F403
from ._dtypes import *  # noqa: F403
from ._einsum import *  # noqa: F403
from ._linalg import *  # noqa: F403
from ._manipulation import *  # noqa: F403
from ._protocols import *  # noqa: F403
from . import _bitwise, _functional, _histograms, _indexing, _io, _logic, _math, _matrices
from ._bitwise import *  # noqa: F403
from ._functional import *  # noqa: F403
from ._histograms import *  # noqa: F403
from ._indexing import *  # noqa: F403
from ._io import *  # noqa: F403
from ._logic import *  # noqa: F403
from ._math import *  # noqa: F403
from ._matrices import *  # noqa: F403
from . import _misc, _polynomial, _scan, _sets, _sorting, _statistics, _window
from ._misc import *  # noqa: F403
from ._polynomial import *  # noqa: F403
from ._scan import *  # noqa: F403
from ._sets import *  # noqa: F403
from ._sorting import *  # noqa: F403
from ._statistics import *  # noqa: F403
from ._window import *  # noqa: F403
from . import cuda, linalg, random
from . import autograd
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from . import fft
from . import debug, profiler
from . import data, datasets, optim
from . import nn
from . import amp
from .amp import autocast
from ._fusion import fuse
from ._compile import compile  # noqa: A004
from ._memory_format import channels_last, channels_last_3d, contiguous_format
from ._memory_format import memory_format, preserve_format
from . import _errstate, _npyio
from ._errstate import *  # noqa: F403
from ._npyio import *  # noqa: F403
from ._kernels import ElementwiseKernel, RawKernel, RawModule, ReductionKernel


def vectorize(signatures=None, target="cpu", **kwargs):
    """Numba's ``@vectorize`` on ember's kernel compiler: an ember ufunc from a scalar Python
    function (``ember.cuda._ufuncs.vectorize``)."""
    from .cuda._ufuncs import vectorize as _v

    return _v(signatures, target, **kwargs)


def guvectorize(signatures, layout, target="cpu", **kwargs):
    """Numba's ``@guvectorize``: a generalized ufunc from a function on core arrays
    (``ember.cuda._ufuncs.guvectorize``)."""
    from .cuda._ufuncs import guvectorize as _g

    return _g(signatures, layout, target, **kwargs)


__version__ = _core.__version__

# The classes of _core that ember exports are ember's, by name and in messages ("ember.ndarray").
for _name, _cls in vars(_core).items():
    if (
        isinstance(_cls, type)
        and globals().get(_name) is _cls
        and _cls.__module__ == _core.__name__
    ):
        _cls.__module__ = __name__
        # Reassigning the name makes the C-level type name the short one: on Python 3.12
        # nanobind's types are named "ember._core.ndarray" there, which CPython's own messages
        # ("unhashable type: ...") would show.
        _cls.__name__ = _cls.__name__
del _name, _cls

# Every elementwise op of the C++ op table, under its Array API name.
_ELEMENTWISE = [name for name, _ in _core.elementwise_ops()]
globals().update({name: getattr(_core, name) for name in _ELEMENTWISE})
# Rows whose Python wrapper adds NumPy's signature and argument rules.
from ._math import clip  # noqa: E402

# Every reduction of the C++ reduction table (sum, prod, max, ..., argmax, argmin); mean, var and
# std, composed from them, are imported above.
_REDUCTIONS = [row[0] for row in _core.reductions()]
globals().update({name: getattr(_core, name) for name in _REDUCTIONS})

# NumPy's spellings of the same functions.
_ALIASES = {numpy: name for name, numpy in _op_names.NUMPY_NAMES.items()}
_ALIASES.update(_op_names.EXTRA_ALIASES)
globals().update(
    {alias: _calls.alias(getattr(_core, name), alias) for alias, name in _ALIASES.items()}
)

# NumPy's round(a, decimals=0, out=None) (the Array API's round(x) is its decimals=0 case).
round = _math.around  # noqa: A001

#: ``with ember.device("cpu"): ...`` and ``ember.device("cuda")`` (like ``torch.device``), also in
#: TensorFlow's spellings (``ember.device("/GPU:0")``): returns an ember.Device (ember/config.py).
from .config import device  # noqa: E402

e = 2.718281828459045
pi = 3.141592653589793
inf = float("inf")
nan = float("nan")
newaxis = None

__array_api_version__ = "2024.12"

__all__ = [
    "autograd",
    "enable_grad",
    "is_grad_enabled",
    "no_grad",
    "set_grad_enabled",
    "data",
    "datasets",
    "optim",
    "fft",
    "linalg",
    "matmul",
    "take",
    "random",
    "AxisError",
    "CompileError",
    "ElementwiseKernel",
    "RawKernel",
    "RawModule",
    "ReductionKernel",
    "Device",
    "arange",
    "asarray",
    "asnumpy",
    "astype",
    "bfloat16",
    "bool",
    "broadcast_to",
    "complex64",
    "complex128",
    "cuda",
    "device",
    "dtype",
    "e",
    "empty",
    "expand_dims",
    "eye",
    "float16",
    "float32",
    "float64",
    "from_dlpack",
    "full",
    "get_default_device",
    "inf",
    "int8",
    "int16",
    "int32",
    "int64",
    "linspace",
    "matrix_transpose",
    "mean",
    "nan",
    "ndarray",
    "newaxis",
    "ones",
    "permute_dims",
    "pi",
    "reshape",
    "concat",
    "concatenate",
    "split",
    "stack",
    "unstack",
    "__array_api_version__",
    *_bitwise.__all__,
    *_creation.__all__,
    *_dtype_names.__all__,
    *_dtypes.__all__,
    *_einsum.__all__,
    *_errstate.__all__,
    *_functional.__all__,
    *_histograms.__all__,
    *_indexing.__all__,
    *_io.__all__,
    *_linalg.__all__,
    *_logic.__all__,
    *_manipulation.__all__,
    *_math.__all__,
    *_matrices.__all__,
    *_misc.__all__,
    *_npyio.__all__,
    *_polynomial.__all__,
    *_protocols.__all__,
    *_scan.__all__,
    *_sets.__all__,
    *_sorting.__all__,
    *_statistics.__all__,
    *_window.__all__,
    "set_default_device",
    "squeeze",
    "std",
    "swapaxes",
    "transpose",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "var",
    "vectorize",
    "guvectorize",
    "zeros",
    *_ELEMENTWISE,
    *_REDUCTIONS,
    *_ALIASES,
]

# PyTorch's spellings on the same array (ember/_torch.py says which API a call means). Last:
# the module exports the dtype names `float` and `int`.
from . import _torch, _torch_methods  # noqa: E402
from ._torch import *  # noqa: E402, F403

__all__ += _torch.__all__
# PyTorch's dtype names (NumPy 2 has no `float`, `int`, `long`, ...)
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16
cfloat = complex64
cdouble = complex128
__all__ += ["float", "double", "half", "long", "int", "short", "cfloat", "cdouble"]
_torch_methods.install(globals())
from . import _torch_more  # noqa: E402

_torch_more.install(globals())
from . import _strided  # noqa: E402

_strided.install()
from . import _torch_extra  # noqa: E402

_torch_extra.install(globals())
from . import _torch_extra2  # noqa: E402

_torch_extra2.install(globals())
from . import _torch_extra3  # noqa: E402

_torch_extra3.install(globals())
as_strided = _strided.as_strided
__all__ += ["as_strided"]
Size = _torch_methods.Size
__all__ += ["Size"]
from . import utils  # noqa: E402

# Subpackages that import on first use (``ember.keras``, ``ember.frame``...), so ``import
# ember`` does not pay for them.
_LAZY_SUBMODULES = (
    "backends", "config", "dask", "distributions", "frame", "func", "jit", "keras", "lib",
    "ml", "ndimage", "special", "testing",
)  # fmt: skip


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'ember' has no attribute {name!r}")


def _register_with_distributed():
    # A process that has dask.distributed loaded (a Dask worker unpickling an ember array's type,
    # say) registers ember's serializers on importing ember: last, once ember is complete.
    import sys

    if "distributed" in sys.modules:
        import importlib

        importlib.import_module(f"{__name__}.dask")


_register_with_distributed()
