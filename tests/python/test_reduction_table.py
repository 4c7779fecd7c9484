"""Every row of the C++ reduction table against NumPy's function of the same name.

The parametrization comes from ``ember._core.reductions()``, so a reduction added to the table is
checked here without an edit: its module function and ndarray method over every dtype, axes and
keepdims, its result dtype, its identity (or the error) on empty input, and, for differentiable
rows, its gradient against finite differences.
"""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from _helpers import (
    ALL_DTYPES,
    Domain,
    Layout,
    assert_close,
    builtin_exception,
    cast_like_numpy,
    em_dtype,
    kind,
    np_dtype,
    permute,
    stable_seed,
    tolerance,
)

ROWS = {
    str(name): {
        "index": bool(index),
        "dtype": bool(takes_dtype),
        "identity": identity,
        "grad": bool(grad),
    }
    for name, index, takes_dtype, identity, grad in ember._core.reductions()
}
NAMES = list(ROWS)

LAYOUTS = [
    Layout("3d", (3, 4, 5)),
    Layout("3d_strided", (6, 4, 10), lambda a: a[::2, :, 1::3]),
    Layout("3d_transposed", (3, 4, 5), lambda a: permute(a, (2, 0, 1))),
]
AXES = [None, 0, -1, (0, 2), ()]
# Small values with ties: exact sums in every dtype, and index rows must pick the first match.
DOMAIN = Domain(choices=(0, 1, 2, 3, 1, 2))


def call(fn, x, axis, keepdims):
    if axis is None:
        return fn(x, keepdims=keepdims)
    return fn(x, axis=axis, keepdims=keepdims)


def numpy_reference(name, a, axis, keepdims, dtype):
    """(result dtype, values): NumPy's dtype, values computed exactly (float64/complex128, or the
    integers' own modular arithmetic) and cast to it."""
    fn = getattr(np, name)
    probe_in = a.astype(np.float16) if dtype == "bfloat16" else a
    probe = np.asarray(call(fn, probe_in, axis, keepdims))  # raises as NumPy does
    exp_dtype = "bfloat16" if dtype == "bfloat16" and probe.dtype == np.float16 else probe.dtype
    if kind(dtype) in "biu":
        return exp_dtype, probe
    wide = np.complex128 if kind(dtype) == "c" else np.float64
    values = np.asarray(call(fn, a.astype(wide), axis, keepdims))
    return exp_dtype, cast_like_numpy(values, exp_dtype)


def test_table_rows_are_exported():
    assert NAMES, "the reduction table is empty"
    for name in NAMES:
        assert getattr(ember, name) is getattr(ember._core, name)
        assert name in ember.__all__
        assert callable(getattr(ember.ndarray, name))
        assert getattr(ember, name).__doc__


@pytest.mark.parametrize("keepdims", [False, True], ids=["nokeep", "keep"])
@pytest.mark.parametrize("axis", AXES, ids=[f"axis={a}".replace(" ", "") for a in AXES])
@pytest.mark.parametrize("layout", LAYOUTS, ids=[lay.name for lay in LAYOUTS])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", NAMES)
def test_row_matches_numpy(name, dtype, layout, axis, keepdims, device):
    if ROWS[name]["index"] and isinstance(axis, tuple):
        with pytest.raises(TypeError):
            getattr(ember, name)(ember.zeros((2, 2), device=device), axis=(0, 1))
        return
    rng = np.random.default_rng(stable_seed(name, dtype, layout.name, axis))
    a, x = layout.make(rng, dtype, device, DOMAIN)
    try:
        exp_dtype, expected = numpy_reference(name, a, axis, keepdims, dtype)
    except Exception as exc:  # NumPy refuses (complex ordering, ...): ember must refuse alike
        with pytest.raises(builtin_exception(exc)):
            call(getattr(ember, name), x, axis, keepdims)
        return
    got = call(getattr(ember, name), x, axis, keepdims)
    # The method takes the axis positionally, as NumPy's do.
    method = getattr(x, name)(axis, keepdims=keepdims)
    n = max(math.prod(a.shape) if axis is None else a.size // max(math.prod(got.shape), 1), 1)
    atol = tolerance(exp_dtype)[0] * 3 * n
    assert_close(got, expected, exp_dtype, atol=atol, err_msg=f"ember.{name}: ")
    assert_close(method, ember.asnumpy(got), exp_dtype, exact=True, err_msg=f"ndarray.{name}: ")


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "float16", "float32", "complex64"])
@pytest.mark.parametrize("name", NAMES)
def test_row_on_empty_input(name, dtype, device):
    a = np.zeros((3, 0), dtype=np_dtype(dtype))
    x = ember.zeros((3, 0), dtype=em_dtype(dtype), device=device)
    identity = ROWS[name]["identity"]
    for axis in (None, 1):
        if identity is None:
            with pytest.raises(ValueError):
                call(getattr(ember, name), x, axis, False)
            continue
        got = call(getattr(ember, name), x, axis, False)
        probe = a.astype(np.float32) if dtype == "bfloat16" else a
        expected = np.asarray(call(getattr(np, name), probe, axis, False))
        assert_close(got, expected, exact=True, err_msg=f"ember.{name} of empty: ")
        assert np.all(ember.asnumpy(got) == identity)
    # Reducing only a non-empty axis of an empty array is empty, identity or not.
    got = getattr(ember, name)(x, axis=0)
    assert got.shape == (0,)


@pytest.mark.parametrize("name", [n for n in NAMES if ROWS[n]["dtype"]])
@pytest.mark.parametrize("dst", ["int32", "float32", "float64"])
def test_row_dtype_argument(name, dst, device):
    a = np.random.default_rng(stable_seed(name, dst)).choice(np.array([1, -1, 2, 3]), (6, 5))
    a = a.astype(np.int16)
    x = ember.asarray(a, device=device)
    for axis in (None, 0, 1):
        kw = {} if axis is None else {"axis": axis}
        expected = np.asarray(getattr(np, name)(a, dtype=np_dtype(dst), **kw))
        got = getattr(ember, name)(x, dtype=em_dtype(dst), **kw)
        assert_close(got, expected, dst)
        assert_close(getattr(x, name)(dtype=em_dtype(dst), **kw), expected, dst)


@pytest.mark.parametrize("name", [n for n in NAMES if not ROWS[n]["dtype"]])
def test_row_without_dtype_argument_refuses_it(name, device):
    x = ember.ones((2, 3), device=device)
    with pytest.raises(TypeError):
        getattr(ember, name)(x, dtype=ember.float64)


@pytest.mark.parametrize("axis", [None, 1])
@pytest.mark.parametrize("name", [n for n in NAMES if ROWS[n]["grad"]])
def test_row_gradient_matches_finite_differences(name, axis, device):
    rng = np.random.default_rng(stable_seed(name, axis))
    # Distinct values away from zero: every row's derivative is smooth there.
    a = rng.permutation(np.arange(1, 13, dtype=np.float64)).reshape(3, 4) / 4 + 0.5
    x = ember.asarray(a, device=device, requires_grad=True)
    w = rng.uniform(0.5, 1.5, np.asarray(call(getattr(np, name), a, axis, False)).shape)
    y = call(getattr(ember, name), x, axis, False)
    (y * ember.asarray(w, device=device)).sum().backward()
    grad = ember.asnumpy(x.grad)
    eps = 1e-6
    numeric = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        hi, lo = a.copy(), a.copy()
        hi[i] += eps
        lo[i] -= eps
        f = getattr(np, name)
        numeric[i] = (
            np.sum(w * call(f, hi, axis, False)) - np.sum(w * call(f, lo, axis, False))
        ) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-6, err_msg=f"d ember.{name}")
