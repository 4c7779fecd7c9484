"""Draws for ember.distributions, from ember's global generator (``ember.manual_seed``).

ember.random's gamma, poisson and binomial take scalar parameters; the distributions need
array parameters, so they are drawn here with ember ops, every element at once: Marsaglia and
Tsang's squeeze-and-reject method for the gamma (with Stuart's boost below concentration 1),
inversion by sequential search for Poisson rates below 10 and binomials with n min(p, 1 - p)
below 10, and Hormann's transformed rejection (PTRS, BTRS) above. Rejection loops draw for
the whole array and keep each element's first accepted value, until every element has one
(one host read per round)."""

from __future__ import annotations

import ember as _em

from .. import _core
from .. import _special_impl as _K
from .. import random as _random
from ..autograd import Function


def _draw_dtype(like):
    name = like.dtype.name
    return name if name in ("float32", "float64") else "float32"


def standard_normal(shape, like):
    """N(0, 1) draws of `like`'s float dtype and device."""
    g = _random._global
    r = g.standard_normal(tuple(shape), _draw_dtype(like), device=like.device)
    return r if r.dtype == like.dtype else r.astype(like.dtype)


def uniform(shape, like, low=0.0, high=1.0):
    """Uniform draws on [low, high) of `like`'s float dtype and device."""
    g = _random._global
    r = g.uniform(low, high, tuple(shape), dtype=_draw_dtype(like), device=like.device)
    return r if r.dtype == like.dtype else r.astype(like.dtype)


def standard_exponential(shape, like):
    g = _random._global
    r = g.standard_exponential(tuple(shape), _draw_dtype(like), device=like.device)
    return r if r.dtype == like.dtype else r.astype(like.dtype)


def _open_uniform(shape, like):
    """Uniform draws on (0, 1]."""
    return 1 - uniform(shape, like)


def _rounds(step, done, limit=1000):
    """Calls step() until every element is done (step returns the new done mask)."""
    for _ in range(limit):
        if bool(_core.all(done)):
            return
        done = step(done)
    raise RuntimeError("ember.distributions: rejection sampling did not finish in 1000 rounds")


def _gamma_draw(alpha):
    """Standard gamma draws of concentration `alpha` (an array), no graph."""
    shape = tuple(alpha.shape)
    valid = alpha > 0
    a = _core.where(valid, alpha, 1.0)
    boost = a < 1
    a1 = _core.where(boost, a + 1, a)
    d = a1 - 1 / 3
    c = 1 / _core.sqrt(d * 9)
    out = [_em.zeros_like(a)]

    def step(done):
        z = standard_normal(shape, a)
        u = _open_uniform(shape, a)
        v = 1 + c * z
        v = v * v * v
        pos = v > 0
        vs = _core.where(pos, v, 1.0)
        ok = pos & (_core.log(u) < z * z * 0.5 + d - d * vs + d * _core.log(vs))
        out[0] = _core.where(ok & ~done, d * vs, out[0])
        return done | ok

    _rounds(step, ~valid)
    x = out[0]
    if bool(_core.any(boost)):
        x = _core.where(boost, x * _core.exp(_core.log(_open_uniform(shape, a)) / a), x)
    tiny = float(_em.finfo(a.dtype).tiny)
    return _core.where(valid, _core.maximum(x, tiny), float("nan"))


def _gamma_dx_dalpha(x, alpha):
    """d x / d alpha of a standard gamma draw x at fixed CDF value (implicit
    reparameterization): -(dP(alpha, x)/d alpha) / p(x; alpha), the alpha-derivative of the
    regularized incomplete gamma P by a central difference (step 1e-4 alpha, float64)."""
    dt = x.dtype
    x64, a64 = x.astype("float64"), alpha.astype("float64")
    h = a64 * 1e-4
    dp = (_K._igamma_fwd(a64 + h, x64) - _K._igamma_fwd(a64 - h, x64)) / (2 * h)
    log_pdf = (a64 - 1) * _core.log(x64) - x64 - _K._lgamma_fwd(a64)
    r = -dp / _core.exp(log_pdf)
    return _core.where(_core.isfinite(r), r, 0.0).astype(dt)


class _StandardGamma(Function):
    """Standard gamma draws whose gradient in the concentration is the implicit one."""

    @staticmethod
    def forward(ctx, alpha):
        x = _gamma_draw(alpha)
        ctx.save_for_backward(x, alpha)
        return x

    @staticmethod
    def backward(ctx, g):
        x, alpha = ctx.saved_tensors
        return g * _gamma_dx_dalpha(x, alpha)


def standard_gamma(alpha):
    """Standard gamma draws, one per element of `alpha` (differentiable in alpha)."""
    return _StandardGamma.apply(alpha)


def _inversion(p0, ratio, limit, cap):
    """Counts by sequential search: the first k with u <= F(k), where F(0) = p0 and
    P(k + 1) = P(k) * ratio(k); k stays below `cap` (an array) and `limit`."""
    u = uniform(tuple(p0.shape), p0)
    prob, cdf = p0, p0
    k = _em.zeros_like(p0)
    for i in range(limit):
        more = (u > cdf) & (k < cap)
        if i % 4 == 0 and not bool(_core.any(more)):
            break
        k = k + more.astype(k.dtype)
        prob = prob * ratio(i)
        cdf = cdf + prob
    return k


def poisson(rate):
    """Poisson counts (as floats of rate's dtype), one per element of `rate`."""
    shape = tuple(rate.shape)
    valid = rate >= 0
    small = valid & (rate < 10)
    lam = _core.where(small, rate, 0.0)
    low = _inversion(_core.exp(-lam), lambda i: lam / (i + 1), 200, _em.full_like(lam, 1e9))
    # PTRS for rates of 10 and more (the others take a stand-in rate of 10)
    lam = _core.where(small | ~valid, 10.0, rate)
    slam, loglam = _core.sqrt(lam), _core.log(lam)
    b = slam * 2.53 + 0.931
    a = b * 0.02483 - 0.059
    log_inv_alpha = _core.log(1.1239 + 1.1328 / (b - 3.4))
    vr = 0.9277 - 3.6224 / (b - 2)
    out = [_em.zeros_like(lam)]

    def step(done):
        uu = uniform(shape, lam) - 0.5
        v = _open_uniform(shape, lam)
        us = 0.5 - _core.abs(uu)
        k = _core.floor((2 * a / us + b) * uu + lam + 0.43)
        fast = (us >= 0.07) & (v <= vr)
        reject = (k < 0) | ((us < 0.013) & (v > us))
        ks = _core.where(k >= 0, k, 0.0)
        lhs = _core.log(v) + log_inv_alpha - _core.log(a / (us * us) + b)
        rhs = -lam + ks * loglam - _K._lgamma_fwd(ks + 1)
        ok = fast | (~reject & (lhs <= rhs))
        out[0] = _core.where(ok & ~done, k, out[0])
        return done | ok

    _rounds(step, small | ~valid)
    return _core.where(valid, _core.where(small, low, out[0]), float("nan"))


def binomial(total_count, probs):
    """Binomial counts (floats of probs' dtype), one per element of the broadcast parameters."""
    n, p = total_count, probs
    shape = tuple(p.shape)
    valid = (n >= 0) & (p >= 0) & (p <= 1)
    q = _core.where(valid, _core.minimum(p, 1 - p), 0.0)
    n = _core.where(valid, n, 0.0)
    small = (n * q < 10) | ~valid
    # inversion: P(0) = (1 - q)^n, P(k + 1) = P(k) (n - k)/(k + 1) q/(1 - q)
    ns, qs = _core.where(small, n, 0.0), _core.where(small, q, 0.0)
    odds = qs / (1 - qs)
    p0 = _core.exp(ns * _core.log1p(-qs))
    low = _inversion(p0, lambda i: odds * (ns - i) / (i + 1), 500, ns)
    # BTRS for n q >= 10 (the others take stand-in parameters n = 100, q = 1/2)
    nb, qb = _core.where(small, 100.0, n), _core.where(small, 0.5, q)
    spq = _core.sqrt(nb * qb * (1 - qb))
    b = spq * 2.53 + 1.15
    a = b * 0.0248 + qb * 0.01 - 0.0873
    c = nb * qb + 0.5
    vr = 0.92 - 4.2 / b
    log_alpha = _core.log((2.83 + 5.1 / b) * spq)
    lpq = _core.log(qb / (1 - qb))
    m = _core.floor((nb + 1) * qb)
    h = _K._lgamma_fwd(m + 1) + _K._lgamma_fwd(nb - m + 1)
    out = [_em.zeros_like(nb)]

    def step(done):
        uu = uniform(shape, nb) - 0.5
        v = _open_uniform(shape, nb)
        us = 0.5 - _core.abs(uu)
        k = _core.floor((2 * a / us + b) * uu + c)
        inside = (k >= 0) & (k <= nb)
        ks = _core.clip(k, 0.0, nb)
        fast = inside & (us >= 0.07) & (v <= vr)
        lv = _core.log(v) + log_alpha - _core.log(a / (us * us) + b)
        bound = h - _K._lgamma_fwd(ks + 1) - _K._lgamma_fwd(nb - ks + 1) + (ks - m) * lpq
        ok = fast | (inside & (lv <= bound))
        out[0] = _core.where(ok & ~done, k, out[0])
        return done | ok

    _rounds(step, small)
    x = _core.where(small, low, out[0])
    x = _core.where(p > 0.5, n - x, x)
    return _core.where(valid, x, float("nan"))
