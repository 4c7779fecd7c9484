"""reshape, permute_dims/transpose, broadcast_to, expand_dims, squeeze, T, mT, copy, astype."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import (
    ALL_DTYPES,
    assert_close,
    cast_like_numpy,
    dtype_name,
    em_dtype,
    np_dtype,
    to_ember,
)


def arange_like(shape, dtype="float64"):
    a = np.arange(int(np.prod(shape))).reshape(shape).astype(np.float32).astype(np_dtype(dtype))
    return a


RESHAPES = [
    ((2, 3, 4), (6, 4)),
    ((2, 3, 4), (24,)),
    ((2, 3, 4), (-1,)),
    ((2, 3, 4), (4, -1)),
    ((2, 3, 4), (2, 1, 3, 1, 4)),
    ((1,), ()),
    ((), (1, 1)),
    ((0, 3), (3, 0)),
    ((0, 3), (-1, 3)),
    ((6,), (2, 3)),
]


@pytest.mark.parametrize("src,dst", RESHAPES, ids=[f"{s}->{d}" for s, d in RESHAPES])
def test_reshape(src, dst, device):
    a = arange_like(src)
    x = to_ember(a, device)
    assert_close(ember.reshape(x, dst), a.reshape(dst))
    assert_close(x.reshape(dst), a.reshape(dst))


def test_reshape_of_contiguous_is_a_view(device):
    x = ember.zeros((2, 6), dtype=ember.float32, device=device)
    r = x.reshape((3, 4))
    r[0, 0] = 5.0
    assert float(x[0, 0]) == 5.0


@pytest.mark.parametrize(
    "view",
    [lambda a: a.T, lambda a: a[::2], lambda a: a[:, ::-1]],
    ids=["T", "step", "neg"],
)
def test_reshape_of_non_contiguous(view, device):
    a = arange_like((4, 6))
    x = to_ember(a, device)
    assert_close(ember.reshape(view(x), (-1,)), view(a).reshape(-1))
    assert_close(view(x).reshape((2, -1)), view(a).reshape((2, -1)))


@pytest.mark.parametrize("dst", [(5,), (7, -1), (-1, -1), (25,)], ids=str)
def test_reshape_incompatible_raises_value_error(dst, device):
    x = ember.zeros((2, 3, 4), device=device)
    with pytest.raises(ValueError):
        x.reshape(dst)


PERMS = [
    ((2, 3, 4), (0, 1, 2)),
    ((2, 3, 4), (2, 0, 1)),
    ((2, 3, 4), (1, 2, 0)),
    ((5, 1), (1, 0)),
]


@pytest.mark.parametrize("shape,axes", PERMS, ids=str)
def test_permute_dims(shape, axes, device):
    a = arange_like(shape)
    x = to_ember(a, device)
    y = ember.permute_dims(x, axes)
    assert_close(y, np.transpose(a, axes))
    assert tuple(y.strides) == np.transpose(a, axes).strides
    assert_close(ember.transpose(x, axes), np.transpose(a, axes))


@pytest.mark.parametrize("axes", [(0, 1), (0, 0, 1), (0, 1, 3), (0, 1, -4)], ids=str)
def test_permute_dims_bad_axes(axes, device):
    x = ember.zeros((2, 3, 4), device=device)
    with pytest.raises((ValueError, IndexError)):
        ember.permute_dims(x, axes)


def test_T_and_mT(device):
    a = arange_like((2, 3, 4))
    x = to_ember(a, device)
    assert_close(x.mT, np.swapaxes(a, -1, -2))
    m = to_ember(a[0], device)
    assert_close(m.T, a[0].T)
    assert_close(ember.transpose(m), a[0].T)
    t = m.T
    t[1, 0] = -1.0
    assert float(m[0, 1]) == -1.0, "T must be a view"


BCASTS = [
    ((3,), (2, 3)),
    ((3, 1), (3, 4)),
    ((), (2, 2)),
    ((1, 1), (0, 1)),
    ((2, 1, 3), (4, 2, 5, 3)),
]


@pytest.mark.parametrize("src,dst", BCASTS, ids=str)
def test_broadcast_to(src, dst, device):
    a = arange_like(src)
    x = to_ember(a, device)
    y = ember.broadcast_to(x, dst)
    ref = np.broadcast_to(a, dst)
    assert_close(y, ref)
    if ref.size:
        assert tuple(y.strides) == ref.strides, "broadcast dimensions have stride 0"


@pytest.mark.parametrize("src,dst", [((3,), (4,)), ((2, 3), (3,)), ((3,), (3, 2))], ids=str)
def test_broadcast_to_incompatible_raises_value_error(src, dst, device):
    x = ember.zeros(src, device=device)
    with pytest.raises(ValueError):
        ember.broadcast_to(x, dst)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_expand_dims(axis, device):
    a = arange_like((2, 3))
    x = to_ember(a, device)
    assert_close(ember.expand_dims(x, axis=axis), np.expand_dims(a, axis))


@pytest.mark.parametrize("axis", [3, -4])
def test_expand_dims_bad_axis(axis, device):
    x = ember.zeros((2, 3), device=device)
    with pytest.raises((ValueError, IndexError)):
        ember.expand_dims(x, axis=axis)


@pytest.mark.parametrize("axis", [0, 2, (0, 2), -1, (0, -1)], ids=str)
def test_squeeze(axis, device):
    a = arange_like((1, 3, 1))
    x = to_ember(a, device)
    assert_close(ember.squeeze(x, axis=axis), np.squeeze(a, axis=axis))


def test_squeeze_non_unit_axis_raises_value_error(device):
    x = ember.zeros((1, 3, 1), device=device)
    with pytest.raises(ValueError):
        ember.squeeze(x, axis=1)


def test_expand_squeeze_are_views(device):
    x = ember.zeros((2, 3), dtype=ember.int32, device=device)
    e = ember.expand_dims(x, axis=1)
    e[1, 0, 2] = 9
    assert int(x[1, 2]) == 9
    s = ember.squeeze(e, axis=1)
    s[0, 0] = 4
    assert int(x[0, 0]) == 4


def test_copy_is_independent(device):
    a = arange_like((3, 4))
    x = to_ember(a, device)
    c = x[::-1].copy()
    x[...] = 0
    assert_close(c, a[::-1])
    c[0, 0] = 100.0
    assert float(x[2, 0]) == 0.0


CAST_VALUES = np.array([0, 1, 2, 3, 0, 1, 7, 100])


@pytest.mark.parametrize("dst", ALL_DTYPES)
@pytest.mark.parametrize("src", ALL_DTYPES)
def test_astype(src, dst, device):
    a = CAST_VALUES.astype(np.float32).astype(np_dtype(src))
    x = to_ember(a, device)
    y = x.astype(em_dtype(dst))
    assert dtype_name(y.dtype) == dst
    ref = cast_like_numpy(a.astype(np.float32) if src == "bfloat16" else a, dst)
    assert_close(y, ref, dst, exact=True)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_astype_returns_a_copy(dtype, device):
    x = ember.zeros((3,), dtype=em_dtype(dtype), device=device)
    y = x.astype(em_dtype(dtype))
    y[0] = 1
    assert int(x[0]) == 0
    z = x.astype(em_dtype(dtype), copy=False)
    z[1] = 1
    assert int(x[1]) in (0, 1)


def test_astype_from_views(device):
    a = arange_like((4, 6), "float64")
    x = to_ember(a, device)
    assert_close(x[::-2, 1::3].astype(ember.int16), a[::-2, 1::3].astype(np.int16))
    assert_close(x.T.astype(ember.float32), a.T.astype(np.float32))
