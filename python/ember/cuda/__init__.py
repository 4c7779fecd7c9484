"""ember.cuda: NVIDIA GPUs — devices, streams, events, memory statistics and the kernel cache.

Every function works on a machine without a GPU: the queries say so (``is_available()`` is
False, ``unavailable_reason()`` says why in one line) and the rest raise a ``ValueError`` naming
the reason.
"""

import contextlib as _contextlib
import sys as _sys
import threading as _threading

from .. import _core
from .._kernels._raw import MemoryPointer
from . import _intrinsics
from ._intrinsics import *  # noqa: F403  (threadIdx, grid, shared, atomic, syncthreads, ...)

_c = _core._cuda

OutOfMemoryError = _core.OutOfMemoryError
CudaError = _core.CudaError

__all__ = [
    *_intrinsics.__all__,
    "CUDAGraph",
    "CudaError",
    "Event",
    "MemoryPointer",
    "OutOfMemoryError",
    "Stream",
    "current_device",
    "current_stream",
    "default_stream",
    "is_current_stream_capturing",
    "device",
    "device_array",
    "device_array_like",
    "device_count",
    "empty_cache",
    "event",
    "get_device_name",
    "get_device_properties",
    "graph",
    "is_available",
    "is_pinned",
    "jit",
    "kernel_cache_dir",
    "library_paths",
    "kernel_cache_stats",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_snapshot",
    "memory_stats",
    "nvtx",
    "pinned_array",
    "pinned_empty",
    "pinned_zeros",
    "precompile",
    "record_memory_history",
    "reset_peak_memory_stats",
    "set_device",
    "set_memory_limit",
    "stream",
    "synchronize",
    "to_device",
    "unavailable_reason",
]


def is_available():
    """True when at least one CUDA device can be used by ember in this process."""
    return _c.is_available()


def device_count():
    """Number of CUDA devices ember can use (0 without a GPU)."""
    return _c.device_count()


def unavailable_reason():
    """Why CUDA devices cannot be used, in one line ("" when they can)."""
    return _c.unavailable_reason()


def _index(device):
    """A device index from None (the current device), an int, 'cuda[:N]' or an ember.Device."""
    if device is None:
        return -1
    if isinstance(device, bool):
        raise TypeError(f"ember.cuda: expected a device index, got {device!r}")
    if isinstance(device, int):
        if device < 0:
            raise ValueError(f"ember.cuda: device index must be >= 0, got {device}")
        return device
    d = _core.Device(device)
    if d.type != "cuda":
        raise ValueError(f"ember.cuda: expected a CUDA device, got {d}")
    return d.index


def current_device():
    """Index of the calling thread's current CUDA device."""
    return _c.current_device()


def set_device(device):
    """Makes `device` the calling thread's current CUDA device."""
    _c.set_device(_index(device))


class device:  # noqa: N801 (torch.cuda.device spelling)
    """Context manager that makes `device` the current CUDA device inside the block."""

    def __init__(self, device):
        self._index = _index(device)
        self._prev = []

    def __enter__(self):
        self._prev.append(_c.current_device())
        _c.set_device(self._index)
        return self

    def __exit__(self, *exc):
        _c.set_device(self._prev.pop())


def get_device_properties(device=None):
    """Properties of a device as a dict: name, major/minor (compute capability), total_memory,
    multi_processor_count, l2_cache_size, and a few more."""
    i = _index(device)
    return _c.get_device_properties(_c.current_device() if i < 0 else i)


def get_device_name(device=None):
    return get_device_properties(device)["name"]


def synchronize(device=None):
    """Waits for all work queued on `device` (the current one when None)."""
    _c.synchronize(_index(device))
    _c.retire_finished_work()  # drops what finished non-blocking copies kept alive


class Stream:
    """A CUDA stream (non-blocking with respect to the default stream). Ops enqueue on the
    calling thread's current stream; make this one current with ``with ember.cuda.stream(s):``."""

    __slots__ = ("_s",)

    def __init__(self, device=None, *, _handle=None):
        self._s = _handle if _handle is not None else _c.Stream.create(_index(device))

    @property
    def device(self):
        return _core.Device("cuda", self._s.device)

    @property
    def handle(self):
        """The CUstream as an int (for interoperation)."""
        return self._s.handle

    @property
    def cuda_stream(self):
        return self._s.handle

    def synchronize(self):
        """Waits for the work queued on this stream."""
        self._s.synchronize()

    def query(self):
        """True when all work queued so far has finished."""
        return self._s.query()

    @_contextlib.contextmanager
    def auto_synchronize(self):
        """Numba's ``with stream.auto_synchronize():``: synchronizes the stream at the end."""
        try:
            yield self
        finally:
            self.synchronize()

    def wait_event(self, event):
        """Makes later work on this stream wait for `event`."""
        self._s.wait_event(event._e)

    def wait_stream(self, other):
        """Makes later work on this stream wait for the work queued so far on `other`."""
        e = Event(enable_timing=False, device=other._s.device)
        e.record(other)
        self.wait_event(e)

    def record_event(self, event=None):
        event = event if event is not None else Event(device=self._s.device)
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and self._s == other._s

    def __hash__(self):
        return hash(self._s)

    def __repr__(self):
        return f"<ember.cuda.Stream device=cuda:{self._s.device} handle={self._s.handle:#x}>"


def current_stream(device=None):
    """The calling thread's current stream on `device`."""
    return Stream(_handle=_c.Stream.current(_index(device)))


def default_stream(device=None):
    """ember's own stream of `device` (current unless another one is made current)."""
    return Stream(_handle=_c.Stream.default(_index(device)))


_NEW = object()


def stream(s=_NEW):
    """``with ember.cuda.stream(s):`` makes `s` the current stream of its device inside the block
    (None: no change), as ``torch.cuda.stream``; ``ember.cuda.stream()`` with no argument returns
    a new :class:`Stream`, as ``numba.cuda.stream()``."""
    if s is _NEW:
        return Stream()
    return _stream_block(s)


@_contextlib.contextmanager
def _stream_block(s):
    """Makes `s` the current stream of its device inside the block (None: no change)."""
    if s is None:
        yield None
        return
    prev = _c.Stream.current(s._s.device)
    _c.set_current_stream(s._s)
    try:
        yield s
    finally:
        _c.set_current_stream(prev)


class Event:
    """A CUDA event: ``record()`` it on a stream, then ``synchronize()``, ``query()`` or measure
    ``start.elapsed_time(end)`` in milliseconds."""

    __slots__ = ("_e",)

    def __init__(self, enable_timing=True, device=None):
        self._e = _c.Event(bool(enable_timing), _index(device))

    def record(self, stream=None):
        """Records the event on `stream` (the current stream when None)."""
        s = stream._s if stream is not None else _c.Stream.current(self._e.device)
        self._e.record(s)

    def synchronize(self):
        self._e.synchronize()

    def query(self):
        return self._e.query()

    def elapsed_time(self, end):
        """Milliseconds from this event to `end` (both recorded, with timing enabled)."""
        return self._e.elapsed_time(end._e)

    @property
    def device(self):
        return _core.Device("cuda", self._e.device)

    def __repr__(self):
        return f"<ember.cuda.Event device=cuda:{self._e.device}>"


_capture = _threading.local()  # .depth: the CUDA graph captures open on this thread


def is_current_stream_capturing():
    """Whether the calling thread is capturing a CUDA graph (``torch.cuda``'s name): its ops are
    being recorded, not run."""
    return getattr(_capture, "depth", 0) > 0


def _capture_guard(check):
    """While this thread captures for ember.compile: `check()` returns host values the captured
    work baked in (an optimizer's hyperparameters); the compiled function compares them before
    each replay and captures again when they changed."""
    guards = getattr(_capture, "guards", None)
    if guards is not None:
        guards.append(check)


class CUDAGraph:
    """A CUDA graph: the ops of a block are captured once and replayed with one launch.

    ::

        with ember.cuda.graph() as g:    # or g = CUDAGraph(); with ember.cuda.graph(g):
            y = model(x)                 # recorded on a capture stream, not run
        x[...] = next_batch              # new data in the captured input
        g.replay()                       # y now holds model(next_batch)

    A replay reruns exactly the captured kernels (ember's own, cuBLAS calls, custom kernels) on
    the same arrays: inputs are read from, and outputs written to, the arrays that existed during
    the capture, so feed new data by writing into the inputs. Arrays created during the capture
    come from the graph's private memory and keep their addresses for the graph's life; arrays
    freed during the capture are kept until the graph goes. Host synchronizations (copying to
    the host, ``synchronize()``, ops whose result size depends on the data such as
    ``nonzero`` or ``x[mask]``) cannot be captured and raise ``CudaError`` naming the
    operation. Random numbers drawn during the capture are the same at every replay.

    A whole training step (forward, ``backward()``, ``optimizer.step()``) can be captured and
    each replay is one step, with an optimizer whose update uses no host-side state that changes
    between steps: plain SGD, SGD with momentum after a first (warm-up) step, and Adam/AdamW with
    ``capturable=True`` (step counts on the device). Other steps raise RuntimeError inside a
    capture, as PyTorch's do. ``ember.compile(fn, mode="reduce-overhead")`` does all of this
    for a function: warm-up, capture, input copies and replay.
    """

    __slots__ = ("_g",)

    def __init__(self):
        self._g = _c.Graph()

    def capture_begin(self, stream=None, device=None):
        """Starts capturing the calling thread's ops on `stream` (a new stream when None)."""
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError(
                f"ember.cuda.CUDAGraph.capture_begin: stream must be an ember.cuda.Stream, "
                f"got {type(stream).__name__}"
            )
        dev = stream._s.device if stream is not None else _index(device)
        self._g.capture_begin(dev, stream._s if stream is not None else None)
        _capture.depth = getattr(_capture, "depth", 0) + 1

    def capture_end(self):
        """Ends the capture and instantiates the graph."""
        try:
            self._g.capture_end()
        finally:
            _capture.depth = max(getattr(_capture, "depth", 1) - 1, 0)

    def capture_abort(self):
        """Ends a capture that failed, discarding what it recorded."""
        try:
            self._g.capture_abort()
        finally:
            _capture.depth = max(getattr(_capture, "depth", 1) - 1, 0)

    def replay(self):
        """Runs the captured work on the current stream."""
        self._g.replay()

    def reset(self):
        """Waits for the replays, then frees the graph and its private memory."""
        self._g.reset()

    @property
    def num_nodes(self):
        """The number of nodes (kernels, copies, memsets) in the captured graph."""
        return self._g.num_nodes

    @property
    def captured(self):
        return self._g.captured

    def __repr__(self):
        state = "capturing" if self._g.capturing else f"{self._g.num_nodes} nodes"
        if not self._g.capturing and not self._g.captured:
            state = "empty"
        return f"<ember.cuda.CUDAGraph {state}>"


@_contextlib.contextmanager
def graph(cuda_graph=None, stream=None, device=None):
    """Captures the ops of the block into `cuda_graph` (a new CUDAGraph when None), which the
    block receives: ``with ember.cuda.graph() as g: ...`` then ``g.replay()``."""
    if cuda_graph is not None and not isinstance(cuda_graph, CUDAGraph):
        raise TypeError(
            f"ember.cuda.graph: expected an ember.cuda.CUDAGraph, got {type(cuda_graph).__name__}"
        )
    g = cuda_graph if cuda_graph is not None else CUDAGraph()
    g.capture_begin(stream=stream, device=device)
    try:
        yield g
    except BaseException:
        g.capture_abort()
        raise
    g.capture_end()


def pinned_empty(shape, dtype=None):
    """An uninitialized CPU array in page-locked (pinned) host memory, which the GPU reads and
    writes directly: ``x.to("cuda", non_blocking=True)`` from it is one asynchronous copy on the
    current stream. The memory is freed when the last array on it dies (never while a
    non-blocking copy still uses it). `dtype` defaults to float64, as for ``ember.empty``.
    Raises ValueError without CUDA."""
    return _c.pinned_empty(shape, dtype)


def pinned_zeros(shape, dtype=None):
    """Like ``pinned_empty``, filled with zeros."""
    x = _c.pinned_empty(shape, dtype)
    x[...] = 0
    return x


def is_pinned(x):
    """True when the CPU array `x` lives in pinned host memory from ember (``pinned_empty`` or a
    non-blocking copy to the CPU)."""
    if not isinstance(x, _core.ndarray):
        raise TypeError(f"ember.cuda.is_pinned: expected an ember array, got {type(x).__name__}")
    return _c.is_pinned(x)


def memory_stats(device=None):
    """The memory pool's statistics for `device`, in bytes and counts, and the number of cuDNN
    execution plans cached (``cudnn_plan_cache``, all devices)."""
    stats = _c.memory_stats(_index(device))
    cudnn = _sys.modules.get("ember.nn._cudnn")
    stats["cudnn_plan_cache"] = cudnn.plan_cache_size() if cudnn is not None else 0
    return stats


def memory_allocated(device=None):
    """Bytes held by live ember arrays on `device`."""
    return memory_stats(device)["allocated_bytes"]


def max_memory_allocated(device=None):
    return memory_stats(device)["peak_allocated_bytes"]


def memory_reserved(device=None):
    """Bytes the pool holds from the driver (live arrays plus cached memory)."""
    return memory_stats(device)["reserved_bytes"]


def max_memory_reserved(device=None):
    return memory_stats(device)["peak_reserved_bytes"]


def reset_peak_memory_stats(device=None):
    _c.reset_peak_memory_stats(_index(device))


def empty_cache(device=None):
    """Returns the pool's cached (unused) memory to the driver."""
    _c.empty_cache(_index(device))


def set_memory_limit(nbytes, device=None):
    """Caps the bytes ember arrays may hold on `device` (None or 0 removes the cap); allocations
    beyond it raise OutOfMemoryError."""
    if nbytes is None:
        nbytes = 0
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        raise ValueError(f"ember.cuda.set_memory_limit: expected a byte count >= 0, got {nbytes!r}")
    _c.set_memory_limit(nbytes, _index(device))


def record_memory_history(enabled=True):
    """While enabled, every device allocation records the Python line that made it, which
    :func:`memory_snapshot` reports (``ember.profiler.profile(profile_memory=True)`` turns it on
    for its block). Costs one stack lookup per allocation that misses ember's block cache."""
    _core._debug.set_watch("memory", bool(enabled))


def memory_snapshot():
    """The live device allocations of every device in use, as dicts: ``device``, ``address``,
    ``size`` (bytes), ``stream`` (handle) and ``where`` (``"file:line in function"`` of the
    Python line that allocated it while :func:`record_memory_history` was on, else "")."""
    return [
        {"device": d, "address": a, "size": n, "stream": s, "where": w}
        for d, a, n, s, w in _core._debug.live_allocations()
    ]


def kernel_cache_stats():
    """Kernel cache counters of this process: memory_hits, disk_hits, compiles, compile_ms,
    disk_rejects, prefetch_hits (layout variants compiled ahead on a background thread),
    shipped_hits (kernels loaded from the machine code the package ships, ember/_shipped),
    launches (ember's own kernels launched) and library_calls (cuBLAS GEMM calls)."""
    return _c.kernel_cache_stats()


def kernel_cache_dir():
    """The on-disk kernel cache directory ("" when it is off: EMBER_DISK_CACHE=0)."""
    return _c.kernel_cache_dir()


def library_paths():
    """Where ember's CUDA libraries came from: a dict of each library loaded so far ("nvrtc",
    "cublas", "cufft", "cusolver") to the path or soname it was loaded from, and "cccl" to the
    include directory NVRTC compiles with ("" when none). NVIDIA's wheels in site-packages are
    searched first (cuda-pathfinder, ``pip install ember[cuda]``), then the system's."""
    d = dict(_c.library_origins())
    d["cccl"] = _c.cccl_include_dir()
    return d


def precompile(arch=None, threads=None, name_filter=""):
    """Compiles the common kernels into the on-disk kernel cache on all cores: every op-table
    map kernel on its natural dtypes, all casts, copies, fills and arange, each in its usual
    layouts. Afterwards first calls load cubins instead of compiling (about 1 ms instead of tens).
    `arch`: e.g. 90 for sm_90 (no GPU needed); None for the current device's. `name_filter`:
    only kernels whose name contains it. Returns counts and the time taken.
    Also ``python -m ember cuda precompile [--arch N]``."""
    if arch is not None and (isinstance(arch, bool) or not isinstance(arch, int) or arch <= 0):
        raise ValueError(f"ember.cuda.precompile: arch must be like 90, got {arch!r}")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)):
        raise ValueError(f"ember.cuda.precompile: threads must be an int, got {threads!r}")
    return _c.precompile(arch or 0, threads or 0, str(name_filter))


def _write_kernel_pack(path, arch, threads=None, name_filter=""):
    """Writes the common kernels compiled for sm_<arch> as one pack file (what the package build
    ships, CMake's EMBER_SHIP_ARCHS; no GPU needed). Returns counts and the time taken."""
    if isinstance(arch, bool) or not isinstance(arch, int) or arch <= 0:
        raise ValueError(
            f"ember.cuda._write_kernel_pack: arch must be a positive int, got {arch!r}"
        )
    return _c.write_kernel_pack(str(path), arch, threads or 0, str(name_filter))


def _main(argv):
    import argparse

    p = argparse.ArgumentParser(prog="python -m ember cuda", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    pc = sub.add_parser("precompile", help="fill the on-disk kernel cache")
    pc.add_argument("--arch", type=int, default=None, help="e.g. 90; default: the GPU's")
    pc.add_argument("--threads", type=int, default=None)
    pc.add_argument("--filter", default="", help="only kernels whose name contains this")
    pk = sub.add_parser("pack", help="write the shipped-kernel pack of an architecture")
    pk.add_argument("--arch", type=int, required=True, help="e.g. 90")
    pk.add_argument("--out", required=True, help="the pack file to write (sm_<arch>.pack)")
    pk.add_argument("--filter", default="", help="only kernels whose name contains this")
    sub.add_parser("info", help="devices and the kernel cache")
    a = p.parse_args(argv)
    if a.cmd == "pack":
        r = _write_kernel_pack(a.out, a.arch, None, a.filter)
        print(f"ember: {r['kernels']} kernels packed into {a.out} in {r['seconds']:.1f} s")
        return 0
    if a.cmd == "precompile":
        r = precompile(a.arch, a.threads, a.filter)
        print(
            f"ember: {r['kernels']} kernels: {r['compiled']} compiled, {r['cached']} already "
            f"cached, in {r['seconds']:.1f} s -> {kernel_cache_dir()}"
        )
    else:
        if not is_available():
            print(f"CUDA not available: {unavailable_reason()}")
        for i in range(device_count()):
            print(f"cuda:{i}: {get_device_properties(i)}")
        print(f"kernel cache: {kernel_cache_dir() or 'off'}")
    return 0


class _NvtxRange:
    """``with ember.cuda.nvtx.range("name"):`` and ``@ember.cuda.nvtx.range("name")``."""

    def __init__(self, msg):
        self._msg = str(msg)

    def __enter__(self):
        _core._debug.nvtx_push(self._msg)
        return self

    def __exit__(self, *exc):
        _core._debug.nvtx_pop()
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapped


def _make_nvtx():
    import sys
    import types

    m = types.ModuleType(
        "ember.cuda.nvtx",
        "NVTX ranges and marks for Nsight Systems (torch.cuda.nvtx's names): range(msg) as a "
        "context manager or decorator, range_push(msg), range_pop(), mark(msg), is_available(). "
        "NVTX is loaded with dlopen (libnvtx3interop, else libnvToolsExt); without it these do "
        "nothing. ember.profiler.emit_nvtx() opens a range per ember op.",
    )

    def range_push(msg):
        """Opens a nested NVTX range named `msg` on this thread."""
        _core._debug.nvtx_push(str(msg))

    def range_pop():
        """Closes the innermost NVTX range of this thread."""
        _core._debug.nvtx_pop()

    def mark(msg):
        """An instantaneous NVTX marker named `msg`."""
        _core._debug.nvtx_mark(str(msg))

    def is_available():
        """Whether an NVTX library loaded (then Nsight Systems sees the ranges)."""
        return _core._debug.nvtx_available()

    m.range = _NvtxRange
    m.range_push = range_push
    m.range_pop = range_pop
    m.mark = mark
    m.is_available = is_available
    m.__all__ = ["is_available", "mark", "range", "range_pop", "range_push"]
    sys.modules["ember.cuda.nvtx"] = m
    return m


nvtx = _make_nvtx()


# ---- Python kernels: Numba's API (ember/cuda/_jit.py) ------------------------------------------


def jit(func_or_sig=None, device=False, **options):
    """Compiles a Python function into a GPU kernel, or a device function with device=True:
    Numba's ``numba.cuda.jit`` (see ``ember.cuda._jit.jit``). Kernels launch as
    ``kernel[griddim, blockdim](args)``; on CPU arrays they run on the host."""
    from ._jit import jit as _jit_impl

    return _jit_impl(func_or_sig, device, **options)


_LAZY = {
    "Dispatcher": ("_jit", "Dispatcher"),
    "NumbaPerformanceWarning": ("_jit", "NumbaPerformanceWarning"),
    "TypingError": ("_frontend", "TypingError"),
    "UnsupportedError": ("_frontend", "UnsupportedError"),
    "HostCompilerError": ("_host", "HostCompilerError"),
    "reduce": ("_ufuncs", "reduce"),
    "random": ("random", None),
    "amp": ("amp", None),
}


def __getattr__(name):
    # The kernel compiler loads on first use: `import ember` stays light.
    hit = _LAZY.get(name)
    if hit is None:
        raise AttributeError(f"module 'ember.cuda' has no attribute {name!r}")
    import importlib

    mod = importlib.import_module(f".{hit[0]}", __name__)
    value = mod if hit[1] is None else getattr(mod, hit[1])
    globals()[name] = value
    return value


def jit_cpu_compiler():
    """The C++ compiler the CPU mode of ``ember.cuda.jit`` uses (``$CXX``, ``c++``, ``g++`` or
    ``clang++``), or None."""
    from . import _host

    return _host.compiler()


def _jit_device():
    return _core.Device("cuda", current_device()) if is_available() else _core.Device("cpu")


def to_device(obj, stream=0, copy=True, to=None):
    """Numba's ``cuda.to_device``: a copy of `obj` (a NumPy array or array-like) as an ember
    array on the current GPU (on the CPU when there is none); `to`: an ember array to copy into."""
    from .._array import asarray

    if to is not None:
        to[...] = asarray(obj, device=to.device)
        return to
    return asarray(obj, device=_jit_device(), copy=True if copy else None)


def device_array(shape, dtype=float, strides=None, order="C", stream=0):
    """Numba's ``cuda.device_array``: an uninitialized ember array on the current GPU (the CPU
    when there is none)."""
    if order not in ("C", "A", "K"):
        raise ValueError("ember.cuda.device_array: only C order is supported")
    if strides is not None:
        raise ValueError("ember.cuda.device_array: strides are not supported (C order)")
    return _core.empty(shape, dtype=_np_dtype(dtype), device=_jit_device())


def device_array_like(ary, stream=0):
    """An uninitialized ember array of `ary`'s shape and dtype on the current GPU."""
    return device_array(ary.shape, ary.dtype)


def pinned_array(shape, dtype=float, strides=None, order="C"):
    """Numba's ``cuda.pinned_array``: an ember CPU array in pinned (page-locked) memory (plain
    host memory on a machine without a GPU)."""
    if not is_available():
        return _core.empty(shape, dtype=_np_dtype(dtype), device="cpu")
    return pinned_empty(shape, dtype=_np_dtype(dtype))


def event(timing=True):
    """Numba's ``cuda.event``: a new :class:`Event`."""
    return Event(enable_timing=timing)


def _np_dtype(dtype):
    import numpy as np

    name = getattr(dtype, "name", None)
    return np.dtype(name if isinstance(name, str) else dtype)


def _copy_to_host(self, ary=None, stream=0):
    """Numba's ``copy_to_host``: a NumPy copy of the array, or `ary` (a NumPy array of the same
    shape) filled with it."""
    from .._array import asnumpy

    h = asnumpy(self)
    if ary is None:
        return h.copy() if self.device.type == "cpu" else h
    ary[...] = h
    return ary


_core.ndarray.copy_to_host = _copy_to_host
