"""deg2rad, rad2deg, fix, sinc, heaviside, float_power, divmod, frexp, ldexp, ascontiguousarray,
copyto, convolve and correlate against NumPy on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import to_numpy

RNG = np.random.default_rng(3)
FLOATS = ["float16", "float32", "float64"]
INTS = ["int8", "uint8", "int16", "int32", "int64"]


def em(a, device):
    return ember.asarray(np.asarray(a), device=device)


def same(got, want, rtol=1e-6, exact=False):
    got = to_numpy(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(
            got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=rtol
        )


def sample(dtype, shape=(3, 4)):
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return RNG.integers(max(info.min, -100), min(info.max, 100), shape).astype(dtype)
    return (RNG.standard_normal(shape) * 3).astype(dtype)


def tol(dtype):
    return {"float16": 2e-3, "float32": 1e-5}.get(str(np.dtype(dtype)), 1e-12)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("fn", ["deg2rad", "rad2deg", "sinc", "fix"])
def test_unary(device, fn, dtype):
    a = sample(dtype)
    a.flat[0] = 0
    want = getattr(np, fn)(a)
    same(getattr(ember, fn)(em(a, device)), want, rtol=tol(want.dtype) * 4)


def test_unary_shapes_and_aliases(device):
    for shape in [(), (0,), (2, 3)]:
        a = RNG.standard_normal(shape)
        same(ember.radians(em(a, device)), np.radians(a))
        same(ember.degrees(em(a, device)), np.degrees(a))
    strided = RNG.standard_normal((4, 6))
    same(ember.sinc(em(strided, device)[:, ::2]), np.sinc(strided[:, ::2]))
    with pytest.raises(TypeError, match="ember.deg2rad: complex"):
        ember.deg2rad(ember.ones(2, dtype=ember.complex64, device=device))


@pytest.mark.parametrize("dtype", FLOATS + ["int32"])
def test_heaviside(device, dtype):
    a = np.array([-2, -0.0, 0, 3, np.nan], dtype=np.float64)
    a = a.astype(dtype) if np.dtype(dtype).kind == "f" else np.array([-2, 0, 0, 3, 1], dtype)
    for h in [0.5, np.array([0.25, 1, 2, 3, 4], dtype="float32")]:
        want = np.heaviside(a, h)
        got = ember.heaviside(em(a, device), h if np.ndim(h) == 0 else em(h, device))
        same(got, want, exact=True)


def test_float_power_and_divmod(device):
    a, b = sample("float32"), np.abs(sample("float32")) + 0.5
    same(ember.float_power(em(a, device), em(b, device)), np.float_power(a, b), rtol=1e-12)
    ia, ib = sample("int32"), np.array([3, -4, 5, 7], np.int32)
    same(ember.float_power(em(ia, device), 2), np.float_power(ia, 2), rtol=1e-12)
    c = (RNG.standard_normal(3) + 1j).astype(np.complex64)
    same(ember.float_power(em(c, device), 2), np.float_power(c, 2), rtol=1e-12)
    q, r = ember.divmod(em(ia, device), em(ib, device))
    wq, wr = np.divmod(ia, ib)
    same(q, wq, exact=True)
    same(r, wr, exact=True)
    q, r = ember.divmod(em(a, device), 0.75)
    wq, wr = np.divmod(a, np.float32(0.75))
    same(q, wq, exact=True)
    same(r, wr, exact=True)


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
    same(m, wm, exact=True)
    same(e, we, exact=True)
    same(ember.ldexp(m, e), np.ldexp(wm, we), exact=True)
    n = np.array([0, 1, -1, 10, -30, 200, -1100, 3000, 1, 0, 0, 0, 0, 0, 0, 5], np.int32)
    same(ember.ldexp(em(a, device), em(n, device)), np.ldexp(a, n), exact=True)


def test_frexp_ldexp_errors(device):
    with pytest.raises(TypeError, match="ember.ldexp: the exponent must be an integer"):
        ember.ldexp(ember.ones(2, device=device), ember.ones(2, device=device))
    with pytest.raises(TypeError, match="ember.frexp: complex"):
        ember.frexp(ember.ones(2, dtype=ember.complex128, device=device))


def test_ascontiguousarray(device):
    a = RNG.standard_normal((4, 6))
    x = em(a, device)
    assert ember.ascontiguousarray(x) is x
    t = ember.ascontiguousarray(x.T)
    assert t.strides == (32, 8)
    same(t, np.ascontiguousarray(a.T), exact=True)
    assert ember.ascontiguousarray(em(2.5, device)).shape == (1,)
    same(
        ember.ascontiguousarray(x[:, ::2], dtype=ember.float32),
        np.ascontiguousarray(a[:, ::2], dtype=np.float32),
        exact=True,
    )


@pytest.mark.parametrize("shape", [(4, 6), (2, 3, 5), (7,), (0, 3)])
def test_asfortranarray(shape, device):
    a = RNG.standard_normal(shape)
    x = em(a, device)
    f = ember.asfortranarray(x)
    want = np.asfortranarray(a)
    if a.size:  # NumPy's strides of an empty array are its own choice
        assert f.strides == want.strides and ember.isfortran(f) == np.isfortran(want)
    same(f, want, exact=True)
    assert ember.asfortranarray(f) is f  # already column-major: no copy
    rev = ember.permute_dims(x, tuple(reversed(range(x.ndim))))  # column-major view of x
    assert ember.asfortranarray(rev) is rev
    g = ember.asfortranarray(x[..., ::2], dtype=ember.float32)
    if a.size:
        assert g.strides == np.asfortranarray(a[..., ::2], dtype=np.float32).strides
    same(g, np.asfortranarray(a[..., ::2], dtype=np.float32), exact=True)
    assert ember.asfortranarray(em(2.5, device)).shape == (1,)


def test_copyto(device):
    a = RNG.standard_normal((3, 4))
    dst = em(np.zeros((3, 4)), device)
    ember.copyto(dst, em(a[0], device))  # broadcast
    same(dst, np.broadcast_to(a[0], (3, 4)), exact=True)
    mask = a > 0
    want = np.zeros((3, 4))
    np.copyto(want, a, where=mask)
    dst = em(np.zeros((3, 4)), device)
    ember.copyto(dst, em(a, device), where=em(mask, device))
    same(dst, want, exact=True)
    i = em(np.zeros(3, np.int32), device)
    ember.copyto(i, 7)
    same(i, np.full(3, 7, np.int32), exact=True)
    with pytest.raises(TypeError, match="ember.copyto: cannot cast from float64 to int32"):
        ember.copyto(i, em(a[0, :3], device))
    ember.copyto(i, em(a[0, :3], device), casting="unsafe")
    same(i, a[0, :3].astype(np.int32), exact=True)
    with pytest.raises(ValueError, match="ember.copyto: casting"):
        ember.copyto(i, 1, casting="sometimes")


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
    same(ember.convolve(em(a, device), em(v, device), mode=mode), np.convolve(a, v, mode), rtol=r)
    same(ember.correlate(em(a, device), em(v, device), mode=mode), np.correlate(a, v, mode), rtol=r)


def test_convolve_long_inputs_and_errors(device, monkeypatch):
    from ember import _math as _numpy_more

    monkeypatch.setattr(_numpy_more, "_WINDOW_ELEMENTS", 64)  # several chunks of outputs
    a, v = RNG.standard_normal(300), RNG.standard_normal(17)
    same(ember.convolve(em(a, device), em(v, device)), np.convolve(a, v), rtol=1e-12)
    with pytest.raises(ValueError, match="ember.convolve: inputs cannot be empty"):
        ember.convolve(ember.zeros(0, device=device), ember.ones(2, device=device))
    with pytest.raises(ValueError, match="ember.correlate: mode"):
        ember.correlate(ember.ones(3, device=device), ember.ones(2, device=device), "middle")
    with pytest.raises(ValueError, match="ember.convolve: expected 1-D"):
        ember.convolve(ember.ones((2, 2), device=device), ember.ones(2, device=device))
