"""SpectralClustering and cluster_qr (scikit-learn's ``sklearn.cluster``) over ember ops.

The affinity matrix and the Laplacian embedding (``drop_first=False``) come from
``ember.ml.manifold._spectral_embedding`` (dense device ``eigh``, O(n^2) memory). Labels are
assigned by ``ember.ml.cluster.KMeans`` on the embedding, or by ``cluster_qr``: a column-pivoted
Gram-Schmidt on the device picks k pivot samples (the pivots LAPACK's ``geqp3`` picks), a k x k
SVD rotates the embedding, and each sample takes the argmax of the rotated magnitudes; or by
``discretize`` (Yu & Shi's rotation search, k x k SVDs on the device).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, ClusterMixin
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import check_array, check_n_features, input_kind, to_output

__all__ = ["SpectralClustering", "cluster_qr", "discretize"]

_KERNELS = {"rbf", "linear", "poly", "polynomial", "sigmoid", "laplacian", "cosine"}


def _pivots(M, k):
    """First k column pivots of a QR with column pivoting of M (greedy largest residual)."""
    R = M.copy()
    piv = []
    for _ in range(k):
        p = int(ember.argmax((R * R).sum(axis=0)))
        piv.append(p)
        q = R[:, p]
        q = q / ember.sqrt((q * q).sum())
        R = R - q[:, None] * (q @ R)[None, :]
    return piv


def cluster_qr(vectors):
    """Labels from the embedding ``vectors`` (n, k) by the QR-pivoting method of Damle et al."""
    V = check_array(vectors, estimator="cluster_qr", input_name="vectors")
    k = V.shape[1]
    piv = ember.asarray(_pivots(V.T, k), device=V.device)
    ut, _, vt = ember.linalg.svd(ember.take(V, piv, axis=0).T)
    labels = ember.argmax(ember.abs(V @ (ut @ vt)), axis=1)
    return to_output(labels, input_kind(vectors))


def discretize(vectors, *, copy=True, max_svd_restarts=30, n_iter_max=20, random_state=None):
    """Labels from the embedding ``vectors`` by the rotation search of Yu & Shi (2003), as
    scikit-learn's ``discretize`` (random start row from ``random_state``; one host sync per
    iteration for the ncut value)."""
    from ..utils.validation import check_random_state

    V = check_array(vectors, estimator="discretize", input_name="vectors")
    V = V.astype(ember.float64, copy=True)
    rng = check_random_state(random_state)
    eps = float(np.finfo(float).eps)
    n, k = V.shape
    V = V / ember.sqrt((V * V).sum(axis=0))[None, :] * float(np.sqrt(n))
    first = V[0]
    V = V * ember.where(first != 0, -ember.sign(first), 1.0)[None, :]
    V = V / ember.sqrt((V * V).sum(axis=1))[:, None]
    classes = ember.arange(k, device=V.device)
    for _ in range(max_svd_restarts):
        start = int(rng.integers(0, n))
        cols = [V[start]]
        c = ember.zeros((n,), dtype=V.dtype, device=V.device)
        for _ in range(1, k):
            c = c + ember.abs(V @ cols[-1])
            cols.append(V[int(ember.argmin(c))])
        rotation = ember.stack(cols, axis=1)
        last = 0.0
        n_iter = 0
        while True:
            n_iter += 1
            labels = ember.argmax(V @ rotation, axis=1)
            onehot = (labels[:, None] == classes[None, :]).astype(V.dtype)
            try:
                U, S, Vh = ember.linalg.svd(onehot.T @ V)
            except ember.linalg.LinAlgError:
                break  # randomise and try again, as scikit-learn
            ncut = 2.0 * (n - float(S.sum()))
            if abs(ncut - last) < eps or n_iter > n_iter_max:
                return to_output(labels, input_kind(vectors))
            last = ncut
            rotation = Vh.T @ U.T
    raise ember.linalg.LinAlgError("discretize: SVD did not converge")


class SpectralClustering(ClusterMixin, BaseEstimator):
    """Spectral clustering: k-means or QR-pivoting on the normalized Laplacian embedding.

    ``affinity_matrix_`` is dense; every ``eigen_solver`` runs the dense device ``eigh``.
    """

    _parameter_constraints = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "eigen_solver": [StrOptions({"arpack", "lobpcg", "amg"}), None],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "gamma": [Interval(Real, 0, None, closed="left")],
        "affinity": [
            callable,
            StrOptions(
                _KERNELS | {"nearest_neighbors", "precomputed", "precomputed_nearest_neighbors"}
            ),
        ],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "eigen_tol": [Interval(Real, 0.0, None, closed="left"), StrOptions({"auto"})],
        "assign_labels": [StrOptions({"kmeans", "discretize", "cluster_qr"})],
        "degree": [Interval(Real, 0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "kernel_params": [dict, None],
        "n_jobs": [Integral, None],
        "verbose": ["boolean", Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        eigen_solver=None,
        n_components=None,
        random_state=None,
        n_init=10,
        gamma=1.0,
        affinity="rbf",
        n_neighbors=10,
        eigen_tol="auto",
        assign_labels="kmeans",
        degree=3,
        coef0=1,
        kernel_params=None,
        n_jobs=None,
        verbose=False,
    ):
        self.n_clusters = n_clusters
        self.eigen_solver = eigen_solver
        self.n_components = n_components
        self.random_state = random_state
        self.n_init = n_init
        self.gamma = gamma
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.eigen_tol = eigen_tol
        self.assign_labels = assign_labels
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _affinity(self, X):
        from ..manifold._spectral_embedding import (
            _check_square,
            _kernel,
            _knn_connectivity,
        )
        from ..metrics.pairwise import sq_euclidean

        aff = self.affinity
        who = type(self).__name__
        if aff in ("precomputed", "precomputed_nearest_neighbors"):
            _check_square(X, who)
        if aff == "precomputed":
            return X
        if aff in ("nearest_neighbors", "precomputed_nearest_neighbors"):
            n = X.shape[0]
            if self.n_neighbors > n:
                raise ValueError(
                    f"{who}: Expected n_neighbors <= n_samples_fit, but n_neighbors = "
                    f"{self.n_neighbors}, n_samples_fit = {n}, n_samples = {n}"
                )
            D = X if aff == "precomputed_nearest_neighbors" else sq_euclidean(X, X)
            C = _knn_connectivity(D, self.n_neighbors)
            return 0.5 * (C + C.T)
        params = dict(self.kernel_params or {})
        if callable(aff):
            return check_array(aff(X, X, **params), estimator=self, device=X.device)
        gamma = params.get("gamma", self.gamma)
        degree = params.get("degree", self.degree)
        coef0 = params.get("coef0", self.coef0)
        return _kernel(X, aff, gamma, degree, coef0)

    def fit(self, X, y=None):
        """Build the affinity matrix, embed it and assign ``labels_``."""
        from ..manifold._spectral_embedding import _check_symmetric, _laplacian_embedding
        from ._kmeans import KMeans

        self._validate_params()
        Xa = check_array(X, estimator=self, ensure_min_samples=2)
        check_n_features(self, Xa, reset=True)
        A = self._affinity(Xa)
        k = self.n_clusters if self.n_components is None else self.n_components
        maps = _laplacian_embedding(
            _check_symmetric(A, type(self).__name__), k, True, False, type(self).__name__
        )
        if self.assign_labels == "kmeans":
            km = KMeans(self.n_clusters, n_init=self.n_init, random_state=self.random_state)
            labels = km.fit(maps).labels_.astype(ember.int32)
        elif self.assign_labels == "cluster_qr":
            labels = cluster_qr(maps).astype(ember.int64)
        else:
            labels = discretize(maps, random_state=self.random_state).astype(ember.int64)
        kind = input_kind(X)
        self.affinity_matrix_ = to_output(A, kind)
        self.labels_ = to_output(labels, kind)
        return self

    def fit_predict(self, X, y=None):
        """Fit and return ``labels_``."""
        return self.fit(X).labels_
