"""Birch (scikit-learn's ``sklearn.cluster.Birch``).

Building the CF tree is inherently sequential: every sample descends the tree along the
closest subcluster, is absorbed or appended, and splits propagate upwards before the next
sample is read. It runs on the host (NumPy, float64 clustering features, the same arithmetic
order as scikit-learn so the same merge and split decisions are taken). The parts that are
data-parallel run on X's device: the global clustering of the subcluster centres (ember's
AgglomerativeClustering, or any clusterer given), ``predict``/``labels_`` (nearest subcluster
by one blocked distance matrix and an argmin) and ``transform`` (the distance matrix).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

import ember

from ..base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    ClusterMixin,
    TransformerMixin,
)
from ..exceptions import ConvergenceWarning, sklearn_compatible
from ..metrics.pairwise import sq_euclidean
from ..utils._param_validation import HasMethods, Interval
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    to_device,
    to_output,
)
from ._agglomerative import AgglomerativeClustering

__all__ = ["Birch"]


class _CF:
    """Clustering feature: count, linear sum, sum of squared norms (and an optional child)."""

    __slots__ = ("n", "ls", "ss", "centroid", "sq_norm", "child")

    def __init__(self, sample=None):
        self.child = None
        if sample is None:
            self.n, self.ls, self.ss = 0, None, 0.0
            self.centroid, self.sq_norm = None, 0.0
        else:
            self.n = 1
            self.ls = sample.copy()
            self.centroid = self.ls
            self.ss = self.sq_norm = float(np.dot(sample, sample))

    def absorb(self, other):
        self.n += other.n
        self.ls = other.ls.copy() if self.ls is None else self.ls + other.ls
        self.ss += other.ss
        self.centroid = self.ls / self.n
        self.sq_norm = float(np.dot(self.centroid, self.centroid))

    def try_merge(self, other, threshold):
        ss = self.ss + other.ss
        ls = self.ls + other.ls
        n = self.n + other.n
        c = (1 / n) * ls
        sq = float(np.dot(c, c))
        if ss / n - sq <= threshold**2:
            self.n, self.ls, self.ss, self.centroid, self.sq_norm = n, ls, ss, c, sq
            return True
        return False


class _Node:
    """A CF-tree node: up to ``branching_factor`` clustering features (one more while it
    waits to be split); leaves are chained left to right."""

    def __init__(self, is_leaf, n_features):
        self.is_leaf = is_leaf
        self.cfs = []
        self.centroids = np.zeros((0, n_features))
        self.sq_norms = np.zeros(0)
        self.prev = self.next = None

    def _set(self, i, cf):
        if i == len(self.cfs):
            self.cfs.append(cf)
            self.centroids = np.vstack([self.centroids, cf.centroid[None, :]])
            self.sq_norms = np.append(self.sq_norms, cf.sq_norm)
        else:
            self.cfs[i] = cf
            self.centroids[i] = cf.centroid
            self.sq_norms[i] = cf.sq_norm

    def append(self, cf):
        self._set(len(self.cfs), cf)

    def insert(self, cf, threshold, bf):
        """Insert ``cf``; True when this node now overflows and must be split."""
        if not self.cfs:
            self.append(cf)
            return False
        dist = np.dot(self.centroids, cf.centroid)
        dist *= -2.0
        dist += self.sq_norms
        i = int(np.argmin(dist))
        near = self.cfs[i]
        if near.child is not None:
            if not near.child.insert(cf, threshold, bf):
                near.absorb(cf)
                self._set(i, near)
                return False
            a, b = _split(near.child)
            self._set(i, a)
            self.append(b)
            return len(self.cfs) > bf
        if near.try_merge(cf, threshold):
            self._set(i, near)
            return False
        self.append(cf)
        return len(self.cfs) > bf


def _split(node):
    """Split an overflowing node around its two farthest centroids; the two parent CFs."""
    d = node.centroids.shape[1]
    halves = [_Node(node.is_leaf, d), _Node(node.is_leaf, d)]
    parents = [_CF(), _CF()]
    parents[0].child, parents[1].child = halves
    if node.is_leaf:
        a, b = halves
        if node.prev is not None:
            node.prev.next = a
        a.prev, a.next = node.prev, b
        b.prev, b.next = a, node.next
        if node.next is not None:
            node.next.prev = b
    C = node.centroids
    XX = np.einsum("ij,ij->i", C, C)
    D = -2 * (C @ C.T)
    D += XX[:, None]
    D += XX[None, :]
    np.maximum(D, 0, out=D)
    np.fill_diagonal(D, 0)
    m = D.shape[0]
    i, j = np.unravel_index(D.argmax(), (m, m))
    first = D[i] < D[j]
    first[i] = True
    for k, cf in enumerate(node.cfs):
        side = 0 if first[k] else 1
        halves[side].append(cf)
        parents[side].absorb(cf)
    return parents[0], parents[1]


class Birch(ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin, BaseEstimator):
    """Balanced iterative reducing and clustering using hierarchies."""

    _parameter_constraints = {
        "threshold": [Interval(Real, 0.0, None, closed="neither")],
        "branching_factor": [Interval(Integral, 1, None, closed="neither")],
        "n_clusters": [
            None,
            HasMethods(["fit_predict"]),
            Interval(Integral, 1, None, closed="left"),
        ],
        "compute_labels": ["boolean"],
    }

    def __init__(self, *, threshold=0.5, branching_factor=50, n_clusters=3, compute_labels=True):
        self.threshold = threshold
        self.branching_factor = branching_factor
        self.n_clusters = n_clusters
        self.compute_labels = compute_labels

    def _fit(self, X, partial):
        self._validate_params()
        first = not (partial and hasattr(self, "root_"))
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=first)
        d = Xa.shape[1]
        if first:
            self.root_ = _Node(True, d)
            self.dummy_leaf_ = _Node(True, d)
            self.dummy_leaf_.next = self.root_
            self.root_.prev = self.dummy_leaf_
            self._kind = input_kind(X)
            self._device = Xa.device
        t, bf = float(self.threshold), int(self.branching_factor)
        # The CF tree is built on the host, one sample after another.
        for row in ember.asnumpy(Xa).astype(np.float64):
            if self.root_.insert(_CF(row), t, bf):
                a, b = _split(self.root_)
                self.root_ = _Node(False, d)
                self.root_.append(a)
                self.root_.append(b)
        leaves = []
        node = self.dummy_leaf_.next
        while node is not None:
            leaves.append(node.centroids)
            node = node.next
        centers = np.concatenate(leaves)
        self._centers = ember.asarray(centers, device=Xa.device).astype(Xa.dtype)
        self.subcluster_centers_ = to_output(self._centers, self._kind)
        self._n_features_out = centers.shape[0]
        self._global_clustering(Xa)
        return self

    def fit(self, X, y=None):
        """Build the CF tree of X and cluster its leaves; sets ``subcluster_centers_``,
        ``subcluster_labels_``, ``labels_``."""
        return self._fit(X, partial=False)

    def partial_fit(self, X=None, y=None):
        """Add X to the CF tree (or, with X None, only redo the global clustering)."""
        if X is None:
            check_is_fitted(self, "subcluster_centers_")
            self._global_clustering()
            return self
        return self._fit(X, partial=True)

    def _global_clustering(self, X=None):
        C = self._centers
        k = self.n_clusters
        clusterer = k
        few = False
        if isinstance(k, Integral) and not isinstance(k, bool):
            clusterer = AgglomerativeClustering(n_clusters=int(k))
            few = C.shape[0] < k
        if clusterer is None or few:
            sub = ember.arange(C.shape[0], device=C.device).astype(ember.int64)
            if few:
                warnings.warn(
                    f"Number of subclusters found ({C.shape[0]}) by BIRCH is less than ({k}). "
                    "Decrease the threshold.",
                    sklearn_compatible(ConvergenceWarning),
                    stacklevel=3,
                )
        else:
            # As scikit-learn, a given clusterer is fitted in place on the centres (host
            # estimators get a NumPy copy).
            ours = type(clusterer).__module__.startswith("ember")
            lab = clusterer.fit_predict(C if ours else ember.asnumpy(C))
            sub = to_device(lab, C.device).astype(ember.int64)
        self._sub_labels = sub
        self.subcluster_labels_ = to_output(sub, self._kind)
        if X is not None and self.compute_labels:
            self.labels_ = to_output(self._nearest(X), self._kind)

    def _nearest(self, Xa):
        C = to_device(self._centers, Xa.device)
        idx = ember.argmin(sq_euclidean(Xa.astype(C.dtype), C), axis=1)
        return ember.take(to_device(self._sub_labels, Xa.device), idx)

    def _check(self, X):
        check_is_fitted(self, "subcluster_centers_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        return Xa

    def predict(self, X):
        """Label of the nearest subcluster centre of each sample."""
        Xa = self._check(X)
        return to_output(self._nearest(Xa).astype(ember.int64), input_kind(X))

    def transform(self, X):
        """Euclidean distances from each sample to every subcluster centre."""
        Xa = self._check(X)
        C = to_device(self._centers, Xa.device)
        return to_output(ember.sqrt(sq_euclidean(Xa.astype(C.dtype), C)), input_kind(X))
