"""apply_along_axis, apply_over_axes and piecewise (python/ember/_functional.py) against NumPy
on both devices."""

from __future__ import annotations

import ember
import numpy as np
from _helpers import em, same, to_numpy

RNG = np.random.default_rng(23)


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
