"""NumPy's polynomial functions (coefficients highest power first), composed from ember ops:
polyval, polyadd, polysub, polymul, polydiv, polyder, polyint, poly, roots, polyfit."""

from __future__ import annotations

import builtins
import operator

from . import _core
from ._creation import zeros_like
from ._dtypes import result_type
from ._joining import concat, stack
from ._manipulation import _asarray
from ._math import convolve
from ._matrices import vander
from ._scan import nonzero
from ._sorting import sort
from .linalg import eigvals as _linalg_eigvals
from .linalg import lstsq as _linalg_lstsq

__all__ = [
    "poly",
    "polyadd",
    "polyder",
    "polydiv",
    "polyfit",
    "polyint",
    "polymul",
    "polysub",
    "polyval",
    "roots",
]


def _coeffs(p, who):
    c = _asarray(p)
    if c.ndim != 1:
        raise ValueError(f"{who}: coefficients must be 1-D, got shape {c.shape}")
    return c


def polyval(p, x):
    """p[0] * x**(N-1) + ... + p[N-1] by Horner's rule."""
    c = _coeffs(p, "ember.polyval")
    x = _asarray(x)
    y = zeros_like(x, dtype=result_type(c, x))
    for k in range(c.shape[0]):
        y = y * x + c[k]
    return y


def _trim(c):
    """Leading zeros removed (at least one coefficient kept)."""
    (nz,) = nonzero(c != 0)
    if nz.shape[0] == 0:
        return c[-1:] if c.shape[0] else _core.zeros(1, dtype=c.dtype, device=c.device)
    return c[int(nz[0].item()) :]


def _padded(a, b):
    n = builtins.max(a.shape[0], b.shape[0])
    t = result_type(a, b)

    def pad(c):
        z = _core.zeros(n - c.shape[0], dtype=t, device=c.device)
        return concat([z, c.astype(t)])

    return pad(a), pad(b)


def polyadd(a1, a2):
    a, b = _padded(_coeffs(a1, "ember.polyadd"), _coeffs(a2, "ember.polyadd"))
    return a + b


def polysub(a1, a2):
    a, b = _padded(_coeffs(a1, "ember.polysub"), _coeffs(a2, "ember.polysub"))
    return a - b


def polymul(a1, a2):
    return convolve(_coeffs(a1, "ember.polymul"), _coeffs(a2, "ember.polymul"))


def polydiv(u, v):
    """(quotient, remainder) of polynomial division."""
    who = "ember.polydiv"
    u = _coeffs(u, who).astype(_core.float64) if _asarray(u).dtype.kind != "c" else _coeffs(u, who)
    v = _coeffs(v, who)
    v = v.astype(_core.float64) if v.dtype.kind != "c" else v
    v = _trim(v)
    if not bool((v[0] != 0).item()):
        raise ZeroDivisionError(f"{who}: division by the zero polynomial")
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = []
    r = u
    for k in range(0, builtins.max(m - n + 1, 0)):
        d = scale * r[k]
        q.append(d)
        r = concat([r[:k], r[k : k + n + 1] - d * v, r[k + n + 1 :]])
    quotient = stack(q) if q else _core.zeros(1, dtype=r.dtype, device=r.device)
    rem = r[builtins.max(m - n + 1, 0) :] if m >= n else r
    # NumPy drops the remainder's leading (near-)zeros
    rem = _trim(_core.where(_core.abs(rem) < 1e-14 * _core.max(_core.abs(u)), 0.0, rem))
    return quotient, rem


def polyder(p, m=1):
    """The m-th derivative's coefficients."""
    c = _coeffs(p, "ember.polyder")
    m = operator.index(m)
    if m < 0:
        raise ValueError("ember.polyder: the order of derivative must be positive")
    for _ in range(m):
        n = c.shape[0] - 1
        if n <= 0:
            return _core.zeros(1, dtype=c.dtype, device=c.device)[:0] if n < 0 else c[:0] + 0
        c = c[:-1] * _core.arange(n, 0, -1, device=c.device)
    return c


def polyint(p, m=1, k=None):
    """The m-th antiderivative's coefficients, with integration constants k (default 0)."""
    c = _coeffs(p, "ember.polyint")
    m = operator.index(m)
    if m < 0:
        raise ValueError("ember.polyint: the order of integral must be positive")
    ks = [0.0] * m if k is None else (list(k) if hasattr(k, "__len__") else [k] * m)
    if len(ks) < m:
        raise ValueError("ember.polyint: k must have at least m constants")
    c = c.astype(result_type(c, _core.float64))
    for j in range(m):
        n = c.shape[0]
        c = concat(
            [
                c / _core.arange(n, 0, -1, device=c.device),
                _core.full((1,), ks[j], dtype=c.dtype, device=c.device),
            ]
        )
    return c


def poly(seq_of_zeros):
    """The monic polynomial with the given roots (or the characteristic polynomial of a square
    matrix)."""
    z = _asarray(seq_of_zeros)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] > 0:
        z = _linalg_eigvals(z)
    elif z.ndim != 1:
        raise ValueError("ember.poly: input must be 1-D or a square 2-D array")
    c = _core.ones(1, dtype=result_type(z, _core.float64), device=z.device)
    for k in range(z.shape[0]):
        c = convolve(
            c, stack([_core.ones((), dtype=c.dtype, device=c.device), -z[k].astype(c.dtype)])
        )
    if c.dtype.kind == "c" and z.shape[0]:
        # real when the complex roots come in conjugate pairs (NumPy's rule)
        pos = sort(z[_core.imag(z) > 0])
        neg = sort(_core.conj(z[_core.imag(z) < 0]))
        if pos.shape == neg.shape and bool(_core.all(pos == neg).item()):
            c = _core.real(c)
    return c


def roots(p):
    """The roots of the polynomial: the eigenvalues of its companion matrix."""
    c = _coeffs(p, "ember.roots")
    (nz,) = nonzero(c != 0)
    if nz.shape[0] == 0:
        return _core.zeros(0, dtype=_core.float64, device=c.device)
    lo, hi = int(nz[0].item()), int(nz[-1].item())
    trailing = c.shape[0] - 1 - hi
    c = c[lo : hi + 1].astype(result_type(c, _core.float64))
    n = c.shape[0] - 1
    r = _core.zeros(
        0, dtype=_core.complex128 if c.dtype.kind == "c" else _core.float64, device=c.device
    )
    if n >= 1:
        comp = _core.zeros((n, n), dtype=c.dtype, device=c.device)
        if n > 1:
            comp[1:, :-1] = _core.eye(n - 1, dtype=c.dtype, device=c.device)
        comp[0, :] = -c[1:] / c[0]
        r = _linalg_eigvals(comp)
        if r.dtype.kind == "c" and bool(_core.all(_core.imag(r) == 0).item()):
            r = _core.real(r)
    if trailing:
        r = concat([r, _core.zeros(trailing, dtype=r.dtype, device=c.device)])
    return r


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial coefficients of degree `deg` (highest first)."""
    who = "ember.polyfit"
    x, y = _asarray(x).astype(_core.float64), _asarray(y)
    deg = operator.index(deg)
    if deg < 0:
        raise ValueError(f"{who}: expected deg >= 0")
    if x.ndim != 1 or x.shape[0] == 0:
        raise TypeError(f"{who}: expected a non-empty 1-D x")
    if y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        raise TypeError(f"{who}: expected y of x's length, 1-D or 2-D")
    if full or cov:
        raise ValueError(f"{who}: full=True and cov=True are not supported")
    y = y.astype(result_type(y, _core.float64))

    lhs = vander(x, deg + 1)
    rhs = y
    if w is not None:
        ww = _asarray(w).astype(_core.float64)
        lhs = lhs * ww[:, None]
        rhs = rhs * (ww if rhs.ndim == 1 else ww[:, None])
    scale = _core.sqrt(_core.sum(lhs * lhs, axis=0))
    scale = _core.where(scale == 0, 1.0, scale)
    sol = _linalg_lstsq(lhs / scale, rhs, rcond=rcond)[0]
    return (sol.T / scale).T
