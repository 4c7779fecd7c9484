"""Counting and binning (python/ember/_histograms.py): bincount, histogram, digitize,
histogram_bin_edges, histogram2d and histogramdd against NumPy on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import em, same, to_numpy

RNG = np.random.default_rng(13)


def test_histogram_bin_edges_histogram2d(device):
    a = RNG.standard_normal(50)
    same(ember.histogram_bin_edges(em(a, device), bins=5), np.histogram_bin_edges(a, bins=5))
    xy = RNG.standard_normal((2, 80))
    h, ex, ey = ember.histogram2d(em(xy[0], device), em(xy[1], device), bins=(4, 3))
    wh, wx, wy = np.histogram2d(xy[0], xy[1], bins=(4, 3))
    same(h, wh)
    same(ex, wx)
    same(ey, wy)


def test_histogramdd(device):
    pts = RNG.standard_normal((100, 3))
    h, edges = ember.histogramdd(em(pts, device), bins=(3, 4, 2))
    wh, wedges = np.histogramdd(pts, bins=(3, 4, 2))
    np.testing.assert_allclose(to_numpy(h), wh)
    for e, we in zip(edges, wedges, strict=True):
        np.testing.assert_allclose(to_numpy(e), we)
    hd, _ = ember.histogramdd(em(pts, device), bins=3, density=True)
    np.testing.assert_allclose(to_numpy(hd), np.histogramdd(pts, bins=3, density=True)[0])


def eq(got, want):
    got, want = to_numpy(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def test_bincount(device):
    a = RNG.integers(0, 9, 50)
    x = em(a, device)
    eq(ember.bincount(x), np.bincount(a))
    eq(ember.bincount(x, minlength=20), np.bincount(a, minlength=20))
    w = RNG.standard_normal(50)
    np.testing.assert_allclose(
        to_numpy(ember.bincount(x, weights=em(w, device))), np.bincount(a, weights=w), rtol=1e-12
    )
    eq(ember.bincount(em(np.zeros(0, np.int64), device), minlength=3), np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="ember.bincount: the values must be non-negative"):
        ember.bincount(em([1, -2], device))
    with pytest.raises(TypeError, match="ember.bincount: expected integers"):
        ember.bincount(em([1.0], device))


@pytest.mark.parametrize("bins", [10, 3, 1, [0.0, 0.5, 2.0, 3.5]])
def test_histogram(device, bins):
    a = RNG.standard_normal(200) * 2
    a[:3] = [0.0, 0.5, 2.0]
    x = em(a, device)
    for kw in [{}, {"range": (-1.0, 2.0)}, {"density": True}]:
        if not isinstance(bins, int) and "range" in kw:
            continue
        b = bins if isinstance(bins, int) else em(bins, device)
        h, e = ember.histogram(x, bins=b, **kw)
        wh, we = np.histogram(a, bins=bins, **kw)
        np.testing.assert_allclose(to_numpy(e), we, rtol=1e-12)
        np.testing.assert_allclose(to_numpy(h), wh, rtol=1e-12)
        assert to_numpy(h).dtype == wh.dtype
    w = RNG.random(200)
    h, _ = ember.histogram(
        x, bins=bins if isinstance(bins, int) else em(bins, device), weights=em(w, device)
    )
    np.testing.assert_allclose(to_numpy(h), np.histogram(a, bins=bins, weights=w)[0], rtol=1e-12)


def test_histogram_errors(device):
    x = ember.ones(4, device=device)
    with pytest.raises(ValueError, match="ember.histogram: bins must be a positive"):
        ember.histogram(x, bins=0)
    with pytest.raises(ValueError, match="ember.histogram: range must be finite"):
        ember.histogram(x, range=(2.0, 1.0))
    with pytest.raises(ValueError, match="increase monotonically"):
        ember.histogram(x, bins=em([0.0, 2.0, 1.0], device))
    h, e = ember.histogram(x)  # one value: the range widens by 0.5 each way
    wh, we = np.histogram(np.ones(4))
    eq(h, wh)
    np.testing.assert_allclose(to_numpy(e), we)


def test_digitize(device):
    a = RNG.standard_normal(30)
    a[:2] = [0.0, 1.0]
    bins = np.array([-1.0, 0.0, 0.5, 1.0])
    for b in [bins, bins[::-1]]:
        for right in [False, True]:
            eq(
                ember.digitize(em(a, device), em(b, device), right=right),
                np.digitize(a, b, right=right),
            )
    with pytest.raises(ValueError, match="monotonically"):
        ember.digitize(em(a, device), em([0.0, 2.0, 1.0], device))
