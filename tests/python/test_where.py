"""ember.where: the condition's truthiness picks x1 or x2; its dtype takes no part in the result
dtype (NumPy's rule), and everything broadcasts."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import to_ember, to_numpy


@pytest.mark.parametrize("cond_dtype", ["bool", "int64", "float64", "complex128"])
def test_condition_dtype_does_not_promote(device, cond_dtype):
    c = np.array([0, 1, 2, 0], dtype=cond_dtype)
    a = np.arange(4, dtype=np.float32)
    b = -np.ones((2, 1), dtype=np.float32)
    got = ember.where(to_ember(c, device), to_ember(a, device), to_ember(b, device))
    want = np.where(c, a, b)
    assert got.dtype == ember.float32
    np.testing.assert_array_equal(to_numpy(got), want)


def test_scalars_and_nan_condition(device):
    c = np.array([np.nan, 0.0, -0.0, 1.0])
    x = to_ember(np.arange(4.0), device)
    np.testing.assert_array_equal(
        to_numpy(ember.where(to_ember(c, device), x, 7)), np.where(c, np.arange(4.0), 7)
    )
    np.testing.assert_array_equal(to_numpy(ember.where(True, x, 0)), np.arange(4.0))
    r = ember.where(to_ember(np.array([True, False]), device), 1, 2.5)
    np.testing.assert_array_equal(to_numpy(r), [1.0, 2.5])


def test_keeps_infinities_and_nans(device):
    a = np.array([np.inf, np.nan, -np.inf])
    got = ember.where(to_ember(np.array([True, True, False]), device), to_ember(a, device), 0.0)
    np.testing.assert_array_equal(to_numpy(got), np.array([np.inf, np.nan, 0.0]))
