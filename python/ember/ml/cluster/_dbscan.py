"""DBSCAN over blocked distance matrices.

Core points are those with at least ``min_samples`` (weighted) points within ``eps``. Clusters
are the connected components of the core-core eps-graph, found by min-label propagation with
pointer jumping (labels are core-point indices; each round is a masked row minimum over a
distance block), then numbered by their smallest core index, which is the order scikit-learn's
breadth-first search discovers them in. A border point takes the smallest-numbered cluster
among its core neighbours, as scikit-learn's search does.
"""

from __future__ import annotations

from numbers import Integral, Real

import ember

from ..base import BaseEstimator, ClusterMixin
from ..metrics.pairwise import PAIRWISE_DISTANCE_METRICS, block_rows, distances, sq_euclidean
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_n_features,
    check_sample_weight,
    input_kind,
    to_output,
)

__all__ = ["DBSCAN", "dbscan"]


class DBSCAN(ClusterMixin, BaseEstimator):
    """Density-based clustering; noise points get label -1."""

    _parameter_constraints = {
        "eps": [Interval(Real, 0.0, None, closed="neither")],
        "min_samples": [Interval(Integral, 1, None, closed="left")],
        "metric": [StrOptions(PAIRWISE_DISTANCE_METRICS | {"precomputed"})],
        "metric_params": [dict, None],
        "algorithm": [StrOptions({"auto", "ball_tree", "kd_tree", "brute"})],
        "leaf_size": [Interval(Integral, 1, None, closed="left")],
        "p": [Interval(Real, 0.0, None, closed="left"), None],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        eps=0.5,
        *,
        min_samples=5,
        metric="euclidean",
        metric_params=None,
        algorithm="auto",
        leaf_size=30,
        p=None,
        n_jobs=None,
    ):
        self.eps = eps
        self.min_samples = min_samples
        self.metric = metric
        self.metric_params = metric_params
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.p = p
        self.n_jobs = n_jobs

    def _adjacent(self, X, s, rows):
        """Boolean block: rows s..s+rows of the eps-neighbourhood matrix."""
        if self.metric == "precomputed":
            return X[s : s + rows] <= self.eps
        blk = X[s : s + rows]
        if self.metric in ("euclidean", "l2") or (
            self.metric == "minkowski" and self.p in (None, 2)
        ):
            return sq_euclidean(blk, X) <= self.eps * self.eps
        return distances(blk, X, self.metric, self.p if self.p is not None else 2) <= self.eps

    def fit(self, X, y=None, sample_weight=None):
        """Cluster X; sets ``labels_``, ``core_sample_indices_``, ``components_``."""
        self._validate_params()
        Xa = check_array(X, estimator=self)
        if self.metric == "precomputed" and Xa.shape[0] != Xa.shape[1]:
            raise ValueError(f"Precomputed matrix must be square; got shape {tuple(Xa.shape)}")
        check_n_features(self, Xa, reset=True)
        n = Xa.shape[0]
        dev = Xa.device
        w = check_sample_weight(sample_weight, Xa)
        rows = block_rows(n, Xa.device)
        # Weighted neighbour counts (the point itself included).
        counts = []
        for s in range(0, n, rows):
            A = self._adjacent(Xa, s, rows)
            counts.append((A.astype(w.dtype) * w[None, :]).sum(axis=1))
        cnt = counts[0] if len(counts) == 1 else ember.concatenate(counts)
        core = cnt >= self.min_samples
        big = n
        idx = ember.arange(n, device=dev)
        lab = ember.where(core, idx, big)
        while True:
            parts = []
            for s in range(0, n, rows):
                A = self._adjacent(Xa, s, rows) & core[None, :]
                parts.append(ember.where(A, lab[None, :], big).min(axis=1))
            new = parts[0] if len(parts) == 1 else ember.concatenate(parts)
            new = ember.where(core, ember.minimum(new, lab), big)
            # Pointer jumping: follow labels to their own labels.
            safe = ember.where(new < big, new, 0)
            jumped = ember.where(new < big, ember.take(new, safe), big)
            new = ember.minimum(new, jumped)
            if bool((new == lab).all()):
                break
            lab = new
        roots = ember.unique(lab[core]) if bool(core.any()) else lab[:0]
        rank = ember.full((n + 1,), -1, dtype=ember.int64, device=dev)
        if roots.shape[0]:
            rank[roots] = ember.arange(roots.shape[0], device=dev)
        cl = ember.where(core, ember.take(rank, ember.where(core, lab, n)), -1)
        # Border points: smallest cluster number among core neighbours.
        parts = []
        kbig = n + 1
        for s in range(0, n, rows):
            A = self._adjacent(Xa, s, rows) & core[None, :]
            parts.append(ember.where(A, cl[None, :], kbig).min(axis=1))
        border = parts[0] if len(parts) == 1 else ember.concatenate(parts)
        labels = ember.where(core, cl, ember.where(border < kbig, border, -1))
        kind = input_kind(X)
        core_idx = ember.nonzero(core)[0]
        self.core_sample_indices_ = to_output(core_idx.astype(ember.int64), kind)
        self.components_ = to_output(ember.take(Xa, core_idx, axis=0), kind)
        self.labels_ = to_output(labels.astype(ember.int64), kind)
        return self

    def fit_predict(self, X, y=None, sample_weight=None):
        return self.fit(X, sample_weight=sample_weight).labels_


def dbscan(
    X,
    eps=0.5,
    *,
    min_samples=5,
    metric="minkowski",
    metric_params=None,
    algorithm="auto",
    leaf_size=30,
    p=2,
    sample_weight=None,
    n_jobs=None,
):
    """Functional DBSCAN: (core_sample_indices, labels)."""
    est = DBSCAN(
        eps=eps,
        min_samples=min_samples,
        metric=metric,
        metric_params=metric_params,
        algorithm=algorithm,
        leaf_size=leaf_size,
        p=p,
        n_jobs=n_jobs,
    )
    est.fit(X, sample_weight=sample_weight)
    return est.core_sample_indices_, est.labels_
