"""NumPy's mathematical functions composed from ember ops (python/ember/_math.py) against NumPy
on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import em, near, same, to_numpy

RNG = np.random.default_rng(13)


def close(got, want, tol=1e-12):
    got = to_numpy(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


FLOATS = ["float16", "float32", "float64"]


INTS = ["int8", "uint8", "int16", "int32", "int64"]


def sample(dtype, shape=(3, 4)):
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return RNG.integers(max(info.min, -100), min(info.max, 100), shape).astype(dtype)
    return (RNG.standard_normal(shape) * 3).astype(dtype)


def tol(dtype):
    return {"float16": 2e-3, "float32": 1e-5}.get(str(np.dtype(dtype)), 1e-12)


SPECIAL = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 8.0, -27.0])


A3 = RNG.standard_normal((3, 4, 5))


def test_fabs(device):
    same(ember.fabs(em([-1, 2], device)), np.fabs(np.array([-1, 2])))


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
    z = np.array([1 + 2j, -3.0, 0.5j, 0])
    same(ember.angle(em(z, device)), np.angle(z))
    same(ember.angle(em(z, device), deg=True), np.angle(z, deg=True))
    same(ember.angle(em([-2.0, 3.0], device)), np.angle(np.array([-2.0, 3.0])))
    same(
        ember.cbrt(em(np.array([27, -8], np.int16), device)),
        np.cbrt(np.array([27, -8], np.int16)),
        rtol=1e-6,
    )


def test_rint_unwrap_real_if_close_spacing(device):
    f = np.array([-2.5, -1.5, 0.5, 1.5, 2.4])
    same(ember.rint(em(f, device)), np.rint(f))
    ph = np.cumsum(RNG.uniform(-3, 3, 30)) % (2 * np.pi)
    same(ember.unwrap(em(ph, device)), np.unwrap(ph))
    same(ember.unwrap(em(ph, device), period=5.0), np.unwrap(ph, period=5.0))
    c = np.array([1 + 1e-17j, 2 + 0j])
    same(ember.real_if_close(em(c, device)), np.real_if_close(c))
    same(ember.real_if_close(em([1 + 1j], device)), np.real_if_close([1 + 1j]))
    s = np.array([1.0, -1.0, 0.0, 1e300, -2.5], np.float32)
    same(ember.spacing(em(s, device)), np.spacing(s))


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_around(device, axis):
    for d in (0, 2, -1):
        close(ember.around(em(A3 * 100, device), d), np.around(A3 * 100, d))


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("fn", ["deg2rad", "rad2deg", "sinc", "fix"])
def test_unary(device, fn, dtype):
    a = sample(dtype)
    a.flat[0] = 0
    want = getattr(np, fn)(a)
    near(getattr(ember, fn)(em(a, device)), want, rtol=tol(want.dtype) * 4)


def test_unary_shapes_and_aliases(device):
    for shape in [(), (0,), (2, 3)]:
        a = RNG.standard_normal(shape)
        near(ember.radians(em(a, device)), np.radians(a))
        near(ember.degrees(em(a, device)), np.degrees(a))
    strided = RNG.standard_normal((4, 6))
    near(ember.sinc(em(strided, device)[:, ::2]), np.sinc(strided[:, ::2]))
    with pytest.raises(TypeError, match="ember.deg2rad: complex"):
        ember.deg2rad(ember.ones(2, dtype=ember.complex64, device=device))


@pytest.mark.parametrize("dtype", FLOATS + ["int32"])
def test_heaviside(device, dtype):
    a = np.array([-2, -0.0, 0, 3, np.nan], dtype=np.float64)
    a = a.astype(dtype) if np.dtype(dtype).kind == "f" else np.array([-2, 0, 0, 3, 1], dtype)
    for h in [0.5, np.array([0.25, 1, 2, 3, 4], dtype="float32")]:
        want = np.heaviside(a, h)
        got = ember.heaviside(em(a, device), h if np.ndim(h) == 0 else em(h, device))
        near(got, want, exact=True)


def test_float_power_and_divmod(device):
    a, b = sample("float32"), np.abs(sample("float32")) + 0.5
    near(ember.float_power(em(a, device), em(b, device)), np.float_power(a, b), rtol=1e-12)
    ia, ib = sample("int32"), np.array([3, -4, 5, 7], np.int32)
    near(ember.float_power(em(ia, device), 2), np.float_power(ia, 2), rtol=1e-12)
    c = (RNG.standard_normal(3) + 1j).astype(np.complex64)
    near(ember.float_power(em(c, device), 2), np.float_power(c, 2), rtol=1e-12)
    q, r = ember.divmod(em(ia, device), em(ib, device))
    wq, wr = np.divmod(ia, ib)
    near(q, wq, exact=True)
    near(r, wr, exact=True)
    q, r = ember.divmod(em(a, device), 0.75)
    wq, wr = np.divmod(a, np.float32(0.75))
    near(q, wq, exact=True)
    near(r, wr, exact=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_frexp_ldexp_round_trip(device, dtype):
    info = np.finfo(dtype)
    a = np.array(
        [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            3.0,
            1024.0,
            -7.25,
            float(info.max),
            float(info.tiny),
            float(info.smallest_subnormal),
            np.inf,
            -np.inf,
            np.nan,
            float(np.nextafter(np.asarray(2.0, dtype), 0, dtype=dtype)),
            0.1,
        ],
        dtype,
    )
    m, e = ember.frexp(em(a, device))
    wm, we = np.frexp(a)
    near(m, wm, exact=True)
    near(e, we, exact=True)
    near(ember.ldexp(m, e), np.ldexp(wm, we), exact=True)
    n = np.array([0, 1, -1, 10, -30, 200, -1100, 3000, 1, 0, 0, 0, 0, 0, 0, 5], np.int32)
    near(ember.ldexp(em(a, device), em(n, device)), np.ldexp(a, n), exact=True)


def test_frexp_ldexp_errors(device):
    with pytest.raises(TypeError, match="ember.ldexp: the exponent must be an integer"):
        ember.ldexp(ember.ones(2, device=device), ember.ones(2, device=device))
    with pytest.raises(TypeError, match="ember.frexp: complex"):
        ember.frexp(ember.ones(2, dtype=ember.complex128, device=device))


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


def test_ediff1d(device):
    a = RNG.standard_normal((2, 3))
    same(ember.ediff1d(em(a, device)), np.ediff1d(a))
    same(
        ember.ediff1d(em(a, device), to_end=[9.0], to_begin=[-1.0, -2.0]),
        np.ediff1d(a, to_end=[9.0], to_begin=[-1.0, -2.0]),
    )


def test_gradient_trapezoid(device):
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


def test_cross(device):
    u, v = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    same(ember.cross(em(u, device), em(v, device)), np.cross(u, v))
    # 2-vectors (NumPy 2.x deprecated, newer NumPy refuses them): the z components
    u2, v2 = u[:, :2], v[:, :2]
    same(ember.cross(em(u2, device), em(v2, device)), u2[:, 0] * v2[:, 1] - u2[:, 1] * v2[:, 0])
    u3 = np.concatenate([u2, np.zeros((4, 1))], axis=1)
    same(ember.cross(em(u2, device), em(v, device)), np.cross(u3, v))
    same(ember.cross(em(u.T, device), em(v.T, device), axis=0), np.cross(u.T, v.T, axis=0))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("sizes", [(7, 3), (3, 7), (1, 1), (5, 5), (10, 1), (4, 2)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "complex128"])
def test_convolve_correlate(device, mode, sizes, dtype):
    n, m = sizes
    a, v = sample(dtype if dtype != "complex128" else "float64", (n,)), sample("float64", (m,))
    if dtype == "complex128":
        a = a + 1j * sample("float64", (n,))
        v = v - 2j * sample("float64", (m,))
    v = v.astype(dtype)
    r = 1e-12 if dtype != "float32" else 1e-5
    near(ember.convolve(em(a, device), em(v, device), mode=mode), np.convolve(a, v, mode), rtol=r)
    near(ember.correlate(em(a, device), em(v, device), mode=mode), np.correlate(a, v, mode), rtol=r)


def test_convolve_long_inputs_and_errors(device, monkeypatch):
    from ember import _math as _math

    monkeypatch.setattr(_math, "_WINDOW_ELEMENTS", 64)  # several chunks of outputs
    a, v = RNG.standard_normal(300), RNG.standard_normal(17)
    near(ember.convolve(em(a, device), em(v, device)), np.convolve(a, v), rtol=1e-12)
    with pytest.raises(ValueError, match="ember.convolve: inputs cannot be empty"):
        ember.convolve(ember.zeros(0, device=device), ember.ones(2, device=device))
    with pytest.raises(ValueError, match="ember.correlate: mode"):
        ember.correlate(ember.ones(3, device=device), ember.ones(2, device=device), "middle")
    with pytest.raises(ValueError, match="ember.convolve: expected 1-D"):
        ember.convolve(ember.ones((2, 2), device=device), ember.ones(2, device=device))


def eq(got, want):
    got, want = to_numpy(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def test_interp(device):
    xp = np.array([0.0, 1.0, 2.5, 4.0])
    fp = np.array([1.0, -2.0, 0.5, 3.0])
    x = np.array([-1.0, 0.0, 0.3, 1.0, 2.0, 2.5, 3.9, 4.0, 7.0, np.nan])
    eq(ember.interp(em(x, device), em(xp, device), em(fp, device)), np.interp(x, xp, fp))
    np.testing.assert_allclose(
        to_numpy(ember.interp(em(x, device), em(xp, device), em(fp, device), left=-9, right=9)),
        np.interp(x, xp, fp, left=-9, right=9),
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        to_numpy(ember.interp(em(x[:-1] * 3, device), em(xp, device), em(fp, device), period=4.5)),
        np.interp(x[:-1] * 3, xp, fp, period=4.5),
        rtol=1e-12,
    )
    cf = fp + 1j * fp[::-1]
    np.testing.assert_allclose(
        to_numpy(ember.interp(em(x[:-1], device), em(xp, device), em(cf, device))),
        np.interp(x[:-1], xp, cf),
        rtol=1e-12,
    )
    eq(
        ember.interp(em(x[:-1], device), em([1.0], device), em([5.0], device)),
        np.interp(x[:-1], [1.0], [5.0]),
    )
    with pytest.raises(ValueError, match="ember.interp: xp and fp must be 1-D"):
        ember.interp(em(x, device), em(xp, device), em(fp[:2], device))


def equal(got, want):
    got = to_numpy(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_array_equal(got, want)


A24 = np.arange(24.0).reshape(2, 3, 4)


@pytest.mark.parametrize("n,axis", [(1, -1), (2, 1), (0, 0), (3, -1)])
def test_diff(device, n, axis):
    b = A24**2
    equal(ember.diff(em(b, device), n=n, axis=axis), np.diff(b, n=n, axis=axis))


def test_diff_prepend_append(device):
    x = np.array([1.0, 4.0, 9.0])
    equal(
        ember.diff(em(x, device), prepend=0.0, append=em([20.0], device)),
        np.diff(x, prepend=0.0, append=[20.0]),
    )


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128", "int32"])
def test_nan_to_num(device, dtype):
    if np.dtype(dtype).kind == "c":
        a = np.array([np.nan + 1j * np.inf, -np.inf + 2j, 3 - 1j * np.nan], dtype)
    elif np.dtype(dtype).kind == "f":
        a = np.array([np.nan, np.inf, -np.inf, 1.5], dtype)
    else:
        a = np.array([1, 2, 3], dtype)
    equal(ember.nan_to_num(em(a, device)), np.nan_to_num(a))
    if np.dtype(dtype).kind == "f":
        equal(
            ember.nan_to_num(em(a, device), nan=-1.0, posinf=9.0, neginf=-9.0),
            np.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0),
        )
        x = em(a, device)
        assert ember.nan_to_num(x, copy=False) is x
        equal(x, np.nan_to_num(a))
