"""``KernelPCA``: PCA in the feature space of a kernel (scikit-learn's ``KernelPCA``).

The n x n kernel matrix (linear, rbf, poly, sigmoid, cosine, precomputed or a callable) is
formed and centred on X's device and decomposed by ``eigh`` (every ``eigen_solver`` gives this
dense decomposition: arpack and randomized approximate the same leading eigenpairs); the
eigenvectors' signs follow ``svd_flip`` (largest-|.| entry of each column positive). With
``fit_inverse_transform`` the pre-image map is kernel ridge regression from the embedding back
to X (``(K + alpha I) A = X``, one device solve). Memory is O(n^2).
"""

from __future__ import annotations

from numbers import Integral, Real

import ember

from ..base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from ..exceptions import NotFittedError, sklearn_compatible
from ..metrics.pairwise import sq_euclidean
from ..utils._param_validation import Interval, StrOptions
from ..utils.extmath import svd_flip
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["KernelPCA"]

_KERNELS = {"linear", "poly", "rbf", "sigmoid", "cosine", "precomputed"}


def _kernel(X, Y, kernel, gamma, degree, coef0, params):
    if callable(kernel):
        return kernel(X, Y, **(params or {}))
    if kernel == "precomputed":
        return X
    if kernel == "rbf":
        return ember.exp(-gamma * ember.maximum(sq_euclidean(X, Y), 0.0))
    if kernel == "cosine":
        nx = ember.sqrt((X * X).sum(axis=1))
        ny = ember.sqrt((Y * Y).sum(axis=1))
        nx = ember.where(nx == 0, 1.0, nx)
        ny = ember.where(ny == 0, 1.0, ny)
        return (X / nx[:, None]) @ (Y / ny[:, None]).T
    G = X @ Y.T
    if kernel == "linear":
        return G
    if kernel == "poly":
        return (gamma * G + coef0) ** degree
    return ember.tanh(gamma * G + coef0)


class KernelPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Non-linear dimensionality reduction through a kernel."""

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "kernel": [StrOptions(_KERNELS), callable],
        "gamma": [Interval(Real, 0, None, closed="left"), None],
        "degree": [Interval(Real, 0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "kernel_params": [dict, None],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_inverse_transform": ["boolean"],
        "eigen_solver": [StrOptions({"auto", "dense", "arpack", "randomized"})],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "iterated_power": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
        "remove_zero_eig": ["boolean"],
        "random_state": ["random_state"],
        "copy_X": ["boolean"],
        "n_jobs": [None, Integral],
    }

    def __init__(
        self,
        n_components=None,
        *,
        kernel="linear",
        gamma=None,
        degree=3,
        coef0=1,
        kernel_params=None,
        alpha=1.0,
        fit_inverse_transform=False,
        eigen_solver="auto",
        tol=0,
        max_iter=None,
        iterated_power="auto",
        remove_zero_eig=False,
        random_state=None,
        copy_X=True,
        n_jobs=None,
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.alpha = alpha
        self.fit_inverse_transform = fit_inverse_transform
        self.eigen_solver = eigen_solver
        self.tol = tol
        self.max_iter = max_iter
        self.iterated_power = iterated_power
        self.remove_zero_eig = remove_zero_eig
        self.random_state = random_state
        self.copy_X = copy_X
        self.n_jobs = n_jobs

    def _k(self, X, Y):
        return _kernel(X, Y, self.kernel, self.gamma_, self.degree, self.coef0, self.kernel_params)

    def _fit(self, X):
        self._validate_params()
        if self.fit_inverse_transform and self.kernel == "precomputed":
            raise ValueError("Cannot fit_inverse_transform with a precomputed kernel.")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=True)
        n = Xa.shape[0]
        self.gamma_ = 1.0 / Xa.shape[1] if self.gamma is None else self.gamma
        K = self._k(Xa, Xa)
        rows = K.mean(axis=0)
        allm = rows.mean()
        Kc = K - rows[None, :] - K.mean(axis=1)[:, None] + allm
        k = n if self.n_components is None else min(n, self.n_components)
        evals, evecs = ember.linalg.eigh(0.5 * (Kc + Kc.T))
        order = ember.flip(ember.argsort(evals), axis=0)[:k]
        evals = ember.take(evals, order)
        evecs = ember.take(evecs, order, axis=1)
        # scikit-learn's PSD check: negative eigenvalues (round-off) and positive ones below
        # 1e-12 (float32: 2e-7) of the largest are set to zero (so a round-off eigenvalue of
        # the centring's null space is dropped whatever its sign on either device)
        ratio = 1e-12 if evals.dtype == ember.float64 else 2e-7
        evals = ember.where(evals < ratio * ember.max(evals), 0.0, evals)
        evecs, _ = svd_flip(evecs, evecs.T)
        if self.remove_zero_eig or self.n_components is None:
            keep = ember.nonzero(evals > 0)[0]
            evals = ember.take(evals, keep)
            evecs = ember.take(evecs, keep, axis=1)
        kind = input_kind(X)
        self._K_rows = rows
        self._K_all = allm
        self.eigenvalues_ = to_output(evals, kind)
        self.eigenvectors_ = to_output(evecs, kind)
        self.X_fit_ = to_output(Xa, kind)
        self._n_features_out = int(evals.shape[0])
        Z = evecs * ember.sqrt(evals)[None, :]
        if self.fit_inverse_transform:
            Kz = self._k(Z, Z)
            Kz = Kz + self.alpha * ember.eye(n, dtype=Kz.dtype, device=Kz.device)
            self.dual_coef_ = to_output(ember.linalg.solve(Kz, Xa), kind)
            self.X_transformed_fit_ = to_output(Z, kind)
        return Z

    def fit(self, X, y=None):
        """Fit the model from X."""
        self._fit(X)
        return self

    def fit_transform(self, X, y=None, **params):
        """Fit and return the embedding of X (eigenvectors scaled by sqrt(eigenvalues))."""
        return to_output(self._fit(X), input_kind(X))

    def transform(self, X):
        """Project X on the fitted components."""
        check_is_fitted(self, "eigenvectors_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        dev = Xa.device
        Xf = to_device(self.X_fit_, dev)
        K = self._k(Xa.astype(Xf.dtype), Xf)
        rows = to_device(self._K_rows, dev)
        Kc = K - rows[None, :] - K.mean(axis=1)[:, None] + to_device(self._K_all, dev)
        evals = to_device(self.eigenvalues_, dev)
        V = to_device(self.eigenvectors_, dev)
        nz = evals != 0
        scale = ember.where(nz, 1.0 / ember.sqrt(ember.where(nz, evals, 1.0)), 0.0)
        return to_output(Kc @ (V * scale[None, :]), input_kind(X))

    def inverse_transform(self, X):
        """Approximate pre-images of embedded points (needs ``fit_inverse_transform``)."""
        if not self.fit_inverse_transform:
            raise sklearn_compatible(NotFittedError)(
                "The fit_inverse_transform parameter was not set to True when instantiating "
                "and hence the inverse transform is not available."
            )
        Za = check_array(X, estimator="KernelPCA")
        dev = Za.device
        Zf = to_device(self.X_transformed_fit_, dev)
        K = self._k(Za.astype(Zf.dtype), Zf)
        return to_output(K @ to_device(self.dual_coef_, dev), input_kind(X))
