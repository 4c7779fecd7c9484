"""Brute-force neighbour search: blocked distance matmul plus ``topk`` selection per block."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator
from ..metrics.pairwise import PAIRWISE_DISTANCE_METRICS, block_rows, distances, sq_euclidean
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["NeighborsBase"]


def _block_distances(Q, X, metric, p, squared_ok):
    """Distances from the query block Q to X; squared euclidean when ``squared_ok``."""
    euclid = metric in ("euclidean", "l2") or (metric == "minkowski" and p == 2)
    if euclid and squared_ok:
        return sq_euclidean(Q, X), True
    if euclid:
        # Radius queries: |q|^2 - 2 q.x + |x|^2 below its own rounding error is noise; it is
        # set to 0 so that duplicates are at distance 0 exactly (radius=0, 'distance' weights).
        QQ, XX = (Q * Q).sum(axis=1), (X * X).sum(axis=1)
        S = sq_euclidean(Q, X, QQ, XX)
        eps = float(np.finfo(np.float32 if Q.dtype == ember.float32 else np.float64).eps)
        S = ember.where(S <= (8 * eps) * (QQ[:, None] + XX[None, :]), 0.0, S)
        return ember.sqrt(S), False
    return distances(Q, X, metric, p), False


class NeighborsBase(BaseEstimator):
    """Shared fit / kneighbors / radius_neighbors of the neighbour estimators."""

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
        "radius": [Interval(Real, 0, None, closed="both"), None],
        "algorithm": [StrOptions({"auto", "ball_tree", "kd_tree", "brute"})],
        "leaf_size": [Interval(Integral, 1, None, closed="left")],
        "p": [Interval(Real, 0, None, closed="right"), None],
        "metric": [StrOptions(PAIRWISE_DISTANCE_METRICS)],
        "metric_params": [dict, None],
        "n_jobs": [Integral, None],
    }

    def _fit(self, X, y=None):
        self._validate_params()
        if self.metric == "minkowski" and self.p is not None and self.p < 1:
            raise ValueError(f"p must be >= 1 for metric='minkowski', got p={self.p!r}")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=True)
        self._fit_X = Xa
        self._fit_kind = input_kind(X)
        self.n_samples_fit_ = Xa.shape[0]
        self.effective_metric_ = self.metric
        self.effective_metric_params_ = dict(self.metric_params or {})
        if self.metric == "minkowski":
            pp = self.p if self.p is not None else 2
            self.effective_metric_ = {1: "manhattan", 2: "euclidean"}.get(pp, "minkowski")
            if self.effective_metric_ == "minkowski":
                self.effective_metric_params_["p"] = pp
        self._fit_method = "brute"
        return Xa

    def _query(self, X):
        check_is_fitted(self, "_fit_X")
        if X is None:
            return self._fit_X, True
        Q = check_array(X, estimator=self, device=self._fit_X.device)
        check_n_features(self, Q, reset=False)
        if Q.dtype != self._fit_X.dtype:
            Q = Q.astype(self._fit_X.dtype)
        return Q, False

    def _p(self):
        return self.p if self.p is not None else 2

    def kneighbors(self, X=None, n_neighbors=None, return_distance=True):
        """Distances and indices of the ``n_neighbors`` nearest fitted points of each query
        (without the point itself when X is None)."""
        check_is_fitted(self, "_fit_X")
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        if isinstance(k, bool) or not isinstance(k, (Integral, np.integer)) or k <= 0:
            raise ValueError(f"Expected n_neighbors > 0. Got {k!r}")
        Q, self_query = self._query(X)
        F = self._fit_X
        n_fit = F.shape[0]
        avail = n_fit - 1 if self_query else n_fit
        if k > avail:
            raise ValueError(
                f"Expected n_neighbors <= n_samples_fit, but n_neighbors = "
                f"{k + 1 if self_query else k}, n_samples_fit = {n_fit}, n_samples = "
                f"{Q.shape[0]}"
            )
        rows = block_rows(n_fit, F.device)
        dist_parts, ind_parts = [], []
        for s in range(0, Q.shape[0], rows):
            blk = Q[s : s + rows]
            D, squared = _block_distances(blk, F, self.metric, self._p(), True)
            if self_query:
                r = ember.arange(blk.shape[0], device=F.device)
                D[r, r + s] = float("inf")
            vals, idx = ember.topk(D, k, dim=1, largest=False, sorted=True)
            if squared:
                vals = ember.sqrt(vals)
            dist_parts.append(vals)
            ind_parts.append(idx)
        dist = dist_parts[0] if len(dist_parts) == 1 else ember.concatenate(dist_parts)
        ind = ind_parts[0] if len(ind_parts) == 1 else ember.concatenate(ind_parts)
        kind = input_kind(X) if X is not None else self._fit_kind
        ind = ind.astype(ember.int64)
        if return_distance:
            return to_output(dist, kind), to_output(ind, kind)
        return to_output(ind, kind)

    def radius_neighbors(self, X=None, radius=None, return_distance=True, sort_results=False):
        """Per query, the fitted points within ``radius``: 1-d NumPy object arrays holding one
        array per query (NumPy arrays for host inputs, ember arrays on the fitted device for
        ember inputs), as scikit-learn's."""
        check_is_fitted(self, "_fit_X")
        if sort_results and not return_distance:
            raise ValueError("return_distance must be True if sort_results is True.")
        r = self.radius if radius is None else radius
        Q, self_query = self._query(X)
        F = self._fit_X
        kind = input_kind(X) if X is not None else self._fit_kind
        rows = block_rows(F.shape[0], F.device)
        all_d, all_i = [], []
        for s in range(0, Q.shape[0], rows):
            blk = Q[s : s + rows]
            D, squared = _block_distances(blk, F, self.metric, self._p(), False)
            if self_query:
                rr = ember.arange(blk.shape[0], device=F.device)
                D[rr, rr + s] = float("inf")
            mask = D <= r
            qi, fi = ember.nonzero(mask)  # row-major: grouped by query row
            dv = D[qi, fi]
            if sort_results:
                order = ember.lexsort((dv, qi))
                fi, dv = ember.take(fi, order), ember.take(dv, order)
            if kind == "numpy":
                fi, dv = ember.asnumpy(fi).astype(np.int64), ember.asnumpy(dv)
            else:
                fi = fi.astype(ember.int64)
            # Ragged result sizes (host ints) to cut the flat lists into one array per query.
            counts = ember.asnumpy(mask.sum(axis=1))
            cuts = np.cumsum(counts)[:-1].tolist()
            split = np.split if kind == "numpy" else ember.split
            all_i.extend(split(fi, cuts))
            all_d.extend(split(dv, cuts))
        ind = _object_array(all_i)
        if return_distance:
            return _object_array(all_d), ind
        return ind

    def kneighbors_graph(self, X=None, n_neighbors=None, mode="connectivity"):
        """Sparse (SciPy CSR, on the host) graph of the k nearest neighbours."""
        from scipy.sparse import csr_matrix

        if mode not in ("connectivity", "distance"):
            raise ValueError(
                f'Unsupported mode, must be one of "connectivity", or "distance" but got '
                f'"{mode}" instead'
            )
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        dist, ind = self.kneighbors(X, k, return_distance=True)
        dist, ind = ember.asnumpy(dist), ember.asnumpy(ind)  # SciPy matrices live on the host
        nq = ind.shape[0]
        data = np.ones(nq * k) if mode == "connectivity" else dist.ravel()
        indptr = np.arange(0, nq * k + 1, k)
        return csr_matrix((data, ind.ravel(), indptr), shape=(nq, self.n_samples_fit_))

    def radius_neighbors_graph(self, X=None, radius=None, mode="connectivity", sort_results=False):
        """Sparse (SciPy CSR, on the host) graph of the neighbours within ``radius``."""
        from scipy.sparse import csr_matrix

        if mode not in ("connectivity", "distance"):
            raise ValueError(
                f'Unsupported mode, must be one of "connectivity", or "distance" but got '
                f'"{mode}" instead'
            )
        dist, ind = self.radius_neighbors(
            X, radius, return_distance=True, sort_results=sort_results
        )
        # SciPy matrices live on the host: the ragged lists are copied there.
        ind = [ember.asnumpy(i) if isinstance(i, ember.ndarray) else i for i in ind]
        dist = [ember.asnumpy(d) if isinstance(d, ember.ndarray) else d for d in dist]
        counts = np.asarray([len(i) for i in ind], dtype=np.int64)
        indptr = np.concatenate([[0], np.cumsum(counts)])
        cols = np.concatenate(ind) if ind else np.zeros(0, np.int64)
        vals = np.concatenate(dist) if mode == "distance" and dist else np.ones(len(cols))
        return csr_matrix((vals, cols, indptr), shape=(len(ind), self.n_samples_fit_))

    def _fitted_X(self, dev):
        return to_device(self._fit_X, dev)


def _object_array(items):
    """A 1-d object array holding `items` as they are: one element at a time, since a slice
    assignment of a list would have NumPy convert each item (a GPU array refuses that)."""
    out = np.empty(len(items), dtype=object)
    for j, v in enumerate(items):
        out[j] = v
    return out
