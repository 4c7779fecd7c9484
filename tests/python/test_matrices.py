"""Building matrices: tri, tril, triu, diag, diagflat, vander and the diagonal and triangle index
arrays (python/ember/_matrices.py) against NumPy on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import em, same, to_numpy

RNG = np.random.default_rng(0)


def close(got, want, tol=1e-12):
    got = to_numpy(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


A3 = RNG.standard_normal((3, 4, 5))


def test_tri(device):
    close(ember.tri(3, 4, 1, device=device), np.tri(3, 4, 1))
    assert ember.tri(2, dtype=ember.int32, device=device).dtype == ember.int32


@pytest.mark.parametrize("k", [0, 1, -2])
def test_diag_diagflat(device, k):
    v = np.arange(1.0, 4.0)
    close(ember.diag(em(v, device), k), np.diag(v, k))
    m = A3[0]
    close(ember.diag(em(m, device), k), np.diag(m, k))
    close(ember.diagflat(em(m[:2, :2], device), k), np.diagflat(m[:2, :2], k))


def test_vander(device):
    v = np.array([1.0, 2.0, -1.5])
    same(ember.vander(em(v, device)), np.vander(v))
    same(ember.vander(em(v, device), 5, increasing=True), np.vander(v, 5, increasing=True))
    same(ember.vander(em([1, 2, 3], device)), np.vander(np.array([1, 2, 3])))


def test_diag_and_triangle_indices(device):
    a = np.arange(24).reshape(4, 6)
    x = em(a, device)
    same(ember.diag_indices(3), np.diag_indices(3))
    same(
        ember.diag_indices_from(em(np.zeros((3, 3, 3)), device)),
        np.diag_indices_from(np.zeros((3, 3, 3))),
    )
    for k in [-1, 0, 2]:
        same(ember.tril_indices(4, k, 5), np.tril_indices(4, k, 5))
        same(ember.triu_indices(4, k), np.triu_indices(4, k))
        same(ember.tril_indices_from(x, k), np.tril_indices_from(a, k))
        same(ember.triu_indices_from(x, k), np.triu_indices_from(a, k))


def test_mask_indices(device):
    same(ember.mask_indices(4, ember.triu, 1), np.mask_indices(4, np.triu, 1))


def equal(got, want):
    got = to_numpy(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_array_equal(got, want)


A24 = np.arange(24.0).reshape(2, 3, 4)


@pytest.mark.parametrize("k", [0, 1, -1, 5])
def test_tril_triu(device, k):
    m = np.arange(20).reshape(4, 5)
    equal(ember.tril(em(m, device), k=k), np.tril(m, k))
    equal(ember.triu(em(A24, device), k=k), np.triu(A24, k))
    assert ember.tril(em(m, device)).dtype == ember.int64
