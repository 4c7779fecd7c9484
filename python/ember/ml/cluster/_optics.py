"""OPTICS (scikit-learn's ``sklearn.cluster.OPTICS``), ``compute_optics_graph``,
``cluster_optics_dbscan`` and ``cluster_optics_xi``.

The pairwise distances and the core distances (``topk`` of each row) are computed on X's
device. The ordering is inherently sequential (each step picks the unprocessed point of least
reachability, then relaxes its neighbours), so it runs on the host over one host copy of the
distance matrix (O(n^2) memory, O(n^2) time), as do the xi steep-area scan and the label
extraction, which walk the reachability plot once.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, ClusterMixin
from ..metrics.pairwise import PAIRWISE_DISTANCE_METRICS, block_rows, distances
from ..utils._param_validation import HasMethods, Interval, StrOptions
from ..utils.validation import check_array, check_n_features, input_kind, to_output

__all__ = ["OPTICS", "cluster_optics_dbscan", "cluster_optics_xi", "compute_optics_graph"]


class _RealNotInt(Interval):
    def is_satisfied_by(self, val):
        return not isinstance(val, (Integral, np.integer)) and super().is_satisfied_by(val)


def _exact_distances(X, metric, p):
    """Full distance matrix on X's device; euclidean/minkowski-2 from differences (not the
    dot-product expansion) so that ties and roundings behave as a direct evaluation."""
    if metric == "minkowski":
        metric = {1: "manhattan", 2: "euclidean"}.get(p, "minkowski")
    if metric not in ("euclidean", "l2"):
        return distances(X, X, metric, p)
    n, d = X.shape
    rows = block_rows(n, X.device, per_col=d)
    parts = []
    for s in range(0, n, rows):
        diff = X[s : s + rows, None, :] - X[None, :, :]
        parts.append(ember.sqrt((diff * diff).sum(axis=2)))
    return parts[0] if len(parts) == 1 else ember.concatenate(parts, axis=0)


def _validate_size(size, n_samples, name):
    if size > n_samples:
        raise ValueError(
            f"{name} must be no greater than the number of samples ({n_samples}). Got {size}"
        )


def _optics_graph(X, min_samples, metric, p, max_eps):
    """(ordering, core_distances, reachability, predecessor) as NumPy arrays."""
    n = X.shape[0]
    _validate_size(min_samples, n, "min_samples")
    if min_samples <= 1:
        min_samples = max(2, int(min_samples * n))
    if min_samples > n:
        raise ValueError(
            f"OPTICS: Expected n_neighbors <= n_samples_fit, but n_neighbors = {min_samples}, "
            f"n_samples_fit = {n}, n_samples = {n}"
        )
    D = X if metric == "precomputed" else _exact_distances(X, metric, p)
    core = ember.topk(D, int(min_samples), dim=1, largest=False, sorted=True).values[:, -1]
    # The sequential part: host copies of the core distances and the distance matrix.
    core = ember.asnumpy(core).copy()
    Dh = ember.asnumpy(D)
    expand = metric in ("euclidean", "l2")
    if expand:
        # scikit-learn's reachability step uses the dot-product expansion for this metric,
        # one point against the candidates (a matrix-vector product); the host loop does the
        # same so that near-ties at the rounding digit fall the same way.
        Xh = ember.asnumpy(X)
        XX = np.einsum("ij,ij->i", Xh, Xh)
    dec = np.finfo(Dh.dtype).precision
    core[core > max_eps] = np.inf
    np.around(core, decimals=dec, out=core)
    reach = np.full(n, np.inf, dtype=Dh.dtype)
    pred = np.full(n, -1, dtype=np.int64)
    processed = np.zeros(n, dtype=bool)
    work = reach.copy()  # reachability with processed points at +inf
    ordering = np.zeros(n, dtype=np.int64)
    for k in range(n):
        pt = int(np.argmin(work))
        if not np.isfinite(work[pt]):
            pt = int(np.argmin(processed))
        processed[pt] = True
        work[pt] = np.inf
        ordering[k] = pt
        if not np.isfinite(core[pt]):
            continue
        row = Dh[pt]
        cand = np.flatnonzero((row <= max_eps) & ~processed)
        if not cand.size:
            continue
        dist = row[cand]
        if expand:
            sq = -2 * (Xh[pt : pt + 1] @ Xh[cand].T)[0]
            sq += XX[pt]
            sq += XX[cand]
            dist = np.sqrt(np.maximum(sq, 0))
        rd = np.maximum(dist, core[pt])
        np.around(rd, decimals=dec, out=rd)
        better = rd < reach[cand]
        upd = cand[better]
        reach[upd] = rd[better]
        work[upd] = rd[better]
        pred[upd] = pt
    if np.all(np.isinf(reach)):
        warnings.warn(
            "All reachability values are inf. Set a larger max_eps or all data will be "
            "considered outliers.",
            UserWarning,
            stacklevel=3,
        )
    return ordering, core, reach, pred


def compute_optics_graph(
    X, *, min_samples, max_eps, metric, p, metric_params, algorithm, leaf_size, n_jobs
):
    """The OPTICS reachability graph: (ordering_, core_distances_, reachability_,
    predecessor_)."""
    Xa = check_array(X, estimator="compute_optics_graph")
    out = _optics_graph(Xa, min_samples, metric, p, max_eps)
    kind = input_kind(X)
    return tuple(to_output(ember.asarray(a, device=Xa.device), kind) for a in out)


def cluster_optics_dbscan(*, reachability, core_distances, ordering, eps):
    """DBSCAN labels at ``eps`` read off the OPTICS graph (no second neighbour search)."""
    kind = input_kind(reachability)
    reach = ember.asnumpy(reachability) if kind == "ember" else np.asarray(reachability)
    core = ember.asnumpy(core_distances) if kind == "ember" else np.asarray(core_distances)
    order = ember.asnumpy(ordering) if kind == "ember" else np.asarray(ordering)
    labels = np.zeros(len(core), dtype=np.int64)
    far = reach > eps
    near = core <= eps
    labels[order] = np.cumsum(far[order] & near[order]) - 1
    labels[far & ~near] = -1
    return labels if kind == "numpy" else ember.asarray(labels, device=reachability.device)


def _extend_region(steep, xward, start, min_samples):
    n = len(steep)
    run = 0
    end = start
    for i in range(start, n):
        if steep[i]:
            run = 0
            end = i
        elif not xward[i]:
            run += 1
            if run > min_samples:
                break
        else:
            return end
    return end


def _filter_sdas(sdas, mib, xi_c, r):
    if np.isinf(mib):
        return []
    kept = [a for a in sdas if mib <= r[a[0]] * xi_c]
    for a in kept:
        a[2] = max(a[2], mib)
    return kept


def _correct_predecessor(r, pred, ordering, s, e):
    while s < e:
        if r[s] > r[e]:
            return s, e
        if pred[e] in ordering[s:e]:
            return s, e
        e -= 1
    return None, None


def _xi_cluster(r, pred, ordering, xi, min_samples, min_cluster_size, correction):
    """Clusters (start, end) in the reachability plot from its xi-steep areas (Ankerst et
    al. 1999, section 4.3), innermost first."""
    r = np.hstack((r, np.inf))
    xi_c = 1 - xi
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = r[:-1] / r[1:]
        up_steep = ratio <= xi_c
        down_steep = ratio >= 1 / xi_c
        down = ratio > 1
        up = ratio < 1
    sdas = []  # steep down areas as [start, end, mib]
    clusters = []
    index = 0
    mib = 0.0
    for si in np.flatnonzero(up_steep | down_steep):
        if si < index:
            continue
        mib = max(mib, np.max(r[index : si + 1]))
        sdas = _filter_sdas(sdas, mib, xi_c, r)
        if down_steep[si]:
            end = _extend_region(down_steep, up, si, min_samples)
            sdas.append([si, end, 0.0])
            index = end + 1
            mib = r[index]
            continue
        u_start = si
        u_end = _extend_region(up_steep, down, si, min_samples)
        index = u_end + 1
        mib = r[index]
        found = []
        for d_start, d_end, d_mib in sdas:
            c_start, c_end = d_start, u_end
            if r[c_end + 1] * xi_c < d_mib:
                continue
            d_max = r[d_start]
            if d_max * xi_c >= r[c_end + 1]:
                while r[c_start + 1] > r[c_end + 1] and c_start < d_end:
                    c_start += 1
            elif r[c_end + 1] * xi_c >= d_max:
                while r[c_end - 1] > d_max and c_end > u_start:
                    c_end -= 1
            if correction:
                c_start, c_end = _correct_predecessor(r, pred, ordering, c_start, c_end)
            if c_start is None or c_end - c_start + 1 < min_cluster_size:
                continue
            if c_start > d_end or c_end < u_start:
                continue
            found.append((c_start, c_end))
        clusters.extend(found[::-1])
    return np.array(clusters)


def _xi_labels(ordering, clusters):
    labels = np.full(len(ordering), -1, dtype=np.int64)
    label = 0
    for c in clusters:
        if np.all(labels[c[0] : c[1] + 1] == -1):
            labels[c[0] : c[1] + 1] = label
            label += 1
    out = np.empty_like(labels)
    out[ordering] = labels
    return out


def cluster_optics_xi(
    *,
    reachability,
    predecessor,
    ordering,
    min_samples,
    min_cluster_size=None,
    xi=0.05,
    predecessor_correction=True,
):
    """Labels and cluster hierarchy from the OPTICS graph by the xi-steep method."""
    kind = input_kind(reachability)
    reach, pred, order = (
        ember.asnumpy(a) if kind == "ember" else np.asarray(a)
        for a in (reachability, predecessor, ordering)
    )
    n = len(reach)
    _validate_size(min_samples, n, "min_samples")
    if min_samples <= 1:
        min_samples = max(2, int(min_samples * n))
    if min_cluster_size is None:
        min_cluster_size = min_samples
    _validate_size(min_cluster_size, n, "min_cluster_size")
    if min_cluster_size <= 1:
        min_cluster_size = max(2, int(min_cluster_size * n))
    clusters = _xi_cluster(
        reach[order],
        pred[order],
        order,
        xi,
        min_samples,
        min_cluster_size,
        predecessor_correction,
    )
    labels = _xi_labels(order, clusters)
    if kind == "ember":
        dev = reachability.device
        return ember.asarray(labels, device=dev), ember.asarray(
            clusters.reshape(-1, 2).astype(np.int64), device=dev
        )
    return labels, clusters


class OPTICS(ClusterMixin, BaseEstimator):
    """Ordering points to identify the clustering structure."""

    _parameter_constraints = {
        "min_samples": [
            Interval(Integral, 2, None, closed="left"),
            _RealNotInt(Real, 0, 1, closed="both"),
        ],
        "max_eps": [Interval(Real, 0, None, closed="both")],
        "metric": [StrOptions(PAIRWISE_DISTANCE_METRICS | {"minkowski", "precomputed"})],
        "p": [Interval(Real, 1, None, closed="left")],
        "metric_params": [dict, None],
        "cluster_method": [StrOptions({"dbscan", "xi"})],
        "eps": [Interval(Real, 0, None, closed="both"), None],
        "xi": [Interval(Real, 0, 1, closed="both")],
        "predecessor_correction": ["boolean"],
        "min_cluster_size": [
            Interval(Integral, 2, None, closed="left"),
            _RealNotInt(Real, 0, 1, closed="right"),
            None,
        ],
        "algorithm": [StrOptions({"auto", "brute", "ball_tree", "kd_tree"})],
        "leaf_size": [Interval(Integral, 1, None, closed="left")],
        "memory": [str, HasMethods("cache"), None],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        *,
        min_samples=5,
        max_eps=np.inf,
        metric="minkowski",
        p=2,
        metric_params=None,
        cluster_method="xi",
        eps=None,
        xi=0.05,
        predecessor_correction=True,
        min_cluster_size=None,
        algorithm="auto",
        leaf_size=30,
        memory=None,
        n_jobs=None,
    ):
        self.min_samples = min_samples
        self.max_eps = max_eps
        self.metric = metric
        self.p = p
        self.metric_params = metric_params
        self.cluster_method = cluster_method
        self.eps = eps
        self.xi = xi
        self.predecessor_correction = predecessor_correction
        self.min_cluster_size = min_cluster_size
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.memory = memory
        self.n_jobs = n_jobs

    def fit(self, X, y=None):
        """Compute the OPTICS graph and extract clusters; sets ``ordering_``,
        ``reachability_``, ``core_distances_``, ``predecessor_``, ``labels_`` (and
        ``cluster_hierarchy_`` for 'xi')."""
        self._validate_params()
        Xa = check_array(X, estimator=self)
        if self.metric == "precomputed" and Xa.shape[0] != Xa.shape[1]:
            raise ValueError(
                f"OPTICS: precomputed X must be a square distance matrix, got shape "
                f"{tuple(Xa.shape)}"
            )
        check_n_features(self, Xa, reset=True)
        eps = self.eps
        if self.cluster_method == "dbscan":
            eps = self.max_eps if eps is None else eps
            if eps > self.max_eps:
                raise ValueError(
                    f"OPTICS: Specify an epsilon smaller than {self.max_eps}. Got eps={eps}."
                )
        p = (self.metric_params or {}).get("p", self.p)
        order, core, reach, pred = _optics_graph(Xa, self.min_samples, self.metric, p, self.max_eps)
        if self.cluster_method == "xi":
            labels, clusters = cluster_optics_xi(
                reachability=reach,
                predecessor=pred,
                ordering=order,
                min_samples=self.min_samples,
                min_cluster_size=self.min_cluster_size,
                xi=self.xi,
                predecessor_correction=self.predecessor_correction,
            )
        else:
            labels = cluster_optics_dbscan(
                reachability=reach, core_distances=core, ordering=order, eps=eps
            )
        kind = input_kind(X)

        def out(a):
            return a if kind == "numpy" else ember.asarray(a, device=Xa.device)

        self.ordering_ = out(order)
        self.core_distances_ = out(core)
        self.reachability_ = out(reach)
        self.predecessor_ = out(pred)
        self.labels_ = out(labels)
        if self.cluster_method == "xi":
            self.cluster_hierarchy_ = (
                clusters if kind == "numpy" else out(clusters.reshape(-1, 2).astype(np.int64))
            )
        return self
