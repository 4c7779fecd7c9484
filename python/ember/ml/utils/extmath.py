"""Randomized SVD and sign conventions (scikit-learn's ``utils.extmath``) over ember.linalg."""

from __future__ import annotations

import ember

from .validation import check_random_state

__all__ = ["randomized_range_finder", "randomized_svd", "svd_flip"]


def svd_flip(u, v, u_based_decision=True):
    """Fix signs: the largest-|.| entry of each column of u (or each row of v) is positive."""
    if u_based_decision:
        idx = ember.argmax(ember.abs(u), axis=0)
        signs = ember.sign(ember.take_along_axis(u, idx[None, :], axis=0)[0])
    else:
        idx = ember.argmax(ember.abs(v), axis=1)
        signs = ember.sign(ember.take_along_axis(v, idx[:, None], axis=1)[:, 0])
    signs = ember.where(signs == 0, 1.0, signs).astype(v.dtype)
    if u is not None:
        u = u * signs[None, : u.shape[1]]
    v = v * signs[:, None]
    return u, v


def randomized_range_finder(A, size, n_iter, rng):
    """Orthonormal basis of the approximate range of A (power iterations, QR-normalised)."""
    Q = rng.standard_normal((A.shape[1], size), device=A.device).astype(A.dtype)
    Q = A @ Q
    for _ in range(n_iter):
        Q, _ = ember.linalg.qr(Q)
        Q, _ = ember.linalg.qr(A.T @ Q)
        Q = A @ Q
    Q, _ = ember.linalg.qr(Q)
    return Q


def randomized_svd(
    M,
    n_components,
    *,
    n_oversamples=10,
    n_iter="auto",
    random_state=None,
    flip_sign=True,
    u_based_decision=True,
):
    """Truncated SVD by Halko, Martinsson and Tropp's randomized method: (U, s, Vt)."""
    rng = check_random_state(random_state)
    size = n_components + n_oversamples
    if n_iter == "auto":
        n_iter = 7 if n_components < 0.1 * min(M.shape) else 4
    transpose = M.shape[1] > M.shape[0]
    A = M.T if transpose else M
    Q = randomized_range_finder(A, min(size, min(A.shape)), n_iter, rng)
    B = Q.T @ A
    Uh, s, Vt = ember.linalg.svd(B, full_matrices=False)
    U = Q @ Uh
    if transpose:
        U, Vt = Vt.T, U.T
    U, s, Vt = U[:, :n_components], s[:n_components], Vt[:n_components]
    if flip_sign:
        U, Vt = svd_flip(U, Vt, u_based_decision=u_based_decision)
    return U, s, Vt
