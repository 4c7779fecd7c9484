"""apply_along_axis, apply_over_axes and piecewise (python/ember/_functional.py) against NumPy
on both devices."""

from __future__ import annotations

import ember
import numpy as np
from _helpers import to_numpy

RNG = np.random.default_rng(23)


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


def test_apply_along_axis(device):
    m = RNG.standard_normal((3, 4, 5))
    same(
        ember.apply_along_axis(lambda r: ember.sum(r * r), 1, em(m, device)),
        np.apply_along_axis(lambda r: np.sum(r * r), 1, m),
    )
    same(
        ember.apply_along_axis(lambda r: ember.flip(r), 2, em(m, device)),
        np.apply_along_axis(lambda r: r[::-1], 2, m),
    )


def test_apply_over_axes(device):
    a = RNG.standard_normal((2, 3, 4))
    x = em(a, device)
    np.testing.assert_allclose(
        to_numpy(ember.apply_over_axes(ember.sum, x, [0, 2])), np.apply_over_axes(np.sum, a, [0, 2])
    )


def test_piecewise(device):
    x = np.linspace(-2, 2, 9)
    same(
        ember.piecewise(
            em(x, device),
            [em(x < 0, device), em(x > 1, device)],
            [lambda t: -t, 5.0, lambda t: t * 2],
        ),
        np.piecewise(x, [x < 0, x > 1], [lambda t: -t, 5.0, lambda t: t * 2]),
    )
