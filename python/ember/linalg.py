"""ember.linalg: the Array API linear-algebra extension and NumPy's common extras, on both
devices. The factorizations run in LAPACK (CPU) or cuSOLVER (GPU) through one batched call per
function (``ember._core._factorize``, see ``include/ember/linalg.hpp``); everything else is
composed here from ember's own ops, so it runs wherever its operands live.

Errors follow NumPy: a singular matrix in ``inv``/``solve``, a matrix that is not positive
definite in ``cholesky``, non-convergence, and non-square or < 2-d inputs raise
:class:`LinAlgError` (a ``ValueError``). Checking for them reads one small array back to the host,
so these functions synchronize the GPU, as NumPy-compatible error reporting requires.
"""

from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as _np

from . import _core, _linalg
from ._array import asarray as _asarray
from ._core import matmul, matrix_transpose
from ._dtypes import result_type as _result_type
from ._linalg import cross, outer, tensordot, vecdot

__all__ = [
    "LinAlgError",
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "tensorinv",
    "tensorsolve",
    "matrix_transpose",
    "norm",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]


class LinAlgError(ValueError):
    """A linear-algebra error: singular matrix, not positive definite, no convergence, or an
    operand that is not a (stack of) square matrices where one is needed."""


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


# ---- helpers -----------------------------------------------------------------------------------


def _solver_dtype(x, who):
    """The dtype LAPACK works in for ``x``: float32/float64/complex64/complex128 as they are,
    integers and bool in float64; float16/bfloat16 are refused, as NumPy does."""
    name = x.dtype.name
    if name in ("float32", "float64", "complex64", "complex128"):
        return x.dtype
    if name in ("float16", "bfloat16"):
        raise TypeError(f"{who}: array type {name} is unsupported in linalg")
    return _core.float64


def _prepare(x, who, square=False):
    """``x`` as an ember array of the solver dtype, checked to be (a stack of) matrices."""
    a = _linalg._arr(x)
    if a.ndim < 2:
        raise LinAlgError(
            f"{who}: {a.ndim}-dimensional array given. Array must be at least two-dimensional"
        )
    if square and a.shape[-1] != a.shape[-2]:
        raise LinAlgError(
            f"{who}: Last 2 dimensions of the array must be square (got shape {tuple(a.shape)})"
        )
    t = _solver_dtype(a, who)
    return a if a.dtype == t else a.astype(t)


def _factorize(kind, a, **kw):
    return _core._factorize(kind, a, **kw)


def _failed(info):
    """Whether any matrix's LAPACK info is > 0 (one read from the device)."""
    return info.size > 0 and int(_core.max(info)) > 0


def _real_dtype(t):
    return {"complex64": _core.float32, "complex128": _core.float64}.get(t.name, t)


def _eye_like(n, a):
    """The n x n identity broadcast over ``a``'s batch, in ``a``'s dtype and device."""
    return _core.broadcast_to(_core.eye(n, dtype=a.dtype, device=a.device), (*a.shape[:-2], n, n))


def _tri_mask(rows, cols, lower, device):
    """Boolean (rows, cols): True on and below (lower) or on and above the diagonal."""
    i = _core.reshape(_core.arange(rows, device=device), (rows, 1))
    j = _core.reshape(_core.arange(cols, device=device), (1, cols))
    return _core.greater_equal(i, j) if lower else _core.less_equal(i, j)


def _tril(a):
    return _core.where(_tri_mask(a.shape[-2], a.shape[-1], True, a.device), a, 0)


def _triu(a):
    return _core.where(_tri_mask(a.shape[-2], a.shape[-1], False, a.device), a, 0)


def _conj_t(a):
    t = matrix_transpose(a)
    return _core.conj(t) if a.dtype.kind == "c" else t


def _lu(a, who):
    if _needs_grad(a):  # the LU factor as an autograd node (ember/_torch_linalg.py)
        lu, ipiv, info = _LUFactor.apply(a)
        return lu, ipiv, info
    lu, ipiv, _, _, _, _, info = _factorize("lu", a)
    return lu, ipiv, info


def _perm_sign(ipiv, dtype):
    """(-1)^(number of row swaps) of getrf's pivots, per matrix, in ``dtype``."""
    n = ipiv.shape[-1]
    idx = _core.arange(1, n + 1, dtype=_core.int64, device=ipiv.device)
    swaps = _core.sum(_core.not_equal(ipiv, idx), axis=-1)
    return (1 - 2 * (swaps % 2)).astype(dtype)


# ---- determinants and inverses -------------------------------------------------------------------


def det(a, /):
    """Determinant of (a stack of) square matrices, from the LU factorization."""
    a = _prepare(a, "ember.linalg.det", square=True)
    lu, ipiv, _ = _lu(a, "ember.linalg.det")
    return _perm_sign(ipiv, a.dtype) * _core.prod(_core._diagonal_view(lu, 0), axis=-1)


def slogdet(a, /):
    """Sign (or phase) and natural log of the absolute value of the determinant."""
    a = _prepare(a, "ember.linalg.slogdet", square=True)
    lu, ipiv, _ = _lu(a, "ember.linalg.slogdet")
    d = _core._diagonal_view(lu, 0)
    ad = _core.abs(d)
    logabs = _core.sum(_core.log(ad), axis=-1)
    phase = _core.where(_core.equal(ad, 0), 0, d / _core.where(_core.equal(ad, 0), 1, ad))
    sign = _perm_sign(ipiv, a.dtype) * _core.prod(phase, axis=-1)
    return SlogdetResult(sign, logabs)


def _solve_lu(a, b, who):
    if _needs_grad(a, b):
        x, info = _Solve.apply(a, b)
        if _failed(info):
            raise LinAlgError(f"{who}: Singular matrix")
        return x
    lu, ipiv, info = _lu(a, who)
    if _failed(info):
        raise LinAlgError(f"{who}: Singular matrix")
    x = _factorize("lu_solve", lu, b=b, ipiv=ipiv)[0]
    return x


def inv(a, /):
    """Inverse of (a stack of) square matrices; a singular one raises LinAlgError."""
    who = "ember.linalg.inv"
    a = _prepare(a, who, square=True)
    n = a.shape[-1]
    if a.size == 0:
        return _core.empty(a.shape, dtype=a.dtype, device=a.device)
    return _solve_lu(a, _eye_like(n, a), who)


def solve(a, b, /):
    """The solution x of a @ x = b. ``b`` is a vector when it is 1-D (NumPy 2 and the Array
    API), otherwise a stack of matrices; batch dimensions broadcast."""
    who = "ember.linalg.solve"
    a = _prepare(a, who, square=True)
    b = _linalg._arr(b, like=a)
    if b.device != a.device:
        raise ValueError(
            f"{who}: operands are on different devices ({a.device} and {b.device}); "
            "move one with .to(device)"
        )
    t = _result_type(a, b)
    t = _solver_dtype(_core.empty((), dtype=t, device="cpu"), who)
    a, b = a.astype(t), b.astype(t)
    n = a.shape[-1]
    vec = b.ndim == 1
    if vec:
        b = _core.reshape(b, (n, 1)) if b.shape[0] == n else b
    if b.ndim < 2 or b.shape[-2] != n:
        raise ValueError(
            f"{who}: b must have shape (..., {n}, K) or ({n},) to match a of shape "
            f"{tuple(a.shape)}; got {tuple(b.shape) if not vec else (b.shape[0],)}"
        )
    batch = _np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    a = _core.broadcast_to(a, (*batch, n, n))
    b = _core.broadcast_to(b, (*batch, n, b.shape[-1]))
    if a.size == 0 or b.size == 0:
        x = _core.zeros(b.shape, dtype=t, device=a.device)
    else:
        x = _solve_lu(a, b, who)
    return _core.reshape(x, x.shape[:-1]) if vec else x


def matrix_power(a, n, /):
    """``a`` raised to the integer power ``n`` (n < 0: of the inverse), by repeated squaring."""
    who = "ember.linalg.matrix_power"
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{who}: exponent must be an integer, got {n!r}") from None
    a = _linalg._arr(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise LinAlgError(f"{who}: Last 2 dimensions of the array must be square")
    if n == 0:
        return _eye_like(a.shape[-1], a).copy() if a.ndim else a
    if n < 0:
        a = inv(a)
        n = -n
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result if result is not a else _asarray(a, copy=True)


# ---- factorizations ------------------------------------------------------------------------------


def cholesky(a, /, *, upper=False):
    """Cholesky factor L (lower, a = L L^H) or, with ``upper``, U = L^H."""
    who = "ember.linalg.cholesky"
    a = _prepare(a, who, square=True)
    if a.size == 0:
        return _core.zeros(a.shape, dtype=a.dtype, device=a.device)
    if _needs_grad(a):
        _, info = _chol_raw(a.detach())
        if _failed(info):
            raise LinAlgError(f"{who}: Matrix is not positive definite")
        low = _Cholesky.apply(a)
        return _conj_t(low) if upper else low
    low, *_, info = _factorize("cholesky", a)
    if _failed(info):
        raise LinAlgError(f"{who}: Matrix is not positive definite")
    low = _tril(low)
    return _conj_t(low) if upper else low


def qr(a, /, mode="reduced"):
    """QR: mode "reduced" (Q m x k, R k x n), "complete", "r" or "raw" (h transposed, tau)."""
    who = "ember.linalg.qr"
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"{who}: Unrecognized mode '{mode}'")
    a = _prepare(a, who)
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    batch = tuple(a.shape[:-2])
    if k == 0:
        rows = m if mode == "complete" else k
        r = _core.zeros((*batch, rows, n), dtype=a.dtype, device=a.device)
        if mode == "r":
            return r
        if mode == "raw":
            return (
                _core.zeros((*batch, n, m), dtype=a.dtype, device=a.device),
                _core.zeros((*batch, 0), dtype=a.dtype, device=a.device),
            )
        q = (
            _eye_like(m, a).copy()
            if mode == "complete"
            else _core.zeros((*batch, m, 0), dtype=a.dtype, device=a.device)
        )
        return QRResult(q, r)
    if _needs_grad(a) and mode in ("reduced", "r") and m >= n and a.dtype.kind != "c":
        return _qr_grad(a, mode) if mode == "r" else QRResult(*_qr_grad(a, mode))
    h, _, tau, *_ = _factorize("qr", a)
    if mode == "raw":
        return matrix_transpose(h), tau
    r = _triu(h if mode == "complete" else h[..., :k, :])
    if mode == "r":
        return r
    q = _factorize("qr_q", h, tau=tau, full=mode == "complete")[0]
    return QRResult(q, r)


def eigh(a, /, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors (columns) of Hermitian / symmetric matrices,
    read from the lower (``UPLO="L"``) or upper triangle."""
    return _eigh(a, UPLO, True, "ember.linalg.eigh")


def eigvalsh(a, /, UPLO="L"):
    """Eigenvalues (ascending) of Hermitian / symmetric matrices."""
    return _eigh(a, UPLO, False, "ember.linalg.eigvalsh")


def _eigh(a, uplo, vectors, who):
    if uplo not in ("L", "U"):
        raise ValueError(f"{who}: UPLO argument must be 'L' or 'U', got {uplo!r}")
    a = _prepare(a, who, square=True)
    n = a.shape[-1]
    if a.size == 0:
        w = _core.zeros((*a.shape[:-1],), dtype=_real_dtype(a.dtype), device=a.device)
        return EighResult(w, _core.zeros(a.shape, dtype=a.dtype, device=a.device)) if vectors else w
    # The upper triangle of a Hermitian matrix is the lower one of its conjugate transpose.
    src = _conj_t(a) if uplo == "U" else a
    if _needs_grad(a):
        w, v, info = _eigh_grad(src)
    else:
        v, _, _, w, _, _, info = _factorize("eigh", src, vectors=vectors)
    if _failed(info):
        raise LinAlgError(f"{who}: Eigenvalues did not converge")
    del n
    return EighResult(w, v) if vectors else w


def eig(a, /):
    """Eigenvalues and right eigenvectors (unit columns) of general square matrices. Like NumPy,
    a real input gives real results when every eigenvalue is real, complex ones otherwise."""
    return _eig(a, True, "ember.linalg.eig")


def eigvals(a, /):
    """Eigenvalues of general square matrices (real when all are, for real input)."""
    return _eig(a, False, "ember.linalg.eigvals")


def _eig(a, vectors, who):
    a = _prepare(a, who, square=True)
    real_input = a.dtype.kind == "f"
    if a.size == 0:
        w = _core.zeros(a.shape[:-1], dtype=a.dtype, device=a.device)
        return EigResult(w, _core.zeros(a.shape, dtype=a.dtype, device=a.device)) if vectors else w
    v, _, _, w, _, _, info = _factorize("eig", a, vectors=vectors)
    if _failed(info):
        raise LinAlgError(f"{who}: Eigenvalues did not converge")
    if real_input and not bool(_core.any(_core.not_equal(_core.imag(w), 0))):
        w = _core.real(w)
        v = _core.real(v) if vectors else v
    return EigResult(w, v) if vectors else w


def svd(a, /, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition a = U @ diag(S) @ Vh (S descending). ``hermitian`` is
    accepted for NumPy compatibility; the general algorithm is used."""
    who = "ember.linalg.svd"
    a = _prepare(a, who)
    if not compute_uv:
        return svdvals(a)
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    batch = tuple(a.shape[:-2])
    if k == 0 or a.size == 0:
        s = _core.zeros((*batch, k), dtype=_real_dtype(a.dtype), device=a.device)

        def side(r):
            if full_matrices:
                return _eye_like(
                    r, _core.empty((*batch, r, r), dtype=a.dtype, device=a.device)
                ).copy()
            return _core.zeros(
                (*batch, r, k) if r == m else (*batch, k, r), dtype=a.dtype, device=a.device
            )

        return SVDResult(side(m), s, side(n))
    s, u, vt, info = _svd_factor(a, full_matrices)
    if _failed(info):
        raise LinAlgError(f"{who}: SVD did not converge")
    return SVDResult(u, s, vt)


def svdvals(x, /):
    """Singular values, descending, of (a stack of) matrices."""
    who = "ember.linalg.svdvals"
    a = _prepare(x, who)
    k = min(a.shape[-2], a.shape[-1])
    if k == 0 or a.size == 0:
        return _core.zeros((*a.shape[:-2], k), dtype=_real_dtype(a.dtype), device=a.device)
    s, info = _svdvals_factor(a)
    if _failed(info):
        raise LinAlgError(f"{who}: SVD did not converge")
    return s


# ---- derived from the SVD ------------------------------------------------------------------------


def _eps(t):
    return 1.1920928955078125e-07 if t.name in ("float32", "complex64") else 2.220446049250313e-16


def matrix_rank(A, /, tol=None, hermitian=False, *, rtol=None):
    """Number of singular values above ``tol`` (default: ``rtol`` or max(M, N) * eps, times
    the largest singular value)."""
    A = _linalg._arr(A)
    if A.ndim < 2:
        return _core.astype(_core.any(_core.not_equal(A, 0)), _core.int64)
    s = svdvals(A)
    if tol is None:
        if rtol is None:
            rtol = max(A.shape[-2:]) * _eps(s.dtype)
        rtol = _linalg._arr(rtol, like=s)
        if rtol.ndim:
            rtol = _core.expand_dims(rtol, axis=-1)
        tol = _core.max(s, axis=-1, keepdims=True) * rtol
    else:
        tol = _linalg._arr(tol, like=s)
        if tol.ndim:
            tol = _core.expand_dims(tol, axis=-1)
    return _core.sum(_core.greater(s, tol), axis=-1)


def _pinv_from_svd(u, s, vt, cutoff):
    big = _core.greater(s, cutoff)
    s_inv = _core.where(big, 1 / _core.where(big, s, 1), 0).astype(u.dtype)
    return matmul(_conj_t(vt) * _core.expand_dims(s_inv, axis=-2), _conj_t(u))


def pinv(a, /, rcond=None, hermitian=False, *, rtol=None):
    """Moore-Penrose pseudo-inverse via the SVD; singular values at or below ``rcond`` (NumPy:
    default 1e-15) or ``rtol`` (Array API: default max(M, N) * eps) times the largest are
    treated as zero."""
    who = "ember.linalg.pinv"
    a = _prepare(a, who)
    if rcond is not None and rtol is not None:
        raise ValueError(f"{who}: `rtol` and `rcond` can't be both set.")
    m, n = a.shape[-2], a.shape[-1]
    if a.size == 0:
        return _core.zeros((*a.shape[:-2], n, m), dtype=a.dtype, device=a.device)
    if rcond is None:
        rcond = rtol if rtol is not None else 1e-15
    u, s, vt = svd(a, full_matrices=False)
    rc = _linalg._arr(rcond, like=s)
    if rc.ndim:
        rc = _core.expand_dims(rc, axis=-1)
    cutoff = _core.max(s, axis=-1, keepdims=True) * rc
    return _pinv_from_svd(u, s, vt, cutoff)


def lstsq(a, b, rcond=None):
    """Least-squares solution of a @ x = b (NumPy's lstsq): ``(x, residuals, rank, s)``. Singular
    values below ``rcond`` (default eps * max(M, N)) times the largest are treated as zero; the
    residuals are the squared 2-norms of b - a @ x per column when a has full column rank and
    M > N, an empty array otherwise."""
    who = "ember.linalg.lstsq"
    a = _prepare(a, who)
    b = _linalg._arr(b, like=a)
    if a.ndim != 2:
        raise LinAlgError(f"{who}: a must be 2-dimensional, got {a.ndim} dimensions")
    m, n = a.shape
    vec = b.ndim == 1
    if b.ndim not in (1, 2) or b.shape[0] != m:
        raise LinAlgError(
            f"{who}: Incompatible dimensions: a is {tuple(a.shape)}, b is {tuple(b.shape)}"
        )
    t = _solver_dtype(_core.empty((), dtype=_result_type(a, b), device="cpu"), who)
    a, b = a.astype(t), b.astype(t)
    b2 = _core.reshape(b, (m, 1)) if vec else b
    if rcond is None:
        rcond = _eps(t) * max(m, n)
    rt = _real_dtype(t)
    if min(m, n) == 0:
        x = _core.zeros((n, b2.shape[1]), dtype=t, device=a.device)
        s = _core.zeros((0,), dtype=rt, device=a.device)
        rank = 0
    else:
        u, s, vt = svd(a, full_matrices=False)
        cutoff = _core.max(s) * rcond
        rank = int(_core.sum(_core.greater(s, cutoff)))
        s_inv = _core.where(
            _core.greater(s, cutoff), 1 / _core.where(_core.greater(s, cutoff), s, 1), 0
        )
        x = matmul(
            _conj_t(vt), _core.expand_dims(s_inv.astype(t), axis=-1) * matmul(_conj_t(u), b2)
        )
    if rank == n and m > n:
        r = b2 - matmul(a, x)
        resid = _core.sum(_core.real(r * _core.conj(r)) if t.kind == "c" else r * r, axis=0)
    else:
        resid = _core.zeros((0,), dtype=rt, device=a.device)
    if vec:
        x = _core.reshape(x, (n,))
    return x, resid, rank, s


def cond(x, p=None):
    """Condition number: ratio of extreme singular values (p = None, 2, -2) or
    norm(x, p) * norm(inv(x), p) for p in 'fro', 'nuc', inf, -inf, 1, -1."""
    who = "ember.linalg.cond"
    a = _prepare(x, who)
    if p is None or p == 2 or p == -2:
        s = svdvals(a)
        r = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
        return r
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError(f"{who}: Last 2 dimensions of the array must be square")
    n = a.shape[-1]
    lu, ipiv, _ = _lu(a, who)
    ainv = _factorize("lu_solve", lu, b=_eye_like(n, a), ipiv=ipiv)[0]
    r = matrix_norm(a, ord=p) * matrix_norm(ainv, ord=p)
    return _core.where(_core.isnan(r), math.inf, r)


# ---- norms ---------------------------------------------------------------------------------------


def _norm_dtype(x):
    k = x.dtype.kind
    if k in ("f", "c"):
        return x
    return x.astype(_core.float64)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector p-norm over ``axis`` (all axes when None): ord = inf, -inf, 0 (count of nonzeros)
    or any real p (p < 1 gives the quasi-norm sum(|x|^p)^(1/p))."""
    x = _norm_dtype(_linalg._arr(x))
    ax = x
    if axis is None:
        ax = _core.reshape(x, (-1,))
        axes = 0
    else:
        axes = axis
    a = _core.abs(ax)
    if ord == math.inf:
        r = (
            _core.max(a, axis=axes, keepdims=keepdims)
            if a.size
            else _empty_red(a, axes, keepdims, 0.0)
        )
    elif ord == -math.inf:
        r = (
            _core.min(a, axis=axes, keepdims=keepdims)
            if a.size
            else _empty_red(a, axes, keepdims, math.inf)
        )
    elif ord == 0:
        r = _core.sum(_core.not_equal(a, 0), axis=axes, keepdims=keepdims).astype(a.dtype)
    elif ord == 1:
        r = _core.sum(a, axis=axes, keepdims=keepdims)
    elif ord == 2:
        r = _core.sqrt(_core.sum(a * a, axis=axes, keepdims=keepdims))
    else:
        if isinstance(ord, str):
            raise ValueError(f"ember.linalg.vector_norm: Invalid norm order '{ord}' for vectors")
        p = float(ord)
        r = _core.sum(a**p, axis=axes, keepdims=keepdims) ** (1.0 / p)
    if axis is None and keepdims:
        r = _core.reshape(r, (1,) * x.ndim)
    return r


def _empty_red(a, axes, keepdims, value):
    return _core.full(
        _core.sum(a, axis=axes, keepdims=keepdims).shape, value, dtype=a.dtype, device=a.device
    )


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Matrix norm of the last two axes: 'fro', 'nuc', inf, -inf, 1, -1, 2, -2."""
    return _matrix_norm(_norm_dtype(_linalg._arr(x)), (-2, -1), keepdims, ord)


def _matrix_norm(x, axes, keepdims, ord):
    who = "ember.linalg.matrix_norm"
    if x.ndim < 2:
        raise ValueError(f"{who}: the input must be at least 2-d, got {x.ndim}-d")
    r0, c0 = (ax % x.ndim for ax in axes)
    if r0 == c0:
        raise ValueError(f"{who}: Duplicate axes given.")
    if ord in ("fro", None):
        a = _core.abs(x)
        r = _core.sqrt(_core.sum(a * a, axis=(r0, c0), keepdims=keepdims))
        return r
    if ord in ("nuc", 2, -2):
        rest = [i for i in range(x.ndim) if i not in (r0, c0)]
        m = _core.permute_dims(x, (*rest, r0, c0))
        s = svdvals(m)
        if ord == "nuc":
            r = _core.sum(s, axis=-1)
        else:
            r = _core.max(s, axis=-1) if ord == 2 else _core.min(s, axis=-1)
        if keepdims:
            for ax in sorted((r0, c0)):
                r = _core.expand_dims(r, axis=ax)
        return r
    if ord in (1, -1, math.inf, -math.inf):
        a = _core.abs(x)
        if ord in (1, -1):
            red, other = r0, c0
        else:
            red, other = c0, r0
        s = _core.sum(a, axis=red, keepdims=True)
        f = _core.max if ord in (1, math.inf) else _core.min
        r = f(s, axis=other, keepdims=True)
        if not keepdims:
            r = _core.squeeze(r, axis=tuple(sorted((r0, c0))))
        return r
    raise ValueError(f"{who}: Invalid norm order {ord!r} for matrices")


def norm(x, ord=None, axis=None, keepdims=False):
    """NumPy's norm: the 2-norm of the flattened array by default; a vector norm over one axis,
    a matrix norm over two."""
    x = _norm_dtype(_linalg._arr(x))
    if axis is None:
        if ord is None:
            r = vector_norm(x, ord=2)
            return _core.reshape(r, (1,) * x.ndim) if keepdims else r
        if x.ndim == 1:
            return vector_norm(x, ord=ord, keepdims=keepdims)
        if x.ndim == 2:
            return _matrix_norm(x, (0, 1), keepdims, ord)
        raise ValueError("ember.linalg.norm: Improper number of dimensions to norm.")
    if isinstance(axis, int):
        axis = (axis,)
    axis = tuple(axis)
    if len(axis) == 1:
        if isinstance(ord, str):
            raise ValueError(f"ember.linalg.norm: Invalid norm order '{ord}' for vectors")
        return vector_norm(x, axis=axis[0], keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axis) == 2:
        return _matrix_norm(x, axis, keepdims, "fro" if ord is None else ord)
    raise ValueError("ember.linalg.norm: Improper number of dimensions to norm.")


# ---- the rest of the extension -------------------------------------------------------------------


def diagonal(x, /, *, offset=0):
    """The ``offset`` diagonal of the last two axes (a view)."""
    return _core._diagonal_view(_linalg._arr(x), int(offset))


def trace(x, /, *, offset=0, dtype=None):
    """Sum of the ``offset`` diagonal of the last two axes."""
    return _core.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def _as_array(a):
    if isinstance(a, _core.ndarray):
        return a
    return _asarray(a)


def multi_dot(arrays, *, out=None):
    """The product of two or more matrices in the cheapest order (dynamic programming over the
    parenthesizations, as NumPy's multi_dot); a 1-D first/last operand is a row/column
    vector."""
    mats = [_as_array(a) for a in arrays]
    n = len(mats)
    if n < 2:
        raise ValueError("ember.linalg.multi_dot: expected at least two arrays")
    first_1d, last_1d = mats[0].ndim == 1, mats[-1].ndim == 1
    if first_1d:
        mats[0] = mats[0].reshape((1, -1))
    if last_1d:
        mats[-1] = mats[-1].reshape((-1, 1))
    for a in mats:
        if a.ndim != 2:
            raise LinAlgError(
                f"ember.linalg.multi_dot: {a.ndim}-dimensional array given; "
                "arrays must be 2-d (the first and last may be 1-d)"
            )
    dims = [mats[0].shape[0]] + [a.shape[1] for a in mats]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return matmul(product(i, k), product(k + 1, j))

    r = product(0, n - 1)
    if first_1d and last_1d:
        r = r.reshape(())
    elif first_1d:
        r = r.reshape((-1,))
    elif last_1d:
        r = r.reshape((-1,))
    if out is not None:
        out[...] = r
        return out
    return r


def tensorinv(a, ind=2):
    """The inverse of a as a tensor: tensordot(tensorinv(a), a, ind) is the identity."""
    a = _as_array(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError("ember.linalg.tensorinv: ind must be a positive integer")
    old = tuple(a.shape)
    rows = math.prod(old[:ind])
    inv_shape = old[ind:] + old[:ind]
    return inv(a.reshape((rows, -1))).reshape(inv_shape)


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, b.ndim) == b."""
    a = _as_array(a)
    b = _as_array(b)
    if axes is not None:
        order = [k for k in range(a.ndim) if k not in [ax % a.ndim for ax in axes]]
        order += [ax % a.ndim for ax in axes]
        a = _core.permute_dims(a, tuple(order))
    rest = tuple(a.shape[b.ndim :])
    n = math.prod(rest)
    if math.prod(a.shape[: b.ndim]) != n:
        raise LinAlgError(
            "ember.linalg.tensorsolve: the input is not square: "
            f"{math.prod(a.shape[: b.ndim])} equations for {n} unknowns"
        )
    x = solve(a.reshape((n, n)), b.reshape((n, 1)))
    return x.reshape(rest)


# PyTorch's names; autograd paths (the C++ factorizations record no derivative).
from ._torch_linalg import (  # noqa: E402
    _chol_raw,
    _Cholesky,
    _LUFactor,
    _Solve,
    cholesky_ex,
    inv_ex,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    matrix_exp,
    solve_ex,
    solve_triangular,
    vander,
)
from ._torch_linalg import _graph as _needs_grad  # noqa: E402
from ._torch_linalg2 import _eigh_grad, _qr_grad, _svd_factor, _svdvals_factor  # noqa: E402

__all__ += ["cholesky_ex", "inv_ex", "lu", "lu_factor", "lu_factor_ex", "lu_solve"]
__all__ += ["matrix_exp", "solve_ex", "solve_triangular", "vander"]
