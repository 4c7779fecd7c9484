"""Collectives on ember arrays with ``torch.distributed``'s names, arguments and in-place
semantics: outputs are written into the arrays passed in; ``async_op=True`` returns a
:class:`Work`; `src`/`dst` are global ranks. The backend is chosen by the arrays' device."""

from __future__ import annotations

import numbers

from ._pg import _group, _warn_not_in_group
from ._work import ReduceOp, _reduce_op

__all__ = [
    "all_gather",
    "all_gather_into_tensor",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "broadcast",
    "gather",
    "irecv",
    "isend",
    "monitored_barrier",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
    "send",
]


def _arr(t, who, name):
    from .._core import ndarray

    if not isinstance(t, ndarray):
        raise TypeError(
            f"ember.distributed.{who}: {name} must be an ember array, got {type(t).__name__}"
        )
    return t


def _list(ts, who, name, n=None):
    if not isinstance(ts, (list, tuple)):
        raise TypeError(
            f"ember.distributed.{who}: {name} must be a list of ember arrays, got "
            f"{type(ts).__name__}"
        )
    for t in ts:
        _arr(t, who, name)
    if n is not None and len(ts) != n:
        raise ValueError(
            f"ember.distributed.{who}: {name} must have one array per rank ({n}), got {len(ts)}"
        )
    return ts


def _same(ref, ts, who, name, shape=True):
    for t in ts:
        if t.dtype != ref.dtype:
            raise TypeError(
                f"ember.distributed.{who}: {name} has dtype {t.dtype}, expected {ref.dtype}"
            )
        if t.device.type != ref.device.type:
            raise ValueError(
                f"ember.distributed.{who}: {name} is on {t.device}, expected {ref.device.type}"
            )
        if shape and tuple(t.shape) != tuple(ref.shape):
            raise ValueError(
                f"ember.distributed.{who}: {name} has shape {tuple(t.shape)}, expected "
                f"{tuple(ref.shape)}"
            )


def _rank_arg(g, r, who, name):
    if isinstance(r, bool) or not isinstance(r, numbers.Integral):
        raise TypeError(f"ember.distributed.{who}: {name} must be an int rank, got {r!r}")
    r = int(r)
    if r not in g.ranks:
        raise ValueError(
            f"ember.distributed.{who}: {name}={r} is not a rank of the group (ranks {g.ranks})"
        )
    return g.ranks.index(r)


def _setup(group, who):
    g = _group(group, who)
    if g.rank() < 0:
        _warn_not_in_group(who)
        return None
    return g


def _ret(w, async_op):
    if async_op:
        return w
    w.wait()
    return None


def _then(w, fn):
    """Runs `fn` after `w`'s own completion step."""
    inner = w._finish

    def finish():
        r = inner() if inner is not None else None
        fn()
        return r

    w._finish = finish
    return w


def _empty(shape, like):
    from .._core import empty

    return empty(shape, dtype=like.dtype, device=like.device)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces `tensor` across the group in place (``ReduceOp.SUM/PRODUCT/MIN/MAX/AVG``)."""
    _arr(tensor, "all_reduce", "tensor")
    op = _reduce_op(op, "all_reduce", tensor)
    g = _setup(group, "all_reduce")
    if g is None:
        return None
    be = g._backend(tensor.device.type, "all_reduce")
    return _ret(be.all_reduce(g._enter("all_reduce"), tensor, op), async_op)


def broadcast(tensor, src=0, group=None, async_op=False, group_src=None):
    """Copies `tensor` of rank `src` into `tensor` on every rank of the group."""
    _arr(tensor, "broadcast", "tensor")
    g = _setup(group, "broadcast")
    if g is None:
        return None
    root = group_src if group_src is not None else _rank_arg(g, src, "broadcast", "src")
    be = g._backend(tensor.device.type, "broadcast")
    return _ret(be.broadcast(g._enter("broadcast"), tensor, root), async_op)


def barrier(group=None, async_op=False, device_ids=None):
    """Blocks until every rank of the group reaches it (raises after the group's timeout,
    naming the ranks that did not arrive)."""
    g = _setup(group, "barrier")
    if g is None:
        return None
    dev = "cpu" if "cpu" in g._names else "cuda"
    be = g._backend(dev, "barrier")
    return _ret(be.barrier(g._enter("barrier")), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that raises after `timeout` naming the ranks that did not reach it."""
    g = _setup(group, "monitored_barrier")
    if g is None:
        return None
    dev = "cpu" if "cpu" in g._names else "cuda"
    w = g._backend(dev, "monitored_barrier").barrier(g._enter("monitored_barrier"))
    w._name = "monitored_barrier"
    w.wait(timeout)
    return None


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Gathers every rank's `input_tensor` into `output_tensor`, whose shape is the input's
    with the first dimension times the world size, or ``(world_size, *input.shape)``."""
    who = "all_gather_into_tensor"
    _arr(output_tensor, who, "output_tensor")
    _arr(input_tensor, who, "input_tensor")
    g = _setup(group, who)
    if g is None:
        return None
    _same(input_tensor, [output_tensor], who, "output_tensor", shape=False)
    n = g.size()
    if output_tensor.size != n * input_tensor.size:
        raise ValueError(
            f"ember.distributed.{who}: output_tensor has {output_tensor.size} elements, expected "
            f"world_size * input_tensor.size = {n * input_tensor.size}"
        )
    be = g._backend(input_tensor.device.type, who)
    return _ret(be.all_gather_into(g._enter(who), output_tensor, input_tensor, who), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Gathers every rank's `tensor` into ``tensor_list[rank]`` on every rank."""
    who = "all_gather"
    _arr(tensor, who, "tensor")
    g = _setup(group, who)
    if g is None:
        return None
    _list(tensor_list, who, "tensor_list", g.size())
    _same(tensor, tensor_list, who, "tensor_list")
    buf = _empty((g.size(), *tensor.shape), tensor)
    be = g._backend(tensor.device.type, who)
    w = be.all_gather_into(g._enter(who), buf, tensor, who)

    def scatter_out():
        for i, t in enumerate(tensor_list):
            t[...] = buf[i]

    return _ret(_then(w, scatter_out), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces `input` across ranks and leaves block ``rank`` (of world_size blocks along the
    first dimension, or ``input[rank]`` for a stacked input) in `output`."""
    who = "reduce_scatter_tensor"
    _arr(output, who, "output")
    _arr(input, who, "input")
    op = _reduce_op(op, who, input)
    g = _setup(group, who)
    if g is None:
        return None
    _same(output, [input], who, "input", shape=False)
    if input.size != g.size() * output.size:
        raise ValueError(
            f"ember.distributed.{who}: input has {input.size} elements, expected "
            f"world_size * output.size = {g.size() * output.size}"
        )
    be = g._backend(output.device.type, who)
    return _ret(be.reduce_scatter_into(g._enter(who), output, input, op, who), async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``input_list[i]`` across ranks into `output` of rank i."""
    who = "reduce_scatter"
    _arr(output, who, "output")
    op = _reduce_op(op, who, output)
    g = _setup(group, who)
    if g is None:
        return None
    _list(input_list, who, "input_list", g.size())
    _same(output, input_list, who, "input_list")
    from .._joining import stack

    inp = stack(list(input_list))
    be = g._backend(output.device.type, who)
    return _ret(be.reduce_scatter_into(g._enter(who), output, inp, op, who), async_op)


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduces `tensor` across ranks into `tensor` of rank `dst` (others are unchanged)."""
    _arr(tensor, "reduce", "tensor")
    op = _reduce_op(op, "reduce", tensor)
    g = _setup(group, "reduce")
    if g is None:
        return None
    root = group_dst if group_dst is not None else _rank_arg(g, dst, "reduce", "dst")
    be = g._backend(tensor.device.type, "reduce")
    return _ret(be.reduce(g._enter("reduce"), tensor, root, op), async_op)


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False, group_dst=None):
    """Gathers every rank's `tensor` into `gather_list` on rank `dst` (None elsewhere)."""
    who = "gather"
    _arr(tensor, who, "tensor")
    g = _setup(group, who)
    if g is None:
        return None
    root = group_dst if group_dst is not None else _rank_arg(g, dst, who, "dst")
    if g.rank() == root:
        if gather_list is None:
            raise ValueError(f"ember.distributed.{who}: gather_list is required on rank {dst}")
        _list(gather_list, who, "gather_list", g.size())
        _same(tensor, gather_list, who, "gather_list")
        buf = _empty((g.size(), *tensor.shape), tensor)
    else:
        if gather_list:
            raise ValueError(
                f"ember.distributed.{who}: Argument ``gather_list`` must NOT be specified on "
                "non-destination ranks."
            )
        buf = None
    be = g._backend(tensor.device.type, who)
    w = be.gather_into(g._enter(who), buf, tensor, root)
    if buf is not None:

        def out():
            for i, t in enumerate(gather_list):
                t[...] = buf[i]

        _then(w, out)
    return _ret(w, async_op)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False, group_src=None):
    """Copies ``scatter_list[i]`` of rank `src` into `tensor` of rank i."""
    who = "scatter"
    _arr(tensor, who, "tensor")
    g = _setup(group, who)
    if g is None:
        return None
    root = group_src if group_src is not None else _rank_arg(g, src, who, "src")
    inp = None
    if g.rank() == root:
        if scatter_list is None:
            raise ValueError(f"ember.distributed.{who}: scatter_list is required on rank {src}")
        _list(scatter_list, who, "scatter_list", g.size())
        _same(tensor, scatter_list, who, "scatter_list")
        from .._joining import stack

        inp = stack(list(scatter_list))
    elif scatter_list:
        raise ValueError(
            f"ember.distributed.{who}: Argument ``scatter_list`` must NOT be specified on "
            "non-source ranks."
        )
    be = g._backend(tensor.device.type, who)
    return _ret(be.scatter_from(g._enter(who), tensor, inp, root), async_op)


def _flat(ts, like):
    from .._joining import concatenate

    if not ts:
        return _empty((0,), like)
    return concatenate([t.reshape(-1) for t in ts])


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Sends ``input_tensor_list[j]`` to rank j and receives rank j's into
    ``output_tensor_list[j]`` (sizes may differ per peer)."""
    who = "all_to_all"
    g = _setup(group, who)
    if g is None:
        return None
    _list(output_tensor_list, who, "output_tensor_list", g.size())
    _list(input_tensor_list, who, "input_tensor_list", g.size())
    ref = input_tensor_list[0]
    _same(ref, input_tensor_list, who, "input_tensor_list", shape=False)
    _same(ref, output_tensor_list, who, "output_tensor_list", shape=False)
    inp = _flat(input_tensor_list, ref)
    out = _empty((sum(t.size for t in output_tensor_list),), ref)
    sc = [t.size for t in input_tensor_list]
    rc = [t.size for t in output_tensor_list]
    be = g._backend(ref.device.type, who)
    w = be.all_to_all_flat(g._enter(who), out, inp, sc, rc, who)

    def split():
        o = 0
        for t in output_tensor_list:
            t[...] = out[o : o + t.size].reshape(t.shape)
            o += t.size

    return _ret(_then(w, split), async_op)


def _splits(sizes, n, rows, who, name):
    if sizes is None or len(sizes) == 0:
        if rows % n:
            raise ValueError(
                f"ember.distributed.{who}: first dimension {rows} is not divisible by the "
                f"world size {n} and {name} is not given"
            )
        return [rows // n] * n
    sizes = [int(s) for s in sizes]
    if len(sizes) != n or sum(sizes) != rows or min(sizes) < 0:
        raise ValueError(
            f"ember.distributed.{who}: {name}={sizes} must have {n} non-negative entries "
            f"summing to {rows}"
        )
    return sizes


def all_to_all_single(
    output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False
):
    """Splits `input` along dim 0 into world_size pieces (equal, or `input_split_sizes`),
    sends piece j to rank j and concatenates what arrives into `output`."""
    who = "all_to_all_single"
    _arr(output, who, "output")
    _arr(input, who, "input")
    g = _setup(group, who)
    if g is None:
        return None
    _same(input, [output], who, "output", shape=False)
    n = g.size()
    rin = int(input.shape[0]) if input.ndim else 1
    rout = int(output.shape[0]) if output.ndim else 1
    row_in = input.size // rin if rin else 0
    row_out = output.size // rout if rout else 0
    if tuple(input.shape[1:]) != tuple(output.shape[1:]):
        raise ValueError(
            f"ember.distributed.{who}: output shape {tuple(output.shape)} and input shape "
            f"{tuple(input.shape)} differ beyond the first dimension"
        )
    sc = [s * row_in for s in _splits(input_split_sizes, n, rin, who, "input_split_sizes")]
    rc = [s * row_out for s in _splits(output_split_sizes, n, rout, who, "output_split_sizes")]
    be = g._backend(input.device.type, who)
    w = be.all_to_all_flat(g._enter(who), output, input, sc, rc, who)
    return _ret(w, async_op)


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Sends `tensor` to rank `dst`; returns a :class:`Work`."""
    _arr(tensor, "isend", "tensor")
    g = _setup(group, "isend")
    if g is None:
        return None
    peer = group_dst if group_dst is not None else _rank_arg(g, dst, "isend", "dst")
    be = g._backend(tensor.device.type, "isend")
    w = be.send(-1, tensor, peer, int(tag))
    w._peer = g.ranks[peer]
    return w


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives into `tensor` from rank `src` (any rank when None); returns a :class:`Work`
    (``work.source_rank()`` names the sender)."""
    _arr(tensor, "irecv", "tensor")
    g = _setup(group, "irecv")
    if g is None:
        return None
    if group_src is not None:
        peer = group_src
    else:
        peer = None if src is None else _rank_arg(g, src, "irecv", "src")
    be = g._backend(tensor.device.type, "irecv")
    w = be.recv(-1, tensor, peer, int(tag))
    w._peer = "any rank" if peer is None else g.ranks[peer]
    return w


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Sends `tensor` to rank `dst` and waits until it has left."""
    w = isend(tensor, dst, group, tag, group_dst)
    if w is not None:
        w.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives into `tensor` from `src` (any rank when None); returns the sender's rank."""
    w = irecv(tensor, src, group, tag, group_src)
    if w is None:
        return -1
    w.wait()
    return w.source_rank()
