"""The composed kernels behind ember.special (its docstring lists the methods): each is a
``_Rule``, an autograd Function whose forward runs the composition without a graph and whose
backward is the analytic derivative, written with the other rules (so differentiable again).
Inputs here are float arrays of one dtype (float16/bfloat16 computed in float32)."""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as _np

import ember as _em

from . import _core
from . import autograd as _autograd
from .nn._functional_activation import _ERFC_P9, _ERFC_P24

_INF = float("inf")
_NAN = float("nan")
_SQRT_PI = math.sqrt(math.pi)
_TWO_OVER_SQRT_PI = 2.0 / _SQRT_PI
_SQRT2 = math.sqrt(2.0)
_EULER = 0.5772156649015329


def _half(a):
    return a.dtype.name in ("float16", "bfloat16")


def _f64(a):
    return a.dtype == _core.float64


class _Composed(_autograd.Function):
    """y = rule.fwd(*xs) computed without a graph; gradients from rule.grad."""

    @staticmethod
    def forward(ctx, rule, *xs):
        y = rule.fwd(*xs)
        ctx.rule = rule
        ctx.save_for_backward(*xs, y)
        return y

    @staticmethod
    def backward(ctx, g):
        *xs, y = ctx.saved_tensors
        if _core._is_grad_enabled():  # create_graph: y as a differentiable function of xs
            y = ctx.rule(*xs)
        return (None, *ctx.rule.grad(g, *xs, y, needs=ctx.needs_input_grad[1:]))


class _Rule:
    """One composed function: ``fwd(*xs)`` and ``grad(g, *xs, y, needs=...)``."""

    def __init__(self, name, fwd, grad):
        self.fwd, self.grad = fwd, grad
        self.fn = type(name, (_Composed,), {})

    def __call__(self, *xs):
        """The result of float32 for float16/bfloat16 inputs (the caller rounds it back)."""
        if _half(xs[0]):
            xs = tuple(x.astype(_core.float32) for x in xs)
        if _core._is_grad_enabled() and any(x.requires_grad for x in xs):
            y = self.fn.apply(self, *xs)
        else:
            with _autograd.no_grad():
                y = self.fwd(*xs)
        return y


def _horner(x, coef):
    """coef[0] + coef[1] x + coef[2] x^2 + ... (at least two coefficients)."""
    s = x * coef[-1] + coef[-2]
    for c in coef[-3::-1]:
        s = s * x + c
    return s


# ---- constants: Bernoulli numbers, zeta(k) - 1 -----------------------------------------------


def _bernoulli_even(n):
    """B_2, B_4, ..., B_2n as Fractions."""
    b = [Fraction(1)]
    for m in range(1, 2 * n + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return [b[2 * j] for j in range(1, n + 1)]


_B2 = _bernoulli_even(20)
# Euler-Maclaurin: B_2j / (2j)!
_EM = [float(b / math.factorial(2 * j)) for j, b in enumerate(_B2, 1)]
# Stirling: B_2k / (2k (2k - 1)); digamma's asymptotic series: B_2k / (2k)
_STIRLING = [float(b / (2 * k * (2 * k - 1))) for k, b in enumerate(_B2, 1)]
_PSI_ASYM = [float(b / (2 * k)) for k, b in enumerate(_B2, 1)]


def _hurwitz_scalar(s, q, n=20, m=12):
    """zeta(s, q) for floats s > 1, q > 0 (Euler-Maclaurin after n terms)."""
    terms = [(q + k) ** -s for k in range(n)]
    a = q + n
    terms += [a ** (1 - s) / (s - 1), 0.5 * a**-s]
    t = s * a ** (-s - 1)
    for j in range(1, m + 1):
        terms.append(_EM[j - 1] * t)
        t *= (s + 2 * j - 1) * (s + 2 * j) / (a * a)
    return math.fsum(terms)


# lgamma(2 + e) = e (1 - gamma) + sum_{k >= 2} (-1)^k (zeta(k) - 1) e^k / k
_LG2 = [0.0, 1.0 - _EULER] + [(-1) ** k * (_hurwitz_scalar(k, 2.0)) / k for k in range(2, 31)]


# ---- the error function family ---------------------------------------------------------------


def _erfc_parts(a):
    """(t, P) with erfc(a) = t exp(P - a^2) and erfcx(a) = t exp(P), for a >= 0."""
    coef = _ERFC_P24 if _f64(a) else _ERFC_P9
    t = 1 / (a * 0.5 + 1)
    return t, _horner(t * 2 - 1, coef)


def _exp_sq(a, sign):
    """exp(sign * a^2) for a >= 0 without the rounding error of a^2 (which exp would scale by
    a^2): a = hi + lo with hi^2 exact, a^2 = hi^2 + (a - hi)(a + hi)."""
    f64 = _f64(a)
    a = _core.minimum(a, 40.0 if f64 else 12.0)  # past these exp(-a^2) is 0, exp(a^2) inf
    k = 2.0**20 if f64 else 256.0
    hi = _core.round(a * k) / k
    return _core.exp(hi * hi * sign) * _core.exp((a - hi) * (a + hi) * sign)


_ERF_TAYLOR = [(-1) ** k / (math.factorial(k) * (2 * k + 1)) for k in range(13)]


def _erf_small(x):
    """erf(x) for |x| <= 1/2 (the Taylor series)."""
    c = _ERF_TAYLOR if _f64(x) else _ERF_TAYLOR[:7]
    return x * _horner(x * x, c) * _TWO_OVER_SQRT_PI


def _erf_fwd(x):
    a = _core.abs(x)
    small = a < 0.5
    al = _core.maximum(a, 0.5)
    t, p = _erfc_parts(al)
    big = _core.copysign(1 - t * _core.exp(p) * _exp_sq(al, -1.0), x)
    return _core.where(small, _erf_small(_core.where(small, x, 0.0)), big)


def _erfc_fwd(x):
    a = _core.abs(x)
    small = a < 0.5
    al = _core.maximum(a, 0.5)
    t, p = _erfc_parts(al)
    e = t * _core.exp(p) * _exp_sq(al, -1.0)
    return _core.where(
        small, 1 - _erf_small(_core.where(small, x, 0.0)), _core.where(x > 0, e, 2 - e)
    )


def _erfcx_fwd(x):
    a = _core.abs(x)
    small = a < 0.5
    xs = _core.where(small, x, 0.0)
    al = _core.maximum(a, 0.5)
    t, p = _erfc_parts(al)
    e = t * _core.exp(p)
    neg = 2 * _exp_sq(al, 1.0) - e
    return _core.where(small, _core.exp(xs * xs) * (1 - _erf_small(xs)), _core.where(x > 0, e, neg))


def _gauss(x):  # 2/sqrt(pi) exp(-x^2), erf's derivative
    return _core.exp(-(x * x)) * _TWO_OVER_SQRT_PI


_erf = _Rule("Erf", _erf_fwd, lambda g, x, y, needs: (g * _gauss(x),))
_erfc = _Rule("Erfc", _erfc_fwd, lambda g, x, y, needs: (-(g * _gauss(x)),))
_erfcx = _Rule("Erfcx", _erfcx_fwd, lambda g, x, y, needs: (g * (2 * x * y - _TWO_OVER_SQRT_PI),))


def _winitzki(lg):
    """|erfinv(x)| to ~2e-3 from lg = log(1 - x^2) (Winitzki's closed form, a = 0.147)."""
    a = 0.147
    big = 2 / (math.pi * a) + lg * 0.5
    return _core.sqrt(_core.maximum(_core.sqrt(big * big - lg / a) - big, 0.0))


def _erfinv_small(x):
    """erfinv(x) for |x| <= 1/2: Newton steps on erf(y) = x."""
    y = _core.copysign(_winitzki(_core.log1p(-(x * x))), x)
    for _ in range(3 if _f64(x) else 2):
        y = y - (_erf_small(y) - x) / _gauss(y)
    return y


def _erfcinv_tail(z):
    """y >= 0.47 with erfc(y) = z, for 0 < z <= 1/2: Newton steps on log erfc(y) = log z."""
    lz = _core.log(z)
    y = _winitzki(_core.log(z * (2 - z)))
    for _ in range(4 if _f64(z) else 3):
        t, p = _erfc_parts(y)
        y = y + (_core.log(t) + p - y * y - lz) * (0.5 * _SQRT_PI) * t * _core.exp(p)
    return y


def _erfinv_fwd(x):
    a = _core.abs(x)
    small = a <= 0.5
    ys = _erfinv_small(_core.where(small, x, 0.0))
    z = _core.where(small | (a >= 1), 0.5, 1 - a)
    r = _core.where(small, ys, _core.copysign(_erfcinv_tail(z), x))
    r = _core.where(
        a == 1, _core.copysign(_core.full((), _INF, dtype=x.dtype, device=x.device), x), r
    )
    return _core.where(a > 1, _NAN, r)


def _ndtri_fwd(p):
    z = p * 2
    lo, hi = z <= 0.5, z >= 1.5
    tail = _erfcinv_tail(_core.where(lo, z, _core.where(hi, 2 - z, 0.5)))
    tail = _core.where(lo, -tail, tail)
    mid = _erfinv_small(_core.where(lo | hi, 0.0, z - 1))
    r = _core.where(lo | hi, tail, mid) * _SQRT2
    r = _core.where(p == 0, -_INF, _core.where(p == 1, _INF, r))
    return _core.where((p < 0) | (p > 1), _NAN, r)


_erfinv = _Rule(
    "Erfinv", _erfinv_fwd, lambda g, x, y, needs: (g * (0.5 * _SQRT_PI) * _core.exp(y * y),)
)
_ndtri = _Rule(
    "Ndtri",
    _ndtri_fwd,
    lambda g, x, y, needs: (g * math.sqrt(2 * math.pi) * _core.exp(y * y * 0.5),),
)


def _log_ndtr_fwd(x):
    neg = x < -1
    u = -_core.minimum(x, -1.0) / _SQRT2
    left = _core.log(_erfcx_fwd(u) * 0.5) - u * u
    right = _core.log1p(-0.5 * _erfc_fwd(_core.maximum(x, -1.0) / _SQRT2))
    return _core.where(neg, left, right)


def _log_ndtr_grad(g, x, y, needs):
    # phi(x) / Phi(x): sqrt(2/pi) / erfcx(-x/sqrt 2) below 0 (no underflow), directly above
    xn = _core.minimum(x, 0.0)
    left = math.sqrt(2 / math.pi) / _erfcx(-xn / _SQRT2)
    right = _core.exp(-(x * x) * 0.5 - y) / math.sqrt(2 * math.pi)
    return (g * _core.where(x < 0, left, right),)


_log_ndtr = _Rule("LogNdtr", _log_ndtr_fwd, _log_ndtr_grad)


# ---- the gamma function family ---------------------------------------------------------------


def _sinpi_abs(x):
    """|sin(pi x)| with the argument reduced exactly (x - round(x))."""
    return _core.abs(_core.sin((x - _core.round(x)) * math.pi))


def _stirling(z):
    """lgamma(z) for z >= 10: (z - 1/2)(log z - 1) - 1/2 + log(2 pi)/2 + the series."""
    iz = 1 / z
    c = _STIRLING[:8] if _f64(z) else _STIRLING[:4]
    s = _horner(iz * iz, c) * iz
    return (z - 0.5) * (_core.log(z) - 1) + (0.5 * math.log(2 * math.pi) - 0.5) + s


def _lgamma_pos(x):
    """lgamma(x) for x >= 1/2."""
    f64 = _f64(x)
    c = _LG2 if f64 else _LG2[:14]
    # [0.5, 1.5): lgamma(1 + e) = S(e) - log1p(e); [1.5, 10): shifted down into [1.5, 2.5)
    low = x < 1.5
    m = _core.clip(x, 0.5, 10.0)
    n = _core.where(low, 0.0, _core.floor(m - 1.5))  # how far down, 0..8
    e = _core.where(low, m - 1, m - n - 2)
    s = _horner(e, c)
    prod = _em.ones_like(m)
    for k in range(1, 9):
        prod = prod * _core.where(n >= k, m - k, 1.0)
    mid = s + _core.where(low, -_core.log1p(e), _core.log(prod))
    return _core.where(x < 10, mid, _stirling(_core.maximum(x, 10.0)))


def _lgamma_fwd(x):
    refl = x < 0.5
    xr = _core.where(refl, 1 - x, x)
    main = _lgamma_pos(xr)
    s = _sinpi_abs(_core.where(refl, x, 0.5))
    out = _core.where(refl, _core.log(math.pi / s) - main, main)
    return _core.where(_core.isinf(x), _INF, out)


def _digamma_fwd(x):
    refl = x < 0.5
    xr = _core.where(refl, 1 - x, x)
    shift = xr < 10
    xs = _core.minimum(xr, 10.0)
    acc = 1 / xs
    for k in range(1, 10):
        acc = acc + 1 / (xs + k)
    z = _core.where(shift, xs + 10, xr)
    iz2 = 1 / (z * z)
    c = _PSI_ASYM[:8] if _f64(x) else _PSI_ASYM[:4]
    psi = _core.log(z) - 0.5 / z - _horner(iz2, c) * iz2
    psi = _core.where(shift, psi - acc, psi)
    r = _core.where(refl, x - _core.round(x), 0.25)
    out = _core.where(refl, psi - math.pi / _core.tan(r * math.pi), psi)
    out = _core.where((x < 0) & (x == _core.floor(x)), _NAN, out)
    return _core.where(
        x == 0, _core.copysign(_core.full((), _INF, dtype=x.dtype, device=x.device), -x), out
    )


def _zeta_fwd(s, q):
    s, q = _core.broadcast_to(s, _shape(s, q)), _core.broadcast_to(q, _shape(s, q))
    n = 9
    if q.size and bool(_core.any(q < 0)):
        lo = float(_core.min(_core.where(_core.isfinite(q), q, 0.0)))
        n = 9 + math.ceil(-lo)
    total = _em.zeros_like(q)
    for k in range(n):
        total = total + _core.pow(q + k, -s)
    a = q + n
    total = total + _core.pow(a, 1 - s) / (s - 1) + 0.5 * _core.pow(a, -s)
    t = s * _core.pow(a, -s - 1)
    ia2 = 1 / (a * a)
    for j in range(1, 13 if _f64(s) else 7):
        total = total + t * _EM[j - 1]
        t = t * (s + (2 * j - 1)) * (s + 2 * j) * ia2
    qint = (q <= 0) & (q == _core.floor(q))
    total = _core.where((q < 0) & (s != _core.floor(s)), _NAN, total)
    total = _core.where(qint, _INF, total)
    total = _core.where(s < 1, _NAN, total)
    return _core.where(s == 1, _INF, total)


def _shape(*arrays):
    return tuple(_np.broadcast_shapes(*(tuple(a.shape) for a in arrays)))


def _zeta_grad(g, s, q, y, needs):
    if needs[0]:
        raise RuntimeError("ember.special.zeta: the derivative for 'input' (x) is not implemented")
    return None, _sum_to(g * -s * _zeta(s + 1, q), q.shape)


def _sum_to(g, shape):
    """g summed over the dimensions broadcasting added to an argument of `shape`."""
    if tuple(g.shape) == tuple(shape):
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, d in enumerate(shape) if d == 1 and g.shape[i + lead] != 1
    )
    return _core.reshape(_core.sum(g, axis=axes), shape) if axes else g


_gammaln = _Rule("Lgamma", _lgamma_fwd, lambda g, x, y, needs: (g * _digamma(x),))
_digamma = _Rule("Digamma", _digamma_fwd, lambda g, x, y, needs: (g * _polygamma(1)(x),))
_zeta = _Rule("Zeta", _zeta_fwd, _zeta_grad)


@functools.cache
def _polygamma(n):
    sign = (-1) ** (n + 1) * math.factorial(n)

    def fwd(x):
        return _zeta_fwd(_core.full((), float(n + 1), dtype=x.dtype, device=x.device), x) * sign

    return _Rule("Polygamma", fwd, lambda g, x, y, needs: (g * _polygamma(n + 1)(x),))


# ---- the incomplete gamma functions ----------------------------------------------------------


def _converged(err, eps):
    return bool(_core.all(~(err > eps)))  # NaN counts as converged: it stays NaN


def _igamma_prefactor(a, x, shift):
    """x^a e^-x / Gamma(a + shift), its logarithm summed in float64 (in float32 the rounding
    of a log(x) would be the result's relative error)."""
    dt = a.dtype
    a, x = a.astype(_core.float64), x.astype(_core.float64)
    r = _core.exp(a * _core.log(x) - x - _lgamma_fwd(a + shift))
    return r if r.dtype == dt else r.astype(dt)


def _igamma_fwd(a, x, upper=False):
    """(P(a, x), or Q(a, x) with ``upper``), no graph."""
    a, x = _core.broadcast_to(a, _shape(a, x)), _core.broadcast_to(x, _shape(a, x))
    eps = float(_np.finfo(_np.float64 if _f64(a) else _np.float32).eps)
    tiny = 1e-300 if _f64(a) else 1e-30
    ok = (a > 0) & (x > 0) & _core.isfinite(a) & _core.isfinite(x)
    ser = ok & (x < a + 1)
    cf = ok & ~ser
    # the power series of P on its elements (others converge at once)
    a_s, x_s = _core.where(ser, a, 1.0), _core.where(ser, x, 0.0)
    term, total = _em.ones_like(a_s), _em.ones_like(a_s)
    for n in range(1, 20001):
        term = term * x_s / (a_s + n)
        total = total + term
        if n % 8 == 0 and _converged(term / total, eps):
            break
    p_ser = _igamma_prefactor(a_s, _core.where(ser, x_s, 1.0), 1) * total
    # Lentz's continued fraction of Q on its elements
    a_c, x_c = _core.where(cf, a, 1.0), _core.where(cf, x, 3.0)
    b = x_c + 1 - a_c
    c = _em.full_like(b, 1 / tiny)
    d = 1 / b
    h = d
    for i in range(1, 20001):
        an = (a_c - i) * i
        b = b + 2
        d = an * d + b
        d = _core.where(_core.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = _core.where(_core.abs(c) < tiny, tiny, c)
        d = 1 / d
        delta = d * c
        h = h * delta
        if i % 8 == 0 and _converged(_core.abs(delta - 1), 4 * eps):
            break
    q_cf = _igamma_prefactor(a_c, x_c, 0) * h
    lower = _core.where(ser, p_ser, 1 - q_cf)
    r = _core.where(ser, 1 - p_ser, q_cf) if upper else lower
    one, zero = (0.0, 1.0) if upper else (1.0, 0.0)
    # the edges: x = 0 -> P = 0; a = 0 < x or x = inf -> P = 1; a = inf, x finite -> P = 0
    r = _core.where((x == 0) & (a > 0), zero, r)
    r = _core.where(((a == 0) & (x > 0)) | ((x == _INF) & (a >= 0) & (a < _INF)), one, r)
    r = _core.where((a == _INF) & (x >= 0) & (x < _INF), zero, r)
    bad = (a < 0) | (x < 0) | _core.isnan(a) | _core.isnan(x) | ((a == 0) & (x == 0))
    return _core.where(bad | ((a == _INF) & (x == _INF)), _NAN, r)


def _igamma_dx(a, x):
    """dP(a, x)/dx = x^(a-1) e^-x / Gamma(a)."""
    xs = _core.where(x > 0, x, 1.0)
    d = _core.exp((a - 1) * _core.log(xs) - xs - _gammaln(a))
    return _core.where(x > 0, d, _core.where(a < 1, _INF, (a == 1).astype(a.dtype)))


def _igamma_grad(sign):
    def grad(g, a, x, y, needs):
        if needs[0]:
            raise RuntimeError(
                "ember.special.gammainc: the derivative for 'input' (a) is not implemented"
            )
        return None, _sum_to(g * _igamma_dx(a, x) * sign, x.shape)

    return grad


_gammainc = _Rule("Igamma", _igamma_fwd, _igamma_grad(1.0))
_gammaincc = _Rule("Igammac", lambda a, x: _igamma_fwd(a, x, True), _igamma_grad(-1.0))


# ---- Bessel functions ------------------------------------------------------------------------

_I_SWITCH = 25.0  # the power series below, the asymptotic expansion above (as ember.i0)


def _asym_coef(order, count, alternate):
    """a_k(nu) = prod_{j<=k} (4 nu^2 - (2j - 1)^2) / (k! 8^k), times (-1)^k if ``alternate``."""
    out, c = [1.0], 1.0
    for k in range(1, count):
        c *= (4 * order * order - (2 * k - 1) ** 2) / (8 * k)
        out.append(c * (-1) ** k if alternate else c)
    return out


def _series(q, order, count):
    """sum_k q^k / (k! (k + order)!) by the terms' recurrence (no tiny coefficients)."""
    term = _em.ones_like(q) * (1.0 / math.factorial(order))
    total = term
    for k in range(1, count):
        term = term * q * (1.0 / (k * (k + order)))
        total = total + term
    return total


def _bessel_i_fwd(x, order, scaled):
    a = _core.abs(x)
    small = _core.minimum(a, _I_SWITCH)
    series = _series(small * small * 0.25, order, 61 if _f64(x) else 40)
    if order == 1:
        series = series * small * 0.5
    if scaled:
        series = series * _core.exp(-small)
    big = _core.maximum(a, _I_SWITCH)
    asym = _horner(1 / big, _asym_coef(order, 31, True))
    lead = -0.5 * _core.log(big * (2 * math.pi))
    asym = asym * _core.exp(lead if scaled else big + lead)
    out = _core.where(a <= _I_SWITCH, series, asym)
    return _core.where(x < 0, -out, out) if order == 1 else out


def _at_zero(x, value, expr):
    return _core.where(x == 0, value, expr)


def _i1_grad(g, x, y, needs, scaled=False):
    xs = _core.where(x == 0, 1.0, x)
    if scaled:  # i1e' = i0e - i1e (sign(x) + 1/x)
        d = _i0e(x) - y * (_core.sign(x) + 1 / xs)
    else:  # i1' = i0 - i1 / x
        d = _i0(x) - y / xs
    return (g * _at_zero(x, 0.5, d),)


_i0 = _Rule("I0", lambda x: _bessel_i_fwd(x, 0, False), lambda g, x, y, needs: (g * _i1(x),))
_i0e = _Rule(
    "I0e",
    lambda x: _bessel_i_fwd(x, 0, True),
    lambda g, x, y, needs: (g * (_i1e(x) - _core.sign(x) * y),),
)
_i1 = _Rule("I1", lambda x: _bessel_i_fwd(x, 1, False), _i1_grad)
_i1e = _Rule(
    "I1e",
    lambda x: _bessel_i_fwd(x, 1, True),
    lambda g, x, y, needs: _i1_grad(g, x, y, needs, True),
)


def _bessel_j_fwd(x, order):
    """J0 or J1, computed in float64."""
    dt = x.dtype
    x = x.astype(_core.float64)
    a = _core.abs(x)
    # the power series below 8
    s = _core.minimum(a, 8.0)
    series = _series(-(s * s) * 0.25, order, 28)
    if order == 1:
        series = series * s * 0.5
    # Miller's backward recurrence on [8, 20), normalized by J0 + 2 (J2 + J4 + ...) = 1
    m = _core.clip(a, 8.0, 20.0)
    inv = 1 / m
    nxt, cur = _em.zeros_like(m), _em.full_like(m, 1e-30)
    norm, j1 = _em.zeros_like(m), _em.zeros_like(m)
    for k in range(60, 0, -1):  # cur = J_k, nxt = J_{k+1} (unnormalized)
        if k % 2 == 0:
            norm = norm + 2 * cur
        if k == 1:
            j1 = cur
        nxt, cur = cur, cur * (2 * k) * inv - nxt
    miller = (j1 if order == 1 else cur) / (norm + cur)
    # Hankel's asymptotic expansion from 20
    b = _core.maximum(a, 20.0)
    ib = 1 / b
    coef = _asym_coef(order, 40, False)
    p = _horner(ib * ib, [coef[2 * k] * (-1) ** k for k in range(20)])
    q = _horner(ib * ib, [coef[2 * k + 1] * (-1) ** k for k in range(20)]) * ib
    cs, sn = _core.cos(b), _core.sin(b)
    if order == 0:  # chi = b - pi/4
        cos_chi, sin_chi = (cs + sn) / _SQRT2, (sn - cs) / _SQRT2
    else:  # chi = b - 3 pi/4
        cos_chi, sin_chi = (sn - cs) / _SQRT2, -(sn + cs) / _SQRT2
    asym = (p * cos_chi - q * sin_chi) * _core.sqrt(2 / (math.pi * b))
    out = _core.where(a < 8, series, _core.where(a < 20, miller, asym))
    if order == 1:
        out = _core.where(x < 0, -out, out)
    return out.astype(dt)


def _j1_grad(g, x, y, needs):
    xs = _core.where(x == 0, 1.0, x)
    return (g * _at_zero(x, 0.5, _j0(x) - y / xs),)


_j0 = _Rule("BesselJ0", lambda x: _bessel_j_fwd(x, 0), lambda g, x, y, needs: (-(g * _j1(x)),))
_j1 = _Rule("BesselJ1", lambda x: _bessel_j_fwd(x, 1), _j1_grad)
