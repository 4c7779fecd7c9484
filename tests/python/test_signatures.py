"""ember's functions and ndarray methods take NumPy's positional parameters, in NumPy's order.

For every public function in both ``ember`` and ``numpy`` (and every ndarray method in both), the
positional parameters of ember's signature must be a prefix of NumPy's: same order, same names,
except where the Array API standard names a parameter differently (``x`` for NumPy's ``a``; the
renames below). A shorter list is allowed (the missing trailing parameters are NumPy features
ember does not have: a call using them gets Python's "takes at most N positional arguments").
The exceptions are listed, each with its reason. Each function is then called with positional
arguments, as NumPy code would.
"""

import inspect

import ember
import numpy as np
import pytest

# NumPy's parameter name -> the names ember may use for it: the Array API standard's.
RENAMES = {
    "a": {"x", "x1"},
    "x": {"x1"},
    "y": {"x2"},
    "N": {"n_rows"},
    "M": {"n_cols"},
    "array": {"x"},
    "arr": {"x"},
    "ary": {"x"},
    "m": {"x"},
    "A": {"x"},
    "val": {"x"},
    "prototype": {"x"},
    "tup": {"arrays"},
    "element": {"x1"},
    "test_elements": {"x2"},
    "v": {"x2"},
    "a_min": {"min"},
    "a_max": {"max"},
    "start_or_stop": {"start"},
}

# Functions whose positional parameters differ from NumPy's, and why.
EXCEPTIONS = {
    # ember's own serialization names (safetensors), not NumPy's .npy functions.
    "save": "ember.save(obj, path) is safetensors serialization",
    "load": "ember.load(path) is safetensors serialization",
    # Same order, other names (not Array API functions): a, b for NumPy's a1, a2.
    "array_equal": "ember names its operands a, b",
    # The Array API's asarray(obj, /, *, dtype, device, copy): dtype is keyword-only.
    "asarray": "Array API signature (dtype keyword-only)",
    # Elementwise ops of the op table with a ufunc-style out (NumPy's real/imag take only val).
    "real": "elementwise op with out=",
    "imag": "elementwise op with out=",
    # No out= yet in these Python-level reductions: NumPy's out is their third (fourth) positional
    # parameter, so a positional keepdims/ddof lands elsewhere. Keyword calls are the same.
    "amax": "no out= yet",
    "amin": "no out= yet",
    "ptp": "no out= yet",
    "nanargmax": "no out= yet",
    "nanargmin": "no out= yet",
    "nanmax": "no out= yet",
    "nanmin": "no out= yet",
    "nanmean": "no out= yet",
    "nanprod": "no out= yet",
    "nansum": "no out= yet",
    "nanstd": "no out= yet",
    "nanvar": "no out= yet",
}
# Methods whose positional parameters differ from NumPy's, and why.
METHOD_EXCEPTIONS = {
    # astype(dtype, copy): NumPy's order/casting/subok are not ember's (another module binds it).
    "astype": "no order/casting/subok",
    # swapaxes is bound elsewhere with unnamed parameters.
    "swapaxes": "unnamed parameters",
}


def _numpy_positional(f):
    """NumPy's positional parameter names, or None when NumPy shows no signature."""
    if isinstance(f, np.ufunc):
        names = ["x"] if f.nin == 1 else [f"x{i + 1}" for i in range(f.nin)]
        return names + ["out"]
    if f is np.arange:  # its text signature hides the positional dtype it takes
        return ["start_or_stop", "stop", "step", "dtype"]
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return None
    return _positional(sig)


def _positional(sig):
    P = inspect.Parameter
    out = []
    for p in sig.parameters.values():
        if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD):
            out.append(p.name)
        elif p.kind is P.VAR_POSITIONAL:
            out.append("*" + p.name)
    return out


def _same(numpy_name, ember_name):
    return numpy_name == ember_name or ember_name in RENAMES.get(numpy_name, ())


def _mismatch(theirs, ours):
    """Why `ours` is not a prefix of `theirs` (by the rename rule), or None."""
    if any(n.startswith("*") for n in theirs + ours):
        return None  # variadic: compared by the calls below
    if len(ours) > len(theirs):
        return f"ember has extra positional parameters {ours[len(theirs) :]}"
    for i, (t, o) in enumerate(zip(theirs, ours, strict=False)):
        if not _same(t, o):
            return f"position {i}: NumPy {t!r}, ember {o!r}"
    return None


def _common_functions():
    names = []
    for name in sorted(dir(ember)):
        if name.startswith("_") or name in EXCEPTIONS:
            continue
        ours, theirs = getattr(ember, name), getattr(np, name, None)
        if theirs is None or not callable(ours) or not callable(theirs):
            continue
        if isinstance(ours, type) or isinstance(theirs, type):
            continue
        names.append(name)
    return names


FUNCTIONS = _common_functions()
METHODS = sorted(
    n
    for n in dir(ember.ndarray)
    if not n.startswith("_")
    and callable(getattr(np.ndarray, n, None))
    and callable(getattr(ember.ndarray, n))
)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_positional_parameters(name):
    theirs = _numpy_positional(getattr(np, name))
    if theirs is None:
        pytest.skip(f"numpy.{name} shows no signature")
    ours = _positional(inspect.signature(getattr(ember, name)))
    why = _mismatch(theirs, ours)
    assert why is None, f"ember.{name}{ours} vs numpy.{name}{theirs}: {why}"


def _numpy_method_positional(name):
    """NumPy's method parameters; those of the function of the same name where the method's
    signature hides them in **kwargs (x.sum(0, None, None, True) is NumPy's keepdims=True)."""
    sig = inspect.signature(getattr(np.ndarray, name))
    hidden = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    if hidden and callable(getattr(np, name, None)):
        theirs = _numpy_positional(getattr(np, name))
        if theirs and theirs[0] == "a":
            return ["self"] + theirs[1:]
    return _positional(sig)


@pytest.mark.parametrize("name", METHODS)
def test_method_positional_parameters(name):
    if name in METHOD_EXCEPTIONS:
        pytest.skip(METHOD_EXCEPTIONS[name])
    theirs = _numpy_method_positional(name)
    ours = _positional(inspect.signature(getattr(ember.ndarray, name)))
    why = _mismatch(theirs, ours)
    assert why is None, f"ember.ndarray.{name}{ours} vs numpy.ndarray.{name}{theirs}: {why}"


def test_every_nanobind_function_has_a_signature():
    for name in dir(ember):
        f = getattr(ember, name)
        if isinstance(f, (ember._core.builtin_function, ember._core.builtin_method)):
            sig = inspect.signature(f)
            assert f.__module__ == "ember" and f.__name__ == name, name
            assert sig.parameters is not None
    for name, f in vars(ember.ndarray).items():
        if isinstance(f, ember._core.builtin_method):
            inspect.signature(getattr(ember.ones(2), name))


# NumPy-style positional calls: (function name, positional arguments after the array).
POSITIONAL_CALLS = [
    ("sum", (0,)),
    ("sum", (1, None, None, True)),
    ("prod", (0, "float64")),
    ("mean", (0, None, None, True)),
    ("max", (1, None, True)),
    ("min", (0,)),
    ("any", (0,)),
    ("all", (1, None)),
    ("argmax", (1,)),
    ("argmin", (0, None)),
    ("var", (0, None, None, 1)),
    ("std", (1, None, None, 0, True)),
    ("cumsum", (0,)),
    ("squeeze", (None,)),
    ("expand_dims", (0,)),
    ("permute_dims", (None,)),
    ("clip", (0.5, 1.5)),
]


@pytest.mark.parametrize("name,args", POSITIONAL_CALLS)
@pytest.mark.parametrize("as_list", [False, True])
def test_positional_calls_match_numpy(name, args, as_list):
    data = np.arange(6.0).reshape(2, 3)
    expected = getattr(np, name)(data, *args)
    x = data.tolist() if as_list else ember.asarray(data)
    got = getattr(ember, name)(x, *args)
    np.testing.assert_allclose(ember.asnumpy(got), expected)


@pytest.mark.parametrize("name,args", [c for c in POSITIONAL_CALLS if c[0] in METHODS])
def test_positional_method_calls_match_numpy(name, args):
    data = np.arange(6.0).reshape(2, 3)
    expected = getattr(data, name)(*args)
    got = getattr(ember.asarray(data), name)(*args)
    np.testing.assert_allclose(ember.asnumpy(got), expected)


def test_numpy_arrays_and_lists_are_accepted():
    assert ember.sum([1, 2, 3]) == 6
    assert ember.max(np.arange(5)) == 4
    assert ember.mean((1.0, 2.0)) == 1.5
    assert ember.argmax(np.array([1, 5, 2])) == 1


def test_out_reductions():
    x = ember.asarray(np.arange(6.0).reshape(2, 3))
    out = ember.zeros(3)
    assert ember.sum(x, 0, out=out) is out
    np.testing.assert_allclose(ember.asnumpy(out), [3, 5, 7])
    out = ember.zeros(2, dtype="int64")  # unsafe cast, as NumPy's reductions
    assert x.sum(1, None, out) is out
    np.testing.assert_array_equal(ember.asnumpy(out), [3, 12])
    with pytest.raises(ValueError):
        ember.sum(x, 0, out=ember.zeros(2))
    with pytest.raises(TypeError):
        ember.sum(x, 0, out=[0, 0, 0])
    with pytest.raises(TypeError):
        ember.argmax(x, 0, out=ember.zeros(3, dtype="int8"))


def test_out_elementwise():
    x = ember.asarray(np.arange(6.0).reshape(2, 3))
    out = ember.empty((2, 3))
    assert ember.add(x, x, out) is out  # NumPy's positional out
    np.testing.assert_allclose(ember.asnumpy(out), 2 * np.arange(6.0).reshape(2, 3))
    assert ember.sqrt(x, out=out) is out
    assert ember.negative(x, out=(out,)) is out  # the tuple form of ufuncs
    np.testing.assert_allclose(ember.asnumpy(out), -np.arange(6.0).reshape(2, 3))
    with pytest.raises(TypeError):  # float64 result into int64: not 'same_kind'
        ember.add(x, x, out=ember.empty((2, 3), dtype="int64"))
    with pytest.raises(ValueError):
        ember.add(x, x, out=ember.empty(3))
    o = ember.empty(3)
    assert ember.clip(ember.asarray([0.0, 5.0, 9.0]), 1, 8, o) is o
    np.testing.assert_allclose(ember.asnumpy(o), [1, 5, 8])


def test_creation_takes_dtype_positionally():
    assert ember.zeros(3, "int32").dtype == ember.int32
    assert ember.ones((2, 2), ember.float32).dtype == "float32"
    assert ember.full(2, 7, "int8").dtype == ember.int8
    assert ember.eye(3, 3, 1, "float32").dtype == ember.float32
    assert ember.linspace(0, 1).shape == (50,)
    samples, step = ember.linspace(0, 1, 5, True, True)
    assert step == 0.25 and samples.shape == (5,)
    with pytest.raises(ValueError):
        ember.zeros(3, None, "F")


def test_comparisons_never_raise():
    assert (ember.float32 == None) is False  # noqa: E711
    assert (ember.float32 != None) is True  # noqa: E711
    assert ember.float32 == "float32" and ember.float32 == np.dtype("float32")
    assert ember.float32 != "foo" and ember.float32 != object()
    assert hash(ember.float32) == hash(np.dtype("float32"))
    assert {np.dtype("float32"): 1}[ember.float32] == 1
    assert (ember.Device("cpu") == None) is False  # noqa: E711
    assert ember.Device("cpu") != 3 + 4j and ember.Device("cpu") == "cpu"
    x = ember.ones(3)
    for other in (None, "a", object()):
        np.testing.assert_array_equal(ember.asnumpy(x == other), np.ones(3) == other)
        np.testing.assert_array_equal(ember.asnumpy(x != other), np.ones(3) != other)
