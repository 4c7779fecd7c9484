"""Isomap (scikit-learn's ``sklearn.manifold.Isomap``) over ember ops.

The neighbourhood graph (k nearest neighbours or a radius) is held as a dense n x n matrix of
edge lengths on X's device (``inf`` where there is no edge), symmetrised as an undirected
graph (``min(W, W^T)``). Disconnected components are joined, as scikit-learn does, by the
shortest edge between every pair of components. Geodesic distances:

* ``'FW'``: Floyd-Warshall, n min-plus rank-one updates ``D = min(D, D[:, k] + D[k, :])``,
  each one elementwise pass over the matrix on the device (O(n^3) work, O(n^2) memory);
* ``'D'`` (and ``'auto'``): all-sources Bellman-Ford over the padded neighbour lists, each
  sweep ``D[:, j] = min(D[:, j], min_t D[:, nbr[j, t]] + w[j, t])``, repeated until nothing
  changes (as many sweeps as the longest shortest path has edges; the same distances as
  Dijkstra's algorithm, computed in parallel instead of one source at a time).

The embedding is ember's KernelPCA of ``-D^2 / 2`` (a dense ``eigh``), so every eigen_solver
gives this exact decomposition.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from ..decomposition import KernelPCA
from ..metrics.pairwise import PAIRWISE_DISTANCE_METRICS, block_rows, distances
from ..neighbors import NearestNeighbors
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["Isomap"]

_INF = float("inf")


def _components(A):
    """Connected-component label (smallest member index) of every node of the boolean
    adjacency A: min-label propagation with pointer jumping on the device."""
    n = A.shape[0]
    lab = ember.arange(n, device=A.device)
    while True:
        new = ember.minimum(lab, ember.where(A, lab[None, :], n).min(axis=1))
        new = ember.minimum(new, ember.take(new, new))
        if bool((new == lab).all()):
            return lab
        lab = new


def _floyd_warshall(G):
    for k in range(G.shape[0]):
        G = ember.minimum(G, G[:, k : k + 1] + G[k : k + 1, :])
    return G


def _bellman_ford(G):
    """All-pairs shortest paths by parallel relaxation over each node's neighbour list."""
    n = G.shape[0]
    finite = ember.isfinite(G)
    m = int(finite.sum(axis=1).max())
    if m == 0:
        return G
    w, nbr = ember.topk(G, m, dim=1, largest=False, sorted=True)  # padded with inf
    D = G
    rows = max(1, block_rows(n * m, D.device))
    while True:
        parts = []
        for s in range(0, n, rows):
            nb = nbr[s : s + rows]  # (b, m): neighbours of targets s..s+b
            # D[:, nb] + w: (n, b, m) candidate lengths through each neighbour
            cand = ember.take(D, nb.reshape(-1), axis=1).reshape(n, nb.shape[0], m)
            cand = (cand + w[s : s + rows][None, :, :]).min(axis=2)
            parts.append(ember.minimum(D[:, s : s + rows], cand))
        new = parts[0] if len(parts) == 1 else ember.concatenate(parts, axis=1)
        if bool((new == D).all()):
            return new
        D = new


class Isomap(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Isometric mapping: kernel PCA of the geodesic distances of a neighbourhood graph."""

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
        "radius": [Interval(Real, 0, None, closed="both"), None],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "eigen_solver": [StrOptions({"auto", "arpack", "dense"})],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "path_method": [StrOptions({"auto", "FW", "D"})],
        "neighbors_algorithm": [StrOptions({"auto", "brute", "kd_tree", "ball_tree"})],
        "n_jobs": [Integral, None],
        "p": [Interval(Real, 1, None, closed="left")],
        "metric": [StrOptions(PAIRWISE_DISTANCE_METRICS)],
        "metric_params": [dict, None],
    }

    def __init__(
        self,
        *,
        n_neighbors=5,
        radius=None,
        n_components=2,
        eigen_solver="auto",
        tol=0,
        max_iter=None,
        path_method="auto",
        neighbors_algorithm="auto",
        n_jobs=None,
        metric="minkowski",
        p=2,
        metric_params=None,
    ):
        self.n_neighbors = n_neighbors
        self.radius = radius
        self.n_components = n_components
        self.eigen_solver = eigen_solver
        self.tol = tol
        self.max_iter = max_iter
        self.path_method = path_method
        self.neighbors_algorithm = neighbors_algorithm
        self.n_jobs = n_jobs
        self.metric = metric
        self.p = p
        self.metric_params = metric_params

    def _p(self):
        return (self.metric_params or {}).get("p", self.p)

    def _neighbors(self, Q, self_query):
        """Padded neighbour lists of the queries: (distances, indices), inf-padded."""
        nb = self.nbrs_
        if self.n_neighbors is not None:
            d, i = nb.kneighbors(None if self_query else Q)
            return d, i
        F = nb._fit_X
        D = distances(Q, F, self.metric, self._p())
        if self_query:
            r = ember.arange(D.shape[0], device=D.device)
            D[r, r] = _INF
        D = ember.where(D <= self.radius, D, _INF)
        m = max(1, int(ember.isfinite(D).sum(axis=1).max()))
        d, i = ember.topk(D, m, dim=1, largest=False, sorted=True)
        return d, i

    def _fit_transform(self, X):
        self._validate_params()
        if self.n_neighbors is not None and self.radius is not None:
            raise ValueError(
                f"Isomap: Both n_neighbors and radius are provided. Use "
                f"Isomap(radius={self.radius}, n_neighbors=None) if intended to use "
                "radius-based neighbors"
            )
        if self.n_neighbors is None and self.radius is None:
            raise ValueError("Isomap: one of n_neighbors or radius must be given, got None")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=True)
        self.nbrs_ = NearestNeighbors(
            n_neighbors=self.n_neighbors if self.n_neighbors is not None else 5,
            radius=self.radius if self.radius is not None else 1.0,
            algorithm=self.neighbors_algorithm,
            metric=self.metric,
            p=self.p,
            metric_params=self.metric_params,
            n_jobs=self.n_jobs,
        ).fit(Xa)
        n = Xa.shape[0]
        dev, dt = Xa.device, Xa.dtype
        d, idx = self._neighbors(Xa, True)
        W = ember.full((n, n), _INF, dtype=dt, device=dev)
        ember.put_along_axis(W, idx, d.astype(dt), axis=1)
        G = ember.minimum(W, W.T)
        lab = _components(ember.isfinite(G))
        roots = ember.asnumpy(ember.unique(lab))
        if roots.shape[0] > 1:
            warnings.warn(
                f"The number of connected components of the neighbors graph is "
                f"{roots.shape[0]} > 1. Completing the graph to fit Isomap might be slow. "
                "Increase the number of neighbors to avoid this issue.",
                stacklevel=3,
            )
            labh = ember.asnumpy(lab)
            members = [np.flatnonzero(labh == r) for r in roots]
            for a in range(len(members)):
                ia = to_device(members[a], dev)
                for b in range(a):
                    ib = to_device(members[b], dev)
                    Dab = distances(
                        ember.take(Xa, ia, axis=0),
                        ember.take(Xa, ib, axis=0),
                        self.metric,
                        self._p(),
                    )
                    flat = int(ember.argmin(Dab))
                    u, v = (
                        int(members[a][flat // Dab.shape[1]]),
                        int(members[b][flat % Dab.shape[1]]),
                    )
                    G[u, v] = Dab.reshape(-1)[flat]
                    G[v, u] = Dab.reshape(-1)[flat]
        r = ember.arange(n, device=dev)
        G[r, r] = 0.0
        D = _floyd_warshall(G) if self.path_method == "FW" else _bellman_ford(G)
        self._dist = D
        self.kernel_pca_ = KernelPCA(
            n_components=self.n_components,
            kernel="precomputed",
            eigen_solver=self.eigen_solver,
            tol=self.tol,
            max_iter=self.max_iter,
            n_jobs=self.n_jobs,
        )
        emb = self.kernel_pca_.fit_transform(-0.5 * D * D)
        kind = input_kind(X)
        self._kind = kind
        self.dist_matrix_ = to_output(D, kind)
        self.embedding_ = to_output(emb, kind)
        self._n_features_out = int(emb.shape[1])
        return emb

    def fit(self, X, y=None):
        """Compute the embedding; sets ``embedding_``, ``dist_matrix_``, ``kernel_pca_``,
        ``nbrs_``."""
        self._fit_transform(X)
        return self

    def fit_transform(self, X, y=None):
        """Fit and return ``embedding_``."""
        return to_output(self._fit_transform(X), input_kind(X))

    def reconstruction_error(self):
        """``||K(D) - K(D_fit)||_F / n`` with ``K(D) = -(I - 1/n) D^2 (I - 1/n) / 2``."""
        check_is_fitted(self, "embedding_")
        D = self._dist
        G = -0.5 * D * D
        Gc = G - G.mean(axis=0)[None, :] - G.mean(axis=1)[:, None] + G.mean()
        ev = to_device(self.kernel_pca_.eigenvalues_, D.device)
        return float(ember.sqrt((Gc * Gc).sum() - (ev * ev).sum())) / G.shape[0]

    def transform(self, X):
        """Embed new points: geodesic distances through their neighbours in the fitted graph,
        then the fitted kernel PCA."""
        check_is_fitted(self, "embedding_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        D = self._dist
        Q = to_device(Xa, D.device).astype(D.dtype)
        d, idx = self._neighbors(Q, False)
        n_fit = D.shape[0]
        k = idx.shape[1]
        rows = max(1, block_rows(n_fit * k, D.device))
        parts = []
        for s in range(0, Q.shape[0], rows):
            ib, db = idx[s : s + rows], d[s : s + rows]
            paths = ember.take(D, ib.reshape(-1), axis=0).reshape(ib.shape[0], k, n_fit)
            parts.append((paths + db[:, :, None]).min(axis=1))
        GX = parts[0] if len(parts) == 1 else ember.concatenate(parts, axis=0)
        Z = self.kernel_pca_.transform(-0.5 * GX * GX)
        return to_output(to_device(Z, Xa.device), input_kind(X))
