"""``KernelRidge``: the kernel matrix is built with ember matmuls/elementwise ops on X's
device, and ``(K + alpha I) dual_coef = y`` is solved there with ``ember.linalg`` (a Cholesky
factorisation checks positive definiteness; an indefinite or singular system falls back to
``lstsq``, as scikit-learn does)."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

import ember

from ..base import BaseEstimator, RegressorMixin
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    check_X_y,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["KernelRidge"]

_KERNELS = {"linear", "rbf", "poly", "polynomial", "sigmoid", "laplacian", "cosine", "precomputed"}


def _kernel(X, Y, kernel, gamma, degree, coef0, params):
    """Kernel matrix K[i, j] = k(X[i], Y[j]) (ember arrays, X's device)."""
    from ..metrics.pairwise import _manhattan, sq_euclidean

    if callable(kernel):  # called on every pair of rows, as scikit-learn's pairwise_kernels
        n, m = X.shape[0], Y.shape[0]
        vals = [[float(kernel(X[i], Y[j], **params)) for j in range(m)] for i in range(n)]
        return ember.asarray(np.asarray(vals, dtype=np.float64), device=X.device).astype(X.dtype)
    if kernel == "precomputed":
        return X
    g = 1.0 / X.shape[1] if gamma is None else float(gamma)
    if kernel == "linear":
        return X @ Y.T
    if kernel == "rbf":
        return ember.exp(-g * sq_euclidean(X, Y))
    if kernel in ("poly", "polynomial"):
        return (g * (X @ Y.T) + coef0) ** degree
    if kernel == "sigmoid":
        return ember.tanh(g * (X @ Y.T) + coef0)
    if kernel == "laplacian":
        return ember.exp(-g * _manhattan(X, Y))
    # cosine similarity: normalised dot products (zero rows stay zero)
    nx = ember.sqrt((X * X).sum(axis=1))
    ny = ember.sqrt((Y * Y).sum(axis=1))
    nx = ember.where(nx == 0, 1.0, nx)
    ny = ember.where(ny == 0, 1.0, ny)
    return (X / nx[:, None]) @ (Y / ny[:, None]).T


def _solve(K, Y, alpha):
    """Dual coefficients of ``(K + alpha_t I) c_t = y_t`` for every target column t."""
    n = K.shape[0]
    eye = ember.eye(n, dtype=K.dtype, device=K.device)
    alphas = [float(a) for a in alpha]
    if len(set(alphas)) == 1:
        groups = [(alphas[0], list(range(Y.shape[1])))]
    else:
        groups = [(a, [t]) for t, a in enumerate(alphas)]
    cols = [None] * Y.shape[1]
    for a, idx in groups:
        A = K + a * eye
        Yt = Y[:, idx] if len(idx) < Y.shape[1] else Y
        try:
            L = ember.linalg.cholesky(A)
            if not bool(ember.isfinite(L).all()):
                raise ember.linalg.LinAlgError("not positive definite")
            C = ember.linalg.solve(A, Yt)
        except ember.linalg.LinAlgError:
            warnings.warn(
                "Singular matrix in solving dual problem. Using least-squares solution instead.",
                stacklevel=3,
            )
            C = ember.linalg.lstsq(A, Yt, rcond=None)[0]
        for k, t in enumerate(idx):
            cols[t] = C[:, k : k + 1]
    return ember.concatenate(cols, axis=1)


class KernelRidge(RegressorMixin, BaseEstimator):
    """Ridge regression in the feature space of a kernel (``sklearn.kernel_ridge``)."""

    _parameter_constraints = {
        "alpha": [Interval(numbers.Real, 0, None, closed="left"), "array-like"],
        "kernel": [StrOptions(_KERNELS), callable],
        "gamma": [Interval(numbers.Real, 0, None, closed="left"), None],
        "degree": [Interval(numbers.Real, 0, None, closed="left")],
        "coef0": [Interval(numbers.Real, None, None, closed="neither")],
        "kernel_params": [dict, None],
    }

    def __init__(
        self, alpha=1, *, kernel="linear", gamma=None, degree=3, coef0=1, kernel_params=None
    ):
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params

    def _get_kernel(self, X, Y):
        return _kernel(
            X, Y, self.kernel, self.gamma, self.degree, self.coef0, self.kernel_params or {}
        )

    def fit(self, X, y, sample_weight=None):
        """Solve the dual problem on X's device."""
        self._validate_params()
        Xa, ya = check_X_y(X, y, estimator=self, y_numeric=True, multi_output=True)
        check_n_features(self, Xa, reset=True)
        if self.kernel == "precomputed" and Xa.shape[0] != Xa.shape[1]:
            raise ValueError(
                f"KernelRidge.fit: a precomputed kernel must be square, got X of shape "
                f"{tuple(Xa.shape)}"
            )
        ya = ya.astype(Xa.dtype)
        ravel = ya.ndim == 1
        Y = ya[:, None] if ravel else ya
        alpha = np.atleast_1d(np.asarray(self.alpha, dtype=np.float64))
        if alpha.ndim != 1 or alpha.size not in (1, Y.shape[1]):
            raise ValueError(
                f"KernelRidge.fit: number of targets and number of penalties do not correspond: "
                f"{alpha.size} != {Y.shape[1]}"
            )
        if alpha.size == 1:
            alpha = np.repeat(alpha, Y.shape[1])
        K = self._get_kernel(Xa, Xa)
        if sample_weight is not None:
            sw = to_device(np.asarray(sample_weight, dtype=np.float64), Xa.device)
            sw = ember.broadcast_to(sw.astype(Xa.dtype), (Xa.shape[0],))
            if bool((sw < 0).any()):
                raise ValueError("KernelRidge.fit: negative values in sample_weight")
            s = ember.sqrt(sw)
            C = _solve(K * s[:, None] * s[None, :], Y * s[:, None], alpha) * s[:, None]
        else:
            C = _solve(K, Y, alpha)
        if ravel:
            C = C[:, 0]
        kind = input_kind(X)
        self.dual_coef_ = to_output(C, kind)
        self.X_fit_ = to_output(Xa, kind)
        return self

    def predict(self, X):
        """``K(X, X_fit_) @ dual_coef_`` on X's device."""
        check_is_fitted(self, "dual_coef_")
        Xa = check_array(X, estimator=self)
        if self.kernel == "precomputed":
            if Xa.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"KernelRidge.predict: X has {Xa.shape[1]} columns, the precomputed kernel "
                    f"was fitted on {self.n_features_in_} samples"
                )
        else:
            check_n_features(self, Xa, reset=False)
        Xf = to_device(self.X_fit_, Xa.device).astype(Xa.dtype)
        C = to_device(self.dual_coef_, Xa.device).astype(Xa.dtype)
        return to_output(self._get_kernel(Xa, Xf) @ C, input_kind(X))
