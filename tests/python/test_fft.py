"""ember.fft against numpy.fft: every function over dtypes, 1-D and batched shapes, non-contiguous
views, sizes (1, 2, odd, prime, powers of 2), n / s cropping and padding, axes, norms, round
trips, the helpers (fftfreq, fftshift, ...) and errors; on both devices. The CUDA composition
(axis moves, dtype rules, n-d steps, scaling), the one path of both devices, is also run over an
emulated last-axis transform, so it is checked apart from the backends' transforms."""

from __future__ import annotations

import math
import warnings

import ember
import ember.fft as efft
import numpy as np
import pytest
from _helpers import (
    BF16,
    assert_close,
    builtin_exception,
    dtype_name,
    finite_scale,
    to_ember,
    to_numpy,
)

REAL = ["float32", "float64", "int64", "bool", "float16", "bfloat16"]
COMPLEX = ["complex64", "complex128"]
MAIN = ["float32", "float64", "complex64", "complex128", "int64"]
NORMS = [None, "backward", "ortho", "forward"]
SIZES = [1, 2, 3, 5, 8, 17, 97, 128]


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "bfloat16":
        return rng.uniform(-2, 2, shape).astype(BF16)
    t = np.dtype(dtype)
    if t.kind in "iu":
        return rng.integers(-5, 6, shape).astype(t)
    a = rng.uniform(-1, 1, shape)
    if t.kind == "c":
        a = a + 1j * rng.uniform(-1, 1, shape)
    return a.astype(t)


def oracle(fn, a, *args, **kw):
    """NumPy's result, and the dtype ember must give. NumPy has no bfloat16 FFT: its values go
    in as float32, and the real output of a 1-step c2r of a real bfloat16 input is bfloat16 (as
    float16 stays float16)."""
    if a.dtype == BF16:
        probe = fn(a.astype(np.float16), *args, **kw)
        want = fn(a.astype(np.float32), *args, **kw)
        name = "bfloat16" if probe.dtype == np.float16 else want.dtype.name
        return want, name
    want = fn(a, *args, **kw)
    return want, want.dtype.name


def tol(name, n):
    name = dtype_name(name)
    if name == "float16":
        return 4e-3
    if name == "bfloat16":
        return 3e-2
    base = 1e-6 if name in ("float32", "complex64") else 2e-15
    return base * 8 * (1 + math.log2(max(n, 2)))


def check(got, want, name, n=2):
    """Closeness relative to the result's largest magnitude (FFT errors are norm-wise)."""
    want = np.asarray(want)
    t = tol(name, n)
    scale = finite_scale(want) or 1.0
    assert_close(got, want, name, rtol=t, atol=t * scale)


def em(a, device):
    return to_ember(a, device)


# ---------------------------------------------------------------------------------------------
# 1-D transforms
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("m", SIZES)
@pytest.mark.parametrize("dtype", MAIN + ["bool", "float16", "bfloat16"])
@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_c2c_1d(device, name, dtype, m, norm):
    a = sample((m,), dtype, seed=m)
    want, wd = oracle(getattr(np.fft, name), a, norm=norm)
    got = getattr(efft, name)(em(a, device), norm=norm)
    check(got, want, wd, m)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("m", SIZES)
@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("name", ["rfft", "ihfft"])
def test_r2c_1d(device, name, dtype, m, norm):
    a = sample((m,), dtype, seed=m + 1)
    want, wd = oracle(getattr(np.fft, name), a, norm=norm)
    got = getattr(efft, name)(em(a, device), norm=norm)
    check(got, want, wd, m)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("m", [2, 3, 5, 9, 17, 65, 97])
@pytest.mark.parametrize("dtype", COMPLEX + REAL)
@pytest.mark.parametrize("name", ["irfft", "hfft"])
def test_c2r_1d(device, name, dtype, m, norm):
    # random spectra: the imaginary parts of the zero (and Nyquist) terms must be ignored
    a = sample((m,), dtype, seed=m + 2)
    want, wd = oracle(getattr(np.fft, name), a, norm=norm)
    got = getattr(efft, name)(em(a, device), norm=norm)
    check(got, want, wd, 2 * m)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 12, 13, 16, 31, 40])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
def test_n_crops_and_pads(device, name, n):
    real_in = name in ("rfft", "ihfft")
    a = sample((3, 12), "float64" if real_in else "complex128", seed=n)
    for norm in ("backward", "ortho", "forward"):
        want = getattr(np.fft, name)(a, n=n, norm=norm)
        check(getattr(efft, name)(em(a, device), n=n, norm=norm), want, want.dtype, n)
        want = getattr(np.fft, name)(a, n, 0, norm)  # NumPy's positional order
        check(getattr(efft, name)(em(a, device), n, 0, norm), want, want.dtype, n)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 11])
@pytest.mark.parametrize("dtype", ["complex64", "float32"])
def test_single_precision_crop_pad(device, dtype, n):
    a = sample((4, 6), dtype, seed=n)
    for name in ("fft", "ifft", "irfft", "hfft") + (
        ("rfft", "ihfft") if dtype == "float32" else ()
    ):
        want = getattr(np.fft, name)(a, n=n)
        check(getattr(efft, name)(em(a, device), n=n), want, want.dtype, n)


def permute_view(a):
    if isinstance(a, np.ndarray):
        return a.transpose(1, 2, 0)
    return ember.permute_dims(a, (1, 2, 0))


# views applied identically to the NumPy and the ember array: (base shape, view)
VIEWS = {
    "contiguous": ((4, 16), lambda a: a),
    "strided": ((4, 32), lambda a: a[:, ::2]),
    "transposed": ((16, 4), lambda a: a.T),
    "reversed": ((5, 17), lambda a: a[::-1, ::-1]),
    "offset": ((6, 20), lambda a: a[1:5, 3:19]),
    # contiguous, but real data not aligned as if it were complex (cuFFT's r2c needs that)
    "odd_offset": ((65,), lambda a: a[1:].reshape((4, 16))),
    "3d": ((2, 3, 10), lambda a: a),
    "3d_permuted": ((10, 2, 3), permute_view),
}


def _pairs(names, dtypes):
    """(name, dtype) pairs, leaving out complex inputs of the real-input transforms."""
    real_only = ("rfft", "ihfft")
    return [(n, d) for n in names for d in dtypes if not (n.startswith(real_only) and d in COMPLEX)]


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize(
    ("name", "dtype"), _pairs(["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"], MAIN)
)
def test_batched_views_and_axes(device, name, dtype, view):
    base_shape, f = VIEWS[view]
    base = sample(base_shape, dtype, seed=len(view))
    a = f(base)
    x = f(em(base, device))
    assert tuple(x.shape) == a.shape
    for axis in range(-a.ndim, a.ndim):
        want, wd = oracle(getattr(np.fft, name), a, axis=axis)
        check(getattr(efft, name)(x, axis=axis), want, wd, a.shape[axis] * 2)
    # the input is left as it was (c2r works on a scratch copy)
    assert np.array_equal(to_numpy(x), a)


@pytest.mark.parametrize("m", [256, 1155, 4096, 4099])
def test_larger_sizes(device, m):
    a = sample((3, m), "complex64", seed=m)
    check(efft.fft(em(a, device)), np.fft.fft(a), "complex64", m)
    check(efft.ifft(em(a, device)), np.fft.ifft(a), "complex64", m)
    r = sample((3, m), "float32", seed=m)
    check(efft.rfft(em(r, device)), np.fft.rfft(r), "complex64", m)
    check(efft.irfft(em(a, device), n=m), np.fft.irfft(a, n=m), "float32", m)
    d = sample((2, m), "complex128", seed=m)
    check(efft.fft(em(d, device)), np.fft.fft(d), "complex128", m)


def test_empty_batch(device):
    a = np.zeros((0, 8), np.complex64)
    for name, dt, last in (
        ("fft", "complex64", 8),
        ("rfft", "complex64", 5),
        ("irfft", "float32", 14),
    ):
        src = a.real.copy() if name == "rfft" else a
        got = getattr(efft, name)(em(src, device))
        assert got.shape == (0, last) and got.dtype.name == dt
    got = efft.fft(em(np.zeros((3, 0), np.complex64), device), n=4)
    assert_close(got, np.fft.fft(np.zeros((3, 0), np.complex64), n=4))


def test_list_and_numpy_input(device):
    with ember.device(device):
        got = efft.fft([1.0, 2.0, 3.0, 4.0])
        assert str(got.device).startswith(device)
        check(got, np.fft.fft([1.0, 2.0, 3.0, 4.0]), "complex128")
        check(efft.rfft(np.arange(6.0)), np.fft.rfft(np.arange(6.0)), "complex128")


# ---------------------------------------------------------------------------------------------
# n-d transforms
# ---------------------------------------------------------------------------------------------

ND_CASES = [
    # (shape, s, axes)
    ((4, 6), None, None),
    ((4, 6), None, (0,)),
    ((4, 6), None, (1, 0)),
    ((4, 6), (3, 8), (0, 1)),
    ((4, 6), (5, -1), (0, 1)),
    ((4, 6), (7,), (-1,)),
    ((3, 4, 5), None, None),
    ((3, 4, 5), None, (0, 2)),
    ((3, 4, 5), None, (2, 0)),
    ((3, 4, 5), (2, 6), (-1, 0)),
    ((3, 4, 5), (4, 4, 4), (0, 1, 2)),
    ((3, 4, 5), None, (1, 1)),
    ((3, 4, 5), (3, 8), (1, 1)),
    ((2, 17, 3), None, (1,)),
    ((1, 1), None, None),
]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("case", range(len(ND_CASES)))
@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_nd(device, name, case, norm):
    shape, s, axes = ND_CASES[case]
    dtype = "float64" if name == "rfftn" else "complex128"
    a = sample(shape, dtype, seed=case)
    try:
        want = getattr(np.fft, name)(a, s=s, axes=axes, norm=norm)
    except ValueError as e:  # irfftn of a length-1 last axis: n = 0
        with pytest.raises(builtin_exception(e), match=f"ember.fft.{name}"):
            getattr(efft, name)(em(a, device), s=s, axes=axes, norm=norm)
        return
    got = getattr(efft, name)(em(a, device), s=s, axes=axes, norm=norm)
    check(got, want, want.dtype, max(a.size, want.size))


@pytest.mark.parametrize(
    ("name", "dtype"),
    _pairs(
        ["fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2"],
        MAIN + ["float16", "bool"],
    ),
)
def test_nd_dtypes(device, name, dtype):
    a = sample((3, 4, 6), dtype, seed=3)
    want, wd = oracle(getattr(np.fft, name), a)
    check(getattr(efft, name)(em(a, device)), want, wd, a.size)


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2"])
def test_2d_variants(device, name):
    dtype = "float32" if name == "rfft2" else "complex64"
    a = sample((2, 5, 8), dtype, seed=9)
    x = em(a, device)
    for kw in ({}, {"s": (4, 10)}, {"axes": (0, 2)}, {"s": (3, 3), "axes": (2, 1)}):
        for norm in NORMS:
            want = getattr(np.fft, name)(a, norm=norm, **kw)
            check(getattr(efft, name)(x, norm=norm, **kw), want, want.dtype, a.size)
    xt = ember.permute_dims(x, (2, 1, 0))
    want = getattr(np.fft, name)(a.transpose(2, 1, 0))
    check(getattr(efft, name)(xt), want, want.dtype, a.size)


def test_nd_s_without_axes_is_deprecated(device):
    a = sample((3, 4, 5), "complex128")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        want = np.fft.fftn(a, s=(3, 6))
        want_r = np.fft.irfftn(a, s=(None, 6))
    with pytest.warns(DeprecationWarning):
        got = efft.fftn(em(a, device), s=(3, 6))
    check(got, want, "complex128", a.size)
    with pytest.warns(DeprecationWarning):
        got = efft.irfftn(em(a, device), s=(None, 6), axes=(0, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        want_r = np.fft.irfftn(a, s=(None, 6), axes=(0, 2))
    check(got, want_r, "float64", a.size)


def test_nd_no_axes(device):
    x = em(sample((3, 4), "float32"), device)
    assert efft.fftn(x, axes=()) is x
    with pytest.raises(IndexError, match="ember.fft.rfftn"):
        efft.rfftn(x, axes=())


# ---------------------------------------------------------------------------------------------
# round trips
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("m", [1, 2, 7, 16, 97])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_round_trips(device, dtype, m, norm):
    a = sample((3, m), dtype, seed=m)
    x = em(a, device)
    check(efft.ifft(efft.fft(x, norm=norm), norm=norm), a, dtype, m)
    check(efft.fft(efft.ifft(x, norm=norm), norm=norm), a, dtype, m)
    r = a.real.copy()
    xr = em(r, device)
    rd = r.dtype.name
    check(efft.irfft(efft.rfft(xr, norm=norm), n=m, norm=norm), r, rd, m)
    check(efft.hfft(efft.ihfft(xr, norm=norm), n=m, norm=norm), r, rd, m)
    if m > 1:
        b = sample((3, 4, m), dtype, seed=m)
        check(efft.ifftn(efft.fftn(em(b, device), norm=norm), norm=norm), b, dtype, b.size)
        br = b.real.copy()
        got = efft.irfftn(
            efft.rfftn(em(br, device), norm=norm), s=br.shape, axes=(0, 1, 2), norm=norm
        )
        check(got, br, rd, b.size)


# ---------------------------------------------------------------------------------------------
# fftfreq, rfftfreq, fftshift, ifftshift
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 5, 8, 17])
@pytest.mark.parametrize("d", [1.0, 0.1, 3])
def test_freqs(device, n, d):
    for name in ("fftfreq", "rfftfreq"):
        got = getattr(efft, name)(n, d, device=device)
        assert str(got.device).startswith(device)
        assert_close(got, getattr(np.fft, name)(n, d), "float64", rtol=1e-15, atol=0)
        got = getattr(efft, name)(n, d=d, device=device, dtype=ember.float32)
        assert_close(got, getattr(np.fft, name)(n, d).astype(np.float32), "float32")
    assert_close(efft.fftfreq(np.int32(n), device=device), np.fft.fftfreq(n), "float64")


def test_freq_errors():
    for name in ("fftfreq", "rfftfreq"):
        f = getattr(efft, name)
        with pytest.raises(ValueError, match=f"ember.fft.{name}"):
            f(4.0)
        with pytest.raises(ValueError, match=f"ember.fft.{name}.*0"):
            f(0)
        with pytest.raises(ValueError):
            f(-3)
        with pytest.raises(TypeError):
            f(4, dtype=ember.int32)


SHIFT_CASES = [
    ((7,), None),
    ((8,), None),
    ((1,), None),
    ((0,), None),
    ((4, 5), None),
    ((4, 5), 0),
    ((4, 5), -1),
    ((4, 5), (1,)),
    ((4, 5), (0, 0)),
    ((3, 4, 5), (0, 2)),
    ((3, 4, 5), None),
    ((2, 3, 2, 3, 3), None),
]


@pytest.mark.parametrize("case", range(len(SHIFT_CASES)))
@pytest.mark.parametrize("dtype", ["int64", "complex64", "float32"])
def test_shifts(device, dtype, case):
    shape, axes = SHIFT_CASES[case]
    a = sample(shape, dtype, seed=case)
    x = em(a, device)
    for name in ("fftshift", "ifftshift"):
        got = getattr(efft, name)(x, axes=axes)
        assert_close(got, getattr(np.fft, name)(a, axes=axes), dtype, exact=True)
    back = efft.ifftshift(efft.fftshift(x, axes=axes), axes=axes)
    assert_close(back, a, dtype, exact=True)


def test_shift_views(device):
    base = sample((6, 9), "float64")
    x = em(base, device)
    for a, v in ((base[:, ::2], x[:, ::2]), (base.T, x.T), (base[::-1], x[::-1])):
        assert_close(efft.fftshift(v), np.fft.fftshift(a), exact=True)
        assert_close(efft.ifftshift(v, axes=0), np.fft.ifftshift(a, axes=0), exact=True)


def test_shift_of_spectrum(device):
    a = sample((16,), "complex128")
    got = efft.fftshift(efft.fft(em(a, device)))
    check(got, np.fft.fftshift(np.fft.fft(a)), "complex128", 16)
    f = efft.fftshift(efft.fftfreq(9, device=device))
    assert_close(f, np.fft.fftshift(np.fft.fftfreq(9)), exact=True)


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2"]


@pytest.mark.parametrize("name", ONE_D)
def test_errors_1d(device, name):
    f = getattr(efft, name)
    x = em(sample((4, 6), "float64"), device)
    for n in (0, -1):
        with pytest.raises(ValueError, match=rf"ember.fft.{name}: .*\({n}\)"):
            f(x, n=n)
    with pytest.raises(TypeError, match=f"ember.fft.{name}"):
        f(x, n=2.5)
    for axis in (2, -3):
        with pytest.raises(ember.AxisError, match=f"ember.fft.{name}: axis {axis}"):
            f(x, axis=axis)
        with pytest.raises(IndexError):  # NumPy raises IndexError here
            f(x, axis=axis)
    with pytest.raises(ValueError, match=f"ember.fft.{name}: invalid norm value 'bad'"):
        f(x, norm="bad")
    with pytest.raises(ValueError, match="norm"):
        f(x, norm=1)
    with pytest.raises(IndexError):
        f(em(np.array(3.0), device))
    # an empty axis has no default length
    with pytest.raises(ValueError, match=f"ember.fft.{name}"):
        f(em(np.zeros((3, 0)), device))


@pytest.mark.parametrize("name", ["irfft", "hfft"])
def test_c2r_length_one_axis(device, name):
    # the default n = 2*(1-1) = 0 is invalid; an explicit n works
    x = em(sample((3, 1), "complex128"), device)
    with pytest.raises(ValueError, match=r"\(0\)"):
        getattr(efft, name)(x)
    a = to_numpy(x)
    check(getattr(efft, name)(x, n=1), getattr(np.fft, name)(a, n=1), "float64")
    check(getattr(efft, name)(x, n=5), getattr(np.fft, name)(a, n=5), "float64")


@pytest.mark.parametrize("name", ["rfft", "ihfft", "rfftn", "rfft2"])
def test_real_input_required(device, name):
    x = em(sample((4, 4), "complex64"), device)
    with pytest.raises(TypeError, match=f"ember.fft.{name}: x must be real-valued, got complex64"):
        getattr(efft, name)(x)


@pytest.mark.parametrize("name", N_D)
def test_errors_nd(device, name):
    f = getattr(efft, name)
    x = em(sample((4, 6), "float64"), device)
    with pytest.raises(ValueError, match=f"ember.fft.{name}: s and axes have different lengths"):
        f(x, s=(3, 4, 5), axes=(0, 1))
    with pytest.raises(ember.AxisError, match=f"ember.fft.{name}: axis 5"):
        f(x, axes=(0, 5))
    with pytest.raises(ValueError, match=rf"ember.fft.{name}: .*\(0\)"):
        f(x, s=(0, 4), axes=(0, 1))
    with pytest.raises(ValueError, match=f"ember.fft.{name}: invalid norm"):
        f(x, norm="backwards")
    with pytest.raises(ember.AxisError):
        f(em(np.ones(4), device), axes=(-2, -1))


def test_core_binding_errors(device):
    x = em(sample((4, 8), "complex64"), device)
    with pytest.raises(ValueError, match="kind"):
        ember._core._fft_last_axis(x, "z2z", 8, False)
    with pytest.raises(TypeError, match="float32 or float64"):
        ember._core._fft_last_axis(x, "r2c", 8, False)
    with pytest.raises(TypeError, match="complex64 or complex128"):
        ember._core._fft_last_axis(ember.real(x), "c2c", 8, False)
    with pytest.raises(ValueError, match="inverse"):
        ember._core._fft_last_axis(x, "c2r", 8, False)
    with pytest.raises(ValueError, match=r"\(0\)"):
        ember._core._fft_last_axis(x, "c2c", 0, False)


# ---------------------------------------------------------------------------------------------
# the composition, over an emulated last-axis transform
# ---------------------------------------------------------------------------------------------


def _emulated_last_axis(x, kind, n, inverse, scale=1.0):
    """What _core._fft_last_axis computes (see include/ember/fft.hpp), with NumPy."""
    t = x.dtype.name
    if kind == "r2c":
        assert t in ("float32", "float64") and not inverse
    else:
        assert t in ("complex64", "complex128")
        assert inverse or kind == "c2c"
    a = np.asarray(x)
    if kind == "c2c":
        r = np.fft.ifft(a, n, -1, "forward") if inverse else np.fft.fft(a, n, -1)
    elif kind == "r2c":
        r = np.fft.rfft(a, n, -1)
    else:
        r = np.fft.irfft(a, n, -1, "forward")
    want = {"c2c": t, "r2c": "complex64" if t == "float32" else "complex128"}
    want["c2r"] = "float32" if t == "complex64" else "float64"
    assert r.dtype.name == want[kind]
    r = np.ascontiguousarray(r)
    parts = r.view(np.float32 if r.dtype in (np.float32, np.complex64) else np.float64)
    parts *= scale  # in the result's precision
    return ember.asarray(r, device="cpu")


@pytest.fixture
def emulated(monkeypatch):
    monkeypatch.setattr(ember._core, "_fft_last_axis", _emulated_last_axis)


EMU_CASES = [
    ("fft", {}),
    ("fft", {"n": 5, "axis": 0}),
    ("ifft", {"n": 11, "norm": "ortho"}),
    ("ifft", {"axis": 0, "norm": "forward"}),
    ("rfft", {"n": 7}),
    ("rfft", {"axis": 0, "norm": "ortho"}),
    ("irfft", {}),
    ("irfft", {"n": 9, "axis": 0, "norm": "forward"}),
    ("hfft", {"n": 7}),
    ("hfft", {"axis": 0, "norm": "ortho"}),
    ("ihfft", {"n": 8, "norm": "forward"}),
    ("ihfft", {"axis": 0}),
    ("fftn", {}),
    ("fftn", {"s": (3, 8), "axes": (1, 0), "norm": "ortho"}),
    ("ifftn", {"axes": (0, 0)}),
    ("ifftn", {"s": (2, 3), "axes": (0, 1), "norm": "forward"}),
    ("rfftn", {"norm": "ortho"}),
    ("rfftn", {"s": (4, 4), "axes": (1, 0)}),
    ("irfftn", {}),
    ("irfftn", {"s": (5, 7), "axes": (0, 1), "norm": "forward"}),
    ("fft2", {"norm": "ortho"}),
    ("ifft2", {"s": (6, 2)}),
    ("rfft2", {}),
    ("irfft2", {"norm": "ortho"}),
]


@pytest.mark.parametrize(
    ("case", "dtype"),
    [
        (i, d)
        for i, (name, _) in enumerate(EMU_CASES)
        for d in REAL + COMPLEX
        if not (name.startswith(("rfft", "ihfft")) and d in COMPLEX)
    ],
)
def test_composition_emulated(emulated, case, dtype):
    name, kw = EMU_CASES[case]
    base = sample((9, 6), dtype, seed=case)
    want, wd = oracle(getattr(np.fft, name), base.T, **kw)
    x = to_ember(base, "cpu").T  # a transposed view: every axis move is exercised
    check(getattr(efft, name)(x, **kw), want, wd, base.size)


# ---------------------------------------------------------------------------------------------
# CUDA only: plan cache, streams
# ---------------------------------------------------------------------------------------------


def test_plan_cache_is_bounded(device):
    if device != "cuda":
        pytest.skip("cuFFT plans exist on CUDA devices only")
    ember._core._fft_plan_cache_clear()
    assert ember._core._fft_plan_cache_size() == 0
    for m in range(2, 45):
        a = sample((2, m), "complex64", seed=m)
        check(efft.fft(em(a, device)), np.fft.fft(a), "complex64", m)
    assert ember._core._fft_plan_cache_size() == 32
    for m in range(2, 45):  # evicted plans are made again
        a = sample((2, m), "complex64", seed=m)
        check(efft.fft(em(a, device)), np.fft.fft(a), "complex64", m)
    ember._core._fft_plan_cache_clear()
    assert ember._core._fft_plan_cache_size() == 0


def test_on_a_user_stream(device):
    if device != "cuda":
        pytest.skip("streams are CUDA's")
    a = sample((64, 1024), "complex64", seed=1)
    r = sample((64, 1000), "float32", seed=2)
    s = ember.cuda.Stream()
    with ember.cuda.stream(s):
        x, xr = em(a, device), em(r, device)
        y = efft.ifft(efft.fft(x))
        z = efft.irfft(efft.rfft(xr), n=1000)
        f = efft.fft(x)
    s.synchronize()
    check(y, a, "complex64", 1024)
    check(z, r, "float32", 1000)
    check(f, np.fft.fft(a), "complex64", 1024)


JUNK = [None, "x", 2.5, -(2**70), [1, [2]], object(), {"a": 1}, (0, None), float("nan")]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("name", efft.__all__)
def test_junk_arguments_raise_exceptions(device, name):
    f = getattr(efft, name)
    x = em(sample((3, 4), "float32"), device)
    first = 4 if name.endswith("freq") else x
    for junk in JUNK:
        for args, kw in (((junk,), {}), ((first, junk), {}), ((x,), {"norm": junk})):
            if name.endswith(("freq", "shift")) and "norm" in kw:
                continue
            try:
                f(*args, **kw)
            except Exception:
                pass
