"""Reductions x dtypes x axes x keepdims x layouts, against NumPy.

Result dtypes follow NumPy (sum/prod of int8 -> int64, of uint8 -> uint64, of bool -> int64,
float16 stays float16, mean/var/std of integers -> float64, var/std of complex -> real).
Exact dtypes and order statistics (min, max, argmin, argmax, any, all) must match exactly; sums,
means and variances of floating data are compared with a float64 reference, within the dtype's
tolerance scaled by the magnitude of the data reduced.
"""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from _helpers import (
    ALL_DTYPES,
    COMPLEX_ORDERING_OPS,
    REAL_FLOAT_DTYPES,
    Domain,
    Layout,
    assert_close,
    builtin_exception,
    cast_like_numpy,
    dtype_name,
    em_dtype,
    finite_scale,
    kind,
    np_dtype,
    permute,
    stable_seed,
    to_ember,
    tolerance,
)

REDUCTIONS = [
    "sum",
    "prod",
    "min",
    "max",
    "mean",
    "var",
    "std",
    "any",
    "all",
    "argmin",
    "argmax",
]
ORDER_STATISTICS = {"min", "max", "argmin", "argmax", "any", "all"}
INT_AXIS_ONLY = {"argmin", "argmax"}

LAYOUTS_3D = [
    Layout("3d", (3, 4, 5)),
    Layout("3d_strided", (6, 4, 10), lambda a: a[::2, :, 1::3]),
    Layout("3d_transposed", (3, 4, 5), lambda a: permute(a, (2, 0, 1))),
    Layout("3d_negstride", (3, 4, 5), lambda a: a[::-1, :, ::-2]),
]
AXES_3D = [None, 0, -1, (0, 2), ()]
CASES = [(lay, ax) for lay in LAYOUTS_3D for ax in AXES_3D] + [
    (Layout("0d", ()), None),
    (Layout("0d", ()), ()),
    (Layout("empty", (0,)), None),
    (Layout("empty", (0,)), 0),
    (Layout("empty_3x0", (3, 0)), None),
    (Layout("empty_3x0", (3, 0)), 0),
    (Layout("empty_3x0", (3, 0)), 1),
    (Layout("one", (1,)), None),
    (Layout("one", (1,)), 0),
    (Layout("large", (100_000,)), None),
]


def domain_for(red, size):
    if red == "prod":
        if size > 1000:
            return Domain(choices=(1, -1))
        return Domain(choices=(1, -1, 2, 0.5, -1, 1, -0.5))
    if red == "any":
        return Domain(choices=(0, 0, 0, 1))
    if red == "all":
        return Domain(choices=(1, 1, 1, 1, 1, 0))
    if red in ("argmin", "argmax"):
        return Domain(choices=(0, 1, 2, 3, 1, 2))  # many ties: the first index must win
    return Domain()


def numpy_reduce(red, a, axis, keepdims, **kw):
    fn = getattr(np, red)
    if axis is None:
        return np.asarray(fn(a, keepdims=keepdims, **kw))
    return np.asarray(fn(a, axis=axis, keepdims=keepdims, **kw))


def ember_reduce(red, x, axis, keepdims, **kw):
    fn = getattr(ember, red)
    if axis is None:
        return fn(x, keepdims=keepdims, **kw)
    return fn(x, axis=axis, keepdims=keepdims, **kw)


def reduced_count(shape, axis):
    if axis is None:
        return math.prod(shape)
    axes = (axis,) if isinstance(axis, int) else axis
    return math.prod(shape[a] for a in axes)


def reference(red, a, axis, keepdims, dtype, **kw):
    """(expected dtype, expected values, exact?) for a reduction of ``a`` (dtype ``dtype``)."""
    probe_in = a.astype(np.float16) if dtype == "bfloat16" else a
    probe = numpy_reduce(red, probe_in, axis, keepdims, **kw)  # raises like NumPy would
    exp_dtype = probe.dtype.name
    if dtype == "bfloat16" and exp_dtype == "float16":
        exp_dtype = "bfloat16"
    if red in ORDER_STATISTICS or kind(dtype) in "biu" and red in ("sum", "prod"):
        src = a.astype(np.float32) if dtype == "bfloat16" else a
        return (
            exp_dtype,
            cast_like_numpy(numpy_reduce(red, src, axis, keepdims), exp_dtype),
            True,
        )
    wide = np.complex128 if kind(dtype) == "c" else np.float64
    vals = numpy_reduce(red, a.astype(wide), axis, keepdims, **kw)
    return exp_dtype, cast_like_numpy(vals, exp_dtype), False


def _id(case):
    lay, ax = case
    return f"{lay.name}-axis={ax}".replace(" ", "")


@pytest.mark.parametrize("keepdims", [False, True], ids=["nokeep", "keep"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
@pytest.mark.parametrize("red", REDUCTIONS)
def test_reduction_matches_numpy(red, case, dtype, keepdims, device):
    layout, axis = case
    if red in INT_AXIS_ONLY and isinstance(axis, tuple):
        pytest.skip("argmin/argmax take a single axis")
    rng = np.random.default_rng(stable_seed(red, layout.name, axis, dtype))
    size = math.prod(layout.base_shape)
    a, x = layout.make(rng, dtype, device, domain_for(red, size))
    try:
        exp_dtype, expected, exact = reference(red, a, axis, keepdims, dtype)
    except Exception as exc:  # the oracle refused
        with pytest.raises(builtin_exception(exc)):
            ember_reduce(red, x, axis, keepdims)
        return
    if kind(dtype) == "c" and red in COMPLEX_ORDERING_OPS:
        try:
            got = ember_reduce(red, x, axis, keepdims)
        except TypeError:
            return  # documented deviation: complex ordering may be refused
    else:
        got = ember_reduce(red, x, axis, keepdims)
    if exact:
        assert_close(got, expected, exp_dtype, exact=True)
        return
    rtol, _ = tolerance(exp_dtype)
    n = max(reduced_count(a.shape, axis), 1)
    scale = finite_scale(a)
    if red == "sum":
        atol = rtol * scale * n
    elif red == "var":
        atol = rtol * scale * scale * 4
    elif red == "prod":
        atol = 0.0
    else:
        atol = rtol * scale * 2
    assert_close(got, expected, exp_dtype, atol=max(atol, tolerance(exp_dtype)[1]))


# --------------------------------------------------------------------------------------------
# methods, dtype=, correction/ddof
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("red", REDUCTIONS)
def test_reduction_method_matches_function(red, device):
    rng = np.random.default_rng(5)
    _, x = LAYOUTS_3D[1].make(rng, "float64", device, domain_for(red, 100))
    fn_res = getattr(ember, red)(x, axis=1)
    meth_res = getattr(x, red)(axis=1)
    assert_close(meth_res, ember.asnumpy(fn_res), exact=True)
    assert_close(getattr(x, red)(), ember.asnumpy(getattr(ember, red)(x)), exact=True)


DTYPE_ARG_CASES = [
    ("sum", "int8", "int8"),
    ("sum", "int8", "int32"),
    ("sum", "uint8", "int16"),
    ("sum", "bool", "int32"),
    ("sum", "int32", "float32"),
    ("sum", "float32", "float64"),
    ("sum", "float16", "float32"),
    ("sum", "float64", "float32"),
    ("sum", "float32", "complex64"),
    ("prod", "int16", "int64"),
    ("prod", "int8", "int8"),
    ("prod", "float32", "float64"),
    ("mean", "int32", "float32"),
    ("mean", "float16", "float32"),
]


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("red,src,dst", DTYPE_ARG_CASES)
def test_dtype_argument(red, src, dst, axis, device):
    rng = np.random.default_rng(stable_seed(red, src, dst))
    if red == "prod":
        a = rng.choice(np.array([1, -1, 2, 3]), size=(12, 7)).astype(src)
    else:
        a = rng.integers(-100, 100, size=(40, 7)).astype(src)
    x = to_ember(a, device)
    expected = numpy_reduce(red, a, axis, False, dtype=dst)
    got = ember_reduce(red, x, axis, False, dtype=em_dtype(dst))
    assert_close(got, expected, dst)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "complex128"])
@pytest.mark.parametrize("red", ["var", "std"])
@pytest.mark.parametrize("correction", [0, 1, 2, 1.5])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_var_std_correction(red, correction, axis, dtype, device):
    rng = np.random.default_rng(stable_seed(red, correction, dtype))
    a = (rng.uniform(-3, 3, (6, 5)) * (1 + 1j if kind(dtype) == "c" else 1)).astype(dtype)
    x = to_ember(a, device)
    expected = numpy_reduce(red, a, axis, False, correction=correction)
    assert_close(ember_reduce(red, x, axis, False, correction=correction), expected)
    if float(correction).is_integer():
        ddof = int(correction)
        assert_close(ember_reduce(red, x, axis, False, ddof=ddof), expected)
        assert_close(getattr(x, red)(axis=axis, ddof=ddof), expected)


def test_var_correction_too_large_gives_nan_or_inf(device):
    x = ember.asarray(np.array([1.0, 2.0]), device=device)
    expected = np.var(np.array([1.0, 2.0]), correction=2)  # 0.5 / 0 -> inf
    assert_close(ember.var(x, correction=2), expected)
    single = ember.asarray(np.array([3.0]), device=device)
    assert_close(ember.std(single, correction=1), np.std(np.array([3.0]), ddof=1))


# --------------------------------------------------------------------------------------------
# empty reductions, nan propagation, ties
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int8", "uint8", "bool", "float16", "float32", "complex64"])
def test_empty_sum_and_prod_are_identities(dtype, device):
    x = ember.zeros((0,), dtype=em_dtype(dtype), device=device)
    assert_close(ember.sum(x), np.asarray(np.sum(np.zeros(0, np_dtype(dtype)))))
    assert_close(ember.prod(x), np.asarray(np.prod(np.zeros(0, np_dtype(dtype)))))
    assert ember.sum(x).item() == 0
    assert ember.prod(x).item() == 1
    assert bool(ember.any(x)) is False
    assert bool(ember.all(x)) is True


@pytest.mark.parametrize("red", ["min", "max", "argmin", "argmax"])
@pytest.mark.parametrize("dtype", ["int32", "float32", "bfloat16"])
def test_empty_order_statistic_raises_value_error(red, dtype, device):
    x = ember.zeros((0,), dtype=em_dtype(dtype), device=device)
    with pytest.raises(ValueError):
        getattr(ember, red)(x)
    y = ember.zeros((3, 0), dtype=em_dtype(dtype), device=device)
    with pytest.raises(ValueError):
        getattr(ember, red)(y, axis=1)


@pytest.mark.parametrize("dtype", REAL_FLOAT_DTYPES)
@pytest.mark.parametrize("red", ["min", "max", "argmin", "argmax", "sum", "mean"])
@pytest.mark.parametrize("size", [5, 4096, 100_000])
def test_nan_propagation(red, size, dtype, device):
    rng = np.random.default_rng(size)
    a = rng.uniform(-5, 5, (4, size)).astype(np.float64)
    a[1, size // 2] = np.nan
    a[2, 0] = np.nan
    a[2, -1] = np.nan
    a[3, -1] = np.nan  # a trailing nan must not be skipped by a vectorised main loop
    a = a.astype(np_dtype(dtype))
    x = to_ember(a, device)
    for axis in (None, 1):
        exp_dtype, expected, exact = reference(red, a, axis, False, dtype)
        got = ember_reduce(red, x, axis, False)
        if exact:
            assert_close(got, expected, exp_dtype, exact=True)
        else:
            n = a.size if axis is None else size
            rtol = tolerance(exp_dtype)[0]
            atol = rtol * 5 * (n if red == "sum" else 2)
            assert_close(got, expected, exp_dtype, atol=atol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_inf_handling(dtype, device):
    a = np.array([[np.inf, 1.0], [-np.inf, 2.0], [np.inf, -np.inf]], dtype=dtype)
    x = to_ember(a, device)
    for red in ("sum", "max", "min", "mean", "prod"):
        for axis in (None, 0, 1):
            expected = numpy_reduce(red, a, axis, False)
            assert_close(ember_reduce(red, x, axis, False), expected, err_msg=f"{red} {axis}: ")


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("red", ["argmin", "argmax"])
def test_arg_ties_give_first_index(red, dtype, device):
    a = np.array([[3, 1, 3, 1, 3], [2, 2, 2, 2, 2], [0, 5, 5, 0, 5]]).astype(np_dtype(dtype))
    x = to_ember(a, device)
    ref = a.astype(np.float64)
    for axis in (None, 0, 1):
        expected = np.asarray(getattr(np, red)(ref, axis=axis))
        assert_close(ember_reduce(red, x, axis, False), expected, "int64")
    big = np.zeros(100_000, dtype=np_dtype(dtype))
    big[[7, 50_000, 99_999]] = 1
    got = getattr(ember, red)(to_ember(big, device))
    assert int(got) == (7 if red == "argmax" else 0)


@pytest.mark.parametrize("red", ["sum", "max", "any"])
def test_axis_errors(red, device):
    x = ember.zeros((2, 3), dtype=ember.float32, device=device)
    for bad in (2, -3):
        with pytest.raises((ValueError, IndexError)):
            getattr(ember, red)(x, axis=bad)
    with pytest.raises(ValueError):
        getattr(ember, red)(x, axis=(0, 0))
    with pytest.raises((TypeError, ValueError)):
        getattr(ember, red)(x, axis=1.5)


# --------------------------------------------------------------------------------------------
# determinism and accuracy
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("red", ["sum", "mean", "var", "prod"])
def test_deterministic(red, dtype, device):
    rng = np.random.default_rng(11)
    a = (
        rng.uniform(0.5, 1.5, (317, 331))
        if red != "prod"
        else rng.uniform(0.999, 1.001, (317, 331))
    )
    a = (
        a.astype(np.float32).astype(np_dtype(dtype))
        if dtype != "complex64"
        else (a + 1j).astype(dtype)
    )
    x = to_ember(a, device)
    xt = x.T
    for axis in (None, 0, 1):
        r1 = ember.asnumpy(ember_reduce(red, x, axis, False))
        r2 = ember.asnumpy(ember_reduce(red, x, axis, False))
        r3 = ember.asnumpy(ember_reduce(red, x.copy(), axis, False))
        assert r1.tobytes() == r2.tobytes(), f"{red} axis={axis}: two runs differ"
        assert r1.tobytes() == r3.tobytes(), f"{red} axis={axis}: a copy reduces differently"
        t1 = ember.asnumpy(ember_reduce(red, xt, axis, False))
        t2 = ember.asnumpy(ember_reduce(red, xt, axis, False))
        assert t1.tobytes() == t2.tobytes()


def test_large_float32_sum_is_accurate(device):
    rng = np.random.default_rng(2024)
    a = rng.uniform(0.0, 1.0, 1_000_000).astype(np.float32)
    x = to_ember(a, device)
    ref = float(np.sum(a.astype(np.float64)))
    got = ember.sum(x)
    assert dtype_name(got.dtype) == "float32"
    rel = abs(float(got) - ref) / ref
    assert rel < 1e-5, f"float32 sum of 1e6 values: relative error {rel:.2e} vs float64 reference"
    got_mean = float(ember.mean(x))
    assert abs(got_mean - ref / a.size) / (ref / a.size) < 1e-5
    # the same values in another layout must give the same answer to that accuracy
    y = to_ember(a.reshape(1000, 1000), device).T
    assert abs(float(ember.sum(y)) - ref) / ref < 1e-5


def test_large_float16_sum_does_not_saturate(device):
    a = np.full(100_000, 0.5, dtype=np.float16)  # naive float16 accumulation stalls at 2048
    got = ember.sum(to_ember(a, device))
    assert dtype_name(got.dtype) == "float16"
    assert float(got) == float(np.float16(50_000.0))


def test_int_sum_accumulates_in_int64(device):
    a = np.full(100_000, 127, dtype=np.int8)
    got = ember.sum(to_ember(a, device))
    assert dtype_name(got.dtype) == "int64"
    assert int(got) == 12_700_000
    u = np.full(100_000, 255, dtype=np.uint8)
    got = ember.sum(to_ember(u, device))
    assert dtype_name(got.dtype) == "uint64" and int(got) == 25_500_000


def test_reduction_returns_zero_d_array(device):
    x = ember.ones((2, 3), dtype=ember.float32, device=device)
    r = ember.sum(x)
    assert isinstance(r, ember.ndarray)
    assert r.shape == () and r.ndim == 0
    assert float(r) == 6.0


@pytest.mark.parametrize("red", ["sum", "mean", "max", "argmax", "prod", "var", "any"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_reduction_of_broadcast_view(red, axis, device):
    if red == "argmax" and isinstance(axis, tuple):
        pytest.skip("argmax takes a single axis")
    base = np.array([[1.001, -0.999, 1.0]])  # products stay finite in any order
    a = np.broadcast_to(base, (4000, 3))
    x = ember.broadcast_to(to_ember(base, device), (4000, 3))
    expected = numpy_reduce(red, a, axis, False)
    assert_close(ember_reduce(red, x, axis, False), expected, err_msg=f"{red} axis={axis}: ")
