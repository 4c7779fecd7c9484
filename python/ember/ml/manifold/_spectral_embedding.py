"""SpectralEmbedding and spectral_embedding (scikit-learn's ``sklearn.manifold``) over ember ops.

The affinity matrix is dense (n x n on the data's device): an RBF kernel
``exp(-gamma ||x - y||^2)``, a symmetrised k-nearest-neighbour connectivity graph
``0.5 (C + C^T)`` (``C`` from ``topk`` of the negated squared distances, self included, as
``kneighbors_graph(include_self=True)``), or the caller's matrix. The symmetric normalized
Laplacian ``I - D^-1/2 A D^-1/2`` (self-loops ignored in the degrees, as SciPy's
``csgraph.laplacian``) is diagonalised with one dense ``ember.linalg.eigh`` on the device, so
memory is O(n^2) and time O(n^3): meant for n up to a few tens of thousands on a GPU. Every
``eigen_solver`` runs this exact dense solve. Eigenvectors are mapped back by ``D^-1/2`` and
signed with scikit-learn's ``_deterministic_vector_sign_flip``.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import ember

from ..base import BaseEstimator
from ..metrics.pairwise import sq_euclidean
from ..utils._param_validation import Interval, StrOptions, validate_parameter_constraints
from ..utils.validation import check_array, check_n_features, input_kind, to_output

__all__ = ["SpectralEmbedding", "spectral_embedding"]

_EIGEN_SOLVERS = StrOptions({"arpack", "lobpcg", "amg"})


def _rbf(X, gamma):
    return ember.exp(-gamma * sq_euclidean(X, X))


def _set_diag(M, value):
    n = M.shape[0]
    idx = ember.arange(n, device=M.device)
    M[idx, idx] = value
    return M


def _knn_connectivity(D, k):
    """0/1 matrix with ones at each row's k smallest entries of D (the row's own index first)."""
    n = D.shape[0]
    D = _set_diag(D.copy(), -1.0)  # self always counts as a neighbour
    nn = ember.topk(-D, k, dim=1).indices
    C = ember.zeros((n, n), dtype=D.dtype, device=D.device)
    ember.put_along_axis(C, nn, ember.ones(nn.shape, dtype=D.dtype, device=D.device), axis=1)
    return C


def _kernel(X, name, gamma, degree, coef0):
    """Dense kernel matrix of X with itself (the pairwise kernels SpectralClustering takes)."""
    if name == "rbf":
        return _rbf(X, gamma)
    if name == "linear":
        return X @ X.T
    if name in ("poly", "polynomial"):
        return (gamma * (X @ X.T) + coef0) ** degree
    if name == "sigmoid":
        return ember.tanh(gamma * (X @ X.T) + coef0)
    if name == "laplacian":
        return ember.exp(-gamma * ember.abs(X[:, None, :] - X[None, :, :]).sum(axis=2))
    if name == "cosine":
        nx = ember.sqrt((X * X).sum(axis=1))
        Xn = X / ember.where(nx == 0, 1.0, nx)[:, None]
        return Xn @ Xn.T
    raise ValueError(f"unknown kernel {name!r}")  # unreachable: validated before


def _check_square(A, who):
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{who}: array must be 2-dimensional and square. shape = {tuple(A.shape)}")


def _check_symmetric(A, who, tol=1e-10):
    _check_square(A, who)
    # np.allclose(A, A.T, atol=tol), as scikit-learn's check_symmetric.
    if not bool((ember.abs(A - A.T) <= tol + 1e-5 * ember.abs(A.T)).all()):
        warnings.warn(
            "Array is not symmetric, and will be converted to symmetric by average with its "
            "transpose.",
            stacklevel=4,
        )
        A = 0.5 * (A + A.T)
    return A


def _is_connected(A):
    """Breadth-first search from node 0 by matrix-vector products on the device."""
    n = A.shape[0]
    G = (A != 0).astype(ember.float32)
    reach = ember.zeros((n,), dtype=ember.float32, device=A.device)
    reach[0] = 1.0
    count = 1
    for _ in range(n):
        reach = ((G @ reach + reach) > 0).astype(ember.float32)
        new = int(reach.sum())
        if new == count:
            break
        count = new
    return count == n


def _deterministic_vector_sign_flip(u):
    """Flip each row of u so that its largest-magnitude entry is positive."""
    idx = ember.argmax(ember.abs(u), axis=1)
    signs = ember.sign(ember.take_along_axis(u, idx[:, None], axis=1))
    return u * signs


def _laplacian_embedding(adjacency, n_components, norm_laplacian, drop_first, who):
    """Embedding (n, n_components) of a dense symmetric ember adjacency matrix."""
    n = adjacency.shape[0]
    k = n_components + 1 if drop_first else n_components
    if k > n:
        raise ValueError(
            f"{who}: n_components={n_components} is too large for a graph of {n} nodes "
            f"(at most {n - 1 if drop_first else n})."
        )
    if not _is_connected(adjacency):
        warnings.warn(
            "Graph is not fully connected, spectral embedding may not work as expected.",
            stacklevel=3,
        )
    A = _set_diag(adjacency.astype(ember.float64, copy=True), 0.0)
    deg = A.sum(axis=0)
    if norm_laplacian:
        dd = ember.where(deg == 0, 1.0, ember.sqrt(deg))
        L = _set_diag(-(A / dd[:, None]) / dd[None, :], 1.0)
    else:
        dd = deg
        L = _set_diag(-A, deg)
    _, V = ember.linalg.eigh(L)  # ascending eigenvalues
    E = V[:, :k].T
    if norm_laplacian:
        E = E / dd[None, :]
    E = _deterministic_vector_sign_flip(E)
    E = (E[1:k] if drop_first else E[:k]).T
    return E.astype(adjacency.dtype) if adjacency.dtype == ember.float32 else E


def spectral_embedding(
    adjacency,
    *,
    n_components=8,
    eigen_solver=None,
    random_state=None,
    eigen_tol="auto",
    norm_laplacian=True,
    drop_first=True,
):
    """Project the samples on the first eigenvectors of the graph Laplacian of ``adjacency``.

    The Laplacian is diagonalised densely on the adjacency's device (O(n^2) memory) whatever
    ``eigen_solver`` names; ``random_state`` and ``eigen_tol`` do not change the exact result.
    """
    validate_parameter_constraints(
        {
            "n_components": [Interval(Integral, 1, None, closed="left")],
            "eigen_solver": [_EIGEN_SOLVERS, None],
            "random_state": ["random_state"],
            "eigen_tol": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
            "norm_laplacian": ["boolean"],
            "drop_first": ["boolean"],
        },
        {
            "n_components": n_components,
            "eigen_solver": eigen_solver,
            "random_state": random_state,
            "eigen_tol": eigen_tol,
            "norm_laplacian": norm_laplacian,
            "drop_first": drop_first,
        },
        caller_name="spectral_embedding",
    )
    A = check_array(adjacency, estimator="spectral_embedding", input_name="adjacency")
    A = _check_symmetric(A, "spectral_embedding")
    E = _laplacian_embedding(A, n_components, norm_laplacian, drop_first, "spectral_embedding")
    return to_output(E, input_kind(adjacency))


class SpectralEmbedding(BaseEstimator):
    """Laplacian eigenmaps: spectral embedding for non-linear dimensionality reduction.

    ``affinity_matrix_`` is a dense ember/NumPy array (scikit-learn stores a sparse matrix for
    the nearest-neighbour graphs); all ``eigen_solver`` values run the dense device ``eigh``.
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "affinity": [
            StrOptions(
                {"nearest_neighbors", "rbf", "precomputed", "precomputed_nearest_neighbors"}
            ),
            callable,
        ],
        "gamma": [Interval(Real, 0, None, closed="left"), None],
        "random_state": ["random_state"],
        "eigen_solver": [_EIGEN_SOLVERS, None],
        "eigen_tol": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
        "n_jobs": [None, Integral],
    }

    def __init__(
        self,
        n_components=2,
        *,
        affinity="nearest_neighbors",
        gamma=None,
        random_state=None,
        eigen_solver=None,
        eigen_tol="auto",
        n_neighbors=None,
        n_jobs=None,
    ):
        self.n_components = n_components
        self.affinity = affinity
        self.gamma = gamma
        self.random_state = random_state
        self.eigen_solver = eigen_solver
        self.eigen_tol = eigen_tol
        self.n_neighbors = n_neighbors
        self.n_jobs = n_jobs

    def _get_affinity_matrix(self, X):
        aff = self.affinity
        who = type(self).__name__
        if aff in ("precomputed", "precomputed_nearest_neighbors"):
            _check_square(X, who)
        if aff == "precomputed":
            return X
        if aff in ("nearest_neighbors", "precomputed_nearest_neighbors"):
            n = X.shape[0]
            k = self.n_neighbors if self.n_neighbors is not None else max(int(n / 10), 1)
            if k > n:
                raise ValueError(
                    f"{who}: Expected n_neighbors <= n_samples_fit, but n_neighbors = {k}, "
                    f"n_samples_fit = {n}, n_samples = {n}"
                )
            self.n_neighbors_ = k
            D = X if aff == "precomputed_nearest_neighbors" else sq_euclidean(X, X)
            C = _knn_connectivity(D, k)
            return 0.5 * (C + C.T)
        if aff == "rbf":
            self.gamma_ = self.gamma if self.gamma is not None else 1.0 / X.shape[1]
            return _rbf(X, self.gamma_)
        return check_array(aff(X), estimator=self, input_name="affinity", device=X.device)

    def fit(self, X, y=None):
        """Compute the affinity matrix of X and its Laplacian embedding (``embedding_``)."""
        self._validate_params()
        Xa = check_array(X, estimator=self, ensure_min_samples=2)
        check_n_features(self, Xa, reset=True)
        A = self._get_affinity_matrix(Xa)
        A = _check_symmetric(A, type(self).__name__)
        E = _laplacian_embedding(A, self.n_components, True, True, type(self).__name__)
        kind = input_kind(X)
        self.affinity_matrix_ = to_output(A, kind)
        self.embedding_ = to_output(E, kind)
        return self

    def fit_transform(self, X, y=None):
        """Fit and return ``embedding_``."""
        return self.fit(X).embedding_
