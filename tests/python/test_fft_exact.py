"""ember.fft on the CPU is numpy.fft bit for bit: every transform, every norm, single and double
precision (complex and real inputs; float16 and integers, which NumPy computes in double), 1-D
lengths with inexact factors, n cropping and padding, axes, n-d s and axes, and strided views.
The CPU backend hands each step's normalization factor to NumPy's pocketfft, which applies it
inside its passes; the CUDA results are checked against NumPy within a tolerance in test_fft.py."""

from __future__ import annotations

import ember
import ember.fft as efft
import numpy as np
import pytest
from _helpers import to_ember, to_numpy

NORMS = [None, "backward", "ortho", "forward"]
FLOATS = ["float32", "float64"]
COMPLEX = ["complex64", "complex128"]
ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2"]
REAL_IN = ("rfft", "ihfft")


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    t = np.dtype(dtype)
    if t.kind in "iu":
        return rng.integers(-9, 10, shape).astype(t)
    a = rng.uniform(-1, 1, shape)
    if t.kind == "c":
        a = a + 1j * rng.uniform(-1, 1, shape)
    return a.astype(t)


def dtypes_for(name):
    real_only = name.startswith(REAL_IN)
    return FLOATS + ["float16", "int64"] + ([] if real_only else COMPLEX)


def exact(got, want):
    got = to_numpy(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want, strict=True)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(("name", "dtype"), [(n, d) for n in ONE_D for d in dtypes_for(n)])
def test_1d_lengths(name, dtype, norm):
    for m in (2, 3, 5, 6, 12, 17, 97, 100, 255, 1000):
        a = sample((3, m), dtype, seed=m)
        want = getattr(np.fft, name)(a, norm=norm)
        exact(getattr(efft, name)(to_ember(a, "cpu"), norm=norm), want)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(("name", "dtype"), [(n, d) for n in ONE_D for d in dtypes_for(n)])
def test_1d_n_and_axis(name, dtype, norm):
    a = sample((7, 12), dtype, seed=5)
    x = to_ember(a, "cpu")
    for axis in (0, 1, -1):
        for n in (None, 1, 2, 5, 7, 11, 12, 19, 24):
            if n is None and name in ("irfft", "hfft") and a.shape[axis] == 1:
                continue
            want = getattr(np.fft, name)(a, n=n, axis=axis, norm=norm)
            exact(getattr(efft, name)(x, n=n, axis=axis, norm=norm), want)


ND_CASES = [
    # (shape, s, axes)
    ((6, 10), None, None),
    ((6, 10), None, (0,)),
    ((6, 10), None, (1, 0)),
    ((6, 10), (5, 14), (0, 1)),
    ((6, 10), (7, -1), (0, 1)),
    ((3, 5, 7), None, None),
    ((3, 5, 7), None, (0, 2)),
    ((3, 5, 7), None, (2, 0)),
    ((3, 5, 7), (4, 9), (-1, 0)),
    ((3, 5, 7), (6, 6, 6), (0, 1, 2)),
    ((3, 5, 7), (3, 8), (1, 1)),
]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("case", range(len(ND_CASES)))
@pytest.mark.parametrize(
    ("name", "dtype"), [(n, d) for n in ["fftn", "ifftn", "rfftn", "irfftn"] for d in dtypes_for(n)]
)
def test_nd(name, dtype, case, norm):
    shape, s, axes = ND_CASES[case]
    a = sample(shape, dtype, seed=case)
    want = getattr(np.fft, name)(a, s=s, axes=axes, norm=norm)
    exact(getattr(efft, name)(to_ember(a, "cpu"), s=s, axes=axes, norm=norm), want)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(
    ("name", "dtype"), [(n, d) for n in ["fft2", "ifft2", "rfft2", "irfft2"] for d in dtypes_for(n)]
)
def test_2d(name, dtype, norm):
    a = sample((2, 6, 9), dtype, seed=2)
    x = to_ember(a, "cpu")
    for kw in ({}, {"s": (4, 10)}, {"axes": (0, 2)}, {"s": (3, 5), "axes": (2, 1)}):
        want = getattr(np.fft, name)(a, norm=norm, **kw)
        exact(getattr(efft, name)(x, norm=norm, **kw), want)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", FLOATS + COMPLEX)
def test_views(dtype, norm):
    base = sample((10, 34), dtype, seed=7)
    x = to_ember(base, "cpu")
    for a, v in ((base[:, ::2], x[:, ::2]), (base.T, x.T), (base[::-1, 3:30], x[::-1, 3:30])):
        for name in ONE_D + ["fftn", "ifftn", "rfftn", "irfftn"]:
            if name.startswith(REAL_IN) and dtype in COMPLEX:
                continue
            want = getattr(np.fft, name)(a, norm=norm)
            exact(getattr(efft, name)(v, norm=norm), want)


def test_round_trip_ortho_is_numpys():
    # composed transforms stay NumPy's: every step's factor is NumPy's own
    a = sample((4, 33), "complex64", seed=1)
    want = np.fft.ifft(np.fft.fft(a, norm="ortho"), norm="ortho")
    got = efft.ifft(efft.fft(ember.asarray(a, device="cpu"), norm="ortho"), norm="ortho")
    exact(got, want)
