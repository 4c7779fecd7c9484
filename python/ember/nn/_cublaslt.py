"""cuBLASLt matmuls with fused epilogues (bias, ReLU, GELU), loaded with dlopen (ctypes) like
ember's cuDNN: ``y = act(x @ w.T + bias)`` for a row-major (M, K) ``x``, an (N, K) ``w`` and an
(N,) ``bias``, in one library call (what PyTorch's ``addmm`` with an activation does on CUDA).

The library is the one ember's cuBLAS already brought in (``libcublasLt.so.13`` by soname),
else NVIDIA's wheel (cuda-pathfinder or site-packages), else the toolkit's. The matmul
descriptors are plain host objects cached per problem (dtype, M, N, K, epilogue, alignment) with
the algorithm cuBLASLt's heuristic chose; the workspace is an ember array from the device's
pool, and every call is enqueued on ember's current stream. ``run`` returns False (nothing
enqueued) when the library is missing or refuses the problem: the caller composes the same
result from ember's own ops.

Rounding: the epilogue adds the bias and applies the activation to the float32 accumulator and
rounds once to the output dtype; ember's composed path rounds the product first, then the sum
(float16/bfloat16 results can differ in the last place). ReLU is ``max(x, 0)`` in the library:
a NaN pre-activation may come out as 0 there (PyTorch's fused ``addmm`` relu does the same).
GELU is the tanh approximation (``F.gelu(..., approximate="tanh")``).
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

from .. import _core, _linalg

_LIB = None
_ERR = None
_LOCK = threading.RLock()
_HANDLES: dict[int, int] = {}
_UNUSABLE: dict[int, str] = {}  # devices whose handle could not be made (composed from then on)
_PLANS: dict = {}
_WS_BYTES = 32 << 20
CALLS = [0]  # library calls made (tests read it to know the epilogue path ran)

# cublasLt.h / library_types.h enumerations (CUDA 12 and 13)
_R16F, _R16BF, _R32F = 2, 14, 0
_COMPUTE_32F, _COMPUTE_32F_FAST_TF32 = 68, 77
_OP_N, _OP_T = 0, 1
_DESC_TRANSA, _DESC_TRANSB, _DESC_EPILOGUE, _DESC_BIAS_POINTER = 3, 4, 7, 8
_DESC_BIAS_DATA_TYPE = 26
_PREF_MAX_WORKSPACE_BYTES = 1
_PREF_MIN_ALIGN = {"a": 5, "b": 6, "c": 7, "d": 8}
_EPILOGUE = {
    (False, None): 1,  # DEFAULT
    (False, "relu"): 2,  # RELU
    (True, None): 4,  # BIAS
    (True, "relu"): 6,  # RELU_BIAS
    (False, "gelu_tanh"): 32,  # GELU
    (True, "gelu_tanh"): 36,  # GELU_BIAS
}
_DTYPES = {"float16": _R16F, "bfloat16": _R16BF, "float32": _R32F}


class CublasLtError(RuntimeError):
    """A cuBLASLt call failed (the message names the call and the status)."""


class _Heuristic(ctypes.Structure):
    _fields_ = [
        ("algo", ctypes.c_uint64 * 8),
        ("workspaceSize", ctypes.c_size_t),
        ("state", ctypes.c_int),
        ("wavesCount", ctypes.c_float),
        ("reserved", ctypes.c_int * 4),
    ]


def _candidates():
    env = os.environ.get("EMBER_CUBLASLT_LIBRARY")
    if env:
        yield env
    yield "libcublasLt.so.13"  # already loaded with ember's cuBLAS: the same library
    try:
        from .._cuda_paths import find

        p = find("lib", "cublasLt")
        if p:
            yield p
    except Exception:  # no cuda-pathfinder, or it found nothing: the paths below
        pass
    for base in sys.path:
        for sub in ("nvidia/cu13/lib", "nvidia/cublas/lib"):
            p = os.path.join(base, sub, "libcublasLt.so.13")
            if os.path.exists(p):
                yield p
    yield "/usr/local/cuda/lib64/libcublasLt.so.13"
    yield "libcublasLt.so.12"


def _declare(lib):
    c = ctypes
    vp, u64, i64, sz = c.c_void_p, c.c_uint64, c.c_int64, c.c_size_t
    sigs = {
        "cublasLtCreate": [c.POINTER(vp)],
        "cublasLtMatmulDescCreate": [c.POINTER(vp), c.c_int, c.c_int],
        "cublasLtMatmulDescSetAttribute": [vp, c.c_int, vp, sz],
        "cublasLtMatrixLayoutCreate": [c.POINTER(vp), c.c_int, u64, u64, i64],
        "cublasLtMatmulPreferenceCreate": [c.POINTER(vp)],
        "cublasLtMatmulPreferenceSetAttribute": [vp, c.c_int, vp, sz],
        "cublasLtMatmulAlgoGetHeuristic": [
            vp,
            vp,
            vp,
            vp,
            vp,
            vp,
            vp,
            c.c_int,
            c.POINTER(_Heuristic),
            c.POINTER(c.c_int),
        ],
        "cublasLtMatmul": [vp, vp, vp, vp, vp, vp, vp, vp, vp, vp, vp, vp, vp, vp, sz, vp],
    }
    for name, args in sigs.items():
        f = getattr(lib, name)
        f.restype = c.c_int
        f.argtypes = args


def load():
    """The cuBLASLt library (ctypes), or None when none loads (``load_error()`` says why)."""
    global _LIB, _ERR
    if _LIB is not None or _ERR is not None:
        return _LIB
    with _LOCK:
        if _LIB is not None or _ERR is not None:
            return _LIB
        errors = []
        for path in _candidates():
            try:
                lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                _declare(lib)
                _LIB = lib
                return lib
            except (OSError, AttributeError) as e:
                errors.append(f"{path}: {e}")
        _ERR = "; ".join(errors) or "no candidate"
        return None


def load_error():
    """Why the library did not load or start (None when it works or was not tried)."""
    return _ERR or ("; ".join(f"cuda:{d}: {w}" for d, w in _UNUSABLE.items()) or None)


def _check(status, what):
    if status != 0:
        raise CublasLtError(f"ember.nn.functional.linear: {what} failed with status {status}")


def _handle(device_index):
    h = _HANDLES.get(device_index)
    if h is None:
        with _LOCK:
            h = _HANDLES.get(device_index)
            if h is None:
                _core._cuda.Stream.current(device_index)  # makes the device's context current
                p = ctypes.c_void_p()
                st = _LIB.cublasLtCreate(ctypes.byref(p))
                if st != 0:
                    _UNUSABLE[device_index] = f"cublasLtCreate failed with status {st}"
                    _check(st, "cublasLtCreate")
                h = _HANDLES[device_index] = p.value
    return h


def _ptr(x):
    if x.dtype == _core.bfloat16:
        x = x.view(_core.uint16)
    return x.__cuda_array_interface__["data"][0]


def _set(setter, obj, attr, value):
    v = ctypes.c_int32(value) if isinstance(value, int) and attr != _DESC_BIAS_POINTER else value
    _check(setter(obj, attr, ctypes.byref(v), ctypes.sizeof(v)), setter.__name__)


def _layout(dtype, rows, cols, ld):
    p = ctypes.c_void_p()
    _check(_LIB.cublasLtMatrixLayoutCreate(ctypes.byref(p), dtype, rows, cols, ld), "layout")
    return p


def _align(ptr, ld_bytes):
    """The largest power of two up to 256 dividing a matrix's address and row pitch."""
    a = 256
    while a > 1 and (ptr % a or ld_bytes % a):
        a //= 2
    return a


def _plan(dev, dt, m, n, k, ldx, ldw, epi, tf32, aligned):
    """(matmul descriptor, layouts, algorithm, workspace size) of y (m, n) = x (m, k) w.T, or
    None when the heuristic offers no algorithm. Column-major, cuBLASLt computes
    y^T (n, m) = w (n, k) x^T: A is w's storage (k, n) transposed, B is x's storage (k, m)."""
    key = (dev, dt, m, n, k, ldx, ldw, epi, tf32, aligned)
    got = _PLANS.get(key)
    if got is not None or key in _PLANS:
        return got
    compute = _COMPUTE_32F_FAST_TF32 if (dt == _R32F and tf32) else _COMPUTE_32F
    desc = ctypes.c_void_p()
    _check(_LIB.cublasLtMatmulDescCreate(ctypes.byref(desc), compute, _R32F), "descriptor")
    _set(_LIB.cublasLtMatmulDescSetAttribute, desc, _DESC_TRANSA, _OP_T)
    _set(_LIB.cublasLtMatmulDescSetAttribute, desc, _DESC_TRANSB, _OP_N)
    _set(_LIB.cublasLtMatmulDescSetAttribute, desc, _DESC_EPILOGUE, epi)
    if epi & 4:
        _set(_LIB.cublasLtMatmulDescSetAttribute, desc, _DESC_BIAS_DATA_TYPE, dt)
    a = _layout(dt, k, n, ldw)
    b = _layout(dt, k, m, ldx)
    d = _layout(dt, n, m, n)
    pref = ctypes.c_void_p()
    _check(_LIB.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)), "preference")
    ws = ctypes.c_uint64(_WS_BYTES)
    _check(
        _LIB.cublasLtMatmulPreferenceSetAttribute(
            pref, _PREF_MAX_WORKSPACE_BYTES, ctypes.byref(ws), ctypes.sizeof(ws)
        ),
        "preference",
    )
    # what the heuristic may assume of the addresses (its default is 256 bytes): A is w, B is x
    for name, al in zip(("a", "b", "c", "d"), (aligned[1], aligned[0], 256, 256), strict=True):
        v = ctypes.c_uint32(al)
        _check(
            _LIB.cublasLtMatmulPreferenceSetAttribute(
                pref, _PREF_MIN_ALIGN[name], ctypes.byref(v), ctypes.sizeof(v)
            ),
            "preference",
        )
    res = _Heuristic()
    count = ctypes.c_int(0)
    st = _LIB.cublasLtMatmulAlgoGetHeuristic(
        _handle(dev), desc, a, b, d, d, pref, 1, ctypes.byref(res), ctypes.byref(count)
    )
    plan = None
    if st == 0 and count.value > 0 and res.state == 0:
        plan = (desc, a, b, d, res, int(res.workspaceSize))
    with _LOCK:
        if len(_PLANS) > 1024:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan


def eligible(x2, w, bias, act):
    """Whether ``run`` may take the problem: CUDA, float16/bfloat16/float32, x rows and w rows
    contiguous, bias contiguous of the same dtype, an activation the library has."""
    if x2.device.type != "cuda" or w.device != x2.device:
        return False
    dt = x2.dtype.name
    if dt not in _DTYPES or w.dtype != x2.dtype or x2.ndim != 2 or w.ndim != 2:
        return False
    if (False, act) not in _EPILOGUE:
        return False
    if x2.strides[1] != x2.itemsize or w.strides[1] != w.itemsize:
        return False
    if x2.strides[0] < x2.shape[1] * x2.itemsize or w.strides[0] < w.shape[1] * w.itemsize:
        return False  # rows must not overlap (broadcast or odd views compose instead)
    if x2.shape[0] == 0 or x2.shape[1] == 0 or w.shape[0] == 0:
        return False
    if bias is not None and (
        bias.device != x2.device
        or bias.dtype != x2.dtype
        or bias.shape != (w.shape[0],)
        or bias.strides[0] != bias.itemsize
        or _ptr(bias) % 16
    ):
        return False
    return x2.device.index not in _UNUSABLE and load() is not None


def run(x2, w, bias, act):
    """``act(x2 @ w.T + bias)`` as a new (M, N) array by one cuBLASLt call, or None when the
    library refuses (nothing enqueued)."""
    m, k = x2.shape
    n = w.shape[0]
    dev = x2.device.index
    dt = _DTYPES[x2.dtype.name]
    epi = _EPILOGUE[(bias is not None, act)]
    tf32 = dt == _R32F and _linalg.get_matmul_precision() != "highest"
    itm = x2.itemsize
    ldx, ldw = x2.strides[0] // itm, w.strides[0] // itm
    px, pw = _ptr(x2), _ptr(w)
    aligned = (_align(px, ldx * itm), _align(pw, ldw * itm))
    try:
        plan = _plan(dev, dt, m, n, k, ldx, ldw, epi, tf32, aligned)
    except CublasLtError:
        return None
    if plan is None:
        return None
    desc, a, b, d, res, wsize = plan
    out = _core.empty((m, n), dtype=x2.dtype, device=x2.device)
    # the workspace comes from the device's pool, stream-ordered like any temporary
    ws = _core.empty(max(wsize, 1), dtype=_core.uint8, device=x2.device) if wsize else None
    one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
    optr = _ptr(out)
    stream = _core._cuda.Stream.current(dev).handle
    with _LOCK:  # the descriptor's bias pointer is shared by the calls of one plan
        if bias is not None:
            bp = ctypes.c_void_p(_ptr(bias))
            st = _LIB.cublasLtMatmulDescSetAttribute(
                desc, _DESC_BIAS_POINTER, ctypes.byref(bp), ctypes.sizeof(bp)
            )
            if st != 0:
                return None
        st = _LIB.cublasLtMatmul(
            _handle(dev),
            desc,
            ctypes.byref(one),
            pw,
            a,
            px,
            b,
            ctypes.byref(zero),
            optr,
            d,
            optr,
            d,
            ctypes.byref(res),  # its first member is the algorithm
            _ptr(ws) if ws is not None else None,
            wsize,
            stream,
        )
    if st != 0:
        return None
    CALLS[0] += 1
    return out
