"""Logic functions (python/ember/_logic.py) against NumPy on both devices."""

from __future__ import annotations

import ember
import numpy as np
from _helpers import em, same, to_numpy

RNG = np.random.default_rng(13)


A = RNG.standard_normal((4, 5))


SPECIAL = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 8.0, -27.0])


def test_type_queries(device):
    x = em(A, device)
    assert ember.isscalar(3.0) and not ember.isscalar(em(3.0, device))
    assert ember.iscomplexobj(em([1j], device)) and ember.isrealobj(x)


def test_isposinf_isneginf_iscomplex_isreal(device):
    x = em(SPECIAL, device)
    same(ember.isposinf(x), np.isposinf(SPECIAL))
    same(ember.isneginf(x), np.isneginf(SPECIAL))
    z = np.array([1 + 2j, -3.0, 0.5j, 0])
    same(ember.iscomplex(em(z, device)), np.iscomplex(z))
    same(ember.isreal(em(z, device)), np.isreal(z))


def test_iterable_isfortran_array_equiv(device):
    assert ember.iterable([1]) and not ember.iterable(3)
    assert ember.isfortran(em(np.zeros((3, 4)), device).T)
    assert not ember.isfortran(em(np.zeros((3, 4)), device))
    assert ember.array_equiv(em([1, 2], device), em([[1, 2], [1, 2]], device))
    assert not ember.array_equiv(em([1, 2], device), em([1, 2, 3], device))


def equal(got, want):
    got = to_numpy(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_array_equal(got, want)


def test_isclose_allclose_array_equal(device):
    a = np.array([1.0, np.inf, -np.inf, np.nan, 1e-9, 100.0])
    b = np.array([1.0 + 1e-7, np.inf, np.inf, np.nan, 0.0, 100.1])
    for eq in (False, True):
        equal(
            ember.isclose(em(a, device), em(b, device), equal_nan=eq),
            np.isclose(a, b, equal_nan=eq),
        )
    assert ember.allclose(em(a[:2], device), em(b[:2], device))
    assert not ember.allclose(em(a, device), em(b, device))
    assert ember.array_equal(em(a, device), em(a, device), equal_nan=True)
    assert not ember.array_equal(em(a, device), em(a, device))
    assert not ember.array_equal(em(a, device), em(a[:3], device))
