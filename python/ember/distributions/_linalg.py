"""Differentiable Cholesky factor and triangular solve for MultivariateNormal.

ember.linalg's factorizations have no backward yet, so these are autograd Functions: the
forward is ember.linalg's, the backward composed of matmuls and these same Functions (so it
is differentiable again). Cholesky's backward is the standard one (Murray 2016):
A_bar = sym(L^-T Phi(L^T L_bar) L^-1), Phi = the lower triangle with the diagonal halved."""

from __future__ import annotations

import ember as _em

from .. import _core
from ..autograd import Function


def _mT(x):
    return _core.matrix_transpose(x)


def _sum_to(g, shape):
    """g summed over the leading dimensions broadcasting added or stretched."""
    shape = tuple(shape)
    if tuple(g.shape) == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, d in enumerate(shape) if d == 1 and g.shape[i + lead] != 1
    )
    return _core.reshape(_core.sum(g, axis=axes), shape)


def _solve(tri, rhs):
    batch = tuple(_em.broadcast_shapes(tuple(tri.shape[:-2]), tuple(rhs.shape[:-2])))
    t = _core.broadcast_to(tri, (*batch, *tri.shape[-2:]))
    return _em.linalg.solve(t, _core.broadcast_to(rhs, (*batch, *rhs.shape[-2:])))


class _TriangularSolve(Function):
    """X with L X = B for L lower triangular (``upper``: L upper); batch dims broadcast."""

    @staticmethod
    def forward(ctx, tri, rhs, upper):
        x = _solve(tri, rhs)
        ctx.upper, ctx.rhs_shape = upper, tuple(rhs.shape)
        ctx.save_for_backward(tri, x)
        return x

    @staticmethod
    def backward(ctx, g):
        tri, x = ctx.saved_tensors
        gb = solve_triangular(_mT(tri), g, upper=not ctx.upper)
        gt = -(gb @ _mT(x))
        gt = _em.triu(gt) if ctx.upper else _em.tril(gt)
        return _sum_to(gt, tri.shape), _sum_to(gb, ctx.rhs_shape), None


def solve_triangular(tri, rhs, *, upper):
    """The solution X of tri @ X = rhs for a triangular ``tri`` (differentiable in both)."""
    if _needs_graph(tri, rhs):
        return _TriangularSolve.apply(tri, rhs, upper)
    return _solve(tri, rhs)


def _needs_graph(*arrays):
    return _core._is_grad_enabled() and any(a.requires_grad for a in arrays)


def tril_inverse(tri):
    """L^-1 of a lower-triangular L (differentiable)."""
    n = tri.shape[-1]
    eye = _em.eye(n, dtype=tri.dtype, device=tri.device)
    return solve_triangular(tri, eye, upper=False)


class _Cholesky(Function):
    @staticmethod
    def forward(ctx, a):
        low = _em.linalg.cholesky(a)
        ctx.save_for_backward(low)
        return low

    @staticmethod
    def backward(ctx, g):
        (low,) = ctx.saved_tensors
        phi = _em.tril(_mT(low) @ g)
        n = low.shape[-1]
        eye = _em.eye(n, dtype=low.dtype, device=low.device)
        phi = phi - 0.5 * phi * eye  # halve the diagonal
        inv = tril_inverse(low)
        s = _mT(inv) @ phi @ inv
        return (s + _mT(s)) * 0.5


def cholesky(a):
    """The lower Cholesky factor of a (differentiable)."""
    if _needs_graph(a):
        return _Cholesky.apply(a)
    return _em.linalg.cholesky(a)
