"""``AgglomerativeClustering`` (scikit-learn's ``sklearn.cluster``), unstructured (no
connectivity graph).

The n x n distance matrix is computed on the data's device (float64, the ``metrics.pairwise``
building blocks) and copied once to the host, where the merge loop runs: each step merges the
closest pair of active clusters and updates that cluster's row with the Lance-Williams formula
of the linkage (ward, complete, average, single), keeping every row's nearest neighbour cached
so that a step costs O(n) apart from the rows whose neighbour was merged. Memory is O(n^2)
(the matrix), time O(n^2) to O(n^3) depending on how often cached neighbours are invalidated.
The merges are then sorted by distance (stable) and relabelled with a union-find, as SciPy's
``linkage`` (scikit-learn's backend here) numbers them, so ``children_``/``distances_`` equal
scikit-learn's wherever no two candidate merges tie.
"""

from __future__ import annotations

import heapq
from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, ClusterMixin
from ..metrics.pairwise import distances
from ..utils._param_validation import HasMethods, Interval, StrOptions
from ..utils.validation import check_array, check_n_features, input_kind, to_output

__all__ = ["AgglomerativeClustering"]

_METRICS = {
    "euclidean",
    "l2",
    "l1",
    "manhattan",
    "cityblock",
    "cosine",
    "sqeuclidean",
    "chebyshev",
    "minkowski",
}
# Single linkage through the MST (scikit-learn's path for these metrics; SciPy's otherwise).
_MST_METRICS = {"euclidean", "l2", "l1", "manhattan", "cityblock", "chebyshev", "minkowski"}


def _merge_loop(D, linkage):
    """Host merge loop over the distance matrix D (float64, modified); returns the merges as
    (leaf_a, leaf_b, distance) in merge order, a cluster named by its smallest-slot leaf."""
    n = D.shape[0]
    np.fill_diagonal(D, np.inf)
    size = np.ones(n, dtype=np.float64)
    active = np.ones(n, dtype=bool)
    nn = np.argmin(D, axis=1)
    mind = D[np.arange(n), nn]
    merges = []
    for _ in range(n - 1):
        i = int(np.argmin(mind))
        j = int(nn[i])
        d = float(mind[i])
        if j < i:
            i, j = j, i
        merges.append((i, j, d))
        di, dj = D[i], D[j]
        if linkage == "single":
            new = np.minimum(di, dj)
        elif linkage == "complete":
            new = np.maximum(di, dj)
        elif linkage == "average":
            new = (size[i] * di + size[j] * dj) / (size[i] + size[j])
        else:  # ward on euclidean distances (Lance-Williams, squared form)
            t = size + size[i] + size[j]
            new = np.sqrt(
                np.maximum(
                    ((size + size[i]) * di * di + (size + size[j]) * dj * dj - size * d * d) / t,
                    0.0,
                )
            )
        size[i] += size[j]
        active[j] = False
        new[~active] = np.inf
        new[i] = np.inf
        D[i] = new
        D[:, i] = new
        D[j] = np.inf
        D[:, j] = np.inf
        mind[j] = np.inf
        # Rows whose cached neighbour was i or j: recompute; the others may only move to i.
        stale = active & ((nn == i) | (nn == j))
        stale[i] = True
        rows = np.nonzero(stale)[0]
        if rows.size:
            nn[rows] = np.argmin(D[rows], axis=1)
            mind[rows] = D[rows, nn[rows]]
        closer = active & ~stale & (new < mind)
        nn[closer] = i
        mind[closer] = new[closer]
    return merges


def _prim(D):
    """Single linkage as a minimum spanning tree (Prim from sample 0, scikit-learn's
    MST-LINKAGE-CORE): edges (current node, new node, distance) in the order they are added."""
    n = D.shape[0]
    in_tree = np.zeros(n, dtype=bool)
    best = np.full(n, np.inf)
    cur = 0
    edges = []
    for _ in range(n - 1):
        in_tree[cur] = True
        best = np.minimum(best, D[cur])
        cand = np.where(in_tree, np.inf, best)
        new = int(np.argmin(cand))
        edges.append((cur, new, float(cand[new])))
        cur = new
    return edges


def _label_merges(merges, n, ordered=True):
    """Stable sort by distance, then node numbers by union-find (SciPy's convention; with
    ``ordered=False`` a merge keeps its (left, right) order, as scikit-learn's MST labels)."""
    order = sorted(range(len(merges)), key=lambda t: merges[t][2])
    parent = np.arange(2 * n - 1)
    node_of = np.arange(n)  # leaf slot -> current node id via its root

    def find(x):
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    root_node = {}
    children = np.empty((len(merges), 2), dtype=np.intp)
    dist = np.empty(len(merges), dtype=np.float64)
    for t, m in enumerate(order):
        a, b, d = merges[m]
        ra, rb = find(a), find(b)
        na, nb = root_node.get(ra, node_of[ra]), root_node.get(rb, node_of[rb])
        children[t] = (min(na, nb), max(na, nb)) if ordered else (na, nb)
        dist[t] = d
        parent[rb] = ra
        root_node[ra] = n + t
    return children, dist


def _cut(n_clusters, children, n_leaves):
    """Labels of the n_clusters top nodes of the tree (scikit-learn's heap order)."""
    if n_clusters > n_leaves:
        raise ValueError(
            "Cannot extract more clusters than samples: "
            f"{n_clusters} clusters were given for a tree with {n_leaves} leaves."
        )
    heap = [-(2 * n_leaves - 2)]
    for _ in range(n_clusters - 1):
        # Split the largest node: push its first child, then swap in the second for the top.
        a, b = children[-heap[0] - n_leaves]
        heapq.heappush(heap, -int(a))
        heapq.heappushpop(heap, -int(b))
    node_label = np.full(2 * n_leaves - 1, -1, dtype=np.intp)
    for lab, node in enumerate(heap):
        node_label[-node] = lab
    for node in range(2 * n_leaves - 2, n_leaves - 1, -1):
        if node_label[node] >= 0:
            node_label[children[node - n_leaves]] = node_label[node]
    return node_label[:n_leaves]


class AgglomerativeClustering(ClusterMixin, BaseEstimator):
    """Hierarchical clustering: distances on the device, the merge loop (Lance-Williams
    updates of the n x n matrix, O(n^2) memory) on the host."""

    _parameter_constraints = {
        "n_clusters": [Interval(Integral, 1, None, closed="left"), None],
        "metric": [StrOptions(_METRICS | {"precomputed"}), callable],
        "memory": [str, HasMethods("cache"), None],
        "connectivity": [None],
        "compute_full_tree": [StrOptions({"auto"}), "boolean"],
        "linkage": [StrOptions({"ward", "complete", "average", "single"})],
        "distance_threshold": [Interval(Real, 0, None, closed="left"), None],
        "compute_distances": ["boolean"],
    }

    def __init__(
        self,
        n_clusters=2,
        *,
        metric="euclidean",
        memory=None,
        connectivity=None,
        compute_full_tree="auto",
        linkage="ward",
        distance_threshold=None,
        compute_distances=False,
    ):
        self.n_clusters = n_clusters
        self.metric = metric
        self.memory = memory
        self.connectivity = connectivity
        self.compute_full_tree = compute_full_tree
        self.linkage = linkage
        self.distance_threshold = distance_threshold
        self.compute_distances = compute_distances

    def _distance_matrix(self, X):
        metric = self.metric
        if callable(metric):
            D = metric(X)
            D = check_array(D, estimator=self, device=X.device).astype(ember.float64)
        elif metric == "precomputed":
            if X.shape[0] != X.shape[1]:
                raise ValueError(
                    f"Distance matrix should be square, got matrix of shape {tuple(X.shape)}"
                )
            D = X.astype(ember.float64)
        else:
            X64 = X.astype(ember.float64)
            if metric == "cosine" and bool((~(X64 != 0).any(axis=1)).any()):
                raise ValueError("Cosine affinity cannot be used when X contains zero vectors")
            D = distances(X64, X64, metric)
            if metric in ("euclidean", "l2", "sqeuclidean", "cosine"):
                D = (D + D.T) * 0.5  # exact symmetry of the matmul form
        if callable(metric) or metric == "precomputed":
            if D.shape[0] != D.shape[1]:
                raise ValueError(
                    f"Distance matrix should be square, got matrix of shape {tuple(D.shape)}"
                )
        return ember.asnumpy(D).copy()  # one explicit host copy: the merge loop's matrix

    def fit(self, X, y=None):
        """Build the merge tree of X (rows, or a distance matrix when precomputed)."""
        self._validate_params()
        Xa = check_array(X, estimator=self, ensure_min_samples=2)
        check_n_features(self, Xa, reset=True)
        if not ((self.n_clusters is None) ^ (self.distance_threshold is None)):
            raise ValueError(
                "Exactly one of n_clusters and distance_threshold has to be set, and the other "
                "needs to be None."
            )
        if self.distance_threshold is not None and not self.compute_full_tree:
            raise ValueError("compute_full_tree must be True if distance_threshold is set.")
        if self.linkage == "ward" and self.metric not in ("euclidean", "l2"):
            raise ValueError(
                f"{self.metric} was provided as metric. Ward can only work with euclidean "
                "distances (i.e. 'euclidean' and 'l2')."
            )
        n = Xa.shape[0]
        D = self._distance_matrix(Xa)
        if self.linkage == "single" and self.metric in _MST_METRICS:
            children, dist = _label_merges(_prim(D), n, ordered=False)
        else:
            children, dist = _label_merges(_merge_loop(D, self.linkage), n)
        self.children_ = children
        self.n_connected_components_ = 1
        self.n_leaves_ = n
        if self.distance_threshold is not None or self.compute_distances:
            self.distances_ = dist
        if self.distance_threshold is not None:
            self.n_clusters_ = int(np.count_nonzero(dist >= self.distance_threshold)) + 1
        else:
            self.n_clusters_ = self.n_clusters
        labels = _cut(self.n_clusters_, children, n)
        kind = input_kind(X)
        self.labels_ = to_output(ember.asarray(labels, device=Xa.device), kind)
        return self

    def fit_predict(self, X, y=None):
        """Fit, then ``labels_``."""
        return self.fit(X).labels_
