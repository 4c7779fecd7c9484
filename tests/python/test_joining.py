"""concat/concatenate, stack, split, unstack against NumPy on both devices: dtypes (promotion),
axes (negative, None), empty and non-contiguous inputs, gradients, and bad input."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import to_numpy


def arr(a, device):
    return ember.asarray(np.asarray(a), device=device)


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_concat_matches_numpy(device, axis):
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(6.0, 12.0).reshape(2, 3)
    got = ember.concat([arr(a, device), arr(b, device)], axis=axis)
    np.testing.assert_array_equal(to_numpy(got), np.concatenate([a, b], axis=axis))
    assert got.device == ember.Device(device)


def test_concat_promotes_and_casts(device):
    a = np.ones((2, 2), np.int32)
    b = np.full((1, 2), 2.5, np.float32)
    got = ember.concatenate([arr(a, device), arr(b, device)])
    want = np.concatenate([a, b])
    assert got.dtype == ember.float64 and want.dtype == np.float64
    np.testing.assert_array_equal(to_numpy(got), want)
    f16 = ember.concat([arr(a, device), arr(b, device)], dtype=ember.float16)
    assert f16.dtype == ember.float16


def test_concat_empty_and_non_contiguous(device):
    a = np.arange(24.0).reshape(4, 6)
    e = np.zeros((0, 3))
    x = arr(a, device)[:, ::2]  # strided view
    got = ember.concat([x, arr(e, device), x.T.T], axis=0)
    np.testing.assert_array_equal(to_numpy(got), np.concatenate([a[:, ::2], e, a[:, ::2]]))


def test_concatenate_out(device):
    a = np.arange(4.0)
    out = ember.zeros(8, device=device)
    r = ember.concatenate([arr(a, device), arr(a, device)], out=out)
    assert r is out
    np.testing.assert_array_equal(to_numpy(out), np.concatenate([a, a]))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack_matches_numpy(device, axis):
    xs = [np.arange(6).reshape(2, 3) + 10 * i for i in range(3)]
    got = ember.stack([arr(x, device) for x in xs], axis=axis)
    np.testing.assert_array_equal(to_numpy(got), np.stack(xs, axis=axis))


@pytest.mark.parametrize("spec", [3, [1, 4], [-2], [0, 0, 6, 9]])
def test_split_matches_numpy(device, spec):
    a = np.arange(12.0).reshape(6, 2)
    got = ember.split(arr(a, device), spec)
    want = np.split(a, spec)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(to_numpy(g), w)


def test_split_along_axis_and_unstack(device):
    a = np.arange(24.0).reshape(2, 3, 4)
    for g, w in zip(ember.split(arr(a, device), 2, axis=-1), np.split(a, 2, axis=-1), strict=True):
        np.testing.assert_array_equal(to_numpy(g), w)
    parts = ember.unstack(arr(a, device), axis=1)
    assert len(parts) == 3
    for i, p in enumerate(parts):
        np.testing.assert_array_equal(to_numpy(p), a[:, i])


def test_gradients_flow_through_joins(device):
    a = ember.asarray(np.arange(6.0).reshape(2, 3), device=device, requires_grad=True)
    b = ember.asarray(np.ones((1, 3)), device=device, requires_grad=True)
    w = ember.asarray(np.arange(9.0).reshape(3, 3), device=device)
    (ember.concat([a, b]) * w).sum().backward()
    np.testing.assert_array_equal(to_numpy(a.grad), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(to_numpy(b.grad), np.arange(6.0, 9.0).reshape(1, 3))
    c = ember.asarray(np.ones(4), device=device, requires_grad=True)
    s = ember.stack([c, c * 2])  # (2, 4)
    (s * ember.asarray(np.array([[1.0], [10.0]]), device=device)).sum().backward()
    np.testing.assert_array_equal(to_numpy(c.grad), np.full(4, 21.0))
    d = ember.asarray(np.arange(6.0), device=device, requires_grad=True)
    p, q = ember.split(d, 2)
    (p * 3 + q.sum()).sum().backward()
    np.testing.assert_array_equal(to_numpy(d.grad), [3, 3, 3, 3, 3, 3])


def test_bad_input_raises(device):
    x = arr(np.ones((2, 3)), device)
    with pytest.raises(ValueError, match="ember.concat.*shape"):
        ember.concat([x, arr(np.ones((2, 4)), device)])
    with pytest.raises(ValueError, match="number of dimensions"):
        ember.concat([x, arr(np.ones(3), device)])
    with pytest.raises(ValueError, match="zero-dimensional"):
        ember.concat([arr(np.float64(1), device)])
    with pytest.raises(ValueError, match="at least one"):
        ember.concat([])
    with pytest.raises(TypeError, match="sequence of arrays"):
        ember.concat(x)
    with pytest.raises(ember.AxisError):
        ember.concat([x, x], axis=2)
    with pytest.raises(ValueError, match="ember.stack.*same shape"):
        ember.stack([x, x.T])
    with pytest.raises(ValueError, match="equal parts"):
        ember.split(x, 4, axis=1)
    with pytest.raises(ValueError, match="positive"):
        ember.split(x, 0)
    with pytest.raises(ValueError, match="out has shape"):
        ember.concatenate([x, x], out=ember.zeros(3, device=device))


def test_arrays_on_two_devices_raise():
    from conftest import cuda_unavailable_reason

    if cuda_unavailable_reason() is not None:
        pytest.skip("needs a GPU")
    with pytest.raises(ValueError, match="different devices"):
        ember.concat([ember.ones(2, device="cpu"), ember.ones(2, device="cuda")])


def test_split_refuses_absurd_section_counts():
    # the parts would be empty views filling memory: a clear error instead of a hang
    with pytest.raises(ValueError, match="ember.split: .* sections"):
        ember.split(ember.zeros(0), 2**40)
    with pytest.raises(ValueError, match="ember.array_split: .* sections"):
        ember.array_split(ember.zeros(3), 2**100)
    assert len(ember.array_split(ember.zeros(3), 5)) == 5  # more parts than elements is fine
