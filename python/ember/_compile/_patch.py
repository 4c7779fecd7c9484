"""The ember functions a compiled function names, made deferral-aware for the length of its
calls: ``ember.exp(x)`` of a deferred x records a node, as ``x.exp()`` and ``x + 1`` do. Only the
names the function's code (and its nested functions', a module's forward's) loads are swapped,
refcounted across nested and concurrent calls; a swapped function called with no deferred
argument, or from another thread, is the original."""

from __future__ import annotations

import sys
import threading
import types

from .._fusion import _trace
from . import _graph, _lazy
from ._lazy import Lazy, Leaf

_DEFER = (Lazy, Leaf)

_lock = threading.Lock()
_active = {}  # (module name, name) -> [count, original]
_wrappers = {}  # (module name, name, id(original)) -> wrapper


def _has_lazy(args, kwargs):
    for a in args:
        if type(a) in _DEFER:
            return True
    for a in kwargs.values():
        if type(a) in _DEFER:
            return True
    return False


def _wrapper(name, orig):
    canon = _trace.ALIASES.get(name, name)
    if canon in _trace.OPS and canon != "clip":

        def f(*args, **kwargs):
            if not _has_lazy(args, kwargs):
                return _other(name, orig, args, kwargs)
            if kwargs or len(args) != _trace.OPS[canon]:
                return _lazy.eager_call(name, orig, args, kwargs)
            return _lazy.deferred("op", canon, args, None, orig)

    elif canon == "clip":

        def f(x, *args, **kwargs):
            if not _has_lazy((x, *args), kwargs):
                return _other(name, orig, (x, *args), kwargs)
            lo = kwargs.pop("a_min", kwargs.pop("min", args[0] if args else None))
            hi = kwargs.pop("a_max", kwargs.pop("max", args[1] if len(args) > 1 else None))
            if kwargs or len(args) > 2 or type(x) not in _DEFER:
                return _lazy.eager_call(name, orig, (x, *args), kwargs)
            return _lazy.deferred("op", "clip", (x, lo, hi), None, orig)

    elif canon == "astype":

        def f(x, dtype, *args, **kwargs):
            if type(x) not in _DEFER or args or kwargs:
                return _other(name, orig, (x, dtype, *args), kwargs)
            return _lazy.deferred("cast", "astype", (x,), dtype, lambda v: orig(v, dtype))

    elif canon in _trace.REDUCTIONS:

        def f(x, *args, **kwargs):
            if type(x) not in _DEFER:
                return _other(name, orig, (x, *args), kwargs)
            keys = ("axis", "dtype", "out", "keepdims")
            kw = dict(zip(keys, args, strict=False))
            for k, v in kwargs.items():
                kw[k] = v
            axis = kw.pop("axis", None)
            keepdims = kw.pop("keepdims", False)
            if (
                len(args) > 4
                or any(k not in ("dtype", "out") or v is not None for k, v in kw.items())
                or type(keepdims) is not bool
            ):
                return _lazy.eager_call(name, orig, (x, *args), kwargs)
            if isinstance(axis, list):
                axis = tuple(axis)
            return _lazy.deferred(
                "reduce",
                canon,
                (x,),
                (axis, keepdims),
                lambda v: orig(v, axis=axis, keepdims=keepdims),
            )

    else:

        def f(*args, **kwargs):
            return _other(name, orig, args, kwargs)

    f.__name__ = getattr(orig, "__name__", name)
    f.__qualname__ = getattr(orig, "__qualname__", name)
    f.__doc__ = getattr(orig, "__doc__", None)
    f.__wrapped__ = orig
    return f


def _other(name, orig, args, kwargs):
    """A call that is not deferred: in a compiled call, the pending values are computed first
    (it may read them, or write into an array they read)."""
    s = _graph.current()
    if s is None:
        return orig(*args, **kwargs)
    return _lazy.as_leaf(_lazy.eager_call(name, orig, args, kwargs))


def _plain_wrapper(name, orig):
    def f(*args, **kwargs):
        return _other(name, orig, args, kwargs)

    f.__name__ = getattr(orig, "__name__", name)
    f.__qualname__ = getattr(orig, "__qualname__", name)
    f.__doc__ = getattr(orig, "__doc__", None)
    f.__wrapped__ = orig
    return f


def _relu_wrapper(orig):
    def relu(input, inplace=False):
        if type(input) in _DEFER and not inplace:
            return _lazy.relu(input)
        return _other("relu", orig, (input,), {"inplace": inplace})

    relu.__wrapped__ = orig
    relu.__doc__ = orig.__doc__
    return relu


def _linear_wrapper(orig):
    def linear(input, weight, bias=None):  # noqa: A002 (PyTorch's names)
        s = _graph.current()
        if s is not None:
            from . import _mm

            args = [_lazy.value(a) if type(a) in _DEFER else a for a in (input, weight, bias)]
            n = _mm.deferred_linear(s, *args)
            if n is not None:
                return _lazy.wrap(n)
        return _other("linear", orig, (input, weight, bias), {})

    linear.__wrapped__ = orig
    linear.__doc__ = orig.__doc__
    return linear


def _gelu_wrapper(orig):
    def gelu(input, approximate="none"):  # noqa: A002
        s = _graph.current()
        if s is not None and approximate == "tanh" and type(input) is Lazy:
            from . import _mm

            if _mm.is_pending_mm(input._n):
                return _lazy.wrap(_mm.deferred_act(s, input._n, "gelu_tanh"))
        return _other("gelu", orig, (input,), {"approximate": approximate})

    gelu.__wrapped__ = orig
    gelu.__doc__ = orig.__doc__
    return gelu


def _patchable(v):
    if isinstance(v, (type, types.ModuleType)):
        return False
    return isinstance(v, (types.FunctionType, types.BuiltinFunctionType)) or type(v).__name__ in (
        "builtin_function",
        "nb_func",
    )


def code_names(code, out=None):
    """Every global or attribute name the code object (and those nested in it) loads."""
    out = set() if out is None else out
    out.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            code_names(c, out)
    return out


_NAMESPACES = ("ember", "ember.nn.functional", "ember.linalg", "ember.fft", "ember.random")


def targets(names):
    """[(module name, name)] of the ember functions among `names` to swap during calls: the
    elementwise ones defer, the others compute the pending values and get ember arrays (some
    of ember's C++ functions accept nothing else)."""
    _graph.load_originals()
    out = []
    for modname in _NAMESPACES:
        mod = sys.modules.get(modname)
        if mod is None:
            continue
        ns = vars(mod)
        for name in sorted(names):
            if name.startswith("_") or name in ("compile", "fuse"):
                continue
            v = ns.get(name)
            if v is not None and _patchable(v):
                out.append((modname, name))
    return tuple(out)


def discover(fn, depth=3):
    """The code objects a call of `fn` is likely to run: its own, the functions and modules it
    reaches through globals, closures and bound methods (a module's forward, its submodules'),
    `depth` levels deep."""
    from ..nn import Module

    codes, seen = [], set()

    def visit(o, d):
        if d < 0 or id(o) in seen:
            return
        seen.add(id(o))
        if isinstance(o, Module):
            for m in o.modules():
                fwd = getattr(type(m), "forward", None)
                if isinstance(fwd, types.FunctionType) and id(fwd) not in seen:
                    codes.append(fwd.__code__)  # ember's layers too: the F.* names they use
                    visit(fwd, d - 1)
        elif isinstance(o, types.MethodType):
            visit(o.__func__, d)
            visit(o.__self__, d - 1)
        elif isinstance(o, types.FunctionType):
            mod = getattr(o, "__module__", "") or ""
            if mod == "ember" or mod.startswith("ember."):
                return  # ember's own functions: reached through the swapped names
            if o.__code__ not in codes:
                codes.append(o.__code__)
            g = o.__globals__
            for name in code_names(o.__code__):
                v = g.get(name)
                if isinstance(v, (types.FunctionType, types.MethodType, Module)) or (
                    callable(v) and hasattr(v, "__wrapped__")
                ):
                    visit(v, d - 1)
            for c in o.__closure__ or ():
                try:
                    v = c.cell_contents
                except ValueError:
                    continue
                if isinstance(v, (types.FunctionType, types.MethodType, Module)) or (
                    callable(v) and hasattr(v, "__wrapped__")
                ):
                    visit(v, d - 1)
        else:
            f = getattr(o, "_root", None) or getattr(o, "__wrapped__", None)
            if f is not None:
                visit(f, d)

    visit(fn, depth)
    return codes


def enter(tgts):
    if not tgts:
        return
    with _lock:
        for t in tgts:
            e = _active.get(t)
            if e is not None:
                e[0] += 1
                continue
            mod = sys.modules.get(t[0])
            if mod is None:
                continue
            orig = getattr(mod, t[1], None)
            if orig is None:
                continue
            w = _wrappers.get((t[0], t[1], id(orig)))
            if w is None:
                if t[0] == "ember":
                    w = _wrapper(t[1], orig)
                elif t == ("ember.nn.functional", "relu"):
                    w = _relu_wrapper(orig)
                elif t == ("ember.nn.functional", "linear"):
                    w = _linear_wrapper(orig)
                elif t == ("ember.nn.functional", "gelu"):
                    w = _gelu_wrapper(orig)
                else:
                    w = _plain_wrapper(t[1], orig)
                _wrappers[(t[0], t[1], id(orig))] = w
            _active[t] = [1, orig, w]
            setattr(mod, t[1], w)


def leave(tgts):
    if not tgts:
        return
    with _lock:
        for t in tgts:
            e = _active.get(t)
            if e is None:
                continue
            e[0] -= 1
            if e[0] == 0:
                del _active[t]
                mod = sys.modules.get(t[0])
                if mod is not None and getattr(mod, t[1], None) is e[2]:
                    setattr(mod, t[1], e[1])
