"""Shared test support: dtype tables, per-dtype tolerances, NumPy comparison, layouts."""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import ember
import ml_dtypes
import numpy as np

# ---------------------------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------------------------

BOOL_DTYPES = ["bool"]
SIGNED_DTYPES = ["int8", "int16", "int32", "int64"]
UNSIGNED_DTYPES = ["uint8", "uint16", "uint32", "uint64"]
INT_DTYPES = SIGNED_DTYPES + UNSIGNED_DTYPES
REAL_FLOAT_DTYPES = ["float16", "bfloat16", "float32", "float64"]
COMPLEX_DTYPES = ["complex64", "complex128"]
FLOAT_DTYPES = REAL_FLOAT_DTYPES + COMPLEX_DTYPES
ALL_DTYPES = BOOL_DTYPES + INT_DTYPES + FLOAT_DTYPES
# every dtype NumPy itself knows (bfloat16 comes from ml_dtypes and has no NumPy promotion rules)
NUMPY_DTYPES = [d for d in ALL_DTYPES if d != "bfloat16"]

BF16 = np.dtype(ml_dtypes.bfloat16)


def np_dtype(name) -> np.dtype:
    """The NumPy dtype for an ember dtype name (bfloat16 -> ml_dtypes.bfloat16)."""
    name = dtype_name(name)
    if name == "bfloat16":
        return BF16
    return np.dtype(name)


def dtype_name(d) -> str:
    """Normalise an ember dtype, NumPy dtype/type, ml_dtypes type or string to its name."""
    if isinstance(d, str):
        return d
    if d is ml_dtypes.bfloat16:
        return "bfloat16"
    if isinstance(d, np.dtype):
        return d.name
    name = getattr(d, "name", None)
    if isinstance(name, str):
        return name
    return np.dtype(d).name


def em_dtype(name):
    """The ember dtype object of that name."""
    return getattr(ember, dtype_name(name))


def kind(name) -> str:
    """'b', 'i', 'u', 'f' or 'c' (bfloat16 is 'f')."""
    name = dtype_name(name)
    if name == "bfloat16":
        return "f"
    return np.dtype(name).kind


def is_exact_dtype(name) -> bool:
    return kind(name) in "biu"


def real_dtype_of(name) -> str:
    return {"complex64": "float32", "complex128": "float64"}.get(dtype_name(name), dtype_name(name))


# ---------------------------------------------------------------------------------------------
# tolerances: the ONE place they live
# ---------------------------------------------------------------------------------------------

# dtype -> (rtol, atol) for values computed by approximate (non correctly rounded) algorithms
TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1e-2, 1e-4),
    "float32": (1e-5, 1e-6),
    "float64": (1e-12, 1e-13),
    "complex64": (1e-5, 1e-6),
    "complex128": (1e-12, 1e-13),
}


def tolerance(name) -> tuple[float, float]:
    name = dtype_name(name)
    if is_exact_dtype(name):
        return (0.0, 0.0)
    return TOLERANCES[name]


# Deliberate, documented deviations from NumPy that the suite accepts.
#
# 1. Ordering of complex numbers.  NumPy orders complex values lexicographically (maximum,
#    minimum, clip, <, <=, >, >=, max, min, argmax, argmin); the Array API standard leaves
#    ordering of complex numbers unspecified.  For these operations ember may either match
#    NumPy exactly or raise TypeError.
#
# 2. nextafter(x, y) with x == y in float16.  C99, the Array API and NumPy's own float32/float64
#    loops return y (so nextafter(0.0, -0.0) is -0.0); NumPy's float16 loop returns x.  The suite
#    expects y for every dtype (see ``nextafter_reference``).
COMPLEX_ORDERING_OPS = frozenset(
    {
        "maximum",
        "minimum",
        "clip",
        "less",
        "less_equal",
        "greater",
        "greater_equal",
        "max",
        "min",
        "argmax",
        "argmin",
    }
)


# ---------------------------------------------------------------------------------------------
# conversion between ember and NumPy
# ---------------------------------------------------------------------------------------------


def to_ember(a: np.ndarray, device="cpu"):
    """An ember array with the same dtype and values as the NumPy array ``a``.

    Always from a private copy: ember.asarray may share memory with a NumPy array, and tests
    must be free to write into the result without touching their reference data.
    """
    a = np.asarray(a)
    if a.dtype == BF16:
        # values are exactly representable: bfloat16 -> float32 -> bfloat16 is lossless
        return ember.asarray(a.astype(np.float32), dtype=ember.bfloat16, device=device)
    return ember.asarray(a.copy(), device=device)


def to_numpy(x) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    return np.asarray(ember.asnumpy(x))


def cast_like_numpy(values: np.ndarray, name) -> np.ndarray:
    """Cast NumPy values to dtype ``name`` (bfloat16 via ml_dtypes, round to nearest even)."""
    with np.errstate(all="ignore"):
        return np.asarray(values).astype(np_dtype(name))


def stable_seed(*parts) -> int:
    return zlib.crc32("|".join(map(str, parts)).encode())


# ---------------------------------------------------------------------------------------------
# assert_close
# ---------------------------------------------------------------------------------------------


def _as_float64(a: np.ndarray) -> np.ndarray:
    if a.dtype == BF16 or a.dtype.kind == "f":
        return a.astype(np.float64)
    return a


def _describe(actual, expected, bad, limit=6):
    idx = np.argwhere(bad)[:limit]
    lines = []
    for i in idx:
        t = tuple(int(v) for v in i)
        lines.append(f"  at {t}: got {actual[t]!r}, expected {expected[t]!r}")
    return f"{int(bad.sum())} of {bad.size} elements differ:\n" + "\n".join(lines)


def _compare_real(a, e, rtol, atol, exact, check_zero_sign, what):
    a = _as_float64(np.asarray(a))
    e = _as_float64(np.asarray(e))
    an, en = np.isnan(a), np.isnan(e)
    if not np.array_equal(an, en):
        raise AssertionError(f"{what}nan positions differ: " + _describe(a, e, an != en))
    fin = ~en
    ai, ei = np.isinf(a), np.isinf(e)
    bad_inf = (ai | ei) & fin & (a != e)
    if bad_inf.any():
        raise AssertionError(f"{what}infinities differ: " + _describe(a, e, bad_inf))
    both = fin & ~ei & ~ai
    if exact:
        bad = both & (a != e)
    else:
        with np.errstate(all="ignore"):
            bad = both & ~(np.abs(a - e) <= atol + rtol * np.abs(e))
    if bad.any():
        raise AssertionError(
            f"{what}values differ (rtol={rtol}, atol={atol}): " + _describe(a, e, bad)
        )
    if check_zero_sign:
        zeros = fin & (e == 0)
        bad = zeros & (np.signbit(a) != np.signbit(e))
        if bad.any():
            raise AssertionError(f"{what}sign of zero differs: " + _describe(a, e, bad))


def assert_close(
    actual,
    expected,
    dtype=None,
    *,
    exact: bool | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    check_zero_sign: bool = False,
    check_dtype: bool = True,
    err_msg: str = "",
):
    """Assert an ember result equals a NumPy reference.

    ``dtype`` is the dtype the ember result must have (default: the reference's dtype); the
    reference is cast to it first, so a bfloat16 reference may be computed in float32.
    Shapes must match exactly, nan positions must match, infinities must match in sign, and
    for exact dtypes (bool, integers) or ``exact=True`` the values must be equal; otherwise
    they must agree within the dtype's tolerance from ``TOLERANCES``.
    """
    expected = np.asarray(expected)
    name = dtype_name(dtype) if dtype is not None else dtype_name(expected.dtype)
    if not isinstance(actual, np.ndarray):
        assert isinstance(actual, ember.ndarray), (
            f"{err_msg}expected an ember.ndarray, got {type(actual).__name__}: {actual!r}"
        )
        if check_dtype:
            got = dtype_name(actual.dtype)
            assert got == name, f"{err_msg}dtype: got {got}, expected {name}"
        actual = to_numpy(actual)
    elif check_dtype:
        assert dtype_name(actual.dtype) == name, (
            f"{err_msg}dtype: got {dtype_name(actual.dtype)}, expected {name}"
        )
    assert tuple(actual.shape) == tuple(expected.shape), (
        f"{err_msg}shape: got {tuple(actual.shape)}, expected {tuple(expected.shape)}"
    )
    if check_dtype and dtype_name(expected.dtype) != name:
        expected = cast_like_numpy(expected, name)
    k = kind(name)
    if exact is None:
        exact = k in "biu"
    if k in "biu" or (check_dtype is False and actual.dtype.kind in "biu"):
        if not np.array_equal(actual, expected):
            bad = np.asarray(actual != expected)
            raise AssertionError(f"{err_msg}values differ: " + _describe(actual, expected, bad))
        return
    d_rtol, d_atol = tolerance(name)
    rtol = d_rtol if rtol is None else rtol
    atol = d_atol if atol is None else atol
    if k == "c":
        a = np.asarray(actual).astype(np.complex128)
        e = expected.astype(np.complex128)
        if exact:
            _compare_real(a.real, e.real, 0, 0, True, check_zero_sign, err_msg + "real part: ")
            _compare_real(a.imag, e.imag, 0, 0, True, check_zero_sign, err_msg + "imag part: ")
            return
        # nan / inf structure per component, magnitude-relative closeness for finite values
        for part in ("real", "imag"):
            ap, ep = getattr(a, part), getattr(e, part)
            if not np.array_equal(np.isnan(ap), np.isnan(ep)):
                raise AssertionError(
                    f"{err_msg}{part} part nan positions differ: "
                    + _describe(a, e, np.isnan(ap) != np.isnan(ep))
                )
        fin = np.isfinite(e) & np.isfinite(a)
        inf_bad = ~fin & ~np.isnan(e) & ~np.isnan(a) & (a != e)
        if inf_bad.any():
            raise AssertionError(f"{err_msg}complex infinities differ: " + _describe(a, e, inf_bad))
        with np.errstate(all="ignore"):
            bad = fin & ~(np.abs(a - e) <= atol + rtol * np.abs(e))
        if bad.any():
            raise AssertionError(
                f"{err_msg}values differ (rtol={rtol}, atol={atol}): " + _describe(a, e, bad)
            )
        return
    _compare_real(actual, expected, rtol, atol, exact, check_zero_sign, err_msg)


# ---------------------------------------------------------------------------------------------
# data generation
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Domain:
    """Where random inputs are drawn from.

    ``lo``/``hi``: interval for floating dtypes (both components of complex ones).
    ``ilo``/``ihi``: interval for integer dtypes (clipped to the dtype's range; for unsigned
    dtypes negative bounds are shifted up to 0).  ``nonzero``: exclude values of magnitude below
    ``min_abs``.  ``quantum``: round floating values to multiples of it (exactly representable
    in every floating dtype, keeps floor_divide / remainder away from rounding ties).
    """

    lo: float = -5.0
    hi: float = 5.0
    ilo: int = -10
    ihi: int = 10
    nonzero: bool = False
    min_abs: float = 0.25
    quantum: float | None = None
    choices: tuple | None = None  # draw from these values instead (all dtypes)


DEFAULT_DOMAIN = Domain()


def random_array(rng: np.random.Generator, dtype, shape, domain: Domain = DEFAULT_DOMAIN):
    """Random NumPy data of ember dtype name ``dtype`` (bfloat16 -> ml_dtypes.bfloat16)."""
    name = dtype_name(dtype)
    k = kind(name)
    shape = tuple(shape)
    target = np_dtype(name)
    if domain.choices is not None:
        vals = np.array(domain.choices)
        out = rng.choice(vals, size=shape)
        return np.asarray(out).astype(target)
    if k == "b":
        if domain.nonzero:
            return np.ones(shape, dtype=bool)
        return rng.integers(0, 2, size=shape).astype(bool)
    if k in "iu":
        info = np.iinfo(target)
        lo, hi = domain.ilo, domain.ihi
        if k == "u" and lo < 0:
            hi = hi - lo
            lo = 0
        lo, hi = max(lo, int(info.min)), min(hi, int(info.max))
        vals = rng.integers(lo, hi + 1, size=shape, dtype=np.int64)
        if domain.nonzero:
            vals = np.where(vals == 0, 1 if hi >= 1 else -1, vals)
        return vals.astype(target)

    def draw():
        v = rng.uniform(domain.lo, domain.hi, size=shape)
        if domain.quantum is not None:
            v = np.round(v / domain.quantum) * domain.quantum
        if domain.nonzero:
            small = np.abs(v) < domain.min_abs
            v = np.where(small, np.where(v < 0, -domain.min_abs, domain.min_abs), v)
        return v

    if k == "c":
        return (draw() + 1j * draw()).astype(target)
    return draw().astype(target)


# ---------------------------------------------------------------------------------------------
# layouts
# ---------------------------------------------------------------------------------------------


def _identity(a):
    return a


@dataclass(frozen=True)
class Layout:
    """A base shape plus a view applied identically to the NumPy and the ember array."""

    name: str
    base_shape: tuple
    view: Callable = _identity

    @property
    def shape(self):
        return self.view(np.empty(self.base_shape, dtype=np.int8)).shape

    def make(self, rng, dtype, device, domain: Domain = DEFAULT_DOMAIN):
        """(numpy_view, ember_view) holding the same values."""
        base = random_array(rng, dtype, self.base_shape, domain)
        return self.view(base), self.view(to_ember(base, device))

    def __repr__(self):
        return self.name


LARGE = 100_000

LAYOUTS = [
    Layout("0d", ()),
    Layout("empty", (0,)),
    Layout("empty_3x0", (3, 0)),
    Layout("one", (1,)),
    Layout("large", (LARGE,)),
    Layout("2d", (4, 5)),
    Layout("strided", (10, 12), lambda a: a[::2, 1::3]),
    Layout("transposed", (5, 7), lambda a: a.T),
    Layout("negstride", (6, 11), lambda a: a[::-1, ::-2]),
    Layout("stride0", (5,), lambda a: broadcast(a, (4, 5))),
    Layout("large_transposed", (250, 400), lambda a: a.T),
    Layout("large_strided", (600, 500), lambda a: a[::-2, 1::3]),
]
LAYOUTS_BY_NAME = {lay.name: lay for lay in LAYOUTS}


@dataclass(frozen=True)
class LayoutGroup:
    """Layouts for an n-ary operation: one per operand, broadcast-compatible."""

    name: str
    layouts: tuple

    def make(self, rng, dtype, device, domains):
        nps, ems = [], []
        for lay, dom in zip(self.layouts, domains, strict=True):
            a, b = lay.make(rng, dtype, device, dom)
            nps.append(a)
            ems.append(b)
        return nps, ems

    def __repr__(self):
        return self.name


BROADCAST_PAIRS = [
    LayoutGroup("bcast_3x1_1x4", (Layout("3x1", (3, 1)), Layout("1x4", (1, 4)))),
    LayoutGroup("bcast_5_2x5", (Layout("5", (5,)), Layout("2x5", (2, 5)))),
    LayoutGroup("bcast_0d_2x3", (Layout("0d", ()), Layout("2x3", (2, 3)))),
    LayoutGroup("bcast_2x3_0d", (Layout("2x3", (2, 3)), Layout("0d", ()))),
    LayoutGroup(
        "mixed_strided_transposed",
        (
            Layout("s", (10, 8), lambda a: a[::2, ::2]),
            Layout("t", (4, 5), lambda a: a.T),
        ),
    ),
]


def layout_groups(arity: int):
    """Every same-layout group for ``arity`` operands plus the broadcast groups."""
    groups = [LayoutGroup(lay.name, (lay,) * arity) for lay in LAYOUTS]
    if arity >= 2:
        for g in BROADCAST_PAIRS:
            extra = tuple(g.layouts[-1:]) * (arity - 2)
            groups.append(LayoutGroup(g.name, tuple(g.layouts) + extra))
    return groups


def finite_scale(a) -> float:
    a = np.asarray(a)
    if a.size == 0:
        return 0.0
    with np.errstate(all="ignore"):
        v = np.abs(a.astype(np.complex128) if a.dtype.kind == "c" else _as_float64(a))
    v = v[np.isfinite(v)]
    return float(v.max()) if v.size else 0.0


def prod_shape(shape) -> int:
    return math.prod(shape)


_BUILTIN_ERRORS = (
    TypeError,
    IndexError,
    ValueError,
    OverflowError,
    ZeroDivisionError,
    MemoryError,
    RuntimeError,
)


def builtin_exception(exc: BaseException):
    """The builtin exception class(es) a NumPy exception is an instance of (UFuncTypeError ->
    TypeError; AxisError, which is both, -> (ValueError, IndexError))."""
    if isinstance(exc, np.exceptions.AxisError):
        return (ValueError, IndexError)
    for cls in _BUILTIN_ERRORS:
        if isinstance(exc, cls):
            return cls
    return type(exc)


def numpy_oracle(fn, np_args, dtype):
    """Evaluate ``fn`` with NumPy on ``np_args`` (all of ember dtype ``dtype``).

    Returns ``(expected_dtype_name, expected_values)``; raises whatever NumPy raises.  NumPy has
    no bfloat16 arithmetic, so for bfloat16 the result dtype (or the TypeError) is taken from
    the same computation in float16 (float16 -> bfloat16), and the values are computed in
    float32 and rounded to the result dtype with ml_dtypes.
    """
    if dtype_name(dtype) != "bfloat16":
        res = np.asarray(fn(*np_args))
        return res.dtype.name, res
    probe = np.asarray(fn(*[np.asarray(a).astype(np.float16) for a in np_args]))
    name = "bfloat16" if probe.dtype == np.float16 else probe.dtype.name
    res = np.asarray(fn(*[np.asarray(a).astype(np.float32) for a in np_args]))
    return name, cast_like_numpy(res, name)


def nextafter_bf16(x, y):
    """Reference nextafter for bfloat16 (NumPy cannot compute it: float32 steps are too small)."""
    x = np.asarray(x).astype(BF16)
    y = np.asarray(y).astype(BF16)
    x, y = np.broadcast_arrays(x, y)
    xf, yf = x.astype(np.float32), y.astype(np.float32)
    bits = x.view(np.uint16).astype(np.int64)
    out = bits.copy()
    toward_up = yf > xf
    toward_down = yf < xf
    pos = ~np.signbit(xf)
    # away from zero: +1 on the bit pattern; toward zero: -1
    away = (toward_up & pos & (xf != 0)) | (toward_down & ~pos & (xf != 0))
    toward0 = (toward_up & ~pos & (xf != 0)) | (toward_down & pos & (xf != 0))
    out = np.where(away, bits + 1, out)
    out = np.where(toward0, bits - 1, out)
    out = np.where((xf == 0) & toward_up, 0x0001, out)
    out = np.where((xf == 0) & toward_down, 0x8001, out)
    out = np.where(xf == yf, y.view(np.uint16).astype(np.int64), out)
    res = out.astype(np.uint16).view(BF16)
    res = np.where(np.isnan(xf) | np.isnan(yf), np.float32(np.nan).astype(BF16), res)
    return np.asarray(res).astype(BF16)


def broadcast(a, shape):
    """np.broadcast_to for NumPy arrays, ember.broadcast_to for ember arrays (layout views)."""
    if isinstance(a, np.ndarray) and not isinstance(a, getattr(ember, "ndarray", ())):
        return np.broadcast_to(a, shape)
    return ember.broadcast_to(a, shape)


def permute(a, axes):
    """np.transpose for NumPy arrays, ember.permute_dims for ember arrays (layout views)."""
    if isinstance(a, np.ndarray) and not isinstance(a, getattr(ember, "ndarray", ())):
        return np.transpose(a, axes)
    return ember.permute_dims(a, axes)


def nextafter_reference(x, y, dtype):
    """nextafter as C99 defines it, for any floating dtype name (see deviation 2 above)."""
    if dtype_name(dtype) == "bfloat16":
        return nextafter_bf16(x, y)
    x, y = np.asarray(x), np.asarray(y)
    return np.asarray(np.where(x == y, y, np.nextafter(x, y))).astype(np.result_type(x, y))


# Comparisons shared by the NumPy-namespace tests (test_math, test_statistics, ...).


def em(a, device):
    return ember.asarray(np.asarray(a), device=device)


def same(got, want, rtol=1e-12, dtype=True):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            same(g, w, rtol, dtype)
        return
    g, w = to_numpy(got), np.asarray(want)
    if dtype:
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
    assert g.shape == w.shape, (g.shape, w.shape)
    if g.dtype.kind in "fc":
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(g, w)


def near(got, want, rtol=1e-6, exact=False):
    got = to_numpy(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(
            got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=rtol
        )
