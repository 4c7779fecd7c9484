"""Call wrappers of ember's nanobind functions: NumPy-style argument errors and signatures.

Every nanobind function of ``ember._core`` and every nanobind method of ``ember.ndarray`` is
replaced when this module is imported (first, by ember/__init__.py) by a small C++ wrapper
(src/python/calls.cpp) that forwards each call to it (one extra vectorcall). When nanobind
rejects the arguments the wrapper calls :func:`_on_error` here, which binds them to the
function's signature and raises what Python raises for a Python function of that signature
("ember.sum() got an unexpected keyword argument 'foo'", "ember.sum() takes from 1 to 5
positional arguments but 6 were given") or names the argument of the wrong type ("ember.sum():
argument 'keepdims' must be bool, not str"). The signature, read from nanobind's, is what
``inspect.signature`` and ``help`` show.
"""

import inspect
import types

from . import _core

_NB_FUNC = type(_core.empty)
_NB_METHOD = type(_core.ndarray.__dict__["copy"])
# Dunder methods stay nanobind's (CPython calls most through type slots); these are called by name.
_CALLED_DUNDERS = frozenset({"__dlpack__", "__dlpack_device__"})
# Other libraries' names of ember's parameters, accepted by keyword: NumPy's (`a`) for the Array
# API standard's, PyTorch's (`dim`, `keepdim`, `input`) for NumPy's (ember/_torch.py).
_NUMPY_NAMES = {"a": "x", "input": "x", "dim": "axis", "keepdim": "keepdims", "steps": "num"}
# Reductions PyTorch answers differently when spelled its way (with dim=, unbiased=, correction=).
_TORCH_REDUCTIONS = frozenset({"max", "min", "var", "std"})


# ---- signatures ----------------------------------------------------------------------------------


class _Default:
    """A default value nanobind shows only as text."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def _split_top(text, sep=","):
    """Splits `text` at `sep` outside brackets and quotes."""
    parts, depth, quote, start = [], 0, None, 0
    for i, c in enumerate(text):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _clean_type(text):
    return text.replace("ember._core.", "ember.").replace("collections.abc.", "")


def _annotation(text):
    """A parameter's type as nanobind shows it; none where it says nothing (object)."""
    text = _clean_type(text.strip())
    if not text or all(t in ("object", "None") for t in _split_top(text, "|")):
        return inspect.Parameter.empty
    return text


def _parse(sig_text, defaults):
    """An inspect.Signature from nanobind's 'def name(a: T = \\0, *, b: U = \\1) -> R'."""
    text = sig_text[4:] if sig_text.startswith("def ") else sig_text
    start = text.index("(")
    depth = 0
    for end in range(start, len(text)):
        depth += text[end] == "("
        depth -= text[end] == ")"
        if depth == 0:
            break
    ret = text[end + 1 :].strip()
    ret = _annotation(ret[2:]) if ret.startswith("->") else inspect.Signature.empty
    params, kind = [], inspect.Parameter.POSITIONAL_OR_KEYWORD
    for p in _split_top(text[start + 1 : end]):
        if p == "*":
            kind = inspect.Parameter.KEYWORD_ONLY
            continue
        if p == "/":
            params = [q.replace(kind=inspect.Parameter.POSITIONAL_ONLY) for q in params]
            continue
        default = inspect.Parameter.empty
        eq = _split_top(p, "=")
        if len(eq) == 2:
            p, d = eq
            if d.startswith("\\") and d[1:].isdigit() and defaults and int(d[1:]) < len(defaults):
                default = defaults[int(d[1:])]
            else:
                default = _Default(d)
        name, _, ann = p.partition(":")
        name, ann = name.strip(), _annotation(ann)
        if name.startswith("**"):
            params.append(inspect.Parameter(name[2:], inspect.Parameter.VAR_KEYWORD))
        elif name.startswith("*"):
            params.append(inspect.Parameter(name[1:], inspect.Parameter.VAR_POSITIONAL))
            kind = inspect.Parameter.KEYWORD_ONLY
        else:
            params.append(inspect.Parameter(name, kind, default=default, annotation=ann))
    return inspect.Signature(params, return_annotation=ret)


def _describe(w):
    """(signature, doc, text signature) of a wrapper, for its __signature__ and __doc__."""
    func = w.__wrapped__
    try:
        overloads = func.__nb_signature__
        sig = _parse(overloads[0][0], overloads[0][2])
        doc = overloads[0][1] or ""
    except Exception:  # an unusual signature: no signature beats a wrong one
        return None, getattr(func, "__doc__", None), None
    plain = sig.replace(
        parameters=[p.replace(annotation=p.empty) for p in sig.parameters.values()],
        return_annotation=sig.empty,
    )
    return sig, doc, str(plain)


# ---- errors --------------------------------------------------------------------------------------


def _display_name(w):
    return f"{w.__module__}.{w.__qualname__}"


def _plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _names(names):
    quoted = [f"'{n}'" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _binding_error(name, sig, args, kwargs):
    """The message Python gives when `args`, `kwargs` do not bind to `sig`, or None."""
    params = list(sig.parameters.values())
    P = inspect.Parameter
    positional = [p for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    var_pos = any(p.kind is P.VAR_POSITIONAL for p in params)
    var_kw = any(p.kind is P.VAR_KEYWORD for p in params)
    by_name = {p.name: p for p in params if p.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD)}
    for k in kwargs:
        p = by_name.get(k)
        if (p is None or p.kind is P.POSITIONAL_ONLY) and not var_kw:
            return f"{name}() got an unexpected keyword argument '{k}'"
    n = len(args)
    if n > len(positional) and not var_pos:
        hi = len(positional)
        lo = sum(p.default is P.empty for p in positional)
        takes = f"from {lo} to {hi}" if lo != hi else str(hi)
        word = "positional argument" if hi == 1 and lo == hi else "positional arguments"
        given = "was" if n == 1 else "were"
        return f"{name}() takes {takes} {word} but {n} {given} given"
    for p in positional[:n]:
        if p.kind is P.POSITIONAL_OR_KEYWORD and p.name in kwargs:
            return f"{name}() got multiple values for argument '{p.name}'"
    missing = [p.name for p in positional[n:] if p.default is P.empty and p.name not in kwargs]
    if missing:
        word = _plural(len(missing), "required positional argument")
        return f"{name}() missing {word}: {_names(missing)}"
    missing = [
        p.name
        for p in params
        if p.kind is P.KEYWORD_ONLY and p.default is P.empty and p.name not in kwargs
    ]
    if missing:
        word = _plural(len(missing), "required keyword-only argument")
        return f"{name}() missing {word}: {_names(missing)}"
    return None


def _accepts(ann, v):
    """Whether a value fits a (cleaned) nanobind type annotation; True when it cannot tell."""
    for t in _split_top(ann, "|"):
        base = t.split("[", 1)[0].strip()
        if base == "None":
            ok = v is None
        elif base in ("object", "Any", "typing.Any"):
            ok = True
        elif base == "bool":
            ok = isinstance(v, bool) or type(v).__name__ == "bool"
        elif base == "int":
            ok = (isinstance(v, int) or hasattr(type(v), "__index__")) and not isinstance(v, bool)
        elif base == "float":
            ok = isinstance(v, (int, float)) or hasattr(type(v), "__float__")
            ok = ok and not isinstance(v, complex)
        elif base == "complex":
            ok = isinstance(v, (int, float, complex)) or hasattr(type(v), "__complex__")
        elif base == "str":
            ok = isinstance(v, str)
        elif base in ("bytes", "tuple", "list", "dict", "set"):
            ok = isinstance(v, {"bytes": bytes, "tuple": tuple, "list": list}.get(base, object))
            ok = ok and (base not in ("dict", "set") or isinstance(v, (dict, set)))
        elif base in ("Sequence", "typing.Sequence"):
            ok = isinstance(v, (list, tuple))
        elif base in ("Callable", "typing.Callable"):
            ok = callable(v)
        elif base.startswith("ember."):
            cls = getattr(_core, base[6:], None)
            ok = not isinstance(cls, type) or isinstance(v, cls)
        else:
            ok = True
        if ok:
            return True
    return False


def _type_error(name, sig, args, kwargs):
    """'NAME(): argument 'k' must be T, not U' for the first argument of the wrong type."""
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return None
    for k, v in bound.arguments.items():
        p = sig.parameters[k]
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.annotation is p.empty:
            continue
        if not _accepts(p.annotation, v):
            want = " or ".join(_split_top(p.annotation, "|"))
            return f"{name}(): argument '{k}' must be {want}, not {type(v).__name__}"
    return None


def _deferred(a):
    """Whether `a` (or an element of a list or tuple `a`) is a deferred value of ember.compile."""
    if hasattr(type(a), "__ember_array__"):
        return True
    return isinstance(a, (list, tuple)) and any(hasattr(type(e), "__ember_array__") for e in a)


def _computed(a):
    if hasattr(type(a), "__ember_array__"):
        return a.__ember_array__()
    if isinstance(a, (list, tuple)) and any(hasattr(type(e), "__ember_array__") for e in a):
        return type(a)(_computed(e) for e in a)
    return a


def _on_error(w, exc, args, kwargs):
    """Called by a wrapper when nanobind rejected a call: raises Python's error for it."""
    func = w.__wrapped__
    if any(_deferred(a) for a in (*args, *kwargs.values())):
        # deferred values of ember.compile (python/ember/_compile/): computed, then the call
        return w(*[_computed(a) for a in args], **{k: _computed(v) for k, v in kwargs.items()})
    msg = str(exc)
    own = msg.startswith(f"{func.__name__}(): incompatible function arguments")
    if not own and msg != "std::bad_cast":
        raise exc.with_traceback(exc.__traceback__)  # another function's: not ours to rename
    sig = w.__signature__
    if sig is None:
        raise TypeError(f"{_display_name(w)}(): invalid arguments") from None
    is_method = isinstance(w, _core.builtin_method)
    name = _display_name(w)
    if func.__name__ == "where" and not is_method and len(args) == 1 and not kwargs:
        return _core._nonzero(args[0])  # where(condition): NumPy's and PyTorch's nonzero
    if func.__name__ in _TORCH_REDUCTIONS and (
        "dim" in kwargs or "unbiased" in kwargs or "correction" in kwargs
    ):
        from . import _torch

        return _torch.torch_reduction(w, func.__name__, is_method, args, kwargs)
    if "out" in kwargs and "out" not in sig.parameters and isinstance(kwargs["out"], _core.ndarray):
        # NumPy's and PyTorch's out= on a function without one: the result written into it
        kw = dict(kwargs)
        out = kw.pop("out")
        result = w(*args, **kw)
        out[...] = result
        return out
    kw = None
    for other_name, ember_name in _NUMPY_NAMES.items():
        if other_name in kwargs and other_name not in sig.parameters:
            if ember_name in sig.parameters and ember_name not in kwargs:
                kw = dict(kwargs) if kw is None else kw
                kw[ember_name] = kw.pop(other_name)
    if kw is not None:
        return w(*args, **kw)
    shown = sig
    if is_method and args:
        # Counted and named as the user wrote the call: without `self`.
        shown = sig.replace(parameters=list(sig.parameters.values())[1:])
        message = _binding_error(name, shown, args[1:], kwargs)
    else:
        message = _binding_error(name, sig, args, kwargs)
    if message is None:
        message = _type_error(name, sig, args, kwargs)
    if message is None:
        given = [type(a).__name__ for a in (args[1:] if is_method else args)]
        given += [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
        message = f"{name}(): unsupported argument types ({', '.join(given)}); expected {shown}"
    raise TypeError(message) from None


# ---- installation --------------------------------------------------------------------------------


def _wrap(func, name, module="ember"):
    return _core._wrap_function(func, name, name, module)


def alias(w, name):
    """A wrapper of the same function under another name (errors then name the alias)."""
    return _core._wrap_function(w.__wrapped__, name, name, w.__module__)


def install():
    """Wraps every nanobind function of ember._core (and its submodules) and ndarray method."""
    _core._set_call_hooks(_on_error, _describe)

    def wrap_module(mod, module_name):
        for name, f in list(vars(mod).items()):
            if type(f) is _NB_FUNC:
                setattr(mod, name, _wrap(f, name.lstrip("_") or name, module_name))
            elif isinstance(f, types.ModuleType) and f.__name__.startswith(_core.__name__ + "."):
                wrap_module(f, "ember." + f.__name__.rsplit(".", 1)[1])

    wrap_module(_core, "ember")
    cls = _core.ndarray
    for name, f in list(vars(cls).items()):
        if type(f) is _NB_METHOD and (not name.startswith("__") or name in _CALLED_DUNDERS):
            setattr(cls, name, _core._wrap_method(f, name, "ndarray." + name, "ember"))


# Installed on import, before any other module of ember takes a function from _core.
install()
