"""flip, roll, moveaxis, tile, repeat, atleast_*d, the stacking and splitting shorthands,
broadcast_arrays, ravel and pad against NumPy on both devices, with gradients through the
composed ones."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import em, to_numpy

A = np.arange(24.0).reshape(2, 3, 4)


def same(got, want):
    got = to_numpy(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
def test_flip(device, axis):
    same(ember.flip(em(A, device), axis=axis), np.flip(A, axis=axis))


@pytest.mark.parametrize(
    "shift,axis", [(1, None), (-5, None), (2, 1), ((1, -1), (0, 2)), (7, -1), (3, (1, 1))]
)
def test_roll(device, shift, axis):
    same(ember.roll(em(A, device), shift, axis=axis), np.roll(A, shift, axis=axis))


@pytest.mark.parametrize("src,dst", [(0, -1), (-1, 0), ((0, 1), (2, 0)), (1, 1)])
def test_moveaxis(device, src, dst):
    same(ember.moveaxis(em(A, device), src, dst), np.moveaxis(A, src, dst))


@pytest.mark.parametrize("reps", [2, (2, 1), (1, 2, 3), (2, 1, 1, 2), (0, 2)])
def test_tile(device, reps):
    same(ember.tile(em(A[0], device), reps), np.tile(A[0], reps))


@pytest.mark.parametrize("repeats,axis", [(2, None), (3, 1), (0, 0), ([1, 0, 2], 0), ([2], 0)])
def test_repeat(device, repeats, axis):
    same(ember.repeat(em(A[0], device), repeats, axis=axis), np.repeat(A[0], repeats, axis=axis))


def test_atleast(device):
    for f, nf in [
        (ember.atleast_1d, np.atleast_1d),
        (ember.atleast_2d, np.atleast_2d),
        (ember.atleast_3d, np.atleast_3d),
    ]:
        for a in (np.float64(3), np.arange(3.0), np.ones((2, 3)), A):
            same(f(em(a, device)), nf(a))


def test_stacking_shorthands(device):
    a, b = np.arange(3.0), np.arange(3.0, 6.0)
    m = np.ones((2, 3))
    same(ember.hstack([em(a, device), em(b, device)]), np.hstack([a, b]))
    same(ember.hstack([em(m, device), em(m, device)]), np.hstack([m, m]))
    same(ember.vstack([em(a, device), em(b, device)]), np.vstack([a, b]))
    same(ember.dstack([em(a, device), em(b, device)]), np.dstack([a, b]))
    same(ember.column_stack([em(a, device), em(b, device)]), np.column_stack([a, b]))


@pytest.mark.parametrize("spec", [3, 4, 7, [1, 3]])
def test_array_split(device, spec):
    x = np.arange(10.0)
    got = ember.array_split(em(x, device), spec)
    want = np.array_split(x, spec)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        same(g, w)


def test_h_v_d_split(device):
    for f, nf, a, n in [
        (ember.hsplit, np.hsplit, A, 3),
        (ember.vsplit, np.vsplit, A, 2),
        (ember.dsplit, np.dsplit, A, 2),
        (ember.hsplit, np.hsplit, np.arange(4.0), 2),
    ]:
        for g, w in zip(f(em(a, device), n), nf(a, n), strict=True):
            same(g, w)
    with pytest.raises(ValueError, match="at least 2"):
        ember.vsplit(em(np.arange(4.0), device), 2)


def test_broadcast_arrays_and_ravel(device):
    a, b = np.arange(3.0), np.ones((2, 1))
    for g, w in zip(
        ember.broadcast_arrays(em(a, device), em(b, device)), np.broadcast_arrays(a, b), strict=True
    ):
        same(g, w)
    with pytest.raises(ValueError, match="do not broadcast"):
        ember.broadcast_arrays(em(np.ones(3), device), em(np.ones(4), device))
    same(ember.ravel(em(A, device)[:, ::2]), np.ravel(A[:, ::2]))


def test_gradients_through_the_compositions(device):
    x = ember.asarray(np.arange(6.0).reshape(2, 3), device=device, requires_grad=True)
    w = ember.asarray(np.arange(1.0, 7.0).reshape(2, 3), device=device)
    (ember.roll(x, 1, axis=1) * w).sum().backward()
    same(x.grad, np.roll(np.arange(1.0, 7.0).reshape(2, 3), -1, axis=1))
    x.grad = None
    ember.tile(x, (2, 1)).sum().backward()
    same(x.grad, np.full((2, 3), 2.0))
    x.grad = None
    (ember.tril(x) * w).sum().backward()
    same(x.grad, np.tril(np.arange(1.0, 7.0).reshape(2, 3)))
    x.grad = None
    ember.diff(x, axis=1).sum().backward()
    same(x.grad, np.array([[-1.0, 0.0, 1.0]] * 2))


def test_bad_input(device):
    x = em(A, device)
    with pytest.raises(ember.AxisError):
        ember.flip(x, axis=3)
    with pytest.raises(ValueError, match="repeated axis"):
        ember.flip(x, axis=(0, 0))
    with pytest.raises(ValueError, match="tile"):
        ember.tile(x, -1)
    with pytest.raises(ValueError, match="repeat"):
        ember.repeat(x, [1, 2], axis=1)
    with pytest.raises(ValueError, match="at least 2"):
        ember.tril(em(np.arange(3), device))
    with pytest.raises(ValueError, match="indexing"):
        ember.meshgrid(x, indexing="yx")
    with pytest.raises(ValueError, match="order n"):
        ember.diff(x, n=-1)
    with pytest.raises(ValueError, match="same length"):
        ember.moveaxis(x, (0, 1), 0)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
@pytest.mark.parametrize("width", [1, (2, 3), ((0, 1), (4, 2)), ((3, 7), (1, 0))])
def test_pad_matches_numpy(device, mode, width):
    a = np.arange(12.0).reshape(3, 4)
    same(ember.pad(em(a, device), width, mode=mode), np.pad(a, width, mode=mode))


def test_pad_constant_values_dtype_and_errors(device):
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    got = ember.pad(em(a, device), 1, constant_values=7)
    same(got, np.pad(a, 1, constant_values=7))
    assert got.dtype == ember.int32
    same(
        ember.pad(em(np.array([5.0]), device), 3, mode="reflect"),
        np.pad(np.array([5.0]), 3, mode="reflect"),
    )
    with pytest.raises(ValueError, match="mode"):
        ember.pad(em(a, device), 1, mode="median")
    with pytest.raises(ValueError, match=">= 0"):
        ember.pad(em(a, device), -1)
    with pytest.raises(ValueError, match="pad_width"):
        ember.pad(em(a, device), ((1, 2), (3, 4), (5, 6)))
    with pytest.raises(ValueError, match="empty axis"):
        ember.pad(em(np.zeros((0, 2)), device), 1, mode="wrap")
