"""ember.compile's two array types. A Lazy is what an elementwise op (or a reduction) returns
inside a compiled call: it answers shape, dtype, ndim and device at once; any other use (a
non-fusable op, a host read, an attribute of ember.ndarray it does not know) first computes every
pending value (a flush), then acts on the ember array. It passes for an ember.ndarray
(``isinstance(x, ember.ndarray)``), and ember's C++ functions compute it when given one. A Leaf is
an array the call was given (or an eager result inside it): a real ember.ndarray whose
elementwise ops defer. Their methods: _leaf.py."""

from __future__ import annotations

import dis
import operator
import sys
import weakref

from .. import _core
from .._fusion import _trace
from . import _graph
from ._graph import _WEAK, Unfusable, _local, current

_ndarray = _core.ndarray
_wrap_as = _core._wrap_as
_BINARY_OP = dis.opmap.get("BINARY_OP", -1)
_COMPARE_OP = dis.opmap.get("COMPARE_OP", -1)
_NB_INPLACE = 13  # BINARY_OP's arguments from NB_INPLACE_ADD on are the in-place operators
_CALLS = {
    dis.opmap[k] for k in ("CALL", "PRECALL", "CALL_FUNCTION_EX", "CALL_FUNCTION") if k in dis.opmap
}
_codes = []


def _operand_code():
    if not _codes:
        from .._array import _operand

        _codes.append(_operand.__code__)
    return _codes[0]


_dtypes = {}


class Leaf(_ndarray):
    """An array given to a compiled function, as the function sees it: an ember.ndarray sharing
    the caller's array (its data and autograd identity), whose elementwise ops and reductions
    defer (methods: _leaf.py)."""

    __slots__ = ()
    _ember_compile = True  # ember.fuse inlines a fused function called with one


def _flush(s, need=None, why="a value was needed"):
    from ._flush import flush

    flush(s, need, why)


def wrap(n):
    z = Lazy.__new__(Lazy)
    object.__setattr__(z, "_n", n)
    n.ref = weakref.ref(z)
    return z


def value(x):
    """The ember array of a Lazy (computing the pending graph if needed), a plain ember.ndarray
    sharing a Leaf's array (same data, same autograd identity), or x itself."""
    t = type(x)
    if t is not Lazy:
        if t is Leaf:
            return _wrap_as(_ndarray, x)
        return x
    n = x._n
    if n.value is None:
        s = current()
        if s is None:  # pragma: no cover - a session computes what it leaves reachable
            raise RuntimeError("ember.compile: a deferred value outlived its compiled call")
        _flush(s, n)
    return n.value


def materialize_all(why):
    """Computes every reachable pending value of this thread's session (before an eager op)."""
    s = current()
    if s is not None and s.pending:
        if s.owner is not None:
            s.owner._eager_point(why)
        _flush(s, None, why)


def unwrap(x):
    """`x` with its Lazies and Leaves (also inside lists, tuples and dicts) replaced by ember
    arrays (a Leaf by the array the compiled function was given, when known)."""
    t = type(x)
    if t is Lazy:
        return value(x)
    if t is Leaf:
        s = current()
        e = s.orig.get(id(x)) if s is not None else None
        return e[1] if e is not None and e[0] is x else value(x)
    if t is tuple or t is list:
        if any(type(e) in (Lazy, Leaf, tuple, list, dict) for e in x):
            return t(unwrap(e) for e in x)
        return x
    if t is dict:
        return {k: unwrap(v) for k, v in x.items()}
    return x


def deferred(kind, name, args, extra, eager):
    """The deferred result of an op, or (when it cannot be deferred) `eager` run on the values
    after a flush."""
    s = getattr(_local, "session", None)
    if s is not None:
        try:
            xs = []
            for a in args:
                t = type(a)
                if t is Lazy:
                    xs.append(a._n)
                elif t is _ndarray or t is Leaf or isinstance(a, _ndarray):
                    xs.append(_graph.leaf(a, s))  # (a Parameter too)
                elif a is None or t in _WEAK or _graph.scalar_ok(a):
                    xs.append(a)
                else:
                    raise Unfusable(f"a {t.__name__} operand")
            return wrap(_graph.record(s, kind, name, tuple(xs), extra))
        except Unfusable as e:
            why = f"{name}: {e}"
    else:
        why = None
    if why is not None:
        materialize_all(why)
    return eager(*[value(a) for a in args])


def as_leaf(r):
    """An eager result inside a compiled call, as a Leaf (its elementwise ops defer too)."""
    if type(r) is _ndarray and getattr(_local, "session", None) is not None:
        return _wrap_as(Leaf, r)
    return r


def eager_call(name, fn, args, kwargs):
    """A non-fusable call with Lazies among its arguments: a flush, then `fn` on the values."""
    materialize_all(name)
    return fn(*unwrap(args), **unwrap(kwargs))


# ---- the class -----------------------------------------------------------------------------------


def _binop(name, pyop, reflected=False):
    if reflected:

        def f(self, other):
            return deferred("op", name, (other, self), None, lambda a, b: pyop(a, b))

    else:

        def f(self, other):
            return deferred("op", name, (self, other), None, pyop)

    return f


def _unop(name, pyop):
    def f(self):
        return deferred("op", name, (self,), None, pyop)

    return f


def _inplace(pyop):
    def f(self, other):
        materialize_all("an in-place operator")
        v = value(self)
        r = pyop(v, value(other))
        n = self._n
        if r is v:
            if n.kind == "leaf":
                n.extra = v._version
            return self
        return r

    return f


def _eager_dunder(name):
    def f(self, *args, **kwargs):
        materialize_all(name)
        return getattr(value(self), name)(*unwrap(args), **unwrap(kwargs))

    f.__name__ = name
    return f


class Lazy:
    """A deferred ember array of a compiled call (see the module's documentation)."""

    __slots__ = ("_n", "__weakref__")
    __array_priority__ = 1000
    _ember_compile = True
    __hash__ = _ndarray.__hash__

    @property
    def __class__(self):
        return _ndarray

    def __ember_array__(self):
        f = sys._getframe(1)
        if f.f_code is _operand_code():
            # ember's C++ converting this as an operand of an ember array: in `x + lazy` (a
            # Python operator, not in place) it declines, so that Lazy's reflected operator
            # defers the op (and a 0-d value keeps its autograd history, which the operand
            # conversion of a 0-d array, a NumPy scalar's path, would drop)
            g = f.f_back
            if g is not None:
                code = g.f_code.co_code
                i = g.f_lasti
                op = code[i] if 0 <= i < len(code) else None
                if op == _COMPARE_OP or (op == _BINARY_OP and code[i + 1] < _NB_INPLACE):
                    raise TypeError("ember.compile: a deferred operand (its reflected operator)")
                if op in _CALLS and not self._n.shape and self.requires_grad:
                    # a 0-d operand of a called ember function becomes a scalar there (NumPy
                    # scalars' path), which would drop its autograd history: the function's
                    # wrapper (ember/_calls.py) takes this as an argument error and calls it
                    # again with the computed array
                    raise TypeError(
                        "ember.compile(): incompatible function arguments (a deferred 0-d "
                        "value that requires grad: computed, then the call is made again)"
                    )
        return value(self)

    # metadata, known without computing anything
    @property
    def shape(self):
        return self._n.shape

    @property
    def ndim(self):
        return len(self._n.shape)

    @property
    def dtype(self):
        name = self._n.dtype
        d = _dtypes.get(name)
        if d is None:
            d = _dtypes[name] = getattr(_core, name)
        return d

    @property
    def device(self):
        return self._n.device

    @property
    def requires_grad(self):
        n = self._n
        return n.value.requires_grad if n.value is not None else n.rg

    @requires_grad.setter
    def requires_grad(self, v):
        value(self).requires_grad = v

    def __len__(self):
        sh = self._n.shape
        if not sh:
            return len(value(self))
        return sh[0]

    # everything else: the ember array's
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        materialize_all(name)
        return getattr(value(self), name)

    def __setattr__(self, name, v):
        materialize_all(name)
        setattr(value(self), name, v)

    def __delattr__(self, name):
        materialize_all(name)
        delattr(value(self), name)

    def __dir__(self):
        return dir(_ndarray)

    def __setitem__(self, key, v):
        materialize_all("__setitem__")
        x = value(self)
        x[unwrap(key)] = value(v)
        n = self._n
        if n.kind == "leaf":
            n.extra = x._version

    def __getitem__(self, key):
        materialize_all("__getitem__")
        return as_leaf(value(self)[unwrap(key)])

    def __matmul__(self, other):
        materialize_all("matmul")
        return as_leaf(value(self) @ value(other))

    def __rmatmul__(self, other):
        materialize_all("matmul")
        return as_leaf(value(other) @ value(self))

    def __array_function__(self, func, types_, args, kwargs):
        materialize_all(f"numpy.{func.__name__}")
        return func(*unwrap(args), **unwrap(kwargs))

    @property
    def __cuda_array_interface__(self):
        materialize_all("__cuda_array_interface__")
        return value(self).__cuda_array_interface__

    def __reduce_ex__(self, protocol):
        materialize_all("pickle")
        return value(self).__reduce_ex__(protocol)

    # methods that defer
    def astype(self, dtype, copy=True, **kw):
        if kw or copy is not True:
            return eager_call("astype", lambda x: x.astype(dtype, copy=copy, **kw), (self,), {})
        return deferred("cast", "astype", (self,), dtype, lambda x: x.astype(dtype))

    def clip(self, min=None, max=None, **kw):
        if kw:
            return eager_call("clip", lambda x: x.clip(min, max, **kw), (self,), {})
        return deferred("op", "clip", (self, min, max), None, lambda x, a, b: x.clip(a, b))

    def relu(self):
        return relu(self)

    @property
    def T(self):
        materialize_all("T")
        return value(self).T


def relu(x):
    """ember.nn.functional.relu's own ops, deferred: where(x <= 0, 0, x); of a pending
    F.linear, a ReLU node its matmul may take as an epilogue (_mm.py)."""
    s = getattr(_local, "session", None)
    if s is not None and type(x) is Lazy and x._n.kind == "mm" and x._n.value is None:
        from . import _mm

        return wrap(_mm.deferred_act(s, x._n, "relu"))
    c = deferred("op", "less_equal", (x, 0), None, operator.le)
    return deferred("op", "where", (c, 0, x), None, _trace.ORIGINALS["where"])
