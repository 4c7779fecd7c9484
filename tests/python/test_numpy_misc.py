"""The smaller NumPy functions of python/ember/_numpy_misc.py against NumPy on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import to_numpy

RNG = np.random.default_rng(13)


def em(a, device):
    return ember.asarray(np.asarray(a), device=device)


def same(got, want, rtol=1e-12, dtype=True):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            same(g, w, rtol, dtype)
        return
    g, w = to_numpy(got), np.asarray(want)
    if dtype:
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
    assert g.shape == w.shape, (g.shape, w.shape)
    if g.dtype.kind in "fc":
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(g, w)


A = RNG.standard_normal((4, 5))
SPECIAL = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 8.0, -27.0])


def test_aliases_and_queries(device):
    x = em(A, device)
    same(ember.amax(x, axis=0), np.amax(A, axis=0))
    same(ember.amin(x), np.amin(A))
    same(ember.fabs(em([-1, 2], device)), np.fabs(np.array([-1, 2])))
    a = ember.array([[1, 2]], ndmin=3, device=device)
    assert a.shape == (1, 1, 2)
    c = ember.copy(x)
    c[0, 0] = 99
    assert to_numpy(x)[0, 0] != 99
    assert ember.ndim(x) == 2 and ember.shape(x) == (4, 5) and ember.size(x) == 20
    assert ember.size(x, 1) == 5 and ember.shape([[1, 2, 3]]) == (1, 3)
    assert ember.isscalar(3.0) and not ember.isscalar(em(3.0, device))
    assert ember.iscomplexobj(em([1j], device)) and ember.isrealobj(x)
    same(ember.asanyarray([1, 2]), np.asanyarray([1, 2]))


def test_elementwise_compositions(device):
    x = em(SPECIAL, device)
    with np.errstate(all="ignore"):
        same(ember.cbrt(x), np.cbrt(SPECIAL), rtol=1e-15)
        same(ember.exp2(x), np.exp2(SPECIAL))
        same(ember.logaddexp2(x, 1.0), np.logaddexp2(SPECIAL, 1.0))
        for got, want in zip(ember.modf(x), np.modf(SPECIAL), strict=True):
            same(got, want)
            np.testing.assert_array_equal(np.signbit(to_numpy(got)), np.signbit(want))
    y = SPECIAL[::-1].copy()
    same(ember.fmax(x, em(y, device)), np.fmax(SPECIAL, y))
    same(ember.fmin(x, em(y, device)), np.fmin(SPECIAL, y))
    same(ember.fmax(em([1, 5], device), em([3, 2], device)), np.fmax([1, 5], [3, 2]))
    same(ember.isposinf(x), np.isposinf(SPECIAL))
    same(ember.isneginf(x), np.isneginf(SPECIAL))
    z = np.array([1 + 2j, -3.0, 0.5j, 0])
    same(ember.angle(em(z, device)), np.angle(z))
    same(ember.angle(em(z, device), deg=True), np.angle(z, deg=True))
    same(ember.angle(em([-2.0, 3.0], device)), np.angle(np.array([-2.0, 3.0])))
    same(ember.iscomplex(em(z, device)), np.iscomplex(z))
    same(ember.isreal(em(z, device)), np.isreal(z))
    same(
        ember.cbrt(em(np.array([27, -8], np.int16), device)),
        np.cbrt(np.array([27, -8], np.int16)),
        rtol=1e-6,
    )


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


def test_trim_zeros_and_ediff1d(device):
    f = np.array([0, 0, 3, 0, 5, 0])
    for trim in ["fb", "f", "b"]:
        same(ember.trim_zeros(em(f, device), trim), np.trim_zeros(f, trim))
    same(ember.trim_zeros(em(np.zeros(3), device)), np.zeros(0))
    a = RNG.standard_normal((2, 3))
    same(ember.ediff1d(em(a, device)), np.ediff1d(a))
    same(
        ember.ediff1d(em(a, device), to_end=[9.0], to_begin=[-1.0, -2.0]),
        np.ediff1d(a, to_end=[9.0], to_begin=[-1.0, -2.0]),
    )


def test_index_helpers(device):
    a = np.arange(24).reshape(4, 6)
    x = em(a, device)
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
    same(ember.diag_indices(3), np.diag_indices(3))
    same(
        ember.diag_indices_from(em(np.zeros((3, 3, 3)), device)),
        np.diag_indices_from(np.zeros((3, 3, 3))),
    )
    for k in [-1, 0, 2]:
        same(ember.tril_indices(4, k, 5), np.tril_indices(4, k, 5))
        same(ember.triu_indices(4, k), np.triu_indices(4, k))
        same(ember.tril_indices_from(x, k), np.tril_indices_from(a, k))
        same(ember.triu_indices_from(x, k), np.triu_indices_from(a, k))


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


def test_gradient_trapezoid_vander_select(device):
    f = RNG.standard_normal((5, 7))
    y = em(f, device)
    for edge in [1, 2]:
        same(ember.gradient(y, edge_order=edge), np.gradient(f, edge_order=edge))
        same(
            ember.gradient(y, 0.5, axis=1, edge_order=edge),
            np.gradient(f, 0.5, axis=1, edge_order=edge),
        )
        xs = np.cumsum(RNG.random(7) + 0.1)
        same(
            ember.gradient(y, em(xs, device), axis=1, edge_order=edge),
            np.gradient(f, xs, axis=1, edge_order=edge),
        )
    same(ember.gradient(em([1, 4, 9, 16], device)), np.gradient(np.array([1, 4, 9, 16])))
    same(ember.trapezoid(y), np.trapezoid(f))
    same(ember.trapezoid(y, dx=0.25, axis=0), np.trapezoid(f, dx=0.25, axis=0))
    xs = np.sort(RNG.random(7))
    same(ember.trapezoid(y, em(xs, device)), np.trapezoid(f, xs))
    v = np.array([1.0, 2.0, -1.5])
    same(ember.vander(em(v, device)), np.vander(v))
    same(ember.vander(em(v, device), 5, increasing=True), np.vander(v, 5, increasing=True))
    same(ember.vander(em([1, 2, 3], device)), np.vander(np.array([1, 2, 3])))
    c1, c2 = f > 0.5, f < -0.5
    same(
        ember.select([em(c1, device), em(c2, device)], [y, -y], default=7.0),
        np.select([c1, c2], [f, -f], default=7.0),
    )
    with pytest.raises(TypeError, match="ember.select: conditions must be boolean"):
        ember.select([y], [y])


def test_sort_complex_matvec_nan_reductions(device):
    z = np.array([3 + 1j, 1 - 1j, 1 - 2j, -2 + 0j])
    same(ember.sort_complex(em(z, device)), np.sort_complex(z))
    same(ember.sort_complex(em([3, 1, 2], device)), np.sort_complex(np.array([3, 1, 2])))
    m, v = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4))
    same(ember.matvec(em(m, device), em(v, device)), np.einsum("bij,bj->bi", m, v))
    w = RNG.standard_normal((2, 3))
    same(ember.vecmat(em(w, device), em(m, device)), np.einsum("bi,bij->bj", w, m))
    a = RNG.standard_normal((3, 4))
    a[0, 1] = a[2, 3] = np.nan
    x = em(a, device)
    same(ember.nanprod(x, axis=1), np.nanprod(a, axis=1))
    same(ember.nancumsum(x, axis=0), np.nancumsum(a, axis=0))
    same(ember.nancumprod(x), np.nancumprod(a))


def test_memory_queries(device):
    x = ember.zeros((6, 8), device=device)
    other = ember.zeros(3, device=device)
    assert ember.shares_memory(x, x[1:3, 2:4]) and ember.may_share_memory(x, x[1:3])
    assert not ember.may_share_memory(x, other) and not ember.shares_memory(x, other)
    assert not ember.shares_memory(x[:3], x[3:])
    assert not ember.may_share_memory(x[:3], x[3:])
    # interleaved: the byte ranges overlap, the elements do not
    assert ember.may_share_memory(x[:, ::2], x[:, 1::2])
    assert not ember.shares_memory(x[:, ::2], x[:, 1::2])
    assert ember.shares_memory(x[:, 1::2], x[:, ::-2][:, ::-1][:, :1])
    assert not ember.shares_memory(x, x[:0])
    with pytest.raises(ValueError, match="max_work"):
        ember.shares_memory(x, x[1:], max_work=10)


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


def test_cross_windows_edges(device):
    u, v = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    same(ember.cross(em(u, device), em(v, device)), np.cross(u, v))
    # 2-vectors (NumPy 2.x deprecated, newer NumPy refuses them): the z components
    u2, v2 = u[:, :2], v[:, :2]
    same(ember.cross(em(u2, device), em(v2, device)), u2[:, 0] * v2[:, 1] - u2[:, 1] * v2[:, 0])
    u3 = np.concatenate([u2, np.zeros((4, 1))], axis=1)
    same(ember.cross(em(u2, device), em(v, device)), np.cross(u3, v))
    same(ember.cross(em(u.T, device), em(v.T, device), axis=0), np.cross(u.T, v.T, axis=0))
    for name in ["bartlett", "hanning", "hamming", "blackman"]:
        for m in [0, 1, 2, 7]:
            same(getattr(ember, name)(m), getattr(np, name)(m), rtol=1e-12)
    a = RNG.standard_normal(50)
    same(ember.histogram_bin_edges(em(a, device), bins=5), np.histogram_bin_edges(a, bins=5))
    xy = RNG.standard_normal((2, 80))
    h, ex, ey = ember.histogram2d(em(xy[0], device), em(xy[1], device), bins=(4, 3))
    wh, wx, wy = np.histogram2d(xy[0], xy[1], bins=(4, 3))
    same(h, wh)
    same(ex, wx)
    same(ey, wy)


def test_more_helpers(device):
    a, b = np.array([1, 2, 3, 5, 5]), np.array([2, 4, 5, 7])
    same(ember.setxor1d(em(a, device), em(b, device)), np.setxor1d(a, b))
    f = np.array([-2.5, -1.5, 0.5, 1.5, 2.4])
    same(ember.rint(em(f, device)), np.rint(f))
    z = np.zeros((2, 3, 4, 5))
    for axis, start in [(3, 1), (2, 0), (0, 4), (1, 1), (-1, 0)]:
        assert ember.rollaxis(em(z, device), axis, start).shape == np.rollaxis(z, axis, start).shape
    same(ember.row_stack([em([1, 2], device), em([3, 4], device)]), np.vstack([[1, 2], [3, 4]]))
    for shape in [(2, 5), 7, (0,), (3, 0)]:
        same(ember.resize(em([1, 2, 3], device), shape), np.resize(np.array([1, 2, 3]), shape))
    ph = np.cumsum(RNG.uniform(-3, 3, 30)) % (2 * np.pi)
    same(ember.unwrap(em(ph, device)), np.unwrap(ph))
    same(ember.unwrap(em(ph, device), period=5.0), np.unwrap(ph, period=5.0))
    c = np.array([1 + 1e-17j, 2 + 0j])
    same(ember.real_if_close(em(c, device)), np.real_if_close(c))
    same(ember.real_if_close(em([1 + 1j], device)), np.real_if_close([1 + 1j]))
    assert ember.iterable([1]) and not ember.iterable(3)
    assert ember.promote_types(ember.int8, ember.uint8) == ember.int16
    assert ember.issubdtype(ember.float32, np.floating)
    assert not ember.issubdtype(ember.int32, np.floating)
    assert ember.issubdtype(ember.int32, np.integer) and ember.issubdtype(ember.uint8, np.number)
    assert (
        ember.common_type(em([1], device), em([1.0], device).astype(ember.float32)) == ember.float64
    )
    assert ember.min_scalar_type(10) == ember.uint8
    assert ember.isfortran(em(np.zeros((3, 4)), device).T)
    assert not ember.isfortran(em(np.zeros((3, 4)), device))
    assert ember.array_equiv(em([1, 2], device), em([[1, 2], [1, 2]], device))
    assert not ember.array_equiv(em([1, 2], device), em([1, 2, 3], device))
    with pytest.raises(ValueError, match="infs or NaNs"):
        ember.asarray_chkfinite([1.0, np.inf])
    s = np.array([1.0, -1.0, 0.0, 1e300, -2.5], np.float32)
    same(ember.spacing(em(s, device)), np.spacing(s))
    ints = np.array([0, 1, 255, -1, -128, 77], np.int16)
    same(ember.bitwise_count(em(ints, device)), np.bitwise_count(ints))
    same(
        ember.bitwise_count(em(np.array([2**64 - 1, 5], np.uint64), device)),
        np.bitwise_count(np.array([2**64 - 1, 5], np.uint64)),
    )
    same(
        ember.fromfunction(lambda i, j: i * 10 + j, (3, 4)),
        np.fromfunction(lambda i, j: i * 10 + j, (3, 4)),
    )
    x = np.linspace(-2, 2, 9)
    same(
        ember.piecewise(
            em(x, device),
            [em(x < 0, device), em(x > 1, device)],
            [lambda t: -t, 5.0, lambda t: t * 2],
        ),
        np.piecewise(x, [x < 0, x > 1], [lambda t: -t, 5.0, lambda t: t * 2]),
    )
    same(ember.mask_indices(4, ember.triu, 1), np.mask_indices(4, np.triu, 1))
    m = RNG.standard_normal((3, 4, 5))
    same(
        ember.apply_along_axis(lambda r: ember.sum(r * r), 1, em(m, device)),
        np.apply_along_axis(lambda r: np.sum(r * r), 1, m),
    )
    same(
        ember.apply_along_axis(lambda r: ember.flip(r), 2, em(m, device)),
        np.apply_along_axis(lambda r: r[::-1], 2, m),
    )
    a2, b2 = np.ones((2, 2)), np.zeros((2, 3))
    same(
        ember.block([[em(a2, device), em(b2, device)], [em(np.eye(2, 5), device)]]),
        np.block([[a2, b2], [np.eye(2, 5)]]),
    )
    same(
        ember.block([em([1, 2], device), em([3], device)]),
        np.block([np.array([1, 2]), np.array([3])]),
    )


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
def test_i0(dtype, device):
    x = np.concatenate([np.linspace(-40, 40, 801), [0, 1e-9, 24.999, 25.0, 25.001, 300, 700]])
    a = x.astype(dtype) if dtype != "bool" else (x > 0)
    want = np.i0(a)
    got = ember.i0(em(a, device))
    assert to_numpy(got).dtype == want.dtype
    same(got, want, rtol=1e-14 if want.dtype == np.float64 else 2e-6)
    # 0-d, empty, a non-contiguous view
    same(ember.i0(em(np.float64(3.5), device)), np.i0(np.float64(3.5)), rtol=1e-14)
    assert ember.i0(em(np.zeros((0, 3)), device)).shape == (0, 3)
    b = np.linspace(-5, 5, 24).reshape(4, 6)
    same(ember.i0(em(b, device)[:, ::2].T), np.i0(b[:, ::2].T), rtol=1e-14)
    via_numpy = np.i0(em(b, device))  # NumPy's __array_function__ dispatch runs ember.i0
    assert isinstance(via_numpy, ember.ndarray) and via_numpy.device == ember.Device(device)
    with pytest.raises(TypeError, match="ember.i0: complex input"):
        ember.i0(em(np.ones(2, np.complex64), device))


def test_i0_gradient_is_i1(device):
    x = em(np.array([-30.0, -3.0, 0.0, 0.5, 7.0, 24.0, 26.0, 60.0]), device)
    x.requires_grad_()
    ember.i0(x).sum().backward()
    xs = to_numpy(x.detach())
    h = 1e-6 * np.maximum(1.0, np.abs(xs))
    fd = (np.i0(xs + h) - np.i0(xs - h)) / (2 * h)
    np.testing.assert_allclose(to_numpy(x.grad), fd, rtol=1e-6, atol=1e-9)


def test_kaiser():
    for m in [0, 1, 2, 7, 16]:
        for beta in [0.0, 5.0, 14.0]:
            same(ember.kaiser(m, beta), np.kaiser(m, beta), rtol=1e-13)
