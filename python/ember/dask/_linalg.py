"""dask.array.linalg on ember chunks.

Dask's blocked ``lu``/``solve``/``inv``/``cholesky``/``solve_triangular``/``lstsq`` run SciPy on
each block (``scipy.linalg.lu``, ``scipy.linalg.solve_triangular`` through
``dask.array.utils.solve_triangular_safe``). SciPy has no dispatch protocol, so on an ember
chunk it would take the chunk through ``__array__`` (a host copy on the CPU, an error on a GPU)
and hand a NumPy block to the next task. Dask's own answer for CuPy is the ``is_cupy_type``
branch of ``scipy_linalg_safe``; this module is the same branch for ember:

- ``dask.array.linalg.solve_triangular_safe`` (looked up by Dask's tasks when they run, and
  put into the graph by ``solve_triangular``) sends ember blocks to
  :func:`ember.linalg.solve_triangular`, other blocks to Dask's original;
- ``dask.array.linalg.lu`` on an ember array builds Dask's graph with ``scipy.linalg.lu``
  replaced by a function that sends ember blocks to :func:`ember.linalg.lu` (the same
  ``A = P L U`` convention as SciPy's);
  its ``np.zeros`` blocks become ember zeros on the chunks' device;
- ``dask.array.linalg.inv`` of an ember array solves against an identity made of ember blocks
  on the chunks' device (Dask's makes it from NumPy ``eye`` blocks).

Everything else (the block products, ``np.linalg.cholesky`` of the diagonal blocks, QR) is
already an ember call through ``__array_function__``."""

from __future__ import annotations

import threading

import dask.array.linalg as _dl

import ember
from ember import ndarray

_lock = threading.Lock()
_orig = {}


def _solve_triangular_safe(a, b, lower=False):
    if isinstance(a, ndarray) or isinstance(b, ndarray):
        if not isinstance(a, ndarray):
            a = ember.asarray(a, device=b.device)
        if not isinstance(b, ndarray):
            b = ember.asarray(b, device=a.device)
        if b.ndim == 1:  # SciPy takes a vector right-hand side
            return ember.linalg.solve_triangular(a, b[:, None], upper=not lower)[:, 0]
        return ember.linalg.solve_triangular(a, b, upper=not lower)
    return _orig["solve_triangular_safe"](a, b, lower=lower)


def _block_lu(a):
    """``scipy.linalg.lu`` of one block (``p, l, u`` with ``a = p @ l @ u``)."""
    if isinstance(a, ndarray):
        p, lo, up = ember.linalg.lu(a)
        return p.astype(a.dtype), lo, up
    return _scipy_lu(a)


def _scipy_lu(a):
    import scipy.linalg

    return _orig.setdefault("scipy_lu", scipy.linalg.lu)(a)


def _is_ember(x):
    return isinstance(getattr(x, "_meta", None), ndarray)


def _lu(a):
    if not _is_ember(a):
        return _orig["lu"](a)
    import scipy.linalg

    _orig.setdefault("scipy_lu", scipy.linalg.lu)
    # Dask's graph holds the function object ``scipy.linalg.lu`` it finds while building: the
    # graph is built with that name pointing to _block_lu (which keeps SciPy's behavior for
    # anything that is not an ember block)
    with _lock:
        scipy.linalg.lu = _block_lu
        try:
            factors = _orig["lu"](a)
        finally:
            scipy.linalg.lu = _orig["scipy_lu"]
    # Dask's zero blocks (below/above the diagonal) are ``np.zeros`` tasks: made as ember
    # zeros on the chunks' device instead (from their shape only, nothing is copied)
    dev = a._meta.device
    return tuple(
        f.map_blocks(_ember_zero_block, device=dev, zero_dtype=f.dtype, dtype=f.dtype, meta=f._meta)
        for f in factors
    )


def _ember_zero_block(block, device, zero_dtype):
    # (Dask's np.zeros blocks are float64 whatever the factors' dtype: made in the factors')
    if isinstance(block, ndarray):
        return block
    return ember.zeros(block.shape, dtype=zero_dtype, device=device)


def _eye_block(block, block_info=None):
    (r0, _), (c0, _) = block_info[None]["array-location"]
    n, m = block.shape
    return ember.eye(n, m, k=r0 - c0, dtype=block.dtype, device=block.device)


def _inv(a):
    if not _is_ember(a):
        return _orig["inv"](a)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"dask.array.linalg.inv: a must be square, got shape {a.shape}")
    rows = a.chunks[0]
    eye = a.rechunk((rows, rows)).map_blocks(_eye_block, dtype=a.dtype, meta=a._meta)
    return _dl.solve(a, eye)


def register():
    """Installs the ember branches into dask.array.linalg (idempotent; SciPy is imported only
    when ``lu`` runs, as Dask does)."""
    if _orig:
        return
    _orig["solve_triangular_safe"] = _dl.solve_triangular_safe
    _orig["lu"] = _dl.lu
    _orig["inv"] = _dl.inv
    _dl.solve_triangular_safe = _solve_triangular_safe
    _dl.lu = _lu
    _dl.inv = _inv
