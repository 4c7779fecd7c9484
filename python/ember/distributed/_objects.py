"""Collectives of picklable Python objects (``all_gather_object``, ``broadcast_object_list``,
``gather_object``, ``scatter_object_list``) and batched point-to-point (``P2POp``,
``batch_isend_irecv``), as PyTorch. Objects travel as pickled bytes in uint8 arrays on the
group's CPU backend, or on the current GPU when the group has NCCL only."""

from __future__ import annotations

import pickle

import numpy as _np

from . import _collectives as C
from ._pg import _group

__all__ = [
    "P2POp",
    "all_gather_object",
    "batch_isend_irecv",
    "broadcast_object_list",
    "gather_object",
    "scatter_object_list",
]


def _device(g):
    if "cpu" in g._names:
        return "cpu"
    from .. import cuda

    return f"cuda:{cuda.current_device()}"


def _to_bytes(obj, dev):
    from .._array import asarray

    return asarray(_np.frombuffer(pickle.dumps(obj), dtype=_np.uint8).copy(), device=dev)


def _from_bytes(a, n):
    from .._array import asnumpy

    return pickle.loads(asnumpy(a[:n]).tobytes())


def _sizes(g, n, dev):
    """Every rank's byte count, all-gathered."""
    from .._core import empty, full

    mine = full((1,), n, dtype="int64", device=dev)
    out = empty((g.size(),), dtype="int64", device=dev)
    C.all_gather_into_tensor(out, mine, group=g)
    return [int(v) for v in out.tolist()]


def _padded(b, m, dev):
    from .._core import zeros

    p = zeros((m,), dtype="uint8", device=dev)
    p[: b.size] = b
    return p


def all_gather_object(object_list, obj, group=None):
    """Fills ``object_list[i]`` with rank i's `obj` on every rank."""
    g = _group(group, "all_gather_object")
    if g.rank() < 0:
        return None
    if not isinstance(object_list, list) or len(object_list) != g.size():
        raise ValueError(
            f"ember.distributed.all_gather_object: object_list must be a list of length "
            f"{g.size()}, got {object_list!r}"
        )
    from .._core import empty

    dev = _device(g)
    b = _to_bytes(obj, dev)
    sizes = _sizes(g, b.size, dev)
    m = max(sizes)
    out = empty((g.size() * m,), dtype="uint8", device=dev)
    C.all_gather_into_tensor(out, _padded(b, m, dev), group=g)
    for i, n in enumerate(sizes):
        object_list[i] = _from_bytes(out[i * m : (i + 1) * m], n)
    return None


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    """Fills ``object_gather_list[i]`` on rank `dst` with rank i's `obj`."""
    g = _group(group, "gather_object")
    if g.rank() < 0:
        return None
    me = g.ranks[g.rank()] == dst
    if me and (not isinstance(object_gather_list, list) or len(object_gather_list) != g.size()):
        raise ValueError(
            f"ember.distributed.gather_object: object_gather_list must be a list of length "
            f"{g.size()} on rank {dst}"
        )
    from .._core import empty

    dev = _device(g)
    b = _to_bytes(obj, dev)
    sizes = _sizes(g, b.size, dev)
    m = max(sizes)
    outs = [empty((m,), dtype="uint8", device=dev) for _ in range(g.size())] if me else None
    C.gather(_padded(b, m, dev), outs, dst=dst, group=g)
    if me:
        for i, n in enumerate(sizes):
            object_gather_list[i] = _from_bytes(outs[i], n)
    return None


def broadcast_object_list(object_list, src=0, group=None, device=None):
    """Replaces the items of `object_list` with those of rank `src` (same length everywhere)."""
    g = _group(group, "broadcast_object_list")
    if g.rank() < 0:
        return None
    if not isinstance(object_list, list):
        raise TypeError(
            f"ember.distributed.broadcast_object_list: object_list must be a list, got "
            f"{type(object_list).__name__}"
        )
    from .._core import empty

    dev = str(device) if device is not None else _device(g)
    me = g.ranks[g.rank()] == src
    if me:
        b = _to_bytes(list(object_list), dev)
        n = empty((1,), dtype="int64", device=dev)
        n[0] = b.size
    else:
        n = empty((1,), dtype="int64", device=dev)
    C.broadcast(n, src=src, group=g)
    size = int(n.tolist()[0])
    if not me:
        b = empty((size,), dtype="uint8", device=dev)
    C.broadcast(b, src=src, group=g)
    if not me:
        got = _from_bytes(b, size)
        if len(got) != len(object_list):
            raise ValueError(
                f"ember.distributed.broadcast_object_list: rank {src} sent {len(got)} objects, "
                f"object_list has {len(object_list)}"
            )
        object_list[:] = got
    return None


def scatter_object_list(
    scatter_object_output_list, scatter_object_input_list=None, src=0, group=None
):
    """Rank i receives ``scatter_object_input_list[i]`` of rank `src` into
    ``scatter_object_output_list[0]``."""
    g = _group(group, "scatter_object_list")
    if g.rank() < 0:
        return None
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError(
            "ember.distributed.scatter_object_list: scatter_object_output_list must be a "
            "non-empty list"
        )
    from .._core import empty

    dev = _device(g)
    me = g.ranks[g.rank()] == src
    if me:
        if len(scatter_object_input_list or ()) != g.size():
            raise ValueError(
                f"ember.distributed.scatter_object_list: scatter_object_input_list must have "
                f"{g.size()} objects on rank {src}"
            )
        bs = [_to_bytes(o, dev) for o in scatter_object_input_list]
        sizes = empty((g.size(),), dtype="int64", device=dev)
        for i, b in enumerate(bs):
            sizes[i] = b.size
    else:
        sizes = empty((g.size(),), dtype="int64", device=dev)
    C.broadcast(sizes, src=src, group=g)
    sz = [int(v) for v in sizes.tolist()]
    m = max(sz)
    out = empty((m,), dtype="uint8", device=dev)
    C.scatter(out, [_padded(b, m, dev) for b in bs] if me else None, src=src, group=g)
    scatter_object_output_list[0] = _from_bytes(out, sz[g.rank()])
    return None


class P2POp:
    """A point-to-point operation for :func:`batch_isend_irecv`: ``P2POp(dist.isend, tensor,
    peer)`` or ``P2POp(dist.irecv, tensor, peer)``."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (C.isend, C.irecv):
            raise ValueError(
                "ember.distributed.P2POp: op must be ember.distributed.isend or "
                f"ember.distributed.irecv, got {op!r}"
            )
        if peer is None and group_peer is None:
            raise ValueError("ember.distributed.P2POp: peer is required")
        C._arr(tensor, "P2POp", "tensor")
        self.op, self.tensor, self.peer = op, tensor, peer
        self.group, self.tag, self.group_peer = group, tag, group_peer

    def __repr__(self):
        return f"P2POp({self.op.__name__}, peer={self.peer}, tag={self.tag})"


def batch_isend_irecv(p2p_op_list):
    """Posts every operation of the list at once (one NCCL group on GPUs, so a ring of sends
    and receives cannot deadlock) and returns their work handles."""
    if not isinstance(p2p_op_list, (list, tuple)) or not all(
        isinstance(p, P2POp) for p in p2p_op_list
    ):
        raise TypeError("ember.distributed.batch_isend_irecv: expects a list of P2POp")
    if not p2p_op_list:
        return []
    first = p2p_op_list[0]
    g = _group(first.group, "batch_isend_irecv")
    be = g._backend(first.tensor.device.type, "batch_isend_irecv")
    if hasattr(be, "batch_p2p"):
        ops = []
        for p in p2p_op_list:
            peer = p.group_peer if p.group_peer is not None else g.ranks.index(p.peer)
            ops.append((p.op is C.isend, p.tensor, peer))
        return be.batch_p2p(ops)
    return [
        p.op(
            p.tensor,
            p.peer,
            group=p.group,
            tag=p.tag,
            **({"group_dst": p.group_peer} if p.op is C.isend else {"group_src": p.group_peer})
            if p.group_peer is not None
            else {},
        )
        for p in p2p_op_list
    ]
