"""Launching a flushed step's fused kernel. On the CPU a step keeps its launcher: the host
program's entry point, ctypes holders of its scalar parameters (Python scalars written in the
carrier types with eager ember's range checks) and the collapsed geometries it has seen, so a
call costs a few microseconds of Python. The GPU goes through ember.fuse's own launch
functions (_fusion/_run.py: NVRTC through RawKernel)."""

from __future__ import annotations

import ctypes
import math
import os
import threading

import numpy as np

from .. import _core
from .._fusion import _run, _trace
from ..cuda._host import _CTYPES

_data_ptr = _core._kernels.data_ptr
# the carriers of weak scalars: ctypes holders that are refilled in place on each call
_CT = {
    k: _CTYPES[k]
    for k in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
    + ("float64",)
}
_RANGE = {k: (int(np.iinfo(k).min), int(np.iinfo(k).max)) for k in _CT if k[0] in "iu"}
_WORKERS = ctypes.c_int(os.cpu_count() or 1)


class HostLauncher:
    """The host program of one plan, ready to run (see the module's documentation)."""

    def __init__(self, plan):
        self.plan = plan
        self.lib = _run.host_library(plan)  # raises Eager without a host compiler
        self.lock = threading.Lock()
        self.fast = not plan.selectors and not plan.pow_checks
        self.holders = []
        for sl in plan.slots:
            if sl.weak is None or (sl.carrier not in _CT and sl.carrier != "complex128"):
                self.fast = False
                break
            if sl.carrier == "complex128":
                self.holders.append((ctypes.c_double * 2)())
            else:
                self.holders.append(_CT[sl.carrier]())
        if self.fast:
            n = max(len(self.holders), 1)
            self.S = (ctypes.c_void_p * n)(*[ctypes.addressof(h) for h in self.holders])
            # per slot: (argument index, Python type, complex?, integer range or None, holder)
            self.slots = [
                (
                    sl.node.index,
                    sl.weak,
                    sl.carrier == "complex128",
                    _RANGE.get(sl.carrier) if sl.weak is int else None,
                    h,
                )
                for sl, h in zip(plan.slots, self.holders, strict=True)
            ]
        self.aidx = [p.index for p in plan.arrays]
        self.device = None  # the CPU Device of the outputs (set at the first run)
        nops = len(plan.arrays) + (1 if plan.reduce is not None else len(plan.outputs))
        self.P = (ctypes.c_void_p * nops)()
        self.geo = {}

    def _scalars(self, args):
        """Writes the slots' values (raises Eager where eager ember treats one specially)."""
        plan = self.plan
        if not self.fast:
            vals = _run.eval_scalars(plan, args)
            S, keep = _run._ptrs(_run.slot_values(plan, vals))
            return S, keep
        for i, weak, cplx, r, h in self.slots:
            v = args[i]
            if type(v) is not weak:
                raise _run.Eager("a scalar changed type")
            if cplx:
                v = complex(v)
                h[0] = v.real
                h[1] = v.imag
            elif r is not None and not r[0] <= v <= r[1]:
                raise _run.Eager("a Python int beyond the loop type")
            else:
                h.value = v
        return self.S, None

    def map(self, arrays, outs, shape):
        ops = list(arrays) + list(outs)
        key = (shape, tuple([(a.shape, a.strides) for a in ops]))
        geo = self.geo.get(key)
        if geo is None:
            cs, cst = _run.collapse(shape, [_run.elem_strides(a, shape) for a in ops])
            flat = [x for st in cst for x in st]
            geo = (
                _run._ll(cs),
                _run._ll(flat),
                ctypes.c_int(len(cs)),
                ctypes.c_longlong(math.prod(cs)),
            )
            if len(self.geo) > 256:
                self.geo.clear()
            self.geo[key] = geo
        return geo

    def run_map(self, args, arrays, outs, shape):
        with self.lock:
            S, keep = self._scalars(args)
            geo = self.map(arrays, outs, shape)
            P = self.P
            for i, a in enumerate(arrays):
                P[i] = _data_ptr(a)
            k = len(arrays)
            for i, a in enumerate(outs):
                P[k + i] = _data_ptr(a)
            self.lib.fz_map(P, S, *geo, _WORKERS)
            del keep

    def run_reduce(self, args, arrays, out, shape, axes):
        with self.lock:
            S, keep = self._scalars(args)
            key = (shape, axes, tuple([(a.shape, a.strides) for a in arrays]))
            geo = self.geo.get(key)
            if geo is None:
                ks, kst, rs, rst = _run.reduce_geometry(arrays, shape, axes)
                nout = math.prod(shape[d] for d in range(len(shape)) if d not in axes)
                nred = math.prod(shape[d] for d in axes)
                geo = (
                    _run._ll(ks),
                    ctypes.c_int(len(ks)),
                    _run._ll([x for s in kst for x in s]),
                    _run._ll(rs),
                    ctypes.c_int(len(rs)),
                    _run._ll([x for s in rst for x in s]),
                    ctypes.c_longlong(nout),
                    ctypes.c_longlong(nred),
                    ctypes.c_double(nred),
                )
                if len(self.geo) > 256:
                    self.geo.clear()
                self.geo[key] = geo
            P = self.P
            for i, a in enumerate(arrays):
                P[i] = _data_ptr(a)
            P[len(arrays)] = _data_ptr(out)
            self.lib.fz_reduce(P, S, *geo, _WORKERS)
            del keep


_env = getattr(os.environ, "_data", None)


def _cpu_eager():
    """EMBER_FUSE_CPU=eager (ember.fuse's switch), read at each launch."""
    if _env is not None:
        v = _env.get(b"EMBER_FUSE_CPU")
        return v is not None and v.lower() == b"eager"
    return os.environ.get("EMBER_FUSE_CPU", "").lower() == "eager"


def launch(st, args, order):
    """The outputs of a fused step (raises Eager where the call must run eagerly)."""
    plan = st.plan
    hl = st.host
    if hl is not None:  # a CPU step, run before
        arrays = [args[i] for i in hl.aidx]
        dev = hl.device
        cpu = True
        if _cpu_eager():
            raise _run.Eager("EMBER_FUSE_CPU=eager")
    elif (dev := args[plan.arrays[0].index].device).type == "cpu":
        arrays = [args[p.index] for p in plan.arrays]
        cpu = True
        if _cpu_eager():
            raise _run.Eager("EMBER_FUSE_CPU=eager")
        hl = HostLauncher(plan)
        hl.device = dev
        st.host = hl
    else:
        arrays = [args[p.index] for p in plan.arrays]
        cpu = False
        for a in arrays[1:]:
            if a.device != dev:
                raise _run.Eager("arrays on several devices (eager raises)")
        scalars = _run.slot_values(plan, _run.eval_scalars(plan, args))
    if plan.pow_checks:
        for _n, e in plan.pow_checks:
            if e.kind == "param" and e.array and e.dtype[0] == "i":
                x = args[e.index]
                if x.size and bool(_trace.ORIGINALS["any"](x < 0)):
                    raise _run.Eager("a negative integer power (eager raises)")
    shape = arrays[0].shape
    for a in arrays[1:]:
        if a.shape != shape:
            from ._graph import broadcast

            shape = broadcast([x.shape for x in arrays])
            break
    name = "ember_compiled"
    if plan.reduce is not None:
        red = plan.reduce
        axes = red.axis
        nout = nred = 1
        for d in range(len(shape)):
            if d in axes:
                nred *= shape[d]
            else:
                nout *= shape[d]
        if nred == 0 and red.op in ("max", "min") and nout:
            raise _run.Eager("an empty max/min (eager raises)")
        if nred == 0 and red.op == "mean":
            raise _run.Eager("an empty mean (eager warns and gives NaN)")
        out = _core.empty(order[st.outs[0]].shape, dtype=_dtype(plan.result.dtype), device=dev)
        if nout:
            if cpu:
                hl.run_reduce(args, arrays, out, shape, axes)
            else:
                gkey = (dev, *[(a.shape, a.strides) for a in arrays])
                again = _relaunch(plan).get(gkey)
                if again is not None:
                    again(arrays, out, scalars)
                else:
                    again = _run.cuda_reduce(plan, name, arrays, out, shape, axes, scalars, dev)
                    _relaunch(plan)[gkey] = again
        return [out]
    for o, i in zip(plan.outputs, st.outs, strict=True):
        if o.ndim != len(shape) or order[i].shape != shape:
            raise _run.Eager("outputs of several shapes")
    outs = [_core.empty(shape, dtype=_dtype(o.dtype), device=dev) for o in plan.outputs]
    if 0 not in shape:
        if cpu:
            hl.run_map(args, arrays, outs, shape)
        else:
            gkey = (dev, *[(a.shape, a.strides) for a in arrays])
            again = _relaunch(plan).get(gkey)
            if again is not None:
                again(arrays, outs, scalars)
            else:
                _relaunch(plan)[gkey] = _run.cuda_map(plan, name, arrays, outs, shape, scalars, dev)
    return outs


def _relaunch(plan):
    """The plan's GPU relaunches (cuda_map/cuda_reduce's `again`) by device, shapes and strides:
    a repeated step skips the geometry work."""
    d = getattr(plan, "_relaunch", None)
    if d is None or len(d) > 256:
        d = plan._relaunch = {}
    return d


_dtypes = {}


def _dtype(name):
    d = _dtypes.get(name)
    if d is None:
        d = _dtypes[name] = getattr(_core, name)
    return d
