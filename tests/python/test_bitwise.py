"""bitwise_count, packbits and unpackbits (python/ember/_bitwise.py) against NumPy on both
devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import em, same, to_numpy

RNG = np.random.default_rng(23)


def test_bitwise_count(device):
    ints = np.array([0, 1, 255, -1, -128, 77], np.int16)
    same(ember.bitwise_count(em(ints, device)), np.bitwise_count(ints))
    same(
        ember.bitwise_count(em(np.array([2**64 - 1, 5], np.uint64), device)),
        np.bitwise_count(np.array([2**64 - 1, 5], np.uint64)),
    )


@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_unpackbits(device, bitorder):
    a = RNG.integers(0, 2, (3, 13)).astype(bool)
    for axis in [None, 0, 1]:
        got = ember.packbits(em(a, device), axis=axis, bitorder=bitorder)
        want = np.packbits(a, axis=axis, bitorder=bitorder)
        np.testing.assert_array_equal(to_numpy(got), want)
        assert to_numpy(got).dtype == np.uint8
        for count in [None, 5, -3, 30]:
            if axis is None and count == 30:
                continue
            np.testing.assert_array_equal(
                to_numpy(ember.unpackbits(got, axis=axis, count=count, bitorder=bitorder)),
                np.unpackbits(want, axis=axis, count=count, bitorder=bitorder),
            )
    with pytest.raises(TypeError, match="ember.unpackbits: expected a uint8"):
        ember.unpackbits(em([1, 2], device))
