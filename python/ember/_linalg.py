"""Matrix and vector products composed from ``matmul`` and views: ``dot``, ``vdot``, ``inner``,
``outer``, ``tensordot``, ``vecdot``, ``matvec``, ``vecmat``, ``trace``, ``diagonal``, ``kron`` and
the matmul precision switch in the ember namespace, and ``ember.linalg.cross`` (NumPy's
``ember.cross``, with its 2-vector and axis arguments, is in _math)."""

from __future__ import annotations

import numbers

import numpy as _np

from . import _core
from ._array import asarray
from ._core import conj, matmul, multiply, ndarray, permute_dims
from ._core import sum as _sum
from ._dtypes import result_type
from ._manipulation import _asarray

__all__ = [
    "diagonal",
    "dot",
    "get_matmul_precision",
    "inner",
    "kron",
    "matvec",
    "outer",
    "set_matmul_precision",
    "tensordot",
    "trace",
    "vdot",
    "vecdot",
    "vecmat",
]


def set_matmul_precision(precision):
    """float32 matmul on GPUs: ``"highest"`` (the default) keeps float32 products; ``"high"``
    lets cuBLAS use TF32 tensor cores. Other dtypes and the CPU are not affected."""
    _core._set_matmul_precision(str(precision))


def get_matmul_precision():
    return _core._get_matmul_precision()


def _arr(x, like=None):
    if isinstance(x, ndarray):
        return x
    return asarray(x, device=None if like is None else like.device)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """NumPy's diagonal: the ``offset`` diagonal of axes ``axis1`` and ``axis2``, as a view,
    with the diagonal as the last axis."""
    a = _arr(a)
    nd = a.ndim
    if nd < 2:
        raise ValueError("ember.diagonal: array must be at least 2-d")
    a1, a2 = axis1 % nd if -nd <= axis1 < nd else None, axis2 % nd if -nd <= axis2 < nd else None
    if a1 is None or a2 is None:
        raise _core.AxisError(
            f"ember.diagonal: axis {axis1 if a1 is None else axis2} is out of "
            f"bounds for array of dimension {nd}"
        )
    if a1 == a2:
        raise ValueError("ember.diagonal: axis1 and axis2 cannot be the same")
    rest = [i for i in range(nd) if i not in (a1, a2)]
    return _core._diagonal_view(_core.permute_dims(a, (*rest, a1, a2)), int(offset))


def trace(x, offset=0, axis1=0, axis2=1, dtype=None):
    """Sum along a diagonal (NumPy's axes; ``ember.linalg.trace`` uses the last two)."""
    d = diagonal(x, offset, axis1, axis2)
    return _sum(d, axis=-1, dtype=dtype)


def vdot(a, b):
    """Dot product of the flattened arrays, conjugating the first."""
    a, b = _arr(a), _arr(b)
    if a.size != b.size:
        raise ValueError(f"ember.vdot: vectors have different lengths ({a.size} and {b.size})")
    a = conj(a) if a.dtype.kind == "c" else a  # conj of bool would be int8
    return matmul(a.reshape(-1), b.reshape(-1))


def outer(a, b):
    a, b = _arr(a), _arr(b, a)
    return a.reshape(-1, 1) * b.reshape(1, -1)


def _axes_pair(axes, na, nb):
    if isinstance(axes, numbers.Integral):
        n = int(axes)
        if n < 0 or n > min(na, nb):
            raise ValueError(f"ember.tensordot: axes={n} is out of range for {na}-d and {nb}-d")
        return list(range(na - n, na)), list(range(n))
    xa, xb = axes
    xa = [xa] if isinstance(xa, numbers.Integral) else list(xa)
    xb = [xb] if isinstance(xb, numbers.Integral) else list(xb)
    if len(xa) != len(xb):
        raise ValueError("ember.tensordot: the two axis lists differ in length")
    return [int(i) % na for i in xa], [int(i) % nb for i in xb]


def tensordot(a, b, /, *, axes=2):
    """Sum of products over ``axes`` (an int: the last n of a with the first n of b; or two axis
    sequences), lowered to one matmul."""
    a, b = _arr(a), _arr(b, a)
    xa, xb = _axes_pair(axes, a.ndim, b.ndim)
    for i, j in zip(xa, xb, strict=True):
        if a.shape[i] != b.shape[j]:
            raise ValueError(
                f"ember.tensordot: shape mismatch for sum (axis {i} of size {a.shape[i]} and "
                f"axis {j} of size {b.shape[j]})"
            )
    fa = [i for i in range(a.ndim) if i not in xa]
    fb = [j for j in range(b.ndim) if j not in xb]
    k = 1
    for i in xa:
        k *= a.shape[i]
    m = 1
    for i in fa:
        m *= a.shape[i]
    n = 1
    for j in fb:
        n *= b.shape[j]
    at = permute_dims(a, (*fa, *xa)).reshape(m, k)
    bt = permute_dims(b, (*xb, *fb)).reshape(k, n)
    return matmul(at, bt).reshape(*[a.shape[i] for i in fa], *[b.shape[j] for j in fb])


def dot(a, b):
    """NumPy's dot: products of scalars, 1-D and 2-D as matmul, N-D over the last axis of a and
    the second-to-last of b."""
    a, b = _arr(a), _arr(b, a)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul(a, b)
    return tensordot(a, b, axes=([a.ndim - 1], [max(0, b.ndim - 2)]))


def inner(a, b):
    a, b = _arr(a), _arr(b, a)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


def vecdot(x1, x2, /, *, axis=-1):
    """Array API vecdot: sum over ``axis`` of conj(x1) * x2, broadcasting the rest."""
    x1, x2 = _arr(x1), _arr(x2, x1)
    n1, n2 = x1.shape[axis] if x1.ndim else None, x2.shape[axis] if x2.ndim else None
    if x1.ndim == 0 or x2.ndim == 0 or n1 != n2:
        raise ValueError(f"ember.vecdot: axis {axis} must exist and match ({n1} and {n2})")
    # The promoted dtype, as NumPy's and the standard's (a plain sum would widen small integers).
    dt = result_type(x1, x2)
    prod = (conj(x1) if x1.dtype.kind == "c" else x1) * x2
    return _sum(prod, axis=axis, dtype=dt)


def kron(a, b):
    """Kronecker product: blocks a[i, j] * b."""
    a, b = _arr(a), _arr(b, a)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    x = a.reshape(*[v for s in sa for v in (s, 1)])
    y = b.reshape(*[v for s in sb for v in (1, s)])
    return (x * y).reshape(*[p * q for p, q in zip(sa, sb, strict=True)])


def matvec(x1, x2, /):
    """Matrix-vector products over broadcast leading dimensions: (..., m, n) x (..., n)."""
    return _core.matmul(_asarray(x1), _asarray(x2)[..., None])[..., 0]


def vecmat(x1, x2, /):
    """Vector-matrix products (conjugating the vector): (..., n) x (..., n, m)."""
    v = _asarray(x1)
    if v.dtype.kind == "c":
        v = _core.conj(v)
    return _core.matmul(v[..., None, :], _asarray(x2))[..., 0, :]


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-element vectors along ``axis`` (broadcasting the others)."""
    who = "ember.linalg.cross"
    a, b = _arr(x1), _arr(x2)
    b = _arr(x2, like=a)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"{who}: inputs must have at least one dimension")
    nd = max(a.ndim, b.ndim)
    if not -nd <= axis < nd:
        raise _core.AxisError(f"{who}: axis {axis} is out of bounds for {nd} dimensions")
    ax = axis % nd
    shape = _np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    a, b = _core.broadcast_to(a, shape), _core.broadcast_to(b, shape)
    if shape[ax] != 3:
        raise ValueError(f"{who}: the size of axis {axis} must be 3, got {shape[ax]}")
    t = result_type(a, b)
    order = [i for i in range(nd) if i != ax] + [ax]
    a = _core.permute_dims(a, tuple(order)).astype(t)
    b = _core.permute_dims(b, tuple(order)).astype(t)
    out = _core.empty(a.shape, dtype=t, device=a.device)
    for i, (j, k) in enumerate(((1, 2), (2, 0), (0, 1))):
        out[..., i] = a[..., j] * b[..., k] - a[..., k] * b[..., j]
    back = [0] * nd
    for pos, src in enumerate(order):
        back[src] = pos
    return _core.permute_dims(out, tuple(back))
