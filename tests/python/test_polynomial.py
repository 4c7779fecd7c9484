"""NumPy's polynomial functions and linalg.multi_dot / tensorinv / tensorsolve against NumPy on
both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import em, to_numpy

RNG = np.random.default_rng(17)


def close(got, want, rtol=1e-10):
    g, w = to_numpy(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)


P = np.array([2.0, -3.0, 0.5, 4.0])
Q = np.array([1.0, 2.0])


def test_arithmetic_and_calculus(device):
    x = np.linspace(-2, 2, 7)
    close(ember.polyval(em(P, device), em(x, device)), np.polyval(P, x))
    close(ember.polyval(em([3, 0, 1], device), em([2, 3], device)), np.polyval([3, 0, 1], [2, 3]))
    close(ember.polyadd(em(P, device), em(Q, device)), np.polyadd(P, Q))
    close(ember.polysub(em(Q, device), em(P, device)), np.polysub(Q, P))
    close(ember.polymul(em(P, device), em(Q, device)), np.polymul(P, Q))
    q, r = ember.polydiv(em(P, device), em(Q, device))
    wq, wr = np.polydiv(P, Q)
    close(q, wq)
    close(r, wr)
    q, r = ember.polydiv(em([1.0, 2, 3], device), em([1.0, 1], device))
    wq, wr = np.polydiv([1.0, 2, 3], [1.0, 1])
    close(q, wq)
    close(r, wr)
    for m in [0, 1, 2, 5]:
        close(ember.polyder(em(P, device), m), np.polyder(P, m))
        close(ember.polyint(em(P, device), m), np.polyint(P, m))
    close(ember.polyint(em(P, device), 2, k=[1.0, -1.0]), np.polyint(P, 2, k=[1.0, -1.0]))
    with pytest.raises(ZeroDivisionError, match="ember.polydiv"):
        ember.polydiv(em(P, device), em([0.0, 0.0], device))


def test_poly_roots_polyfit(device):
    z = np.array([1.0, -2.0, 0.5])
    close(ember.poly(em(z, device)), np.poly(z))
    cz = np.array([1 + 2j, 1 - 2j, 3.0])
    close(ember.poly(em(cz, device)), np.poly(cz))
    m = RNG.standard_normal((3, 3))
    close(ember.poly(em(m, device)), np.poly(m), rtol=1e-8)
    for p in [P, np.array([1.0, 0.0, -4.0, 0.0, 0.0]), np.array([0.0, 1.0, -3.0, 2.0])]:
        got = np.sort_complex(to_numpy(ember.roots(em(p, device))).astype(complex))
        want = np.sort_complex(np.roots(p).astype(complex))
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-8)
    x = np.linspace(0, 1, 20)
    y = 3 * x**2 - x + 0.5 + 0.01 * RNG.standard_normal(20)
    close(ember.polyfit(em(x, device), em(y, device), 2), np.polyfit(x, y, 2), rtol=1e-8)
    w = RNG.random(20) + 0.5
    close(
        ember.polyfit(em(x, device), em(y, device), 3, w=em(w, device)),
        np.polyfit(x, y, 3, w=w),
        rtol=1e-7,
    )
    y2 = np.stack([y, 2 * y], axis=1)
    close(ember.polyfit(em(x, device), em(y2, device), 1), np.polyfit(x, y2, 1), rtol=1e-8)


def test_linalg_extras(device):
    a, b, c, d = (RNG.standard_normal(s) for s in [(6, 3), (3, 8), (8, 2), (2,)])
    close(
        ember.linalg.multi_dot([em(a, device), em(b, device), em(c, device), em(d, device)]),
        np.linalg.multi_dot([a, b, c, d]),
    )
    v = RNG.standard_normal(6)
    close(
        ember.linalg.multi_dot([em(v, device), em(a, device), em(b, device)]),
        np.linalg.multi_dot([v, a, b]),
    )
    with pytest.raises(ValueError, match="at least two"):
        ember.linalg.multi_dot([em(a, device)])
    t = RNG.standard_normal((4, 6, 8, 3)) + 0.0
    t = t.reshape(24, 24) + 6 * np.eye(24)
    t = t.reshape(4, 6, 8, 3)
    close(ember.linalg.tensorinv(em(t, device), ind=2), np.linalg.tensorinv(t, ind=2), rtol=1e-8)
    rhs = RNG.standard_normal((4, 6))
    close(
        ember.linalg.tensorsolve(em(t, device), em(rhs, device)),
        np.linalg.tensorsolve(t, rhs),
        rtol=1e-8,
    )
