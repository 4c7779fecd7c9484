"""ember.fuse: CuPy's cupy.fuse on ember arrays. The decorated function is traced once per
argument signature (dtypes, numbers of dimensions, which arguments are scalars) into an
expression DAG of ember's elementwise ops (with one optional final reduction); the DAG becomes one
kernel whose per-element body calls the scalar functors of ember's eager kernels
(src/ops/scalar.hpp). On the GPU it compiles with NVRTC through RawKernel; on the CPU with the
host C++ compiler of ember.cuda.jit's CPU mode, or, without one, the function runs eagerly."""

from __future__ import annotations

import functools
import os
import re
import sys

import numpy as np

from .. import _core
from . import _codegen, _run, _trace

__all__ = ["fuse", "Fusion"]


def _signature(args):
    """The trace key of a call's arguments, or None when an argument cannot be fused."""
    key = []
    for a in args:
        if isinstance(a, _core.ndarray):
            key.append(("a", a.dtype.name, a.ndim))
        elif type(a) in (bool, int, float, complex):
            key.append(("w", type(a)))
        elif isinstance(a, np.generic) and a.dtype.kind in "biufc":
            key.append(("s", a.dtype.name))
        else:
            return None
    return tuple(key)


class _Trace:
    """One traced signature: the plan, whether the result is a tuple, or why it runs eagerly."""

    __slots__ = ("plan", "tuple_out", "eager", "nouts", "kernels")

    def __init__(self):
        self.plan = None
        self.tuple_out = False
        self.eager = None
        self.nouts = 0


class Fusion:
    """A function fused by ember.fuse: called like the function; elementwise ops on its array
    and scalar arguments run as one kernel (one more for a large reduction's second pass)."""

    def __init__(self, func, kernel_name=None):
        if not callable(func):
            raise TypeError(f"ember.fuse: expected a function, got {type(func).__name__}")
        if kernel_name is not None and not isinstance(kernel_name, str):
            raise TypeError(
                f"ember.fuse: kernel_name must be a str, got {type(kernel_name).__name__}"
            )
        self.func = func
        self.kernel_name = kernel_name
        self._name = kernel_name or getattr(func, "__name__", "fused")
        cname = re.sub(r"\W", "_", self._name)
        self._cname = cname if not cname[:1].isdigit() else "_" + cname
        self._traces = {}
        self._fast = {}
        self.trace_count = 0
        functools.update_wrapper(self, func)

    def __repr__(self):
        return f"<ember.fuse {self._name}>"

    def clear_cache(self):
        """Forgets every traced signature (the compiled kernels stay cached by source)."""
        self._traces.clear()
        self._fast.clear()

    # ---- tracing --------------------------------------------------------------------------------

    def _trace(self, args):
        t = _Trace()
        tr = _trace.Tracer()
        proxies = []
        for i, a in enumerate(args):
            if isinstance(a, _core.ndarray):
                n = _trace.Node("param", True, dtype=a.dtype.name, ndim=a.ndim, index=i)
            else:
                n = _trace.scalar_node("param", a, index=i)
            tr.nodes.append(n)
            proxies.append(_trace.Proxy(n, tr))
        mod = sys.modules["ember"]
        with _trace.patched(mod):
            res = self.func(*proxies)
        self.trace_count += 1
        t.tuple_out = isinstance(res, tuple)
        outs = list(res) if t.tuple_out else [res]
        t.nouts = len(outs)
        nodes = []
        for o in outs:
            if not isinstance(o, _trace.Proxy) or not o._node.array or o._node.kind == "param":
                t.eager = "an output is not computed elementwise from an array argument"
                return t
            nodes.append(o._node)
        reds = [n for n in tr.nodes if n.kind == "reduce"]
        red = None
        if reds:
            red = reds[0]
            if len(reds) > 1 or len(nodes) > 1 or not self._epilogue_only(nodes[0], red):
                t.eager = (
                    "a reduction that is not the function's single, final result (or "
                    "elementwise ops of it and scalars)"
                )
                return t
        t.plan = _codegen.Plan(nodes, len(args), reduce=red)
        return t

    @staticmethod
    def _epilogue_only(out, red):
        """Whether `out` is `red` or elementwise ops of `red` and scalars alone."""
        stack, seen = [out], set()
        while stack:
            n = stack.pop()
            if n is red or n.id in seen or not n.array:
                continue
            seen.add(n.id)
            if n.kind not in ("op", "cast"):
                return False
            stack.extend(n.inputs)
        return True

    def _get_trace(self, key, args):
        t = self._traces.get(key)
        if t is None:
            t = self._traces[key] = self._trace(args)
        return t

    # ---- calling --------------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if kwargs or any(
            isinstance(a, _trace.Proxy) or getattr(type(a), "_ember_compile", False) for a in args
        ):
            # keywords, or inlined into an enclosing trace (or an ember.compile call's graph)
            return self.func(*args, **kwargs)
        key = _signature(args)
        if key is None or not any(k[0] == "a" for k in key):
            return self.func(*args)
        if _core._is_grad_enabled() and any(getattr(a, "requires_grad", False) for a in args):
            return self.func(*args)  # autograd records the eager ops
        # the fast path: a call like an earlier one (same signature, shapes, strides, devices)
        # relaunches that call's kernel with its geometry
        fk = (key, *[(a.shape, a.strides, a.device) for a in args if isinstance(a, _core.ndarray)])
        fast = self._fast.get(fk)
        if fast is not None:
            try:
                return fast(args)
            except _run.Eager:
                return self.func(*args)
        t = self._get_trace(key, args)
        if t.eager is not None:
            return self.func(*args)
        try:
            return self._run(t, args, fk)
        except _run.Eager:
            return self.func(*args)

    def _remember(self, fk, t, again, out_shape, dtypes, dev):
        """Keeps `again` (a kernel relaunch of cuda_map/cuda_reduce) as the fast path of calls
        keyed `fk`; scalars are still evaluated (and checked) per call."""
        if len(self._fast) > 256:
            self._fast.clear()
        plan = t.plan
        idx = [p.index for p in plan.arrays]
        # scalar slots made of constants alone (the function's literals) are fixed: computed once
        needs = any(n.kind == "param" for n in plan.scalar_nodes)
        fixed = () if needs else _run.slot_values(plan, _run.eval_scalars(plan, ()))
        reduce = plan.reduce is not None
        tuple_out = t.tuple_out

        def fast(args):
            scalars = _run.slot_values(plan, _run.eval_scalars(plan, args)) if needs else fixed
            arrays = [args[i] for i in idx]
            if reduce:
                out = _core.empty(out_shape, dtype=dtypes[0], device=dev)
                again(arrays, out, scalars)
                return out
            outs = [_outputs(arrays, out_shape, d, dev) for d in dtypes]
            again(arrays, outs, scalars)
            return tuple(outs) if tuple_out else outs[0]

        self._fast[fk] = fast

    def _run(self, t, args, fk=None):
        plan = t.plan
        arrays = [args[p.index] for p in plan.arrays]
        devs = {str(a.device) for a in arrays}
        if len(devs) != 1:
            raise _run.Eager("arrays on several devices (eager raises)")
        dev = arrays[0].device
        shapes = tuple(tuple(a.shape) for a in arrays)
        shape = shapes[0] if all(x == shapes[0] for x in shapes) else None
        if shape is None:
            try:
                shape = tuple(np.broadcast_shapes(*shapes))
            except ValueError:
                raise _run.Eager("shapes that do not broadcast (eager raises)") from None
        for o in plan.outputs:
            if o.ndim != len(shape):
                raise _run.Eager("outputs of several shapes")
        vals = _run.eval_scalars(plan, args)
        scalars = _run.slot_values(plan, vals)
        for _n, e in plan.pow_checks:
            if e.kind == "param" and e.array and e.dtype[0] == "i":
                x = args[e.index]
                if x.size and bool(_trace.ORIGINALS["any"](x < 0)):
                    raise _run.Eager("a negative integer power (eager raises)")
        cpu = str(dev) == "cpu"
        if cpu and os.environ.get("EMBER_FUSE_CPU", "").lower() == "eager":
            raise _run.Eager("EMBER_FUSE_CPU=eager")
        red = plan.reduce
        if red is not None:
            out, again = self._run_reduce(plan, arrays, shape, scalars, dev, cpu)
            if again is not None and fk is not None and not plan.pow_checks:
                self._remember(fk, t, again, tuple(out.shape), [out.dtype], dev)
            return out
        outs = [_outputs(arrays, shape, o.dtype, dev) for o in plan.outputs]
        if 0 not in shape:
            if cpu:
                again = _run.host_map(plan, arrays, outs, shape, scalars)
            else:
                again = _run.cuda_map(plan, self._cname, arrays, outs, shape, scalars, dev)
            if fk is not None and not plan.pow_checks:
                self._remember(fk, t, again, shape, [o.dtype for o in outs], dev)
        return tuple(outs) if t.tuple_out else outs[0]

    def _run_reduce(self, plan, arrays, shape, scalars, dev, cpu):
        red = plan.reduce
        axes = tuple(a for a in red.axis)
        kept = [d for d in range(len(shape)) if d not in axes]
        out_shape = tuple(1 if d in axes else shape[d] for d in range(len(shape)))
        if not red.keepdims:
            out_shape = tuple(shape[d] for d in kept)
        nout = int(np.prod([shape[d] for d in kept], dtype=np.int64))
        nred = int(np.prod([shape[d] for d in axes], dtype=np.int64))
        if nred == 0 and red.op in ("max", "min") and nout:
            raise _run.Eager("an empty max/min (eager raises)")
        if nred == 0 and red.op == "mean":
            raise _run.Eager("an empty mean (eager warns and gives NaN)")
        out = _core.empty(out_shape, dtype=plan.result.dtype, device=dev)
        again = None
        if nout:
            if cpu:
                again = _run.host_reduce(plan, arrays, out, shape, axes, scalars)
            else:
                again = _run.cuda_reduce(plan, self._cname, arrays, out, shape, axes, scalars, dev)
        return out, again

    # ---- introspection (tests, debugging) --------------------------------------------------------

    def _plan(self, *args):
        key = _signature(args)
        if key is None:
            raise TypeError("ember.fuse: unsupported argument types")
        t = self._get_trace(key, args)
        if t.plan is None:
            raise ValueError(f"ember.fuse: {self._name} runs eagerly: {t.eager}")
        return t.plan

    def _cuda_source(self, *args, nd=0, i32=False):
        """The CUDA source of a call with these arguments (no GPU needed): the elementwise
        kernel over an nd-dimensional strided space (0: contiguous; `i32`: its 32-bit index
        variant), or the reduction's."""
        plan = self._plan(*args)
        if plan.reduce is not None:
            return _codegen.cuda_reduce_source(plan, self._cname, max(nd, 1), max(nd, 1))
        return _codegen.cuda_source(plan, self._cname, nd, i32)

    def _host_source(self, *args):
        return _codegen.host_source(self._plan(*args))


def _outputs(arrays, shape, dtype, dev):
    """An elementwise result: in the first array's memory order when it has the result's shape
    (as eager ember's elementwise ops: a channels_last input gives a channels_last output)."""
    a = arrays[0] if arrays else None
    if a is not None and len(shape) > 1 and tuple(a.shape) == tuple(shape):
        from .._creation import empty_like

        return empty_like(a, dtype=dtype)
    return _core.empty(shape, dtype=dtype, device=dev)


def fuse(*args, **kwargs):
    """Fuses a function of arrays and scalars made of elementwise ops (with one optional final
    reduction) into one kernel, as ``cupy.fuse`` does.

    ``@ember.fuse``, ``@ember.fuse()`` or ``@ember.fuse(kernel_name="name")``. Broadcasting and
    type promotion are eager ember's (NumPy 2 rules, Python scalars weak), and so are the
    results. A non-elementwise ember function inside raises TypeError naming it.
    """
    unknown = set(kwargs) - {"kernel_name"}
    if unknown:
        raise TypeError(f"ember.fuse: unexpected keyword argument {sorted(unknown)[0]!r}")
    kernel_name = kwargs.get("kernel_name")
    if len(args) == 1 and callable(args[0]):
        return Fusion(args[0], kernel_name=kernel_name)
    if args:
        raise TypeError(f"ember.fuse: expected a function, got {args!r}")

    def wrap(f):
        return Fusion(f, kernel_name=kernel_name)

    return wrap
