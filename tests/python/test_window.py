"""Window functions (python/ember/_window.py) against NumPy."""

from __future__ import annotations

import ember
import numpy as np
from _helpers import to_numpy


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


def test_windows(device):
    for name in ["bartlett", "hanning", "hamming", "blackman"]:
        for m in [0, 1, 2, 7]:
            same(getattr(ember, name)(m), getattr(np, name)(m), rtol=1e-12)


def test_kaiser():
    for m in [0, 1, 2, 7, 16]:
        for beta in [0.0, 5.0, 14.0]:
            same(ember.kaiser(m, beta), np.kaiser(m, beta), rtol=1e-13)
