"""The backward formulas of ember.linalg's eigendecomposition and SVD (PyTorch's): autograd
Functions that ember.linalg.eigh/eigvalsh/svd/svdvals (and so pinv, lstsq, matrix norms) use
when an input requires grad; the C++ factorizations record no derivative."""

from __future__ import annotations

from . import _core
from ._torch_linalg import _graph, _mH, _tri
from .autograd import Function

# ---- Hermitian eigendecomposition ----------------------------------------------------------------


class _Eigh(Function):
    """(w, V) of a Hermitian A (its lower triangle read); backward (PyTorch's, with the gauge
    projection): gA = V (diag(gw) + skew(V^H gV) / 2 / E) V^H, E_ij = w_j - w_i (i != j). Equal
    eigenvalues make E zero there: the gradient is then inf/NaN, as PyTorch's."""

    @staticmethod
    def forward(ctx, a):
        v, _, _, w, _, _, info = _core._factorize("eigh", a, vectors=True)
        ctx.save_for_backward(w, v)
        ctx.mark_non_differentiable(info)
        return w, v, info

    @staticmethod
    def backward(ctx, gw, gv, _ginfo):
        w, v = ctx.saved_tensors
        n = w.shape[-1]
        eye = _core.eye(n, dtype=w.dtype, device=w.device)
        if gv is not None:
            x = _mH(v) @ gv
            x = (x - _mH(x)) * 0.5
            e = _core.expand_dims(w, -2) - _core.expand_dims(w, -1)  # e[i, j] = w_j - w_i
            g = x / (e + eye)  # the diagonal of the skew part is 0: any nonzero divisor
            g = g - g * eye.astype(g.dtype)
        else:
            g = _core.zeros((*w.shape, n), dtype=v.dtype, device=v.device)
        if gw is not None:
            g = g + _core.expand_dims(gw, -1) * eye.astype(g.dtype)
        return (v @ g @ _mH(v),)


def _eigh_grad(src):
    """(w, V, info) of Hermitian ``src`` as an autograd node (ember.linalg.eigh's path when an
    input requires grad)."""
    return _Eigh.apply(src)


# ---- SVD -----------------------------------------------------------------------------------------


class _SVD(Function):
    """(U, S, Vh, info) of the reduced SVD of a real A; backward (Townsend's, PyTorch's for real
    inputs): gA = U (F o (U^T gU - gU^T U) S + S F o (V^T gV - gV^T V) + diag(gS)) V^T
    + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T), F_ij = 1 / (s_j^2 - s_i^2) (i != j).
    Repeated or zero singular values make it inf/NaN where U or V enters, as PyTorch's."""

    @staticmethod
    def forward(ctx, a):
        _, _, _, s, u, vt, info = _core._factorize("svd", a, vectors=True, full=False)
        ctx.save_for_backward(u, s, vt)
        ctx.mark_non_differentiable(info)
        return u, s, vt, info

    @staticmethod
    def backward(ctx, gu, gs, gvt, _ginfo):
        u, s, vt = ctx.saved_tensors
        if u.dtype.kind == "c":
            raise RuntimeError("ember.linalg.svd: the backward of a complex SVD is not implemented")
        v = _mH(vt)
        k = s.shape[-1]
        eye = _core.eye(k, dtype=s.dtype, device=s.device)
        core = _core.zeros((*s.shape, k), dtype=u.dtype, device=u.device)
        if gs is not None:
            core = core + _core.expand_dims(gs, -1) * eye
        extra = None
        if gu is not None or gvt is not None:
            s2 = s * s
            e = _core.expand_dims(s2, -2) - _core.expand_dims(s2, -1)  # e[i, j] = s_j^2 - s_i^2
            f = (1.0 - eye) / (e + eye)
            if gu is not None:
                utg = _mH(u) @ gu
                core = core + (f * (utg - _mH(utg))) * _core.expand_dims(s, -2)
                extra = ((gu - u @ utg) / _core.expand_dims(s, -2)) @ vt
            if gvt is not None:
                gv = _mH(gvt)
                vtg = vt @ gv
                core = core + _core.expand_dims(s, -1) * (f * (vtg - _mH(vtg)))
                ev = u @ _mH((gv - v @ vtg) / _core.expand_dims(s, -2))
                extra = ev if extra is None else extra + ev
        ga = u @ core @ vt
        return (ga if extra is None else ga + extra,)


def _svd_factor(a, full):
    """(s, u, vt, info) of ember.linalg.svd: an autograd node when `a` requires grad (the reduced
    SVD, or full of a square matrix); the C++ factorization otherwise."""
    m, n = a.shape[-2], a.shape[-1]
    if _graph(a) and a.dtype.kind != "c" and (not full or m == n):
        u, s, vt, info = _SVD.apply(a)
        return s, u, vt, info
    _, _, _, s, u, vt, info = _core._factorize("svd", a, vectors=True, full=bool(full))
    return s, u, vt, info


def _svdvals_factor(a):
    """(s, info) of ember.linalg.svdvals (differentiable through the SVD when `a` requires
    grad)."""
    if _graph(a) and a.dtype.kind != "c":
        _, s, _, info = _SVD.apply(a)
        return s, info
    _, _, _, s, _, _, info = _core._factorize("svd", a, vectors=False)
    return s, info


# ---- QR ------------------------------------------------------------------------------------------


class _QR(Function):
    """(Q, R) of the reduced QR of a real m x n A, m >= n; backward (PyTorch's for m >= n):
    gA = (gQ + Q copyltu(M)) R^-T, M = R gR^T - gQ^T Q, copyltu(M) = tril(M, -1) + its
    transpose + diag(M)."""

    @staticmethod
    def forward(ctx, a):
        h, _, tau, *_ = _core._factorize("qr", a)
        k = a.shape[-1]
        r = _tri(h[..., :k, :], False)
        q = _core._factorize("qr_q", h, tau=tau, full=False)[0]
        ctx.save_for_backward(q, r)
        return q, r

    @staticmethod
    def backward(ctx, gq, gr):
        from ._torch_linalg import _trisolve

        q, r = ctx.saved_tensors
        m = _core.zeros(r.shape, dtype=r.dtype, device=r.device)
        if gr is not None:
            m = m + r @ _mH(gr)
        if gq is not None:
            m = m - _mH(gq) @ q
        low = _tri(m, True, -1)
        sym = low + _mH(low) + _tri(_tri(m, True), False)  # copyltu(M)
        b = q @ sym if gq is None else gq + q @ sym
        # gA = b R^-T: solve R X^T = b^T (R upper triangular)
        return (_mH(_trisolve(r, _mH(b), True, False)),)


def _qr_grad(a, mode):
    """ember.linalg.qr's autograd path: reduced or r mode of a real matrix with m >= n."""
    q, r = _QR.apply(a)
    return r if mode == "r" else (q, r)
