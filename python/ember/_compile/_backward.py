"""The fused backward of a compiled step: the step's forward sub-graph and the derivative of
each of its ops (rules below, written with ember's elementwise ops) are recorded in a session of
their own and flushed as fused kernels (one per input gradient that needs a sum over broadcast
dimensions, else one for all), so a backward of an elementwise chain costs a kernel or a few
instead of one eager op per derivative term. Steps with an op that has no rule here (max, min,
abs, clip: subgradient conventions; complex dtypes; array exponents), a backward that must
itself be differentiable (create_graph) or several devices return None: the caller then
recomputes the sub-graph eagerly under autograd (_flush._recompute_grads)."""

from __future__ import annotations

import math

from .. import _core
from . import _graph, _lazy
from ._graph import LNode

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def _r(s, name, *xs):
    return _graph.record(s, "op", name, xs)


def _unary(rule):
    return lambda s, g, xs, out: [rule(s, g, xs[0], out)]


# op -> rule(session, upstream grad node, input nodes/scalars, output node) -> grads per input
RULES = {
    "add": lambda s, g, xs, out: [g, g],
    "subtract": lambda s, g, xs, out: [g, _r(s, "negative", g)],
    "multiply": lambda s, g, xs, out: [_r(s, "multiply", g, xs[1]), _r(s, "multiply", g, xs[0])],
    "divide": lambda s, g, xs, out: [
        _r(s, "divide", g, xs[1]),
        _r(s, "negative", _r(s, "divide", _r(s, "multiply", g, out), xs[1])),
    ],
    "negative": _unary(lambda s, g, x, out: _r(s, "negative", g)),
    "positive": _unary(lambda s, g, x, out: g),
    "exp": _unary(lambda s, g, x, out: _r(s, "multiply", g, out)),
    "expm1": _unary(lambda s, g, x, out: _r(s, "multiply", g, _r(s, "add", out, 1))),
    "log": _unary(lambda s, g, x, out: _r(s, "divide", g, x)),
    "log2": _unary(lambda s, g, x, out: _r(s, "divide", g, _r(s, "multiply", x, _LN2))),
    "log10": _unary(lambda s, g, x, out: _r(s, "divide", g, _r(s, "multiply", x, _LN10))),
    "log1p": _unary(lambda s, g, x, out: _r(s, "divide", g, _r(s, "add", x, 1))),
    "sin": _unary(lambda s, g, x, out: _r(s, "multiply", g, _r(s, "cos", x))),
    "cos": _unary(lambda s, g, x, out: _r(s, "negative", _r(s, "multiply", g, _r(s, "sin", x)))),
    "tan": _unary(
        lambda s, g, x, out: _r(s, "multiply", g, _r(s, "add", _r(s, "multiply", out, out), 1))
    ),
    "tanh": _unary(
        lambda s, g, x, out: _r(s, "multiply", g, _r(s, "subtract", 1, _r(s, "multiply", out, out)))
    ),
    "sinh": _unary(lambda s, g, x, out: _r(s, "multiply", g, _r(s, "cosh", x))),
    "cosh": _unary(lambda s, g, x, out: _r(s, "multiply", g, _r(s, "sinh", x))),
    "sqrt": _unary(lambda s, g, x, out: _r(s, "divide", g, _r(s, "multiply", out, 2))),
    "square": _unary(lambda s, g, x, out: _r(s, "multiply", g, _r(s, "multiply", x, 2))),
    "reciprocal": _unary(
        lambda s, g, x, out: _r(s, "negative", _r(s, "multiply", g, _r(s, "multiply", out, out)))
    ),
    "where": lambda s, g, xs, out: [
        None,
        _r(s, "where", xs[0], g, 0) if type(xs[1]) is LNode else None,
        _r(s, "where", xs[0], 0, g) if type(xs[2]) is LNode else None,
    ],
}
_SCALAR_POW = {int, float}


def _pow_rule(s, g, xs, out):
    p = xs[1]
    if p == 0:
        return [_r(s, "multiply", g, 0), None]
    d = _r(s, "multiply", _r(s, "pow", xs[0], p - 1), p)
    return [_r(s, "multiply", g, d), None]


def eligible(prog, closure_nodes):
    """None when every node of the step has a rule (floating dtypes, scalar exponents), else
    the reason it has not."""
    if _core._is_grad_enabled():
        return "create_graph (the backward must be differentiable)"
    for i in closure_nodes:
        n = prog.order[i]
        if not n.gm:
            continue
        if n.dtype not in ("float16", "bfloat16", "float32", "float64"):
            if n.dtype == "bool" or n.dtype[0] in "iu":
                continue  # no gradient flows through it
            return f"{n.op} of dtype {n.dtype}"
        if n.kind == "reduce":
            if n.op not in ("sum", "mean"):
                return f"no fused derivative of {n.op}"
        elif n.kind == "cast":
            continue
        elif n.op == "pow":
            e = prog.refs[i][1]
            if e is None or e[0] != "s" or type(prog.scalars[e[1]]) not in _SCALAR_POW:
                return "a power with an array exponent"
        elif n.op not in RULES:
            return f"no fused derivative of {n.op}"
    return None


def fused_grads(prog, ins, grads, closure_nodes):
    """(the gradients of `ins`, their (kind, index, array)) and None, or None and the reason
    the step's backward runs eagerly."""
    why = eligible(prog, closure_nodes)
    if why is not None:
        return None, why
    arrays = [v for _k, _i, v in ins] + [g for g in grads if g is not None]
    dev = arrays[0].device
    if any(a.device != dev for a in arrays[1:]):
        return None, "several devices"
    prev = _graph.current()
    s = _graph.Session(None)
    _graph.set_current(s)
    try:
        return _run(s, prog, ins, grads, closure_nodes), None
    except _graph.Unfusable as e:
        return None, str(e)
    finally:
        _graph.set_current(prev)


def _run(s, prog, ins, grads, closure_nodes):
    # the forward, replayed as pending nodes over the saved inputs
    node = {}

    def get(ref):
        if ref is None:
            return None
        k, i = ref[0], ref[1]
        if k == "s":
            return prog.scalars[i]
        key = (k, i)
        n = node.get(key)
        if n is None:
            v = prog.leaves[i] if k == "l" else prog.vals[i]
            if v is None:
                f = prog.order[i]
                xs = tuple(get(r) for r in prog.refs[i])
                n = _graph.record(s, f.kind, f.op, xs, f.extra)
            else:
                n = _graph.leaf(v.detach(), s)
            node[key] = n
        return n

    for i in sorted(closure_nodes):
        get(("n", i))
    # the upstream gradients
    gm = {}
    for i, g in zip(prog.outs, grads, strict=True):
        if g is None:
            continue
        f = prog.order[i]
        if f.kind == "reduce":
            axis, keepdims = f.extra
            x = node[("n", i)].inputs[0]
            nd = len(x.shape)
            axes = range(nd) if axis is None else [a % nd for a in _axes(axis)]
            if not keepdims:
                shape = [1 if d in axes else x.shape[d] for d in range(nd)]
                g = g.reshape(tuple(shape))
            gl = _graph.leaf(_core.broadcast_to(g, x.shape), s)  # a view: strides of 0
            if f.op == "mean":
                cnt = 1
                for d in axes:
                    cnt *= x.shape[d]
                gl = _r(s, "divide", gl, float(cnt))
            _acc(s, gm, ("in", i), gl)
        else:
            _acc(s, gm, ("n", i), _graph.leaf(g, s))
    # the rules, in reverse order
    for i in sorted(closure_nodes, reverse=True):
        f = prog.order[i]
        n = node[("n", i)]
        g = gm.pop(("n", i), None)
        if f.kind == "reduce":
            ge = g  # from elementwise ops of it in the same kernel (its epilogue)
            g = gm.pop(("in", i), None)
            if ge is not None:
                axis, keepdims = f.extra
                if axis is not None and not keepdims and len(n.shape) != len(xs_shape(n)):
                    raise _graph.Unfusable("an epilogue of a reduction over some axes")
                if f.op == "mean":
                    x = n.inputs[0]
                    ge = _r(
                        s,
                        "divide",
                        ge,
                        float(max(1, math.prod(x.shape)) // max(1, math.prod(n.shape))),
                    )
                g = ge if g is None else _r(s, "add", g, ge)
            if g is not None:
                _acc_ref(s, gm, prog.refs[i][0], g)
            continue
        if g is None or not f.gm or n.dtype == "bool" or n.dtype[0] in "iu":
            continue
        xs = n.inputs
        if f.kind == "cast":
            x = xs[0]
            if type(x) is LNode and x.dtype != n.dtype:
                g = _graph.record(s, "cast", "astype", (g,), _dtype(x.dtype))
            out = [g]
        elif f.op == "pow":
            out = _pow_rule(s, g, xs, n)
        else:
            out = RULES[f.op](s, g, xs, n)
        for r, gi in zip(prog.refs[i], out, strict=True):
            if gi is not None and r is not None and r[0] != "s":
                _acc_ref(s, gm, r, gi)
    # the input gradients, summed over the dimensions they were broadcast along
    res = []
    keep = []
    for k, i, v in ins:
        g = gm.get((k, i))
        if g is None:
            res.append(None)
            continue
        g = _to_dtype(s, g, v.dtype.name)
        shape = tuple(v.shape)
        if len(g.shape) < len(shape) or any(
            a < b for a, b in zip(g.shape[::-1], shape[::-1], strict=False)
        ):
            # smaller than the input (through a full reduction's epilogue): spread by * 1
            one = _core.broadcast_to(_core.ones((), dtype=v.dtype, device=v.device), shape)
            g = _r(s, "multiply", g, _graph.leaf(one, s))
        if g.shape != shape:
            nd, vd = len(g.shape), len(shape)
            axes = tuple(
                d
                for d in range(nd)
                if d < nd - vd or (shape[d - (nd - vd)] == 1 and g.shape[d] != 1)
            )
            g = _graph.record(s, "reduce", "sum", (g,), (axes, True))
            if math.prod(g.shape) != math.prod(shape):
                raise _graph.Unfusable("a gradient of an unexpected shape")
        z = _lazy.wrap(g)
        keep.append(z)
        res.append((z, shape))
    from ._flush import flush

    flush(s, None, "a fused backward")
    out = []
    for r in res:
        if r is None:
            out.append(None)
            continue
        z, shape = r
        a = _lazy.value(z)
        out.append(a if tuple(a.shape) == shape else a.reshape(shape))
    del keep
    return tuple(out)


def xs_shape(n):
    return n.inputs[0].shape


def _axes(axis):
    return (axis,) if isinstance(axis, int) else tuple(axis)


_dtypes = {}


def _dtype(name):
    d = _dtypes.get(name)
    if d is None:
        d = _dtypes[name] = getattr(_core, name)
    return d


def _to_dtype(s, g, name):
    if g.dtype == name:
        return g
    return _graph.record(s, "cast", "astype", (g,), _dtype(name))


def _acc(s, gm, key, g):
    prev = gm.get(key)
    gm[key] = g if prev is None else _r(s, "add", prev, g)


def _acc_ref(s, gm, r, g):
    _acc(s, gm, (r[0], r[1]), g)
