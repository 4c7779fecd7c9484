"""Type promotion, casting rules and dtype information, against NumPy 2 (NEP 50).

bfloat16 is not a NumPy dtype; its rules (from the API contract):
  bf16 + bool/int8/uint8 -> bf16, + int16/uint16 -> float32, + (u)int32/(u)int64 -> float64,
  bf16 + float16 -> float32, bf16 + float32 -> float32, bf16 + float64 -> float64,
  bf16 + complex64 -> complex64, bf16 + complex128 -> complex128.
can_cast(a, b) ("safe") is true exactly when result_type(a, b) == b, which holds for every NumPy
pair (checked below) and defines it for bfloat16.
"""

from __future__ import annotations

import operator

import ember
import ml_dtypes
import numpy as np
import pytest
from _helpers import (
    ALL_DTYPES,
    COMPLEX_ORDERING_OPS,
    INT_DTYPES,
    NUMPY_DTYPES,
    Domain,
    assert_close,
    builtin_exception,
    dtype_name,
    em_dtype,
    kind,
    layout_groups,
    np_dtype,
    stable_seed,
    to_ember,
)

BF16_WITH = {
    "bool": "bfloat16",
    "int8": "bfloat16",
    "uint8": "bfloat16",
    "int16": "float32",
    "uint16": "float32",
    "int32": "float64",
    "uint32": "float64",
    "int64": "float64",
    "uint64": "float64",
    "float16": "float32",
    "bfloat16": "bfloat16",
    "float32": "float32",
    "float64": "float64",
    "complex64": "complex64",
    "complex128": "complex128",
}


def expected_result_type(a: str, b: str) -> str:
    if a == "bfloat16":
        return BF16_WITH[b]
    if b == "bfloat16":
        return BF16_WITH[a]
    return np.result_type(a, b).name


PAIRS = [(a, b) for a in ALL_DTYPES for b in ALL_DTYPES]


@pytest.mark.parametrize("a,b", PAIRS)
def test_result_type_table(a, b):
    got = ember.result_type(em_dtype(a), em_dtype(b))
    assert dtype_name(got) == expected_result_type(a, b)


@pytest.mark.parametrize("a,b", PAIRS)
def test_binary_op_result_dtype(a, b, device):
    x = ember.ones((2, 3), dtype=em_dtype(a), device=device)
    y = ember.ones((3,), dtype=em_dtype(b), device=device)
    expected = expected_result_type(a, b)
    z = x + y
    assert dtype_name(z.dtype) == expected
    assert dtype_name(ember.multiply(y, x).dtype) == expected
    assert z.shape == (2, 3)
    assert_close(z, np.full((2, 3), 2 if expected != "bool" else True), expected)


@pytest.mark.parametrize("a,b", [p for p in PAIRS if "bfloat16" not in p][::7])
def test_result_type_accepts_arrays_and_mixes(a, b, device):
    x = ember.zeros(2, dtype=em_dtype(a), device=device)
    assert dtype_name(ember.result_type(x, em_dtype(b))) == expected_result_type(a, b)
    assert dtype_name(ember.result_type(em_dtype(a), x)) == a


@pytest.mark.parametrize(
    "dts",
    [
        ("int8", "uint8", "float16"),
        ("bool", "int16", "uint32"),
        ("float16", "bfloat16"),
    ],
)
def test_result_type_many_arguments(dts):
    if "bfloat16" in dts:
        expected = "float32"
    else:
        expected = np.result_type(*dts).name  # NumPy promotes all at once, not pairwise
    assert dtype_name(ember.result_type(*[em_dtype(d) for d in dts])) == expected


def test_numpy_pairs_satisfy_can_cast_identity():
    # justifies deriving bfloat16's can_cast from its result_type
    for a in NUMPY_DTYPES:
        for b in NUMPY_DTYPES:
            assert np.can_cast(a, b) == (np.result_type(a, b) == np.dtype(b)), (a, b)


@pytest.mark.parametrize("a,b", PAIRS)
def test_can_cast_table(a, b):
    expected = expected_result_type(a, b) == b
    if "bfloat16" not in (a, b):
        expected = bool(np.can_cast(a, b))
    assert bool(ember.can_cast(em_dtype(a), em_dtype(b))) is expected


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
@pytest.mark.parametrize("a,b", [p for p in PAIRS if "bfloat16" not in p][::5])
def test_can_cast_casting_modes(a, b, casting):
    try:
        got = ember.can_cast(em_dtype(a), em_dtype(b), casting=casting)
    except TypeError:
        pytest.skip("ember.can_cast has no casting= (the Array API signature)")
    assert bool(got) is bool(np.can_cast(a, b, casting=casting))


# --------------------------------------------------------------------------------------------
# weak Python scalars (NEP 50)
# --------------------------------------------------------------------------------------------

SCALARS = {"bool": True, "int": 3, "float": 2.5, "complex": 1 - 2j}


def expected_weak(dtype: str, scalar) -> str:
    if dtype == "bfloat16":
        if isinstance(scalar, complex):
            return "complex64"
        return "bfloat16"
    return (np.ones(1, dtype) + scalar).dtype.name


@pytest.mark.parametrize("scalar", list(SCALARS), ids=str)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_weak_scalar_promotion(dtype, scalar, device):
    s = SCALARS[scalar]
    a = np.ones((2, 2), dtype=np.float32).astype(np_dtype(dtype))
    x = to_ember(a, device)
    expected = expected_weak(dtype, s)
    for z in (x + s, s + x, x * s, s * x):
        assert dtype_name(z.dtype) == expected, (dtype, s)
    if dtype == "bfloat16":
        ref = np.full((2, 2), 1 + s)
    else:
        ref = np.ones((2, 2), dtype) + s
    assert_close(x + s, ref, expected)


@pytest.mark.parametrize("scalar", list(SCALARS), ids=str)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_result_type_with_python_scalar(dtype, scalar):
    s = SCALARS[scalar]
    x = ember.zeros(2, dtype=em_dtype(dtype))
    assert dtype_name(ember.result_type(x, s)) == expected_weak(dtype, s)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_weak_float_keeps_precision(dtype, device):
    x = ember.ones(3, dtype=em_dtype(dtype), device=device)
    assert dtype_name((x * 2.5).dtype) == dtype
    assert dtype_name((x / 3).dtype) == dtype
    assert dtype_name((x - 1).dtype) == dtype


@pytest.mark.parametrize(
    "dtype,value",
    [
        ("int8", 1000),
        ("int8", -129),
        ("uint8", -1),
        ("uint8", 256),
        ("int16", 2**15),
        ("uint32", 2**32),
        ("int64", 2**63),
        ("uint64", -1),
        ("uint64", 2**64),
    ],
)
@pytest.mark.parametrize("op", ["add", "mul", "lt", "radd"])
def test_out_of_range_python_int_raises_overflow(dtype, value, op, device):
    x = ember.ones(3, dtype=em_dtype(dtype), device=device)
    fn = {
        "add": lambda: x + value,
        "mul": lambda: x * value,
        "lt": lambda: x < value,
        "radd": lambda: value + x,
    }[op]
    a = np.ones(3, dtype)
    np_fn = {
        "add": lambda: a + value,
        "mul": lambda: a * value,
        "lt": lambda: a < value,
        "radd": lambda: value + a,
    }[op]
    try:
        ref = np_fn()
    except Exception as exc:  # the oracle refused
        with pytest.raises(builtin_exception(exc)):
            fn()
        return
    # NumPy accepts it (comparisons with out-of-range ints are well defined)
    assert_close(fn(), ref)


def test_int8_plus_in_range_scalar_stays_int8(device):
    x = ember.asarray(np.array([1, 2, 127], np.int8), device=device)
    z = x + 1
    assert dtype_name(z.dtype) == "int8"
    assert_close(z, np.array([1, 2, 127], np.int8) + 1)


def test_int64_uint64_promote_to_float64(device):
    x = ember.asarray(np.array([-1, 2], np.int64), device=device)
    y = ember.asarray(np.array([2**63, 1], np.uint64), device=device)
    z = x + y
    assert dtype_name(z.dtype) == "float64"
    assert_close(z, np.array([-1, 2], np.int64) + np.array([2**63, 1], np.uint64))


@pytest.mark.parametrize("other", ["bool", "int8", "int16", "int32", "float16", "float32"])
def test_bfloat16_mixed_values(other, device):
    a = np.array([1.5, -2.0, 3.0], dtype=np.float32)
    x = ember.asarray(a, dtype=ember.bfloat16, device=device)
    b = np.array([1, 0, 1], dtype=other)
    y = ember.asarray(b, device=device)
    expected = BF16_WITH[other]
    z = x + y
    assert dtype_name(z.dtype) == expected
    ref = (a.astype(np.float64) + b.astype(np.float64)).astype(np_dtype(expected))
    assert_close(z, ref, expected, exact=True)


# --------------------------------------------------------------------------------------------
# in-place operators: NumPy's same_kind casting of the result into the left operand
# --------------------------------------------------------------------------------------------

INPLACE = {
    "+=": (operator.iadd, operator.add),
    "-=": (operator.isub, operator.sub),
    "*=": (operator.imul, operator.mul),
    "/=": (operator.itruediv, operator.truediv),
}


def _np_inplace(fn, a, b):
    a = a.copy()
    return fn(a, b)


def _inplace_allowed(a: str, b: str) -> bool:
    res = expected_result_type(a, b)
    sub = {"bfloat16": "float16"}
    ra = sub.get(a, a)
    rres = sub.get(res, res)
    return bool(np.can_cast(rres, ra, casting="same_kind"))


@pytest.mark.parametrize("a,b", PAIRS[::2] + [("int8", "float32"), ("float32", "complex64")])
@pytest.mark.parametrize("sym", ["+=", "*="])
def test_inplace_array_casting(sym, a, b, device):
    ifn, fn = INPLACE[sym]
    an = np.array([1, 2, 3], dtype=np.float32).astype(np_dtype(a))
    bn = np.array([1, 0, 1], dtype=np.float32).astype(np_dtype(b))
    x = to_ember(an, device)
    y = to_ember(bn, device)
    if not _inplace_allowed(a, b):
        with pytest.raises(TypeError):
            ifn(x, y)
        np.testing.assert_array_equal(ember.asnumpy(x).astype(np.float64), an.astype(np.float64))
        return
    before_id = id(x)
    x = ifn(x, y)
    assert id(x) == before_id, "in-place operator must return the same array object"
    assert dtype_name(x.dtype) == a
    ref = fn(an.astype(np.complex128), bn.astype(np.complex128))
    if kind(a) != "c":
        ref = ref.real
    with np.errstate(all="ignore"):
        ref = ref.astype(np_dtype(a)) if kind(a) != "b" else ref.astype(bool)
    assert_close(x, ref, a)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("scalar", list(SCALARS), ids=str)
@pytest.mark.parametrize("sym", ["+=", "-=", "*=", "/="])
def test_inplace_python_scalar(sym, scalar, dtype, device):
    ifn, _ = INPLACE[sym]
    s = SCALARS[scalar]
    src = dtype if dtype != "bfloat16" else "float16"  # NumPy stand-in with the same rules here
    an = np.array([1, 2, 3], dtype=src)
    try:
        ref = _np_inplace(ifn, an, s)
    except Exception as exc:  # the oracle refused
        x = ember.ones(3, dtype=em_dtype(dtype), device=device)
        with pytest.raises(builtin_exception(exc)):
            ifn(x, s)
        return
    x = to_ember(an.astype(np_dtype(dtype)), device)
    x = ifn(x, s)
    assert dtype_name(x.dtype) == dtype
    if dtype == "bfloat16":
        ref = ref.astype(np.float32).astype(np_dtype("bfloat16"))
    assert_close(x, ref, dtype)


def test_inplace_int8_plus_float_raises_type_error(device):
    x = ember.asarray(np.arange(5, dtype=np.int8), device=device)
    with pytest.raises(TypeError):
        x += 1.5
    np.testing.assert_array_equal(ember.asnumpy(x), np.arange(5, dtype=np.int8))


def test_inplace_on_view_writes_through(device):
    a = ember.zeros((4, 4), dtype=ember.float32, device=device)
    v = a[1:3, ::2]
    v += 1
    ref = np.zeros((4, 4), np.float32)
    ref[1:3, ::2] += 1
    assert_close(a, ref)


def test_inplace_broadcast_cannot_grow_left_operand(device):
    x = ember.ones((3,), dtype=ember.float32, device=device)
    y = ember.ones((2, 3), dtype=ember.float32, device=device)
    with pytest.raises(ValueError):
        x += y


# --------------------------------------------------------------------------------------------
# finfo / iinfo
# --------------------------------------------------------------------------------------------

FINFO_FIELDS = ["bits", "eps", "max", "min", "smallest_normal"]


@pytest.mark.parametrize(
    "dtype", ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
)
def test_finfo(dtype):
    ref = ml_dtypes.finfo(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.finfo(dtype)
    for arg in (em_dtype(dtype), ember.zeros(2, dtype=em_dtype(dtype))):
        fi = ember.finfo(arg)
        for field in FINFO_FIELDS:
            got, want = getattr(fi, field), getattr(ref, field)
            assert float(got) == float(want), f"finfo({dtype}).{field}: {got} != {want}"
        assert isinstance(fi.bits, int)
        assert isinstance(fi.eps, float) and isinstance(fi.max, float)
        expected_dt = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
        assert dtype_name(fi.dtype) == expected_dt


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_iinfo(dtype):
    ref = np.iinfo(dtype)
    for arg in (em_dtype(dtype), ember.zeros(2, dtype=em_dtype(dtype))):
        ii = ember.iinfo(arg)
        assert ii.bits == ref.bits
        assert ii.min == int(ref.min) and isinstance(ii.min, int)
        assert ii.max == int(ref.max) and isinstance(ii.max, int)
        assert dtype_name(ii.dtype) == dtype


@pytest.mark.parametrize("dtype", ["bool"] + INT_DTYPES)
def test_finfo_rejects_exact_dtypes(dtype):
    with pytest.raises((TypeError, ValueError)):
        ember.finfo(em_dtype(dtype))


@pytest.mark.parametrize("dtype", ["bool", "float16", "bfloat16", "float32", "complex64"])
def test_iinfo_rejects_inexact_dtypes(dtype):
    with pytest.raises((TypeError, ValueError)):
        ember.iinfo(em_dtype(dtype))


# --------------------------------------------------------------------------------------------
# dtype objects
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_dtype_objects(dtype):
    d = em_dtype(dtype)
    assert isinstance(d, ember.dtype)
    assert d.name == dtype
    assert str(d) == dtype
    assert d.itemsize == np_dtype(dtype).itemsize
    assert d == dtype
    assert ember.dtype(dtype) == d
    if dtype != "bfloat16":
        assert d == getattr(np, dtype)
        assert d == np.dtype(dtype)
    for other in ALL_DTYPES:
        if other != dtype:
            assert d != em_dtype(other)
            assert d != other
    assert hash(d) == hash(ember.dtype(dtype))


@pytest.mark.parametrize("bad", ["float8", "object", "int128", "", "U10", 42, object()])
def test_unsupported_dtype_raises_type_error(bad):
    with pytest.raises(TypeError):
        ember.dtype(bad)
    with pytest.raises(TypeError):
        ember.zeros(3, dtype=bad)


def test_numpy_object_and_string_arrays_rejected():
    with pytest.raises(TypeError):
        ember.asarray(np.array(["a", "b"]))
    with pytest.raises(TypeError):
        ember.asarray(np.array([object(), 1], dtype=object))


# --------------------------------------------------------------------------------------------
# mixed-dtype values (casts inside the loops), broadcast and strided operands
# --------------------------------------------------------------------------------------------

MIXED_OPS = ["add", "subtract", "multiply", "divide", "maximum", "less", "equal"]
MIXED_GROUPS = {g.name: g for g in layout_groups(2)}


@pytest.mark.parametrize("group_name", ["bcast_3x1_1x4", "mixed_strided_transposed"])
@pytest.mark.parametrize("op", MIXED_OPS)
@pytest.mark.parametrize("a,b", PAIRS)
def test_mixed_dtype_values(a, b, op, group_name, device):
    lay_a, lay_b = MIXED_GROUPS[group_name].layouts
    rng = np.random.default_rng(stable_seed("mixed", a, b, op, group_name))
    na, ea = lay_a.make(rng, a, device, Domain())
    nb, eb = lay_b.make(rng, b, device, Domain(nonzero=True) if op == "divide" else Domain())
    em_fn = getattr(ember, op)
    if "bfloat16" not in (a, b):
        try:
            ref = np.asarray(getattr(np, op)(na, nb))
        except Exception as exc:  # NumPy refuses (e.g. bool - bool)
            with pytest.raises(builtin_exception(exc)):
                em_fn(ea, eb)
            return
        exp_dtype = ref.dtype.name
    else:
        exp_dtype = "bool" if op in ("less", "equal") else expected_result_type(a, b)
        wide = np.complex128 if "c" in (kind(a), kind(b)) else np.float64
        ref = np.asarray(getattr(np, op)(na.astype(wide), nb.astype(wide)))
    if op in COMPLEX_ORDERING_OPS and "c" in (kind(a), kind(b)):
        try:
            got = em_fn(ea, eb)
        except TypeError:
            return  # documented deviation: complex ordering may be refused
    else:
        got = em_fn(ea, eb)
    assert_close(got, ref, exp_dtype, err_msg=f"{op}({a}, {b}): ")


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
def test_can_cast_casting_rules_match_numpy(casting):
    names = ["bool", "int8", "uint8", "int16", "uint32", "int64", "uint64", "float16",
             "float32", "float64", "complex64", "complex128"]  # fmt: skip
    for a in names:
        for b in names:
            got = ember.can_cast(getattr(ember, a), getattr(ember, b), casting=casting)
            assert got == np.can_cast(a, b, casting), (a, b, casting)
    with pytest.raises(ValueError, match="ember.can_cast: casting"):
        ember.can_cast(ember.int8, ember.int16, casting="maybe")
