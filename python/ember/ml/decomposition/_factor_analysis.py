"""FactorAnalysis (scikit-learn's ``sklearn.decomposition.FactorAnalysis``) over ember.linalg.

The EM-free SVD iteration of Barber (BRML, 21.2.2): each step takes an SVD of the data scaled
by ``sqrt(psi * n)`` (exact ``ember.linalg.svd`` for 'lapack', ``randomized_svd`` for
'randomized'), forms the loadings ``W`` and updates the diagonal noise ``psi``. Everything
stays on X's device; the log-likelihood scalar is read back once per iteration for the
``tol`` test. Rotations (varimax / quartimax) are the orthomax iteration on the loadings.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from ..exceptions import ConvergenceWarning, sklearn_compatible
from ..utils._param_validation import Interval, StrOptions
from ..utils.extmath import randomized_svd
from ..utils.validation import (
    _host,
    check_array,
    check_is_fitted,
    check_n_features,
    check_random_state,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["FactorAnalysis"]

_SMALL = 1e-12


def _ortho_rotation(L, method, tol=1e-6, max_iter=100):
    """Orthomax rotation of the loadings L (n_features x k); returns the rotated L^T."""
    nrow, ncol = L.shape
    R = ember.eye(ncol, dtype=L.dtype, device=L.device)
    var = 0.0
    for _ in range(max_iter):
        Lr = L @ R
        cube = Lr * Lr * Lr
        if method == "varimax":
            cube = cube - Lr * ((Lr * Lr).sum(axis=0) / nrow)[None, :]
        u, s, vt = ember.linalg.svd(L.T @ cube)
        R = u @ vt
        var_new = float(s.sum())
        if var != 0 and var_new < var * (1 + tol):
            break
        var = var_new
    return (L @ R).T


class FactorAnalysis(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Linear Gaussian latent-variable model with diagonal (heteroscedastic) noise."""

    _parameter_constraints = {
        "n_components": [Interval(Integral, 0, None, closed="left"), None],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "copy": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "noise_variance_init": ["array-like", None],
        "svd_method": [StrOptions({"randomized", "lapack"})],
        "iterated_power": [Interval(Integral, 0, None, closed="left")],
        "rotation": [StrOptions({"varimax", "quartimax"}), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components=None,
        *,
        tol=1e-2,
        copy=True,
        max_iter=1000,
        noise_variance_init=None,
        svd_method="randomized",
        iterated_power=3,
        rotation=None,
        random_state=0,
    ):
        self.n_components = n_components
        self.tol = tol
        self.copy = copy
        self.max_iter = max_iter
        self.noise_variance_init = noise_variance_init
        self.svd_method = svd_method
        self.iterated_power = iterated_power
        self.rotation = rotation
        self.random_state = random_state

    def fit(self, X, y=None):
        """Fit the factor model by the SVD iteration; sets ``components_``,
        ``noise_variance_``, ``loglike_``, ``n_iter_``, ``mean_``."""
        self._validate_params()
        Xa = check_array(X, estimator=self, ensure_min_samples=2)
        check_n_features(self, Xa, reset=True)
        n, d = Xa.shape
        k = d if self.n_components is None else int(self.n_components)
        dev, dt = Xa.device, Xa.dtype
        mean = Xa.mean(axis=0)
        Xc = Xa - mean
        nsqrt = math.sqrt(n)
        llconst = d * math.log(2.0 * math.pi) + k
        var = Xc.var(axis=0)
        if self.noise_variance_init is None:
            psi = ember.ones((d,), dtype=dt, device=dev)
        else:
            psi = to_device(_host(self.noise_variance_init), dev).astype(dt)
            if psi.ndim != 1 or psi.shape[0] != d:
                raise ValueError(
                    "FactorAnalysis: noise_variance_init dimension does not match the number "
                    f"of features: {psi.shape[0] if psi.ndim else 1} != {d}"
                )
        if self.svd_method == "lapack":

            def my_svd(A):
                _, s, vt = ember.linalg.svd(A, full_matrices=False)
                rest = s[k:]
                return s[:k], vt[:k], (rest * rest).sum()

        else:
            rng = check_random_state(self.random_state)

            def my_svd(A):
                _, s, vt = randomized_svd(
                    A, k, n_iter=self.iterated_power, random_state=rng, flip_sign=False
                )
                return s, vt, (A * A).sum() - (s * s).sum()

        loglike = []
        old_ll = -np.inf
        W = ember.zeros((k, d), dtype=dt, device=dev)
        n_iter = 0
        for _ in range(self.max_iter):
            n_iter += 1
            sqrt_psi = ember.sqrt(psi) + _SMALL
            s, vt, unexp = my_svd(Xc / (sqrt_psi * nsqrt))
            s = s * s
            W = ember.sqrt(ember.maximum(s - 1.0, 0.0))[:, None] * vt * sqrt_psi[None, :]
            ll = llconst + ember.log(s).sum() + unexp + ember.log(psi).sum()
            ll = float(ll) * (-n / 2.0)
            loglike.append(ll)
            if ll - old_ll < self.tol:
                break
            old_ll = ll
            psi = ember.maximum(var - (W * W).sum(axis=0), _SMALL)
        else:
            warnings.warn(
                "FactorAnalysis did not converge. You might want to increase the number of "
                "iterations.",
                sklearn_compatible(ConvergenceWarning),
                stacklevel=2,
            )
        if self.rotation is not None:
            W = _ortho_rotation(W.T, self.rotation)
        kind = input_kind(X)
        self.components_ = to_output(W, kind)
        self.noise_variance_ = to_output(psi, kind)
        self.loglike_ = loglike
        self.n_iter_ = n_iter
        self.mean_ = to_output(mean, kind)
        self._n_features_out = k
        return self

    def _dev_params(self, dev):
        return (
            to_device(self.components_, dev),
            to_device(self.noise_variance_, dev),
            to_device(self.mean_, dev),
        )

    def _check(self, X):
        check_is_fitted(self, "components_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        return Xa

    def transform(self, X):
        """Posterior mean of the latent variables given X."""
        Xa = self._check(X)
        W, psi, mean = self._dev_params(Xa.device)
        Xa = Xa.astype(W.dtype)
        Wpsi = W / psi[None, :]
        k = W.shape[0]
        cov_z = ember.linalg.inv(ember.eye(k, dtype=W.dtype, device=W.device) + Wpsi @ W.T)
        return to_output(((Xa - mean) @ Wpsi.T) @ cov_z, input_kind(X))

    def _cov_device(self):
        W = self.components_
        dev = W.device if isinstance(W, ember.ndarray) else ember.get_default_device()
        W, psi, _ = self._dev_params(dev)
        return W, psi

    def _out_kind(self):
        return "ember" if isinstance(self.components_, ember.ndarray) else "numpy"

    def get_covariance(self):
        """Model covariance ``W^T W + diag(noise_variance_)``."""
        check_is_fitted(self, "components_")
        W, psi = self._cov_device()
        cov = W.T @ W + ember.diag(psi)
        return to_output(cov, self._out_kind())

    def _precision(self):
        W, psi = self._cov_device()
        k, d = W.shape
        if k == 0:
            return ember.diag(1.0 / psi)
        if k == d:
            return ember.linalg.inv(W.T @ W + ember.diag(psi))
        # Woodbury: (W^T W + Psi)^-1 = Psi^-1 - Psi^-1 W^T (I + W Psi^-1 W^T)^-1 W Psi^-1.
        M = (W / psi[None, :]) @ W.T + ember.eye(k, dtype=W.dtype, device=W.device)
        P = W.T @ (ember.linalg.inv(M) @ W)
        P = -(P / psi[:, None]) / psi[None, :]
        return P + ember.diag(1.0 / psi)

    def get_precision(self):
        """Inverse of the model covariance (by the matrix inversion lemma)."""
        check_is_fitted(self, "components_")
        return to_output(self._precision(), self._out_kind())

    def score_samples(self, X):
        """Log-likelihood of each sample under the model."""
        Xa = self._check(X)
        P = self._precision()
        P = to_device(P, Xa.device)
        _, _, mean = self._dev_params(Xa.device)
        Xr = Xa.astype(P.dtype) - mean
        d = Xa.shape[1]
        sign, logdet = ember.linalg.slogdet(P)
        logdet = ember.where(sign > 0, logdet, -float("inf"))
        ll = -0.5 * (Xr * (Xr @ P)).sum(axis=1) - 0.5 * (d * math.log(2.0 * math.pi) - logdet)
        return to_output(ll, input_kind(X))

    def score(self, X, y=None):
        """Average log-likelihood of the samples."""
        s = self.score_samples(X)
        return float(s.mean())
