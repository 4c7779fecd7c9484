"""Flushing the pending graph of a compiled call: the nodes still needed (those the user can
still reach, and the one asked for) are computed by kernels out of ember.fuse's generator, one
per reduction and one per output shape of elementwise results; intermediates only used inside
the graph are never stored. Plans are cached by the graph's structure, dtypes, numbers of
dimensions and device type (never sizes unless dynamic=False), so a new batch size reuses the
kernels. Anything the generator cannot do runs eagerly (same ops, same results)."""

from __future__ import annotations

import time

from .. import _core
from .._fusion import _codegen, _run, _trace
from . import _graph, _launch, _mm
from ._graph import LNode

_plans = {}  # flush key -> [Step] (shared by every compiled function: keyed by structure)


class Step:
    """One kernel of a flush: `outs` (positions of nodes in the flush's order), the fused plan
    (None: eager) and `params`, where each plan parameter's value comes from."""

    __slots__ = ("kind", "outs", "plan", "params", "why", "host", "ops", "rg")

    def __init__(self, kind, outs, plan, params, why=None):
        self.host = None  # the CPU launcher, made at the first run
        self.ops = None
        self.rg = False
        self.kind = kind
        self.outs = outs
        self.plan = plan
        self.params = params
        self.why = why


# ---- the flush -----------------------------------------------------------------------------------


def flush(s, need=None, why="a value was needed"):
    """Computes the session's pending nodes that are still reachable (and `need`)."""
    pend = s.pending
    if not pend:
        return
    s.pending = []
    # the needed nodes: the required ones (reachable by the user) and their pending ancestors
    rev, req_rev = [], []
    wanted = [False] * len(pend)
    for n in reversed(pend):
        if n.value is not None:
            continue
        r = n.ref
        q = n is need or (r is not None and r() is not None)
        if q or wanted[n.idx]:
            rev.append(n)
            req_rev.append(q)
            for x in n.inputs:
                if type(x) is LNode and x.value is None:
                    wanted[x.idx] = True
    if not rev:
        s.reset()
        return
    order = rev[::-1]
    req = req_rev[::-1]
    owner = s.owner
    if len(order) == len(pend):
        # every pending node is needed: the tokens made while recording are the key
        key, leaves, scalars, refs = _fast_key(s, order, req, owner)
    else:
        key, leaves, scalars, refs = _key(order, req, owner)
    s.reset()
    steps = _plans.get(key)
    if steps is None:
        if len(_plans) > 4096:
            _plans.clear()  # the kernels stay cached by source (ember.fuse's caches)
        t0 = time.perf_counter()
        steps = _plans[key] = _build(order, refs, req, leaves, scalars)
        if owner is not None:
            owner._note_compile(key, order, leaves, steps, time.perf_counter() - t0)
    elif owner is not None:
        owner.stats["cache_hits"] += 1
    vals = [None] * len(order)
    for st in steps:
        _run_step(st, order, refs, vals, leaves, scalars, owner, why)
    for n in order:
        n.inputs = ()  # the graph is done: leaves are not kept alive by it


def _stale(x):
    raise RuntimeError(
        "ember.compile: an array read by deferred elementwise operations was modified in "
        f"place before they ran (its version went from {x.extra} to {x.value._version}); "
        "copy it first, or modify it after using the result"
    )


def _fast_key(s, order, req, owner):
    leaves = []
    lsig = []
    for x in s.bleaves:
        if x.kind == "leaf" and x.value._version != x.extra:
            _stale(x)
        leaves.append(x.value)
        lsig.append((x.dtype, len(x.shape), x.rg, x.device.type))
    toks = tuple([n.tok for n in order])
    refs = [t[-1] for t in toks]
    shapes = {}
    sh = tuple(
        [
            shapes.setdefault(n.shape, len(shapes)) if q and n.kind != "reduce" else None
            for n, q in zip(order, req, strict=True)
        ]
    )
    key = ("F", order[0].device.type, toks, tuple(req), sh, tuple(lsig))
    if owner is not None and owner.dynamic is False:
        key += (tuple([x.shape for x in s.bleaves]),)
    return key, leaves, s.scalars, refs


def _key(order, req, owner):
    """The flush's cache key, its leaves and scalars (values in order of first use) and each
    node's input references; checks that no leaf was written since it was read."""
    dev = order[0].device
    key = ["S", dev.type]
    static = owner is not None and owner.dynamic is False
    leaves, scalars, refs = [], [], []
    pos, lpos, shapes = {}, {}, {}
    weak = _graph._WEAK
    for k, n in enumerate(order):
        pos[id(n)] = k
        r = []
        for x in n.inputs:
            if type(x) is LNode:
                if x.value is None:
                    r.append(("n", pos[id(x)]))
                    continue
                j = lpos.get(id(x))
                if j is None:
                    if x.kind == "leaf" and x.value._version != x.extra:
                        _stale(x)
                    j = lpos[id(x)] = len(leaves)
                    leaves.append(x.value)
                    key.append(x.device.type)
                    if static:
                        key.append(x.shape)
                r.append(("l", j, x.dtype, len(x.shape), x.rg))
            elif x is None:
                r.append(None)
            else:
                t = type(x)
                r.append(("s", len(scalars), t if t in weak else x.dtype.name))
                scalars.append(x)
        r = tuple(r)
        refs.append(r)
        q = req[k]
        sh = shapes.setdefault(n.shape, len(shapes)) if q and n.kind != "reduce" else None
        key.append((n.kind, n.op, n.extra, r, q, sh, n.rg, n.gm))
    return tuple(key), leaves, scalars, refs


# ---- building the steps (a cache miss) -----------------------------------------------------------


def _sig_of(ref, leaves, scalars, order):
    k, i = ref[0], ref[1]
    if k == "l":
        a = leaves[i]
        return ("a", a.dtype.name, a.ndim)
    if k == "n":
        n = order[i]
        return ("a", n.dtype, len(n.shape))
    return _graph._sig(scalars[i])


def _build(order, refs, req, leaves, scalars):
    steps = []
    done = set()  # positions computed by earlier steps (parameters of later ones)
    # matmuls (with their epilogues) first: their inputs are known values
    for kind, outs, act, src in _mm.plan(order, refs, req):
        steps.append(Step(kind, outs, (act, src), ()))
        done.update(outs)
    absorbed = _epilogues(order, refs, req)
    for i, n in enumerate(order):
        if n.kind == "reduce":
            j = absorbed.get(i)
            if j is None:
                steps.append(_build_step("reduce", [i], order, refs, done, leaves, scalars))
                done.add(i)
            else:  # the reduction and the elementwise ops of it (and scalars) after it
                steps.append(_build_step("reduce", [j], order, refs, done, leaves, scalars, i))
                done.add(j)
    groups = {}
    for i, n in enumerate(order):
        if req[i] and n.kind != "reduce" and i not in done:
            groups.setdefault((n.shape, str(n.device)), []).append(i)
    for outs in groups.values():
        steps.append(_build_step("map", outs, order, refs, done, leaves, scalars))
    return steps


def _epilogues(order, refs, req):
    """{reduction: result} where a stored result is elementwise ops of one reduction (not
    stored itself) and scalars alone, whose intermediates nothing else reads: one kernel
    computes both (ember.fuse's epilogue)."""
    users = [[] for _ in order]
    for i, r in enumerate(refs):
        for x in r:
            if x is not None and x[0] == "n":
                users[x[1]].append(i)
    out = {}
    for j, n in enumerate(order):
        if not req[j] or n.kind == "reduce":
            continue
        red, seen, stack, ok = None, set(), [j], True
        while stack and ok:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            m = order[i]
            if m.kind == "reduce":
                ok = red is None and not req[i]
                red = i
                continue
            if i != j and req[i]:
                ok = False
            for x in refs[i]:
                if x is None or x[0] == "s":
                    continue
                if x[0] == "l":
                    ok = False
                    break
                stack.append(x[1])
        if ok and red is not None and red not in out:
            if all(u in seen for i in seen if i != j for u in users[i]):
                out[red] = j
    return out


def _build_step(kind, outs, order, refs, done, leaves, scalars, red=None):
    tr = _trace.Tracer()
    params, prox = [], {}

    def get(ref):
        p = prox.get(ref)
        if p is not None:
            return p
        if ref[0] == "n" and ref[1] not in done:
            n = order[ref[1]]
            xs = [None if r is None else get(r) for r in refs[ref[1]]]
            p = _graph.apply(tr, n.kind, n.op, xs, n.extra)
        else:
            node = _graph._param(_sig_of(ref, leaves, scalars, order), len(params))
            params.append(ref)
            tr.nodes.append(node)
            p = _trace.Proxy(node, tr)
        prox[ref] = p
        return p

    try:
        _graph.load_originals()
        nodes = [get(("n", i))._node for i in outs]
        for o, i in zip(nodes, outs, strict=True):
            n = order[i]
            if o.kind in ("param", "const", "host") or not o.array:
                raise _run.Eager("a result that is one of its inputs")
            if o.dtype != n.dtype or o.ndim != len(n.shape):
                raise _run.Eager("a result dtype the recording did not expect")
        if kind == "reduce":
            rnode = nodes[0] if red is None else get(("n", red))._node
            plan = _codegen.Plan(nodes, len(params), reduce=rnode)
        else:
            plan = _codegen.Plan(nodes, len(params))
    except Exception as e:  # the generator cannot do it: these outputs run eagerly
        return Step(kind, outs, None, params, f"{type(e).__name__}: {e}")
    return Step(kind, outs, plan, params)


# ---- running a step ------------------------------------------------------------------------------


def _run_mm(st, order, refs, vals, leaves, owner, why):
    act, src = st.plan
    j = st.outs[0]
    v = _mm.compute(st.kind, j, act, src, order, refs, vals, leaves)
    if owner is not None:
        if st.kind == "mm":
            owner._note_event("fused", why, ("linear",) + ((act,) if act else ()))
        else:
            owner._note_event("eager", "its matmul result is also used elsewhere", (order[j].op,))
    vals[j] = v
    n = order[j]
    n.value = v
    n.kind = "done"


def _run_step(st, order, refs, vals, leaves, scalars, owner, why):
    if st.kind in ("mm", "act"):
        return _run_mm(st, order, refs, vals, leaves, owner, why)
    args = []
    for p in st.params:
        k, i = p[0], p[1]
        args.append(leaves[i] if k == "l" else scalars[i] if k == "s" else vals[i])
    outs = None
    reason = st.why
    if st.ops is None:
        st.ops = tuple(order[i].op for i in st.outs)
        st.rg = any(order[i].rg for i in st.outs)
    if st.plan is not None:
        try:
            outs = _launch.launch(st, args, order)
        except _run.Eager as e:
            reason = str(e)
    if outs is None:
        outs = _eager(st.outs, order, refs, vals, leaves, scalars)
        if owner is not None:
            owner._note_event("eager", reason, st.ops)
    else:
        if st.rg:
            outs = _attach_grad(st, order, refs, vals, leaves, scalars, outs, owner)
        if owner is not None:
            owner._note_event("fused", why, st.ops)
    for i, v in zip(st.outs, outs, strict=True):
        vals[i] = v
        n = order[i]
        n.value = v
        n.kind = "done"


# ---- eager evaluation (the fallback, and the recomputation of a backward) ------------------------


def eval_node(n, xs):
    """One node's value, computed by eager ember from its inputs' values."""
    O = _trace.ORIGINALS
    if n.kind in ("mm", "act"):
        return _mm.eval_node(n, xs)
    if n.kind == "cast":
        return O["astype"](xs[0], n.extra)
    if n.kind == "reduce":
        axis, keepdims = n.extra
        return O[n.op](xs[0], axis=axis, keepdims=keepdims)
    if n.op == "clip":
        return O["clip"](*xs)
    return O[n.op](*xs)


def _eager(outs, order, refs, vals, leaves, scalars):
    """The values of the nodes at positions `outs`, by eager ember (nodes already known in
    `vals` are reused; each node runs under the grad mode it was recorded in)."""
    memo = {}
    lv = leaves

    def get(ref):
        if ref is None:
            return None
        k, i = ref[0], ref[1]
        if k == "l":
            return lv[i]
        if k == "s":
            return scalars[i]
        v = vals[i]
        if v is not None:
            return v
        v = memo.get(i)
        if v is None:
            n = order[i]
            xs = [get(r) for r in refs[i]]
            if n.gm:
                v = eval_node(n, xs)
            else:
                with _NoGrad():
                    v = eval_node(n, xs)
            memo[i] = v
        return v

    return [get(("n", i)) for i in outs]


class _NoGrad:
    def __enter__(self):
        self.prev = _core._is_grad_enabled()
        _core._set_grad_enabled(False)

    def __exit__(self, *exc):
        _core._set_grad_enabled(self.prev)
        return False


# ---- autograd: a fused step is one node; its backward: _backward.py, or recomputed eagerly -----


class _Program:
    """What a fused step's backward needs: the sub-graph (copied, as the session drops its
    nodes) and the leaves' values."""

    __slots__ = ("outs", "order", "refs", "leaves", "scalars", "vals", "closure", "owner")


def _attach_grad(st, order, refs, vals, leaves, scalars, outs, owner):
    from ..autograd import FunctionCtx

    # the inputs of the step that require grad: leaves, or nodes of earlier steps
    need = [i for i in st.outs if order[i].rg]
    closure, nodes = _subgraph(st.outs, order, refs, vals)
    ins = []
    for r in closure:
        k, i = r[0], r[1]
        v = leaves[i] if k == "l" else vals[i]
        if isinstance(v, _core.ndarray) and v.requires_grad:
            ins.append((k, i, v))
    if not ins:
        return outs
    prog = _Program()
    prog.outs = need
    prog.order = [_Frozen(n) for n in order]
    prog.refs = refs
    prog.leaves = list(leaves)
    prog.scalars = scalars
    prog.vals = [vals[i] if (("n", i) in closure) else None for i in range(len(order))]
    prog.closure = nodes
    prog.owner = owner
    pos = {i: k for k, i in enumerate(st.outs)}

    def backward(*grads):
        return _recompute_grads(prog, ins, grads)

    ctx = FunctionCtx()
    ctx._name = "CompiledBackward"
    prev = _core._is_grad_enabled()
    _core._set_grad_enabled(True)
    try:
        new = _core._record_function(
            "CompiledBackward",
            backward,
            ctx,
            [v for _k, _i, v in ins],
            [outs[pos[i]] for i in need],
            True,
        )
    finally:
        _core._set_grad_enabled(prev)
    outs = list(outs)
    for i, a in zip(need, new, strict=True):
        outs[pos[i]] = a
    return outs


class _Frozen:
    """A node's recipe, kept for a backward after the session dropped the node."""

    __slots__ = ("kind", "op", "extra", "gm", "dtype")

    def __init__(self, n):
        self.kind = "reduce" if n.kind == "reduce" else ("cast" if n.kind == "cast" else "op")
        self.op = n.op
        self.extra = n.extra
        self.gm = n.gm
        self.dtype = n.dtype


def _subgraph(outs, order, refs, vals):
    """The references a step reads: leaves and values of earlier steps."""
    seen, found = set(), set()
    stack = list(outs)
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        for r in refs[i]:
            if r is None or r[0] == "s":
                continue
            if r[0] == "l":
                found.add((r[0], r[1]))
            elif vals[r[1]] is not None and r[1] not in outs:
                found.add((r[0], r[1]))
            else:
                stack.append(r[1])
    return found, seen


def _recompute_grads(prog, ins, grads):
    """The backward of a fused step: its graph re-run eagerly under autograd from detached
    copies of its inputs, then differentiated (the gradients equal eager ember's)."""
    from ..autograd import grad as _grad
    from ._backward import fused_grads

    r, why = fused_grads(prog, ins, grads, prog.closure)
    owner = prog.owner
    if owner is not None:
        owner._note_backward(r is not None, why)
    if r is not None:
        return r
    create = _core._is_grad_enabled()  # create_graph: differentiable, from the inputs themselves
    with _Grad():
        lv = list(prog.leaves)
        vals = list(prog.vals)
        xs = []
        for k, i, v in ins:
            d = v if create else v.detach().requires_grad_()
            xs.append(d)
            if k == "l":
                lv[i] = d
            else:
                vals[i] = d
        memo = {}

        def get(ref):
            if ref is None:
                return None
            k, i = ref[0], ref[1]
            if k == "l":
                return lv[i]
            if k == "s":
                return prog.scalars[i]
            v = vals[i]
            if v is not None:
                return v
            v = memo.get(i)
            if v is None:
                n = prog.order[i]
                a = [get(r) for r in prog.refs[i]]
                if n.gm:
                    v = eval_node(n, a)
                else:
                    with _NoGrad():
                        v = eval_node(n, a)
                memo[i] = v
            return v

        ys = [get(("n", i)) for i in prog.outs]
        pairs = [(y, g) for y, g in zip(ys, grads, strict=True) if g is not None]
        if not pairs:
            return tuple(None for _ in ins)
        gs = _grad(
            [y for y, _ in pairs],
            xs,
            [g for _, g in pairs],
            create_graph=create,
            allow_unused=True,
        )
    return tuple(gs)


class _Grad(_NoGrad):
    def __enter__(self):
        self.prev = _core._is_grad_enabled()
        _core._set_grad_enabled(True)


__all__ = ["flush", "eval_node"]
