"""Statistics and the NaN-ignoring functions (python/ember/_statistics.py) against NumPy on both
devices; quantile, percentile and median have their own file, test_quantile.py."""

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


A = RNG.standard_normal((4, 5))


def test_amax_amin(device):
    x = em(A, device)
    same(ember.amax(x, axis=0), np.amax(A, axis=0))
    same(ember.amin(x), np.amin(A))


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_ptp_average(device, axis):
    close(ember.ptp(em(A3, device), axis=axis), np.ptp(A3, axis=axis))
    close(ember.average(em(A3, device), axis=axis), np.average(A3, axis=axis))
    w = RNG.random(A3.shape)
    close(
        ember.average(em(A3, device), axis=axis, weights=em(w, device)),
        np.average(A3, axis=axis, weights=w),
    )
    avg, s = ember.average(em(A3, device), axis=axis, weights=em(w, device), returned=True)
    wa, ws = np.average(A3, axis=axis, weights=w, returned=True)
    close(avg, wa)
    close(s, ws)


def test_average_1d_weights_and_errors(device):
    w = np.array([1.0, 2.0, 3.0, 4.0])
    close(
        ember.average(em(A3, device), axis=1, weights=em(w, device)),
        np.average(A3, axis=1, weights=w),
    )
    with pytest.raises(ZeroDivisionError):
        ember.average(em(A3, device), axis=1, weights=em(w * 0, device))
    with pytest.raises(ValueError, match="weights"):
        ember.average(em(A3, device), axis=0, weights=em(w, device))


@pytest.mark.parametrize("rowvar", [True, False])
def test_cov_corrcoef(device, rowvar):
    m = RNG.standard_normal((3, 7))
    y = RNG.standard_normal((2, 7))
    if not rowvar:
        m, y = m.T, y.T
    close(ember.cov(em(m, device), rowvar=rowvar), np.cov(m, rowvar=rowvar))
    close(ember.cov(em(m, device), em(y, device), rowvar=rowvar), np.cov(m, y, rowvar=rowvar))
    close(ember.cov(em(m, device), rowvar=rowvar, bias=True), np.cov(m, rowvar=rowvar, bias=True))
    close(ember.corrcoef(em(m, device), rowvar=rowvar), np.corrcoef(m, rowvar=rowvar))
    close(ember.cov(em(np.arange(5.0), device)), np.cov(np.arange(5.0)))


@pytest.mark.parametrize("axis", [None, 0, 2])
def test_nan_reductions(device, axis):
    a = A3.copy()
    a[0, 1, :] = np.nan
    a[1, 2, 3] = np.nan
    for f, nf in [
        (ember.nansum, np.nansum),
        (ember.nanmean, np.nanmean),
        (ember.nanvar, np.nanvar),
        (ember.nanstd, np.nanstd),
        (ember.nanmax, np.nanmax),
        (ember.nanmin, np.nanmin),
    ]:
        want = nf(a, axis=axis)  # (conftest quiets NumPy's all-NaN warnings)
        close(f(em(a, device), axis=axis), want)
    close(ember.nanvar(em(a, device), axis=axis, ddof=1), np.nanvar(a, axis=axis, ddof=1))
    if axis != 2:
        for f, nf in [(ember.nanargmax, np.nanargmax), (ember.nanargmin, np.nanargmin)]:
            np.testing.assert_array_equal(to_numpy(f(em(a, device), axis=axis)), nf(a, axis=axis))
    else:
        with pytest.raises(ValueError, match="All-NaN"):
            ember.nanargmax(em(a, device), axis=axis)


def test_nanprod_nancumsum_nancumprod(device):
    a = RNG.standard_normal((3, 4))
    a[0, 1] = a[2, 3] = np.nan
    x = em(a, device)
    same(ember.nanprod(x, axis=1), np.nanprod(a, axis=1))
    same(ember.nancumsum(x, axis=0), np.nancumsum(a, axis=0))
    same(ember.nancumprod(x), np.nancumprod(a))
