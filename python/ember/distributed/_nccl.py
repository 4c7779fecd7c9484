"""The GPU backend "nccl": NCCL loaded with ctypes (``libnccl.so.2`` from the nvidia-nccl-cu13
wheel, cuda-pathfinder, ``EMBER_NCCL_LIBRARY`` or the system), one communicator per process
group and device, every call enqueued on ember's current stream of the arrays' device.

NOT RUN YET: this module imports and reports missing NCCL/GPUs cleanly on CPU-only machines,
but its collectives have not been executed on a GPU (see docs/design.md, "distributed").

The unique id travels through the group's rendezvous store. Collectives return without blocking
the host (as PyTorch's NCCL backend): later work on the same stream is ordered after them. A
CUDA event recorded after each one is watched by a thread; one still pending after the group's
timeout aborts the communicator and the next call on the group raises
:class:`DistBackendError` naming the collective and the ranks that did not arrive.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time

from ._work import DistBackendError, ReduceOp, Work

_LIB = None
_ERR = None

# ncclDataType_t and ncclRedOp_t (nccl.h)
_DTYPES = {
    "int8": 0,
    "uint8": 1,
    "bool": 1,
    "int32": 2,
    "uint32": 3,
    "int64": 4,
    "uint64": 5,
    "float16": 6,
    "float32": 7,
    "float64": 8,
    "bfloat16": 9,
}
_OPS = {ReduceOp.SUM: 0, ReduceOp.PRODUCT: 1, ReduceOp.MAX: 2, ReduceOp.MIN: 3, ReduceOp.AVG: 4}
_UNIQUE_ID_BYTES = 128


class _UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * _UNIQUE_ID_BYTES)]


def _candidates():
    env = os.environ.get("EMBER_NCCL_LIBRARY")
    if env:
        yield env
    try:
        from .._cuda_paths import find

        p = find("lib", "nccl")
        if p:
            yield p
    except Exception:
        pass
    for base in sys.path:
        p = os.path.join(base, "nvidia", "nccl", "lib", "libnccl.so.2")
        if os.path.exists(p):
            yield p
    yield "libnccl.so.2"


def _load():
    global _LIB, _ERR
    if _LIB is not None or _ERR is not None:
        return _LIB
    errors = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            break
        except OSError as e:
            errors.append(f"{path}: {e}")
    else:
        _ERR = "; ".join(errors)
        return None
    vp, c = ctypes.c_void_p, ctypes.c_int
    sz = ctypes.c_size_t
    sig = {
        "ncclGetVersion": [ctypes.POINTER(c)],
        "ncclGetUniqueId": [ctypes.POINTER(_UniqueId)],
        "ncclCommInitRank": [ctypes.POINTER(vp), c, _UniqueId, c],
        "ncclCommDestroy": [vp],
        "ncclCommAbort": [vp],
        "ncclCommGetAsyncError": [vp, ctypes.POINTER(c)],
        "ncclAllReduce": [vp, vp, sz, c, c, vp, vp],
        "ncclBroadcast": [vp, vp, sz, c, c, vp, vp],
        "ncclReduce": [vp, vp, sz, c, c, c, vp, vp],
        "ncclAllGather": [vp, vp, sz, c, vp, vp],
        "ncclReduceScatter": [vp, vp, sz, c, c, vp, vp],
        "ncclSend": [vp, sz, c, c, vp, vp],
        "ncclRecv": [vp, sz, c, c, vp, vp],
        "ncclGroupStart": [],
        "ncclGroupEnd": [],
    }
    for name, args in sig.items():
        f = getattr(lib, name)
        f.argtypes = args
        f.restype = c
    lib.ncclGetErrorString.argtypes = [c]
    lib.ncclGetErrorString.restype = ctypes.c_char_p
    _LIB = lib
    return lib


def available():
    return _load() is not None


def version():
    """NCCL's version code (e.g. 22703 for 2.27.3), or None without NCCL."""
    lib = _load()
    if lib is None:
        return None
    v = ctypes.c_int()
    lib.ncclGetVersion(ctypes.byref(v))
    return v.value


def _need(who="init_process_group"):
    lib = _load()
    if lib is None:
        raise RuntimeError(
            f"ember.distributed.{who}: the 'nccl' backend could not load libnccl.so.2 "
            f"({_ERR}); install it with: pip install nvidia-nccl-cu13, or set EMBER_NCCL_LIBRARY"
        )
    from .. import cuda

    if not cuda.is_available():
        raise RuntimeError(
            f"ember.distributed.{who}: the 'nccl' backend needs a CUDA GPU; none is available"
        )
    return lib


def _check(lib, rc, what):
    if rc != 0:
        msg = lib.ncclGetErrorString(rc).decode(errors="replace")
        raise DistBackendError(f"ember.distributed.{what}: NCCL error {rc}: {msg}")


class _Watchdog:
    """Watches the events recorded after NCCL calls; aborts a communicator whose call is still
    pending after the group's timeout. Holds the call's temporaries until it completes."""

    def __init__(self):
        self.items = []
        self.lock = threading.Lock()
        self.thread = None

    def add(self, item):
        with self.lock:
            self.items.append(item)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, daemon=True, name="ember-nccl")
                self.thread.start()

    def _run(self):
        while True:
            time.sleep(0.05)
            with self.lock:
                items = list(self.items)
            done = []
            for it in items:
                be, comm, ev, deadline, name, seq, _keep = it
                if ev.query():
                    done.append(it)
                elif time.monotonic() > deadline and be.error is None:
                    err = be.pg._timeout_error(name, seq, be.pg._timeout_s)
                    be.error = err
                    print(
                        f"[ember.distributed watchdog] {err}; aborting the communicator",
                        file=sys.stderr,
                        flush=True,
                    )
                    be.lib.ncclCommAbort(comm)
                    be.comms = {k: v for k, v in be.comms.items() if v != comm}
                    done.append(it)
            if done:
                with self.lock:
                    self.items = [i for i in self.items if i not in done]


_WATCHDOG = _Watchdog()


class NCCLBackend:
    """NCCL communicators of one process group (one per device the group has used)."""

    def __init__(self, pg):
        self.lib = _need()
        self.pg = pg
        self.comms = {}
        self.error = None
        self._ids = 0

    def close(self):
        for comm in self.comms.values():
            self.lib.ncclCommDestroy(comm)
        self.comms = {}

    def _comm(self, dev, who):
        if self.error is not None:
            raise self.error
        c = self.comms.get(dev)
        if c is not None:
            return c
        from .. import cuda

        prev = cuda.current_device()
        cuda.set_device(dev)  # NCCL binds the communicator to the calling thread's device
        try:
            comm = self._init_comm(who)
        finally:
            cuda.set_device(prev)
        self.comms[dev] = comm
        return comm

    def _init_comm(self, who):
        key = f"nccl/uid/{self._ids}"
        self._ids += 1
        if self.pg.rank() == 0:
            uid = _UniqueId()
            _check(self.lib, self.lib.ncclGetUniqueId(ctypes.byref(uid)), who)
            self.pg.store.set(key, bytes(uid.internal))
        else:
            uid = _UniqueId()
            raw = self.pg.store.get(key)
            ctypes.memmove(ctypes.byref(uid), raw, _UNIQUE_ID_BYTES)
        comm = ctypes.c_void_p()
        rc = self.lib.ncclCommInitRank(ctypes.byref(comm), self.pg.size(), uid, self.pg.rank())
        _check(self.lib, rc, who)
        return comm

    def _stream(self, dev):
        from .. import cuda

        return cuda.current_stream(dev)

    def _launch(self, name, seq, dev, stream, comm, keep, finish=None):
        """Records the completion event, registers it with the watchdog, returns a Work."""
        from .. import cuda

        ev = cuda.Event(enable_timing=False, device=dev)
        ev.record(stream)
        _WATCHDOG.add((self, comm, ev, time.monotonic() + self.pg._timeout_s, name, seq, keep))
        w = Work(self.pg, name, seq, ev.query, finish)
        w._keep = keep
        # As PyTorch's NCCL work: wait() orders the current stream after the call (it already
        # is: the call was enqueued on it) instead of blocking the host; the barrier blocks.
        w._stream_ordered = name != "barrier"
        w._backend = self
        return w

    # -- buffers -----------------------------------------------------------------------------

    @staticmethod
    def _ptr(t):
        if str(t.dtype) == "bfloat16":  # no typestr for bfloat16 in the CUDA array interface
            t = t.view("uint16")
        return t.__cuda_array_interface__["data"][0]

    def _prep(self, t, who, op=None):
        """(array to hand NCCL, NCCL dtype, element count, write-back); the array is `t` when
        contiguous, else a contiguous device copy (ember ops on the same stream)."""
        if t.device.type != "cuda":
            raise RuntimeError(
                f"ember.distributed.{who}: the 'nccl' backend takes GPU arrays, got one on "
                f"{t.device}"
            )
        work = t if t.flags.c_contiguous else t.copy()
        name = str(work.dtype)
        count = work.size
        if name.startswith("complex"):
            if op is not None and op not in (ReduceOp.SUM, ReduceOp.AVG):
                raise TypeError(
                    f"ember.distributed.{who}: ReduceOp.{op.name} is not defined for complex "
                    "arrays under NCCL"
                )
            name, count = ("float32" if name == "complex64" else "float64"), count * 2
        elif name in ("int16", "uint16"):
            if op is not None:
                raise TypeError(
                    f"ember.distributed.{who}: NCCL has no {name} reductions; cast to int32"
                )
            name, count = "uint8", count * 2
        if name == "bool" and op is ReduceOp.AVG:
            raise TypeError(f"ember.distributed.{who}: ReduceOp.AVG is not defined for bool arrays")
        if name == "bool" and op is not None:
            op = ReduceOp.MAX if op in (ReduceOp.SUM, ReduceOp.MAX) else ReduceOp.MIN
        if name not in _DTYPES:
            raise TypeError(f"ember.distributed.{who}: NCCL does not handle dtype {work.dtype}")

        def back():
            if work is not t:
                t[...] = work

        return work, _DTYPES[name], count, back, op

    # -- collectives ---------------------------------------------------------------------------

    def all_reduce(self, seq, t, op):
        work, dt, n, back, op2 = self._prep(t, "all_reduce", op)
        dev = t.device.index
        comm, s = self._comm(dev, "all_reduce"), self._stream(dev)
        p = self._ptr(work)
        _check(
            self.lib, self.lib.ncclAllReduce(p, p, n, dt, _OPS[op2], comm, s.handle), "all_reduce"
        )
        back()
        return self._launch("all_reduce", seq, dev, s, comm, (work,))

    def broadcast(self, seq, t, root):
        work, dt, n, back, _ = self._prep(t, "broadcast")
        dev = t.device.index
        comm, s = self._comm(dev, "broadcast"), self._stream(dev)
        p = self._ptr(work)
        _check(self.lib, self.lib.ncclBroadcast(p, p, n, dt, root, comm, s.handle), "broadcast")
        back()
        return self._launch("broadcast", seq, dev, s, comm, (work,))

    def barrier(self, seq):
        from .. import cuda
        from .._core import zeros

        dev = cuda.current_device()
        one = zeros(1, dtype="float32", device=f"cuda:{dev}")
        comm, s = self._comm(dev, "barrier"), self._stream(dev)
        p = self._ptr(one)
        _check(self.lib, self.lib.ncclAllReduce(p, p, 1, 7, 0, comm, s.handle), "barrier")
        return self._launch("barrier", seq, dev, s, comm, (one,))

    def all_gather_into(self, seq, out, inp, name):
        wi, dt, n, _, _ = self._prep(inp, name)
        wo, _, _, back, _ = self._prep(out, name)
        dev = inp.device.index
        comm, s = self._comm(dev, name), self._stream(dev)
        _check(
            self.lib,
            self.lib.ncclAllGather(self._ptr(wi), self._ptr(wo), n, dt, comm, s.handle),
            name,
        )
        back()
        return self._launch(name, seq, dev, s, comm, (wi, wo))

    def reduce_scatter_into(self, seq, out, inp, op, name):
        wi, dt, _, _, op2 = self._prep(inp, name, op)
        wo, _, n, back, _ = self._prep(out, name, op)
        dev = out.device.index
        comm, s = self._comm(dev, name), self._stream(dev)
        rc = self.lib.ncclReduceScatter(
            self._ptr(wi), self._ptr(wo), n, dt, _OPS[op2], comm, s.handle
        )
        _check(self.lib, rc, name)
        back()
        return self._launch(name, seq, dev, s, comm, (wi, wo))

    def reduce(self, seq, t, root, op):
        work, dt, n, back, op2 = self._prep(t, "reduce", op)
        dev = t.device.index
        comm, s = self._comm(dev, "reduce"), self._stream(dev)
        p = self._ptr(work)
        _check(
            self.lib, self.lib.ncclReduce(p, p, n, dt, _OPS[op2], root, comm, s.handle), "reduce"
        )
        if self.pg.rank() == root:
            back()
        return self._launch("reduce", seq, dev, s, comm, (work,))

    def _grouped(self, name, seq, dev, calls, keep, back=None):
        comm, s = self._comm(dev, name), self._stream(dev)
        _check(self.lib, self.lib.ncclGroupStart(), name)
        try:
            for fn, args in calls:
                _check(self.lib, fn(*args, comm, s.handle), name)
        finally:
            _check(self.lib, self.lib.ncclGroupEnd(), name)
        if back is not None:
            back()
        return self._launch(name, seq, dev, s, comm, keep)

    def gather_into(self, seq, out, inp, root):
        wi, dt, n, _, _ = self._prep(inp, "gather")
        dev = inp.device.index
        L = self.lib
        calls = [(L.ncclSend, (self._ptr(wi), n, dt, root))]
        keep, back = [wi], None
        if out is not None:
            wo, _, _, back, _ = self._prep(out, "gather")
            step = wo.dtype.itemsize * inp.size
            calls += [
                (L.ncclRecv, (self._ptr(wo) + r * step, n, dt, r)) for r in range(self.pg.size())
            ]
            keep.append(wo)
        return self._grouped("gather", seq, dev, calls, keep, back)

    def scatter_from(self, seq, out, inp, root):
        wo, dt, n, back, _ = self._prep(out, "scatter")
        dev = out.device.index
        L = self.lib
        calls, keep = [], [wo]
        if inp is not None:
            wi, _, _, _, _ = self._prep(inp, "scatter")
            step = wi.dtype.itemsize * out.size
            calls += [
                (L.ncclSend, (self._ptr(wi) + r * step, n, dt, r)) for r in range(self.pg.size())
            ]
            keep.append(wi)
        calls.append((L.ncclRecv, (self._ptr(wo), n, dt, root)))
        return self._grouped("scatter", seq, dev, calls, keep, back)

    def all_to_all_flat(self, seq, out, inp, send_counts, recv_counts, name):
        wi, dt, ci, _, _ = self._prep(inp, name)
        wo, _, co, back, _ = self._prep(out, name)
        # NCCL elements per array element (2 for complex and 16-bit integers, else 1)
        scale = ci // wi.size if wi.size else (co // wo.size if wo.size else 1)
        item = wi.dtype.itemsize // scale
        dev = inp.device.index
        L, calls = self.lib, []
        so = ro = 0
        for r in range(self.pg.size()):
            sc, rcv = send_counts[r] * scale, recv_counts[r] * scale
            calls.append((L.ncclSend, (self._ptr(wi) + so * item, sc, dt, r)))
            calls.append((L.ncclRecv, (self._ptr(wo) + ro * item, rcv, dt, r)))
            so += sc
            ro += rcv
        return self._grouped(name, seq, dev, calls, (wi, wo), back)

    def batch_p2p(self, ops):
        """One NCCL group for a list of (is_send, array, group peer); a Work per operation."""
        calls, keep, backs = [], [], []
        dev = ops[0][1].device.index
        for is_send, t, peer in ops:
            work, dt, n, back, _ = self._prep(t, "batch_isend_irecv")
            fn = self.lib.ncclSend if is_send else self.lib.ncclRecv
            calls.append((fn, (self._ptr(work), n, dt, peer)))
            keep.append(work)
            if not is_send:
                backs.append(back)
        w = self._grouped("batch_isend_irecv", -1, dev, calls, tuple(keep))
        for back in backs:
            back()
        return [w] * len(ops)

    def send(self, seq, t, dst, tag):
        work, dt, n, _, _ = self._prep(t, "send")
        dev = t.device.index
        return self._grouped(
            "send", seq, dev, [(self.lib.ncclSend, (self._ptr(work), n, dt, dst))], (work,)
        )

    def recv(self, seq, t, src, tag):
        if src is None:
            raise ValueError("ember.distributed.recv: the 'nccl' backend needs an explicit src")
        work, dt, n, back, _ = self._prep(t, "recv")
        dev = t.device.index
        w = self._grouped(
            "recv", seq, dev, [(self.lib.ncclRecv, (self._ptr(work), n, dt, src))], (work,), back
        )
        pg = self.pg
        w._finish = lambda: pg.ranks[src]
        return w
