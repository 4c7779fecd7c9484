"""ember.compile(mode="reduce-overhead"): calls replayed as CUDA graphs.

The first call with a given guard key (the arguments' shapes, dtypes and devices, the other
arguments' values, grad and autocast modes) runs as in the default mode, a warm-up that creates
optimizer state and loads kernels. The second is captured into an ``ember.cuda.CUDAGraph`` on
private copies of the array arguments and then replayed; every later call with that key copies
its array arguments into those copies, checks the guards the captured code left (an optimizer's
hyperparameters), replays the graph with one launch and returns copies of the outputs. The
Python function does not run during a replay, as with ``torch.compile``'s CUDA graphs: it must
issue the same work each call, and arrays it reads from closures or globals are read at the
addresses of the capture (write new data into them, or pass them as arguments).

What cannot be replayed is refused at the capture and that key runs in the default mode from
then on, with the reason in ``.events`` (kind "cudagraph"): a host synchronization (``item()``,
printing, data-dependent shapes), random numbers (a replay would repeat the draw), an optimizer
whose update depends on host state (Adam without ``capturable=True``), arguments or outputs
that require grad, CPU arrays, or no GPU work at all. A guard that changes (an ``lr`` set by a
scheduler) captures again; after a few such changes the key stays in the default mode.
"""

from __future__ import annotations

import numbers

from .. import _core, _creation

_RECAPTURES = 4  # guard changes tolerated per key before it stays in the default mode


def _value_key(v):
    """A hashable key of a non-array argument (its value), or raises TypeError."""
    if v is None or isinstance(v, (bool, numbers.Number, str, bytes)):
        return (type(v), v)
    if isinstance(v, (tuple, list)):
        return (type(v), tuple(_arg_key(x) for x in v))
    if isinstance(v, dict):
        return (dict, tuple((k, _arg_key(x)) for k, x in v.items()))
    return ("id", id(v))  # an object (a module, an optimizer): the same one each call


def _arg_key(a):
    if isinstance(a, _core.ndarray):
        return ("a", tuple(a.shape), a.dtype, str(a.device), a.requires_grad)
    return _value_key(a)


def _flat_arrays(tree, out):
    """The ndarrays in a (nested tuple/list/dict) structure, in order."""
    if isinstance(tree, _core.ndarray):
        out.append(tree)
    elif isinstance(tree, (tuple, list)):
        for x in tree:
            _flat_arrays(x, out)
    elif isinstance(tree, dict):
        for x in tree.values():
            _flat_arrays(x, out)
    return out


def _map_arrays(tree, fn):
    if isinstance(tree, _core.ndarray):
        return fn(tree)
    if isinstance(tree, tuple):
        return tuple(_map_arrays(x, fn) for x in tree)
    if isinstance(tree, list):
        return [_map_arrays(x, fn) for x in tree]
    if isinstance(tree, dict):
        return {k: _map_arrays(x, fn) for k, x in tree.items()}
    return tree


class _Entry:
    __slots__ = ("calls", "graph", "static", "static_kw", "out", "guards", "mutated", "skip",
                 "captures")  # fmt: skip

    def __init__(self):
        self.calls = 0
        self.graph = None
        self.static = self.static_kw = self.out = None
        self.guards = ()  # (check, value at the capture)
        self.mutated = ()  # (argument index or keyword, static copy) written by the function
        self.skip = None  # the reason this key runs in the default mode
        self.captures = 0


class Graphs:
    """The CUDA graphs of one compiled function, by guard key."""

    def __init__(self, compiled):
        self.c = compiled
        self.entries = {}

    def call(self, run, args, kwargs):
        """One call of the compiled function; `run(args, kwargs)` is its default-mode call."""
        try:
            key = self._key(args, kwargs)
        except TypeError:
            return run(args, kwargs)
        e = self.entries.get(key)
        if e is None:
            if len(self.entries) > 64:
                self._drop_all()
            e = self.entries[key] = _Entry()
        if e.skip is not None:
            return run(args, kwargs)
        if e.graph is not None:
            changed = next((c for c, v in e.guards if c() != v), None)
            if changed is None:
                return self._replay(e, args, kwargs)
            self._drop(e)
            if e.captures >= _RECAPTURES:
                return self._refuse(e, run, args, kwargs, "its guards changed at every capture")
            self.c.events.append(("cudagraph", "recapture: an optimizer's hyperparameters changed",
                                  ()))  # fmt: skip
            return self._capture(e, run, args, kwargs)
        e.calls += 1
        if e.calls == 1:
            return run(args, kwargs)  # the warm-up
        return self._capture(e, run, args, kwargs)

    # ---- keys ------------------------------------------------------------------------------

    def _key(self, args, kwargs):
        from .. import amp, autograd

        return (
            tuple(_arg_key(a) for a in args),
            tuple((k, _arg_key(v)) for k, v in kwargs.items()),
            autograd.is_grad_enabled(),
            tuple(amp._stack()),
        )

    # ---- capture ---------------------------------------------------------------------------

    def _refuse(self, e, run, args, kwargs, why):
        e.skip = why
        self.c.stats["cudagraph_skips"] += 1
        self.c.events.append(("cudagraph", f"not replayed as a CUDA graph: {why}", ()))
        return run(args, kwargs)

    def _capture(self, e, run, args, kwargs):
        from .. import cuda

        if not cuda.is_available():
            return self._refuse(e, run, args, kwargs, "no CUDA device")
        arrays = _flat_arrays((list(args), kwargs), [])
        if any(a.device.type != "cuda" for a in arrays):
            return self._refuse(e, run, args, kwargs, "CPU array arguments")
        if any(a.requires_grad for a in arrays):
            return self._refuse(e, run, args, kwargs, "arguments that require grad")
        devs = {a.device.index for a in arrays}
        if len(devs) > 1:
            return self._refuse(e, run, args, kwargs, "arguments on several devices")
        dev = devs.pop() if devs else cuda.current_device()
        static = [_static_copy(a) for a in args]
        static_kw = {k: _static_copy(v) for k, v in kwargs.items()}
        versions = [(i, s, s._version) for i, s in _indexed(static, static_kw)]
        g = cuda.CUDAGraph()
        draws = _core._random.draw_count()
        cuda._capture.guards = []
        try:
            with cuda.device(dev), cuda.graph(g, device=dev):
                out = run(static, static_kw)
        except Exception as ex:  # noqa: BLE001 (whatever stopped the capture: run normally)
            why = f"{type(ex).__name__}: {str(ex).splitlines()[0][:160] if str(ex) else ''}"
            return self._refuse(e, run, args, kwargs, f"the capture failed ({why})")
        finally:
            guards, cuda._capture.guards = cuda._capture.guards, None
        outs = _flat_arrays(out, [])
        why = None
        if _core._random.draw_count() != draws:
            why = "random numbers (a replay would repeat the captured draw)"
        elif any(o.requires_grad for o in outs):
            why = "outputs that require grad (a backward outside the compiled function)"
        elif any(o.device.type != "cuda" for o in outs):
            why = "CPU arrays among the outputs"
        elif g.num_nodes == 0:
            why = "no GPU work"
        if why is not None:
            g.reset()
            return self._refuse(e, run, args, kwargs, why)
        e.graph, e.static, e.static_kw, e.out = g, static, static_kw, out
        e.guards = tuple((c, c()) for c in guards)
        e.mutated = tuple((i, s) for i, s, v in versions if s._version != v)
        e.captures += 1
        self.c.stats["cudagraph_captures"] += 1
        self.c.events.append(("cudagraph", f"captured ({g.num_nodes} nodes)", ()))
        return self._replay(e, args, kwargs, fresh=True)

    def _replay(self, e, args, kwargs, fresh=False):
        if not fresh:  # the capture's own copies already hold this call's arguments
            for i, a in enumerate(args):
                if isinstance(a, _core.ndarray):
                    e.static[i][...] = a
                elif isinstance(a, (tuple, list, dict)):
                    _copy_into(e.static[i], a)
            for k, v in kwargs.items():
                if isinstance(v, _core.ndarray):
                    e.static_kw[k][...] = v
                elif isinstance(v, (tuple, list, dict)):
                    _copy_into(e.static_kw[k], v)
        e.graph.replay()
        self.c.stats["cudagraph_replays"] += 1
        for where, s in e.mutated:  # the function wrote into an argument: so does the replay
            dst = args[where] if isinstance(where, int) else kwargs[where]
            dst[...] = s
        return _map_arrays(e.out, lambda o: o.copy())

    def _drop(self, e):
        if e.graph is not None:
            e.graph.reset()
        e.graph = e.static = e.static_kw = e.out = None
        e.guards = e.mutated = ()

    def _drop_all(self):
        for e in self.entries.values():
            self._drop(e)
        self.entries.clear()


def _static_copy(v):
    if isinstance(v, _core.ndarray):
        s = _creation.empty_like(v)  # the same memory order (channels_last stays so): the
        s[...] = v  # capture sees the warm-up's strides, so no kernel compiles inside it
        return s
    if isinstance(v, tuple):
        return tuple(_static_copy(x) for x in v)
    if isinstance(v, list):
        return [_static_copy(x) for x in v]
    if isinstance(v, dict):
        return {k: _static_copy(x) for k, x in v.items()}
    return v


def _copy_into(static, v):
    for s, a in zip(_flat_arrays(static, []), _flat_arrays(v, []), strict=True):
        s[...] = a


def _indexed(static, static_kw):
    """(position or keyword, array) of the top-level array arguments (those a mutation is
    copied back to)."""
    for i, s in enumerate(static):
        if isinstance(s, _core.ndarray):
            yield i, s
    for k, s in static_kw.items():
        if isinstance(s, _core.ndarray):
            yield k, s
