"""ember.special: PyTorch's ``torch.special`` on ember arrays.

Inputs are ember arrays (Python numbers and sequences are converted as ``ember.tensor`` does:
floats give the default float dtype). Integer and bool inputs compute in the default float
dtype, float16/bfloat16 in float32 (rounded back), complex input raises RuntimeError. Functions
the op table or ember's namespace has (expm1, log1p, exp2, round, sinc, softmax, ...) map onto
them; the others are composed of ember ops (in ``_special_impl``), so they run on every device,
and are autograd Functions with their analytic derivatives (ErfBackward, ...; differentiable
again):

- erf/erfc/erfcx: ember's erfc fit (gelu's: erfc(a) = t exp(P(2t - 1) - a^2), t = 1/(1 + a/2))
  for |x| >= 1/2, with exp(-a^2) split so a^2 does not round; the Taylor series below 1/2.
- erfinv/ndtri: Winitzki's closed-form guess, then Newton steps on erf(y) = x (|x| <= 1/2) or on
  log erfc(y) = log z (the tails: no cancellation down to z ~ 1e-300).
- gammaln: reflection below 1/2; lgamma(2 + e) = e (1 - gamma) + sum (-e)^k (zeta(k) - 1)/k on
  |e| <= 1/2 (exact zeros at 1 and 2), reached by shifting down from below 10; Stirling's
  series above. digamma: reflection, a shift to >= 10, the asymptotic series. zeta(s, q)
  (Hurwitz): Euler-Maclaurin after shifting q past 9 (for negative q the shift grows with
  -min(q), read back once); polygamma(n >= 1) = (-1)^(n+1) n! zeta(n + 1, x).
- gammainc/gammaincc: the power series (x < a + 1) or Lentz's continued fraction, iterated on
  the whole array until every element converged (one read-back per 8 steps).
- i0/i0e/i1/i1e: power series up to 25, the asymptotic expansion above (as ``ember.i0``);
  bessel_j0/j1 (computed in float64): power series below 8, Miller's backward recurrence up to
  20, Hankel's asymptotic expansion above.

Accuracy (against SciPy): a few ulp of the dtype, except next to the zeros of gammaln,
digamma, J0 and J1 (absolute error ~1e-15 in float64 there). Not provided: airy_ai,
bessel_y0/y1, modified_bessel_k0/k1 and their scaled forms, and the orthogonal polynomials
(chebyshev_*, hermite_*, laguerre_*, legendre_*).
"""

from __future__ import annotations

import math
import numbers

import numpy as _np

import ember as _em

from . import _core
from . import _special_impl as _K

__all__ = [
    "bessel_j0", "bessel_j1", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2",
    "expit", "expm1", "gammainc", "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e", "log1p",
    "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
    "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax",
    "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]  # fmt: skip

_W = "ember.special."


# ---- arguments, dtypes and the autograd wrapper ----------------------------------------------


def _arg(x, who, name="input"):
    """`x` as an ember array of float dtype (see the module docstring)."""
    if isinstance(x, _core.ndarray):
        a = x
    elif isinstance(x, numbers.Number | _np.generic | _np.ndarray | list | tuple):
        a = _em.tensor(x)
    else:
        raise TypeError(f"{who}(): argument '{name}' must be Tensor, not {type(x).__name__}")
    k = a.dtype.kind
    if k == "c":
        raise RuntimeError(f"{who}: not implemented for complex dtype {a.dtype}")
    if k != "f":
        a = a.astype(_em.get_default_dtype())
    return a


def _pair(x, y, who, xname="input", yname="other"):
    """Two arguments, one of which may be a Python number, in one float dtype."""
    if not isinstance(x, _core.ndarray) and isinstance(y, _core.ndarray):
        y = _arg(y, who, yname)
        x = _core.full((), float(_real(x, who, xname)), dtype=y.dtype, device=y.device)
    elif not isinstance(y, _core.ndarray) and isinstance(x, _core.ndarray):
        x = _arg(x, who, xname)
        y = _core.full((), float(_real(y, who, yname)), dtype=x.dtype, device=x.device)
    else:
        x, y = _arg(x, who, xname), _arg(y, who, yname)
        t = _em.result_type(x, y)
        x, y = x.astype(t), y.astype(t)
    return x, y


def _real(v, who, name):
    if isinstance(v, bool) or not isinstance(v, numbers.Real | _np.number):
        raise TypeError(f"{who}(): argument '{name}' must be Tensor or Number, not "
                        f"{type(v).__name__}")  # fmt: skip
    return v


def _out(result, out):
    if out is None:
        return result
    out[...] = result
    return out


def _unary(rule, x, who, out=None):
    a = _arg(x, who)
    dt = a.dtype
    r = rule(a)
    return _out(r.astype(dt) if r.dtype != dt else r, out)


def erf(input, *, out=None):  # noqa: A002
    """The error function."""
    return _unary(_K._erf, input, _W + "erf", out)


def erfc(input, *, out=None):  # noqa: A002
    """1 - erf(x), without cancellation for large x."""
    return _unary(_K._erfc, input, _W + "erfc", out)


def erfcx(input, *, out=None):  # noqa: A002
    """exp(x^2) erfc(x), the scaled complementary error function."""
    return _unary(_K._erfcx, input, _W + "erfcx", out)


def erfinv(input, *, out=None):  # noqa: A002
    """The inverse of erf on (-1, 1): +-inf at +-1, NaN outside [-1, 1]."""
    return _unary(_K._erfinv, input, _W + "erfinv", out)


def ndtr(input, *, out=None):  # noqa: A002
    """The standard normal CDF, erfc(-x / sqrt 2) / 2."""
    a = _arg(input, _W + "ndtr")
    return _out(erfc(-a / _K._SQRT2) * 0.5, out)


def ndtri(input, *, out=None):  # noqa: A002
    """The inverse of the standard normal CDF (-inf at 0, inf at 1, NaN outside [0, 1])."""
    return _unary(_K._ndtri, input, _W + "ndtri", out)


def log_ndtr(input, *, out=None):  # noqa: A002
    """log of the standard normal CDF, accurate far into both tails."""
    return _unary(_K._log_ndtr, input, _W + "log_ndtr", out)


def gammaln(input, *, out=None):  # noqa: A002
    """log |Gamma(x)| (inf at the poles 0, -1, -2, ... and at +-inf)."""
    return _unary(_K._gammaln, input, _W + "gammaln", out)


def digamma(input, *, out=None):  # noqa: A002
    """The logarithmic derivative of Gamma: -inf at +0 (inf at -0), NaN at negative integers."""
    return _unary(_K._digamma, input, _W + "digamma", out)


psi = digamma


def polygamma(n, input, *, out=None):  # noqa: A002
    """The n-th derivative of digamma (n = 0 is digamma itself)."""
    who = _W + "polygamma"
    if isinstance(n, bool) or not isinstance(n, numbers.Integral | _np.integer):
        raise TypeError(f"{who}(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"{who}(n, x) does not support negative n, got n={n}")
    if n == 0:
        return digamma(input, out=out)
    return _unary(_K._polygamma(int(n)), input, who, out)


def zeta(input, other, *, out=None):  # noqa: A002
    """The Hurwitz zeta function zeta(x, q) = sum_k (k + q)^-x (Riemann's at q = 1): inf at
    x = 1 and at q = 0, -1, ...; NaN for x < 1, and for q < 0 with x not an integer."""
    who = _W + "zeta"
    s, q = _pair(input, other, who)
    dt = s.dtype
    r = _K._zeta(s, q)
    return _out(r.astype(dt) if r.dtype != dt else r, out)


def multigammaln(input, p, *, out=None):  # noqa: A002
    """The multivariate log-gamma function of dimension p: sum_i lgamma(x - i/2) +
    p (p - 1)/4 log(pi); every element must exceed (p - 1)/2."""
    who = _W + "multigammaln"
    if isinstance(p, bool) or not isinstance(p, numbers.Integral | _np.integer):
        raise TypeError(f"{who}(): argument 'p' must be int, not {type(p).__name__}")
    if p < 1:
        raise RuntimeError(f"{who}: p has to be greater than or equal to 1, got {p}")
    a = _arg(input, who)
    if a.size and not bool(_core.all(a > (p - 1) / 2)):
        raise RuntimeError(f"{who}: All elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    r = gammaln(a)
    for i in range(1, p):
        r = r + gammaln(a - i / 2)
    return _out(r + p * (p - 1) / 4 * math.log(math.pi), out)


def gammainc(input, other, *, out=None):  # noqa: A002
    """The regularized lower incomplete gamma function P(a, x) (a = input, x = other);
    differentiable in x only (as PyTorch)."""
    a, x = _pair(input, other, _W + "gammainc")
    dt = a.dtype
    r = _K._gammainc(a, x)
    return _out(r.astype(dt) if r.dtype != dt else r, out)


def gammaincc(input, other, *, out=None):  # noqa: A002
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a, x = _pair(input, other, _W + "gammaincc")
    dt = a.dtype
    r = _K._gammaincc(a, x)
    return _out(r.astype(dt) if r.dtype != dt else r, out)


def i0(input, *, out=None):  # noqa: A002
    """The modified Bessel function of the first kind, order 0."""
    return _unary(_K._i0, input, _W + "i0", out)


def i0e(input, *, out=None):  # noqa: A002
    """exp(-|x|) i0(x)."""
    return _unary(_K._i0e, input, _W + "i0e", out)


def i1(input, *, out=None):  # noqa: A002
    """The modified Bessel function of the first kind, order 1."""
    return _unary(_K._i1, input, _W + "i1", out)


def i1e(input, *, out=None):  # noqa: A002
    """exp(-|x|) i1(x)."""
    return _unary(_K._i1e, input, _W + "i1e", out)


modified_bessel_i0 = i0
modified_bessel_i1 = i1


def bessel_j0(input, *, out=None):  # noqa: A002
    """The Bessel function of the first kind, order 0."""
    return _unary(_K._j0, input, _W + "bessel_j0", out)


def bessel_j1(input, *, out=None):  # noqa: A002
    """The Bessel function of the first kind, order 1."""
    return _unary(_K._j1, input, _W + "bessel_j1", out)


def spherical_bessel_j0(input, *, out=None):  # noqa: A002
    """sin(x) / x (1 at 0)."""
    a = _arg(input, _W + "spherical_bessel_j0")
    zero = a == 0
    xs = _core.where(zero, 1.0, a)
    return _out(_core.where(zero, 1.0, _core.sin(xs) / xs), out)


def _mapped(fn, input, who, out):
    a = _arg(input, who)
    return _out(fn(a), out)


def expit(input, *, out=None):  # noqa: A002
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    return _mapped(_em.sigmoid, input, _W + "expit", out)


def exp2(input, *, out=None):  # noqa: A002
    """2 ** x."""
    return _mapped(_em.exp2, input, _W + "exp2", out)


def expm1(input, *, out=None):  # noqa: A002
    """exp(x) - 1, accurate near 0."""
    return _mapped(_core.expm1, input, _W + "expm1", out)


def log1p(input, *, out=None):  # noqa: A002
    """log(1 + x), accurate near 0."""
    return _mapped(_core.log1p, input, _W + "log1p", out)


def sinc(input, *, out=None):  # noqa: A002
    """The normalized sinc sin(pi x) / (pi x), 1 at 0."""
    return _mapped(_em.sinc, input, _W + "sinc", out)


def round(input, *, decimals=0, out=None):  # noqa: A002
    """Rounds half to even, to ``decimals`` decimal places."""
    return _mapped(lambda a: _em.round(a, int(decimals)), input, _W + "round", out)


def logit(input, eps=None, *, out=None):  # noqa: A002
    """log(p / (1 - p)); with ``eps``, p is first clamped to [eps, 1 - eps]."""
    a = _arg(input, _W + "logit")
    if eps is not None:
        a = _core.clip(a, float(eps), 1 - float(eps))
    return _out(_core.log(a / (1 - a)), out)


def entr(input, *, out=None):  # noqa: A002
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0."""
    a = _arg(input, _W + "entr")
    pos = a > 0
    r = -(a * _core.log(_core.where(pos, a, 1.0)))
    r = _core.where(pos, r, _core.where(a == 0, _em.zeros_like(a), -_K._INF))
    return _out(_core.where(_core.isnan(a), _K._NAN, r), out)


def _xlog(input, other, who, log, neutral, out):
    x, y = _pair(input, other, who)
    zero = x == 0
    r = x * log(_core.where(zero, neutral, y))
    return _out(_core.where(_core.isnan(y), _K._NAN, _core.where(zero, 0.0, r)), out)


def xlogy(input, other, *, out=None):  # noqa: A002
    """x * log(y), 0 where x == 0 (unless y is NaN)."""
    return _xlog(input, other, _W + "xlogy", _core.log, 1.0, out)


def xlog1py(input, other, *, out=None):  # noqa: A002
    """x * log1p(y), 0 where x == 0 (unless y is NaN)."""
    return _xlog(input, other, _W + "xlog1py", _core.log1p, 0.0, out)


def logsumexp(input, dim, keepdim=False, *, out=None):  # noqa: A002
    """log(sum(exp(x), dim)), computed stably."""
    return _out(_em.logsumexp(_arg(input, _W + "logsumexp"), dim, keepdim), out)


def softmax(input, dim, *, dtype=None):  # noqa: A002
    """exp(x) / sum(exp(x), dim)."""
    return _em.nn.functional.softmax(_arg(input, _W + "softmax"), dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):  # noqa: A002
    """log(softmax(x, dim)), computed stably."""
    return _em.nn.functional.log_softmax(_arg(input, _W + "log_softmax"), dim, dtype=dtype)
