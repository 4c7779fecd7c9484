"""The interpreter of the CPU mode, for machines without a C++ compiler (or with
``EMBER_JIT_CPU=interpret``): the kernel's own Python function runs once per GPU thread on NumPy
views of the arrays, with the ``cuda`` names it uses replaced by per-thread stand-ins. Threads of
a block are Python threads when the kernel uses barriers or warp functions (a block at a time;
the whole grid for grid sync), else a loop. Slow (microseconds per thread) but with the GPU's
semantics for indices, shared memory, barriers and atomics; arithmetic is NumPy's on the
arrays' element types and Python's on Python numbers (no integer wraparound there), as in
Numba's simulator.
"""

from __future__ import annotations

import sys
import threading
import types

import numpy as np

from .. import _core
from . import _intrinsics as I  # noqa: N812

_atomic_lock = threading.Lock()


class _Dim3:
    __slots__ = ("x", "y", "z")

    def __init__(self, x, y, z):
        self.x, self.y, self.z = x, y, z


class _Thread:
    """One simulated GPU thread's view of the launch."""

    __slots__ = ("tid", "bid", "block", "grid", "shared", "barrier", "warp", "lane", "grid_barrier")


_local = threading.local()


def _cur():
    return _local.t


def _flat_tid(t):
    return t.tid.x + t.block.x * (t.tid.y + t.block.y * t.tid.z)


class _Warp:
    """The lanes of one warp exchanging values (shuffles, ballots)."""

    def __init__(self, n):
        self.barrier = threading.Barrier(n)
        self.words = [None] * n


def _exchange(value, pick):
    t = _cur()
    w = t.warp
    if w is None:  # one thread per warp (no barrier mode): its own value
        return value
    w.words[t.lane] = value
    w.barrier.wait()
    src = pick(t.lane, len(w.words))
    got = w.words[src] if 0 <= src < len(w.words) else value
    w.barrier.wait()
    return got


def _ballot(mask, pred):
    t = _cur()
    if t.warp is None:
        return 1 if pred else 0
    w = t.warp
    w.words[t.lane] = bool(pred)
    w.barrier.wait()
    r = 0
    for i, v in enumerate(w.words):
        if v and (mask >> i) & 1:
            r |= 1 << i
    w.barrier.wait()
    return r


def _sync_reduce(pred, fold):
    t = _cur()
    b = t.barrier
    if b is None:
        return fold([bool(pred)])
    b.preds[_flat_tid(t)] = bool(pred)
    b.wait()
    r = fold(b.preds)
    b.wait()
    return r


class _BlockBarrier(threading.Barrier):
    def __init__(self, n):
        super().__init__(n)
        self.preds = [False] * n


def _atomic(op):
    def f(ary, idx, val, *rest):
        with _atomic_lock:
            old = ary[idx]
            if op == "add":
                ary[idx] = old + val
            elif op == "sub":
                ary[idx] = old - val
            elif op in ("max", "nanmax"):
                ary[idx] = val if (old < val or old != old) and (op == "max" or val == val) else old
            elif op in ("min", "nanmin"):
                ary[idx] = val if (old > val or old != old) and (op == "min" or val == val) else old
            elif op == "and_":
                ary[idx] = old & val
            elif op == "or_":
                ary[idx] = old | val
            elif op == "xor":
                ary[idx] = old ^ val
            elif op == "exch":
                ary[idx] = val
            elif op == "inc":
                ary[idx] = 0 if old >= val else old + 1
            elif op == "dec":
                ary[idx] = val if old == 0 or old > val else old - 1
            elif op == "cas":
                if old == val:
                    ary[idx] = rest[0]
            return old

    return f


def _compare_and_swap(ary, old, val):
    return _atomic("cas")(ary, 0, old, val)


_shared_lock = threading.Lock()


def _shared_array(shape, dtype):
    t = _cur()
    if shape == 0 or shape == (0,):
        return t.shared["__dynamic__"].view(np.dtype(_np_dtype(dtype)))
    f = sys._getframe(1)
    key = (f.f_code, f.f_lasti)
    with _shared_lock:  # the block's threads share the first one made at this call site
        a = t.shared.get(key)
        if a is None:
            a = t.shared[key] = np.zeros(shape, _np_dtype(dtype))
    return a


def _np_dtype(d):
    name = getattr(d, "name", None)
    return np.dtype(name if isinstance(name, str) else d)


def _grid(n):
    t = _cur()
    x = t.tid.x + t.bid.x * t.block.x
    if n == 1:
        return x
    y = t.tid.y + t.bid.y * t.block.y
    if n == 2:
        return x, y
    return x, y, t.tid.z + t.bid.z * t.block.z


def _gridsize(n):
    t = _cur()
    s = (t.block.x * t.grid.x, t.block.y * t.grid.y, t.block.z * t.grid.z)
    return s[0] if n == 1 else s[:n]


class _Grid:
    def sync(self):
        _cur().grid_barrier.wait()


def _stand_ins():
    """Intrinsic -> what it is while simulating."""
    sim = {}

    class Dim:
        def __init__(self, attr):
            self.attr = attr

        def __getattr__(self, k):
            return getattr(getattr(_cur(), self.attr), k)

    sim[I.threadIdx] = Dim("tid")
    sim[I.blockIdx] = Dim("bid")
    sim[I.blockDim] = Dim("block")
    sim[I.gridDim] = Dim("grid")
    sim[I.grid] = _grid
    sim[I.gridsize] = _gridsize
    sim[I.syncthreads] = lambda: _sync_reduce(False, lambda p: None)
    sim[I.syncthreads_count] = lambda p: _sync_reduce(p, sum)
    sim[I.syncthreads_and] = lambda p: _sync_reduce(p, lambda v: int(all(v)))
    sim[I.syncthreads_or] = lambda p: _sync_reduce(p, lambda v: int(any(v)))
    sim[I.syncwarp] = lambda mask=0xFFFFFFFF: _exchange(0, lambda lane, n: lane) and None
    for f in (I.threadfence, I.threadfence_block, I.threadfence_system):
        sim[f] = lambda: None
    sim[I.activemask] = lambda: 0xFFFFFFFF
    sim[I.lanemask_lt] = lambda: (1 << _cur().lane) - 1
    sim[I.shfl_sync] = lambda m, v, s: _exchange(v, lambda lane, n: s % 32)
    sim[I.shfl_up_sync] = lambda m, v, d: _exchange(
        v, lambda lane, n: lane - d if lane >= d else -1
    )
    sim[I.shfl_down_sync] = lambda m, v, d: _exchange(v, lambda lane, n: lane + d)
    sim[I.shfl_xor_sync] = lambda m, v, d: _exchange(v, lambda lane, n: lane ^ d)
    sim[I.ballot_sync] = _ballot
    sim[I.all_sync] = lambda m, p: int(_ballot(m, p) == _ballot(m, True))
    sim[I.any_sync] = lambda m, p: int(_ballot(m, p) != 0)
    sim[I.fma] = lambda a, b, c: a * b + c
    shared = types.SimpleNamespace(array=_shared_array)
    local = types.SimpleNamespace(array=lambda shape, dtype: np.zeros(shape, _np_dtype(dtype)))
    const = types.SimpleNamespace(array_like=lambda a: np.array(a))
    atomic = types.SimpleNamespace(
        **{
            k: _atomic(k)
            for k in (
                "add",
                "sub",
                "max",
                "min",
                "nanmax",
                "nanmin",
                "and_",
                "or_",
                "xor",
                "exch",
                "inc",
                "dec",
                "cas",
            )
        },  # fmt: skip
        compare_and_swap=_compare_and_swap,
    )
    cg = types.SimpleNamespace(this_grid=_Grid)
    return sim, dict(shared=shared, local=local, const=const, atomic=atomic, cg=cg)


_SIM, _SPACES = _stand_ins()


class _SimCuda:
    """What a kernel's `cuda` is while simulated: the real module's names, the intrinsics
    replaced."""

    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        if name in _SPACES:
            return _SPACES[name]
        if name == "laneid":
            return _cur().lane
        if name == "warpsize":
            return 32
        v = getattr(self._real, name)
        return _SIM.get(v, v) if isinstance(v, I.Intrinsic) else v


class _Lazy:
    """A device function called from a simulated kernel: simulated on its first call."""

    __slots__ = ("fn", "cache")

    def __init__(self, fn, cache):
        self.fn = fn
        self.cache = cache

    def __call__(self, *args):
        return _simulated(self.fn, self.cache)(*args)


def _simulated(fn, cache):
    """`fn` with its globals' cuda names and device functions replaced."""
    hit = cache.get(fn)
    if hit is not None:
        return hit
    from ._jit import Dispatcher

    real = sys.modules[__name__.rpartition(".")[0]]
    g = dict(fn.__globals__)
    for k, v in list(g.items()):
        if v is real:
            g[k] = _SimCuda(real)
        elif isinstance(v, I.Intrinsic) and v in _SIM:
            g[k] = _SIM[v]
        elif isinstance(v, Dispatcher):
            g[k] = _Lazy(v.py_func, cache)
    if fn.__closure__:
        cells = tuple(
            types.CellType(_Lazy(c.cell_contents.py_func, cache))
            if isinstance(c.cell_contents, Dispatcher) else c
            for c in fn.__closure__
        )  # fmt: skip
    else:
        cells = None
    f = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, cells)
    cache[fn] = f
    return f


def _host_array(x):
    if isinstance(x, _core.ndarray):
        v = x._numpy_view()
        return v
    return x


def run(disp, compiled, classified, grid, block, shared):
    """Runs a kernel by interpreting its Python function."""
    fn = _simulated(disp.py_func, {})
    args = [_host_array(a.value) for a in classified]
    g, b = _Dim3(*grid), _Dim3(*block)
    nthreads = b.x * b.y * b.z
    threaded = bool(compiled.uses & {"barrier", "warp"})
    whole_grid = "grid_sync" in compiled.uses
    errors = []

    def make(bid, tid, shared_mem, barrier, warp, grid_barrier=None):
        t = _Thread()
        t.tid, t.bid, t.block, t.grid = tid, bid, b, g
        t.shared, t.barrier, t.warp = shared_mem, barrier, warp
        t.lane = (tid.x + b.x * (tid.y + b.y * tid.z)) % 32
        if grid_barrier is not None:
            t.grid_barrier = grid_barrier
        return t

    def body(t):
        _local.t = t
        try:
            fn(*args)
        except threading.BrokenBarrierError:
            pass
        except BaseException as e:  # reported after the launch
            errors.append(e)
            for bar in (t.barrier, t.warp.barrier if t.warp else None):
                if bar is not None:
                    bar.abort()

    blocks = [
        _Dim3(x, y, z) for z in range(g.z) for y in range(g.y) for x in range(g.x)
    ]  # fmt: skip
    tids = [
        _Dim3(x, y, z) for z in range(b.z) for y in range(b.y) for x in range(b.x)
    ]  # fmt: skip
    if whole_grid:
        raise_grid = threading.Barrier(len(blocks) * nthreads)
        threads = []
        for bid in blocks:
            mem = {"__dynamic__": np.zeros(shared, np.uint8)}
            bar = _BlockBarrier(nthreads)
            warps = [_Warp(min(32, nthreads - w)) for w in range(0, nthreads, 32)]
            for i, tid in enumerate(tids):
                t = make(bid, tid, mem, bar, warps[i // 32], raise_grid)
                threads.append(threading.Thread(target=body, args=(t,)))
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    else:
        for bid in blocks:
            mem = {"__dynamic__": np.zeros(shared, np.uint8)}
            if threaded:
                bar = _BlockBarrier(nthreads)
                warps = [_Warp(min(32, nthreads - w)) for w in range(0, nthreads, 32)]
                threads = [
                    threading.Thread(target=body, args=(make(bid, tid, mem, bar, warps[i // 32]),))
                    for i, tid in enumerate(tids)
                ]
                for th in threads:
                    th.start()
                for th in threads:
                    th.join()
            else:
                for tid in tids:
                    body(make(bid, tid, mem, None, None))
            if errors:
                break
    _local.t = None
    if errors:
        raise errors[0]
