"""IEEE special values and integer edge cases, against NumPy.

nan, +-inf, +-0.0 (sign of zero checked), subnormals and extremes through every unary and binary
floating op of the table; integer division by zero, INT_MIN // -1, wrap-around, shift counts out
of range, casts, round-half-to-even, nextafter, copysign, signbit, nan propagation of
maximum/minimum.

floor_divide with an infinite operand follows the Array API standard (its conformance suite
checks it) where NumPy follows Python: inf // 2 is inf (NumPy nan), 1 // -inf is -0 (NumPy -1).

Sign of zero is not checked for ``ZERO_SIGN_UNCHECKED``: which zero maximum(-0.0, +0.0) returns is
implementation-defined (NumPy itself returns the second operand), and NumPy's sign(-0.0) is +0.0
while the Array API leaves it open.
"""

from __future__ import annotations

import itertools

import ember
import numpy as np
import pytest
from _helpers import (
    BF16,
    INT_DTYPES,
    REAL_FLOAT_DTYPES,
    SIGNED_DTYPES,
    assert_close,
    builtin_exception,
    cast_like_numpy,
    em_dtype,
    kind,
    nextafter_reference,
    np_dtype,
    numpy_oracle,
    to_ember,
)
from test_elementwise import NUMPY_NAMES, OPS, must_be_exact, numpy_func

ZERO_SIGN_UNCHECKED = {"maximum", "minimum", "clip", "sign"}
TRIG_HUGE_ARG_SKIPPED = {
    "sin",
    "cos",
    "tan",
}  # argument reduction of 1e38 is not under test


def float_info(dtype):
    if dtype == "bfloat16":
        import ml_dtypes

        return ml_dtypes.finfo(ml_dtypes.bfloat16)
    return np.finfo(np_dtype(dtype))


def specials(dtype, *, huge=True):
    fi = float_info(dtype)
    vals = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.5, 3.0]
    vals += [float(fi.smallest_subnormal), -float(fi.smallest_normal)]
    if huge:
        vals += [float(fi.max), -float(fi.max)]
    return np.array(vals, dtype=np.float64).astype(np_dtype(dtype))


def float_ops(arity):
    return [name for name, a in OPS if a == arity and name != "clip"]


def _reference(name, args, dtype):
    if name == "nextafter" and dtype in ("bfloat16", "float16"):
        return dtype, nextafter_reference(*args, dtype)
    out_dtype, want = numpy_oracle(numpy_func(name), args, dtype)
    if name == "floor_divide":
        # the standard, not NumPy, where an operand is infinite: inf // 2 is inf, 1 // -inf is -0
        a, b = (np.asarray(v, np.float64) for v in args)
        want = np.where(np.isinf(a) | np.isinf(b), a / b, want).astype(want.dtype)
    return out_dtype, want


def _check(name, np_args, dtype, device):
    em_fn = getattr(ember, name)
    em_args = [to_ember(a, device) for a in np_args]
    try:
        exp_dtype, expected = _reference(name, np_args, dtype)
    except Exception as exc:  # the oracle refused
        with pytest.raises(builtin_exception(exc)):
            em_fn(*em_args)
        return
    got = em_fn(*em_args)
    exact = must_be_exact(name, dtype, exp_dtype)
    try:
        assert_close(
            got,
            expected,
            exp_dtype,
            exact=exact,
            check_zero_sign=name not in ZERO_SIGN_UNCHECKED,
            err_msg=f"{name}[{dtype}]: ",
        )
    except AssertionError as err:
        raise AssertionError(f"{err}\n{_inputs_at_mismatch(got, expected, np_args)}") from None


def _inputs_at_mismatch(got, expected, np_args, limit=8):
    """The inputs where got and expected are not bit-identical (as float64), for messages."""
    g = np.asarray(ember.asnumpy(got))
    e = np.asarray(expected)
    if g.shape != e.shape or g.dtype.kind not in "fcbiuV":
        return ""
    gf = g.astype(np.complex128) if g.dtype.kind == "c" else g.astype(np.float64)
    ef = e.astype(np.complex128) if e.dtype.kind == "c" else e.astype(np.float64)
    same = (gf == ef) | (np.isnan(gf) & np.isnan(ef))
    if gf.dtype.kind == "f":
        same &= (np.signbit(gf) == np.signbit(ef)) | np.isnan(ef)
    rows = []
    for i in np.flatnonzero(~same)[:limit]:
        ins = ", ".join(repr(float(a.reshape(-1)[i].astype(np.float64))) for a in np_args)
        rows.append(f"  inputs ({ins}): got {gf.reshape(-1)[i]!r}, expected {ef.reshape(-1)[i]!r}")
    return "mismatching inputs:\n" + "\n".join(rows)


@pytest.mark.parametrize("dtype", REAL_FLOAT_DTYPES)
@pytest.mark.parametrize("name", float_ops(1))
def test_unary_special_values(name, dtype, device):
    x = specials(dtype, huge=name not in TRIG_HUGE_ARG_SKIPPED)
    _check(name, [x], dtype, device)


@pytest.mark.parametrize("dtype", REAL_FLOAT_DTYPES)
@pytest.mark.parametrize("name", float_ops(2))
def test_binary_special_values(name, dtype, device):
    s = specials(dtype)
    pairs = np.array(list(itertools.product(range(len(s)), repeat=2)))
    _check(name, [s[pairs[:, 0]], s[pairs[:, 1]]], dtype, device)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize(
    "name",
    ["isnan", "isinf", "isfinite", "abs", "conj", "real", "imag", "negative", "equal"],
)
def test_complex_special_values(name, dtype, device):
    parts = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5]
    z = np.array([complex(a, b) for a in parts for b in parts], dtype=dtype)
    args = [z] if dict(OPS).get(name, 1) == 1 else [z, z[::-1].copy()]
    if name not in dict(OPS):
        pytest.fail(f"{name} missing from the op table")
    _check(name, args, dtype, device)


# --------------------------------------------------------------------------------------------
# integer division and remainder
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", ["floor_divide", "remainder"])
def test_integer_division_by_zero_is_zero(name, dtype, device):
    info = np.iinfo(dtype)
    a = np.array([0, 1, 7, int(info.max), int(info.min)], dtype=dtype)
    b = np.zeros_like(a)
    expected = getattr(np, name)(a, b)
    np.testing.assert_array_equal(expected, 0)  # NumPy's convention
    assert_close(getattr(ember, name)(to_ember(a, device), to_ember(b, device)), expected)


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("sym", ["//", "%"])
def test_integer_division_by_zero_operator(sym, dtype, device):
    a = np.array([3, 0, 5], dtype=dtype)
    x = to_ember(a, device)
    z = to_ember(np.zeros(3, dtype), device)
    got = x // z if sym == "//" else x % z
    assert_close(got, np.zeros(3, dtype))


@pytest.mark.parametrize("dtype", SIGNED_DTYPES)
def test_int_min_floor_divide_minus_one(dtype, device):
    m = np.iinfo(dtype).min
    a = np.array([m, m, -7, 7, -7, 7], dtype=dtype)
    b = np.array([-1, 1, 2, -2, -2, 2], dtype=dtype)
    x, y = to_ember(a, device), to_ember(b, device)
    assert_close(ember.floor_divide(x, y), np.floor_divide(a, b))  # [min, min, -4, -4, 3, 3]
    assert_close(ember.remainder(x, y), np.remainder(a, b))  # [0, 0, 1, -1, -1, 1]


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_overflow_wraps(dtype, device):
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, info.max, info.min], dtype=dtype)
    one = np.ones(4, dtype=dtype)
    two = (one + one).astype(dtype)
    x, o, t = to_ember(a, device), to_ember(one, device), to_ember(two, device)
    assert_close(ember.add(x, o), a + one)
    assert_close(ember.subtract(x, o), a - one)
    assert_close(ember.multiply(x, t), a * two)
    assert_close(ember.negative(x), np.negative(a))
    assert_close(ember.abs(x), np.abs(a))
    assert_close(ember.square(x), np.square(a))
    assert_close(x + 1, a + 1)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_pow_edges(dtype, device):
    bits = np.dtype(dtype).itemsize * 8
    a = np.array([0, 1, 2, 2, 3, 0], dtype=dtype)
    b = np.array([0, 0, bits - 1, bits, 2, 5], dtype=dtype)
    assert_close(ember.pow(to_ember(a, device), to_ember(b, device)), np.power(a, b))


# --------------------------------------------------------------------------------------------
# shifts
# --------------------------------------------------------------------------------------------


def shift_operands(dtype):
    info = np.iinfo(dtype)
    bits = np.dtype(dtype).itemsize * 8
    lhs = [0, 1, 3, int(info.max), int(info.min)]
    if info.min < 0:
        lhs += [-1, -8]
    counts = [0, 1, bits - 1, bits, bits + 1, 2 * bits, int(info.max)]
    if info.min < 0:
        counts += [-1, -bits, int(info.min)]
    counts = [c for c in counts if info.min <= c <= info.max]
    pairs = list(itertools.product(lhs, counts))
    return (
        np.array([p[0] for p in pairs], dtype=dtype),
        np.array([p[1] for p in pairs], dtype=dtype),
    )


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", ["bitwise_left_shift", "bitwise_right_shift"])
def test_shift_counts_out_of_range(name, dtype, device):
    a, b = shift_operands(dtype)
    expected = getattr(np, NUMPY_NAMES[name])(a, b)
    got = getattr(ember, name)(to_ember(a, device), to_ember(b, device))
    assert_close(got, expected, err_msg=f"{name}({a.tolist()}, {b.tolist()}): ")


# --------------------------------------------------------------------------------------------
# casts
# --------------------------------------------------------------------------------------------

FLOAT_TO_INT_VALUES = [-3.7, -0.5, -0.0, 0.0, 0.49, 2.9, 100.5, 126.99]


@pytest.mark.parametrize("src", REAL_FLOAT_DTYPES)
@pytest.mark.parametrize("dst", INT_DTYPES)
def test_float_to_int_cast_in_range_truncates(src, dst, device):
    vals = np.array(FLOAT_TO_INT_VALUES, dtype=np.float64)
    if np.iinfo(dst).min == 0:
        vals = np.abs(vals)
    a = vals.astype(np_dtype(src))
    expected = a.astype(np.float64).astype(dst)
    assert_close(to_ember(a, device).astype(em_dtype(dst)), expected)


@pytest.mark.parametrize("src", REAL_FLOAT_DTYPES + ["complex64", "complex128"])
def test_float_to_bool_cast(src, device):
    a = np.array([0.0, -0.0, np.nan, 0.5, np.inf, -1e-30], dtype=np.float64)
    a = a.astype(np_dtype(src)) if kind(src) == "f" else (a + 0j).astype(src)
    expected = np.asarray(a).astype(np.float64 if kind(src) == "f" else np.complex128) != 0
    expected |= np.isnan(np.asarray(a).astype(np.complex128))
    assert_close(to_ember(a, device).astype(ember.bool), expected)


ROUNDING_CASES = {
    # (source dtype, target dtype): values that exercise round-to-nearest-even, overflow, subnormals
    ("float64", "float32"): [
        1 + 2**-24,
        1 + 3 * 2**-24,
        3.4028235677973366e38,
        1e-46,
        -1e-40,
    ],
    ("float64", "float16"): [
        1 + 2**-11,
        1 + 3 * 2**-11,
        65519.0,
        65520.0,
        1e-8,
        3e-8,
        -6e-8,
    ],
    ("float32", "float16"): [2049.0, 2051.0, 1e-5, -1e-7, 70000.0],
    ("float32", "bfloat16"): [
        1 + 2**-8,
        1 + 3 * 2**-8,
        257.0,
        259.0,
        3.4e38,
        1e-40,
        -0.0,
    ],
    ("float64", "bfloat16"): [1 + 2**-8, 1e-39, -1e300],
    ("float16", "bfloat16"): [1 + 2**-9, 1 + 3 * 2**-9, 65504.0, 6e-8],
    ("bfloat16", "float16"): [256.0, 3.0e38, 1e-30, 1.0078125],
    ("int64", "float64"): [2**53 + 1, 2**53 + 3, -(2**63), 2**62 + 2**9],
    ("uint64", "float64"): [2**64 - 1, 2**53 + 1],
    ("int32", "float32"): [16777217, 16777219, -(2**31), 2**31 - 1],
    ("int16", "float16"): [2049, 2051, -32768, 32767],
    ("int32", "bfloat16"): [257, 259, 261, -(2**31), 2**31 - 1],
    ("float32", "float64"): [1.1, np.nan, -np.inf],
}


@pytest.mark.parametrize("src,dst", list(ROUNDING_CASES), ids=lambda p: str(p))
def test_cast_rounding(src, dst, device):
    vals = ROUNDING_CASES[(src, dst)]
    if kind(src) == "f":
        a = np.array(vals, dtype=np.float64).astype(np_dtype(src))
    else:
        a = np.array(vals, dtype=src)
    expected = cast_like_numpy(a if a.dtype != BF16 else a.astype(np.float32), dst)
    got = to_ember(a, device).astype(em_dtype(dst))
    assert_close(got, expected, dst, exact=True, check_zero_sign=True)


# --------------------------------------------------------------------------------------------
# rounding, nextafter, copysign, signbit
# --------------------------------------------------------------------------------------------

HALVES = [
    0.5,
    1.5,
    2.5,
    3.5,
    4.5,
    -0.5,
    -1.5,
    -2.5,
    -3.5,
    0.4999,
    -0.4999,
    1e4 + 0.5,
    0.0,
    -0.0,
]


@pytest.mark.parametrize("dtype", REAL_FLOAT_DTYPES + ["complex64", "complex128"])
def test_round_half_to_even(dtype, device):
    a = np.array(HALVES, dtype=np.float64)
    if kind(dtype) == "c":
        a = (a + 1j * a[::-1]).astype(dtype)
        expected = np.round(a)
    else:
        a = a.astype(np_dtype(dtype))
        expected = cast_like_numpy(np.round(a.astype(np.float64)), dtype)
    assert_close(
        ember.round(to_ember(a, device)),
        expected,
        dtype,
        exact=True,
        check_zero_sign=True,
    )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_round_large_values_unchanged(dtype, device):
    fi = np.finfo(dtype)
    a = np.array([2.0 ** (fi.nmant + 1) + 2, 2.0 ** (fi.nmant) + 1, float(fi.max)], dtype=dtype)
    assert_close(ember.round(to_ember(a, device)), a, exact=True)


NEXTAFTER_CASES = [
    (0.0, 1.0),
    (-0.0, -1.0),
    (0.0, -0.0),
    (-0.0, 0.0),
    (1.0, 2.0),
    (1.0, 0.0),
    (-1.0, -2.0),
    (2.0, 2.0),
    (np.nan, 1.0),
    (1.0, np.nan),
    (np.inf, 0.0),
    (-np.inf, 0.0),
    (1.0, np.inf),
]


@pytest.mark.parametrize("dtype", REAL_FLOAT_DTYPES)
def test_nextafter(dtype, device):
    fi = float_info(dtype)
    cases = NEXTAFTER_CASES + [
        (float(fi.max), np.inf),
        (float(fi.smallest_normal), 0.0),
    ]
    a = np.array([c[0] for c in cases]).astype(np_dtype(dtype))
    b = np.array([c[1] for c in cases]).astype(np_dtype(dtype))
    expected = nextafter_reference(a, b, dtype)
    got = ember.nextafter(to_ember(a, device), to_ember(b, device))
    assert_close(got, expected, dtype, exact=True, check_zero_sign=True)
    # the step away from zero is the smallest subnormal, not the smallest normal (no FTZ)
    tiny = ember.asnumpy(got)[0].astype(np.float64)
    assert tiny == float(fi.smallest_subnormal)


@pytest.mark.parametrize("dtype", REAL_FLOAT_DTYPES)
def test_copysign(dtype, device):
    a = np.array([1.0, -1.0, 0.0, -0.0, np.inf, 2.5, np.nan, np.nan]).astype(np_dtype(dtype))
    b = np.array([-0.0, 0.0, -1.0, 1.0, -1.0, -np.inf, -1.0, 1.0]).astype(np_dtype(dtype))
    got = ember.asnumpy(ember.copysign(to_ember(a, device), to_ember(b, device)))
    expected = np.copysign(a.astype(np.float64), b.astype(np.float64))
    assert_close(got, cast_like_numpy(expected, dtype), dtype, exact=True, check_zero_sign=True)
    np.testing.assert_array_equal(np.signbit(got.astype(np.float32)), np.signbit(expected))


@pytest.mark.parametrize("dtype", REAL_FLOAT_DTYPES)
def test_signbit(dtype, device):
    neg_nan = np.copysign(np.nan, -1.0)
    a = np.array([-0.0, 0.0, -1.0, 1.0, -np.inf, np.inf, np.nan, neg_nan])
    expected = np.signbit(a)
    got = ember.signbit(to_ember(a.astype(np_dtype(dtype)), device))
    assert_close(got, expected)


@pytest.mark.parametrize("dtype", REAL_FLOAT_DTYPES)
@pytest.mark.parametrize("name", ["maximum", "minimum"])
@pytest.mark.parametrize("size", [7, 100_000])
def test_maximum_minimum_propagate_nan(name, size, dtype, device):
    # large sizes hit vectorised paths, where max/min instructions silently drop nan
    rng = np.random.default_rng(size)
    a = rng.uniform(-5, 5, size)
    b = rng.uniform(-5, 5, size)
    a[rng.integers(0, size, max(size // 10, 2))] = np.nan
    b[rng.integers(0, size, max(size // 10, 2))] = np.nan
    a[0], b[1] = np.nan, np.nan
    a = a.astype(np_dtype(dtype))
    b = b.astype(np_dtype(dtype))
    expected = getattr(np, name)(a.astype(np.float64), b.astype(np.float64))
    got = getattr(ember, name)(to_ember(a, device), to_ember(b, device))
    assert_close(got, cast_like_numpy(expected, dtype), dtype, exact=True)


@pytest.mark.parametrize(
    "dtype,x,rtol",
    [("float64", 1e-10, 1e-12), ("float64", -1e-300, 1e-12), ("float32", 1e-6, 1e-5)],
)
@pytest.mark.parametrize("name", ["expm1", "log1p"])
def test_expm1_log1p_accurate_near_zero(name, dtype, x, rtol, device):
    a = np.array([x, -x, 0.0, -0.0], dtype=dtype)
    got = getattr(ember, name)(to_ember(a, device))
    expected = getattr(np, name)(a)
    assert_close(got, expected, rtol=rtol, atol=0.0, check_zero_sign=True)


@pytest.mark.parametrize("dtype", REAL_FLOAT_DTYPES)
@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_classification(name, dtype, device):
    a = specials(dtype)
    assert_close(
        getattr(ember, name)(to_ember(a, device)),
        getattr(np, name)(a.astype(np.float64)),
    )


@pytest.mark.parametrize("dtype", INT_DTYPES + ["bool"])
@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite", "signbit"])
def test_classification_of_exact_dtypes(name, dtype, device):
    a = np.array([0, 1, 1], dtype=dtype)
    try:
        expected = getattr(np, name)(a)
    except TypeError:
        with pytest.raises(TypeError):
            getattr(ember, name)(to_ember(a, device))
        return
    assert_close(getattr(ember, name)(to_ember(a, device)), expected)
