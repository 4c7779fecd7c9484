"""Elementwise ops: every entry of ember's op table x dtypes x layouts, against NumPy.

The parametrization comes from ``ember._core.elementwise_ops()``, so an op added to the table is
tested here without editing this file (its NumPy counterpart is found by name; add it to
``NUMPY_NAMES`` only when NumPy spells it differently).

Oracle: the same data through NumPy.  If NumPy raises TypeError for that dtype, ember must raise
TypeError; otherwise dtype and values must match (tolerances: ``_helpers.TOLERANCES``).

Intentional deviations from NumPy accepted here (see ``_helpers``):
  * ordering of complex numbers (maximum, minimum, clip, less, less_equal, greater,
    greater_equal): ember may raise TypeError instead of NumPy's lexicographic order.
  * nextafter(x, y) with x == y in float16 returns y (C99, and NumPy's float32/float64 loops);
    NumPy's float16 loop returns x.
"""

from __future__ import annotations

import operator

import ember
import numpy as np
import pytest
from _helpers import (
    ALL_DTYPES,
    COMPLEX_ORDERING_OPS,
    DEFAULT_DOMAIN,
    LAYOUTS_BY_NAME,
    Domain,
    LayoutGroup,
    assert_close,
    builtin_exception,
    cast_like_numpy,
    kind,
    layout_groups,
    nextafter_reference,
    numpy_oracle,
    stable_seed,
)

# --------------------------------------------------------------------------------------------
# the op table
# --------------------------------------------------------------------------------------------

OPS = [(str(name), int(arity)) for name, arity in ember._core.elementwise_ops()]
OP_NAMES = [name for name, _ in OPS]

# Every elementwise op the API promises (canonical Array API spelling) -> arity.
SPEC_OPS = {
    **dict.fromkeys(
        [
            "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "pow", "fmod",
            "gcd", "lcm",
            "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
            "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
            "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "logaddexp", "atan2",
            "hypot", "copysign", "nextafter", "maximum", "minimum",
        ],
        2,
    ),
    **dict.fromkeys(
        [
            "logical_not", "bitwise_invert", "abs", "sign", "negative", "positive", "sqrt",
            "square", "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan",
            "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
            "signbit", "floor", "ceil", "trunc", "round", "isnan", "isinf", "isfinite", "real",
            "imag", "conj", "reciprocal",
        ],
        1,
    ),
}  # fmt: skip
# clip(x, min, max) may be composed from maximum/minimum rather than be a table entry
SPEC_OPS_OUTSIDE_TABLE_OK = {"clip"}

# canonical name -> NumPy name, where they differ (NumPy 2 also has most Array API spellings)
NUMPY_NAMES = {
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "atan2": "arctan2",
    "pow": "power",
    "bitwise_invert": "invert",
    "bitwise_left_shift": "left_shift",
    "bitwise_right_shift": "right_shift",
    "abs": "absolute",
    "conj": "conjugate",
}

# NumPy aliases ember must also export: alias -> canonical
EMBER_ALIASES = {
    "absolute": "abs",
    "power": "pow",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
    "arctan2": "atan2",
    "invert": "bitwise_invert",
    "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift",
}


def numpy_func(name):
    fn = getattr(np, NUMPY_NAMES.get(name, name), None)
    if fn is None:
        pytest.fail(
            f"no NumPy oracle for elementwise op {name!r}: add its NumPy name to NUMPY_NAMES "
            "in tests/python/test_elementwise.py"
        )
    return fn


# --------------------------------------------------------------------------------------------
# input domains
# --------------------------------------------------------------------------------------------

POSITIVE = Domain(lo=0.1, hi=10.0, ilo=1, ihi=20)
UNIT = Domain(lo=-0.95, hi=0.95, ilo=-1, ihi=1)
SMALL_EXP = Domain(lo=-5.0, hi=5.0, ilo=-5, ihi=5)
NONZERO = Domain(nonzero=True)
QUARTERS = Domain(quantum=0.25)
NONZERO_QUARTERS = Domain(quantum=0.25, nonzero=True)
SHIFT_COUNTS = Domain(ilo=0, ihi=7)

DOMAINS = {
    "sqrt": (POSITIVE,),
    "log": (POSITIVE,),
    "log2": (POSITIVE,),
    "log10": (POSITIVE,),
    "log1p": (Domain(lo=-0.9, hi=10.0, ilo=0, ihi=20),),
    "asin": (UNIT,),
    "acos": (UNIT,),
    "atanh": (Domain(lo=-0.95, hi=0.95, ilo=0, ihi=0),),
    "acosh": (Domain(lo=1.0, hi=10.0, ilo=1, ihi=10),),
    "exp": (SMALL_EXP,),
    "expm1": (SMALL_EXP,),
    "sinh": (SMALL_EXP,),
    "cosh": (SMALL_EXP,),
    "reciprocal": (NONZERO,),
    "pow": (
        Domain(lo=0.5, hi=3.0, ilo=-3, ihi=3),
        Domain(lo=-2.0, hi=2.0, ilo=0, ihi=4),
    ),
    "divide": (DEFAULT_DOMAIN, NONZERO),
    "floor_divide": (QUARTERS, NONZERO_QUARTERS),
    "remainder": (QUARTERS, NONZERO_QUARTERS),
    "fmod": (QUARTERS, NONZERO_QUARTERS),
    "bitwise_left_shift": (DEFAULT_DOMAIN, SHIFT_COUNTS),
    "bitwise_right_shift": (DEFAULT_DOMAIN, SHIFT_COUNTS),
    "clip": (
        DEFAULT_DOMAIN,
        Domain(lo=-3.0, hi=0.0, ilo=-3, ihi=0),
        Domain(0.0, 3.0, 3, 6),
    ),
    "round": (QUARTERS,),  # lots of exact halves: round-half-to-even matters
}


def domains_for(name, arity):
    doms = DOMAINS.get(name, ())
    return tuple(doms) + (DEFAULT_DOMAIN,) * (arity - len(doms))


# --------------------------------------------------------------------------------------------
# which results must be bit-exact
# --------------------------------------------------------------------------------------------

# correctly rounded (IEEE) or exact operations on real floating inputs
EXACT_REAL_FLOAT_OPS = {
    "add", "subtract", "multiply", "divide", "sqrt", "square", "reciprocal", "abs",
    "negative", "positive", "sign", "floor", "ceil", "trunc", "round", "maximum", "minimum",
    "clip", "copysign", "nextafter", "floor_divide", "remainder", "fmod", "real", "imag", "conj",
}  # fmt: skip
EXACT_COMPLEX_OPS = {
    "add",
    "subtract",
    "negative",
    "positive",
    "conj",
    "real",
    "imag",
    "round",
}


def must_be_exact(name, dtype, result_dtype):
    """Whether ``name`` on inputs of ``dtype`` giving ``result_dtype`` must be bit-exact."""
    if kind(result_dtype) in "biu":
        return True
    if kind(dtype) == "c":
        return name in EXACT_COMPLEX_OPS
    # real floating results (integer inputs are converted exactly first)
    return name in EXACT_REAL_FLOAT_OPS


# --------------------------------------------------------------------------------------------
# the core comparison
# --------------------------------------------------------------------------------------------


def reference(name, fn, np_args, dtype):
    if name == "nextafter" and dtype in ("bfloat16", "float16"):
        return dtype, nextafter_reference(*np_args, dtype)
    return numpy_oracle(fn, np_args, dtype)


def check_against_numpy(name, em_fn, np_fn, np_args, em_args, dtype, *, exact=None):
    try:
        exp_dtype, expected = reference(name, np_fn, np_args, dtype)
    except Exception as exc:  # NumPy refuses: ember must refuse the same way
        with pytest.raises(builtin_exception(exc)):
            em_fn(*em_args)
        return
    if kind(dtype) == "c" and name in COMPLEX_ORDERING_OPS:
        try:
            result = em_fn(*em_args)
        except TypeError:
            return  # documented deviation: ordering of complex numbers may be refused
    else:
        result = em_fn(*em_args)
    if exact is None:
        exact = must_be_exact(name, dtype, exp_dtype)
    assert_close(result, expected, exp_dtype, exact=exact, err_msg=f"{name}[{dtype}]: ")


def _cases():
    for name, arity in OPS:
        for group in layout_groups(arity):
            yield pytest.param(name, arity, group, id=f"{name}-{group.name}")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name,arity,group", list(_cases()))
def test_op_matches_numpy(name, arity, group, dtype, device):
    np_fn = numpy_func(name)
    em_fn = getattr(ember, name)
    rng = np.random.default_rng(stable_seed(name, group.name, dtype))
    np_args, em_args = group.make(rng, dtype, device, domains_for(name, arity))
    check_against_numpy(name, em_fn, np_fn, np_args, em_args, dtype)


# --------------------------------------------------------------------------------------------
# the table itself
# --------------------------------------------------------------------------------------------


def test_op_table_is_well_formed():
    raw = ember._core.elementwise_ops()
    assert len(raw) > 0
    for entry in raw:
        name, arity = entry
        assert isinstance(name, str) and name
        assert isinstance(arity, int) and 1 <= arity <= 3, entry
    assert len(set(OP_NAMES)) == len(OP_NAMES), "duplicate op names in the table"


@pytest.mark.parametrize("name", sorted(SPEC_OPS))
def test_spec_op_in_table(name):
    table = dict(OPS)
    assert name in table, f"elementwise op {name!r} missing from ember._core.elementwise_ops()"
    assert table[name] == SPEC_OPS[name], f"{name}: arity {table[name]}, expected {SPEC_OPS[name]}"


@pytest.mark.parametrize("name", OP_NAMES)
def test_table_op_is_exported(name):
    assert callable(getattr(ember, name, None)), f"ember.{name} is not exported"


@pytest.mark.parametrize("alias,canonical", sorted(EMBER_ALIASES.items()))
def test_numpy_alias(alias, canonical, device):
    fn = getattr(ember, alias, None)
    assert callable(fn), f"ember.{alias} (NumPy alias of {canonical}) is missing"
    arity = dict(OPS).get(canonical, SPEC_OPS.get(canonical))
    dtype = "int32" if "shift" in canonical or "invert" in canonical else "float64"
    rng = np.random.default_rng(stable_seed("alias", alias))
    group = LayoutGroup("2d", (LAYOUTS_BY_NAME["2d"],) * arity)
    np_args, em_args = group.make(rng, dtype, device, domains_for(canonical, arity))
    check_against_numpy(canonical, fn, numpy_func(canonical), np_args, em_args, dtype)


# --------------------------------------------------------------------------------------------
# clip (may live outside the op table)
# --------------------------------------------------------------------------------------------


@pytest.mark.skipif("clip" in OP_NAMES, reason="clip is in the op table: tested above")
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("group", layout_groups(3), ids=repr)
def test_clip_matches_numpy(group, dtype, device):
    rng = np.random.default_rng(stable_seed("clip", group.name, dtype))
    np_args, em_args = group.make(rng, dtype, device, domains_for("clip", 3))
    check_against_numpy("clip", ember.clip, np.clip, np_args, em_args, dtype)


@pytest.mark.parametrize("dtype", ["int16", "float32"])
def test_clip_with_scalar_bounds(dtype, device):
    rng = np.random.default_rng(1)
    a, x = LAYOUTS_BY_NAME["2d"].make(rng, dtype, device)
    assert_close(ember.clip(x, -2, 3), np.clip(a, -2, 3))
    assert_close(ember.clip(x, None, 3), np.clip(a, None, 3))
    assert_close(ember.clip(x, -2, None), np.clip(a, -2, None))


# --------------------------------------------------------------------------------------------
# Python operators map onto the same ops
# --------------------------------------------------------------------------------------------

BINARY_OPERATORS = {
    "+": (operator.add, "add"),
    "-": (operator.sub, "subtract"),
    "*": (operator.mul, "multiply"),
    "/": (operator.truediv, "divide"),
    "//": (operator.floordiv, "floor_divide"),
    "%": (operator.mod, "remainder"),
    "**": (operator.pow, "pow"),
    "==": (operator.eq, "equal"),
    "!=": (operator.ne, "not_equal"),
    "<": (operator.lt, "less"),
    "<=": (operator.le, "less_equal"),
    ">": (operator.gt, "greater"),
    ">=": (operator.ge, "greater_equal"),
    "&": (operator.and_, "bitwise_and"),
    "|": (operator.or_, "bitwise_or"),
    "^": (operator.xor, "bitwise_xor"),
    "<<": (operator.lshift, "bitwise_left_shift"),
    ">>": (operator.rshift, "bitwise_right_shift"),
}
UNARY_OPERATORS = {
    "neg": (operator.neg, "negative"),
    "pos": (operator.pos, "positive"),
    "abs": (abs, "abs"),
    "invert": (operator.invert, "bitwise_invert"),
}


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("group_name", ["2d", "strided", "bcast_3x1_1x4", "bcast_0d_2x3"])
@pytest.mark.parametrize("sym", list(BINARY_OPERATORS))
def test_binary_operator(sym, group_name, dtype, device):
    fn, name = BINARY_OPERATORS[sym]
    group = {g.name: g for g in layout_groups(2)}[group_name]
    rng = np.random.default_rng(stable_seed("op", sym, group_name, dtype))
    np_args, em_args = group.make(rng, dtype, device, domains_for(name, 2))
    check_against_numpy(name, fn, fn, np_args, em_args, dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("sym", list(UNARY_OPERATORS))
def test_unary_operator(sym, dtype, device):
    fn, name = UNARY_OPERATORS[sym]
    rng = np.random.default_rng(stable_seed("uop", sym, dtype))
    a, x = LAYOUTS_BY_NAME["negstride"].make(rng, dtype, device)
    check_against_numpy(name, fn, fn, [a], [x], dtype)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float16", "float32", "float64"])
@pytest.mark.parametrize("sym", ["+", "-", "*", "/", "//", "%", "**", "<", "==", "&", "<<"])
def test_operator_with_python_scalar(sym, dtype, device):
    fn, name = BINARY_OPERATORS[sym]
    rng = np.random.default_rng(stable_seed("scalar", sym, dtype))
    dom = domains_for(name, 2)[1]  # the right-hand domain is valid on either side
    a, x = LAYOUTS_BY_NAME["2d"].make(rng, dtype, device, dom)
    scalar = 2
    check_against_numpy(name, lambda u: fn(u, scalar), lambda u: fn(u, scalar), [a], [x], dtype)
    check_against_numpy(name, lambda u: fn(scalar, u), lambda u: fn(scalar, u), [a], [x], dtype)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_elementwise_does_not_modify_inputs(dtype, device):
    rng = np.random.default_rng(3)
    a, x = LAYOUTS_BY_NAME["strided"].make(rng, dtype, device)
    b, y = LAYOUTS_BY_NAME["strided"].make(rng, dtype, device)
    ember.add(x, y)
    ember.negative(x)
    x + y
    np.testing.assert_array_equal(ember.asnumpy(x), a)
    np.testing.assert_array_equal(ember.asnumpy(y), b)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_mismatched_shapes_raise_value_error_naming_shapes(dtype, device):
    x = ember.ones((3, 4), dtype=getattr(ember, dtype), device=device)
    y = ember.ones((2, 5), dtype=getattr(ember, dtype), device=device)
    with pytest.raises(ValueError) as info:
        ember.add(x, y)
    msg = str(info.value).replace(" ", "")
    assert "3,4" in msg and "2,5" in msg, f"message should name both shapes: {info.value}"
    with pytest.raises(ValueError):
        x * y


def test_bfloat16_rounding_of_results(device):
    # 1 + 2**-9 is not representable in bfloat16: the sum must round to nearest even
    x = ember.asarray(np.array([1.0, 1.0, 3.0], np.float32), dtype=ember.bfloat16, device=device)
    y = ember.asarray(
        np.array([2.0**-9, 3 * 2.0**-9, 2.0**-7], np.float32),
        dtype=ember.bfloat16,
        device=device,
    )
    # 3 + 2**-7 is a tie between 3 and 3 + 2**-6: even mantissa wins
    expected = cast_like_numpy(np.array([1.0, 1.0 + 2.0**-7, 3.0]), "bfloat16")
    assert_close(ember.add(x, y), expected, "bfloat16", exact=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int32", "uint16", "complex64"])
@pytest.mark.parametrize("exponent", [2, 2.0])
def test_square_power_fast_path_matches_numpy(device, dtype, exponent):
    # x ** 2 runs as square(x) (NumPy's fast path): same dtype and values as NumPy's power
    a = np.arange(-4, 5).astype(dtype)
    x = ember.asarray(a, device=device)
    want = a**exponent
    got = x**exponent
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(ember.asnumpy(got), want)
