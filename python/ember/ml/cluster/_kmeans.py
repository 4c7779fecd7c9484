"""KMeans and MiniBatchKMeans (scikit-learn's ``sklearn.cluster``) over ember ops.

Distances are ``||x||^2 - 2 X C^T + ||c||^2`` (one matmul), assignments ``argmin`` along rows,
centre updates a ``scatter_add`` of the weighted points by label divided by ``bincount``
weights; k-means++ draws candidates by ``cumsum`` + ``searchsorted`` over the current potential
(greedy, ``2 + log k`` trials, as scikit-learn).
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import ember

from ..base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    ClusterMixin,
    TransformerMixin,
)
from ..exceptions import ConvergenceWarning
from ..metrics.pairwise import sq_euclidean
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    check_random_state,
    check_sample_weight,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["KMeans", "MiniBatchKMeans", "kmeans_plusplus"]


def _draw(rng, cum, n_draws, device):
    """Indices drawn with probability proportional to the increments of ``cum``."""
    u = rng.random((n_draws,), dtype="float64", device=device) * float(cum[-1])
    idx = ember.searchsorted(cum.astype(ember.float64), u, side="right")
    return ember.clip(idx, 0, cum.shape[0] - 1)


def _kmeanspp(X, k, x_sq, rng, sample_weight, n_local_trials=None):
    """Greedy k-means++ seeding; returns (centers, indices)."""
    n, d = X.shape
    dev = X.device
    if n_local_trials is None:
        n_local_trials = 2 + int(math.log(k))
    w = sample_weight
    first = _draw(rng, ember.cumsum(w), 1, dev)
    idx = [int(first[0])]
    centers = ember.empty((k, d), dtype=X.dtype, device=dev)
    centers[0] = X[idx[0]]
    closest = sq_euclidean(centers[0:1], X, YY=x_sq)[0]
    pot = float((closest * w).sum())
    for c in range(1, k):
        if pot <= 0:
            cand = _draw(rng, ember.cumsum(w), n_local_trials, dev)
        else:
            cand = _draw(rng, ember.cumsum(closest * w), n_local_trials, dev)
        dc = sq_euclidean(ember.take(X, cand, axis=0), X, YY=x_sq)
        dc = ember.minimum(closest[None, :], dc)
        pots = (dc * w[None, :]).sum(axis=1)
        best = int(ember.argmin(pots))
        pot = float(pots[best])
        closest = dc[best]
        bi = int(cand[best])
        idx.append(bi)
        centers[c] = X[bi]
    return centers, ember.asarray(idx, device=dev)


def kmeans_plusplus(
    X,
    n_clusters,
    *,
    sample_weight=None,
    x_squared_norms=None,
    random_state=None,
    n_local_trials=None,
):
    """k-means++ initial centres and their indices in X (scikit-learn's function)."""
    Xa = check_array(X, estimator="kmeans_plusplus")
    if Xa.shape[0] < n_clusters:
        raise ValueError(
            f"kmeans_plusplus: n_samples={Xa.shape[0]} should be >= n_clusters={n_clusters}."
        )
    w = check_sample_weight(sample_weight, Xa)
    x_sq = (
        (Xa * Xa).sum(axis=1) if x_squared_norms is None else to_device(x_squared_norms, Xa.device)
    )
    rng = check_random_state(random_state)
    c, i = _kmeanspp(Xa, n_clusters, x_sq, rng, w, n_local_trials)
    kind = input_kind(X)
    return to_output(c, kind), to_output(i, kind)


def _assign(X, centers, x_sq):
    D = sq_euclidean(X, centers, XX=x_sq)
    labels = ember.argmin(D, axis=1)
    mind = ember.take_along_axis(D, labels[:, None], axis=1)[:, 0]
    return labels, mind


def _update(X, w, labels, k, old_centers, mind):
    """New centres as weighted means; empty clusters take the farthest points (as sklearn)."""
    n, d = X.shape
    # w is None for unit weights: no weighted copy of X per iteration.
    wsum = ember.bincount(labels, weights=w, minlength=k).astype(X.dtype)
    idx = ember.broadcast_to(labels[:, None], (n, d))
    sums = ember.scatter_add(
        ember.zeros((k, d), dtype=X.dtype, device=X.device),
        0,
        idx,
        X if w is None else X * w[:, None],
    )
    empty = wsum == 0
    n_empty = int(empty.sum())
    if n_empty:
        far = ember.argsort(-mind)[:n_empty]
        empty_ids = ember.nonzero(empty)[0]
        if w is None:
            sums[empty_ids] = ember.take(X, far, axis=0)
            wsum[empty_ids] = 1.0
        else:
            sums[empty_ids] = ember.take(X, far, axis=0) * ember.take(w, far)[:, None]
            wsum[empty_ids] = ember.take(w, far)
    return sums / wsum[:, None]


def _lloyd(X, w, centers, x_sq, max_iter, tol):
    """Lloyd iterations with scikit-learn's stopping rule (labels unchanged, or shift <= tol)."""
    k = centers.shape[0]
    labels_old = None
    strict = False
    i = 0
    for i in range(max_iter):  # noqa: B007  (read after the loop)
        labels, mind = _assign(X, centers, x_sq)
        new_centers = _update(X, w, labels, k, centers, mind)
        shift = float(((new_centers - centers) ** 2).sum())
        centers = new_centers
        if labels_old is not None and bool((labels == labels_old).all()):
            strict = True
            break
        if shift <= tol:
            break
        labels_old = labels
    if not strict:
        labels, mind = _assign(X, centers, x_sq)
    else:
        D = sq_euclidean(X, centers, XX=x_sq)
        mind = ember.take_along_axis(D, labels[:, None], axis=1)[:, 0]
    inertia = float(mind.sum() if w is None else (mind * w).sum())
    return labels, inertia, centers, i + 1


class _KMeansBase(ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin, BaseEstimator):
    def _check_fit_data(self, X):
        Xa = check_array(X, estimator=self)
        if Xa.shape[0] < self.n_clusters:
            raise ValueError(f"n_samples={Xa.shape[0]} should be >= n_clusters={self.n_clusters}.")
        return Xa

    def _init_centroids(self, X, x_sq, rng, w, init_size=None):
        n = X.shape[0]
        k = self.n_clusters
        if init_size is not None and init_size < n:
            sel = rng.integers(0, n, size=init_size, device=X.device)
            X = ember.take(X, sel, axis=0)
            x_sq = ember.take(x_sq, sel)
            w = ember.take(w, sel)
            n = init_size
        init = self.init
        if isinstance(init, str) and init == "k-means++":
            return _kmeanspp(X, k, x_sq, rng, w)[0]
        if isinstance(init, str) and init == "random":
            # Weighted sampling without replacement on the device (Efraimidis-Spirakis keys).
            u = rng.random((n,), dtype="float64", device=X.device)
            keys = ember.log(ember.maximum(u, 1e-300)) / w.astype(ember.float64)
            sel = ember.topk(keys, k).indices
            return ember.take(X, sel, axis=0)
        if callable(init):
            c = init(X, k, random_state=rng)
        else:
            c = init
        c = check_array(c, estimator=self, device=X.device).astype(X.dtype)
        return c

    def _check_init_array(self, X):
        init = self.init
        if isinstance(init, str) or callable(init):
            return
        c = check_array(init, estimator=self)
        if c.shape[0] != self.n_clusters:
            raise ValueError(
                f"The shape of the initial centers {tuple(c.shape)} does not match the number "
                f"of clusters {self.n_clusters}."
            )
        if c.shape[1] != X.shape[1]:
            raise ValueError(
                f"The shape of the initial centers {tuple(c.shape)} does not match the number "
                f"of features of the data {X.shape[1]}."
            )

    def _n_init(self):
        init = self.init
        if self.n_init == "auto":
            if isinstance(init, str) and init == "random":
                return 3 if isinstance(self, MiniBatchKMeans) else 10
            return 1
        if not isinstance(init, str) and not callable(init) and self.n_init != 1:
            warnings.warn(
                "Explicit initial center position passed: performing only one init in "
                f"{type(self).__name__} instead of n_init={self.n_init}.",
                RuntimeWarning,
                stacklevel=3,
            )
            return 1
        return self.n_init

    def _check_test_data(self, X):
        check_is_fitted(self, "cluster_centers_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        C = to_device(self.cluster_centers_, Xa.device)
        if Xa.dtype != C.dtype:
            Xa = Xa.astype(C.dtype)
        return Xa, C

    def predict(self, X, sample_weight=None):
        """Index of the closest centre for each sample."""
        Xa, C = self._check_test_data(X)
        labels, _ = _assign(Xa, C, (Xa * Xa).sum(axis=1))
        return to_output(labels.astype(ember.int32), input_kind(X))

    def transform(self, X):
        """Euclidean distance of each sample to every centre."""
        Xa, C = self._check_test_data(X)
        return to_output(ember.sqrt(sq_euclidean(Xa, C)), input_kind(X))

    def fit_transform(self, X, y=None, sample_weight=None):
        return self.fit(X, sample_weight=sample_weight).transform(X)

    def fit_predict(self, X, y=None, sample_weight=None):
        return self.fit(X, sample_weight=sample_weight).labels_

    def score(self, X, y=None, sample_weight=None):
        """Minus the inertia of X against the fitted centres."""
        Xa, C = self._check_test_data(X)
        w = check_sample_weight(sample_weight, Xa)
        _, mind = _assign(Xa, C, (Xa * Xa).sum(axis=1))
        return -float((mind * w).sum())


_COMMON = {
    "n_clusters": [Interval(Integral, 1, None, closed="left")],
    "init": [StrOptions({"k-means++", "random"}), callable, "array-like"],
    "n_init": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
    "random_state": ["random_state"],
}


class KMeans(_KMeansBase):
    """K-Means clustering (Lloyd's algorithm; ``algorithm='elkan'`` runs the same iterations)."""

    _parameter_constraints = {
        **_COMMON,
        "tol": [Interval(Real, 0, None, closed="left")],
        "copy_x": ["boolean"],
        "algorithm": [StrOptions({"lloyd", "elkan"})],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        init="k-means++",
        n_init="auto",
        max_iter=300,
        tol=1e-4,
        verbose=0,
        random_state=None,
        copy_x=True,
        algorithm="lloyd",
    ):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state
        self.copy_x = copy_x
        self.algorithm = algorithm

    def fit(self, X, y=None, sample_weight=None):
        """Cluster X; sets ``cluster_centers_``, ``labels_``, ``inertia_``, ``n_iter_``."""
        self._validate_params()
        Xa = self._check_fit_data(X)
        self._check_init_array(Xa)
        check_n_features(self, Xa, reset=True)
        w = check_sample_weight(sample_weight, Xa)
        rng = check_random_state(self.random_state)
        # Centre the data (numerically kinder distances), as scikit-learn does.
        mean = Xa.mean(axis=0)
        Xc = Xa - mean
        tol = float(Xa.var(axis=0).mean()) * self.tol if self.tol else 0.0
        x_sq = (Xc * Xc).sum(axis=1)
        best = None
        for _ in range(self._n_init()):
            if isinstance(self.init, str):
                c0 = self._init_centroids(Xc, x_sq, rng, w)
            else:
                c0 = self._init_centroids(Xa, None, rng, w) - mean
            w_l = None if sample_weight is None else w
            labels, inertia, centers, n_iter = _lloyd(Xc, w_l, c0, x_sq, self.max_iter, tol)
            if best is None or inertia < best[1]:
                best = (labels, inertia, centers, n_iter)
        labels, inertia, centers, n_iter = best
        n_distinct = int(ember.unique(labels).shape[0])
        if n_distinct < self.n_clusters:
            warnings.warn(
                f"Number of distinct clusters ({n_distinct}) found smaller than n_clusters "
                f"({self.n_clusters}). Possibly due to duplicate points in X.",
                ConvergenceWarning,
                stacklevel=2,
            )
        kind = input_kind(X)
        self.cluster_centers_ = to_output(centers + mean, kind)
        self.labels_ = to_output(labels.astype(ember.int32), kind)
        self.inertia_ = inertia
        self.n_iter_ = n_iter
        self._n_features_out = self.n_clusters
        return self


class MiniBatchKMeans(_KMeansBase):
    """Mini-batch K-Means: online centre updates with per-centre counts (Sculley's rule)."""

    _non_deterministic = True

    def __getstate__(self):
        # ember Generators do not pickle; partial_fit after unpickling starts a fresh stream.
        state = dict(self.__dict__)
        state.pop("_rng", None)
        return state

    _parameter_constraints = {
        **_COMMON,
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "compute_labels": ["boolean"],
        "max_no_improvement": [Interval(Integral, 0, None, closed="left"), None],
        "init_size": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="left")],
        "reassignment_ratio": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        init="k-means++",
        max_iter=100,
        batch_size=1024,
        verbose=0,
        compute_labels=True,
        random_state=None,
        tol=0.0,
        max_no_improvement=10,
        init_size=None,
        n_init="auto",
        reassignment_ratio=0.01,
    ):
        self.n_clusters = n_clusters
        self.init = init
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.verbose = verbose
        self.compute_labels = compute_labels
        self.random_state = random_state
        self.tol = tol
        self.max_no_improvement = max_no_improvement
        self.init_size = init_size
        self.n_init = n_init
        self.reassignment_ratio = reassignment_ratio

    def _step(self, Xb, wb, centers, counts, rng):
        k = centers.shape[0]
        labels, mind = _assign(Xb, centers, (Xb * Xb).sum(axis=1))
        bw = ember.bincount(labels, weights=wb, minlength=k).astype(centers.dtype)
        n, d = Xb.shape
        sums = ember.scatter_add(
            ember.zeros((k, d), dtype=Xb.dtype, device=Xb.device),
            0,
            ember.broadcast_to(labels[:, None], (n, d)),
            Xb * wb[:, None],
        )
        new_counts = counts + bw
        safe = ember.where(new_counts == 0, 1.0, new_counts)
        upd = (centers * counts[:, None] + sums) / safe[:, None]
        centers = ember.where((bw > 0)[:, None], upd, centers)
        if self.reassignment_ratio > 0:
            low = new_counts < self.reassignment_ratio * new_counts.max()
            n_low = int(low.sum())
            if 0 < n_low < k and float(rng.random()) < 0.1:
                pick = rng.choice(n, size=min(n_low, n), replace=False, device=Xb.device)
                ids = ember.nonzero(low)[0][: pick.shape[0]]
                centers[ids] = ember.take(Xb, to_device(pick, Xb.device), axis=0)
                new_counts[ids] = ember.minimum(new_counts[ids], new_counts[new_counts > 0].min())
        return centers, new_counts, float((mind * wb).sum())

    def fit(self, X, y=None, sample_weight=None):
        """Cluster X with mini-batches; stops after ``max_iter`` passes or no improvement."""
        self._validate_params()
        Xa = self._check_fit_data(X)
        self._check_init_array(Xa)
        check_n_features(self, Xa, reset=True)
        w = check_sample_weight(sample_weight, Xa)
        rng = check_random_state(self.random_state)
        self._rng = rng
        n = Xa.shape[0]
        bs = min(self.batch_size, n)
        init_size = self.init_size if self.init_size is not None else 3 * bs
        init_size = max(min(init_size, n), self.n_clusters)
        x_sq = (Xa * Xa).sum(axis=1)
        # Candidate inits are scored on one validation batch, as scikit-learn does.
        val = rng.integers(0, n, size=init_size, device=Xa.device)
        Xv, wv = ember.take(Xa, val, axis=0), ember.take(w, val)
        best = None
        for _ in range(self._n_init()):
            c = self._init_centroids(Xa, x_sq, rng, w, init_size=init_size)
            _, mind = _assign(Xv, c, (Xv * Xv).sum(axis=1))
            inert = float((mind * wv).sum())
            if best is None or inert < best[0]:
                best = (inert, c)
        centers = best[1]
        counts = ember.zeros((self.n_clusters,), dtype=Xa.dtype, device=Xa.device)
        n_steps = (self.max_iter * n) // bs
        ewa = None
        best_ewa = None
        no_improve = 0
        tol = float(Xa.var(axis=0).mean()) * self.tol if self.tol else 0.0
        step = 0
        for step in range(1, n_steps + 1):  # noqa: B007  (read after the loop)
            sel = rng.integers(0, n, size=bs, device=Xa.device)
            old = centers
            centers, counts, inert = self._step(
                ember.take(Xa, sel, axis=0), ember.take(w, sel), centers, counts, rng
            )
            inert /= bs
            ewa = (
                inert
                if ewa is None
                else ewa * (1 - bs * 2.0 / (n + 1)) + inert * (bs * 2.0 / (n + 1))
            )
            if tol > 0 and float(((centers - old) ** 2).sum()) <= tol:
                break
            if best_ewa is None or ewa < best_ewa:
                best_ewa = ewa
                no_improve = 0
            else:
                no_improve += 1
            if self.max_no_improvement is not None and no_improve >= self.max_no_improvement:
                break
        kind = input_kind(X)
        self.cluster_centers_ = to_output(centers, kind)
        self._counts = counts
        self.n_steps_ = step
        self.n_iter_ = int(math.ceil(step * bs / n))
        if self.compute_labels:
            labels, mind = _assign(Xa, centers, x_sq)
            self.labels_ = to_output(labels.astype(ember.int32), kind)
            self.inertia_ = float((mind * w).sum())
        self._n_features_out = self.n_clusters
        return self

    def partial_fit(self, X, y=None, sample_weight=None):
        """One mini-batch update with X (initialising the centres on the first call)."""
        first = not hasattr(self, "cluster_centers_")
        if first:
            self._validate_params()
        Xa = self._check_fit_data(X) if first else check_array(X, estimator=self)
        check_n_features(self, Xa, reset=first)
        w = check_sample_weight(sample_weight, Xa)
        if first:
            self._rng = check_random_state(self.random_state)
            self._check_init_array(Xa)
            centers = self._init_centroids(Xa, (Xa * Xa).sum(axis=1), self._rng, w)
            counts = ember.zeros((self.n_clusters,), dtype=Xa.dtype, device=Xa.device)
            self.n_steps_ = 0
        else:
            if not hasattr(self, "_rng"):
                self._rng = check_random_state(self.random_state)
            centers = to_device(self.cluster_centers_, Xa.device).astype(Xa.dtype)
            counts = to_device(self._counts, Xa.device)
        centers, counts, _ = self._step(Xa, w, centers, counts, self._rng)
        kind = input_kind(X)
        self.cluster_centers_ = to_output(centers, kind)
        self._counts = counts
        self.n_steps_ += 1
        if self.compute_labels:
            labels, mind = _assign(Xa, centers, (Xa * Xa).sum(axis=1))
            self.labels_ = to_output(labels.astype(ember.int32), kind)
            self.inertia_ = float((mind * w).sum())
        self._n_features_out = self.n_clusters
        return self
