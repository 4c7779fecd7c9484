"""PyTorch's ``torch.linalg`` functions that NumPy's ``linalg`` lacks (``ember.linalg`` adds them):
``solve_triangular``, ``cholesky_ex``, ``inv_ex``, ``solve_ex``, ``lu_factor``, ``lu_factor_ex``,
``lu_solve``, ``lu``, ``matrix_exp``, ``vander``; and the top-level ``cholesky_solve`` /
``cholesky_inverse``.

The factorizations run in LAPACK / cuSOLVER through ``ember._core._factorize`` (getrf, getrs,
potrf), which has no backward; the differentiable pieces are autograd Functions whose backward is
composed of matmuls and these same Functions (so it is differentiable again):

- ``_TriSolve``: the triangular solve. No trsm is exposed by the core, so the forward is the
  LU solve (``ember.linalg.solve``'s getrf + getrs) of the masked triangle (with a unit diagonal
  for ``unitriangular``); the backward is X = A^-1 B's: gB = A^-H g, gA = -gB X^H (masked).
- ``_Solve``: the general solve (and inverse, ``B = I``), with the same backward.
- ``_Cholesky``: potrf, backward A_bar = sym(L^-H Phi(L^H L_bar) L^-1) (Phi: lower triangle,
  diagonal halved).
- ``_LUFactor``: getrf, backward PyTorch's (square, wide and tall A).

Everything else (``lu``, ``lu_solve``, ``cholesky_solve``, ``matrix_exp`` and ``vander``) is
composed of ember ops and these, on the operands' device."""

from __future__ import annotations

import builtins
import operator
from typing import NamedTuple

import numpy as np

from . import _core
from ._array import asnumpy as _asnumpy
from ._indexing import take_along_axis as _take_along_axis
from ._joining import concat as _concat
from ._joining import stack as _stack
from ._torch_errors import TorchArgumentError as _ArgErr
from .autograd import Function

__all__ = [
    "cholesky_ex",
    "cholesky_inverse",
    "cholesky_solve",
    "inv_ex",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matrix_exp",
    "solve_ex",
    "solve_triangular",
    "vander",
]


class CholeskyExResult(NamedTuple):
    L: object
    info: object


class InvExResult(NamedTuple):
    inverse: object
    info: object


class SolveExResult(NamedTuple):
    result: object
    info: object


class LUFactorResult(NamedTuple):
    LU: object
    pivots: object


class LUFactorExResult(NamedTuple):
    LU: object
    pivots: object
    info: object


class LUResult(NamedTuple):
    P: object
    L: object
    U: object


# ---- helpers -------------------------------------------------------------------------------------


def _la():
    from . import linalg

    return linalg


def _mH(x):
    t = _core.matrix_transpose(x)
    return _core.conj(t) if x.dtype.kind == "c" else t


def _tri(x, lower, k=0):
    """The lower (on and below diagonal k) or upper (on and above k) triangle; differentiable."""
    r, c = x.shape[-2], x.shape[-1]
    i = _core.reshape(_core.arange(r, device=x.device), (r, 1))
    j = _core.reshape(_core.arange(c, device=x.device), (1, c))
    m = _core.greater_equal(i + k, j) if lower else _core.less_equal(i + k, j)
    return _core.where(m, x, _core.zeros((), dtype=x.dtype, device=x.device))


def _eye(n, like, batch=()):
    e = _core.eye(n, dtype=like.dtype, device=like.device)
    return _core.broadcast_to(e, (*batch, n, n)) if batch else e


def _sum_to(g, shape):
    """``g`` summed over the leading dimensions that broadcasting added or stretched."""
    shape = tuple(shape)
    if tuple(g.shape) == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, d in enumerate(shape) if d == 1 and g.shape[i + lead] != 1
    )
    return _core.reshape(_core.sum(g, axis=axes), shape)


def _graph(*arrays):
    return _core._is_grad_enabled() and any(
        isinstance(a, _core.ndarray) and a.requires_grad for a in arrays
    )


def _matrix(x, who, name="A", square=False):
    if not isinstance(x, _core.ndarray):
        raise TypeError(f"{who}: {name} must be an ember array, got {type(x).__name__}")
    if x.ndim < 2:
        raise _ArgErr(
            f"{who}: The input tensor {name} must have at least 2 dimensions, got {x.ndim}"
        )
    if square and x.shape[-1] != x.shape[-2]:
        raise _ArgErr(
            f"{who}: {name} must be batches of square matrices, but they are "
            f"{x.shape[-2]} by {x.shape[-1]} matrices"
        )
    if x.dtype.name not in ("float32", "float64", "complex64", "complex128"):
        raise _ArgErr(
            f"{who}: Expected a floating point or complex tensor as input. Got {x.dtype.name}"
        )
    return x


def _same(a, b, who, na="A", nb="B"):
    if a.dtype != b.dtype:
        raise _ArgErr(
            f"{who}: Expected {na} and {nb} to have the same dtype, but found {na} of type "
            f"{a.dtype.name} and {nb} of type {b.dtype.name} instead."
        )
    if a.device != b.device:
        raise _ArgErr(
            f"{who}: Expected all tensors to be on the same device, but found {a.device} and "
            f"{b.device}"
        )


def _bcast(a, b):
    """a (..., n, n) and b (..., n, k) with their batch dimensions broadcast together."""
    batch = tuple(np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    return (
        _core.broadcast_to(a, (*batch, *a.shape[-2:])),
        _core.broadcast_to(b, (*batch, *b.shape[-2:])),
    )


def _lu_raw(a):
    """getrf of a (contiguous copy): (LU, 1-based int64 pivots, int info)."""
    lu, ipiv, _, _, _, _, info = _core._factorize("lu", a)
    return lu, ipiv, info


def _solve_raw(a, b):
    """x with a x = b (batch dims equal, no checks): getrf + getrs; inf/nan when singular."""
    if a.size == 0 or b.size == 0:
        return _core.zeros(b.shape, dtype=b.dtype, device=b.device), None
    lu, ipiv, info = _lu_raw(a)
    x = _core._factorize("lu_solve", lu, b=b, ipiv=ipiv)[0]
    return x, info


# ---- solves --------------------------------------------------------------------------------------


class _Solve(Function):
    """(X = A^-1 B, getrf's info) for nonempty A, B (batch dims already broadcast)."""

    @staticmethod
    def forward(ctx, a, b):
        x, info = _solve_raw(a, b)
        ctx.save_for_backward(a, x)
        ctx.mark_non_differentiable(info)
        return x, info

    @staticmethod
    def backward(ctx, g, _ginfo):
        a, x = ctx.saved_tensors
        gb = _solve(_mH(a), g)
        return -(gb @ _mH(x)), gb


def _solve_info(a, b):
    """(A^-1 B, info or None) with the batch dims broadcast; differentiable in A and B."""
    a, b = _bcast(a, b)
    if a.size == 0 or b.size == 0:
        return _core.zeros(b.shape, dtype=b.dtype, device=b.device), None
    if _graph(a, b):
        return _Solve.apply(a, b)
    return _solve_raw(a, b)


def _solve(a, b):
    return _solve_info(a, b)[0]


def _masked_triangle(a, upper, unit):
    if not unit:
        return _tri(a, not upper)
    eye = _core.eye(a.shape[-1], dtype=a.dtype, device=a.device)
    return _tri(a, not upper, -1 if not upper else 1) + eye


class _TriSolve(Function):
    """X with T X = B, T the upper/lower (unit) triangle of A (batch dims broadcast)."""

    @staticmethod
    def forward(ctx, a, b, upper, unit):
        x, _ = _solve_raw(_masked_triangle(a, upper, unit), b)
        ctx.upper, ctx.unit = upper, unit
        ctx.save_for_backward(a, x)
        return x

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved_tensors
        gb = _trisolve(_mH(a), g, not ctx.upper, ctx.unit)
        k = 0 if not ctx.unit else (1 if ctx.upper else -1)  # unit: strict triangle
        ga = _tri(-(gb @ _mH(x)), not ctx.upper, k)
        return ga, gb, None, None


def _trisolve(a, b, upper, unit):
    a, b = _bcast(a, b)
    if _graph(a, b):
        return _TriSolve.apply(a, b, upper, unit)
    return _solve_raw(_masked_triangle(a, upper, unit), b)[0]


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):  # noqa: N803
    """X with A X = B (``left``) or X A = B, A upper or lower triangular (its other triangle is
    ignored; ``unitriangular``: its diagonal taken as ones). Batch dimensions broadcast;
    differentiable in A and B."""
    who = "linalg.solve_triangular"
    A = _matrix(A, who, "A")  # noqa: N806
    B = _matrix(B, who, "B")  # noqa: N806
    _same(A, B, who)
    upper, unit = builtins.bool(upper), builtins.bool(unitriangular)
    if A.shape[-1] != A.shape[-2]:
        raise _ArgErr(f"{who}: A must be batches of square matrices, got {tuple(A.shape)}")
    n = A.shape[-1]
    k = B.shape[-2] if left else B.shape[-1]
    if k != n:
        raise _ArgErr(
            f"{who}: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({tuple(A.shape)} and {tuple(B.shape)})"
        )
    if left:
        x = _trisolve(A, B, upper, unit)
    else:
        t = _core.matrix_transpose
        x = t(_trisolve(t(A), t(B), not upper, unit))
    return _out(x, out)


def _out(x, out):
    if out is None:
        return x
    out[...] = x
    return out


def _info_check(info, who, what):
    """Raises LinAlgError naming the first failing batch element (PyTorch's message)."""
    if info is None or info.size == 0:
        return
    host = _asnumpy(info).reshape(-1)  # one read from the device
    bad = np.nonzero(host > 0)[0]
    if bad.size == 0:
        return
    b = int(bad[0])
    pre = f"(Batch element {b}): " if info.ndim > 0 else ""
    raise _la().LinAlgError(f"{what[0]}: {pre}{what[1].format(int(host[b]))}")


def _info(info, shape, device):
    if info is None:
        return _core.zeros(shape, dtype=_core.int32, device=device)
    return _core.reshape(info, shape).astype(_core.int32)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):  # noqa: N803
    """(X, info): A X = B (``left``) or X A = B; info > 0 marks a singular matrix (its first zero
    pivot, 1-based). ``B`` is a batch of vectors when it is 1-D or A's shape without its last
    dimension (PyTorch's rule). Differentiable in A and B."""
    who = "linalg.solve_ex"
    A = _matrix(A, who, "A", square=True)  # noqa: N806
    if not isinstance(B, _core.ndarray):
        raise TypeError(f"{who}: B must be an ember array, got {type(B).__name__}")
    _same(A, B, who)
    n = A.shape[-1]
    vec = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    b = _core.expand_dims(B, -1 if left else -2) if vec else B
    a = A if left else _core.matrix_transpose(A)
    if not left:
        b = _core.matrix_transpose(b)
    if b.ndim < 2 or b.shape[-2] != n:
        raise _ArgErr(
            f"{who}: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({tuple(A.shape)} and {tuple(B.shape)})"
        )
    x, info = _solve_info(a, b)
    info = _info(info, x.shape[:-2], A.device)
    if check_errors:
        _info_check(info, who, ("torch.linalg.solve_ex", _SINGULAR))
    if not left:
        x = _core.matrix_transpose(x)
    if vec:
        x = _core.squeeze(x, axis=-1 if left else -2)
    return SolveExResult(_out(x, out), info)


_SINGULAR = (
    "The diagonal element {} is zero, the inversion could not be completed because the input "
    "matrix is singular."
)


def inv_ex(A, *, check_errors=False, out=None):  # noqa: N803
    """(A^-1, info): info > 0 marks a singular matrix (its first zero pivot, 1-based) instead of
    raising (``check_errors=True`` raises LinAlgError). Differentiable."""
    who = "linalg.inv_ex"
    A = _matrix(A, who, "A", square=True)  # noqa: N806
    n = A.shape[-1]
    eye = _eye(n, A, tuple(A.shape[:-2]))
    x, info = _solve_info(A, eye)
    info = _info(info, A.shape[:-2], A.device)
    if check_errors:
        _info_check(info, who, ("torch.linalg.inv_ex", _SINGULAR))
    return InvExResult(_out(x, out), info)


# ---- Cholesky ------------------------------------------------------------------------------------


def _chol_raw(a):
    low, *_, info = _core._factorize("cholesky", a)
    return _tri(low, True), info


class _Cholesky(Function):
    @staticmethod
    def forward(ctx, a):
        low, info = _chol_raw(a)
        ctx.save_for_backward(low)
        return low

    @staticmethod
    def backward(ctx, g):
        (low,) = ctx.saved_tensors
        n = low.shape[-1]
        phi = _tri(_mH(low) @ g, True)
        eye = _core.eye(n, dtype=low.dtype, device=low.device)
        phi = phi - 0.5 * phi * eye
        s = _trisolve(_mH(low), _mH(_trisolve(_mH(low), _mH(phi), True, False)), True, False)
        return (s + _mH(s)) * 0.5


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):  # noqa: N803
    """(L, info): the Cholesky factor (lower, A = L L^H; ``upper``: U = L^H) and info > 0, the
    order of the leading minor that is not positive-definite, instead of raising
    (``check_errors=True`` raises LinAlgError). Differentiable."""
    who = "linalg.cholesky_ex"
    A = _matrix(A, who, "A", square=True)  # noqa: N806
    if A.size == 0:
        low, info = _core.zeros(A.shape, dtype=A.dtype, device=A.device), None
    else:
        low, info = _chol_raw(A)
        if _graph(A):
            low = _Cholesky.apply(A)
    info = _info(info, A.shape[:-2], A.device)
    if check_errors:
        _info_check(
            info,
            who,
            (
                "torch.linalg.cholesky_ex",
                "The factorization could not be completed because the input is not positive-"
                "definite (the leading minor of order {} is not positive-definite).",
            ),
        )
    r = _mH(low) if upper else low
    return CholeskyExResult(_out(r, out), info)


def cholesky_solve(B, L, upper=False, *, out=None):  # noqa: N803
    """X with A X = B for A = L L^H (``upper``: A = U^H U) given the Cholesky factor. Batch
    dimensions broadcast; differentiable in B and L."""
    who = "cholesky_solve"
    B = _matrix(B, who, "B")  # noqa: N806
    L = _matrix(L, who, "L", square=True)  # noqa: N806
    _same(B, L, who, "B", "L")
    if B.shape[-2] != L.shape[-1]:
        raise _ArgErr(
            f"{who}: Incompatible matrix sizes for cholesky_solve: each L matrix is "
            f"{L.shape[-2]} by {L.shape[-1]} but each b matrix is {B.shape[-2]} by {B.shape[-1]}"
        )
    if upper:
        y = _trisolve(_mH(L), B, False, False)
        x = _trisolve(L, y, True, False)
    else:
        y = _trisolve(L, B, False, False)
        x = _trisolve(_mH(L), y, True, False)
    return _out(x, out)


def cholesky_inverse(L, upper=False, *, out=None):  # noqa: N803
    """A^-1 for A = L L^H (``upper``: A = U^H U) given the Cholesky factor; batched and
    differentiable."""
    who = "cholesky_inverse"
    L = _matrix(L, who, "input", square=True)  # noqa: N806
    eye = _eye(L.shape[-1], L, tuple(L.shape[:-2]))
    return _out(cholesky_solve(eye, L, upper), out)


# ---- LU ------------------------------------------------------------------------------------------


def _perm(piv, m):
    """The row permutation (..., m) int64 of 1-based sequential swaps ``piv`` (..., k): row r of
    P^T A is row perm[r] of A. Computed on the pivots' device, k small steps."""
    batch = tuple(piv.shape[:-1])
    idx = _core.arange(m, dtype=_core.int64, device=piv.device)
    perm = _core.broadcast_to(idx, (*batch, m))
    piv = piv.astype(_core.int64) - 1
    for i in range(piv.shape[-1]):
        j = piv[..., i : i + 1]
        pi = perm[..., i : i + 1]
        pj = _take_along_axis(perm, j, axis=-1)
        perm = _core.where(idx == i, pj, _core.where(idx == j, pi, perm))
    return perm


def _perm_matrix(perm, dtype):
    """P (..., m, m) with A = P (P^T A): P[i, r] = (perm[r] == i)."""
    m = perm.shape[-1]
    i = _core.reshape(_core.arange(m, dtype=_core.int64, device=perm.device), (m, 1))
    return _core.equal(_core.expand_dims(perm, -2), i).astype(dtype)


def _unpack(lu):
    m, n = lu.shape[-2], lu.shape[-1]
    k = min(m, n)
    low = _tri(lu[..., :, :k], True, -1) + _core.eye(m, k, dtype=lu.dtype, device=lu.device)
    up = _tri(lu[..., :k, :], False)
    return low, up


class _LUFactor(Function):
    """(LU, pivots): getrf; backward PyTorch's LU backward (square, wide and tall)."""

    @staticmethod
    def forward(ctx, a):
        lu, ipiv, info = _lu_raw(a)
        piv = ipiv.astype(_core.int32)
        ctx.save_for_backward(lu, piv)
        ctx.mark_non_differentiable(piv, info)
        return lu, piv, info

    @staticmethod
    def backward(ctx, g, _gpiv, _ginfo):
        lu, piv = ctx.saved_tensors
        m, n = lu.shape[-2], lu.shape[-1]
        k = min(m, n)
        low, up = _unpack(lu)
        gl = _tri(g[..., :, :k], True, -1)
        gu = _tri(g[..., :k, :], False)
        p = _perm_matrix(_perm(piv, m), lu.dtype)
        return p @ _lu_grad(low, up, gl, gu, m, n, k)


def _lu_grad(low, up, gl, gu, m, n, k):
    """The gradient with respect to P^T A of L, U = lu(P^T A) given gL, gU."""
    if m == n:
        phi = _tri(_mH(low) @ gl, True, -1) + _tri(gu @ _mH(up), False)
        x = _trisolve(_mH(low), phi, True, True)  # L^-H phi
        return _core.matrix_transpose(  # (L^-H phi) U^-H
            _trisolve(_core.matrix_transpose(_mH(up)), _core.matrix_transpose(x), True, False)
        )
    if m < n:  # wide: U = [U1 | U2]
        u1, u2, gu1, gu2 = up[..., :, :k], up[..., :, k:], gu[..., :, :k], gu[..., :, k:]
        g2 = _trisolve(_mH(low), gu2, True, True)  # L^-H gU2
        gl = gl - _tri(g2 @ _mH(u2), True, -1)
        g1 = _lu_grad(low, u1, gl, gu1, k, k, k)
        return _concat([g1, g2], axis=-1)
    l1, l2, gl1, gl2 = low[..., :k, :], low[..., k:, :], gl[..., :k, :], gl[..., k:, :]
    t = _core.matrix_transpose
    g2 = t(_trisolve(t(_mH(up)), t(gl2), True, False))  # gL2 U^-H
    gu = gu - _tri(_mH(l2) @ g2, False)
    g1 = _lu_grad(l1, up, gl1, gu, k, k, k)
    return _concat([g1, g2], axis=-2)


def _lu_nopivot(a):
    """Packed LU without row exchanges (``pivot=False``): k Gaussian elimination steps of masked
    rank-1 updates on the whole matrix, so it runs on the device and autograd differentiates it.
    info: the first zero pivot (1-based), 0 if none."""
    m, n = a.shape[-2], a.shape[-1]
    rows = _core.reshape(_core.arange(m, device=a.device), (m, 1))
    cols = _core.reshape(_core.arange(n, device=a.device), (1, n))
    x = a
    for j in range(min(m, n)):
        zero = _core.zeros((), dtype=a.dtype, device=a.device)
        lcol = _core.where(rows > j, x[..., :, j : j + 1] / x[..., j : j + 1, j : j + 1], zero)
        urow = _core.where(cols > j, x[..., j : j + 1, :], zero)
        x = x - lcol @ urow
        x = _core.where(_core.logical_and(rows > j, cols == j), lcol, x)
    d = _core._diagonal_view(x, 0)
    zero = _core.equal(d, 0)
    first = _core.argmax(zero, axis=-1).astype(_core.int32) + 1
    info = _core.where(_core.any(zero, axis=-1), first, 0).astype(_core.int32)
    return x, info


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):  # noqa: N803
    """(LU, pivots, info): the packed LU factorization of (a batch of) m x n matrices, A = P L U
    (L unit lower, stored below the diagonal), pivots the 1-based int32 row swaps (LAPACK's),
    info > 0 where U has a zero on its diagonal. ``pivot=False``: no row exchanges (pivots
    1..k), by elimination in ember ops (PyTorch has it on CUDA only). Differentiable in A."""
    who = "linalg.lu_factor_ex"
    A = _matrix(A, who, "A")  # noqa: N806
    k = min(A.shape[-2], A.shape[-1])
    if A.size == 0:
        lu = _core.zeros(A.shape, dtype=A.dtype, device=A.device)
        piv = _core.broadcast_to(
            _core.arange(1, k + 1, dtype=_core.int32, device=A.device), (*A.shape[:-2], k)
        )
        info = None
    elif not pivot:
        lu, info = _lu_nopivot(A)
        piv = _core.broadcast_to(
            _core.arange(1, k + 1, dtype=_core.int32, device=A.device), (*A.shape[:-2], k)
        )
    elif _graph(A):
        lu, piv, info = _LUFactor.apply(A)
    else:
        lu, ipiv, info = _lu_raw(A)
        piv = ipiv.astype(_core.int32)
    info = _info(info, A.shape[:-2], A.device)
    if check_errors:
        _info_check(
            info,
            who,
            ("torch.linalg.lu_factor_ex", "The factorization could not be completed because "
             "the input is singular (U[{0}, {0}] is zero)."),
        )  # fmt: skip
    if out is not None:
        out[0][...], out[1][...] = lu, piv
        lu, piv = out[0], out[1]
    return LUFactorExResult(lu, piv, info)


def lu_factor(A, *, pivot=True, out=None):  # noqa: N803
    """(LU, pivots) of :func:`lu_factor_ex`; a singular matrix raises LinAlgError as PyTorch's
    (its factorization is still defined, but lu_factor checks)."""
    lu, piv, info = lu_factor_ex(A, pivot=pivot, out=out)
    _info_check(
        info,
        "linalg.lu_factor",
        ("torch.linalg.lu_factor", "The factorization could not be completed because the input "
         "is singular (U[{0}, {0}] is zero)."),
    )  # fmt: skip
    return LUFactorResult(lu, piv)


def lu(A, *, pivot=True, out=None):  # noqa: N803
    """(P, L, U) with A = P L U: P (m, m) a permutation, L (m, k) unit lower, U (k, n) upper,
    k = min(m, n) (``pivot=False``: A = L U and P empty, as PyTorch's). Differentiable in A
    (through L and U)."""
    LU, piv, _ = lu_factor_ex(A, pivot=pivot)  # noqa: N806
    low, up = _unpack(LU)
    if pivot:
        p = _perm_matrix(_perm(piv, A.shape[-2]), A.dtype)
    else:
        p = _core.empty((0,), dtype=A.dtype, device=A.device)
    if out is not None:
        for o, r in zip(out, (p, low, up), strict=True):
            o[...] = r
        return LUResult(*out)
    return LUResult(p, low, up)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):  # noqa: N803
    """X with A X = B (``left``; X A = B otherwise; ``adjoint``: A^H in place of A) for the LU
    factorization (LU, pivots) of A (:func:`lu_factor`). Batch dims broadcast; differentiable in
    LU and B."""
    who = "linalg.lu_solve"
    LU = _matrix(LU, who, "LU", square=True)  # noqa: N806
    B = _matrix(B, who, "B")  # noqa: N806
    _same(LU, B, who, "LU", "B")
    if not isinstance(pivots, _core.ndarray) or pivots.dtype.kind not in "iu":
        raise _ArgErr(f"{who}: pivots should be a tensor of dtype int32")
    n = LU.shape[-1]
    if tuple(pivots.shape) != (*LU.shape[:-2], n):
        raise _ArgErr(
            f"{who}: Expected LU.shape[:-1] and pivots.shape to be the same, got "
            f"{tuple(LU.shape[:-1])} and {tuple(pivots.shape)}"
        )
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise _ArgErr(
            f"{who}: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({tuple(LU.shape)} and {tuple(B.shape)})"
        )
    t = _core.matrix_transpose
    p = _perm_matrix(_perm(pivots, n), LU.dtype)
    # A = P L U. Right solves go through the transposed system: X A = B <=> A^T X^T = B^T.
    # X A = B <=> A^H conj(X^T) = conj(B^T), and X A^H = B <=> A conj(X^T) = conj(B^T).
    conj = LU.dtype.kind == "c"
    if not left:
        B = _core.conj(t(B)) if conj else t(B)  # noqa: N806
        adjoint = not adjoint
    if not adjoint:  # X = U^-1 L^-1 P^T B
        y = _trisolve(LU, _mH(p) @ B, False, True)
        x = _trisolve(LU, y, True, False)
    else:  # A^H X = B: X = P L^-H U^-H B
        y = _trisolve(_mH(LU), B, False, False)
        x = p @ _trisolve(_mH(LU), y, True, True)
    if not left:
        if conj:
            x = _core.conj(x)
        x = t(x)
    return _out(x, out)


# ---- matrix exponential and Vandermonde ----------------------------------------------------------

# Higham (2005): the Pade [13/13] coefficients and the 1-norm bound under which it is accurate
# to double precision; theta for lower degrees lets small matrices use fewer products.
_B13 = (
    64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
    129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
    40840800.0, 960960.0, 16380.0, 182.0, 1.0,
)  # fmt: skip
_THETA13 = 5.371920351148152


def _pade13(a, eye):
    b = _B13
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (
        a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
        + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye
    )  # fmt: skip
    v = (
        a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2)
        + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    )  # fmt: skip
    return _solve(v - u, v + u)


def matrix_exp(A):  # noqa: N803
    """e^A of (a batch of) square matrices: scaling and squaring with the [13/13] Pade
    approximant (Higham 2005), each matrix scaled by its own 2^-s so that its 1-norm is under
    theta_13, then squared s times. Differentiable (through the products and the solve)."""
    who = "linalg.matrix_exp"
    A = _matrix(A, who, "A", square=True)  # noqa: N806
    n = A.shape[-1]
    if A.size == 0:
        return _core.zeros(A.shape, dtype=A.dtype, device=A.device)
    if n == 1:
        return _core.exp(A)
    batch = tuple(A.shape[:-2])
    d = A.detach()
    norm = _core.max(_core.sum(_core.abs(d), axis=-2), axis=-1)  # (batch) 1-norms
    ratio = norm.astype(_core.float64) / _THETA13
    s = _core.ceil(_core.log2(_core.maximum(ratio, 1.0)))
    s = _core.where(_core.isfinite(s), s, 0.0)
    smax = int(_core.max(s))  # one read: the number of squarings
    real = {"complex64": _core.float32, "complex128": _core.float64}.get(A.dtype.name, A.dtype)
    scale = (2.0 ** (-s)).astype(real)
    a = A * _core.reshape(scale, (*batch, 1, 1))
    r = _pade13(a, _eye(n, A, batch))
    for i in range(smax):
        sq = r @ r
        r = _core.where(_core.reshape(s > i, (*batch, 1, 1)), sq, r)
    return r


def vander(x, *, N=None):  # noqa: N803
    """PyTorch's Vandermonde matrix: (..., n, N) with columns x^0, x^1, ..., x^(N-1) (increasing
    powers; N defaults to n). Differentiable."""
    who = "linalg.vander"
    if not isinstance(x, _core.ndarray):
        raise TypeError(f"{who}: x must be an ember array, got {type(x).__name__}")
    if x.ndim < 1:
        raise _ArgErr(f"{who}: x must have at least one dimension")
    N = x.shape[-1] if N is None else operator.index(N)  # noqa: N806
    if N < 1:
        raise _ArgErr(f"{who}: N must be greater than 1.")
    cols = [_core.ones(x.shape, dtype=x.dtype, device=x.device)]
    for _ in range(N - 1):
        cols.append(cols[-1] * x)
    return _stack(cols, axis=-1)
