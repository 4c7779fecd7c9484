"""Tracing for ember.fuse: the Python function runs once per argument signature on proxy
objects that record an expression DAG. Each node's dtypes come from ember itself (the eager op
run once on tiny CPU arrays of the right dtypes, cached), so the fused kernel computes what eager
ember computes."""

from __future__ import annotations

import itertools
import operator
import threading
import types
import warnings

import numpy as np

from .. import _core
from .._op_names import EXTRA_ALIASES, NUMPY_NAMES

# ---- the op table -------------------------------------------------------------------------------

OPS = dict(_core.elementwise_ops())  # name -> arity
ALIASES = {v: k for k, v in NUMPY_NAMES.items()}
ALIASES.update(EXTRA_ALIASES)
ALIASES.update({"bitwise_not": "bitwise_invert", "amax": "max", "amin": "min"})
BOOL_OUT = {
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "signbit",
    "isnan",
    "isinf",
    "isfinite",
}
COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
CAST_BOOL = {"logical_and", "logical_or", "logical_xor", "logical_not"}
REAL_OUT = {"abs", "real", "imag"}
SAME_LOOP_AS_INPUT = {"isnan", "isinf", "isfinite", "abs", "real", "imag"}
EXACT_HALF = {"nextafter"}
REDUCTIONS = ("sum", "prod", "max", "min", "mean", "any", "all")
HALF = ("float16", "bfloat16")

_BINOPS = {
    "add": "add",
    "sub": "subtract",
    "mul": "multiply",
    "truediv": "divide",
    "floordiv": "floor_divide",
    "mod": "remainder",
    "pow": "pow",
    "and": "bitwise_and",
    "or": "bitwise_or",
    "xor": "bitwise_xor",
    "lshift": "bitwise_left_shift",
    "rshift": "bitwise_right_shift",
}
_CMPOPS = {
    "eq": "equal",
    "ne": "not_equal",
    "lt": "less",
    "le": "less_equal",
    "gt": "greater",
    "ge": "greater_equal",
}
_UNOPS = {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "bitwise_invert"}

_ids = itertools.count()


class FuseTraceError(TypeError):
    """A value inside a fused function that ember.fuse cannot trace."""


# ---- nodes --------------------------------------------------------------------------------------


class Node:
    """One value of the traced function. ``array`` nodes are per element (a parameter, an op, a
    cast or the final reduction); the others are scalars, evaluated on the host at each call
    (parameters, constants and computations on scalars only)."""

    __slots__ = (
        "id",
        "kind",
        "array",
        "dtype",
        "weak",
        "ndim",
        "value",
        "index",
        "op",
        "inputs",
        "loop",
        "compute",
        "fn",
        "axis",
        "keepdims",
        "acc",
    )

    def __init__(self, kind, array, dtype=None, weak=None, ndim=0, value=None, **kw):
        self.id = next(_ids)
        self.kind = kind  # param | const | host | op | cast | reduce
        self.array = array
        self.dtype = dtype  # storage dtype name (arrays and strong scalars)
        self.weak = weak  # bool/int/float/complex for Python scalars
        self.ndim = ndim
        self.value = value  # trace-time value of scalar nodes
        self.index = kw.get("index")
        self.op = kw.get("op")
        self.inputs = kw.get("inputs", ())
        self.loop = kw.get("loop")
        self.compute = kw.get("compute")
        self.fn = kw.get("fn")
        self.axis = kw.get("axis")
        self.keepdims = kw.get("keepdims", False)
        self.acc = kw.get("acc")


def _weak_type(v):
    for t in (bool, int, float, complex):
        if type(v) is t:
            return t
    return None


def scalar_node(kind, value, **kw):
    """A scalar node of a Python scalar (weak), a NumPy scalar or a 0-d ember array (strong)."""
    w = _weak_type(value)
    if w is not None:
        return Node(kind, False, weak=w, value=value, **kw)
    if isinstance(value, np.generic):
        return Node(kind, False, dtype=value.dtype.name, value=value, **kw)
    if isinstance(value, _core.ndarray) and value.ndim == 0:
        return Node(kind, False, dtype=value.dtype.name, value=value, **kw)
    raise FuseTraceError(
        f"ember.fuse: a {type(value).__name__} cannot be used inside a fused function (arrays "
        "passed to it, Python and NumPy scalars can)"
    )


_reps = {}


def _rep(node):
    """A representative operand of a node for asking eager ember about dtypes."""
    if not node.array:
        return node.value
    key = (node.dtype, node.ndim)
    r = _reps.get(key)
    if r is None:
        r = _reps[key] = _core.ones((1,) * node.ndim, dtype=node.dtype, device="cpu")
    return r


_infer_cache = {}


def _sig(node):
    if node.array:
        return ("a", node.dtype, node.ndim)
    if node.weak is not None:
        return ("w", node.weak, node.value)
    return ("s", node.dtype)


def infer(fn, name, nodes, kwargs=()):
    """The eager result (dtype name, ndim) of `fn` over the nodes' representatives (cached)."""
    key = (name, tuple(_sig(n) for n in nodes), tuple(kwargs))
    r = _infer_cache.get(key)
    if r is None:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = fn(*[_rep(n) for n in nodes], **dict(kwargs))
        r = _infer_cache[key] = (out.dtype.name, out.ndim)
    return r


def loop_dtype(name, nodes, out):
    """The dtype of the loop eager ember runs `name` in (src/core/elementwise.cpp's resolution)."""
    if name in CAST_BOOL:
        return "bool"
    if name in COMPARISONS:
        from .._dtypes import result_type

        return result_type(*[_rep(n) for n in nodes]).name
    if name in SAME_LOOP_AS_INPUT:
        return nodes[0].dtype
    if name == "signbit":
        return infer(ORIGINALS["sin"], "sin", nodes)[0]
    return out


def compute_dtype(name, loop):
    return "float32" if loop in HALF and name not in EXACT_HALF else loop


# ---- the proxies --------------------------------------------------------------------------------


class Tracer:
    """The state of one trace: the nodes made, the originals of patched functions."""

    def __init__(self):
        self.nodes = []
        self.eager_reason = None

    def add(self, node):
        self.nodes.append(node)
        return Proxy(node, self)


def _node_of(x, tr):
    if isinstance(x, Proxy):
        return x._node
    n = scalar_node("const", x)
    tr.nodes.append(n)
    return n


def _is_scalarish(x):
    return _weak_type(x) is not None or isinstance(x, np.generic)


def apply_op(name, args, tr, fn=None):
    """Records elementwise op `name` over args (proxies, Python or NumPy scalars)."""
    name = ALIASES.get(name, name)
    if name not in OPS and name not in ("clip",):
        raise TypeError(f"ember.fuse: {name} is not an elementwise operation")
    for a in args:
        if not isinstance(a, Proxy) and not _is_scalarish(a):
            raise TypeError(
                f"ember.fuse: ember.{name} got a {type(a).__name__}; only arrays passed to "
                "the fused function and scalars can be used inside it"
            )
    orig = fn or ORIGINALS[name]
    if not any(isinstance(a, Proxy) and a._node.array for a in args):
        # Scalars only: computed on the host at each call, as Python would (eagerly).
        nodes = [_node_of(a, tr) for a in args]
        val = orig(*[n.value for n in nodes])
        n = scalar_node("host", val, fn=orig, inputs=tuple(nodes))
        return tr.add(n)
    nodes = [_node_of(a, tr) for a in args]
    if name == "clip":
        return _clip(nodes, tr)
    out, ndim = infer(orig, name, nodes)
    op = name
    if name == "pow" and not nodes[1].array and nodes[1].weak is not None and nodes[0].array:
        e, t = nodes[1].value, nodes[0].dtype
        if nodes[1].kind == "const":
            if nodes[1].weak is float and e == 0.5 and t.startswith(("float", "bfloat")):
                op, nodes = "sqrt", nodes[:1]
            elif t != "bool" and (
                (nodes[1].weak is int and e == 2)
                or (nodes[1].weak is float and e == 2.0 and t[0] in "fbc" and t != "bool")
            ):
                op, nodes = "square", nodes[:1]
    loop = loop_dtype(op, nodes, out)
    n = Node(
        "op",
        True,
        dtype=out,
        ndim=ndim,
        op=op,
        inputs=tuple(nodes),
        loop=loop,
        compute=compute_dtype(op, loop),
    )
    return tr.add(n)


def _clip(nodes, tr):
    """clip(x, lo, hi) as ember.clip does it: a missing bound (or a Python int bound beyond an
    integer x's range) is no bound, so one bound is maximum/minimum."""
    x, lo, hi = nodes
    if x.array and x.dtype[0] in "iu":
        info = np.iinfo(x.dtype)
        # Literal bounds only: a scalar argument's bound beyond the range is checked at each
        # call (the call then runs eagerly).
        if lo.weak is int and lo.kind == "const" and lo.value <= info.min:
            lo = None
        if hi.weak is int and hi.kind == "const" and hi.value >= info.max:
            hi = None
    lo = None if lo is not None and lo.kind == "const" and lo.value is None else lo
    hi = None if hi is not None and hi.kind == "const" and hi.value is None else hi
    if lo is None and hi is None:
        return Proxy(x, tr)
    if lo is None:
        return apply_op("minimum", [Proxy(x, tr), Proxy(hi, tr)], tr)
    if hi is None:
        return apply_op("maximum", [Proxy(x, tr), Proxy(lo, tr)], tr)
    out, ndim = infer(ORIGINALS["clip"], "clip", [x, lo, hi])
    n = Node(
        "op",
        True,
        dtype=out,
        ndim=ndim,
        op="clip",
        inputs=(x, lo, hi),
        loop=out,
        compute=compute_dtype("clip", out),
    )
    return tr.add(n)


def apply_clip(x, lo=None, hi=None, tr=None, **kw):
    lo = kw.get("a_min", kw.get("min", lo))
    hi = kw.get("a_max", kw.get("max", hi))
    xs = [_node_of(x, tr)]
    for b in (lo, hi):
        if b is None:
            n = Node("const", False, value=None)
            xs.append(n)
        else:
            xs.append(_node_of(b, tr))
    if not xs[0].array:
        return apply_op("clip", [x, lo, hi], tr)
    return _clip(xs, tr)


def apply_where(cond, x, y, tr):
    return apply_op("where", [cond, x, y], tr)


def apply_cast(x, dtype, tr):
    node = x._node
    if not node.array:
        if node.weak is not None:
            raise AttributeError(f"'{node.weak.__name__}' object has no attribute 'astype'")
        n = scalar_node("host", node.value.astype(dtype), fn=_astype(dtype), inputs=(node,))
        return tr.add(n)
    out = _rep(node).astype(dtype).dtype.name
    if out == node.dtype:
        return x
    return tr.add(Node("cast", True, dtype=out, ndim=node.ndim, inputs=(node,)))


def _astype(dtype):
    return lambda v: v.astype(dtype)


def apply_reduce(name, x, tr, axis=None, keepdims=False, **kw):
    name = ALIASES.get(name, name)
    for k, v in kw.items():
        if k == "dtype" and v is None or k == "out" and v is None:
            continue
        raise TypeError(f"ember.fuse: {name}(..., {k}=) is not supported inside a fused function")
    if not isinstance(x, Proxy):
        x = tr.add(_node_of(x, tr))
    node = x._node
    if not node.array:
        raise TypeError(f"ember.fuse: {name} of a scalar inside a fused function")
    if isinstance(axis, list):
        axis = tuple(axis)
    kwargs = (("axis", axis), ("keepdims", bool(keepdims)))
    out, ndim = infer(ORIGINALS[name], name, [node], kwargs)
    if node.ndim == 0:
        axes = ()
    elif axis is None:
        axes = tuple(range(node.ndim))
    else:
        ax = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axes = tuple(sorted(operator.index(a) % node.ndim for a in ax))
    acc = _acc_dtype(name, node.dtype, out)
    n = Node(
        "reduce",
        True,
        dtype=out,
        ndim=ndim,
        op=name,
        inputs=(node,),
        axis=axes,
        keepdims=bool(keepdims),
        acc=acc,
    )
    return tr.add(n)


def _acc_dtype(name, src, out):
    """reducetable.hpp's accumulator rule (mean: the dtype its sum runs in)."""
    if name in ("sum", "prod"):
        if out == "bool" or out.startswith("int"):
            return "int64"
        if out.startswith("uint"):
            return "uint64"
        if out.startswith("complex") or out == "float64":
            return out
        return "float32"
    if name in ("max", "min"):
        return "float32" if src in HALF else src
    if name in ("any", "all"):
        return "bool"
    # mean: float64 for integers and bool, float32 for the 16-bit floats, else its own dtype
    return "float32" if out in HALF else out


def _binop(name, reflected=False):
    def f(self, other):
        if isinstance(other, Proxy) or _is_scalarish(other):
            args = [other, self] if reflected else [self, other]
            if not self._node.array and not (isinstance(other, Proxy) and other._node.array):
                return _host_binop(name, args, self._tr, reflected)
            return apply_op(name, args, self._tr)
        return NotImplemented

    return f


_PYOPS = {
    "add": operator.add,
    "subtract": operator.sub,
    "multiply": operator.mul,
    "divide": operator.truediv,
    "floor_divide": operator.floordiv,
    "remainder": operator.mod,
    "pow": operator.pow,
    "bitwise_and": operator.and_,
    "bitwise_or": operator.or_,
    "bitwise_xor": operator.xor,
    "bitwise_left_shift": operator.lshift,
    "bitwise_right_shift": operator.rshift,
    "equal": operator.eq,
    "not_equal": operator.ne,
    "less": operator.lt,
    "less_equal": operator.le,
    "greater": operator.gt,
    "greater_equal": operator.ge,
    "negative": operator.neg,
    "positive": operator.pos,
    "abs": operator.abs,
    "bitwise_invert": operator.invert,
}


def _host_binop(name, args, tr, reflected=False):
    """Python's operator on scalars only (Python's own arithmetic, evaluated at each call)."""
    nodes = [_node_of(a, tr) for a in args]
    fn = _PYOPS[name]
    val = fn(*[n.value for n in nodes])
    return tr.add(scalar_node("host", val, fn=fn, inputs=tuple(nodes)))


def _unop(name):
    def f(self):
        if not self._node.array:
            return _host_binop(name, [self], self._tr)
        return apply_op(name, [self], self._tr)

    return f


class Proxy:
    """A value inside a fused function while it is traced: an array or a scalar argument, or
    something computed from them. Supports what ember arrays support elementwise."""

    __slots__ = ("_node", "_tr")
    __array_priority__ = 1000

    def __init__(self, node, tr):
        self._node = node
        self._tr = tr

    @property
    def dtype(self):
        n = self._node
        if n.dtype is None:
            raise AttributeError(f"'{n.weak.__name__}' object has no attribute 'dtype'")
        return _rep(n).dtype if n.array else n.value.dtype

    @property
    def ndim(self):
        return self._node.ndim

    @property
    def shape(self):
        raise TypeError("ember.fuse: the shape of an array is not known inside a fused function")

    @property
    def real(self):
        return apply_op("real", [self], self._tr)

    @property
    def imag(self):
        return apply_op("imag", [self], self._tr)

    def conj(self):
        return apply_op("conj", [self], self._tr)

    conjugate = conj

    def astype(self, dtype, copy=True):
        return apply_cast(self, dtype, self._tr)

    def clip(self, min=None, max=None, **kw):
        return apply_clip(self, min, max, tr=self._tr, **kw)

    def __bool__(self):
        raise TypeError(
            "ember.fuse: the truth value of an array inside a fused function is unknown "
            "(a data-dependent branch cannot be fused); use ember.where"
        )

    def __getitem__(self, key):
        raise TypeError("ember.fuse: indexing is not an elementwise operation and cannot be fused")

    def __setitem__(self, key, value):
        raise TypeError("ember.fuse: assignment into an array cannot be fused")

    def __iter__(self):
        raise TypeError("ember.fuse: iterating over an array cannot be fused")

    def __len__(self):
        raise TypeError("ember.fuse: the length of an array is not known inside a fused function")

    def __matmul__(self, other):
        raise TypeError("ember.fuse: matmul is not an elementwise operation and cannot be fused")

    __rmatmul__ = __matmul__

    __hash__ = object.__hash__

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs:
            raise TypeError(f"ember.fuse: numpy.{ufunc.__name__}.{method} cannot be fused")
        name = ALIASES.get(ufunc.__name__, ufunc.__name__)
        if name not in OPS:
            raise TypeError(f"ember.fuse: numpy.{ufunc.__name__} is not an ember elementwise op")
        return apply_op(name, list(inputs), self._tr)

    def __array_function__(self, func, types_, args, kwargs):
        name = func.__name__
        if name in REDUCTIONS or name in ("amax", "amin"):
            return apply_reduce(name, args[0], self._tr, *args[1:], **kwargs)
        if name == "where" and len(args) == 3:
            return apply_where(*args, self._tr)
        if name == "clip":
            return apply_clip(*args, tr=self._tr, **kwargs)
        raise TypeError(f"ember.fuse: numpy.{name} is not an elementwise operation")


for _py, _op in _BINOPS.items():
    setattr(Proxy, f"__{_py}__", _binop(_op))
    setattr(Proxy, f"__r{_py}__", _binop(_op, reflected=True))
for _py, _op in _CMPOPS.items():
    setattr(Proxy, f"__{_py}__", _binop(_op))
for _py, _op in _UNOPS.items():
    setattr(Proxy, f"__{_py}__", _unop(_op))
for _py in list(_BINOPS):
    setattr(
        Proxy,
        f"__i{_py}__",
        (
            lambda name: (
                lambda self, other: (_ for _ in ()).throw(
                    TypeError(
                        f"ember.fuse: in-place {name} (x {name}= y) writes into an argument and "
                        "cannot be fused; write y = x + ... and return it"
                    )
                )
            )
        )(_py),
    )


def _reduce_method(name):
    def f(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return apply_reduce(name, self, self._tr, axis=axis, keepdims=keepdims, dtype=dtype, **kw)

    return f


for _r in REDUCTIONS:
    setattr(Proxy, _r, _reduce_method(_r))


# ---- patching the ember namespace while tracing --------------------------------------------------

ORIGINALS = {}
_lock = threading.RLock()


def _load_originals(mod):
    if ORIGINALS:
        return
    for name in list(OPS) + list(ALIASES) + ["where", "clip", "astype", *REDUCTIONS]:
        f = getattr(mod, name, None)
        if f is not None:
            ORIGINALS[name] = f
    for a, b in ALIASES.items():
        if b in ORIGINALS:
            ORIGINALS.setdefault(a, ORIGINALS[b])
        if a in ORIGINALS:
            ORIGINALS.setdefault(b, ORIGINALS[a])


def _has_proxy(args, kwargs):
    return any(isinstance(a, Proxy) for a in args) or any(
        isinstance(v, Proxy) for v in kwargs.values()
    )


def _tracer_of(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, Proxy):
            return a._tr
    return None


def _wrapper(name, orig):
    canon = ALIASES.get(name, name)

    if canon in OPS:

        def f(*args, **kwargs):
            if not _has_proxy(args, kwargs):
                return orig(*args, **kwargs)
            if kwargs:
                raise TypeError(
                    f"ember.fuse: ember.{name}(..., {', '.join(kwargs)}=) cannot be fused"
                )
            return apply_op(canon, list(args), _tracer_of(args, kwargs), fn=orig)

    elif canon in REDUCTIONS:

        def f(x, *args, **kwargs):
            if not _has_proxy((x, *args), kwargs):
                return orig(x, *args, **kwargs)
            keys = ("axis", "dtype", "out", "keepdims")
            kwargs.update(zip(keys, args, strict=False))
            return apply_reduce(canon, x, _tracer_of((x,), kwargs), **kwargs)

    elif canon == "clip":

        def f(x, *args, **kwargs):
            if not _has_proxy((x, *args), kwargs):
                return orig(x, *args, **kwargs)
            return apply_clip(x, *args, tr=_tracer_of((x, *args), kwargs), **kwargs)

    elif canon == "astype":

        def f(x, dtype, *args, **kwargs):
            if not _has_proxy((x,), {}):
                return orig(x, dtype, *args, **kwargs)
            return apply_cast(x, dtype, x._tr)

    else:

        def f(*args, **kwargs):
            if not _has_proxy(args, kwargs):
                return orig(*args, **kwargs)
            raise TypeError(
                f"ember.fuse: ember.{name} is not an elementwise operation and cannot be fused "
                "(a fused function may use elementwise ops, where, astype and one final "
                "reduction: sum, prod, max, min, mean, any, all)"
            )

    f.__name__ = name
    f.__wrapped__ = orig
    return f


def _patchable(v):
    if isinstance(v, (type, types.ModuleType)):
        return False
    t = type(v).__name__
    return isinstance(v, (types.FunctionType, types.BuiltinFunctionType)) or t in (
        "builtin_function",
        "nb_func",
    )


class patched:
    """Context: the ember namespace's functions replaced by tracing-aware wrappers (which call
    the originals when no proxy is among their arguments, so other threads are unaffected)."""

    def __init__(self, mod):
        self.mod = mod
        self.saved = {}

    def __enter__(self):
        _lock.acquire()
        _load_originals(self.mod)
        for name, v in list(vars(self.mod).items()):
            if name.startswith("_") or not _patchable(v) or name == "fuse":
                continue
            self.saved[name] = v
            setattr(self.mod, name, _wrapper(name, v))
        return self

    def __exit__(self, *exc):
        try:
            for name, v in self.saved.items():
                setattr(self.mod, name, v)
        finally:
            _lock.release()
        return False
