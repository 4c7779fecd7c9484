"""ember.quantile / percentile / median and their NaN-ignoring variants against NumPy 2: methods,
axes (None, int, tuple), keepdims, q shapes, NaN propagation, integer inputs, errors; on both
devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import to_ember, to_numpy

METHODS = ["linear", "lower", "higher", "nearest", "midpoint"]


def data(shape=(4, 5, 6), dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 10).astype(dtype)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_quantile_matches_numpy(device, method, axis, keepdims):
    a = data()
    x = to_ember(a, device)
    for q in (0.0, 0.37, 0.5, 1.0, [0.1, 0.9], [[0.25], [0.75]]):
        got = ember.quantile(x, q, axis=axis, method=method, keepdims=keepdims)
        want = np.quantile(a, q, axis=axis, method=method, keepdims=keepdims)
        assert got.shape == want.shape, (q, got.shape, want.shape)
        np.testing.assert_allclose(to_numpy(got), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_percentile_and_dtypes(device, method):
    a = data((7, 8), np.float32)
    got = ember.percentile(to_ember(a, device), 30, axis=1, method=method)
    want = np.percentile(a, 30, axis=1, method=method)
    assert got.dtype == ember.float32 and want.dtype == np.float32
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-6)
    i = np.arange(11, dtype=np.int32)[::-1].copy()
    got = ember.quantile(to_ember(i, device), 0.35, method=method)
    want = np.quantile(i, 0.35, method=method)
    assert np.dtype(str(got.dtype)) == want.dtype
    np.testing.assert_allclose(to_numpy(got), want)


def test_nan_propagates(device):
    a = data((3, 6))
    a[1, 2] = np.nan
    x = to_ember(a, device)
    for fn, q in ((ember.quantile, 0.4), (ember.percentile, 40.0)):
        np_fn = np.quantile if fn is ember.quantile else np.percentile
        np.testing.assert_allclose(to_numpy(fn(x, q, axis=1)), np_fn(a, q, axis=1))
        assert np.isnan(to_numpy(fn(x, q)))
    np.testing.assert_allclose(to_numpy(ember.median(x, axis=1)), np.median(a, axis=1))


@pytest.mark.parametrize(
    "shape,axis", [((9,), None), ((4, 6), 1), ((4, 5, 6), (0, 1)), ((3, 4), 0)]
)
@pytest.mark.parametrize("keepdims", [False, True])
def test_median(device, shape, axis, keepdims):
    a = data(shape)
    got = ember.median(to_ember(a, device), axis=axis, keepdims=keepdims)
    want = np.median(a, axis=axis, keepdims=keepdims)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-12)
    i = (a * 3).astype(np.int16)
    got = ember.median(to_ember(i, device), axis=axis)
    assert got.dtype == ember.float64
    np.testing.assert_allclose(to_numpy(got), np.median(i, axis=axis))


def test_nan_variants(device):
    a = data((5, 7))
    a[0, [1, 3]] = np.nan
    a[2, :] = np.nan
    a[4, 6] = np.nan
    x = to_ember(a, device)
    for method in METHODS:
        np.testing.assert_allclose(
            to_numpy(ember.nanquantile(x, [0.2, 0.5], axis=1, method=method)),
            _np_quiet(np.nanquantile, a, [0.2, 0.5], axis=1, method=method),
        )
    np.testing.assert_allclose(
        to_numpy(ember.nanpercentile(x, 65, axis=1)), _np_quiet(np.nanpercentile, a, 65, axis=1)
    )
    np.testing.assert_allclose(
        to_numpy(ember.nanmedian(x, axis=1)), _np_quiet(np.nanmedian, a, axis=1)
    )
    np.testing.assert_allclose(to_numpy(ember.nanmedian(x)), np.nanmedian(a))


def _np_quiet(fn, *args, **kw):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kw)


def test_q_as_array_and_errors(device):
    a = data((4, 5))
    x = to_ember(a, device)
    q = to_ember(np.array([0.1, 0.6]), device)
    np.testing.assert_allclose(
        to_numpy(ember.quantile(x, q, axis=0)), np.quantile(a, [0.1, 0.6], axis=0)
    )
    with pytest.raises(ValueError, match=r"ember.quantile: q must be in the range \[0, 1\]"):
        ember.quantile(x, 1.5)
    with pytest.raises(ValueError, match=r"\[0, 100\]"):
        ember.percentile(x, -1)
    with pytest.raises(ValueError, match="method"):
        ember.quantile(x, 0.5, method="bogus")
    with pytest.raises(TypeError, match="real"):
        ember.quantile(x.astype(ember.complex64), 0.5)
    with pytest.raises(ValueError, match="out"):
        ember.median(x, out=x)
    with pytest.raises(ember.AxisError):
        ember.quantile(x, 0.5, axis=2)
