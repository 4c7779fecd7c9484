"""ember.take against NumPy: dtypes, axes, negative and repeated indices, views, 0-d and empty
cases, bad indices; on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import ALL_DTYPES, np_dtype, to_ember, to_numpy


def sample(shape, dtype):
    a = np.arange(int(np.prod(shape))).reshape(shape) % 7
    if dtype == "bool":
        return a % 2 == 1
    return a.astype(np_dtype(dtype))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_take_all_dtypes(device, dtype):
    a = sample((3, 5), dtype)
    idx = np.array([4, 0, -1, 2, 2])
    got = ember.take(to_ember(a, device), to_ember(idx, device), axis=1)
    assert np.array_equal(to_numpy(got).astype(np.float64), np.take(a, idx, axis=1).astype(float))


@pytest.mark.parametrize(
    "shape,idx,axis",
    [
        ((10,), [3, -2, 0], None),
        ((3, 4), [[0, 11], [5, 5]], None),
        ((3, 4, 5), [2, 0], 0),
        ((3, 4, 5), [[1, 3], [0, -4]], 1),
        ((3, 4, 5), 2, 2),
        ((3, 4, 5), [], 1),
        ((0, 4), [1], 1),
        ((4,), np.array(3), 0),
    ],
)
def test_take_matches_numpy(device, shape, idx, axis):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    got = ember.take(to_ember(a, device), to_ember(np.asarray(idx, dtype=np.int64), device), axis)
    want = np.take(a, np.asarray(idx, dtype=np.int64), axis=axis)
    assert got.shape == want.shape and np.array_equal(to_numpy(got), want)


@pytest.mark.parametrize("view", ["transposed", "strided", "reversed"])
def test_take_from_views(device, view):
    a = np.arange(60, dtype=np.int32).reshape(6, 10)
    pick = {
        "transposed": lambda t: t.T,
        "strided": lambda t: t[::2, 1::3],
        "reversed": lambda t: t[::-1, ::-1],
    }[view]
    v, e = pick(a), pick(to_ember(a, device))
    idx = np.array([0, 2, 1, -1])
    for axis in (0, 1, None):
        got = ember.take(e, to_ember(idx, device), axis=axis)
        assert np.array_equal(to_numpy(got), np.take(v, idx, axis=axis))


def test_take_errors(device):
    x = ember.ones((3, 4), device=device)
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 1 with size 4"):
        ember.take(x, ember.asarray([4], device=device), axis=1)
    with pytest.raises(IndexError, match="-5"):
        ember.take(x, ember.asarray([-5], device=device), axis=1)
    with pytest.raises(IndexError, match="integers"):
        ember.take(x, ember.asarray([0.5], device=device), axis=1)
    with pytest.raises(ember.AxisError):
        ember.take(x, ember.asarray([0], device=device), axis=2)
    with pytest.raises(IndexError, match="empty"):
        ember.take(ember.ones((0,), device=device), ember.asarray([0], device=device))


def test_take_host_indices_are_checked_on_the_host():
    # host (list / NumPy) indices: wrapped, clipped or bounds-checked before the upload, with
    # NumPy's results and errors
    x = ember.arange(10.0)
    n = np.arange(10.0)
    for idx in ([1, -1, 3], np.array([[0, 9], [-10, 4]]), np.array([], dtype=np.int64)):
        np.testing.assert_array_equal(ember.asnumpy(ember.take(x, idx)), np.take(n, idx))
    for mode in ("wrap", "clip"):
        idx = np.array([-12, 3, 25])
        np.testing.assert_array_equal(
            ember.asnumpy(ember.take(x, idx, mode=mode)), np.take(n, idx, mode=mode)
        )
    with pytest.raises(IndexError, match="out of bounds"):
        ember.take(x, [10])
