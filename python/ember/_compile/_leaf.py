"""The methods of ember.compile's two array types: Lazy (a deferred value) and Leaf (an array
the compiled function was given, a real ember.ndarray): Python operators, the op table's
methods and the reductions defer; a Leaf's in-place operators and methods first compute the
pending values that read it; a Lazy's other uses compute it (python/ember/_compile/_lazy.py)."""

from __future__ import annotations

import operator

from .._fusion import _trace
from . import _graph
from ._lazy import (
    Lazy,
    Leaf,
    _binop,
    _eager_dunder,
    _inplace,
    _ndarray,
    _unop,
    as_leaf,
    deferred,
    eager_call,
    materialize_all,
    unwrap,
    value,
)


def _leaf_inplace(name):
    base = getattr(_ndarray, name)

    def f(self, *args, **kwargs):
        materialize_all(name)  # pending values reading this array are computed first
        return base(self, *unwrap(args), **unwrap(kwargs))

    f.__name__ = name
    return f


def _leaf_matmul(self, other):
    if type(other) is Lazy:
        return NotImplemented
    return as_leaf(_ndarray.__matmul__(value(self), other))


def _leaf_rmatmul(self, other):
    if type(other) is Lazy:
        return NotImplemented
    return as_leaf(_ndarray.__rmatmul__(value(self), other))


def _leaf_setitem(self, key, v):
    materialize_all("__setitem__")
    _ndarray.__setitem__(self, unwrap(key), value(v))


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    name = _trace.ALIASES.get(ufunc.__name__, ufunc.__name__)
    if method == "__call__" and not kwargs and name in _trace.OPS:
        return deferred("op", name, inputs, None, lambda *a: getattr(ufunc, method)(*a, **kwargs))
    materialize_all(f"numpy.{ufunc.__name__}")
    return getattr(ufunc, method)(*unwrap(inputs), **unwrap(kwargs))


def _method(name, arity):
    canon = _trace.ALIASES.get(name, name)

    def f(self, *args, **kwargs):
        if kwargs or len(args) != arity - 1:
            return eager_call(
                name, lambda x, *a, **k: getattr(x, name)(*a, **k), (self, *args), kwargs
            )
        orig = _trace.ORIGINALS.get(canon) or (lambda x, *a: getattr(x, name)(*a))
        return deferred("op", canon, (self, *args), None, orig)

    f.__name__ = name
    return f


def _reduction(name):
    torch_ok = name in ("sum", "prod", "mean", "any", "all")

    def f(self, axis=None, *args, **kwargs):
        if torch_ok and "dim" in kwargs and axis is None:
            axis = kwargs.pop("dim")
            if "keepdim" in kwargs:
                kwargs["keepdims"] = kwargs.pop("keepdim")
        keepdims = kwargs.pop("keepdims", False)
        if args or kwargs or type(keepdims) is not bool:
            return eager_call(
                name,
                lambda x: getattr(x, name)(axis, *args, keepdims=keepdims, **kwargs),
                (self,),
                {},
            )
        if isinstance(axis, list):
            axis = tuple(axis)
        return deferred(
            "reduce",
            name,
            (self,),
            (axis, keepdims),
            lambda x: getattr(x, name)(axis, keepdims=keepdims),
        )

    f.__name__ = name
    return f


_EAGER_DUNDERS = (
    "__bool__",
    "__float__",
    "__int__",
    "__index__",
    "__complex__",
    "__iter__",
    "__repr__",
    "__str__",
    "__format__",
    "__array__",
    "__dlpack__",
    "__dlpack_device__",
    "__contains__",
    "__copy__",
    "__deepcopy__",
    "__array_namespace__",
    "__round__",
    "__divmod__",
    "__rdivmod__",
    "__imatmul__",
)


def install():
    _graph.load_originals()
    for cls in (Lazy, Leaf):
        for py, op in _trace._BINOPS.items():
            f = getattr(operator, py if py not in ("and", "or") else py + "_")
            setattr(cls, f"__{py}__", _binop(op, f))
            setattr(cls, f"__r{py}__", _binop(op, f, reflected=True))
            if cls is Lazy:
                setattr(cls, f"__i{py}__", _inplace(getattr(operator, f"i{py}")))
            elif hasattr(_ndarray, f"__i{py}__"):
                setattr(cls, f"__i{py}__", _leaf_inplace(f"__i{py}__"))
        for py, op in _trace._CMPOPS.items():
            setattr(cls, f"__{py}__", _binop(op, getattr(operator, py)))
        for py, op in _trace._UNOPS.items():
            setattr(cls, f"__{py}__", _unop(op, getattr(operator, py)))
        cls.__array_ufunc__ = _array_ufunc
        for name, arity in _trace.OPS.items():
            if name in ("where", "clip", "real", "imag") or not hasattr(_ndarray, name):
                continue
            setattr(cls, name, _method(name, arity))
        for alias, canon in _trace.ALIASES.items():
            if canon in _trace.OPS and hasattr(_ndarray, alias) and alias not in vars(cls):
                setattr(cls, alias, _method(alias, _trace.OPS[canon]))
        for name in _trace.REDUCTIONS:
            setattr(cls, name, _reduction(name))
    for name in ("astype", "clip", "relu"):
        setattr(Leaf, name, vars(Lazy)[name])
    for d in _EAGER_DUNDERS:
        if hasattr(_ndarray, d) or d in ("__round__", "__divmod__", "__rdivmod__"):
            setattr(Lazy, d, _eager_dunder(d))
    Leaf.__setitem__ = _leaf_setitem
    Leaf.__matmul__ = _leaf_matmul
    Leaf.__rmatmul__ = _leaf_rmatmul
    for name in dir(_ndarray):
        if name.endswith("_") and not name.startswith("_") and name != "requires_grad_":
            setattr(Leaf, name, _leaf_inplace(name))


_installed = []


def install_once():
    if not _installed:
        install()
        _installed.append(True)
