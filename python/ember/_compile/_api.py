"""ember.compile: the user-facing objects (a compiled function, a compiled module), their
options and their statistics."""

from __future__ import annotations

import collections
import functools
import types

from .. import _core
from . import _cudagraph, _flush, _graph, _lazy, _leaf, _patch
from ._lazy import Lazy

_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_BACKENDS = (None, "ember", "inductor", "eager")


def _new_stats():
    return {
        "calls": 0,  # calls of the compiled function
        "fused_kernels": 0,  # fused kernels launched (a reduction's second pass not counted)
        "eager_kernels": 0,  # flushed steps that ran eagerly (their reasons: events)
        "graph_breaks": 0,  # flushes forced before the function returned (a host read, ...)
        "compiles": 0,  # new flush graphs planned (the first of each structure)
        "recompiles": 0,  # a known structure planned again (new dtype, ndim, device, shape)
        "cache_hits": 0,  # flush graphs found planned
        "fused_backwards": 0,  # backwards of fused steps run as fused kernels
        "eager_backwards": 0,  # backwards of fused steps recomputed eagerly (reasons: events)
        "cudagraph_captures": 0,  # mode="reduce-overhead": CUDA graphs captured
        "cudagraph_replays": 0,  # calls that were one graph replay
        "cudagraph_skips": 0,  # guard keys refused (reasons: events, kind "cudagraph")
    }


class Compiled:
    """A function compiled by :func:`ember.compile`, called like it (see there)."""

    def __init__(self, fn, dynamic=None, fullgraph=False, mode=None, root=None):
        self._fn = fn
        self._root = fn if root is None else root  # what the code discovery starts from
        self.dynamic = dynamic
        self.fullgraph = bool(fullgraph)
        self.mode = mode
        self._targets = None  # the ember names swapped during calls (found at the first call)
        self.stats = _new_stats()
        #: the latest (kind, reason, ops) diagnostics: kinds "compile", "recompile", "fused",
        #: "eager" (a step that ran eagerly) and "break" (values needed before the return)
        self.events = collections.deque(maxlen=512)
        self._structs = {}  # graph structure -> its last (dtypes, ndims, device, shapes)
        self._graphs = _cudagraph.Graphs(self) if mode == "reduce-overhead" else None
        functools.update_wrapper(self, fn)

    def __repr__(self):
        return f"<ember.compile {getattr(self._fn, '__qualname__', self._fn)!r}>"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return types.MethodType(self, obj)

    def reset_stats(self):
        """Zeroes the statistics and forgets the events (the planned kernels stay cached)."""
        self.stats = _new_stats()
        self.events.clear()

    # ---- a call -----------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if self._targets is None:
            names = set()
            for c in _patch.discover(self._root):
                _patch.code_names(c, names)
            self._targets = _patch.targets(names)
        if _graph.current() is not None:  # inside another compiled call: part of its graph
            _patch.enter(self._targets)
            try:
                return self._fn(*args, **kwargs)
            finally:
                _patch.leave(self._targets)
        self.stats["calls"] += 1
        if self._graphs is not None:
            return self._graphs.call(self._call, args, kwargs)
        return self._call(args, kwargs)

    def _call(self, args, kwargs):
        """A call in the default mode: the function runs with deferred, fused ops."""
        s = _graph.Session(self)
        _patch.enter(self._targets)
        _graph.set_current(s)
        ok = False
        try:
            res = self._fn(*_wrap_all(args, s), **_wrap_kw(kwargs, s))
            _flush.flush(s, None, "the return")
            res = _lazy.unwrap(res)
            ok = True
        finally:
            try:
                if not ok and s.pending:
                    try:
                        _flush.flush(s, None, "an exception")
                    except Exception:
                        s.reset()
            finally:
                _graph.set_current(None)
                _patch.leave(self._targets)
        return res

    # ---- diagnostics (called by the flush) ---------------------------------------------------

    def _eager_point(self, why):
        self.stats["graph_breaks"] += 1
        self.events.append(("break", why, ()))
        if self.fullgraph:
            raise RuntimeError(
                f"ember.compile(fullgraph=True): {why} needs deferred values computed before "
                "the function returns (a graph break); drop fullgraph=True to allow it"
            )

    def _note_event(self, kind, why, ops):
        self.stats["fused_kernels" if kind == "fused" else "eager_kernels"] += 1
        self.events.append((kind, why, tuple(ops)))

    def _note_backward(self, fused, why):
        self.stats["fused_backwards" if fused else "eager_backwards"] += 1
        if not fused:
            self.events.append(("eager_backward", why, ()))

    def _note_hit(self, key):
        self.stats["cache_hits"] += 1

    def _note_compile(self, key, order, leaves, steps, secs):
        struct = tuple((n.kind, n.op, n.extra) for n in order)
        sig = (
            frozenset(a.dtype.name for a in leaves),
            tuple(a.ndim for a in leaves),
            key[0],
            tuple(tuple(a.shape) for a in leaves),
        )
        seen = self._structs.setdefault(struct, [])
        if not seen:
            kind, why = "compile", "a new graph"
            self.stats["compiles"] += 1
        else:
            kind = "recompile"
            if all(p[0] != sig[0] for p in seen):
                why = "new dtype"
            elif all(p[1] != sig[1] for p in seen):
                why = "new ndim"
            elif all(p[2] != sig[2] for p in seen):
                why = "new device"
            elif self.dynamic is False and all(p[3] != sig[3] for p in seen):
                why = "new shape"
            else:
                why = "a new variant of the graph (which values are used afterwards)"
            self.stats["recompiles"] += 1
        if len(seen) < 64:
            seen.append(sig)
        ops = tuple(n.op for n in order)
        self.events.append((kind, why, ops))
        _debug_event(why if kind == "compile" else f"recompile: {why}", ops, key[0], secs)


def _debug_event(why, ops, device, secs):
    """A "compile" event for ember.debug's open ledgers."""
    from .. import debug

    if not debug._ledgers:
        return
    ev = None
    for led in tuple(debug._ledgers):
        if led._accepts("compile"):
            if ev is None:
                ev = debug.Event(
                    "compile",
                    "ember.compile",
                    why,
                    " ".join(str(o) for o in ops),
                    device,
                    0,
                    secs * 1e3,
                    None,
                    False,
                    False,
                )
            led._events.append(ev)


def _wrap_one(a, s):
    if type(a) is _core.ndarray:
        z = _core._wrap_as(_lazy.Leaf, a)
        s.orig[id(z)] = (z, a)  # (z kept alive: its id stays its own)
        return z
    return a


def _wrap_all(args, s):
    return [_wrap_one(a, s) for a in args]


def _wrap_kw(kwargs, s):
    return {k: _wrap_one(v, s) for k, v in kwargs.items()}


class CompiledModule:
    """An ember.nn.Module compiled by :func:`ember.compile`: calling it calls the module (its
    forward, hooks and all) as a compiled function; everything else (parameters, train/eval,
    state_dict, attributes) is the module's own. ``_orig_mod`` is the module."""

    def __init__(self, module, **options):
        object.__setattr__(self, "_orig_mod", module)
        object.__setattr__(self, "_compiled", Compiled(module.__call__, root=module, **options))

    @property
    def stats(self):
        return self._compiled.stats

    @property
    def events(self):
        return self._compiled.events

    def reset_stats(self):
        self._compiled.reset_stats()

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        r = getattr(self._orig_mod, name)
        if name in (
            "train",
            "eval",
            "to",
            "cuda",
            "cpu",
            "float",
            "double",
            "half",
            "requires_grad_",
        ):
            orig = r

            def same(*a, **k):
                out = orig(*a, **k)
                return self if out is self._orig_mod else out

            return same
        return r

    def __setattr__(self, name, v):
        setattr(self._orig_mod, name, v)

    def __delattr__(self, name):
        delattr(self._orig_mod, name)

    def __dir__(self):
        return sorted(set(dir(self._orig_mod)) | {"_orig_mod", "stats", "events", "reset_stats"})

    def __repr__(self):
        return f"CompiledModule({self._orig_mod!r})"


def compile(
    model=None,
    *,
    fullgraph=False,
    dynamic=None,
    backend=None,
    mode=None,
    options=None,
    disable=False,
):
    """Compiles a function or an ``ember.nn.Module`` (``torch.compile``'s API).

    ``ember.compile(fn)``, ``@ember.compile``, ``@ember.compile(dynamic=..., fullgraph=...,
    mode=...)`` or ``ember.compile(model)``. The function runs on every call, so Python control
    flow is always honored; inside it, elementwise ember ops (the op table's rows, Python
    operators, ``where``, ``clip``, ``astype``) and the reductions ``sum prod max min mean any
    all`` on arrays are deferred, and the pending graph runs as fused kernels (ember.fuse's
    generator) when a value is needed: by a non-fusable op (matmul, indexing, reshape: run
    eagerly on the computed values), a host read (``item()``, ``bool()``, ``print``), or the
    return. Results equal eager ember's; intermediates used only inside the graph are never
    stored. Kernels are keyed by the graph, dtypes, numbers of dimensions and device, never
    sizes (``dynamic=False`` adds shapes). Autograd works through compiled code: a fused step
    is one autograd node whose backward is fused too (the derivative rules of its ops; steps
    with max, min, abs, clip, prod, complex dtypes, or a ``create_graph`` backward recompute
    the step eagerly under autograd). ``fullgraph=True`` raises instead of
    computing values before the return. ``.stats`` and ``.events`` tell what was fused, what
    ran eagerly and why, and every (re)compile with its reason. ``mode`` takes torch.compile's
    values; ``"reduce-overhead"`` replays calls as CUDA graphs (one launch a call, after one
    warm-up call and one capture per guard key; see ember/_compile/_cudagraph.py: the function
    must issue the same GPU work each call, optimizers need ``capturable=True`` where PyTorch's
    do, and what cannot be replayed runs in the default mode with its reason in ``.events``).
    ``backend="eager"`` or ``disable=True`` return the function itself.
    """
    if mode not in _MODES:
        raise ValueError(
            f"ember.compile: mode must be one of {[m for m in _MODES if m]} or None, got {mode!r}"
        )
    if backend not in _BACKENDS and not callable(backend):
        raise ValueError(
            f"ember.compile: backend must be 'ember', 'inductor' or 'eager', got {backend!r}"
        )
    if callable(backend) and backend not in _BACKENDS:
        raise ValueError(
            "ember.compile: a callable backend is not supported (ember's code generator is "
            f"the only backend), got {backend!r}"
        )
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"ember.compile: options must be a dict, got {type(options).__name__}")
    if dynamic not in (None, True, False):
        raise TypeError(f"ember.compile: dynamic must be a bool or None, got {dynamic!r}")
    opts = {"dynamic": dynamic, "fullgraph": fullgraph, "mode": mode}

    def build(m):
        from ..nn import Module

        if disable or backend == "eager":
            return m
        if isinstance(m, Module):
            return CompiledModule(m, **opts)
        if isinstance(m, (Compiled, CompiledModule)):
            return m
        if not callable(m):
            raise TypeError(
                f"ember.compile: model must be a function or an ember.nn.Module, got "
                f"{type(m).__name__}"
            )
        return Compiled(m, **opts)

    _graph.load_originals()
    _leaf.install_once()
    if model is None:
        return build
    return build(model)


__all__ = ["compile", "Compiled", "CompiledModule", "Lazy"]
