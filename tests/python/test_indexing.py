"""Indexing routines (python/ember/_indexing.py) against NumPy on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import em, same, to_numpy

RNG = np.random.default_rng(0)


def close(got, want, tol=1e-12):
    got = to_numpy(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


A3 = RNG.standard_normal((3, 4, 5))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_take_along_axis(device, axis):
    idx = np.argsort(A3, axis=axis)
    close(
        ember.take_along_axis(em(A3, device), em(idx, device), axis=axis),
        np.take_along_axis(A3, idx, axis=axis),
    )
    # fewer indices along the axis, broadcasting index dims of 1, negative indices
    part = np.take(idx, [0], axis=axis) - A3.shape[axis]
    close(
        ember.take_along_axis(em(A3, device), em(part, device), axis=axis),
        np.take_along_axis(A3, part, axis=axis),
    )
    sub = np.zeros([1 if d != axis % 3 else 2 for d in range(3)], np.int64)
    close(
        ember.take_along_axis(em(A3, device), em(sub, device), axis=axis),
        np.take_along_axis(A3, sub, axis=axis),
    )


def test_take_along_axis_bad_input(device):
    with pytest.raises(ValueError, match="dimensions"):
        ember.take_along_axis(em(A3, device), em(np.zeros((2, 2), np.int64), device), axis=0)
    with pytest.raises(TypeError, match="integers"):
        ember.take_along_axis(em(A3, device), em(A3, device), axis=0)


def test_indices(device):
    close(ember.indices((2, 3), device=device), np.indices((2, 3)))


def test_index_helpers(device):
    ix = ember.ix_(em([0, 2], device), em([1, 3, 5], device))
    assert [i.shape for i in ix] == [(2, 1), (1, 3)]
    same(ix[0], np.ix_([0, 2], [1, 3, 5])[0])
    flat = np.array([0, 7, 23, 11])
    for order in ["C", "F"]:
        same(
            ember.unravel_index(em(flat, device), (4, 6), order=order),
            np.unravel_index(flat, (4, 6), order=order),
        )
        coords = np.unravel_index(flat, (4, 6))
        same(
            ember.ravel_multi_index(tuple(em(c, device) for c in coords), (4, 6), order=order),
            np.ravel_multi_index(coords, (4, 6), order=order),
        )
    same(
        ember.ravel_multi_index((em([5, -1], device), em([1, 7], device)), (4, 6), mode="wrap"),
        np.ravel_multi_index(([5, -1], [1, 7]), (4, 6), mode="wrap"),
    )
    same(
        ember.ravel_multi_index((em([5, -1], device), em([1, 7], device)), (4, 6), mode="clip"),
        np.ravel_multi_index(([5, -1], [1, 7]), (4, 6), mode="clip"),
    )
    with pytest.raises(ValueError, match="invalid entry"):
        ember.ravel_multi_index((em([5], device), em([1], device)), (4, 6))
    with pytest.raises(ValueError, match="out of bounds"):
        ember.unravel_index(em([24], device), (4, 6))


@pytest.mark.parametrize(
    "shape,wrap",
    [((4, 4), False), ((6, 3), False), ((7, 3), True), ((3, 5), False), ((3, 3, 3), False)],
)
def test_fill_diagonal(device, shape, wrap):
    a = np.zeros(shape)
    x = em(a, device)
    np.fill_diagonal(a, 5.0, wrap=wrap)
    ember.fill_diagonal(x, 5.0, wrap=wrap)
    same(x, a)
    b = np.zeros(shape)
    y = em(b, device)
    np.fill_diagonal(b, [1.0, 2.0], wrap=wrap)
    ember.fill_diagonal(y, em([1.0, 2.0], device), wrap=wrap)
    same(y, b)
    if len(shape) == 2:  # a view that is not C-contiguous would lose the writes: refused
        with pytest.raises(ValueError, match="ember.fill_diagonal: the array must be C-contiguous"):
            ember.fill_diagonal(em(np.zeros((shape[0] * 2, shape[1])), device)[::2], 1.0)


def test_select(device):
    f = RNG.standard_normal((5, 7))
    y = em(f, device)
    c1, c2 = f > 0.5, f < -0.5
    same(
        ember.select([em(c1, device), em(c2, device)], [y, -y], default=7.0),
        np.select([c1, c2], [f, -f], default=7.0),
    )
    with pytest.raises(TypeError, match="ember.select: conditions must be boolean"):
        ember.select([y], [y])


def test_choose_compress_extract_place_put(device):
    idx = np.array([[0, 2, 1], [1, 0, 3]])
    ch = [np.arange(6).reshape(2, 3) * k for k in range(1, 5)]
    same(ember.choose(em(idx, device), [em(c, device) for c in ch]), np.choose(idx, ch))
    for mode in ["wrap", "clip"]:
        i2 = idx + 3
        same(
            ember.choose(em(i2, device), [em(c, device) for c in ch], mode=mode),
            np.choose(i2, ch, mode=mode),
        )
    with pytest.raises(ValueError, match="invalid entry"):
        ember.choose(em(idx + 3, device), [em(c, device) for c in ch])
    a = np.arange(12).reshape(3, 4)
    x = em(a, device)
    same(
        ember.compress(em([True, False, True], device), x, axis=0),
        np.compress([True, False, True], a, axis=0),
    )
    same(
        ember.compress(em([False, True], device), x, axis=1), np.compress([False, True], a, axis=1)
    )
    same(ember.compress(em([1, 0, 1], device), x), np.compress([1, 0, 1], a))
    same(ember.extract(em(a % 3 == 0, device), x), np.extract(a % 3 == 0, a))
    b, y = a.copy(), em(a, device)
    np.place(b, b > 6, [-1, -2])
    ember.place(y, em(a > 6, device), em([-1, -2], device))
    same(y, b)
    b, y = a.copy(), em(a, device)
    np.put(b, [0, -1, 5], [7, 8])
    ember.put(y, em([0, -1, 5], device), em([7, 8], device))
    same(y, b)
    b, y = a.copy(), em(a, device)
    np.put(b, [20, -30], [1, 2], mode="clip")
    ember.put(y, em([20, -30], device), em([1, 2], device), mode="clip")
    same(y, b)
    with pytest.raises(IndexError, match="ember.put: index 20"):
        ember.put(y, em([20], device), em([1], device))
    b, y = a.copy(), em(a, device)
    np.putmask(b, b % 2 == 1, [100, 200, 300])
    ember.putmask(y, em(a % 2 == 1, device), em([100, 200, 300], device))
    same(y, b)
