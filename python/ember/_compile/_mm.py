"""Matmul epilogues in ember.compile: ``F.linear`` (``nn.Linear``) inside a compiled call records
a pending "mm" node instead of running at once; a ReLU (``F.relu``, ``x.relu()``) or a tanh
GELU (``F.gelu(..., approximate="tanh")``) of a pending mm node records an "act" node. At the
flush, an act node whose mm node nothing else reads (and the user can no longer reach) becomes
one library call, the matmul with the bias and the activation in its epilogue
(``nn/_linear_act.py``: cuBLASLt on CUDA, ember's own ops elsewhere); otherwise the mm node is a
matmul-plus-bias call and the act node runs after it. Their results are known values for the
fused elementwise kernels and reductions of the same flush (a ``+ residual`` after the
activation, a loss): those steps run after every mm step.

The mm node's inputs are always known arrays (F.linear's pending arguments are computed first),
so mm steps depend on nothing else of the flush."""

from __future__ import annotations

from .. import _core
from . import _graph
from ._graph import LNode

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _amp_cast(arrays):
    from .. import amp

    if not amp._open_regions or not amp._stack():
        return arrays
    return [None if a is None else amp._cast(a, amp.LOW) for a in arrays]


def deferred_linear(s, x, w, b):
    """The pending mm node of ``F.linear(x, w, b)`` (x, w, b known ember arrays), or None when
    the call should run eagerly (shapes, dtypes or devices eager ember handles or rejects)."""
    x, w, b = _amp_cast([x, w, b])
    if not (isinstance(x, _core.ndarray) and isinstance(w, _core.ndarray)):
        return None
    if b is not None and not isinstance(b, _core.ndarray):
        return None
    dt = x.dtype.name
    if dt not in _FLOATS or w.dtype.name != dt or (b is not None and b.dtype.name != dt):
        return None
    if x.ndim == 0 or w.ndim != 2 or x.shape[-1] != w.shape[1]:
        return None
    if w.device != x.device or (b is not None and (b.device != x.device or b.shape != w.shape[:1])):
        return None
    ins = [_graph.leaf(x, s), _graph.leaf(w, s)] + ([_graph.leaf(b, s)] if b is not None else [])
    n = LNode("mm", "linear", tuple(ins), None, dt, (*x.shape[:-1], w.shape[0]), x.device)
    n.idx = len(s.pending)
    if any(i.rg for i in ins):
        if _core._is_grad_enabled():
            n.rg = True
        else:
            n.gm = False
    n.tok = ("mm", "linear", None, n.rg, n.gm, tuple(_graph._ltok(s, i) for i in ins))
    s.pending.append(n)
    return n


def deferred_act(s, m, act):
    """The pending act node of ``act`` (relu / gelu_tanh) over the pending mm node `m`."""
    n = LNode("act", act, (m,), None, m.dtype, m.shape, m.device)
    n.idx = len(s.pending)
    n.rg, n.gm = m.rg, m.gm
    if m.rg and not _core._is_grad_enabled():
        n.rg, n.gm = False, False
    n.tok = ("act", act, None, n.rg, n.gm, (_graph._ltok(s, m),))
    s.pending.append(n)
    return n


def is_pending_mm(n):
    return type(n) is LNode and n.kind == "mm" and n.value is None


# ---- the flush -----------------------------------------------------------------------------------


def plan(order, refs, req):
    """[(kind, outs, act)] for the flush's mm and act nodes, in order: ("mm", [j], act) computes
    act node j (or mm node j with act None) by one call; ("act", [j], None) applies j's
    activation to its (already computed) mm node."""
    users = [[] for _ in order]
    for i, r in enumerate(refs):
        for x in r:
            if x is not None and x[0] == "n":
                users[x[1]].append(i)
    out, absorbed = [], set()
    for j, n in enumerate(order):
        if n.kind == "act":
            i = refs[j][0][1]
            if not req[i] and users[i] == [j] and order[i].gm == n.gm:
                out.append(("mm", [j], n.op, i))
                absorbed.add(i)
    for i, n in enumerate(order):
        if n.kind == "mm" and i not in absorbed:
            out.append(("mm", [i], None, i))
    for j, n in enumerate(order):
        if n.kind == "act" and refs[j][0][1] not in absorbed:
            out.append(("act", [j], None, refs[j][0][1]))
    # mm steps (plain or fused) first: act steps read plain mm results
    out.sort(key=lambda t: t[0] != "mm")
    return out


def compute(kind, j, act, i, order, refs, vals, leaves):
    """The value of node j (see ``plan``)."""
    from ..nn._linear_act import linear_act

    def get(ref):
        return leaves[ref[1]] if ref[0] == "l" else vals[ref[1]]

    n = order[j]
    prev = _core._is_grad_enabled()
    if not n.gm:
        _core._set_grad_enabled(False)
    try:
        if kind == "act":
            return apply_act(n.op, vals[i])
        args = [get(r) for r in refs[i]]
        return linear_act(args[0], args[1], args[2] if len(args) > 2 else None, act)
    finally:
        _core._set_grad_enabled(prev)


def apply_act(act, y):
    # the defining module's functions: ember.nn.functional's names are swapped during the call
    from ..nn._functional_activation import gelu, relu

    if act == "relu":
        return relu(y)
    return gelu(y, approximate="tanh")


def eval_node(n, xs):
    """An mm or act node computed eagerly from its inputs' values (the fallback paths)."""
    from ..nn._linear_act import _composed

    if n.kind == "act":
        return apply_act(n.op, xs[0])
    return _composed(xs[0], xs[1], xs[2] if len(xs) > 2 else None, None)
