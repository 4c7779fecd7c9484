"""Slicing, indexing and shape arithmetic with extreme integers (±2**63-1, ±2**62, -2**63,
beyond 64 bits) against NumPy: no negative lengths, no overflowed strides or offsets, the same
elements or the same exception type; on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import to_ember, to_numpy

BIG = [2**63 - 1, -(2**63) + 1, -(2**63), 2**62, -(2**62), 2**63, 2**100, -(2**100)]
BOUNDS = [None, 0, 1, 5, -1, -5, 10, -10, 11, -11, *BIG]
STEPS = [None, 1, 2, -1, -2, 3, 9, -9, 10, -10, 2**63 - 2, *BIG]


def same(got, want):
    g = to_numpy(got)
    assert g.shape == want.shape
    assert np.array_equal(g, want)


def outcome(f):
    try:
        return f(), None
    except Exception as e:  # the exception type is compared with NumPy's
        return None, e


@pytest.mark.parametrize("step", STEPS)
def test_slice_every_bound(device, step):
    a = np.arange(10.0)
    x = to_ember(a, device)
    for start in BOUNDS:
        for stop in BOUNDS:
            s = slice(start, stop, step)
            got = x[s]
            same(got, a[s])
            assert got.shape[0] >= 0
            if got.size:  # a product reads exactly the selected elements
                assert float(got @ got) == float(a[s] @ a[s])


def test_slice_huge_steps_examples(device):
    x = to_ember(np.arange(10.0), device)
    y = x[: 5 : 2**63 - 2]
    assert y.shape == (1,)
    assert float(y @ y) == 0.0
    same(to_ember(np.arange(10), device)[:: 2**63 - 1], np.array([0]))
    same(x[:: -(2**63)], np.array([9.0]))
    same(x[2**63 - 1 :: -(2**63) + 1], np.array([9.0]))


@pytest.mark.parametrize("step", [2**63 - 1, -(2**63), 2**62, -(2**62), 3, -3])
def test_slice_nested_and_2d(device, step):
    a = np.arange(60.0).reshape(6, 10)
    x = to_ember(a, device)
    for key in [
        (slice(None, None, step), slice(None, None, -step if step != -(2**63) else 1)),
        (slice(-1, None, -1), slice(None, None, step)),
        (slice(2**62, -(2**62), step), 3),
    ]:
        same(x[key], a[key])
        same(x[key][::-1], a[key][::-1])
        same(x[::-1][key], a[::-1][key])
    same(x.T[:: 2**63 - 1, 1 :: 2**62], a.T[:: 2**63 - 1, 1 :: 2**62])


@pytest.mark.parametrize("step", [2**63 - 1, -(2**63), 2**62])
def test_slice_assign_huge_step(device, step):
    a = np.arange(10.0)
    x = to_ember(a, device)
    x[::step] = -1.0
    a[::step] = -1.0
    same(x, a)


@pytest.mark.parametrize("v", BIG)
def test_integer_index_out_of_range(device, v):
    x = to_ember(np.arange(12.0).reshape(3, 4), device)
    for key in (v, (0, v), [v], (slice(None), [v, 0])):
        with pytest.raises(IndexError):
            x[key]
        with pytest.raises(IndexError):
            x[key] = 1.0


@pytest.mark.parametrize("v", BIG[:6])
def test_take_huge_indices(device, v):
    x = to_ember(np.arange(12.0).reshape(3, 4), device)
    with pytest.raises(IndexError):
        ember.take(x, [v])
    with pytest.raises(IndexError):
        ember.take(x, [0, v], axis=1)


@pytest.mark.parametrize("v", [2**63 - 1, 2**62, 3 * 2**61])
def test_shapes_too_big(device, v):
    x = to_ember(np.arange(12.0).reshape(3, 4), device)
    for f in (
        lambda: x.reshape(v, -1),
        lambda: ember.broadcast_to(x, (v, v, 3, 4)),
        lambda: ember.zeros((v, 4), device=device),
        lambda: ember.empty((v, v, 0), device=device),
        lambda: ember.zeros((v, 0), dtype=ember.float64, device=device),
    ):
        with pytest.raises((ValueError, MemoryError)):
            f()


def test_empty_shapes_as_numpy(device):
    # NumPy's bound holds for empty arrays too: the non-zero dimensions times the item size
    # must fit in 63 bits.
    for shape, dtype in [((2**59, 0), "int8"), ((2**59, 0), "float64"), ((2**62, 2, 0), "int8")]:
        want, werr = outcome(lambda s=shape, d=dtype: np.zeros(s, d).shape)
        got, gerr = outcome(lambda s=shape, d=dtype: ember.zeros(s, dtype=d, device=device).shape)
        if werr is None:
            assert got == want
        else:
            assert isinstance(gerr, ValueError)


@pytest.mark.parametrize("v", BIG[:5])
def test_arange_and_eye_extremes(device, v):
    for args in [(0, v, 2**61), (0, 10, v), (v, 10, -(2**62))]:
        want, werr = outcome(lambda a=args: np.arange(*a))
        got, gerr = outcome(lambda a=args: ember.arange(*a, device=device))
        if werr is None and gerr is None:
            same(got, want)
        else:
            assert gerr is not None and isinstance(gerr, (ValueError, OverflowError))
    same(ember.eye(3, k=v, device=device), np.eye(3, k=v))
    same(ember.diagonal(to_ember(np.ones((3, 4)), device), v), np.ones(0))
