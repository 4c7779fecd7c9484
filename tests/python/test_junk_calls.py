"""Wrong calls of every public callable end in Python's own argument errors, never a binding error.

Every public callable of ``ember``, ``ember.linalg``, ``ember.fft`` and ``ember.random`` and every
public ndarray method is called with one extra positional argument, an unknown keyword, and each
parameter in turn given a value of the wrong type (None, a string, an object, a complex number, a
dict). Whatever comes back must be a TypeError or ValueError (IndexError, OverflowError and
NotImplementedError where NumPy raises those; OSError from the file functions) whose message
shows nothing of the machinery: no nanobind overload dump, no ``ember._core``, no C++ type name.
"""

import inspect

import ember
import numpy as np
import pytest

JUNK = [None, "junk", object(), 3 + 4j, {"a": 1}]
FORBIDDEN = ("incompatible function arguments", "ember._core", "std::", "nanobind")
ALLOWED = (TypeError, ValueError, IndexError, OverflowError, NotImplementedError)
# Functions that read or write files (run in a temporary directory): OSError is their answer.
FILE_FUNCTIONS = {
    "load",
    "save",
    "savez",
    "savez_compressed",
    "savetxt",
    "loadtxt",
    "genfromtxt",
    "fromfile",
    "fromregex",
    "save_file",
    "load_file",
    "save_safetensors",
    "load_safetensors",
}
# Not functions of arrays: context managers and printing, which take any object or none.
SKIP = {"printoptions", "show_config", "show_runtime", "errstate", "set_printoptions"}
# What NumPy (or PyTorch, for autograd) raises for the same wrong call.
OTHER_EXCEPTIONS = {
    "typename": KeyError,  # numpy.typename(None) is a KeyError too
    "backward": RuntimeError,  # PyTorch: "element 0 of tensors does not require grad"
}
# Known gaps, in modules outside the bindings: (name, the exception they raise today).
KNOWN = {
    "einsum_path": RecursionError,  # optimize=None recurses
    "histogramdd": KeyError,  # a dict as `range`
}


def _public(module):
    out = []
    for name in sorted(getattr(module, "__all__", None) or dir(module)):
        if name.startswith("_") or name in SKIP:
            continue
        f = getattr(module, name)
        if not callable(f) or inspect.ismodule(f):
            continue
        if isinstance(f, type) and issubclass(f, BaseException):
            continue
        out.append((f"{module.__name__}.{name}", f))
    return out


CALLABLES = [
    item
    for module in (ember, ember.linalg, ember.fft, ember.random)
    for item in _public(module)
    if not (module is ember and isinstance(item[1], type(ember)))
]
METHODS = sorted(
    name
    for name in dir(ember.ndarray)
    if not name.startswith("_")
    and callable(getattr(ember.ndarray, name))
    and not isinstance(getattr(ember.ndarray, name), property)
    and name not in ("cuda",)  # needs a GPU; covered by the CUDA tests
)


def _signature(f):
    try:
        return inspect.signature(f)
    except (TypeError, ValueError):
        return None


def _base_args(sig):
    """One small array for each required positional parameter."""
    if sig is None:
        return [ember.ones(3)]
    P = inspect.Parameter
    return [
        ember.ones(3)
        for p in sig.parameters.values()
        if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD) and p.default is P.empty
    ]


def _calls(sig):
    """(args, kwargs) of the junk calls for a callable of signature `sig`."""
    P = inspect.Parameter
    base = _base_args(sig)
    params = [] if sig is None else list(sig.parameters.values())
    positional = [p for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    if not any(p.kind is P.VAR_POSITIONAL for p in params):
        yield [ember.ones(3)] * (len(positional) + 1), {}  # one positional argument too many
    if not any(p.kind is P.VAR_KEYWORD for p in params):
        yield base, {"definitely_not_a_parameter": 1}
    for i in range(len(positional)):
        for j in JUNK:
            args = (base + [ember.ones(3)] * len(positional))[: max(len(base), i + 1)]
            args[i] = j
            yield args, {}
    for p in params:
        if p.kind is P.KEYWORD_ONLY:
            for j in JUNK:
                yield base, {p.name: j}


def _check(label, f, args, kwargs):
    try:
        f(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - every exception is inspected
        message = str(e)
        shown = f"{label}(*{args!r}, **{kwargs!r}) raised {type(e).__name__}: {message}"
        for bad in FORBIDDEN:
            assert bad not in message, shown
        short = label.rsplit(".", 1)[-1]
        allowed = ALLOWED + ((OSError,) if short in FILE_FUNCTIONS else ())
        allowed += tuple(t for t in (OTHER_EXCEPTIONS.get(short), KNOWN.get(short)) if t)
        assert isinstance(e, allowed), shown


@pytest.mark.parametrize("label,f", CALLABLES, ids=[c[0] for c in CALLABLES])
def test_junk_calls(label, f, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sig = _signature(f)
    for args, kwargs in _calls(sig):
        _check(label, f, args, kwargs)


@pytest.mark.parametrize("name", METHODS)
def test_junk_method_calls(name):
    x = ember.ones(3)
    f = getattr(x, name)
    sig = _signature(f)
    for args, kwargs in _calls(sig):
        _check(f"ember.ndarray.{name}", getattr(ember.ones(3), name), args, kwargs)


def test_public_callables_are_many():
    assert len(CALLABLES) > 300 and len(METHODS) > 20


# The errors Python gives for a Python function of the same signature.
@pytest.mark.parametrize(
    "call,expected",
    [
        (lambda x: ember.sum(x, foo=1), "ember.sum() got an unexpected keyword argument 'foo'"),
        (
            lambda x: ember.sum(x, 0, None, None, False, 1),
            "ember.sum() takes from 1 to 5 positional arguments but 6 were given",
        ),
        (
            lambda x: ember.sum(x, keepdims="yes"),
            "ember.sum(): argument 'keepdims' must be bool, not str",
        ),
        (lambda x: ember.add(x), "ember.add() missing 1 required positional argument: 'x2'"),
        (lambda x: ember.power(x), "ember.power() missing 1 required positional argument: 'x2'"),
        (
            lambda x: x.sum(0, None, None, False, 1),
            "ember.ndarray.sum() takes from 0 to 4 positional arguments but 5 were given",
        ),
        (lambda x: x.max(bad=1), "ember.ndarray.max() got an unexpected keyword argument 'bad'"),
        (
            lambda x: ember.sum(x, 0, axis=0),
            "ember.sum() got multiple values for argument 'axis'",
        ),
    ],
)
def test_python_style_messages(call, expected):
    with pytest.raises(TypeError) as info:
        call(ember.ones(3))
    assert str(info.value) == expected


# The exception types NumPy raises for the same wrong calls (a sample).
SAMPLE = [
    lambda m, x: m.sum(x, foo=1),
    lambda m, x: m.sum(x, 0, None, None, False, 0, True, 1),
    lambda m, x: m.add(x),
    lambda m, x: m.add(x, x, x, x),
    lambda m, x: m.max(x, axis="a"),
    lambda m, x: m.zeros("a"),
    lambda m, x: m.ones(3, dtype="nope"),
    lambda m, x: m.mean(x, axis=5),
    lambda m, x: m.reshape(x, (4, 4)),
    lambda m, x: m.sum(x, 0, out=m.zeros(5)),
    lambda m, x: m.add(x, x, out=m.zeros(5)),
    lambda m, x: m.linspace(0, 1, -1),
    lambda m, x: m.full(3, 1, dtype="nope"),
    lambda m, x: m.argmax(x, axis=(0, 1)),
    lambda m, x: m.var(x, ddof="a"),
]


@pytest.mark.parametrize("i", range(len(SAMPLE)))
def test_exception_types_match_numpy(i):
    with pytest.raises(Exception) as theirs:
        SAMPLE[i](np, np.ones(3))
    with pytest.raises(Exception) as ours:
        SAMPLE[i](ember, ember.ones(3))
    for base in (TypeError, ValueError, IndexError):
        if isinstance(theirs.value, base):
            assert isinstance(ours.value, base), (theirs.value, ours.value)
            break


def test_devices_and_scalars_name_the_argument():
    with pytest.raises(ValueError, match="tpu"):
        ember.ones(3, device="tpu")
    with pytest.raises((ValueError, RuntimeError), match="cuda:99"):
        ember.ones(3, device="cuda:99")
    with pytest.raises(TypeError, match="shape"):
        ember.ones(3 + 4j)
    with pytest.raises(TypeError, match="correction"):
        ember.var(ember.ones(3), correction=3 + 4j)
