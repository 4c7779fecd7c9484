"""Explicit-stride views (ember/_strided.py): PyTorch's as_strided / x.unfold / x.stride() /
x.storage_offset(), NumPy's lib.stride_tricks and x.flat, against NumPy on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from numpy.lib import stride_tricks as nst

st = ember.lib.stride_tricks


def _n(x):
    return ember.asnumpy(x)


def _pair(device, shape=(3, 4), dtype=np.float32):
    a = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    return ember.asarray(a, device=device), a


def test_stride_and_storage_offset(device):
    x, a = _pair(device)
    assert x.stride() == (4, 1) and x.stride(0) == 4 and x.stride(-1) == 1
    assert x.T.stride() == (1, 4) and x[:, ::2].stride() == (4, 2)
    assert x.storage_offset() == 0 and x[1:, 2:].storage_offset() == 6
    assert ember.asarray(5.0, device=device).stride() == ()
    with pytest.raises(IndexError, match="dim 2 is out of range"):
        x.stride(2)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float16, np.complex64])
def test_as_strided_matches_numpy(device, dtype):
    x, a = _pair(device, (4, 5), dtype)
    item = a.itemsize
    for shape, strides, off in [((2, 2), (1, 2), 1), ((3, 3), (5, 1), 0), ((4,), (6,), 0),
                                ((2, 3), (0, 1), 2), ((0, 3), (1, 1), 0), ((), (), 7)]:  # fmt: skip
        got = ember.as_strided(x, shape, strides, off)
        ref = nst.as_strided(a.reshape(-1)[off:], shape, [s * item for s in strides])
        np.testing.assert_array_equal(_n(got), ref)
        assert got.shape == shape
    # a view: writes reach the input
    v = x.as_strided((2,), (5,), 1)
    v[...] = 99
    assert _n(x)[0, 1] == 99 and _n(x)[1, 1] == 99
    # storage_offset defaults to the input's own
    y = x[1:]
    np.testing.assert_array_equal(_n(y.as_strided((2,), (1,))), _n(x)[1, :2])
    # negative strides within the storage
    np.testing.assert_array_equal(_n(ember.as_strided(x, (3,), (-3,), 10)), [10, 7, 4])


def test_as_strided_checks_the_storage(device):
    x, _ = _pair(device)
    with pytest.raises(ValueError, match=r"ember.as_strided: shape \(13,\).*reaches element 12"):
        ember.as_strided(x, (13,), (1,))
    with pytest.raises(ValueError, match="reaches element -1"):
        ember.as_strided(x, (2,), (-1,), 0)
    with pytest.raises(ValueError, match="same length"):
        ember.as_strided(x, (2, 2), (1,))
    with pytest.raises(ValueError, match="negative dimension"):
        ember.as_strided(x, (-1,), (1,))
    with pytest.raises(ValueError, match="overflows"):
        ember.as_strided(x, (2, 2), (2**62, 2**62))
    with pytest.raises(TypeError, match="size must be a sequence of integers"):
        ember.as_strided(x, (2.5,), (1,))
    with pytest.raises(TypeError, match="input must be an ember array"):
        ember.as_strided(np.ones(3), (2,), (1,))


def test_as_strided_gradient(device):
    a = np.random.default_rng(0).standard_normal(7)
    x = ember.asarray(a, device=device, requires_grad=True)
    w = np.random.default_rng(1).standard_normal((3, 2))
    # overlapping windows: each storage element gets the sum of the weights that read it
    y = ember.as_strided(x, (3, 2), (2, 1), 1)
    (y * ember.asarray(w, device=device)).sum().backward()
    ref = np.zeros(7)
    for i in range(3):
        for j in range(2):
            ref[1 + 2 * i + j] += w[i, j]
    np.testing.assert_allclose(_n(x.grad), ref)
    # through unfold, and from a non-contiguous input
    x2 = ember.asarray(a, device=device, requires_grad=True)
    x2[::2].unfold(0, 2, 1).sum().backward()
    np.testing.assert_allclose(_n(x2.grad), [1, 0, 2, 0, 2, 0, 1])


def test_unfold_matches_torch_semantics(device):
    x, a = _pair(device, (3, 7))
    u = x.unfold(1, 3, 2)
    assert u.shape == (3, 3, 3)
    ref = np.stack([a[:, i : i + 3] for i in range(0, 5, 2)], axis=1)
    np.testing.assert_array_equal(_n(u), ref)
    u0 = x.unfold(0, 2, 1)
    np.testing.assert_array_equal(_n(u0), np.stack([a[i : i + 2].T for i in range(2)]))
    assert x.unfold(1, 7, 1).shape == (3, 1, 7) and x.unfold(1, 0, 1).shape == (3, 8, 0)
    with pytest.raises(ValueError, match="size 8 must be at most"):
        x.unfold(1, 8, 1)
    with pytest.raises(ValueError, match="step must be positive"):
        x.unfold(1, 2, 0)
    with pytest.raises(IndexError, match="dimension 2 is out of range"):
        x.unfold(2, 1, 1)


@pytest.mark.parametrize(
    "shape,window,axis",
    [
        ((6,), 3, None),
        ((4, 5), (2, 3), None),
        ((4, 5), 2, 1),
        ((4, 5), (2, 2), (0, 0)),
        ((3, 4, 5), (2, 2), (-1, 0)),
        ((5,), 5, None),
        ((5,), 0, None),
    ],  # fmt: skip
)
def test_sliding_window_view_matches_numpy(device, shape, window, axis):
    x, a = _pair(device, shape)
    ref = nst.sliding_window_view(a, window, axis=axis)
    got = st.sliding_window_view(x, window, axis=axis)
    assert got.shape == ref.shape
    np.testing.assert_array_equal(_n(got), ref)
    assert not got.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        got[...] = 0
    w = st.sliding_window_view(x, window, axis=axis, writeable=True)
    assert w.flags.writeable


def test_sliding_window_view_errors(device):
    x, a = _pair(device)
    for args, kw in [((5,), {"axis": 0}), ((2,), {}), ((2,), {"axis": (0, 1)}), ((-1, 2), {})]:
        with pytest.raises(ValueError) as e_ref:
            nst.sliding_window_view(a, *args, **kw)
        with pytest.raises(ValueError) as e_got:
            st.sliding_window_view(x, *args, **kw)
        assert str(e_got.value) == str(e_ref.value)
    with pytest.raises(np.exceptions.AxisError):
        st.sliding_window_view(x, 2, axis=2)


def test_numpy_as_strided_in_bytes(device):
    x, a = _pair(device, (4, 5), np.float64)
    ref = nst.as_strided(a, (3, 2), (40, 8))
    np.testing.assert_array_equal(_n(st.as_strided(x, (3, 2), (40, 8))), ref)
    np.testing.assert_array_equal(_n(st.as_strided(x)), a)
    r = st.as_strided(x, (2,), (8,), writeable=False)
    assert not r.flags.writeable
    with pytest.raises(ValueError, match="multiples of the item size 8"):
        st.as_strided(x, (2,), (4,))
    b1, b2 = st.broadcast_arrays(x[:1], x[:, :1])
    assert b1.shape == b2.shape == (4, 5)
    assert st.broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert st.broadcast_to(x[0], (2, 5)).shape == (2, 5)


@pytest.mark.parametrize("layout", ["c", "f", "strided"])
def test_flat_reads_and_writes_like_numpy(device, layout):
    x, a = _pair(device, (4, 6))
    if layout == "f":
        x, a = x.T, a.T.copy()
    elif layout == "strided":
        x, a = x[::2, 1::2], a[::2, 1::2].copy()
    assert len(x.flat) == a.size
    for key in (3, slice(1, None, 2), [0, 5, 2], np.array([True, False] * (a.size // 2))):
        np.testing.assert_array_equal(_n(x.flat[key]), a.flat[key])
    assert list(x.flat) == list(a.flat)
    np.testing.assert_array_equal(np.asarray(x.flat), np.asarray(a.flat))
    assert x.flat.base is x
    for key, value in [(1, 50), (slice(None), [7, 8, 9]), ([0, 2], [-1, -2, -3]), (slice(2, 4), 3)]:
        x.flat[key] = value
        a.flat[key] = value
        np.testing.assert_array_equal(_n(x), a)
    x.flat = 4
    a.flat = 4
    np.testing.assert_array_equal(_n(x), a)
    np.testing.assert_array_equal(_n(x.flat.copy()), a.flat.copy())


def test_flat_errors(device):
    x, _ = _pair(device)
    with pytest.raises(IndexError):
        x.flat[12]
    with pytest.raises(ValueError, match="empty"):
        x.flat[:2] = []
    r = st.sliding_window_view(x, 2, axis=0)
    with pytest.raises(ValueError, match="read-only"):
        r.flat[0] = 1
