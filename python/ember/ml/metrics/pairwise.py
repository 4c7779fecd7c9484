"""Pairwise distances (scikit-learn's ``metrics.pairwise``): matmul-based, blocked by rows."""

from __future__ import annotations

import ember

from ..utils.validation import check_array, input_kind, to_device, to_output

__all__ = [
    "PAIRWISE_DISTANCE_METRICS",
    "cosine_distances",
    "cosine_similarity",
    "euclidean_distances",
    "manhattan_distances",
    "pairwise_distances",
    "row_norms",
]


def block_rows(n_cols, device, per_col=1):
    """Rows of a distance block: about 2^24 elements on the CPU (cache-sized work, small
    temporaries), 2^27 on a GPU (enough rows to fill it; 0.5-1 GiB per temporary)."""
    budget = (1 << 27) if str(device).startswith("cuda") else (1 << 24)
    return max(1, budget // max(1, n_cols * per_col))


def row_norms(X, squared=False):
    """Euclidean norm of every row."""
    s = (X * X).sum(axis=1)
    return s if squared else ember.sqrt(s)


def sq_euclidean(X, Y, XX=None, YY=None):
    """||x||^2 - 2 x.y + ||y||^2, clipped at 0 (ember arrays in, ember array out)."""
    if XX is None:
        XX = (X * X).sum(axis=1)
    if YY is None:
        YY = (Y * Y).sum(axis=1)
    D = XX[:, None] - 2.0 * (X @ Y.T) + YY[None, :]
    return ember.maximum(D, 0.0)


def _cosine(X, Y):
    nx = ember.sqrt((X * X).sum(axis=1))
    ny = ember.sqrt((Y * Y).sum(axis=1))
    nx = ember.where(nx == 0, 1.0, nx)
    ny = ember.where(ny == 0, 1.0, ny)
    S = (X / nx[:, None]) @ (Y / ny[:, None]).T
    return ember.clip(1.0 - S, 0.0, 2.0)


def _manhattan(X, Y, p=1):
    """Minkowski distances (p = 1: manhattan) by broadcasting, blocked by rows of X."""
    n, d = X.shape
    m = Y.shape[0]
    rows = block_rows(m, X.device, per_col=d)
    parts = []
    for s in range(0, n, rows):
        blk = X[s : s + rows]
        diff = ember.abs(blk[:, None, :] - Y[None, :, :])
        if p == 1:
            parts.append(diff.sum(axis=2))
        elif p == float("inf"):
            parts.append(diff.max(axis=2))
        else:
            parts.append((diff**p).sum(axis=2) ** (1.0 / p))
    if not parts:
        return ember.zeros((0, m), dtype=X.dtype, device=X.device)
    return parts[0] if len(parts) == 1 else ember.concatenate(parts, axis=0)


def distances(X, Y, metric, p=2):
    """Distance matrix between ember arrays X and Y (same device) for a named metric."""
    if metric == "minkowski":
        metric = {1: "manhattan", 2: "euclidean"}.get(p, "minkowski")
        if metric == "minkowski":
            return _manhattan(X, Y, p)
    if metric == "chebyshev":
        return _manhattan(X, Y, float("inf"))
    if metric in ("euclidean", "l2"):
        return ember.sqrt(sq_euclidean(X, Y))
    if metric == "sqeuclidean":
        return sq_euclidean(X, Y)
    if metric == "cosine":
        return _cosine(X, Y)
    if metric in ("manhattan", "cityblock", "l1"):
        return _manhattan(X, Y)
    raise ValueError(
        f"pairwise_distances: unknown metric {metric!r}; expected one of "
        f"{sorted(PAIRWISE_DISTANCE_METRICS)!r}"
    )


PAIRWISE_DISTANCE_METRICS = {
    "euclidean",
    "l2",
    "sqeuclidean",
    "cosine",
    "manhattan",
    "cityblock",
    "l1",
    "minkowski",
    "chebyshev",
}


def _pair(X, Y, who):
    Xa = check_array(X, estimator=who)
    Ya = Xa if Y is None else check_array(Y, estimator=who, device=Xa.device)
    if Xa.shape[1] != Ya.shape[1]:
        raise ValueError(
            f"{who}: Incompatible dimension for X and Y matrices: X.shape[1] == {Xa.shape[1]} "
            f"while Y.shape[1] == {Ya.shape[1]}"
        )
    if Xa.dtype != Ya.dtype:
        Xa = Xa.astype(ember.float64)
        Ya = Ya.astype(ember.float64)
    return Xa, Ya


def pairwise_distances(X, Y=None, metric="euclidean", **kwds):
    """Distance matrix between the rows of X and Y (or X): euclidean, cosine, manhattan, ..."""
    if callable(metric):
        import numpy as np

        Xh = ember.asnumpy(check_array(X, estimator="pairwise_distances"))
        Yh = Xh if Y is None else ember.asnumpy(check_array(Y, estimator="pairwise_distances"))
        # A Python callable runs on the host, pair by pair, as scikit-learn's does.
        out = np.array([[metric(a, b, **kwds) for b in Yh] for a in Xh], dtype=np.float64)
        kind = input_kind(X)
        return out if kind == "numpy" else to_device(out, X.device)
    if metric not in PAIRWISE_DISTANCE_METRICS:
        raise ValueError(
            f"pairwise_distances: unknown metric {metric!r}; expected one of "
            f"{sorted(PAIRWISE_DISTANCE_METRICS)!r} or a callable"
        )
    Xa, Ya = _pair(X, Y, "pairwise_distances")
    D = distances(Xa, Ya, metric)
    if Y is None:
        n = D.shape[0]
        idx = ember.arange(n, device=D.device)
        D[idx, idx] = 0.0
    return to_output(D, input_kind(X))


def euclidean_distances(X, Y=None, *, squared=False):
    """Euclidean (or squared) distances between the rows of X and Y."""
    return pairwise_distances(X, Y, metric="sqeuclidean" if squared else "euclidean")


def manhattan_distances(X, Y=None):
    """L1 distances between the rows of X and Y."""
    return pairwise_distances(X, Y, metric="manhattan")


def cosine_distances(X, Y=None):
    """1 - cosine similarity between the rows of X and Y."""
    return pairwise_distances(X, Y, metric="cosine")


def cosine_similarity(X, Y=None):
    """Cosine similarity between the rows of X and Y."""
    Xa, Ya = _pair(X, Y, "cosine_similarity")
    return to_output(1.0 - _cosine(Xa, Ya), input_kind(X))
