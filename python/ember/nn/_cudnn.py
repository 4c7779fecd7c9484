"""GPU convolutions through cuDNN 9's graph (backend) API, loaded with dlopen (ctypes) like
ember's other CUDA libraries: the ``nvidia-cudnn-cu13`` wheel (found by cuda-pathfinder or in
site-packages), ``EMBER_CUDNN_LIBRARY``, or the system's ``libcudnn.so.9``.

One operation graph per convolution (forward, backward data, backward filter), engine configs
ranked by cuDNN's heuristics (mode A; with ``ember.backends.cudnn.benchmark = True`` the first
few that finalize are timed and the fastest kept), execution plans in a bounded LRU cache
(``plan_cache_size()``, reported by ``ember.cuda.memory_stats`` as ``cudnn_plan_cache``), the
workspace an ember array from the device's pool, every call enqueued on ember's current stream.
``ember.backends.cudnn`` switches: ``enabled``, ``benchmark``, ``deterministic`` (no engine with
the non-deterministic note), ``allow_tf32`` (float32 may use TF32 tensor cores, as PyTorch's
default for convolutions).
"""

from __future__ import annotations

import collections
import ctypes
import os
import sys
import threading

from .. import _core
from ..profiler import _active as _profiling

_LIB = None
_ERR = None
_LOCK = threading.RLock()
_HANDLES: dict[int, int] = {}
_PLANS: collections.OrderedDict = collections.OrderedDict()
PLAN_CACHE_LIMIT = 512

# cudnn_graph.h enumerations (cuDNN 9)
_D_CONV, _D_ENGINE, _D_ENGINECFG, _D_HEUR, _D_PLAN = 1, 2, 3, 4, 5
_D_FWD, _D_BWD_FILTER, _D_BWD_DATA, _D_GRAPH, _D_VPACK, _D_TENSOR = 10, 11, 12, 15, 16, 17
_T_HANDLE, _T_DATA_TYPE, _T_BOOL, _T_INT64, _T_FLOAT, _T_DOUBLE, _T_VOID_PTR = 0, 1, 2, 3, 4, 5, 6
_T_CONV_MODE, _T_HEUR_MODE, _T_NOTE, _T_DESC = 7, 8, 11, 15
_DATA = {"float32": 0, "float64": 1, "float16": 2, "bfloat16": 9}
_CROSS_CORRELATION, _HEUR_A = 1, 3
_NOTE_TENSOR_CORE, _NOTE_NONDETERMINISTIC = 0, 4
# attribute names
_CONV_COMP, _CONV_MODE, _CONV_DIL, _CONV_STRIDES, _CONV_POST, _CONV_PRE, _CONV_NDIMS = range(
    100, 107
)
_HEUR_MODE, _HEUR_GRAPH, _HEUR_RESULTS = 200, 201, 202
_CFG_ENGINE = 300
_ENGINE_NOTE = 1303
_PLAN_HANDLE, _PLAN_CFG, _PLAN_WS = 400, 401, 402
_GRAPH_HANDLE, _GRAPH_OPS = 800, 801
_TENSOR_ALIGN, _TENSOR_TYPE, _TENSOR_DIMS, _TENSOR_STRIDES, _TENSOR_UID = 900, 901, 902, 903, 906
_VP_UIDS, _VP_PTRS, _VP_WS = 1000, 1001, 1003
# per operation kind: descriptor type and (alpha, beta, conv, W, X-role, Y-role) attributes
_OPS = {
    "fwd": (_D_FWD, 700, 701, 702, 703, 704, 705),  # X, Y
    "bwd_data": (_D_BWD_DATA, 706, 707, 708, 709, 710, 711),  # DX, DY
    "bwd_filter": (_D_BWD_FILTER, 712, 713, 714, 715, 716, 717),  # DW (in W's slot), X, DY
}


class CudnnError(RuntimeError):
    """A cuDNN call failed (the message names the call and cuDNN's own explanation)."""


def _candidates():
    env = os.environ.get("EMBER_CUDNN_LIBRARY")
    if env:
        yield env
    try:
        from .._cuda_paths import find

        p = find("lib", "cudnn")
        if p:
            yield p
    except Exception:  # no cuda-pathfinder, or it found nothing: the paths below
        pass
    for base in sys.path:
        p = os.path.join(base, "nvidia", "cudnn", "lib", "libcudnn.so.9")
        if os.path.exists(p):
            yield p
    yield "libcudnn.so.9"


def _declare(lib):
    c = ctypes
    vp, i64 = c.c_void_p, c.c_int64
    lib.cudnnGetVersion.restype = c.c_size_t
    lib.cudnnGetVersion.argtypes = []
    lib.cudnnGetErrorString.restype = c.c_char_p
    lib.cudnnGetErrorString.argtypes = [c.c_int]
    lib.cudnnGetLastErrorString.restype = None
    lib.cudnnGetLastErrorString.argtypes = [c.c_char_p, c.c_size_t]
    sigs = {
        "cudnnCreate": [c.POINTER(vp)],
        "cudnnSetStream": [vp, vp],
        "cudnnBackendCreateDescriptor": [c.c_int, c.POINTER(vp)],
        "cudnnBackendDestroyDescriptor": [vp],
        "cudnnBackendFinalize": [vp],
        "cudnnBackendSetAttribute": [vp, c.c_int, c.c_int, i64, vp],
        "cudnnBackendGetAttribute": [vp, c.c_int, c.c_int, i64, c.POINTER(i64), vp],
        "cudnnBackendExecute": [vp, vp, vp],
    }
    for name, args in sigs.items():
        f = getattr(lib, name)
        f.restype = c.c_int
        f.argtypes = args


def load():
    """The cuDNN library (ctypes), or None when none loads (``load_error()`` says why)."""
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
                if lib.cudnnGetVersion() < 90000:
                    errors.append(f"{path}: cuDNN {lib.cudnnGetVersion()} (9 or newer needed)")
                    continue
                _LIB = lib
                return lib
            except (OSError, AttributeError) as e:
                errors.append(f"{path}: {e}")
        _ERR = "; ".join(errors) or "no candidate"
        return None


def load_error():
    return _ERR


def version():
    lib = load()
    return None if lib is None else int(lib.cudnnGetVersion())


def _check(status, call):
    if status == 0:
        return
    lib = _LIB
    name = lib.cudnnGetErrorString(status).decode(errors="replace")
    buf = ctypes.create_string_buffer(1024)
    lib.cudnnGetLastErrorString(buf, len(buf))
    detail = buf.value.decode(errors="replace").strip()
    raise CudnnError(f"cuDNN {call} failed: {name}" + (f" ({detail})" if detail else ""))


class _Desc:
    """One backend descriptor, destroyed with the object."""

    __slots__ = ("ptr",)

    def __init__(self, kind):
        self.ptr = ctypes.c_void_p()
        _check(_LIB.cudnnBackendCreateDescriptor(kind, ctypes.byref(self.ptr)), "create")

    def set(self, attr, atype, values, ctype):
        arr = (ctype * len(values))(*values)
        _check(
            _LIB.cudnnBackendSetAttribute(self.ptr, attr, atype, len(values), arr),
            f"set attribute {attr}",
        )

    def ints(self, attr, values):
        self.set(attr, _T_INT64, values, ctypes.c_int64)

    def enum(self, attr, atype, value):
        self.set(attr, atype, [value], ctypes.c_int)

    def descs(self, attr, descs):
        self.set(attr, _T_DESC, [d.ptr.value for d in descs], ctypes.c_void_p)

    def finalize(self, what):
        _check(_LIB.cudnnBackendFinalize(self.ptr), f"finalize ({what})")

    def __del__(self):
        if self.ptr and _LIB is not None:
            _LIB.cudnnBackendDestroyDescriptor(self.ptr)


def _handle(device_index):
    h = _HANDLES.get(device_index)
    if h is None:
        with _LOCK:
            h = _HANDLES.get(device_index)
            if h is None:
                _core._cuda.Stream.current(device_index)  # makes the device's context current
                p = ctypes.c_void_p()
                _check(_LIB.cudnnCreate(ctypes.byref(p)), "cudnnCreate")
                h = _HANDLES[device_index] = p.value
    return h


_UNUSABLE: dict[int, str] = {}


def ready(device_index):
    """Whether cuDNN works on this device: its handle is made on first use; a library that
    loads but cannot start (a driver older than it needs, say) is reported once with a
    RuntimeWarning, and convolutions go on through ember's own path."""
    if device_index in _HANDLES:
        return True
    if device_index in _UNUSABLE:
        return False
    try:
        _handle(device_index)
        return True
    except CudnnError as e:
        import warnings

        _UNUSABLE[device_index] = str(e)
        warnings.warn(
            f"ember: cuDNN {version()} cannot start on cuda:{device_index} ({e}); convolutions "
            "run through ember's im2col + cuBLAS path",
            RuntimeWarning,
            stacklevel=4,
        )
        return False


def _stream(device_index):
    return _core._cuda.Stream.current(device_index).handle


def _ptr(x):
    """The device address of x's first element."""
    if x.dtype == _core.bfloat16:
        x = x.view(_core.uint16)
    return x.__cuda_array_interface__["data"][0]


def _align(ptr):
    a = 1
    while a < 16 and ptr % (2 * a) == 0:
        a *= 2
    return a


def _tensor(uid, shape, strides, dtype, align):
    t = _Desc(_D_TENSOR)
    t.enum(_TENSOR_TYPE, _T_DATA_TYPE, _DATA[dtype])
    t.ints(_TENSOR_DIMS, shape)
    t.ints(_TENSOR_STRIDES, strides)
    t.ints(_TENSOR_UID, [uid])
    t.ints(_TENSOR_ALIGN, [align])
    t.finalize("tensor")
    return t


def _build(kind, shapes, strides, dtype, geom, aligns, handle, flags):
    """The execution plans (best first) of one convolution: (plan, workspace bytes) pairs."""
    s, d, p_lo, p_hi = geom[:4]  # groups: implied by the channels of x and w
    desc_type, a_alpha, a_beta, a_conv, a_w, a_x, a_y = _OPS[kind]
    xs, ws, ys = shapes
    tx = _tensor(1, xs, strides[0], dtype, aligns[0])
    tw = _tensor(2, ws, strides[1], dtype, aligns[1])
    ty = _tensor(3, ys, strides[2], dtype, aligns[2])
    conv = _Desc(_D_CONV)
    double = dtype == "float64"
    conv.enum(_CONV_COMP, _T_DATA_TYPE, _DATA["float64" if double else "float32"])
    conv.enum(_CONV_MODE, _T_CONV_MODE, _CROSS_CORRELATION)
    conv.ints(_CONV_NDIMS, [len(s)])
    conv.ints(_CONV_DIL, d)
    conv.ints(_CONV_STRIDES, s)
    conv.ints(_CONV_PRE, p_lo)
    conv.ints(_CONV_POST, p_hi)
    conv.finalize("convolution")
    op = _Desc(desc_type)
    op.descs(a_conv, [conv])
    op.descs(a_w, [tw])
    op.descs(a_x, [tx])
    op.descs(a_y, [ty])
    if double:
        op.set(a_alpha, _T_DOUBLE, [1.0], ctypes.c_double)
        op.set(a_beta, _T_DOUBLE, [0.0], ctypes.c_double)
    else:
        op.set(a_alpha, _T_FLOAT, [1.0], ctypes.c_float)
        op.set(a_beta, _T_FLOAT, [0.0], ctypes.c_float)
    op.finalize(kind)
    graph = _Desc(_D_GRAPH)
    graph.set(_GRAPH_HANDLE, _T_HANDLE, [handle], ctypes.c_void_p)
    graph.descs(_GRAPH_OPS, [op])
    graph.finalize("operation graph")
    heur = _Desc(_D_HEUR)
    heur.descs(_HEUR_GRAPH, [graph])
    heur.enum(_HEUR_MODE, _T_HEUR_MODE, _HEUR_A)
    heur.finalize("heuristics")
    count = ctypes.c_int64(0)
    _check(
        _LIB.cudnnBackendGetAttribute(
            heur.ptr, _HEUR_RESULTS, _T_DESC, 0, ctypes.byref(count), None
        ),
        "heuristics count",
    )
    cfgs = [_Desc(_D_ENGINECFG) for _ in range(count.value)]
    arr = (ctypes.c_void_p * max(1, len(cfgs)))(*[c.ptr.value for c in cfgs])
    got = ctypes.c_int64(0)
    _check(
        _LIB.cudnnBackendGetAttribute(
            heur.ptr, _HEUR_RESULTS, _T_DESC, len(cfgs), ctypes.byref(got), arr
        ),
        "heuristics results",
    )
    plans = []
    allow_tf32, deterministic, want = flags
    for cfg in cfgs[: got.value]:
        notes = _notes(cfg)
        if deterministic and _NOTE_NONDETERMINISTIC in notes:
            continue
        if dtype == "float32" and not allow_tf32 and _NOTE_TENSOR_CORE in notes:
            continue
        plan = _Desc(_D_PLAN)
        plan.set(_PLAN_HANDLE, _T_HANDLE, [handle], ctypes.c_void_p)
        plan.descs(_PLAN_CFG, [cfg])
        if _LIB.cudnnBackendFinalize(plan.ptr) != 0:
            continue  # this engine does not support the problem: the next one
        wsz = ctypes.c_int64(0)
        _check(
            _LIB.cudnnBackendGetAttribute(
                plan.ptr, _PLAN_WS, _T_INT64, 1, ctypes.byref(got), ctypes.byref(wsz)
            ),
            "workspace size",
        )
        plans.append((plan, int(wsz.value)))
        if len(plans) >= want:
            break
    return plans


def _notes(cfg):
    engine = _Desc(_D_ENGINE)
    arr = (ctypes.c_void_p * 1)(engine.ptr.value)
    n = ctypes.c_int64(0)
    if _LIB.cudnnBackendGetAttribute(cfg.ptr, _CFG_ENGINE, _T_DESC, 1, ctypes.byref(n), arr):
        return set()
    notes = (ctypes.c_int * 16)()
    if _LIB.cudnnBackendGetAttribute(engine.ptr, _ENGINE_NOTE, _T_NOTE, 16, ctypes.byref(n), notes):
        return set()
    return set(notes[: n.value])


def _execute(plan, wsize, ptrs, device_index, handle):
    ws = _core.empty((max(wsize, 1),), dtype=_core.uint8, device=f"cuda:{device_index}")
    vp = _Desc(_D_VPACK)
    vp.ints(_VP_UIDS, [1, 2, 3])
    vp.set(_VP_PTRS, _T_VOID_PTR, ptrs, ctypes.c_void_p)
    vp.set(_VP_WS, _T_VOID_PTR, [_ptr(ws) if wsize else None], ctypes.c_void_p)
    vp.finalize("variant pack")
    _check(_LIB.cudnnSetStream(handle, _stream(device_index)), "cudnnSetStream")
    _check(_LIB.cudnnBackendExecute(handle, plan.ptr, vp.ptr), "execute")
    return ws  # the caller drops it after the call was enqueued (stream-ordered reuse)


def _time(plans, ptrs, device_index, handle):
    """The fastest of `plans` on these buffers (backends.cudnn.benchmark)."""
    from ..cuda import Event

    best = None
    for plan, wsize in plans:
        try:
            _execute(plan, wsize, ptrs, device_index, handle)
            t0, t1 = Event(enable_timing=True), Event(enable_timing=True)
            t0.record()
            for _ in range(3):
                _execute(plan, wsize, ptrs, device_index, handle)
            t1.record()
            t1.synchronize()
            ms = t0.elapsed_time(t1)
        except CudnnError:
            continue
        if best is None or ms < best[0]:
            best = (ms, plan, wsize)
    return None if best is None else [(best[1], best[2])]


def plan_cache_size():
    return len(_PLANS)


def clear_plan_cache():
    with _LOCK:
        _PLANS.clear()


def _packed_strides(shape, channels_last):
    """Element strides of a packed (N, C, *S) array, C-ordered or channels-last (N, *S, C)."""
    order = (0, *range(2, len(shape)), 1) if channels_last else tuple(range(len(shape)))
    strides = [0] * len(shape)
    step = 1
    for i in reversed(order):
        strides[i] = step
        step *= shape[i]
    return tuple(strides)


def run(kind, x, w, y, geom, channels_last):
    """Enqueues the convolution `kind` over 4-d or 5-d device arrays, (N, C, *S) views packed
    C-ordered or (with `channels_last`) in (N, *S, C) order, all three alike: "fwd" writes y
    from x and w, "bwd_data" writes x (dx) from w and y (dy), "bwd_filter" writes w (dw) from
    x and y (dy). Returns False (nothing enqueued) when no cuDNN engine takes the problem."""
    from ..backends import cudnn as switches

    dev = x.device.index
    handle = _handle(dev)
    dtype = str(x.dtype)
    arrays = (x, w, y)
    ptrs = [_ptr(a) for a in arrays]
    aligns = tuple(_align(p) for p in ptrs)
    shapes = tuple(tuple(a.shape) for a in arrays)
    strides = tuple(_packed_strides(sh, channels_last) for sh in shapes)
    flags = (bool(switches.allow_tf32), bool(switches.deterministic))
    key = (kind, dev, dtype, shapes, strides, aligns, geom, flags, bool(switches.benchmark))
    with _LOCK:
        entry = _PLANS.get(key)
        if entry is not None:
            _PLANS.move_to_end(key)
    if entry is None:
        want = 8 if switches.benchmark else 1
        plans = _build(kind, shapes, strides, dtype, geom, aligns, handle, (*flags, want))
        if plans and switches.benchmark and len(plans) > 1:
            plans = _time(plans, ptrs, dev, handle) or plans[:1]
        entry = plans[0] if plans else None
        with _LOCK:
            _PLANS[key] = entry
            while len(_PLANS) > PLAN_CACHE_LIMIT:
                _PLANS.popitem(last=False)
    if entry is None:
        return False
    if _profiling.locked():  # a profile runs: the call's GPU time is a row of its own
        from ..profiler import record_function

        with record_function(f"cudnn_{kind}_{dtype}", device=dev):
            _execute(entry[0], entry[1], ptrs, dev, handle)
    else:
        _execute(entry[0], entry[1], ptrs, dev, handle)
    return True
