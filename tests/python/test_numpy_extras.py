"""take_along_axis, tri, identity, indices, logspace, geomspace, diag, diagflat, ptp, average,
around, cov, corrcoef and the NaN-ignoring reductions against NumPy on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import to_numpy

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4, 5))


def em(a, device):
    return ember.asarray(np.asarray(a), device=device)


def close(got, want, tol=1e-12):
    got = to_numpy(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_take_along_axis(device, axis):
    idx = np.argsort(A, axis=axis)
    close(
        ember.take_along_axis(em(A, device), em(idx, device), axis=axis),
        np.take_along_axis(A, idx, axis=axis),
    )
    # fewer indices along the axis, broadcasting index dims of 1, negative indices
    part = np.take(idx, [0], axis=axis) - A.shape[axis]
    close(
        ember.take_along_axis(em(A, device), em(part, device), axis=axis),
        np.take_along_axis(A, part, axis=axis),
    )
    sub = np.zeros([1 if d != axis % 3 else 2 for d in range(3)], np.int64)
    close(
        ember.take_along_axis(em(A, device), em(sub, device), axis=axis),
        np.take_along_axis(A, sub, axis=axis),
    )


def test_take_along_axis_bad_input(device):
    with pytest.raises(ValueError, match="dimensions"):
        ember.take_along_axis(em(A, device), em(np.zeros((2, 2), np.int64), device), axis=0)
    with pytest.raises(TypeError, match="integers"):
        ember.take_along_axis(em(A, device), em(A, device), axis=0)


def test_creation(device):
    close(ember.tri(3, 4, 1, device=device), np.tri(3, 4, 1))
    assert ember.tri(2, dtype=ember.int32, device=device).dtype == ember.int32
    close(ember.identity(3, device=device), np.identity(3))
    close(ember.indices((2, 3), device=device), np.indices((2, 3)))
    close(ember.logspace(0, 3, 4, device=device), np.logspace(0, 3, 4))
    close(
        ember.logspace(1, 2, 5, base=2.0, endpoint=False, device=device),
        np.logspace(1, 2, 5, base=2.0, endpoint=False),
    )
    close(ember.geomspace(1, 1000, 4, device=device), np.geomspace(1, 1000, 4))
    close(ember.geomspace(-2, -32, 5, device=device), np.geomspace(-2, -32, 5))
    with pytest.raises(ValueError, match="non-zero"):
        ember.geomspace(0, 1, 3)
    with pytest.raises(ValueError, match="same sign"):
        ember.geomspace(-1, 1, 3)


@pytest.mark.parametrize("k", [0, 1, -2])
def test_diag_diagflat(device, k):
    v = np.arange(1.0, 4.0)
    close(ember.diag(em(v, device), k), np.diag(v, k))
    m = A[0]
    close(ember.diag(em(m, device), k), np.diag(m, k))
    close(ember.diagflat(em(m[:2, :2], device), k), np.diagflat(m[:2, :2], k))


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_ptp_average_around(device, axis):
    close(ember.ptp(em(A, device), axis=axis), np.ptp(A, axis=axis))
    close(ember.average(em(A, device), axis=axis), np.average(A, axis=axis))
    w = RNG.random(A.shape)
    close(
        ember.average(em(A, device), axis=axis, weights=em(w, device)),
        np.average(A, axis=axis, weights=w),
    )
    avg, s = ember.average(em(A, device), axis=axis, weights=em(w, device), returned=True)
    wa, ws = np.average(A, axis=axis, weights=w, returned=True)
    close(avg, wa)
    close(s, ws)
    for d in (0, 2, -1):
        close(ember.around(em(A * 100, device), d), np.around(A * 100, d))


def test_average_1d_weights_and_errors(device):
    w = np.array([1.0, 2.0, 3.0, 4.0])
    close(
        ember.average(em(A, device), axis=1, weights=em(w, device)),
        np.average(A, axis=1, weights=w),
    )
    with pytest.raises(ZeroDivisionError):
        ember.average(em(A, device), axis=1, weights=em(w * 0, device))
    with pytest.raises(ValueError, match="weights"):
        ember.average(em(A, device), axis=0, weights=em(w, device))


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
    a = A.copy()
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
