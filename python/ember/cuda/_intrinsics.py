"""The names kernels use (Numba's): ``cuda.threadIdx``, ``cuda.grid``, ``cuda.shared.array``,
``cuda.atomic.add``, ``cuda.syncthreads``... Each is a marker the kernel compiler
(``_frontend.py``) recognizes by identity; called from ordinary Python they raise, saying they
work only inside a kernel.
"""

from __future__ import annotations

__all__ = [
    "activemask",
    "all_sync",
    "any_sync",
    "atomic",
    "ballot_sync",
    "blockDim",
    "blockIdx",
    "cg",
    "const",
    "fma",
    "gridDim",
    "grid",
    "gridsize",
    "laneid",
    "local",
    "lanemask_lt",
    "shared",
    "shfl_down_sync",
    "shfl_sync",
    "shfl_up_sync",
    "shfl_xor_sync",
    "syncthreads",
    "syncthreads_and",
    "syncthreads_count",
    "syncthreads_or",
    "syncwarp",
    "threadfence",
    "threadfence_block",
    "threadfence_system",
    "threadIdx",
    "warpsize",
]


class Intrinsic:
    """A function or value that exists only inside kernels."""

    def __init__(self, name, doc=""):
        self.name = name
        self.__doc__ = doc

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"ember.cuda.{self.name} can only be used inside a kernel or device function "
            "compiled with @ember.cuda.jit"
        )

    def __repr__(self):
        return f"<ember.cuda intrinsic {self.name}>"


class Dim3(Intrinsic):
    """threadIdx, blockIdx, blockDim, gridDim: ``.x``, ``.y``, ``.z`` inside a kernel."""

    def __getattr__(self, attr):
        if attr in ("x", "y", "z"):
            raise RuntimeError(
                f"ember.cuda.{self.name}.{attr} can only be used inside a kernel compiled with "
                "@ember.cuda.jit"
            )
        raise AttributeError(attr)


class Namespace:
    """A group of intrinsics (``cuda.atomic``, ``cuda.shared``, ...)."""

    def __init__(self, name, members):
        self._name = name
        for k, doc in members.items():
            setattr(self, k, Intrinsic(f"{name}.{k}", doc))

    def __repr__(self):
        return f"<ember.cuda.{self._name}>"


threadIdx = Dim3("threadIdx", "The thread's index in its block (.x, .y, .z; int32).")
blockIdx = Dim3("blockIdx", "The block's index in the grid (.x, .y, .z; int32).")
blockDim = Dim3("blockDim", "Threads per block (.x, .y, .z; int32).")
gridDim = Dim3("gridDim", "Blocks in the grid (.x, .y, .z; int32).")
laneid = Intrinsic("laneid", "The thread's lane in its warp (int32).")
warpsize = Intrinsic("warpsize", "Threads per warp: 32 (int32).")
grid = Intrinsic("grid", "grid(ndim): the thread's absolute index (an int64, or a tuple).")
gridsize = Intrinsic("gridsize", "gridsize(ndim): the number of threads in the grid.")
syncthreads = Intrinsic("syncthreads", "Waits for every thread of the block.")
syncthreads_count = Intrinsic("syncthreads_count", "syncthreads; the count of true predicates")
syncthreads_and = Intrinsic("syncthreads_and", "syncthreads; whether every predicate is true")
syncthreads_or = Intrinsic("syncthreads_or", "syncthreads; whether any predicate is true")
syncwarp = Intrinsic("syncwarp", "syncwarp(mask=0xffffffff): waits for the warp's threads.")
threadfence = Intrinsic("threadfence", "A memory fence for the device.")
threadfence_block = Intrinsic("threadfence_block", "A memory fence for the block.")
threadfence_system = Intrinsic("threadfence_system", "A memory fence for the system.")
activemask = Intrinsic("activemask", "The mask of the warp's active threads.")
lanemask_lt = Intrinsic("lanemask_lt", "The mask of the lanes below this one.")
shfl_sync = Intrinsic("shfl_sync", "shfl_sync(mask, value, src_lane)")
shfl_up_sync = Intrinsic("shfl_up_sync", "shfl_up_sync(mask, value, delta)")
shfl_down_sync = Intrinsic("shfl_down_sync", "shfl_down_sync(mask, value, delta)")
shfl_xor_sync = Intrinsic("shfl_xor_sync", "shfl_xor_sync(mask, value, lane_mask)")
ballot_sync = Intrinsic("ballot_sync", "ballot_sync(mask, predicate): the lanes where true")
all_sync = Intrinsic("all_sync", "all_sync(mask, predicate)")
any_sync = Intrinsic("any_sync", "any_sync(mask, predicate)")
fma = Intrinsic("fma", "fma(a, b, c): a * b + c rounded once")

shared = Namespace(
    "shared",
    {"array": "shared.array(shape, dtype): memory shared by the block (shape 0: dynamic)."},
)
local = Namespace("local", {"array": "local.array(shape, dtype): the thread's own array."})
const = Namespace("const", {"array_like": "const.array_like(ndarray): a constant copy."})
atomic = Namespace(
    "atomic",
    {
        name: f"atomic.{name}(array, index, value): the old value"
        for name in (
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
            "compare_and_swap",
        )
    },
)
cg = Namespace("cg", {"this_grid": "this_grid(): the grid group (.sync() with cooperative launch)"})
