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
    em,
    em_dtype,
    near,
    np_dtype,
    same,
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


RNG = np.random.default_rng(13)


A = RNG.standard_normal((4, 5))


def test_ndim_shape_size(device):
    x = em(A, device)
    assert ember.ndim(x) == 2 and ember.shape(x) == (4, 5) and ember.size(x) == 20
    assert ember.size(x, 1) == 5 and ember.shape([[1, 2, 3]]) == (1, 3)


def test_flips_and_rot90(device):
    a = RNG.standard_normal((3, 4, 2))
    x = em(a, device)
    same(ember.fliplr(x), np.fliplr(a))
    same(ember.flipud(x), np.flipud(a))
    for k in range(-1, 6):
        same(ember.rot90(x, k), np.rot90(a, k))
        same(ember.rot90(x, k, axes=(2, 0)), np.rot90(a, k, axes=(2, 0)))
    with pytest.raises(ValueError, match="ember.rot90: invalid axes"):
        ember.rot90(x, 1, axes=(1, 1))


def test_rollaxis_row_stack_resize(device):
    z = np.zeros((2, 3, 4, 5))
    for axis, start in [(3, 1), (2, 0), (0, 4), (1, 1), (-1, 0)]:
        assert ember.rollaxis(em(z, device), axis, start).shape == np.rollaxis(z, axis, start).shape
    same(ember.row_stack([em([1, 2], device), em([3, 4], device)]), np.vstack([[1, 2], [3, 4]]))
    for shape in [(2, 5), 7, (0,), (3, 0)]:
        same(ember.resize(em([1, 2, 3], device), shape), np.resize(np.array([1, 2, 3]), shape))


def test_block(device):
    a2, b2 = np.ones((2, 2)), np.zeros((2, 3))
    same(
        ember.block([[em(a2, device), em(b2, device)], [em(np.eye(2, 5), device)]]),
        np.block([[a2, b2], [np.eye(2, 5)]]),
    )
    same(
        ember.block([em([1, 2], device), em([3], device)]),
        np.block([np.array([1, 2]), np.array([3])]),
    )


def test_append_delete_insert(device):
    a = np.arange(12.0).reshape(3, 4)
    x = em(a, device)
    same(ember.append(x, em([1.0, 2], device)), np.append(a, [1.0, 2]))
    same(ember.append(x, x, axis=0), np.append(a, a, axis=0))
    for obj in [1, -1, slice(0, 3, 2), [0, 2], np.array([True, False, True, False])]:
        same(ember.delete(x, obj, axis=1), np.delete(a, obj, axis=1))
    same(ember.delete(x, [0, 5, 11]), np.delete(a, [0, 5, 11]))
    with pytest.raises(IndexError, match="ember.delete: index 9"):
        ember.delete(x, 9, axis=0)
    same(ember.insert(x, 1, 7.0, axis=1), np.insert(a, 1, 7.0, axis=1))
    same(ember.insert(x, 4, em([5.0, 6, 7], device), axis=1), np.insert(a, 4, [5.0, 6, 7], axis=1))
    same(
        ember.insert(x, 0, em([1.0, 2, 3, 4], device), axis=0),
        np.insert(a, 0, [1.0, 2, 3, 4], axis=0),
    )
    same(
        ember.insert(x, [1, 3, 1], em([-1.0, -2, -3], device)),
        np.insert(a, [1, 3, 1], [-1.0, -2, -3]),
    )
    same(ember.insert(x, [0, 2], 9.0, axis=1), np.insert(a, [0, 2], 9.0, axis=1))


def test_trim_zeros(device):
    f = np.array([0, 0, 3, 0, 5, 0])
    for trim in ["fb", "f", "b"]:
        same(ember.trim_zeros(em(f, device), trim), np.trim_zeros(f, trim))
    same(ember.trim_zeros(em(np.zeros(3), device)), np.zeros(0))


def test_copyto(device):
    a = RNG.standard_normal((3, 4))
    dst = em(np.zeros((3, 4)), device)
    ember.copyto(dst, em(a[0], device))  # broadcast
    near(dst, np.broadcast_to(a[0], (3, 4)), exact=True)
    mask = a > 0
    want = np.zeros((3, 4))
    np.copyto(want, a, where=mask)
    dst = em(np.zeros((3, 4)), device)
    ember.copyto(dst, em(a, device), where=em(mask, device))
    near(dst, want, exact=True)
    i = em(np.zeros(3, np.int32), device)
    ember.copyto(i, 7)
    near(i, np.full(3, 7, np.int32), exact=True)
    with pytest.raises(TypeError, match="ember.copyto: cannot cast from float64 to int32"):
        ember.copyto(i, em(a[0, :3], device))
    ember.copyto(i, em(a[0, :3], device), casting="unsafe")
    near(i, a[0, :3].astype(np.int32), exact=True)
    with pytest.raises(ValueError, match="ember.copyto: casting"):
        ember.copyto(i, 1, casting="sometimes")
