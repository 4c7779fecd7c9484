"""histogram_bin_edges, histogram2d and histogramdd (python/ember/_histograms.py) against NumPy on
both devices; bincount, histogram and digitize are tested in test_sets.py."""

from __future__ import annotations

import ember
import numpy as np
from _helpers import to_numpy

RNG = np.random.default_rng(13)


def em(a, device):
    return ember.asarray(np.asarray(a), device=device)


def same(got, want, rtol=1e-12, dtype=True):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            same(g, w, rtol, dtype)
        return
    g, w = to_numpy(got), np.asarray(want)
    if dtype:
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
    assert g.shape == w.shape, (g.shape, w.shape)
    if g.dtype.kind in "fc":
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(g, w)


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
