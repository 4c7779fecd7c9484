"""unique_* / unique, isin, intersect1d, union1d, setdiff1d and setxor1d against NumPy on both
devices, with NaN, -0.0, empty and multi-dimensional inputs."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import em, same, to_numpy

RNG = np.random.default_rng(9)


def eq(got, want):
    got, want = to_numpy(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def data(dtype, n=40):
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(0, 7, n).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return RNG.integers(0, 2, n).astype(bool)
    a = RNG.integers(-3, 4, n).astype(dtype)
    a[::7] = np.nan
    a[1] = -0.0
    return a


DTYPES = ["bool", "int8", "uint16", "int64", "float32", "float64"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_unique_family(device, dtype):
    a = data(dtype).reshape(5, 8)
    x = em(a, device)
    # the Array API's: every NaN distinct (ember's values come sorted, which the standard allows)
    eq(ember.unique_values(x), np.unique(a, equal_nan=False))
    v, c = ember.unique_counts(x)
    wv, wc = np.unique(a, return_counts=True, equal_nan=False)
    eq(v, wv)
    eq(c, wc)
    v, inv = ember.unique_inverse(x)
    assert inv.shape == a.shape
    back = to_numpy(v)[to_numpy(inv)]
    np.testing.assert_array_equal(back, a)
    v, idx, inv, c = ember.unique_all(x)
    wv, widx, winv, wc = np.unique(a, True, True, True, equal_nan=False)
    eq(v, wv)
    eq(idx, widx)
    eq(c, wc)
    np.testing.assert_array_equal(to_numpy(v)[to_numpy(inv)], a)
    # NumPy's unique: one NaN
    eq(ember.unique(x), np.unique(a))
    got = ember.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, np.unique(a, True, True, True), strict=True):
        eq(g, w.reshape(g.shape) if w.ndim else w)


def test_unique_edge_cases(device):
    eq(ember.unique_values(ember.zeros(0, device=device)), np.zeros(0))
    v, c = ember.unique_counts(em(5.0, device))
    eq(v, [5.0])
    eq(c, [1])
    v, inv = ember.unique_inverse(em(np.float64(3), device))
    assert inv.shape == ()
    eq(ember.unique(em([0.0, -0.0, 0.0], device)), [0.0])
    a = RNG.integers(0, 3, (6, 3))
    a[4] = a[1]
    for axis in [0, 1, -1]:
        got = ember.unique(em(a, device), return_index=True, return_counts=True, axis=axis)
        want = np.unique(a, return_index=True, return_counts=True, axis=axis)
        for g, w in zip(got, want, strict=True):
            eq(g, w)


@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_isin_and_set_ops(device, dtype):
    a, b = data(dtype, 30).reshape(5, 6), data(dtype, 11)
    x, y = em(a, device), em(b, device)
    eq(ember.isin(x, y), np.isin(a, b))
    eq(ember.isin(x, y, invert=True), np.isin(a, b, invert=True))
    eq(ember.isin(x, ember.zeros(0, dtype=x.dtype, device=device)), np.zeros(a.shape, bool))
    eq(ember.isin(x, 3), np.isin(a, 3))
    eq(ember.union1d(x, y), np.union1d(a, b))
    eq(ember.intersect1d(x, y), np.intersect1d(a, b))
    both, ia, ib = ember.intersect1d(x, y, return_indices=True)
    wb, wia, wib = np.intersect1d(a, b, return_indices=True)
    eq(both, wb)
    eq(ia, wia)
    eq(ib, wib)
    eq(ember.setdiff1d(x, y), np.setdiff1d(a, b))
    u = np.unique(a)
    eq(ember.setdiff1d(em(u, device), y, assume_unique=True), np.setdiff1d(u, b, True))


def test_setxor1d(device):
    a, b = np.array([1, 2, 3, 5, 5]), np.array([2, 4, 5, 7])
    same(ember.setxor1d(em(a, device), em(b, device)), np.setxor1d(a, b))
