"""Scans and compaction against NumPy: cumsum/cumprod (NumPy) and cumulative_sum/cumulative_prod
(Array API) over dtypes, axes, 0-d, empty, non-contiguous and long (multi-block) inputs;
nonzero, argwhere, flatnonzero; autograd of cumsum; on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import ALL_DTYPES, NUMPY_DTYPES, np_dtype, to_ember, to_numpy


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, size=shape)
    if dtype == "bool":
        return a % 2 == 1
    if dtype.startswith("complex"):
        return (a + 1j * rng.integers(0, 3, size=shape)).astype(np_dtype(dtype))
    return a.astype(np_dtype(dtype))


def check(got, want, exact=True):
    got = to_numpy(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    if exact:
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        assert np.array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(want.dtype), want, rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_cumsum_dtypes(device, dtype):
    a = sample((3, 7), dtype)
    x = to_ember(a, device)
    for axis in (None, 0, 1, -1):
        want = np.cumsum(a, axis=axis)
        got = ember.cumsum(x, axis=axis)
        if dtype == "float16":
            # ember accumulates 16-bit floats in float32 (small integers: exact either way)
            assert to_numpy(got).dtype == want.dtype
        check(got, want)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_cumprod_dtypes(device, dtype):
    a = sample((4, 5), dtype, seed=1)
    x = to_ember(a, device)
    for axis in (None, 0, 1):
        check(ember.cumprod(x, axis=axis), np.cumprod(a, axis=axis))


def test_bfloat16_scan(device):
    a = sample((5, 6), "float32")
    x = ember.asarray(a, dtype=ember.bfloat16, device=device)
    got = ember.cumsum(x, axis=1)
    assert got.dtype == ember.bfloat16
    np.testing.assert_array_equal(to_numpy(got.astype(ember.float32)), np.cumsum(a, axis=1))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "float32", "float64", "bool"])
def test_explicit_dtype(device, dtype):
    a = sample((2, 9), "int16")
    x = to_ember(a, device)
    want = np.cumsum(a, axis=1, dtype=np_dtype(dtype))
    check(ember.cumsum(x, axis=1, dtype=getattr(ember, dtype)), want)


def test_integer_wraparound(device):
    a = np.array([2**62, 2**62, 2**62, 3], dtype=np.int64)
    check(ember.cumsum(to_ember(a, device)), np.cumsum(a))
    b = np.full(70, 2, dtype=np.int64)
    check(ember.cumprod(to_ember(b, device)), np.cumprod(b))
    c = np.full(10, 200, dtype=np.uint8)
    check(ember.cumsum(to_ember(c, device), dtype=ember.uint8), np.cumsum(c, dtype=np.uint8))


NARROW = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "uint64"]


@pytest.mark.parametrize("out", NARROW)
@pytest.mark.parametrize("src", ["int8", "uint16", "int64", "bool"])
def test_accumulates_in_the_requested_dtype(device, src, out):
    # The CPU accumulates in `out` itself (no int64 temporary): NumPy's wrap-around at every
    # step, bool + as or and * as and; a non-contiguous input (a fresh copy) is scanned in place.
    rng = np.random.default_rng(3)
    a = rng.integers(0, 120, size=(6, 500)).astype(np_dtype(src))
    if src == "bool":
        a = a % 3 == 0
    x = to_ember(a, device)
    for fn in ("cumsum", "cumprod"):
        for axis in (None, 0, 1):
            want = getattr(np, fn)(a, axis=axis, dtype=np_dtype(out))
            check(getattr(ember, fn)(x, axis=axis, dtype=getattr(ember, out)), want)
        want = getattr(np, fn)(a[:, ::3], axis=1, dtype=np_dtype(out))
        check(getattr(ember, fn)(x[:, ::3], axis=1, dtype=getattr(ember, out)), want)


def test_nan_scans_in_narrow_dtypes(device):
    a = np.arange(1, 200, dtype=np.int16)
    x = to_ember(a, device)
    check(ember.nancumsum(x, dtype=ember.int8), np.nancumsum(a, dtype=np.int8))
    check(ember.nancumprod(x, dtype=ember.uint8), np.nancumprod(a, dtype=np.uint8))


@pytest.mark.parametrize(
    "shape,axis",
    [((0,), None), ((0,), 0), ((3, 0), 1), ((3, 0), 0), ((0, 4), 1), ((2, 0, 3), 2)],
)
def test_empty(device, shape, axis):
    a = np.zeros(shape, dtype=np.float32)
    check(ember.cumsum(to_ember(a, device), axis=axis), np.cumsum(a, axis=axis))


def test_zero_d(device):
    a = np.array(5.0)
    x = to_ember(a, device)
    check(ember.cumsum(x), np.cumsum(a))
    check(ember.cumsum(x, axis=0), np.cumsum(a, axis=0))
    check(ember.cumulative_sum(x), np.cumulative_sum(a))
    with pytest.raises((ValueError, IndexError)):
        ember.cumsum(x, axis=1)


@pytest.mark.parametrize("view", ["transposed", "strided", "reversed", "broadcast"])
def test_non_contiguous(device, view):
    a = sample((6, 8), "float64")
    x = to_ember(a, device)
    pick = {
        "transposed": lambda t: t.T,
        "strided": lambda t: t[::2, 1::3],
        "reversed": lambda t: t[::-1, ::-1],
        "broadcast": lambda t: t[:1].reshape((1, 8)) * (t[:, :1] * 0 + 1),
    }[view]
    for axis in (0, 1, None):
        check(ember.cumsum(pick(x), axis=axis), np.cumsum(pick(a), axis=axis))
        check(ember.cumprod(pick(x), axis=axis), np.cumprod(pick(a), axis=axis))


@pytest.mark.parametrize("shape,axis", [((3, 4, 5), 0), ((3, 4, 5), 1), ((3, 4, 5), 2)])
def test_3d_axes(device, shape, axis):
    a = sample(shape, "int32")
    check(ember.cumsum(to_ember(a, device), axis=axis), np.cumsum(a, axis=axis))


@pytest.mark.parametrize("n", [33, 2048, 2049, 10_000, 3_000_000])
def test_long_rows(device, n):
    # int64 values: exact on every path (one thread per row, one block per row, three phases)
    a = np.random.default_rng(n).integers(-5, 6, size=n).astype(np.int64)
    check(ember.cumsum(to_ember(a, device)), np.cumsum(a))


def test_long_float_scan(device):
    a = np.random.default_rng(3).random(3_000_000).astype(np.float32)
    got = to_numpy(ember.cumsum(to_ember(a, device)))
    want = np.cumsum(a.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-4)


@pytest.mark.parametrize("rows,cols", [(5, 50_000), (300, 5000), (20_000, 40), (100_000, 3)])
def test_many_and_long_rows(device, rows, cols):
    a = np.random.default_rng(rows).integers(-3, 4, size=(rows, cols)).astype(np.int64)
    x = to_ember(a, device)
    check(ember.cumsum(x, axis=1), np.cumsum(a, axis=1))
    if rows * cols <= 300_000:
        check(ember.cumsum(x, axis=0), np.cumsum(a, axis=0))


def test_deterministic(device):
    a = np.random.default_rng(7).random(1_000_003).astype(np.float32)
    x = to_ember(a, device)
    r1, r2 = to_numpy(ember.cumsum(x)), to_numpy(ember.cumsum(x))
    assert np.array_equal(r1, r2)


def test_complex(device):
    a = sample((3, 40), "complex128")
    x = to_ember(a, device)
    check(ember.cumsum(x, axis=1), np.cumsum(a, axis=1))
    check(ember.cumprod(x[:, :6], axis=1), np.cumprod(a[:, :6], axis=1))


def test_cumulative_sum_array_api(device):
    a = sample((3, 4), "int32")
    x = to_ember(a, device)
    for axis in (0, 1, -1):
        for inc in (False, True):
            check(
                ember.cumulative_sum(x, axis=axis, include_initial=inc),
                np.cumulative_sum(a, axis=axis, include_initial=inc),
            )
            check(
                ember.cumulative_prod(x, axis=axis, include_initial=inc),
                np.cumulative_prod(a, axis=axis, include_initial=inc),
            )
    with pytest.raises(ValueError, match="cumulative_sum.*axis"):
        ember.cumulative_sum(x)
    b = a[0]
    check(ember.cumulative_sum(to_ember(b, device)), np.cumulative_sum(b))
    check(
        ember.cumulative_sum(to_ember(b, device), dtype=ember.float64, include_initial=True),
        np.cumulative_sum(b, dtype=np.float64, include_initial=True),
    )
    e = np.zeros((0,), np.float32)
    check(
        ember.cumulative_sum(to_ember(e, device), include_initial=True),
        np.cumulative_sum(e, include_initial=True),
    )


def test_methods(device):
    a = sample((3, 4), "float32")
    x = to_ember(a, device)
    check(x.cumsum(), a.cumsum())
    check(x.cumsum(axis=1), a.cumsum(axis=1))
    check(x.cumprod(0), a.cumprod(0))
    n = x.nonzero()
    for g, w in zip(n, a.nonzero(), strict=True):
        check(g, w.astype(np.int64))


def test_bad_input(device):
    x = to_ember(np.ones((2, 3)), device)
    with pytest.raises((ValueError, IndexError), match="cumsum"):
        ember.cumsum(x, axis=2)
    with pytest.raises(TypeError):
        ember.cumsum(to_ember(np.ones(3, np.complex64), device), dtype=ember.float32)
    # Array-likes are NumPy's inputs too.
    assert ember.asnumpy(ember.cumsum([1, 2, 3])).tolist() == [1, 3, 6]


def test_cumsum_grad(device):
    a = np.random.default_rng(0).random((3, 5))
    w = np.random.default_rng(1).random((3, 5))
    for axis in (0, 1, None):
        x = ember.asarray(a, device=device, requires_grad=True)
        y = ember.cumsum(x, axis=axis)
        wy = w if axis is not None else w.reshape(-1)
        (y * to_ember(wy, device)).sum().backward()
        if axis is None:
            want = np.cumsum(wy[::-1])[::-1].reshape(a.shape)
        else:
            want = np.flip(np.cumsum(np.flip(w, axis), axis), axis)
        np.testing.assert_allclose(to_numpy(x.grad), want, rtol=1e-12)


def test_cumsum_grad_include_initial(device):
    x = ember.asarray(np.arange(4.0), device=device, requires_grad=True)
    ember.cumulative_sum(x, include_initial=True).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [4.0, 3.0, 2.0, 1.0])


def test_cumprod_not_differentiable(device):
    x = ember.asarray(np.arange(1.0, 4.0), device=device, requires_grad=True)
    y = ember.cumprod(x)
    with pytest.raises(Exception, match="cumprod"):
        y.sum().backward()


# ---- nonzero / argwhere / flatnonzero ------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_nonzero_dtypes(device, dtype):
    a = sample((4, 6), dtype if dtype != "bfloat16" else "float32")
    x = to_ember(a, device) if dtype != "bfloat16" else ember.asarray(a, dtype=ember.bfloat16)
    x = x.to(device)
    got = ember.nonzero(x)
    want = np.nonzero(a)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        check(g, w.astype(np.int64))


@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 4), (2, 1, 3, 2), (0,), (3, 0, 2)])
def test_nonzero_shapes(device, shape):
    a = sample(shape, "int32", seed=5)
    x = to_ember(a, device)
    for g, w in zip(ember.nonzero(x), np.nonzero(a), strict=True):
        check(g, w.astype(np.int64))
    check(ember.argwhere(x), np.argwhere(a).astype(np.int64))
    check(ember.flatnonzero(x), np.flatnonzero(a).astype(np.int64))


def test_nonzero_views(device):
    a = sample((6, 8), "float32")
    x = to_ember(a, device)
    for g, w in zip(ember.nonzero(x.T[::2]), np.nonzero(a.T[::2]), strict=True):
        check(g, w.astype(np.int64))


def test_nonzero_zero_d(device):
    x = to_ember(np.array(3), device)
    with pytest.raises(ValueError, match="nonzero"):
        ember.nonzero(x)
    check(ember.argwhere(x), np.argwhere(np.array(3)).astype(np.int64))
    check(ember.argwhere(x * 0), np.argwhere(np.array(0)).astype(np.int64))
    check(ember.flatnonzero(x), np.flatnonzero(np.array(3)).astype(np.int64))


@pytest.mark.parametrize("n", [1, 4095, 4096, 4097, 3_000_000])
def test_nonzero_large(device, n):
    a = np.random.default_rng(n).random(n) < 0.3
    check(ember.flatnonzero(to_ember(a, device)), np.flatnonzero(a).astype(np.int64))


def test_nonzero_all_and_none(device):
    for a in (np.ones(10_000, bool), np.zeros(10_000, bool)):
        check(ember.flatnonzero(to_ember(a, device)), np.flatnonzero(a).astype(np.int64))


def test_nonzero_nan_and_negative_zero(device):
    a = np.array([0.0, -0.0, np.nan, 1.0, -np.inf], dtype=np.float32)
    check(ember.flatnonzero(to_ember(a, device)), np.flatnonzero(a).astype(np.int64))


def test_nonzero_not_differentiable_input(device):
    x = ember.asarray(np.array([0.0, 2.0, 0.0, 1.0]), device=device, requires_grad=True)
    (idx,) = ember.nonzero(x)
    assert not idx.requires_grad
    check(idx, np.array([1, 3]))


def test_put_along_axis(device):
    a = np.arange(12.0).reshape(3, 4)
    idx = np.array([[1], [0], [3]])
    x = to_ember(a, device)
    ember.put_along_axis(x, to_ember(idx, device), 99.0, axis=1)
    np.put_along_axis(a, idx, 99.0, axis=1)
    check(x, a)
    idx0 = np.array([[2, 0, 1, 1]])
    ember.put_along_axis(x, to_ember(idx0, device), to_ember(-a[:1], device), axis=0)
    np.put_along_axis(a, idx0, -a[:1], axis=0)
    check(x, a)
    with pytest.raises(ValueError, match="put_along_axis"):
        ember.put_along_axis(x, to_ember(np.array([1]), device), 0.0, axis=0)
