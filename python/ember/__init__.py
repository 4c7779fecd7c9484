"""ember: NumPy-compatible arrays on NVIDIA GPUs and the CPU, with a C++ core.

``import ember as np`` covers the array object, creation, elementwise math, reductions and basic
indexing with NumPy 2 semantics (dtype promotion with weak Python scalars included). Arrays live
on a device (``"cpu"`` or ``"cuda"``); ``ember.asnumpy`` and ``np.asarray`` move them to NumPy.
"""

from . import _core
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
from ._creation import empty_like, full_like, ones_like, zeros_like
from ._dtypes import can_cast, finfo, iinfo, isdtype, result_type
from ._core import matmul, take
from ._einsum import einsum
from ._joining import concat, concatenate, split, stack, unstack
from . import _manipulation, _numpy_extras
from ._manipulation import *  # noqa: F403  (its __all__, listed once there)
from ._numpy_extras import *  # noqa: F403
from . import _numpy_more
from ._numpy_more import *  # noqa: F403
from . import _numpy_host, _numpy_misc, _polynomial, _protocols, _sets
from ._numpy_host import *  # noqa: F403
from ._numpy_misc import *  # noqa: F403
from ._polynomial import *  # noqa: F403
from ._sets import *  # noqa: F403
from ._protocols import __array_namespace_info__, broadcast_shapes
from . import _sorting
from ._sorting import *  # noqa: F403
from . import _scan
from ._scan import *  # noqa: F403
from ._linalg import (
    diagonal,
    dot,
    get_matmul_precision,
    inner,
    kron,
    outer,
    set_matmul_precision,
    tensordot,
    trace,
    vdot,
    vecdot,
)
from . import cuda, linalg, random
from . import autograd
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from . import fft
from . import data, datasets, optim
from . import nn
from ._serialization import load, save
from ._kernels import ElementwiseKernel, RawKernel, RawModule, ReductionKernel

__version__ = _core.__version__

# Every elementwise op of the C++ op table, under its Array API name.
_ELEMENTWISE = [name for name, _ in _core.elementwise_ops()]
globals().update({name: getattr(_core, name) for name in _ELEMENTWISE})

# Every reduction of the C++ reduction table (sum, prod, max, ..., argmax, argmin); mean, var and
# std, composed from them, are imported above.
_REDUCTIONS = [row[0] for row in _core.reductions()]
globals().update({name: getattr(_core, name) for name in _REDUCTIONS})

# NumPy's spellings of the same functions.
_ALIASES = {
    "power": "pow",
    "absolute": "abs",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
    "arctan2": "atan2",
    "invert": "bitwise_invert",
    "bitwise_not": "bitwise_invert",
    "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift",
    "conjugate": "conj",
    "true_divide": "divide",
    "mod": "remainder",
}
globals().update({alias: getattr(_core, name) for alias, name in _ALIASES.items()})

#: ``with ember.device("cpu"): ...`` and ``ember.device("cuda")`` (like ``torch.device``).
device = Device

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
    "load",
    "optim",
    "save",
    "diagonal",
    "dot",
    "get_matmul_precision",
    "inner",
    "kron",
    "fft",
    "linalg",
    "einsum",
    "matmul",
    "take",
    "outer",
    "random",
    "set_matmul_precision",
    "tensordot",
    "trace",
    "vdot",
    "vecdot",
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
    "can_cast",
    "complex64",
    "complex128",
    "cuda",
    "device",
    "dtype",
    "e",
    "empty",
    "empty_like",
    "expand_dims",
    "eye",
    "finfo",
    "float16",
    "float32",
    "float64",
    "from_dlpack",
    "full",
    "full_like",
    "get_default_device",
    "iinfo",
    "inf",
    "int8",
    "int16",
    "int32",
    "int64",
    "isdtype",
    "linspace",
    "matrix_transpose",
    "mean",
    "nan",
    "ndarray",
    "newaxis",
    "ones",
    "ones_like",
    "permute_dims",
    "pi",
    "reshape",
    "result_type",
    "concat",
    "concatenate",
    "split",
    "stack",
    "unstack",
    *_manipulation.__all__,
    *_numpy_extras.__all__,
    *_numpy_more.__all__,
    *_protocols.__all__,
    *_sets.__all__,
    *_numpy_misc.__all__,
    *_polynomial.__all__,
    *_numpy_host.__all__,
    "__array_api_version__",
    *_sorting.__all__,
    *_scan.__all__,
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
    "zeros",
    "zeros_like",
    *_ELEMENTWISE,
    *_REDUCTIONS,
    *_ALIASES,
]
