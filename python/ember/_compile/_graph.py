"""The deferred graph of ember.compile: nodes, the per-thread session that holds the pending
ones, and the recording of an elementwise op or a reduction (its result dtype, number of
dimensions and shape, known at once, come from ember.fuse's tracer, cached per op signature)."""

from __future__ import annotations

import sys
import threading
import warnings

import numpy as np

from .. import _core
from .._fusion import _trace

_local = threading.local()

# Python scalars as the tracer sees them when it asks eager ember for a result dtype (NumPy 2:
# a weak scalar's value never changes the result dtype; values out of an integer loop type's
# range are caught at each launch, which then runs eagerly and raises as eager does).
_CANON = {bool: True, int: 1, float: 1.0, complex: 1j}
_WEAK = (bool, int, float, complex)

FUSABLE = set(_trace.OPS) | set(_trace.ALIASES) | {"where", "clip", "astype"}
FUSABLE |= set(_trace.REDUCTIONS)


class Unfusable(Exception):
    """This op runs eagerly (its reason is the message)."""


class LNode:
    """One value of a compiled call. `value` is the ember array once known (a leaf: an array the
    function was given or an eager result; or a deferred node after its flush); otherwise the
    node is pending: `kind` ("op", "cast", "reduce") of `op` over `inputs` (nodes or scalars)."""

    __slots__ = (
        "kind",
        "op",
        "inputs",
        "extra",
        "dtype",
        "shape",
        "device",
        "value",
        "rg",
        "gm",
        "ref",
        "tok",
        "idx",
        "__weakref__",
    )

    def __init__(self, kind, op, inputs, extra, dtype, shape, device, value=None, rg=False):
        self.kind = kind
        self.op = op
        self.inputs = inputs
        self.extra = extra  # astype: the dtype; reduce: (axis, keepdims)
        self.dtype = dtype  # dtype name
        self.shape = shape
        self.device = device
        self.value = value
        self.rg = rg  # the result requires grad
        self.gm = True  # grad mode when recorded (False: computed as if detached)
        self.ref = None  # weakref of the Lazy showing this node to the user


class Session:
    """The pending nodes of the outermost compiled call running in this thread."""

    __slots__ = ("pending", "leaves", "owner", "flushes", "orig", "bleaves", "blpos", "scalars")

    def __init__(self, owner):
        self.pending = []  # pending nodes in recording order (a topological order)
        self.leaves = {}  # id(array) -> (array, its leaf node): one parameter per array
        self.orig = {}  # id(Leaf) -> the array the compiled function was given
        self.owner = owner  # the Compiled whose call opened the session (stats, options)
        self.flushes = 0
        self.reset()

    def reset(self):
        """A new batch of pending nodes (after a flush)."""
        self.pending = []
        self.leaves = {}  # (per batch: a long loop inside one call keeps no old arrays alive)
        self.bleaves = []  # the known values the batch reads, in order of first use
        self.blpos = {}  # id(node) -> its place in bleaves
        self.scalars = []  # the batch's scalar operands, in order


def current():
    return getattr(_local, "session", None)


def set_current(s):
    _local.session = s


def leaf(arr, s):
    """The leaf node of an ember array (one per array object and session); its value is a plain
    ember.ndarray (a Leaf's shares the Leaf's array)."""
    if s is not None:
        e = s.leaves.get(id(arr))
        if e is not None and e[0] is arr:
            n = e[1]
            if n.extra == arr._version or n.value is None:
                return n
    v = arr if type(arr) is _core.ndarray else _core._wrap_as(_core.ndarray, arr)
    n = LNode(
        "leaf",
        None,
        (),
        arr._version,  # checked at the flush: an in-place write since would be missed
        arr.dtype.name,
        tuple(arr.shape),
        arr.device,
        v,
        arr.requires_grad,
    )
    if s is not None:
        s.leaves[id(arr)] = (arr, n)
    return n


# ---- op signatures -------------------------------------------------------------------------------

_templates = {}


def _sig(x):
    if isinstance(x, LNode):
        return ("a", x.dtype, len(x.shape))
    t = type(x)
    if t in _WEAK:
        return ("w", t)
    if x is None:
        return ("n",)
    return ("s", x.dtype.name)


def _param(s, i):
    if s[0] == "a":
        return _trace.Node("param", True, dtype=s[1], ndim=s[2], index=i)
    if s[0] == "w":
        return _trace.Node("param", False, weak=s[1], value=_CANON[s[1]], index=i)
    return _trace.Node("param", False, dtype=s[1], value=np.dtype(s[1]).type(1), index=i)


def apply(tr, kind, name, xs, extra):
    """The tracer's node of one op over proxies (and None for a missing clip bound)."""
    if kind == "op":
        if name == "clip":
            return _trace.apply_clip(xs[0], xs[1], xs[2], tr=tr)
        return _trace.apply_op(name, xs, tr)
    if kind == "cast":
        return _trace.apply_cast(xs[0], extra, tr)
    axis, keepdims = extra
    return _trace.apply_reduce(name, xs[0], tr, axis=axis, keepdims=keepdims)


def template(kind, name, sig, extra):
    """(result dtype, ndim) of an op signature, or raises Unfusable (cached either way)."""
    key = (kind, name, sig, extra)
    t = _templates.get(key)
    if t is None:
        try:
            load_originals()
            tr = _trace.Tracer()
            xs = []
            for i, s in enumerate(sig):
                if s[0] == "n":
                    xs.append(None)
                    continue
                n = _param(s, i)
                tr.nodes.append(n)
                xs.append(_trace.Proxy(n, tr))
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                p = apply(tr, kind, name, xs, extra)
            n = p._node
            if kind == "cast" and n.kind == "param":
                raise Unfusable("astype to the same dtype (a copy)")
            if not n.array:
                raise Unfusable("a scalar result")
            t = (n.dtype, n.ndim)
        except Unfusable as e:
            t = e
        except Exception as e:  # the eager op raises (or is not elementwise): it runs eagerly
            t = Unfusable(f"{type(e).__name__}: {e}")
        _templates[key] = t
    if isinstance(t, Exception):
        raise t
    return t


_loaded = []


def load_originals():
    """ember.fuse's table of the ember namespace's functions (read before any patching)."""
    if not _loaded:
        with _trace._lock:
            _trace._load_originals(sys.modules["ember"])
        _loaded.append(True)


# ---- shapes --------------------------------------------------------------------------------------


def broadcast(shapes):
    first = shapes[0]
    if all(s == first for s in shapes):
        return first
    nd = max(len(s) for s in shapes)
    out = [1] * nd
    for s in shapes:
        off = nd - len(s)
        for i, d in enumerate(s):
            o = out[off + i]
            if d != o:
                if o == 1:
                    out[off + i] = d
                elif d != 1:
                    raise Unfusable("shapes that do not broadcast")
    return tuple(out)


def reduced_shape(shape, axis, keepdims):
    nd = len(shape)
    if nd == 0:
        return ()
    if axis is None:
        axes = set(range(nd))
    else:
        ax = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        try:
            axes = {int(a) % nd for a in ax if -nd <= int(a) < nd}
        except (TypeError, ValueError):
            raise Unfusable("an axis that is not an int") from None
        if len(axes) != len(ax):
            raise Unfusable("an axis out of range or repeated")
    if keepdims:
        return tuple(1 if d in axes else shape[d] for d in range(nd))
    return tuple(shape[d] for d in range(nd) if d not in axes)


# ---- recording -----------------------------------------------------------------------------------


def scalar_ok(x):
    t = type(x)
    if t in _WEAK:
        return True
    return isinstance(x, np.generic) and x.dtype.kind in "biufc" and x.dtype.name != "bfloat16"


_NTOK = [("n", i) for i in range(256)]
_LTOK = [("l", i) for i in range(64)]
_fast = {}  # (kind, name, extra, flattened operand signature) -> (dtype, ndim)


def _sig_of_inputs(xs):
    sig = []
    for x in xs:
        if type(x) is LNode:
            sig.append(("a", x.dtype, len(x.shape)))
        else:
            t = type(x)
            sig.append(("w", t) if t in _WEAK else ("n",) if x is None else ("s", x.dtype.name))
    return tuple(sig)


def _ltok(s, x):
    """The token of an array operand: a pending node's place, or a known value's leaf index."""
    if x.value is None:
        i = x.idx
        return _NTOK[i] if i < 256 else ("n", i)
    j = s.blpos.get(id(x))
    if j is None:
        j = s.blpos[id(x)] = len(s.bleaves)
        s.bleaves.append(x)
    return _LTOK[j] if j < 64 else ("l", j)


def _stok(s, x):
    t = type(x)
    if t not in _WEAK:
        t = ("s", x.dtype.name)
    k = len(s.scalars)
    s.scalars.append(x)
    return t, ("s", k, t)


def record(s, kind, name, xs, extra=None):
    """A pending node of op `name` over `xs` (nodes, scalars, None for a missing clip bound), or
    raises Unfusable."""
    nx = len(xs)
    shapes = None
    x0 = xs[0]
    if nx == 1 and type(x0) is LNode:  # unary ops, casts, reductions
        first = x0
        key = (kind, name, extra, x0.dtype, len(x0.shape))
        toks = (_ltok(s, x0),)
        rg = x0.rg
    elif nx == 2 and type(x0) is LNode and type(xs[1]) is not LNode and xs[1] is not None:
        first = x0  # array op scalar
        t, tk = _stok(s, xs[1])
        key = (kind, name, extra, x0.dtype, len(x0.shape), t)
        toks = (_ltok(s, x0), tk)
        rg = x0.rg
    else:
        key = [kind, name, extra]
        tl = []
        first = None
        rg = False
        for x in xs:
            if type(x) is LNode:
                key.append(x.dtype)
                key.append(len(x.shape))
                if first is None:
                    first = x
                else:
                    if x.device != first.device:
                        raise Unfusable("arrays on several devices")
                    if x.shape != first.shape:
                        shapes = True
                if x.rg:
                    rg = True
                tl.append(_ltok(s, x))
            elif x is None:
                key.append(None)
                tl.append(None)
            else:
                t, tk = _stok(s, x)
                key.append(t)
                tl.append(tk)
        key = tuple(key)
        toks = tuple(tl)
    if first is None:
        raise Unfusable("no array operand")
    t = _fast.get(key)
    if t is None:
        t = _fast[key] = template(kind, name, _sig_of_inputs(xs), extra)
    dtype, ndim = t
    if kind == "reduce":
        shape = reduced_shape(first.shape, *extra)
    elif shapes is None:
        shape = first.shape
    else:
        shape = broadcast([x.shape for x in xs if type(x) is LNode])
    if len(shape) != ndim:
        raise Unfusable("an unexpected result shape")
    n = LNode(kind, name, xs, extra, dtype, shape, first.device)
    n.idx = len(s.pending)
    if rg:
        if _core._is_grad_enabled():
            n.rg = dtype != "bool" and dtype[0] in "fbc"  # integer results need no gradient
        else:
            n.gm = False
    n.tok = (kind, name, extra, n.rg, n.gm, toks)
    s.pending.append(n)
    return n
