"""Mathematical functions beyond the C++ op table, composed from ember ops (any device;
differentiable through their primitives), as NumPy's "Mathematical functions" reference groups
them: angles (deg2rad, rad2deg, radians, degrees, unwrap), rounding (around, rint, fix), exponents
and logarithms (exp2, logaddexp2), floating-point pieces (frexp, ldexp, modf, spacing), extrema
ignoring NaN (fmax, fmin), complex parts (angle, real_if_close), special functions (i0, sinc),
sums and differences (diff, ediff1d, gradient, trapezoid, cross), and the rest (cbrt, fabs,
heaviside, float_power, divmod, nan_to_num, convolve, correlate, interp). Integer inputs of the
float-only functions take the float type NumPy's loops would (int8 -> float16, int16 -> float32,
...). The NaN-ignoring sums and products are in _statistics, with the other nan* functions."""

from __future__ import annotations

import builtins
import math
import operator

import numpy as _np

from . import _core
from ._array import asarray
from ._creation import full_like, ones_like, zeros_like
from ._dtypes import finfo, result_type
from ._joining import concat
from ._linalg import cross as _linalg_cross
from ._manipulation import _asarray, _axes, broadcast_arrays, flip, moveaxis
from ._scan import cumsum
from ._sorting import argsort, searchsorted

__all__ = [
    "angle",
    "around",
    "cbrt",
    "clip",
    "convolve",
    "correlate",
    "cross",
    "deg2rad",
    "degrees",
    "diff",
    "divmod",
    "ediff1d",
    "exp2",
    "fabs",
    "fix",
    "float_power",
    "fmax",
    "fmin",
    "frexp",
    "gradient",
    "heaviside",
    "i0",
    "interp",
    "ldexp",
    "logaddexp2",
    "modf",
    "nan_to_num",
    "rad2deg",
    "radians",
    "real_if_close",
    "rint",
    "sinc",
    "spacing",
    "trapezoid",
    "unwrap",
]


# The float loop NumPy picks for an integer (or bool) input of a float-only ufunc.
_FLOAT_OF = {
    "bool": "float16",
    "int8": "float16",
    "uint8": "float16",
    "int16": "float32",
    "uint16": "float32",
}


def _inexact(x):
    """x itself when floating or complex, else converted to NumPy's float loop type for it."""
    if x.dtype.kind in "fc":
        return x
    return x.astype(getattr(_core, _FLOAT_OF.get(str(x.dtype), "float64")))


def _real_float(x, who):
    x = _inexact(_asarray(x))
    if x.dtype.kind == "c":
        raise TypeError(f"{who}: complex input is not supported, got dtype {x.dtype}")
    return x


# ---- angles ---------------------------------------------------------------------------------


def deg2rad(x, /):
    """Angles in degrees to radians."""
    return _real_float(x, "ember.deg2rad") * (math.pi / 180.0)


def rad2deg(x, /):
    """Angles in radians to degrees."""
    return _real_float(x, "ember.rad2deg") * (180.0 / math.pi)


radians = deg2rad
degrees = rad2deg


def unwrap(p, discont=None, axis=-1, *, period=2 * math.pi):
    """Unwraps phase jumps larger than discont (default period / 2) along axis."""
    x = _inexact(_asarray(p))
    ax = operator.index(axis) % builtins.max(x.ndim, 1)
    xm = moveaxis(x, ax, -1)
    if xm.shape[-1] < 2:
        return x[...]
    d = xm[..., 1:] - xm[..., :-1]
    half = period / 2
    discont = half if discont is None else builtins.max(discont, half)
    dd = _core.remainder(d + half, period) - half
    dd = _core.where((dd == -half) & (d > 0), half, dd)
    corr = _core.where(_core.abs(d) < discont, 0.0, dd - d)
    fixed = concat([xm[..., :1], xm[..., 1:] + cumsum(corr, axis=-1)], axis=-1)
    return moveaxis(fixed, -1, ax)


# ---- rounding -------------------------------------------------------------------------------


def around(x, decimals=0, out=None):
    """Rounds to `decimals` decimals (half to even, as NumPy)."""
    x = _asarray(x)
    decimals = operator.index(decimals)
    if decimals == 0:
        r = _core.round(x)
    elif x.dtype.kind in "iu" and decimals > 0:
        r = x.copy()
    else:
        scale = 10.0**decimals
        r = _core.round(x * scale) / scale
        if x.dtype.kind in "iu":
            r = r.astype(x.dtype)
        elif r.dtype != x.dtype:
            r = r.astype(x.dtype)
    if out is not None:
        out[...] = r
        return out
    return r


def rint(x, /):
    """Rounds to the nearest integer, halves to even. A float-only ufunc in NumPy: integers
    give NumPy's float loop type (int8 -> float16), unlike round, which keeps them."""
    return _core.round(_inexact(_asarray(x)))


def clip(x, /, min=None, max=None, out=None, *, a_min=None, a_max=None):
    """x limited to [min, max]; a missing bound is no bound. The standard's clip(x, /, min, max)
    and NumPy's clip(a, a_min, a_max, out) (positional, or a_min=/a_max= by keyword). A Python
    int bound beyond an integer x's range is no bound (NumPy 2: clip(uint8, -1, 0) is legal)."""
    who = "ember.clip"
    if a_min is not None:
        if min is not None:
            raise TypeError(f"{who}: got both min and a_min; pass only one")
        min = a_min
    if a_max is not None:
        if max is not None:
            raise TypeError(f"{who}: got both max and a_max; pass only one")
        max = a_max
    x = _asarray(x)
    if x.dtype.kind in "iu":
        info = _np.iinfo(str(x.dtype))
        if type(min) is int and min <= info.min:
            min = None
        if type(max) is int and max >= info.max:
            max = None
    r = _core.clip(x, min, max)
    if out is not None:
        out[...] = r
        return out
    return r


def _method_clip(self, min=None, max=None, out=None, **kwargs):
    return clip(self, min, max, out, **kwargs)


_core.ndarray.clip = _method_clip


def fix(x, /):
    """Rounds towards zero (NumPy's fix: integers stay integers)."""
    x = _asarray(x)
    if x.dtype.kind == "c":
        raise TypeError(f"ember.fix: complex input is not supported, got dtype {x.dtype}")
    return _core.trunc(x)


# ---- elementwise compositions ---------------------------------------------------------------


def fabs(x, /):
    """|x| as a float (integers convert as NumPy's float loops do); complex is a TypeError."""
    x = _inexact(_asarray(x))
    if x.dtype.kind == "c":
        raise TypeError(f"ember.fabs: complex input is not supported, got dtype {x.dtype}")
    return _core.abs(x)


def angle(z, deg=False):
    """The argument of complex z (of reals: 0 or pi), in radians or degrees."""
    z = _asarray(z)
    if z.dtype.kind == "c":
        a = _core.atan2(_core.imag(z), _core.real(z))
    else:
        zf = _inexact(z)
        a = _core.atan2(zeros_like(zf), zf)
    return a * (180.0 / math.pi) if deg else a


def cbrt(x, /):
    """The real cube root."""
    x = _inexact(_asarray(x))
    if x.dtype.kind == "c":
        raise TypeError(f"ember.cbrt: complex input is not supported, got dtype {x.dtype}")
    r = _core.pow(_core.abs(x), 1.0 / 3.0)
    # one Newton step from the pow result: close to correctly rounded (the step's inf - inf and
    # 0/0, on the elements `where` discards, are no error of cbrt's)
    with _np.errstate(all="ignore"):
        r = _core.where(
            (r == 0) | ~_core.isfinite(r), r, r - (r * r * r - _core.abs(x)) / (3.0 * r * r)
        )
    return _core.copysign(r, x)


def exp2(x, /):
    """2**x."""
    return _core.pow(2.0, _inexact(_asarray(x)))


def logaddexp2(x1, x2, /):
    """log2(2**x1 + 2**x2) without overflow."""
    x1, x2 = _inexact(_asarray(x1)), _inexact(_asarray(x2))
    dt = result_type(x1, x2)
    # computed in float32 for the half types (as NumPy's loops are): x * ln2 would round first
    work = _core.float32 if str(dt) in ("float16", "bfloat16") else dt
    x1 = x1 if x1.dtype == work else x1.astype(work)
    x2 = x2 if x2.dtype == work else x2.astype(work)
    ln2 = math.log(2.0)
    r = _core.logaddexp(x1 * ln2, x2 * ln2) / ln2
    return r if r.dtype == dt else r.astype(dt)


def fmax(x1, x2, /):
    """Elementwise maximum ignoring NaN (NaN only where both are NaN)."""
    x1, x2 = _asarray(x1), _asarray(x2)
    if x1.dtype.kind not in "fc" and x2.dtype.kind not in "fc":
        return _core.maximum(x1, x2)
    return _core.where(_core.isnan(x1), x2, _core.where(_core.isnan(x2), x1, _core.maximum(x1, x2)))


def fmin(x1, x2, /):
    """Elementwise minimum ignoring NaN (NaN only where both are NaN)."""
    x1, x2 = _asarray(x1), _asarray(x2)
    if x1.dtype.kind not in "fc" and x2.dtype.kind not in "fc":
        return _core.minimum(x1, x2)
    return _core.where(_core.isnan(x1), x2, _core.where(_core.isnan(x2), x1, _core.minimum(x1, x2)))


def modf(x, /):
    """(fractional part, integral part), both with x's sign."""
    x = _inexact(_asarray(x))
    if x.dtype.kind == "c":
        raise TypeError(f"ember.modf: complex input is not supported, got dtype {x.dtype}")
    whole = _core.trunc(x)
    with _np.errstate(invalid="ignore"):  # inf - inf, discarded by the where
        frac = _core.where(_core.isinf(x), _core.copysign(zeros_like(x), x), x - whole)
    return _core.copysign(frac, x), whole


def real_if_close(a, tol=100):
    """The real part when every imaginary part is within tol machine epsilons of 0."""
    x = _asarray(a)
    if x.dtype.kind != "c":
        return x
    eps = finfo(x.dtype).eps
    t = tol * eps if tol > 1 else tol
    return _core.real(x) if bool(_core.all(_core.abs(_core.imag(x)) < t).item()) else x


def spacing(x, /):
    """The distance from x to the next float away from zero (negative for negative x)."""
    x = _inexact(_asarray(x))
    if x.dtype.kind == "c":
        raise TypeError(f"ember.spacing: complex input is not supported, got dtype {x.dtype}")
    inf = full_like(x, float("inf"))
    with _np.errstate(invalid="ignore"):  # NumPy's spacing(inf) is a quiet NaN
        return _core.where(x < 0, _core.nextafter(x, -inf) - x, _core.nextafter(x, inf) - x)


def sinc(x, /):
    """sin(pi x) / (pi x), 1 at 0 (NumPy's normalized sinc)."""
    x = _asarray(x)
    x = x if x.dtype.kind in "fc" else x.astype(_core.float64)  # not a ufunc in NumPy: float64
    zero = x == 0
    y = _core.where(zero, 1.0, x) * math.pi
    return _core.where(zero, 1.0, _core.sin(y) / y)


def heaviside(x1, x2, /):
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0 (NaN where x1 is NaN)."""
    weak = isinstance(x2, bool | int | float)  # a Python number keeps x1's precision
    x1, x2 = _asarray(x1), (x2 if weak else _asarray(x2))
    if x1.dtype.kind == "c" or (not weak and x2.dtype.kind == "c"):
        raise TypeError("ember.heaviside: complex input is not supported")
    t = x1.dtype if weak else result_type(x1, x2)
    if t.kind not in "f":
        t = getattr(_core, _FLOAT_OF.get(str(t), "float64"))
    x1 = x1.astype(t)
    x2 = full_like(x1, x2) if weak else x2.astype(t)
    out = _core.where(x1 > 0, ones_like(x1), _core.where(x1 == 0, x2, zeros_like(x1)))
    return _core.where(_core.isnan(x1), x1, out)


def float_power(x1, x2, /):
    """x1 ** x2 computed in float64 (complex128 when an input is complex)."""
    x1, x2 = _asarray(x1), _asarray(x2)
    complex_ = x1.dtype.kind == "c" or x2.dtype.kind == "c"
    t = _core.complex128 if complex_ else _core.float64
    return _core.pow(x1.astype(t), x2.astype(t))


def divmod(x1, x2, /):  # noqa: A001 (NumPy's name)
    """(x1 // x2, x1 % x2), as Python's divmod elementwise."""
    return _core.floor_divide(x1, x2), _core.remainder(x1, x2)


def _pow2(k):
    """2.0**k (float64) for integer k in [-1022, 1023], built from its bits: exact on every
    device (a library pow need not be)."""
    return _core.bitwise_left_shift(k.astype(_core.int64) + 1023, 52).view(_core.float64)


def frexp(x, /):
    """Mantissa in [0.5, 1) (with x's sign) and int32 exponent such that x = m * 2**e; zero,
    infinities and NaN give themselves and exponent 0."""
    x = _real_float(x, "ember.frexp")
    a = _core.abs(x)
    special = (a == 0) | ~_core.isfinite(x)
    # In float64: float16's own range cannot hold 2**-24's log and its corrections.
    a64 = _core.where(special, ones_like(a), a).astype(_core.float64)
    e = (_core.floor(_core.log2(a64)) + 1.0).astype(_core.int64)
    h = _core.floor_divide(e, 2)
    m = a64 * _pow2(-h) * _pow2(h - e)  # powers of two in two halves: exact
    # log2 rounds near powers of two: put the mantissa back in [0.5, 1).
    up = m >= 1.0
    e, m = _core.where(up, e + 1, e), _core.where(up, m * 0.5, m)
    down = m < 0.5
    e, m = _core.where(down, e - 1, e), _core.where(down, m * 2.0, m)
    m = _core.copysign(m.astype(x.dtype), x)
    return _core.where(special, x, m), _core.where(special, 0, e).astype(_core.int32)


def ldexp(x1, x2, /):
    """x1 * 2**x2 for integer x2, rounded once (as C's ldexp): x1's mantissa times two exact
    powers of two, of which only the last can leave the normal range."""
    x1, x2 = _real_float(x1, "ember.ldexp"), _asarray(x2)
    if x2.dtype.kind not in "iub":
        raise TypeError(f"ember.ldexp: the exponent must be an integer, got dtype {x2.dtype}")
    m, ex = frexp(x1)
    k = _core.clip(ex.astype(_core.int64) + x2.astype(_core.int64), -1200, 1200)
    k1 = _core.where(k > 1023, 1023, _core.where(k < -1022, k + 600, k))
    r = m.astype(_core.float64) * _pow2(k1) * _pow2(k - k1)
    return r.astype(x1.dtype)


def nan_to_num(x, /, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN -> `nan`, +inf -> `posinf` (default: the dtype's largest value), -inf -> `neginf`
    (default: its most negative); complex arrays are treated part by part."""
    x = _asarray(x)
    kind = x.dtype.kind
    if kind not in "fc":
        return x.copy() if copy else x
    if kind == "c":
        re = nan_to_num(_core.real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(_core.imag(x), nan=nan, posinf=posinf, neginf=neginf)
        out = (re + im * 1j).astype(x.dtype)
    else:
        fi = finfo(x.dtype)
        big = fi.max if posinf is None else posinf
        small = -fi.max if neginf is None else neginf
        zero = _core.zeros((), dtype=x.dtype, device=x.device)
        out = _core.where(_core.isnan(x), zero + nan, x)
        out = _core.where(out == _np.inf, zero + big, out)
        out = _core.where(out == -_np.inf, zero + small, out)
    if not copy:
        x[...] = out
        return x
    return out


# ---- special functions ----------------------------------------------------------------------


_I0_SWITCH = 25.0  # the power series below, the asymptotic expansion above


def i0(x, /):
    """The modified Bessel function of the first kind, order 0, elementwise (NumPy's i0:
    integers compute in float64, complex input is refused). Differentiable: it is composed of
    ember ops. For |x| <= 25 the power series sum (x^2/4)^k / (k!)^2 (positive terms, 60 of
    them); above, e^|x| / sqrt(2 pi |x|) times the asymptotic series sum a_k / |x|^k,
    a_k = a_{k-1} (2k-1)^2 / (8k), whose smallest term there is below 1e-21 of the sum."""
    x = _asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("ember.i0: complex input is not supported")
    if x.dtype.kind != "f":
        x = x.astype(_core.float64)
    a = _core.abs(x)
    small = _core.minimum(a, _I0_SWITCH)
    q = small * small * 0.25
    term = ones_like(a)
    series = term
    for k in range(1, 61):
        term = term * q * (1.0 / (k * k))
        series = series + term
    big = _core.maximum(a, _I0_SWITCH)
    inv = 1.0 / big
    coef, term, asym = 1.0, ones_like(a), ones_like(a)
    for k in range(1, 31):
        coef *= (2 * k - 1) ** 2 / (8 * k)
        term = term * inv
        asym = asym + coef * term
    asym = asym * _core.exp(big) / _core.sqrt(2.0 * math.pi * big)
    return _core.where(a <= _I0_SWITCH, series, asym)


# ---- sums, products and differences ---------------------------------------------------------


def diff(x, /, n=1, axis=-1, prepend=None, append=None):
    """The `n`-th discrete difference along `axis` (``x[1:] - x[:-1]``, repeated; for booleans
    ``x[1:] != x[:-1]``, as NumPy). NumPy's positional order (n, axis)."""
    x = _asarray(x)
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"ember.diff: order n must be >= 0, got {n}")
    if n == 0:  # NumPy returns the input itself, 0-d included
        return x
    if x.ndim == 0:
        raise ValueError("ember.diff: the array must have at least 1 dimension")
    (d,) = _axes(axis, x.ndim, "ember.diff")

    def widen(v):
        v = _asarray(v)
        if v.ndim == 0:
            shape = list(x.shape)
            shape[d] = 1
            v = _core.broadcast_to(v, tuple(shape))
        return v

    parts = ([widen(prepend)] if prepend is not None else []) + [x]
    parts += [widen(append)] if append is not None else []
    if len(parts) > 1:
        x = concat(parts, axis=d)
    lead = (slice(None),) * d
    op = _core.not_equal if x.dtype == _core.bool else _core.subtract
    for _ in range(n):
        x = op(x[lead + (slice(1, None),)], x[lead + (slice(None, -1),)])
        if x.shape[d] == 0:  # every further difference is this empty array
            break
    return x


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened array, with optional values
    before and after."""
    x = _asarray(ary).reshape((-1,))
    parts = []
    if to_begin is not None:
        parts.append(asarray(to_begin, device=x.device).astype(x.dtype).reshape((-1,)))
    parts.append(x[1:] - x[:-1])
    if to_end is not None:
        parts.append(asarray(to_end, device=x.device).astype(x.dtype).reshape((-1,)))
    return parts[0] if len(parts) == 1 else concat(parts)


def gradient(f, *varargs, axis=None, edge_order=1):
    """Second-order central differences inside and first- or second-order one-sided ones at the
    ends (NumPy's gradient), for uniform spacings (scalars) or coordinate arrays."""
    who = "ember.gradient"
    y = _inexact(_asarray(f))
    if edge_order not in (1, 2):
        raise ValueError(f"{who}: edge_order must be 1 or 2, got {edge_order}")
    axes = (
        list(range(y.ndim)) if axis is None else ([axis] if isinstance(axis, int) else list(axis))
    )
    axes = [operator.index(a) % y.ndim for a in axes]
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and (
        isinstance(varargs[0], int | float) or getattr(varargs[0], "ndim", 1) == 0
    ):
        spacing = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError(f"{who}: expected 0, 1 or {len(axes)} spacings, got {len(varargs)}")
    out = []
    for ax, h in zip(axes, spacing, strict=True):
        n = y.shape[ax]
        if n < edge_order + 1:
            raise ValueError(
                f"{who}: an axis of length {n} is too short for edge_order {edge_order}"
            )
        yk = moveaxis(y, ax, 0)
        scalar_h = isinstance(h, int | float) or getattr(h, "ndim", 1) == 0
        if scalar_h:
            h = float(h)
            inner = (yk[2:] - yk[:-2]) / (2.0 * h)
            if edge_order == 1:
                first = (yk[1] - yk[0]) / h
                last = (yk[-1] - yk[-2]) / h
            else:
                first = (-1.5 * yk[0] + 2.0 * yk[1] - 0.5 * yk[2]) / h
                last = (0.5 * yk[-3] - 2.0 * yk[-2] + 1.5 * yk[-1]) / h
        else:
            x = _asarray(h).astype(_core.float64).to(y.device)
            if x.shape != (n,):
                raise ValueError(f"{who}: coordinates must have the axis's length {n}")
            d = x[1:] - x[:-1]
            shape = (-1,) + (1,) * (yk.ndim - 1)
            d1, d2 = d[:-1].reshape(shape), d[1:].reshape(shape)
            a = -d2 / (d1 * (d1 + d2))
            b = (d2 - d1) / (d1 * d2)
            c = d1 / (d2 * (d1 + d2))
            inner = a * yk[:-2] + b * yk[1:-1] + c * yk[2:]
            if edge_order == 1:
                first = (yk[1] - yk[0]) / d[0]
                last = (yk[-1] - yk[-2]) / d[-1]
            else:
                h1, h2 = d[0], d[1]
                first = (
                    -(2.0 * h1 + h2) / (h1 * (h1 + h2)) * yk[0]
                    + (h1 + h2) / (h1 * h2) * yk[1]
                    - h1 / (h2 * (h1 + h2)) * yk[2]
                )
                h1, h2 = d[-2], d[-1]
                last = (
                    h2 / (h1 * (h1 + h2)) * yk[-3]
                    - (h1 + h2) / (h1 * h2) * yk[-2]
                    + (2.0 * h2 + h1) / (h2 * (h1 + h2)) * yk[-1]
                )
        g = concat([first[None], inner, last[None]], axis=0)
        out.append(moveaxis(g.astype(y.dtype), 0, ax))
    return out[0] if len(out) == 1 else tuple(out)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of y by the trapezoidal rule along `axis` (x: sample points, or spacing
    dx)."""
    y = _inexact(_asarray(y))
    yk = moveaxis(y, operator.index(axis), -1)
    mids = (yk[..., 1:] + yk[..., :-1]) * 0.5
    if x is None:
        return _core.sum(mids, axis=-1) * dx
    xs = _asarray(x)
    xs = moveaxis(xs, operator.index(axis), -1) if xs.ndim > 1 else xs
    return _core.sum(mids * (xs[..., 1:] - xs[..., :-1]), axis=-1)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-vectors (NumPy's cross; 2-vectors give the z component)."""
    x, y = _asarray(a), _asarray(b)
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = moveaxis(x, axisa, -1), moveaxis(y, axisb, -1)
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError(
            "ember.cross: incompatible dimensions for cross product (dimension must be 2 or 3)"
        )
    if x.shape[-1] == 2 and y.shape[-1] == 2:
        return x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0]
    if x.shape[-1] == 2:
        x = concat([x, zeros_like(x[..., :1])], axis=-1)
    if y.shape[-1] == 2:
        y = concat([y, zeros_like(y[..., :1])], axis=-1)
    x, y = broadcast_arrays(x, y)
    r = _linalg_cross(x, y, axis=-1)
    return moveaxis(r, -1, axisc)


# ---- convolution and interpolation ----------------------------------------------------------


_MODES = ("full", "same", "valid")


_WINDOW_ELEMENTS = 1 << 22  # the windows of one chunk of outputs (see _convolve_1d)


def _convolve_1d(a, v, mode, who):
    if mode not in _MODES:
        raise ValueError(f"{who}: mode must be one of {_MODES}, got {mode!r}")
    a, v = _asarray(a), _asarray(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{who}: expected 1-D inputs, got shapes {a.shape} and {v.shape}")
    if a.size == 0 or v.size == 0:
        raise ValueError(f"{who}: inputs cannot be empty")
    if v.size > a.size:
        a, v = v, a
    t = result_type(a, v)
    a, v = a.astype(t), v.astype(t)
    n, m = a.size, v.size
    # Output k of the full convolution is sum_j a_padded[k + j] * v[m - 1 - j].
    if mode == "full":
        lo, count = 0, n + m - 1
    elif mode == "same":
        lo, count = (m - 1) // 2, n
    else:
        lo, count = m - 1, n - m + 1
    pad = _core.zeros(m - 1, dtype=t, device=a.device)
    ap = concat([pad, a, pad])
    w = flip(v)
    taps = _core.arange(m, device=a.device)
    step = builtins.max(1, _WINDOW_ELEMENTS // m)
    parts = []
    for start in range(lo, lo + count, step):
        rows = _core.arange(start, builtins.min(start + step, lo + count), device=a.device)
        windows = _core.take(ap, rows[:, None] + taps[None, :])
        parts.append(_core.sum(windows * w, axis=1, dtype=t))
    return parts[0] if len(parts) == 1 else concat(parts)


def convolve(a, v, mode="full"):
    """The discrete linear convolution of two 1-D arrays ('full', 'same' or 'valid')."""
    return _convolve_1d(a, v, mode, "ember.convolve")


def correlate(a, v, mode="valid"):
    """The cross-correlation of two 1-D arrays: sum_n a[n + k] * conj(v[n])."""
    v = _asarray(v)
    if v.ndim == 1 and v.dtype.kind == "c":
        v = _core.conj(v)
    return _convolve_1d(a, flip(v) if v.ndim == 1 else v, mode, "ember.correlate")


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points (xp, fp) at x (NumPy's interp): xp must
    increase; beyond the ends, `left`/`right` (default fp[0]/fp[-1]); with `period`, x and xp
    are taken modulo it."""
    who = "ember.interp"
    x, xp, fp = _asarray(x), _asarray(xp), _asarray(fp)
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape != fp.shape:
        raise ValueError(
            f"{who}: xp and fp must be 1-D of the same length, got shapes {xp.shape} and {fp.shape}"
        )
    if xp.shape[0] == 0:
        raise ValueError(f"{who}: xp and fp must not be empty")
    t = _core.complex128 if fp.dtype.kind == "c" else _core.float64
    x, xp, fp = x.astype(_core.float64), xp.astype(_core.float64), fp.astype(t)
    if period is not None:
        period = abs(float(period))
        if period == 0:
            raise ValueError(f"{who}: period must be non-zero")
        x = _core.remainder(x, period)
        xp = _core.remainder(xp, period)
        order = argsort(xp)
        xp, fp = _core.take(xp, order), _core.take(fp, order)
        xp = concat([xp[-1:] - period, xp, xp[:1] + period])
        fp = concat([fp[-1:], fp, fp[:1]])
    n = xp.shape[0]
    if n == 1:
        out = _core.full(x.shape, 0, dtype=t, device=x.device) + fp[0]
    else:
        j = _core.clip(searchsorted(xp, x, side="right") - 1, 0, n - 2)
        x0, x1 = _core.take(xp, j), _core.take(xp, j + 1)
        f0, f1 = _core.take(fp, j), _core.take(fp, j + 1)
        slope = (f1 - f0) / (x1 - x0)
        out = f0 + slope * (x - x0)
        # exact at the sample points (and no 0 * inf where slopes overflow)
        out = _core.where(x == x1, f1, _core.where(x == x0, f0, out))
    if period is None:
        lo = fp[0] if left is None else left
        hi = fp[-1] if right is None else right
        out = _core.where(x < xp[0], lo, _core.where(x > xp[-1], hi, out))
    return _core.where(_core.isnan(x), float("nan"), out) if t == _core.float64 else out
