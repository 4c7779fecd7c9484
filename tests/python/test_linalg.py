"""ember.linalg against NumPy on both devices: every function over dtypes, batch shapes,
non-contiguous operands and edge sizes; factorizations are checked by their defining identities
(q @ r == a, u @ diag(s) @ vh == a, a @ v == v * w), not by the signs of vectors."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from _helpers import em, same, to_ember, to_numpy
from ember import linalg as LA

FLOATS = ["float32", "float64", "complex64", "complex128"]
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-10, "complex128": 1e-10}


def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def well_conditioned(shape, dtype, seed=0):
    """Random square matrices plus n * I: safely invertible."""
    a = rand(shape, dtype, seed)
    n = shape[-1]
    return (a + n * np.eye(n)).astype(dtype)


def hermitian_pd(shape, dtype, seed=0):
    a = rand(shape, dtype, seed)
    n = shape[-1]
    h = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)
    return h.astype(dtype)


def close(got, want, dtype, scale=1.0):
    tol = TOL[dtype] * scale
    np.testing.assert_allclose(to_numpy(got), want, rtol=tol, atol=tol)


def ct(a):
    return np.conj(np.swapaxes(a, -1, -2))


# ---- determinants, inverses, solves -------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (5, 5), (2, 4, 4), (2, 3, 6, 6)])
def test_det_slogdet_inv(device, dtype, shape):
    a = well_conditioned(shape, dtype)
    x = to_ember(a, device)
    close(LA.det(x), np.linalg.det(a), dtype, scale=10)
    s, ld = LA.slogdet(x)
    es, eld = np.linalg.slogdet(a)
    close(s, es, dtype)
    close(ld, eld, dtype)
    close(LA.inv(x), np.linalg.inv(a), dtype, scale=10)


def test_det_of_singular_and_permuted(device):
    a = np.array([[0.0, 1.0], [1.0, 0.0]])
    assert to_numpy(LA.det(to_ember(a, device))) == pytest.approx(-1.0)
    z = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert abs(float(to_numpy(LA.det(to_ember(z, device))))) < 1e-12
    s, ld = LA.slogdet(to_ember(z, device))
    assert float(to_numpy(s)) == 0.0 and to_numpy(ld) == -np.inf


def test_integer_input_is_float64(device):
    a = np.array([[2, 1], [1, 3]])
    r = LA.inv(to_ember(a, device))
    assert r.dtype == ember.float64
    close(r, np.linalg.inv(a), "float64")


def test_inv_singular_raises(device):
    with pytest.raises(LA.LinAlgError, match="Singular"):
        LA.inv(to_ember(np.ones((3, 3)), device))
    with pytest.raises(LA.LinAlgError, match="Singular"):
        LA.solve(to_ember(np.zeros((2, 2)), device), to_ember(np.ones(2), device))
    assert issubclass(LA.LinAlgError, ValueError)


def test_non_square_and_low_dim_raise(device):
    with pytest.raises(LA.LinAlgError, match="square"):
        LA.inv(to_ember(np.ones((2, 3)), device))
    with pytest.raises(LA.LinAlgError, match="two-dimensional"):
        LA.det(to_ember(np.ones(3), device))
    with pytest.raises(TypeError, match="float16"):
        LA.inv(to_ember(np.eye(2, dtype=np.float16), device))


@pytest.mark.parametrize("dtype", FLOATS)
def test_solve_vector_matrix_and_broadcast(device, dtype):
    a = well_conditioned((4, 4), dtype, 1)
    b = rand((4,), dtype, 2)
    close(LA.solve(to_ember(a, device), to_ember(b, device)), np.linalg.solve(a, b), dtype, 10)
    bm = rand((4, 3), dtype, 3)
    close(LA.solve(to_ember(a, device), to_ember(bm, device)), np.linalg.solve(a, bm), dtype, 10)
    ab = well_conditioned((2, 4, 4), dtype, 4)
    bb = rand((3, 1, 4, 2), dtype, 5)
    close(
        LA.solve(to_ember(ab, device), to_ember(bb, device)),
        np.linalg.solve(ab, bb),
        dtype,
        10,
    )


def test_solve_non_contiguous_and_mixed_dtypes(device):
    a = well_conditioned((6, 6), "float64", 7)
    b = rand((6, 4), "float32", 8)
    xa = to_ember(a, device)[::2, ::2]
    xb = to_ember(b, device)[::2, 1:3]
    r = LA.solve(xa, xb)
    assert r.dtype == ember.float64
    close(r, np.linalg.solve(a[::2, ::2], b[::2, 1:3].astype(np.float64)), "float64")
    close(LA.inv(ember.matrix_transpose(to_ember(a, device))), np.linalg.inv(a.T), "float64")


def test_empty_matrices(device):
    e = to_ember(np.zeros((2, 0, 0)), device)
    assert to_numpy(LA.inv(e)).shape == (2, 0, 0)
    np.testing.assert_array_equal(to_numpy(LA.det(e)), [1.0, 1.0])
    assert to_numpy(LA.svdvals(to_ember(np.zeros((0, 3)), device))).shape == (0,)
    u, s, vh = LA.svd(to_ember(np.zeros((0, 3)), device))
    assert to_numpy(u).shape == (0, 0) and to_numpy(vh).shape == (3, 3)
    np.testing.assert_array_equal(to_numpy(vh), np.eye(3))
    q, r = LA.qr(to_ember(np.zeros((3, 0)), device), mode="complete")
    np.testing.assert_array_equal(to_numpy(q), np.eye(3))
    assert to_numpy(r).shape == (3, 0)
    assert to_numpy(LA.pinv(to_ember(np.zeros((0, 3)), device))).shape == (3, 0)


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 5])
def test_matrix_power(device, n):
    a = well_conditioned((2, 3, 3), "float64", 9) / 3
    close(LA.matrix_power(to_ember(a, device), n), np.linalg.matrix_power(a, n), "float64", 100)


def test_matrix_power_bad_exponent(device):
    with pytest.raises(TypeError, match="integer"):
        LA.matrix_power(to_ember(np.eye(2), device), 1.5)


# ---- factorizations ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5), (2, 40, 3, 3), (3, 150, 150)])
def test_cholesky(device, dtype, shape):
    a = hermitian_pd(shape, dtype)
    low = LA.cholesky(to_ember(a, device))
    lo = to_numpy(low)
    np.testing.assert_array_equal(np.triu(lo, 1), 0)
    close(low, np.linalg.cholesky(a), dtype, 10)
    up = to_numpy(LA.cholesky(to_ember(a, device), upper=True))
    np.testing.assert_allclose(ct(up) @ up, a, rtol=TOL[dtype] * 50, atol=TOL[dtype] * 50)


def test_cholesky_not_positive_definite(device):
    with pytest.raises(LA.LinAlgError, match="positive definite"):
        LA.cholesky(to_ember(np.array([[1.0, 2.0], [2.0, 1.0]]), device))
    # one bad matrix in a batch (the GPU's batched routine) raises too
    batch = hermitian_pd((6, 3, 3), "float64")
    batch[4] = [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    with pytest.raises(LA.LinAlgError, match="positive definite"):
        LA.cholesky(to_ember(batch, device))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 2), (1, 1)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_identity(device, dtype, shape, mode):
    a = rand(shape, dtype, 11)
    q, r = LA.qr(to_ember(a, device), mode=mode)
    qn, rn = to_numpy(q), to_numpy(r)
    eq, er = np.linalg.qr(a, mode=mode)
    assert qn.shape == eq.shape and rn.shape == er.shape and qn.dtype == eq.dtype
    tol = TOL[dtype] * 20
    np.testing.assert_allclose(qn @ rn, a, rtol=tol, atol=tol)
    k = qn.shape[-1]
    np.testing.assert_allclose(
        ct(qn) @ qn, np.broadcast_to(np.eye(k), ct(qn).shape[:-1] + (k,)), atol=tol
    )
    np.testing.assert_array_equal(np.tril(rn, -1), 0)
    np.testing.assert_allclose(
        np.abs(to_numpy(LA.qr(to_ember(a, device), mode="r"))),
        np.abs(np.linalg.qr(a, mode="r")),
        rtol=tol,
        atol=tol,
    )


def test_qr_raw_and_bad_mode(device):
    a = rand((5, 3), "float64", 12)
    h, tau = LA.qr(to_ember(a, device), mode="raw")
    eh, etau = np.linalg.qr(a, mode="raw")
    assert to_numpy(h).shape == eh.shape and to_numpy(tau).shape == etau.shape
    np.testing.assert_allclose(np.abs(to_numpy(tau)), np.abs(etau), rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match="mode"):
        LA.qr(to_ember(a, device), mode="economic")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (2, 4, 4)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(device, dtype, shape, uplo):
    a = hermitian_pd(shape, dtype, 13)
    # Make the unused triangle garbage: only the named one may be read.
    junk = (
        np.tril(rand(shape, dtype, 14), -1) if uplo == "U" else np.triu(rand(shape, dtype, 14), 1)
    )
    g = (np.triu(a) if uplo == "U" else np.tril(a)) + junk
    w, v = LA.eigh(to_ember(g, device), UPLO=uplo)
    ew = np.linalg.eigvalsh(a)
    close(w, ew, dtype, 50)
    vn = to_numpy(v)
    tol = TOL[dtype] * 200
    np.testing.assert_allclose(
        a @ vn, vn * to_numpy(w)[..., None, :], rtol=tol, atol=tol * shape[-1]
    )
    close(LA.eigvalsh(to_ember(g, device), UPLO=uplo), ew, dtype, 50)
    assert to_numpy(w).dtype == ew.dtype


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 5), (7, 3), (3, 7), (2, 4, 6), (1, 1), (1, 4)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_identity(device, dtype, shape, full):
    a = rand(shape, dtype, 15)
    u, s, vh = LA.svd(to_ember(a, device), full_matrices=full)
    un, sn, vn = to_numpy(u), to_numpy(s), to_numpy(vh)
    eu, es, ev = np.linalg.svd(a, full_matrices=full)
    assert un.shape == eu.shape and sn.shape == es.shape and vn.shape == ev.shape
    assert sn.dtype == es.dtype and un.dtype == eu.dtype
    close(s, es, dtype, 20)
    k = min(shape[-2:])
    tol = TOL[dtype] * 50
    rec = (un[..., :, :k] * sn[..., None, :]) @ vn[..., :k, :]
    np.testing.assert_allclose(rec, a, rtol=tol, atol=tol)
    close(LA.svdvals(to_ember(a, device)), es, dtype, 20)
    close(LA.svd(to_ember(a, device), compute_uv=False), es, dtype, 20)


def test_svd_non_contiguous(device):
    a = rand((8, 9), "float64", 16)
    x = to_ember(a, device)[1::2, ::3]
    close(LA.svdvals(x), np.linalg.svd(a[1::2, ::3], compute_uv=False), "float64")


@pytest.mark.parametrize("dtype", FLOATS)
def test_eig(device, dtype):
    a = rand((2, 5, 5), dtype, 17)
    w, v = LA.eig(to_ember(a, device))
    wn, vn = to_numpy(w), to_numpy(v)
    tol = TOL[dtype] * 200
    np.testing.assert_allclose(a @ vn, vn * wn[..., None, :], rtol=tol, atol=tol)
    np.testing.assert_allclose(np.linalg.norm(vn, axis=-2), 1.0, rtol=tol)
    ew = np.linalg.eigvals(a)
    key = lambda z: np.sort_complex(np.round(z, 3))  # noqa: E731
    np.testing.assert_allclose(
        key(to_numpy(LA.eigvals(to_ember(a, device)))), key(ew), rtol=1e-2, atol=1e-2
    )


def test_eig_real_results_when_real(device):
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    w = LA.eigvals(to_ember(a, device))
    assert w.dtype == ember.float64
    np.testing.assert_allclose(np.sort(to_numpy(w)), np.sort(np.linalg.eigvals(a)))
    rot = np.array([[0.0, -1.0], [1.0, 0.0]])
    w, v = LA.eig(to_ember(rot, device))
    assert w.dtype == ember.complex128
    np.testing.assert_allclose(np.sort_complex(to_numpy(w)), [-1j, 1j], atol=1e-12)
    np.testing.assert_allclose(rot @ to_numpy(v), to_numpy(v) * to_numpy(w), atol=1e-12)


# ---- from the SVD --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 4, 5)])
def test_pinv(device, dtype, shape):
    a = rand(shape, dtype, 18)
    close(LA.pinv(to_ember(a, device)), np.linalg.pinv(a), dtype, 50)


def test_matrix_rank(device):
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    assert int(to_numpy(LA.matrix_rank(to_ember(a, device)))) == 2
    b = np.stack([np.eye(4), np.diag([1.0, 1.0, 0.0, 0.0])])
    np.testing.assert_array_equal(to_numpy(LA.matrix_rank(to_ember(b, device))), [4, 2])
    assert int(to_numpy(LA.matrix_rank(to_ember(np.zeros(3), device)))) == 0
    assert int(to_numpy(LA.matrix_rank(to_ember(a, device), tol=10.0))) == np.linalg.matrix_rank(
        a, tol=10.0
    )


@pytest.mark.parametrize("shape", [(6, 3), (3, 3), (3, 6)])
@pytest.mark.parametrize("bdim", [1, 2])
def test_lstsq(device, shape, bdim):
    a = rand(shape, "float64", 19)
    b = rand((shape[0],) if bdim == 1 else (shape[0], 2), "float64", 20)
    x, res, rank, s = LA.lstsq(to_ember(a, device), to_ember(b, device))
    ex, eres, erank, es = np.linalg.lstsq(a, b)
    close(x, ex, "float64", 100)
    assert to_numpy(res).shape == eres.shape
    close(res, eres, "float64", 100)
    assert rank == erank
    close(s, es, "float64")


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf])
def test_cond(device, p):
    a = well_conditioned((2, 4, 4), "float64", 21)
    close(LA.cond(to_ember(a, device), p), np.linalg.cond(a, p), "float64", 1000)


# ---- norms -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int64"])
@pytest.mark.parametrize("ord", [2, 1, math.inf, -math.inf, 0, 3, 0.5])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_vector_norm(device, dtype, ord, axis):
    a = rand((4, 5), "complex128" if dtype.startswith("c") else "float64", 22)
    a = (a * 3).astype(dtype)
    got = LA.vector_norm(to_ember(a, device), ord=ord, axis=axis)
    ax = axis if axis is not None else None
    want = np.linalg.vector_norm(a, ord=ord, axis=ax) if hasattr(np.linalg, "vector_norm") else None
    t = "float32" if dtype in ("float32", "complex64") else "float64"
    close(got, want, t, 10)
    kd = LA.vector_norm(to_ember(a, device), ord=ord, axis=axis, keepdims=True)
    assert to_numpy(kd).shape == np.linalg.vector_norm(a, ord=ord, axis=ax, keepdims=True).shape


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norm(device, ord, keepdims):
    a = rand((2, 4, 3), "float64", 23)
    got = LA.matrix_norm(to_ember(a, device), ord=ord, keepdims=keepdims)
    close(got, np.linalg.matrix_norm(a, ord=ord, keepdims=keepdims), "float64", 10)


@pytest.mark.parametrize(
    "ord,axis", [(None, None), (None, 1), (2, 0), ("fro", None), (1, (1, 0)), (math.inf, None)]
)
def test_norm(device, ord, axis):
    a = rand((3, 4), "float64", 24)
    close(
        LA.norm(to_ember(a, device), ord=ord, axis=axis),
        np.linalg.norm(a, ord=ord, axis=axis),
        "float64",
    )
    close(
        LA.norm(to_ember(a[0], device), ord=ord if ord != "fro" else None),
        np.linalg.norm(a[0], ord=ord if ord != "fro" else None),
        "float64",
    )


def test_norm_errors(device):
    with pytest.raises(ValueError, match="order"):
        LA.matrix_norm(to_ember(np.eye(2), device), ord=3)
    with pytest.raises(ValueError):
        LA.norm(to_ember(np.ones((2, 2, 2)), device), ord=2)


# ---- cross ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex128"])
def test_cross(device, dtype):
    a = (rand((4, 3), "float64", 25) * 4).astype(dtype)
    b = (rand((3,), "float64", 26) * 4).astype(dtype)
    close(
        LA.cross(to_ember(a, device), to_ember(b, device)),
        np.cross(a, b),
        "float64" if dtype != "float32" else "float32",
    )
    c = np.ascontiguousarray(a.T)
    close(
        LA.cross(to_ember(c, device), to_ember(c[:, ::-1].copy(), device), axis=0),
        np.cross(c, c[:, ::-1], axis=0),
        "float64" if dtype != "float32" else "float32",
    )
    with pytest.raises(ValueError, match="3"):
        LA.cross(to_ember(np.ones((2, 2)), device), to_ember(np.ones((2, 2)), device))


RNG = np.random.default_rng(13)


def test_matvec_vecmat(device):
    m, v = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4))
    same(ember.matvec(em(m, device), em(v, device)), np.einsum("bij,bj->bi", m, v))
    w = RNG.standard_normal((2, 3))
    same(ember.vecmat(em(w, device), em(m, device)), np.einsum("bi,bij->bj", w, m))
