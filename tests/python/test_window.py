"""Window functions (python/ember/_window.py) against NumPy."""

from __future__ import annotations

import ember
import numpy as np
from _helpers import same


def test_windows(device):
    for name in ["bartlett", "hanning", "hamming", "blackman"]:
        for m in [0, 1, 2, 7]:
            same(getattr(ember, name)(m), getattr(np, name)(m), rtol=1e-12)


def test_kaiser():
    for m in [0, 1, 2, 7, 16]:
        for beta in [0.0, 5.0, 14.0]:
            same(ember.kaiser(m, beta), np.kaiser(m, beta), rtol=1e-13)
