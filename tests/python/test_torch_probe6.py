"""The sixth PyTorch probe's names: ember.linalg's solve_triangular / cholesky_ex / inv_ex /
solve_ex / lu_factor(_ex) / lu_solve / lu / matrix_exp / vander, cholesky_solve /
cholesky_inverse, mode / logit / unflatten / empty_strided / sgn / frac / apply_ / map_,
PyTorch's searchsorted / bucketize, the window functions, stft / istft and nn.SyncBatchNorm
(ember/_torch_linalg.py, _torch_extra3.py, _torch_signal.py, nn/_syncbn.py), against NumPy /
SciPy replays, finite differences, and PyTorch where it is installed."""

import os
import subprocess
import sys

import ember as em
import numpy as np
import pytest

sl = pytest.importorskip("scipy.linalg")
HERE = os.path.abspath(__file__)
RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _seed():
    """Each test's data independent of which tests ran before it."""
    global RNG
    RNG = np.random.default_rng(7)


def _np(x):
    return em.asnumpy(x)


def _tol(dt):
    return {"rtol": 2e-4, "atol": 2e-4} if dt == "float32" else {"rtol": 1e-10, "atol": 1e-10}


def _well(shape, dt="float64"):
    """Well-conditioned square matrices (diagonally dominated)."""
    n = shape[-1]
    return (RNG.standard_normal(shape) + 2 * n * np.eye(n) * 0.5).astype(dt)


def _fd_check(f, arrays, device, idx=0, eps=1e-6, rtol=1e-5, atol=1e-6):
    """Autograd gradient of sum(f(*arrays) * w) w.r.t. arrays[idx] vs central differences."""
    xs = [em.asarray(a, device=device) for a in arrays]
    xs[idx].requires_grad_(True)
    out = f(*xs)
    w = RNG.standard_normal(tuple(out.shape))
    (out * em.asarray(w, device=device)).sum().backward()
    got = _np(xs[idx].grad)
    base = [a.copy() for a in arrays]
    want = np.zeros_like(base[idx])
    for k in np.ndindex(base[idx].shape):
        vals = []
        for s in (1, -1):
            cur = [a.copy() for a in base]
            cur[idx][k] += s * eps
            vals.append(float(np.sum(_np(f(*[em.asarray(a, device=device) for a in cur])) * w)))
        want[k] = (vals[0] - vals[1]) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# ---- linalg -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_solve_triangular(device, dt):
    a = _well((2, 1, 4, 4), dt)
    b = RNG.standard_normal((3, 4, 2)).astype(dt)
    bt = RNG.standard_normal((3, 2, 4)).astype(dt)
    A, B, BT = (em.asarray(v, device=device) for v in (a, b, bt))
    for upper in (True, False):
        for unit in (True, False):
            t = np.triu(a) if upper else np.tril(a)
            if unit:
                t = t - t * np.eye(4) + np.eye(4)
            x = em.linalg.solve_triangular(A, B, upper=upper, unitriangular=unit)
            assert x.shape == (2, 3, 4, 2) and x.dtype == dt and x.device == A.device
            np.testing.assert_allclose(_np(x), np.linalg.solve(t, b), **_tol(dt))
            x = em.linalg.solve_triangular(A, BT, upper=upper, left=False, unitriangular=unit)
            want = np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(bt, -1, -2)),
                               -1, -2)  # fmt: skip
            np.testing.assert_allclose(_np(x), want, **_tol(dt))
    with pytest.raises(TypeError):
        em.linalg.solve_triangular(A, B)  # upper is required
    with pytest.raises(RuntimeError, match="same dtype"):
        em.linalg.solve_triangular(A, B.astype("float32" if dt == "float64" else "float64"),
                                   upper=True)  # fmt: skip
    with pytest.raises(RuntimeError, match="Incompatible"):
        em.linalg.solve_triangular(A, BT, upper=True)


def test_solve_triangular_grad(device):
    a, b = _well((2, 3, 3)), RNG.standard_normal((2, 3, 2))
    for upper, unit, left in ((True, False, True), (False, True, True), (False, False, False)):
        bb = b if left else np.swapaxes(b, -1, -2)

        def f(A, B, upper=upper, unit=unit, left=left):
            return em.linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unit)

        _fd_check(f, [a, bb], device, 0)
        _fd_check(f, [a, bb], device, 1)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_lu_factor_lu_solve_lu(device, dt):
    a = RNG.standard_normal((3, 4, 4)).astype(dt)
    A = em.asarray(a, device=device)
    LU, piv = em.linalg.lu_factor(A)
    assert piv.dtype == "int32" and piv.shape == (3, 4)
    for i in range(3):
        lu, p = sl.lu_factor(a[i])
        np.testing.assert_allclose(_np(LU[i]), lu, **_tol(dt))
        np.testing.assert_array_equal(_np(piv[i]), p + 1)
    P, L, U = em.linalg.lu(A)
    for i in range(3):
        p, low, up = sl.lu(a[i])
        np.testing.assert_allclose(_np(P[i]), p)
        np.testing.assert_allclose(_np(L[i]), low, **_tol(dt))
        np.testing.assert_allclose(_np(U[i]), up, **_tol(dt))
    for shape in ((3, 5), (5, 3)):  # rectangular
        m = RNG.standard_normal(shape).astype(dt)
        got = em.linalg.lu(em.asarray(m, device=device))
        for g, w in zip(got, sl.lu(m), strict=True):
            np.testing.assert_allclose(_np(g), w, **_tol(dt))
    b = RNG.standard_normal((3, 4, 2)).astype(dt)
    bt = RNG.standard_normal((3, 2, 4)).astype(dt)
    for left in (True, False):
        for adjoint in (True, False):
            m = np.swapaxes(a, -1, -2) if adjoint else a
            rhs = b if left else bt
            x = em.linalg.lu_solve(LU, piv, em.asarray(rhs, device=device), left=left,
                                   adjoint=adjoint)  # fmt: skip
            if left:
                want = np.linalg.solve(m, rhs)
            else:
                want = np.swapaxes(np.linalg.solve(np.swapaxes(m, -1, -2),
                                                   np.swapaxes(rhs, -1, -2)), -1, -2)  # fmt: skip
            np.testing.assert_allclose(_np(x), want, rtol=1e-3 if dt == "float32" else 1e-9,
                                       atol=1e-3 if dt == "float32" else 1e-9)  # fmt: skip
    lu, p, info = em.linalg.lu_factor_ex(em.asarray(np.zeros((2, 2), dt), device=device))
    assert int(info) > 0
    with pytest.raises(em.linalg.LinAlgError, match="singular"):
        em.linalg.lu_factor(em.asarray(np.zeros((2, 2), dt), device=device))


def test_lu_no_pivot(device):
    a = _well((2, 4, 4))
    LU, piv, info = em.linalg.lu_factor_ex(em.asarray(a, device=device), pivot=False)
    assert _np(piv).tolist() == [[1, 2, 3, 4]] * 2 and _np(info).tolist() == [0, 0]
    P, L, U = em.linalg.lu(em.asarray(a, device=device), pivot=False)
    assert P.shape == (0,)
    np.testing.assert_allclose(_np(L @ U), a, rtol=1e-12, atol=1e-12)
    assert np.allclose(_np(L), np.tril(_np(L))) and np.allclose(_np(U), np.triu(_np(U)))
    np.testing.assert_allclose(np.diagonal(_np(L), axis1=-2, axis2=-1), 1)
    x = em.linalg.lu_solve(LU, piv, em.asarray(a[..., :1], device=device))
    np.testing.assert_allclose(_np(x)[..., 0], np.tile([1.0, 0, 0, 0], (2, 1)), atol=1e-12)
    for shape in ((3, 5), (5, 3)):
        m = RNG.standard_normal(shape) + np.eye(*shape) * 4
        _, L, U = em.linalg.lu(em.asarray(m, device=device), pivot=False)
        np.testing.assert_allclose(_np(L @ U), m, rtol=1e-12, atol=1e-12)
    _, _, info = em.linalg.lu_factor_ex(em.asarray([[0.0, 1.0], [1.0, 0.0]]), pivot=False)
    assert int(info) == 1
    _fd_check(lambda A: em.linalg.lu_factor(A, pivot=False)[0], [a[0]], device)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2)])
def test_lu_grad(device, shape):
    a = RNG.standard_normal(shape)

    def lu_sum(A):
        _, low, up = em.linalg.lu(A)
        return em.concatenate([low.reshape(-1), up.reshape(-1)])

    _fd_check(lu_sum, [a], device)
    _fd_check(lambda A: em.linalg.lu_factor(A)[0], [a], device)


def test_lu_solve_grad(device):
    a, b = _well((3, 3)), RNG.standard_normal((3, 2))
    LU, piv = em.linalg.lu_factor(em.asarray(a, device=device))
    lu = _np(LU)
    _fd_check(lambda L_, B: em.linalg.lu_solve(L_, piv, B, adjoint=True), [lu, b], device, 0)
    _fd_check(lambda L_, B: em.linalg.lu_solve(L_, piv, B), [lu, b], device, 1)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_cholesky_family(device, dt):
    g = RNG.standard_normal((2, 4, 4))
    s = (g @ np.swapaxes(g, -1, -2) + 4 * np.eye(4)).astype(dt)
    S = em.asarray(s, device=device)
    L, info = em.linalg.cholesky_ex(S)
    np.testing.assert_allclose(_np(L), np.linalg.cholesky(s), **_tol(dt))
    assert info.dtype == "int32" and _np(info).tolist() == [0, 0]
    U, _ = em.linalg.cholesky_ex(S, upper=True)
    np.testing.assert_allclose(_np(U), np.swapaxes(np.linalg.cholesky(s), -1, -2), **_tol(dt))
    b = RNG.standard_normal((2, 4, 3)).astype(dt)
    B = em.asarray(b, device=device)
    want = np.linalg.solve(s, b)
    np.testing.assert_allclose(_np(em.cholesky_solve(B, L)), want, **_tol(dt))
    np.testing.assert_allclose(_np(em.cholesky_solve(B, U, upper=True)), want, **_tol(dt))
    np.testing.assert_allclose(_np(em.cholesky_inverse(L)), np.linalg.inv(s), **_tol(dt))
    np.testing.assert_allclose(_np(L.cholesky_inverse()), np.linalg.inv(s), **_tol(dt))
    bad = s.copy()
    bad[1, 2, 2] = -50
    _, info = em.linalg.cholesky_ex(em.asarray(bad, device=device))
    assert _np(info)[0] == 0 and _np(info)[1] == 3
    with pytest.raises(em.linalg.LinAlgError, match=r"Batch element 1.*order 3"):
        em.linalg.cholesky_ex(em.asarray(bad, device=device), check_errors=True)


def test_cholesky_grads(device):
    g = RNG.standard_normal((3, 3))
    s = g @ g.T + 3 * np.eye(3)
    # through a symmetrization, as LAPACK reads one triangle (the gradient is PyTorch's symmetric)
    sym = lambda A: (A + em.matrix_transpose(A)) * 0.5  # noqa: E731
    _fd_check(lambda A: em.linalg.cholesky_ex(sym(A))[0], [s], device, rtol=1e-5, atol=1e-7)
    low = np.linalg.cholesky(s)
    b = RNG.standard_normal((3, 2))
    _fd_check(lambda B, L_: em.cholesky_solve(B, L_), [b, low], device, 1)
    _fd_check(lambda B, L_: em.cholesky_solve(B, L_), [b, low], device, 0)
    _fd_check(lambda L_: em.cholesky_inverse(L_), [low], device)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_inv_ex_solve_ex(device, dt):
    a = _well((2, 3, 3), dt)
    A = em.asarray(a, device=device)
    inv, info = em.linalg.inv_ex(A)
    np.testing.assert_allclose(_np(inv), np.linalg.inv(a), **_tol(dt))
    assert _np(info).tolist() == [0, 0]
    b = RNG.standard_normal((2, 3)).astype(dt)  # a batch of vectors (A's shape minus one)
    x, info = em.linalg.solve_ex(A, em.asarray(b, device=device))
    np.testing.assert_allclose(_np(x), np.linalg.solve(a, b[..., None])[..., 0], **_tol(dt))
    bm = RNG.standard_normal((2, 2, 3)).astype(dt)
    x, _ = em.linalg.solve_ex(A, em.asarray(bm, device=device), left=False)
    want = np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(bm, -1, -2)), -1, -2)
    np.testing.assert_allclose(_np(x), want, **_tol(dt))
    sing = em.asarray(np.array([[1.0, 2.0], [2.0, 4.0]], dt), device=device)
    _, info = em.linalg.inv_ex(sing)
    assert int(info) == 2
    with pytest.raises(em.linalg.LinAlgError, match="diagonal element 2 is zero"):
        em.linalg.inv_ex(sing, check_errors=True)
    with pytest.raises(em.linalg.LinAlgError):
        em.linalg.solve_ex(sing, em.ones(2, dtype=dt, device=device), check_errors=True)
    with pytest.raises(RuntimeError, match="square"):
        em.linalg.inv_ex(em.ones((2, 3), dtype=dt, device=device))


def test_inv_solve_grad(device):
    a, b = _well((2, 3, 3)), RNG.standard_normal((2, 3, 2))
    _fd_check(lambda A: em.linalg.inv_ex(A)[0], [a], device)
    _fd_check(lambda A, B: em.linalg.solve_ex(A, B)[0], [a, b], device, 0)
    _fd_check(lambda A, B: em.linalg.solve_ex(A, B)[0], [a, b], device, 1)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_matrix_exp(device, dt):
    a = RNG.standard_normal((3, 4, 4))
    for scale in (1e-3, 0.5, 3.0, 40.0):
        m = (a * scale).astype(dt)
        got = _np(em.linalg.matrix_exp(em.asarray(m, device=device)))
        want = np.stack([sl.expm(m[i].astype(np.float64)) for i in range(3)])
        err = np.abs(got - want).max() / np.abs(want).max()
        big = scale > 3  # norm ~ 100: 2^5 squarings amplify the rounding
        bound = (5e-5 if big else 1e-5) if dt == "float32" else (1e-10 if big else 1e-12)
        assert err < bound, (scale, err)
    np.testing.assert_allclose(_np(em.linalg.matrix_exp(em.asarray([[[2.0]]], device=device))),
                               [[[np.exp(2.0)]]])  # fmt: skip
    z = np.array([[0.0, 1.0], [-1.0, 0.0]]) * (1 + 0.5j)
    np.testing.assert_allclose(_np(em.linalg.matrix_exp(em.asarray(z, device=device))),
                               sl.expm(z), rtol=1e-12, atol=1e-12)  # fmt: skip


def test_matrix_exp_grad(device):
    _fd_check(em.linalg.matrix_exp, [RNG.standard_normal((2, 3, 3))], device, rtol=1e-5)


def test_vander(device):
    x = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 0.5]])
    got = em.linalg.vander(em.asarray(x, device=device))
    np.testing.assert_allclose(_np(got), np.stack([np.vander(r, increasing=True) for r in x]))
    got = em.linalg.vander(em.asarray([2, 3], device=device), N=4)
    assert got.dtype == "int64" and _np(got).tolist() == [[1, 2, 4, 8], [1, 3, 9, 27]]
    _fd_check(lambda v: em.linalg.vander(v, N=4), [x], device)
    with pytest.raises(RuntimeError):
        em.linalg.vander(em.asarray(1.0))


def test_linalg_against_torch(device):
    torch = pytest.importorskip("torch")
    a = _well((2, 4, 4))
    b = RNG.standard_normal((2, 4, 3))
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    A, B = em.asarray(a, device=device), em.asarray(b, device=device)
    np.testing.assert_allclose(
        _np(em.linalg.solve_triangular(A, B, upper=False)),
        torch.linalg.solve_triangular(ta, tb, upper=False).numpy(),
        rtol=1e-10,
    )
    lu, piv = torch.linalg.lu_factor(ta)
    LU, PIV = em.linalg.lu_factor(A)
    np.testing.assert_allclose(_np(LU), lu.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(_np(PIV), piv.numpy())
    for g, w in zip(em.linalg.lu(A), torch.linalg.lu(ta), strict=True):
        np.testing.assert_allclose(_np(g), w.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        _np(em.linalg.lu_solve(LU, PIV, B, adjoint=True)),
        torch.linalg.lu_solve(lu, piv, tb, adjoint=True).numpy(),
        rtol=1e-10,
    )
    want = torch.linalg.matrix_exp(ta).numpy()  # PyTorch's Taylor-based degrees: ~ulp level
    got = _np(em.linalg.matrix_exp(A))
    assert np.abs(got - want).max() <= 1e-11 * np.abs(want).max()
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    np.testing.assert_array_equal(
        _np(em.linalg.vander(em.asarray([1.0, 2.0, 3.0]))), torch.linalg.vander(x).numpy()
    )
    # the gradient of lu on a wide matrix
    w = RNG.standard_normal((3, 5))
    tw = torch.from_numpy(w).requires_grad_(True)
    _, tl, tu = torch.linalg.lu(tw)
    (tl.sum() + (tu * 2).sum()).backward()
    W = em.asarray(w, device=device)
    W.requires_grad_(True)
    _, el, eu = em.linalg.lu(W)
    (el.sum() + (eu * 2).sum()).backward()
    np.testing.assert_allclose(_np(W.grad), tw.grad.numpy(), rtol=1e-9, atol=1e-12)


# ---- functions and methods ----------------------------------------------------------------------


def test_mode(device):
    a = np.array([[1, 2, 2, 3, 3, 0], [5, 5, 1, 1, 7, 7], [4, 4, 4, 0, 9, 4]])
    x = em.asarray(a, device=device)
    v, i = em.mode(x)
    assert _np(v).tolist() == [2, 1, 4] and _np(i).tolist() == [2, 3, 5]
    v, i = x.mode(0, keepdim=True)
    assert v.shape == (1, 6) and _np(v).tolist() == [[1, 2, 1, 0, 3, 0]]
    assert _np(i).tolist() == [[0, 0, 1, 2, 0, 0]]
    f = RNG.integers(0, 4, (5, 7)).astype("float32")
    v, i = em.mode(em.asarray(f, device=device), dim=1)
    for r in range(5):
        vals, counts = np.unique(f[r], return_counts=True)
        best = vals[np.argmax(counts)]
        assert _np(v)[r] == best and _np(i)[r] == np.nonzero(f[r] == best)[0][-1]
    with pytest.raises(IndexError):
        em.mode(x, 2)


def test_logit_unflatten_empty_strided(device):
    sp = pytest.importorskip("scipy.special")
    p = np.array([0.1, 0.5, 0.75])
    x = em.asarray(p, device=device)
    np.testing.assert_allclose(_np(em.logit(x)), sp.logit(p))
    np.testing.assert_allclose(_np(em.logit(x, eps=0.2)), sp.logit(np.clip(p, 0.2, 0.8)))
    np.testing.assert_allclose(_np(x.logit()), sp.logit(p))
    np.testing.assert_allclose(_np(em.special.logit(x)), sp.logit(p))
    np.testing.assert_allclose(_np(em.special.expit(x)), sp.expit(p))
    y = em.arange(24, device=device).reshape(2, 12)
    assert em.unflatten(y, 1, (3, -1)).shape == (2, 3, 4)
    assert y.unflatten(-1, (2, 2, 3)).shape == (2, 2, 2, 3)
    np.testing.assert_array_equal(_np(y.unflatten(0, (1, 2))), _np(y)[None])
    with pytest.raises(RuntimeError):
        em.unflatten(y, 1, (5, -1))
    with pytest.raises(RuntimeError):
        em.unflatten(y, 1, (5, 2))
    e = em.empty_strided((2, 3), (1, 2), device=device)
    assert e.shape == (2, 3) and e.stride() == (1, 2) and e.dtype == "float32"
    assert e.device == em.asarray(0, device=device).device
    e = em.empty_strided((2, 3), (3, 1), dtype=em.float64, device=device)
    assert e.stride() == (3, 1) and e.dtype == "float64"


def test_sgn_frac_apply_map(device):
    a = np.array([-2.5, 0.0, 3.25])
    x = em.asarray(a, device=device)
    np.testing.assert_array_equal(_np(x.sgn()), np.sign(a))
    np.testing.assert_array_equal(_np(x.frac()), a - np.trunc(a))
    c = em.asarray(np.array([3 + 4j, 0j]), device=device)
    np.testing.assert_allclose(_np(c.sgn()), [0.6 + 0.8j, 0])
    np.testing.assert_allclose(_np(em.sgn(c)), [0.6 + 0.8j, 0])
    y = x.clone()
    y.frac_()
    np.testing.assert_array_equal(_np(y), a - np.trunc(a))
    if device == "cpu":
        z = em.asarray([1.0, 2.0, 3.0])
        assert z.apply_(lambda v: v * 10) is z
        assert _np(z).tolist() == [10.0, 20.0, 30.0]
        z.map_(em.asarray([1.0, 1.0, 2.0]), lambda u, v: u + v)
        assert _np(z).tolist() == [11.0, 21.0, 32.0]
        z.map_(em.asarray(1.0), lambda u, v: u - v)
        assert _np(z).tolist() == [10.0, 20.0, 31.0]
    else:
        with pytest.raises(TypeError, match="CPU"):
            x.apply_(lambda v: v)
        with pytest.raises(TypeError, match="CPU"):
            x.map_(x, lambda u, v: u)


def test_searchsorted_bucketize_promote(device):
    b64 = np.array([0.0, 1.0, 2.0, 3.0])
    v32 = np.array([-1.0, 0.5, 1.0, 2.5, 9.0], "float32")
    B, V = em.asarray(b64, device=device), em.asarray(v32, device=device)
    for side in ("left", "right"):
        want = np.searchsorted(b64, v32.astype(np.float64), side)
        np.testing.assert_array_equal(_np(em.searchsorted(B, V, side=side)), want)
        got = em.searchsorted(B, V, right=side == "right")
        assert got.dtype == "int64"
        np.testing.assert_array_equal(_np(got), want)
        got = em.bucketize(V, B, right=side == "right", out_int32=True)
        assert got.dtype == "int32"
        np.testing.assert_array_equal(_np(got), want)
        np.testing.assert_array_equal(_np(V.bucketize(B, right=side == "right")), want)
    assert em.searchsorted(B, V, side="right", out_int32=True).dtype == "int32"
    with pytest.raises(RuntimeError, match="opposites"):
        em.searchsorted(B, V, side="left", right=True)
    # batched sorted sequences (NaN last)
    seq = np.sort(RNG.standard_normal((3, 6)), axis=1)
    seq[2, -1] = np.nan
    vals = RNG.standard_normal((3, 4))
    vals[1, 0] = np.nan
    for right in (False, True):
        got = _np(em.searchsorted(em.asarray(seq, device=device),
                                  em.asarray(vals, device=device), right=right))  # fmt: skip
        want = [np.searchsorted(seq[r], vals[r], "right" if right else "left") for r in range(3)]
        np.testing.assert_array_equal(got, np.array(want))
    with pytest.raises(RuntimeError, match="boundaries"):
        em.searchsorted(em.asarray(seq), em.asarray(vals[:2]), right=True)
    got = em.searchsorted(em.asarray(seq[:2], device=device), em.asarray(vals[:2], device=device))
    want = [np.searchsorted(seq[r], vals[r]) for r in range(2)]
    np.testing.assert_array_equal(_np(got), np.array(want))  # batched without a PyTorch keyword
    with pytest.raises(ValueError, match="1-dimensional"):  # NumPy's, for other values
        em.searchsorted(em.asarray(seq, device=device), em.asarray(vals[0], device=device))


def test_functions_against_torch(device):
    torch = pytest.importorskip("torch")
    a = RNG.integers(0, 3, (4, 9))
    v, i = em.mode(em.asarray(a, device=device), 1)
    tv, ti = torch.mode(torch.from_numpy(a), 1)
    np.testing.assert_array_equal(_np(v), tv.numpy())
    np.testing.assert_array_equal(_np(i), ti.numpy())
    b = torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64)
    x = torch.tensor([0.5, 1.0, 1.5])
    np.testing.assert_array_equal(
        _np(em.searchsorted(em.asarray(b.numpy()), em.asarray(x.numpy()), right=True)),
        torch.searchsorted(b, x, right=True).numpy(),
    )
    for name in ("hann_window", "hamming_window", "blackman_window", "bartlett_window",
                 "kaiser_window"):  # fmt: skip
        for periodic in (True, False):
            np.testing.assert_allclose(
                _np(getattr(em, name)(9, periodic)), getattr(torch, name)(9, periodic).numpy(),
                rtol=1e-5, atol=1e-6,
            )  # fmt: skip
    sig = RNG.standard_normal((2, 64))
    w = torch.hann_window(16, dtype=torch.float64)
    t = torch.stft(torch.from_numpy(sig), 16, 5, window=w, return_complex=True, normalized=True)
    e = em.stft(em.asarray(sig, device=device), 16, 5, window=em.asarray(w.numpy(),
                device=device), return_complex=True, normalized=True)  # fmt: skip
    np.testing.assert_allclose(_np(e), t.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(
        _np(em.istft(e, 16, 5, window=em.asarray(w.numpy(), device=device), normalized=True,
                     length=64)),
        torch.istft(t, 16, 5, window=w, normalized=True, length=64).numpy(),
        rtol=1e-9, atol=1e-9,
    )  # fmt: skip


# ---- windows, stft, istft -----------------------------------------------------------------------


def test_windows(device):
    sw = pytest.importorskip("scipy.signal.windows")
    cases = {
        "hann_window": lambda m, sym: sw.hann(m, sym=sym),
        "hamming_window": lambda m, sym: sw.hamming(m, sym=sym),
        "blackman_window": lambda m, sym: sw.blackman(m, sym=sym),
        "bartlett_window": lambda m, sym: sw.bartlett(m, sym=sym),
        "kaiser_window": lambda m, sym: sw.kaiser(m, 12.0, sym=sym),
    }
    for name, ref in cases.items():
        fn = getattr(em, name)
        w = fn(10, device=device)
        assert w.dtype == "float32" and w.shape == (10,)
        np.testing.assert_allclose(_np(w), ref(10, False), rtol=1e-5, atol=1e-6)
        w = fn(7, periodic=False, dtype=em.float64, device=device)
        np.testing.assert_allclose(_np(w), ref(7, True), rtol=1e-12, atol=1e-12)
        assert _np(fn(1)).tolist() == [1.0] and fn(0).shape == (0,)
        with pytest.raises(RuntimeError, match="floating point"):
            fn(4, dtype=em.int64)
        with pytest.raises(RuntimeError, match="non-negative"):
            fn(-1)
    np.testing.assert_allclose(
        _np(em.hamming_window(8, alpha=0.5, beta=0.5)), sw.general_hamming(8, 0.5, sym=False),
        rtol=1e-6, atol=1e-7,
    )  # fmt: skip
    np.testing.assert_allclose(
        _np(em.kaiser_window(8, beta=5.0, dtype=em.float64)), sw.kaiser(8, 5.0, sym=False)
    )


def _ref_stft(x, n_fft, hop, win, window, center, pad_mode, normalized, onesided):
    """PyTorch's definition, replayed in NumPy."""
    if center:
        mode = {"reflect": "reflect", "constant": "constant", "replicate": "edge",
                "circular": "wrap"}[pad_mode]  # fmt: skip
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(n_fft // 2, n_fft // 2)], mode=mode)
    w = np.ones(win) if window is None else window
    left = (n_fft - win) // 2
    w = np.concatenate([np.zeros(left), w, np.zeros(n_fft - win - left)])
    m = 1 + (x.shape[-1] - n_fft) // hop
    frames = np.stack([x[..., k * hop : k * hop + n_fft] * w for k in range(m)], -2)
    spec = np.fft.rfft(frames, axis=-1) if onesided else np.fft.fft(frames, axis=-1)
    if normalized:
        spec = spec / np.sqrt(n_fft)
    return np.swapaxes(spec, -1, -2)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_stft_istft(device, dt):
    x = RNG.standard_normal((2, 100)).astype(dt)
    X = em.asarray(x, device=device)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dt == "float32" else {"rtol": 1e-10, "atol": 1e-10}
    for pad_mode in ("reflect", "constant", "replicate", "circular"):
        for win, center, normalized in ((16, True, False), (12, True, True), (16, False, True)):
            w = np.hanning(win + 1)[:-1] if center else np.hamming(win)
            W = em.asarray(w.astype(dt), device=device)
            s = em.stft(X, 16, hop_length=4, win_length=win, window=W, center=center,
                        pad_mode=pad_mode, normalized=normalized, return_complex=True)  # fmt: skip
            want = _ref_stft(x.astype(np.float64), 16, 4, win, w, center, pad_mode, normalized,
                             True)  # fmt: skip
            assert s.shape == want.shape
            assert s.dtype == ("complex64" if dt == "float32" else "complex128")
            np.testing.assert_allclose(_np(s), want, **tol)
            y = em.istft(s, 16, hop_length=4, win_length=win, window=W, center=center,
                         normalized=normalized, length=100 if center else None)  # fmt: skip
            got = _np(y)
            if center:
                assert got.shape == (2, 100)
                np.testing.assert_allclose(got, x, atol=1e-5 if dt == "float32" else 1e-6)
            else:
                np.testing.assert_allclose(got, x[:, : got.shape[-1]], atol=1e-5)
    # defaults: hop n_fft // 4, a rectangular window; two-sided output; 1-D input
    s = em.stft(X[0], 16, return_complex=True, onesided=False)
    want = _ref_stft(x[0].astype(np.float64), 16, 4, 16, None, True, "reflect", False, False)
    np.testing.assert_allclose(_np(s), want, **tol)
    y = em.istft(s, 16, onesided=False, return_complex=True)
    assert y.dtype.kind == "c"
    np.testing.assert_allclose(_np(y).real, x[0][: y.shape[-1]], atol=1e-5)
    y = _np(em.istft(s, 16, onesided=False, length=120))  # 108 samples, then zeros (PyTorch)
    assert y.shape == (120,)
    np.testing.assert_allclose(y[:100], x[0], atol=1e-5)
    np.testing.assert_array_equal(y[108:], 0)
    r = X.stft(16, return_complex=False)
    assert r.shape == (2, 9, 26, 2)
    with pytest.raises(RuntimeError, match="return_complex"):
        em.stft(X, 16)
    with pytest.raises(RuntimeError, match="NOLA"):
        em.istft(em.stft(X, 16, window=em.hann_window(16, dtype=dt, device=device),
                         center=False, return_complex=True), 16,
                 window=em.hann_window(16, dtype=dt, device=device), center=False)  # fmt: skip


def test_stft_istft_grad(device):
    x = RNG.standard_normal((24,))
    w = np.hanning(9)[:-1]
    W = em.asarray(w, device=device)

    def f(v):
        s = em.stft(v, 8, 2, window=W, return_complex=True)
        return em.real(s) * 0.5 + em.imag(s)

    _fd_check(f, [x], device)

    def two_sided(v):  # the complex FFT's backward, and istft's inverse one
        s = em.stft(v, 8, 2, window=W, return_complex=True, onesided=False)
        y = em.istft(s * (1 + 0.5j), 8, 2, window=W, onesided=False, return_complex=True)
        return em.concatenate([em.real(s).reshape(-1), em.imag(y).reshape(-1)])

    _fd_check(two_sided, [x], device)
    spec = _np(em.stft(em.asarray(x), 8, 2, window=em.asarray(w), return_complex=True))

    def g(re):
        s = re + 1j * em.asarray(spec.imag, device=device)
        return em.istft(s, 8, 2, window=W, length=24)

    _fd_check(g, [spec.real.copy()], device)


# ---- SyncBatchNorm ------------------------------------------------------------------------------


def test_sync_batchnorm_single_process(device):
    from ember import nn

    for shape in ((6, 3), (6, 3, 5), (4, 3, 4, 4), (2, 3, 2, 3, 4)):
        x = RNG.standard_normal(shape).astype("float32")
        s, b = nn.SyncBatchNorm(3).to(device), nn.BatchNorm1d(3).to(device)
        X = em.asarray(x, device=device)
        b._ndims = (len(shape),)
        np.testing.assert_allclose(_np(s(X)), _np(b(X)), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(_np(s.running_var), _np(b.running_var), rtol=1e-6)
    with pytest.raises(ValueError, match="at least 2D"):
        nn.SyncBatchNorm(3)(em.ones(3))
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Sequential(nn.BatchNorm1d(5)))
    m[1].eval()
    c = nn.SyncBatchNorm.convert_sync_batchnorm(m)
    assert isinstance(c[1], nn.SyncBatchNorm) and isinstance(c[2][0], nn.SyncBatchNorm)
    assert c[1].weight is m[1].weight and c[1].running_mean is m[1].running_mean
    assert not c[1].training and c[2][0].training
    one = nn.BatchNorm1d(2)
    assert isinstance(nn.SyncBatchNorm.convert_sync_batchnorm(one), nn.SyncBatchNorm)


def case_syncbn():
    """Two ranks, each half of the batch: SyncBatchNorm's output, input gradient, summed
    weight gradient and running statistics equal one BatchNorm2d on the whole batch."""
    import ember.distributed as dist
    from ember import nn

    dist.init_process_group("mpi")
    r, n = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(0)
    full = rng.standard_normal((4 * n, 3, 2, 2)) * 3 + 1
    gy = rng.standard_normal(full.shape)
    sb = nn.SyncBatchNorm(3, dtype=em.float64)
    with em.no_grad():
        sb.weight[...] = em.asarray([1.0, 2.0, 0.5])
    ref2 = nn.BatchNorm2d(3, dtype=em.float64)
    with em.no_grad():
        ref2.weight[...] = sb.weight
    X = em.asarray(full)
    X.requires_grad_(True)
    yr = ref2(X)
    (yr * em.asarray(gy)).sum().backward()
    part = slice(4 * r, 4 * r + 4)
    x = em.asarray(full[part])
    x.requires_grad_(True)
    y = sb(x)
    (y * em.asarray(gy[part])).sum().backward()
    np.testing.assert_allclose(_np(y), _np(yr)[part], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(_np(x.grad), _np(X.grad)[part], rtol=1e-9, atol=1e-10)
    gw = sb.weight.grad.clone()
    dist.all_reduce(gw)
    np.testing.assert_allclose(_np(gw), _np(ref2.weight.grad), rtol=1e-9)
    np.testing.assert_allclose(_np(sb.running_mean), _np(ref2.running_mean), rtol=1e-10)
    np.testing.assert_allclose(_np(sb.running_var), _np(ref2.running_var), rtol=1e-10)
    dist.destroy_process_group()
    os.write(1, f"OK {r}\n".encode())


if __name__ == "__main__":
    globals()["case_" + sys.argv[1]]()
    sys.exit(0)


@pytest.mark.skipif(
    "not __import__('ember.distributed', fromlist=['x']).is_mpi_available()",
    reason="mpi4py / MPI not installed",
)
def test_sync_batchnorm_two_ranks():
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), root]))
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2", HERE, "syncbn"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(x for x in p.stdout.splitlines() if x.startswith("OK")) == ["OK 0", "OK 1"]


def _central_difference(f, a, eps=1e-6):
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        ap, am = a.copy(), a.copy()
        ap[i] += eps
        am[i] -= eps
        g[i] = (f(ap) - f(am)) / (2 * eps)
    return g


@pytest.mark.parametrize("name", ["solve", "inv", "det", "slogdet", "cholesky"])
def test_public_linalg_is_differentiable(name, device):
    """em.linalg.solve/inv/det/slogdet/cholesky (NumPy's names, PyTorch's gradients): the
    C++ factorizations record no derivative, so they go through the autograd Functions."""
    rng = np.random.default_rng(0)
    a0 = rng.normal(size=(4, 4)) + 4 * np.eye(4)
    b0, w0 = rng.normal(size=(4, 2)), rng.normal(size=(4, 4))
    if name == "cholesky":
        a0 = a0 @ a0.T
    e = lambda v: em.asarray(v, device=device)  # noqa: E731
    fns = {
        "solve": (
            lambda a: (np.linalg.solve(a, b0) * w0[:, :2]).sum(),
            lambda a: (em.linalg.solve(a, e(b0)) * e(w0[:, :2])).sum(),
        ),
        "inv": (
            lambda a: (np.linalg.inv(a) * w0).sum(),
            lambda a: (em.linalg.inv(a) * e(w0)).sum(),
        ),
        "det": (np.linalg.det, em.linalg.det),
        "slogdet": (lambda a: np.linalg.slogdet(a)[1], lambda a: em.linalg.slogdet(a)[1]),
        "cholesky": (
            lambda a: (np.linalg.cholesky((a + a.T) / 2) * np.tril(w0)).sum(),
            lambda a: (em.linalg.cholesky((a + a.T) / 2) * e(np.tril(w0))).sum(),
        ),
    }
    f_np, f_em = fns[name]
    x = e(a0).requires_grad_()
    f_em(x).backward()
    want = _central_difference(f_np, a0)
    np.testing.assert_allclose(em.asnumpy(x.grad), want, rtol=1e-5, atol=1e-6)
    with em.no_grad():  # the plain path is unchanged
        np.testing.assert_allclose(float(em.asnumpy(f_em(e(a0)))), f_np(a0), rtol=1e-10)


def test_eigh_is_differentiable(device):
    rng = np.random.default_rng(1)
    x0, w_out, wv = rng.normal(size=(4, 4)), rng.normal(size=(4, 4)), rng.normal(size=4)

    def f_np(x):
        w, v = np.linalg.eigh(x + x.T)
        return float((w * wv).sum() + (v * np.sign(v[:1, :]) * w_out).sum())

    x = em.asarray(x0, device=device).requires_grad_()
    w, v = em.linalg.eigh(x + x.T)
    sign = em.sign(v[:1, :]).detach()  # the eigenvectors' gauge, fixed as in f_np
    e = lambda a: em.asarray(a, device=device)  # noqa: E731
    ((w * e(wv)).sum() + (v * sign * e(w_out)).sum()).backward()
    np.testing.assert_allclose(em.asnumpy(x.grad), _central_difference(f_np, x0), atol=1e-6)
    x.grad = None
    em.linalg.eigvalsh(x + x.T).sum().backward()  # d trace / dx = 2 I
    np.testing.assert_allclose(em.asnumpy(x.grad), 2 * np.eye(4), atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_svd_and_what_uses_it_are_differentiable(shape, device):
    rng = np.random.default_rng(2)
    x0 = rng.normal(size=shape)
    k = min(shape)
    wu, ws, wv = rng.normal(size=(shape[0], k)), rng.normal(size=k), rng.normal(size=(k, shape[1]))

    def gauge(u):  # singular vectors' signs fixed by the first row of U
        return np.sign(u[:1, :])

    def f_np(x):
        u, s, vt = np.linalg.svd(x, full_matrices=False)
        g = gauge(u)
        return float((u * g * wu).sum() + (s * ws).sum() + (vt * g.T * wv).sum())

    e = lambda a: em.asarray(a, device=device)  # noqa: E731
    x = e(x0).requires_grad_()
    u, s, vt = em.linalg.svd(x, full_matrices=False)
    g = em.sign(u[:1, :]).detach()
    ((u * g * e(wu)).sum() + (s * e(ws)).sum() + (vt * g.mT * e(wv)).sum()).backward()
    np.testing.assert_allclose(em.asnumpy(x.grad), _central_difference(f_np, x0), atol=1e-6)
    wp = e(rng.normal(size=shape[::-1]))
    for fn in (
        lambda a: em.linalg.svdvals(a).sum(),
        lambda a: em.linalg.matrix_norm(a, ord="nuc"),
        lambda a: (em.linalg.pinv(a) * wp).sum(),
    ):
        x.grad = None
        fn(x).backward()
        f = lambda a, fn=fn: float(em.asnumpy(fn(e(a))))  # noqa: E731
        np.testing.assert_allclose(em.asnumpy(x.grad), _central_difference(f, x0), atol=1e-5)


@pytest.mark.parametrize("shape", [(4, 4), (6, 3)])
def test_qr_is_differentiable(shape, device):
    rng = np.random.default_rng(3)
    x0 = rng.normal(size=shape)
    wq, wr = rng.normal(size=(shape[0], shape[1])), rng.normal(size=(shape[1], shape[1]))

    def f_np(x):
        q, r = np.linalg.qr(x)
        g = np.sign(np.diag(r))  # the factorization's gauge, fixed by R's diagonal
        return float((q * g * wq).sum() + (r * g[:, None] * wr).sum())

    e = lambda a: em.asarray(a, device=device)  # noqa: E731
    x = e(x0).requires_grad_()
    q, r = em.linalg.qr(x)
    g = em.sign(em.diagonal(r)).detach()
    ((q * g * e(wq)).sum() + (r * g[:, None] * e(wr)).sum()).backward()
    np.testing.assert_allclose(em.asnumpy(x.grad), _central_difference(f_np, x0), atol=1e-6)
    x.grad = None
    (em.linalg.qr(x, mode="r") ** 2).sum().backward()  # |R|^2 = |A|^2: the gradient is 2 A
    np.testing.assert_allclose(em.asnumpy(x.grad), 2 * x0, atol=1e-9)
