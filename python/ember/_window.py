"""Window functions (NumPy's bartlett, hanning, hamming, blackman, kaiser), float64 arrays
on the default device."""

from __future__ import annotations

import math
import operator

from . import _core
from ._array import asarray, asnumpy
from ._math import i0

__all__ = [
    "bartlett",
    "blackman",
    "hamming",
    "hanning",
    "kaiser",
]


def _window(M, f):
    M = operator.index(M)
    if M < 1:
        return _core.zeros(0)
    if M == 1:
        return _core.ones(1)
    n = _core.arange(M).astype(_core.float64)
    return f(n, M)


def bartlett(M):
    return _window(M, lambda n, M: 1.0 - _core.abs(2.0 * n / (M - 1) - 1.0))


def hanning(M):
    return _window(M, lambda n, M: 0.5 - 0.5 * _core.cos(2.0 * math.pi * n / (M - 1)))


def hamming(M):
    return _window(M, lambda n, M: 0.54 - 0.46 * _core.cos(2.0 * math.pi * n / (M - 1)))


def blackman(M):
    return _window(
        M,
        lambda n, M: (
            0.42
            - 0.5 * _core.cos(2.0 * math.pi * n / (M - 1))
            + 0.08 * _core.cos(4.0 * math.pi * n / (M - 1))
        ),
    )


def kaiser(M, beta):
    """The Kaiser window of M points with shape parameter beta (float64)."""
    beta = float(beta)
    return _window(
        M,
        lambda n, M: (
            i0(beta * _core.sqrt(1.0 - ((n - (M - 1) / 2) / ((M - 1) / 2)) ** 2))
            / float(asnumpy(i0(asarray(beta))))
        ),
    )
