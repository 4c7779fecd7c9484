"""pickle, copy.copy and copy.deepcopy of ember arrays: values copied, device, dtype and shape kept
(every dtype, 0-d, empty and non-contiguous views), as NumPy, CuPy and PyTorch do."""

from __future__ import annotations

import copy
import pickle

import ember
import numpy as np
import pytest
from _helpers import ALL_DTYPES, to_ember, to_numpy


def sample(dtype, shape=(3, 4)):
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) - 5
    if dtype == "bool":
        return a > 0
    return a


def check(got, x):
    assert isinstance(got, ember.ndarray)
    assert got.device == x.device
    assert got.dtype == x.dtype
    assert got.shape == x.shape
    np.testing.assert_array_equal(to_numpy(got), to_numpy(x))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_pickle_every_dtype(device, dtype):
    x = to_ember(sample(dtype), device).astype(getattr(ember, dtype))
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        check(pickle.loads(pickle.dumps(x, protocol=protocol)), x)


@pytest.mark.parametrize("shape", [(), (0,), (0, 3), (5,), (2, 3, 4)])
def test_pickle_shapes(device, shape):
    x = to_ember(sample("float32", shape), device).astype(ember.float32)
    check(pickle.loads(pickle.dumps(x)), x)


def test_pickle_views_copy_only_the_view(device):
    base = ember.arange(24, dtype=ember.int32, device=device).reshape(4, 6)
    for view in (base[::2, 1::2], base.T, base[1], ember.broadcast_to(base[0], (3, 6))):
        got = pickle.loads(pickle.dumps(view))
        check(got, view)


def test_copy_and_deepcopy_copy_the_data(device):
    x = ember.arange(6, dtype=ember.float64, device=device).reshape(2, 3)
    for fn in (copy.copy, copy.deepcopy):
        y = fn(x)
        check(y, x)
        y[0, 0] = 100
        assert float(x[0, 0]) == 0.0  # the copy owns its data
    v = x[:, 1]
    for fn in (copy.copy, copy.deepcopy):
        check(fn(v), v)


def test_deepcopy_inside_containers_keeps_sharing(device):
    x = ember.ones(3, device=device)
    a, b = copy.deepcopy([x, x])
    assert a is b
    check(a, x)


def test_requires_grad_travels_with_leaves(device):
    w = ember.ones(3, device=device, requires_grad=True)
    for got in (pickle.loads(pickle.dumps(w)), copy.deepcopy(w)):
        assert got.requires_grad and got.is_leaf
        check(got.detach(), w.detach())
    y = w * 2  # not a leaf: its copy is plain data
    assert not pickle.loads(pickle.dumps(y)).requires_grad


def test_pickled_arrays_in_structures(device):
    obj = {"a": ember.arange(3, device=device), "b": [ember.float32, ember.Device(device)]}
    got = pickle.loads(pickle.dumps(obj))
    check(got["a"], obj["a"])
    assert got["b"] == obj["b"]
