"""``DistributedDataParallel``: PyTorch's data-parallel wrapper for ``ember.nn`` modules.

At construction the parameters and buffers are broadcast from rank 0 (one coalesced broadcast
per dtype and device). Gradients are grouped in buckets (reverse registration order, the first
1 MiB then ``bucket_cap_mb``), each launched as one asynchronous ``all_reduce(AVG)`` as soon as
its last gradient arrives during ``backward`` (a per-parameter autograd hook), so communication
overlaps the rest of backward. The hook of the last gradient waits for every bucket and writes
the averaged values into ``.grad``. ``no_sync()`` accumulates locally; the first synchronized
backward then reduces the accumulated gradients. With ``find_unused_parameters=True`` the
autograd graph of the outputs is walked after ``forward`` to mark the parameters it does not
reach, and a used-count is reduced with the last bucket so parameters unused on every rank
keep ``grad is None`` (as PyTorch).
"""

from __future__ import annotations

import contextlib
import functools

from .. import nn as _nn
from . import _collectives as C
from ._pg import _group
from ._work import ReduceOp

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024


def _acc_node(p):
    """The AccumulateGrad node of leaf `p` (stable for the parameter's lifetime)."""
    fn = p.reshape(-1).grad_fn
    return fn.next_functions[0][0] if fn is not None else None


def _reachable(outputs):
    """ids of the autograd nodes reachable from `outputs` (any nesting of arrays)."""
    from .._core import ndarray

    stack, seen, keep = [], set(), []

    def collect(o):
        if isinstance(o, ndarray):
            if o.grad_fn is not None:
                stack.append(o.grad_fn)
        elif isinstance(o, (list, tuple)):
            for x in o:
                collect(x)
        elif isinstance(o, dict):
            for x in o.values():
                collect(x)

    collect(outputs)
    while stack:
        f = stack.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        keep.append(f)  # ids stay unique while the nodes are alive
        for g, _ in f.next_functions:
            if g is not None and id(g) not in seen:
                stack.append(g)
    return seen, keep


class DistributedDataParallel(_nn.Module):
    """Wraps `module` for data-parallel training over `process_group` (the default group):
    call it as the module; after ``loss.backward()`` every rank holds the gradients averaged
    over the ranks, as if one process had trained on the concatenated batch."""

    def __init__(
        self,
        module,
        device_ids=None,
        output_device=None,
        dim=0,
        broadcast_buffers=True,
        process_group=None,
        bucket_cap_mb=None,
        find_unused_parameters=False,
        check_reduction=False,
        gradient_as_bucket_view=False,
        static_graph=False,
    ):
        super().__init__()
        if not isinstance(module, _nn.Module):
            raise TypeError(
                "ember.distributed.DistributedDataParallel: module must be an ember.nn.Module, "
                f"got {type(module).__name__}"
            )
        cap = 25.0 if bucket_cap_mb is None else float(bucket_cap_mb)
        if not cap > 0:
            raise ValueError(
                "ember.distributed.DistributedDataParallel: bucket_cap_mb must be positive, "
                f"got {bucket_cap_mb!r}"
            )
        self.module = module
        self.process_group = _group(process_group, "DistributedDataParallel")
        self.broadcast_buffers = bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int(cap * 1024 * 1024)
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        self._names = [n for n, _ in named]
        self._params = [p for _, p in named]
        self._sync_module_states()
        self._buckets = self._make_buckets()
        self._bucket_of = {}
        for b, idx in enumerate(self._buckets):
            for i in idx:
                self._bucket_of[i] = b
        # The node wrappers are cached while referenced: keep them so their ids stay valid.
        self._node_refs = [_acc_node(p) for p in self._params]
        self._nodes = {id(nd): i for i, nd in enumerate(self._node_refs) if nd is not None}
        self._armed = False
        for i, p in enumerate(self._params):
            p.register_hook(functools.partial(self._on_grad, i))

    # -- construction ----------------------------------------------------------------------

    def _coalesced(self, arrays, fn):
        """Runs `fn(flat)` on one flat copy per (dtype, device) group and copies back."""
        from .._joining import concatenate
        from ..autograd import no_grad

        groups = {}
        for a in arrays:
            groups.setdefault((str(a.dtype), str(a.device)), []).append(a)
        with no_grad():
            for arrs in groups.values():
                flat = concatenate([a.detach().reshape(-1) for a in arrs])
                fn(flat)
                o = 0
                for a in arrs:
                    a[...] = flat[o : o + a.size].reshape(a.shape)
                    o += a.size

    def _sync_module_states(self):
        pg = self.process_group
        if pg.size() == 1:
            return
        src = pg.ranks[0]
        states = [p for p in self.module.parameters()] + [b for b in self.module.buffers()]
        if states:
            self._coalesced(states, lambda flat: C.broadcast(flat, src=src, group=pg))

    def _make_buckets(self):
        buckets, cur, size, key = [], [], 0, None
        cap = min(_FIRST_BUCKET_BYTES, self.bucket_bytes_cap)
        for i in reversed(range(len(self._params))):
            p = self._params[i]
            k = (str(p.dtype), str(p.device))
            nbytes = p.size * p.dtype.itemsize
            if cur and (k != key or size + nbytes > cap):
                buckets.append(cur)
                cur, size = [], 0
                cap = self.bucket_bytes_cap
            cur.append(i)
            size += nbytes
            key = k
        if cur:
            buckets.append(cur)
        return buckets

    # -- forward ---------------------------------------------------------------------------

    def forward(self, *inputs, **kwargs):
        from ..autograd import is_grad_enabled

        if self._armed:
            missing = [self._names[i] for i in range(len(self._params)) if i not in self._contrib]
            self._armed = False
            raise RuntimeError(
                "ember.distributed.DistributedDataParallel: Expected to have finished reduction "
                "in the prior iteration before starting a new one. Parameters that received no "
                f"gradient: {missing}. Pass find_unused_parameters=True if the forward pass "
                "does not use every parameter, and make sure every output takes part in the loss."
            )
        if self.broadcast_buffers and self.process_group.size() > 1:
            bufs = list(self.module.buffers())
            if bufs:
                src = self.process_group.ranks[0]
                pg = self.process_group
                self._coalesced(bufs, lambda flat: C.broadcast(flat, src=src, group=pg))
        out = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync and self._params:
            self._arm(out)
        return out

    def _arm(self, out):
        self._contrib = {}
        self._remaining = [len(b) for b in self._buckets]
        self._works = {}
        self._flats = {}
        self._used = set(range(len(self._params)))
        if self.find_unused_parameters:
            seen, _ = _reachable(out)
            self._used = {i for nid, i in self._nodes.items() if nid in seen}
            for i in range(len(self._params)):
                if i not in self._used:
                    self._contrib[i] = None  # zeros in its bucket
                    self._ready(i)
        self._expected = len(self._used)
        self._armed = self._expected > 0

    @contextlib.contextmanager
    def no_sync(self):
        """Inside the block gradients accumulate locally without communication."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # -- backward --------------------------------------------------------------------------

    def _ready(self, i):
        b = self._bucket_of[i]
        self._remaining[b] -= 1
        if self._remaining[b] == 0:
            self._launch(b)

    def _launch(self, b):
        from .._core import zeros
        from .._joining import concatenate

        parts = []
        for i in self._buckets[b]:
            c = self._contrib[i]
            p = self._params[i]
            parts.append(
                zeros(p.size, dtype=p.dtype, device=p.device) if c is None else c.reshape(-1)
            )
        flat = concatenate(parts)
        self._flats[b] = flat
        if flat.device.type == "cuda":
            # A side stream lets the reduction overlap the rest of backward on the GPU.
            from .. import cuda

            dev = flat.device.index
            cur, side = cuda.current_stream(dev), self._side_stream(dev)
            side.wait_stream(cur)
            flat.record_stream(side)
            with cuda.stream(side):
                self._works[b] = C.all_reduce(
                    flat, op=ReduceOp.AVG, group=self.process_group, async_op=True
                )
            return
        self._works[b] = C.all_reduce(
            flat, op=ReduceOp.AVG, group=self.process_group, async_op=True
        )

    def _side_stream(self, dev):
        from .. import cuda

        streams = self.__dict__.setdefault("_comm_streams", {})
        if dev not in streams:
            streams[dev] = cuda.Stream(dev)
        return streams[dev]

    def _on_grad(self, i, g):
        if not self._armed or i in self._contrib:
            return None
        p = self._params[i]
        old = p.grad
        self._contrib[i] = g.detach() if old is None else old + g
        self._expected -= 1
        self._ready(i)
        if self._expected > 0:
            return None
        return self._finish(i)

    def _finish(self, last):
        from .._array import asarray
        from .._core import zeros

        self._armed = False
        globally_used = None
        if self.find_unused_parameters:
            n = len(self._params)
            mask = zeros(n, dtype="int32", device="cpu")
            for i in self._used:
                mask[i] = 1
            if "cpu" not in self.process_group._names:
                mask = asarray(mask, device=self._params[0].device)
            C.all_reduce(mask, group=self.process_group)
            globally_used = {i for i, v in enumerate(mask.tolist()) if v}
        for b in range(len(self._buckets)):
            if b not in self._works:  # a bucket with unused parameters only
                self._launch(b)
        result = None
        if self.__dict__.get("_comm_streams"):
            from .. import cuda

            for dev, side in self._comm_streams.items():
                cuda.current_stream(dev).wait_stream(side)  # the averaged buckets are read below
        for b, idx in enumerate(self._buckets):
            self._works[b].wait()
            flat, o = self._flats[b], 0
            for i in idx:
                p = self._params[i]
                avg = flat[o : o + p.size].reshape(p.shape)
                o += p.size
                if globally_used is not None and i not in globally_used:
                    continue
                if i == last:
                    p.grad = None  # the engine stores the returned gradient as .grad
                    result = avg.copy()
                else:
                    p.grad = avg.copy()
        self._contrib, self._works, self._flats = {}, {}, {}
        return result
