"""NumPy's initial= and where= of the reductions, and out= of amax/amin and the nan-functions,
against NumPy on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import to_ember

A = np.array([[1.5, -2.0, np.nan, 4.0], [0.5, 3.0, -1.0, 2.0], [7.0, -8.0, 0.25, 1.0]])
M = np.array([[True, False, False, True], [True, True, False, False], [False, False, False, True]])


def check(got, want):
    got = ember.asnumpy(got)
    assert got.shape == np.shape(want)
    assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_initial(name, axis, keepdims, device):
    a = np.nan_to_num(A)
    x = to_ember(a, device)
    want = getattr(np, name)(a, axis=axis, keepdims=keepdims, initial=3.0)
    check(getattr(ember, name)(x, axis=axis, keepdims=keepdims, initial=3.0), want)
    check(getattr(x, name)(axis=axis, keepdims=keepdims, initial=3.0), want)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "any", "all", "mean", "var", "std"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_where(name, axis, device):
    a = np.nan_to_num(A)
    x = to_ember(a, device)
    kw = {"initial": -5.0} if name in ("max", "min") else {}
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a, axis=axis, where=M, **kw)
    got = getattr(ember, name)(x, axis=axis, where=to_ember(M, device), **kw)
    check(got, want)
    check(getattr(ember, name)(x, axis=axis, where=M.tolist(), **kw), want)  # array-likes


def test_initial_on_empty_and_int(device):
    e = to_ember(np.zeros((0, 3)), device)
    check(ember.max(e, axis=0, initial=2.0), np.max(np.zeros((0, 3)), axis=0, initial=2.0))
    check(ember.sum(e, initial=1.5), np.sum(np.zeros((0, 3)), initial=1.5))
    i = to_ember(np.array([1, 2, 3]), device)
    check(ember.sum(i, initial=2.5), np.sum(np.array([1, 2, 3]), initial=2.5))
    check(ember.min(i, initial=0), np.min(np.array([1, 2, 3]), initial=0))


def test_initial_where_errors(device):
    x = to_ember(np.nan_to_num(A), device)
    with pytest.raises(ValueError, match="ember.max: .*specify 'initial'"):
        ember.max(x, where=to_ember(M, device))
    with pytest.raises(TypeError, match="ember.any\\(\\) got an unexpected keyword argument"):
        ember.any(x, initial=1)
    with pytest.raises(TypeError, match="where must be a boolean"):
        ember.sum(x, where=to_ember(np.ones(4), device))
    out = ember.empty((4,), device=device)
    assert ember.sum(x, axis=0, initial=1.0, out=out) is out
    np.testing.assert_allclose(ember.asnumpy(out), np.nan_to_num(A).sum(axis=0) + 1)


@pytest.mark.parametrize(
    "name", ["amax", "amin", "nanmax", "nanmin", "nansum", "nanprod", "nanmean", "nanvar", "nanstd"]
)
def test_out_of_statistics(name, device):
    x = to_ember(A, device)
    want = getattr(np, name)(A, axis=1)
    out = ember.empty((3,), device=device)
    assert getattr(ember, name)(x, 1, out=out) is out
    check(out, want)
    with pytest.raises(ValueError):
        getattr(ember, name)(x, 1, out=ember.empty((2,), device=device))


@pytest.mark.parametrize("name", ["nanmax", "nanmin", "nansum", "nanprod"])
def test_nan_functions_initial_where(name, device):
    x = to_ember(A, device)
    w = M.copy()
    w[2, 3] = True
    kw = {"initial": 9.0 if name == "nanmin" else -9.0}
    with np.errstate(all="ignore"):
        want = getattr(np, name)(A, axis=0, where=w, **kw)
    check(getattr(ember, name)(x, axis=0, where=to_ember(w, device), **kw), want)
    check(getattr(ember, name)(x, axis=1, **kw), getattr(np, name)(A, axis=1, **kw))
