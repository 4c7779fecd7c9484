"""Building matrices: the diagonal and triangle family, as values (diag, diagflat, tri, tril,
triu, vander) and as index arrays (diag_indices, diag_indices_from, tril_indices, triu_indices,
tril_indices_from, triu_indices_from, mask_indices), composed from arange masks and where (any
device; tril/triu differentiate through where)."""

from __future__ import annotations

import builtins
import operator

from . import _core
from ._joining import concat
from ._linalg import diagonal as _diagonal
from ._manipulation import _asarray, flip
from ._scan import nonzero

__all__ = [
    "diag",
    "diag_indices",
    "diag_indices_from",
    "diagflat",
    "mask_indices",
    "tri",
    "tril",
    "tril_indices",
    "tril_indices_from",
    "triu",
    "triu_indices",
    "triu_indices_from",
    "vander",
]


def diag(v, k=0):
    """A 1-D array's values on diagonal `k` of a square matrix, or a 2-D array's diagonal `k`."""
    v = _asarray(v)
    k = operator.index(k)
    if v.ndim == 2:
        return _diagonal(v, offset=k).copy()
    if v.ndim != 1:
        raise ValueError(f"ember.diag: the input must be 1-D or 2-D, got {v.ndim} dimensions")
    n = v.shape[0] + builtins.abs(k)
    rows = _core.arange(n, device=v.device).reshape(n, 1)
    cols = _core.arange(n, device=v.device).reshape(1, n)
    on = cols - rows == k
    # the value for row r (k >= 0) or column c (k < 0): v padded at the end to length n
    pad = _core.zeros((builtins.abs(k),), dtype=v.dtype, device=v.device)
    vals = concat([v, pad]) if k else v
    line = vals.reshape(n, 1) if k >= 0 else vals.reshape(1, n)
    return _core.where(on, line, _core.zeros((), dtype=v.dtype, device=v.device))


def diagflat(v, k=0):
    """diag of the flattened input."""
    return diag(_asarray(v).reshape(-1), k)


def tri(N, M=None, k=0, dtype=None, *, device=None):
    """Ones at and below diagonal `k` of an N x M array, zeros elsewhere (float64 by default)."""
    M = N if M is None else M
    rows = _core.arange(N, device=device).reshape(N, 1)
    cols = _core.arange(M, device=device).reshape(1, M)
    out = cols - rows <= operator.index(k)
    return out.astype(_core.float64 if dtype is None else dtype)


def _triangle(x, k, lower, who):
    x = _asarray(x)
    if x.ndim < 2:
        raise ValueError(f"{who}: the array must have at least 2 dimensions, got {x.ndim}")
    n, m = x.shape[-2], x.shape[-1]
    rows = _core.arange(n, device=x.device).reshape(n, 1)
    cols = _core.arange(m, device=x.device).reshape(1, m)
    k = operator.index(k)
    keep = (cols - rows <= k) if lower else (cols - rows >= k)
    return _core.where(keep, x, _core.zeros((), dtype=x.dtype, device=x.device))


def tril(x, /, *, k=0):
    """The lower triangle (on and below diagonal `k`) of the last two axes; zeros above."""
    return _triangle(x, k, True, "ember.tril")


def triu(x, /, *, k=0):
    """The upper triangle (on and above diagonal `k`) of the last two axes; zeros below."""
    return _triangle(x, k, False, "ember.triu")


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D x: columns x**(N-1), ..., x**0 (reversed if
    increasing)."""
    x = _asarray(x)
    if x.ndim != 1:
        raise ValueError(f"ember.vander: x must be 1-D, got shape {x.shape}")
    n = x.shape[0] if N is None else operator.index(N)
    p = _core.arange(n, device=x.device)
    if not increasing:
        p = flip(p)
    base = x.astype(_core.int64) if x.dtype.kind in "bu" or x.dtype == _core.bool else x
    return _core.pow(base[:, None], p[None, :].astype(base.dtype))


# ---- index arrays ---------------------------------------------------------------------------


def diag_indices(n, ndim=2):
    i = _core.arange(operator.index(n))
    return (i,) * operator.index(ndim)


def diag_indices_from(arr):
    a = _asarray(arr)
    if a.ndim < 2 or len(set(a.shape)) != 1:
        raise ValueError("ember.diag_indices_from: the array must be square, of at least 2-d")
    i = _core.arange(a.shape[0], device=a.device)
    return (i,) * a.ndim


def _tri_indices(n, k, m, lower, device=None):
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    r = _core.arange(n, device=device)[:, None]
    c = _core.arange(m, device=device)[None, :]
    mask = (c - r <= k) if lower else (c - r >= k)
    return nonzero(mask)


def tril_indices(n, k=0, m=None):
    return _tri_indices(n, operator.index(k), m, True)


def triu_indices(n, k=0, m=None):
    return _tri_indices(n, operator.index(k), m, False)


def tril_indices_from(arr, k=0):
    a = _asarray(arr)
    if a.ndim != 2:
        raise ValueError("ember.tril_indices_from: the array must be 2-d")
    return _tri_indices(a.shape[0], operator.index(k), a.shape[1], True, a.device)


def triu_indices_from(arr, k=0):
    a = _asarray(arr)
    if a.ndim != 2:
        raise ValueError("ember.triu_indices_from: the array must be 2-d")
    return _tri_indices(a.shape[0], operator.index(k), a.shape[1], False, a.device)


def mask_indices(n, mask_func, k=0):
    """The indices where mask_func(ones((n, n)), k) is non-zero (e.g. triu, tril)."""
    m = mask_func(_core.ones((n, n), dtype=_core.int64), k=k)
    return nonzero(m != 0)
