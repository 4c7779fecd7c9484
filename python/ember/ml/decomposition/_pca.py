"""PCA and TruncatedSVD (scikit-learn's ``sklearn.decomposition``) over ember.linalg.

PCA centres X and takes a thin SVD (``full``), the eigendecomposition of the covariance
(``covariance_eigh``, for tall data), or a randomized SVD (``randomized``); signs follow
scikit-learn's ``svd_flip`` on the rows of ``components_``.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from ..utils._param_validation import Interval, StrOptions
from ..utils.extmath import randomized_svd, svd_flip
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    check_random_state,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["PCA", "TruncatedSVD"]


def _assess_dimension(spectrum, rank, n_samples):
    """Log-likelihood of a rank-``rank`` PCA model (Minka, 'Automatic choice of
    dimensionality for PCA', NIPS 2000) from the host copy of the variance spectrum."""
    d = spectrum.shape[0]
    eps = np.finfo(np.float64).eps
    if spectrum[rank - 1] < eps:
        return -np.inf
    pu = -rank * math.log(2.0)
    for i in range(1, rank + 1):
        pu += math.lgamma((d - i + 1) / 2.0) - math.log(math.pi) * (d - i + 1) / 2.0
    pl = -np.sum(np.log(spectrum[:rank])) * n_samples / 2.0
    v = max(eps, np.sum(spectrum[rank:]) / (d - rank))
    pv = -math.log(v) * n_samples * (d - rank) / 2.0
    m = d * rank - rank * (rank + 1.0) / 2.0
    pp = math.log(2.0 * math.pi) * (m + rank) / 2.0
    s_ = spectrum.copy()
    s_[rank:] = v
    pa = 0.0
    for i in range(rank):
        diff = spectrum[i] - spectrum[i + 1 :]
        inv = 1.0 / s_[i + 1 :] - 1.0 / s_[i]
        pa += np.sum(np.log(diff * inv) + math.log(n_samples))
    return pu + pl + pv + pp - pa / 2.0 - rank * math.log(n_samples) / 2.0


def _infer_dimension(spectrum, n_samples):
    ll = [-np.inf] + [_assess_dimension(spectrum, r, n_samples) for r in range(1, len(spectrum))]
    return int(np.argmax(ll))


class PCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Principal component analysis (``n_components`` int, float in (0, 1), 'mle' or None)."""

    _parameter_constraints = {
        "n_components": [
            Interval(Integral, 0, None, closed="left"),
            Interval(Real, 0, 1, closed="neither"),
            StrOptions({"mle"}),
            None,
        ],
        "copy": ["boolean"],
        "whiten": ["boolean"],
        "svd_solver": [StrOptions({"auto", "full", "covariance_eigh", "arpack", "randomized"})],
        "tol": [Interval(Real, 0, None, closed="left")],
        "iterated_power": [StrOptions({"auto"}), Interval(Integral, 0, None, closed="left")],
        "n_oversamples": [Interval(Integral, 1, None, closed="left")],
        "power_iteration_normalizer": [StrOptions({"auto", "QR", "LU", "none"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components=None,
        *,
        copy=True,
        whiten=False,
        svd_solver="auto",
        tol=0.0,
        iterated_power="auto",
        n_oversamples=10,
        power_iteration_normalizer="auto",
        random_state=None,
    ):
        self.n_components = n_components
        self.copy = copy
        self.whiten = whiten
        self.svd_solver = svd_solver
        self.tol = tol
        self.iterated_power = iterated_power
        self.n_oversamples = n_oversamples
        self.power_iteration_normalizer = power_iteration_normalizer
        self.random_state = random_state

    def _solver(self, n, d, k):
        s = self.svd_solver
        if s != "auto":
            return s
        if d <= 1000 and n >= 10 * d:
            return "covariance_eigh"
        if max(n, d) <= 500 or k == "mle" or isinstance(k, float):
            return "full"
        if isinstance(k, int) and 1 <= k < 0.8 * min(n, d):
            return "randomized"
        return "full"

    def _fit(self, X):
        self._validate_params()
        Xa = check_array(X, estimator=self, ensure_min_samples=2)
        check_n_features(self, Xa, reset=True)
        n, d = Xa.shape
        k = self.n_components
        solver = self._solver(n, d, k)
        if k == "mle" and n < d:
            raise ValueError("n_components='mle' is only supported if n_samples >= n_features")
        if isinstance(k, Integral) and not isinstance(k, bool):
            lim = min(n, d)
            if solver in ("arpack",) and not 0 < k < lim:
                raise ValueError(
                    f"n_components={k!r} must be strictly less than min(n_samples, n_features)"
                    f"={lim} with svd_solver='arpack'"
                )
            if not 0 <= k <= lim:
                raise ValueError(
                    f"n_components={k!r} must be between 0 and min(n_samples, n_features)="
                    f"{lim} with svd_solver={solver!r}"
                )
        mean = Xa.mean(axis=0)
        Xc = Xa - mean
        if solver in ("full", "covariance_eigh", "arpack"):
            if solver == "covariance_eigh":
                C = (Xc.T @ Xc) / (n - 1)
                evals, evecs = ember.linalg.eigh(C)
                evals = ember.maximum(ember.flip(evals, axis=0), 0.0)
                Vt = ember.flip(evecs, axis=1).T
                S = ember.sqrt(evals * (n - 1))
                U = None
                _, Vt = svd_flip(None, Vt, u_based_decision=False) if True else (None, Vt)
                ev = evals
            else:
                U, S, Vt = ember.linalg.svd(Xc, full_matrices=False)
                U, Vt = svd_flip(U, Vt, u_based_decision=False)
                ev = S * S / (n - 1)
            total = float(ev.sum())
            ratio = ev / total if total > 0 else ev * 0.0
            if k is None:
                k = min(n, d) if solver != "arpack" else min(n, d) - 1
            elif k == "mle":
                # The spectrum (min(n, d) numbers) is read back for Minka's criterion.
                k = _infer_dimension(ember.asnumpy(ev).astype(np.float64), n)
            elif isinstance(k, float):
                cum = np.cumsum(ember.asnumpy(ratio).astype(np.float64))
                k = int(np.searchsorted(cum, k, side="right")) + 1
                k = min(k, cum.shape[0])
            k = int(k)
            if k < min(n, d):
                noise = float(ev[k:].mean())
            else:
                noise = 0.0
            comps, ev_k, ratio_k, S_k = Vt[:k], ev[:k], ratio[:k], S[:k]
            U_k = None if U is None else U[:, :k]
        else:
            if not isinstance(k, Integral) or not 1 <= k < min(n, d):
                raise ValueError(
                    f"n_components={k!r} must be between 1 and min(n_samples, n_features)="
                    f"{min(n, d)} with svd_solver='randomized'"
                )
            rng = check_random_state(self.random_state)
            U_k, S_k, comps = randomized_svd(
                Xc,
                k,
                n_oversamples=self.n_oversamples,
                n_iter=self.iterated_power,
                random_state=rng,
                flip_sign=False,
            )
            U_k, comps = svd_flip(U_k, comps, u_based_decision=False)
            ev_k = S_k * S_k / (n - 1)
            total = float(Xc.var(axis=0, ddof=1).sum())
            ratio_k = ev_k / total
            rest = min(n, d) - k
            noise = (total - float(ev_k.sum())) / rest if rest > 0 else 0.0
        kind = input_kind(X)
        self.n_samples_ = n
        self.n_components_ = k
        self.mean_ = to_output(mean, kind)
        self.components_ = to_output(comps, kind)
        self.explained_variance_ = to_output(ev_k, kind)
        self.explained_variance_ratio_ = to_output(ratio_k, kind)
        self.singular_values_ = to_output(S_k, kind)
        self.noise_variance_ = float(noise)
        self._n_features_out = k
        return Xa, Xc, U_k, S_k

    def fit(self, X, y=None):
        """Fit the model with X; sets ``components_``, ``explained_variance_ratio_``, ..."""
        self._fit(X)
        return self

    def fit_transform(self, X, y=None):
        """Fit and project X (U * S from the SVD when it is at hand)."""
        Xa, Xc, U, S = self._fit(X)
        if U is None:
            return self.transform(X)
        Z = U * S
        if self.whiten:
            Z = U * math.sqrt(Xa.shape[0] - 1)
        return to_output(Z, input_kind(X))

    def _params(self, X):
        check_is_fitted(self, "components_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        dev = Xa.device
        C = to_device(self.components_, dev)
        return (
            Xa.astype(C.dtype),
            C,
            to_device(self.mean_, dev),
            to_device(self.explained_variance_, dev),
        )

    def transform(self, X):
        """Project X on the principal components (scaled to unit variance when whitening)."""
        Xa, C, mean, ev = self._params(X)
        Z = (Xa - mean) @ C.T
        if self.whiten:
            Z = Z / ember.sqrt(ember.maximum(ev, 1e-300))
        return to_output(Z, input_kind(X))

    def inverse_transform(self, X):
        """Map projected data back to the original space."""
        check_is_fitted(self, "components_")
        Za = check_array(X, estimator=self)
        dev = Za.device
        C = to_device(self.components_, dev)
        if Za.shape[1] != C.shape[0]:
            raise ValueError(
                f"X has {Za.shape[1]} features, but {type(self).__name__}.inverse_transform "
                f"is expecting {C.shape[0]} features as input."
            )
        if self.whiten:
            C = C * ember.sqrt(to_device(self.explained_variance_, dev))[:, None]
        return to_output(Za.astype(C.dtype) @ C + to_device(self.mean_, dev), input_kind(X))

    def get_covariance(self):
        """Model covariance: components' variance plus isotropic noise."""
        check_is_fitted(self, "components_")
        comps = self.components_
        C = (
            comps
            if isinstance(comps, ember.ndarray)
            else to_device(comps, ember.get_default_device())
        )
        ev = to_device(self.explained_variance_, C.device)
        ev = ember.maximum(ev - self.noise_variance_, 0.0)
        cov = (C.T * ev) @ C
        d = cov.shape[0]
        cov = cov + self.noise_variance_ * ember.eye(d, dtype=cov.dtype, device=cov.device)
        return to_output(cov, "numpy" if isinstance(self.components_, np.ndarray) else "ember")

    def get_precision(self):
        """Inverse of ``get_covariance`` (a d x d solve on the components' device)."""
        cov = self.get_covariance()
        C = cov if isinstance(cov, ember.ndarray) else to_device(cov, ember.get_default_device())
        d = C.shape[0]
        P = ember.linalg.solve(C, ember.eye(d, dtype=C.dtype, device=C.device))
        return to_output(P, "numpy" if isinstance(self.components_, np.ndarray) else "ember")

    def score_samples(self, X):
        """Log-likelihood of each sample under the probabilistic PCA model."""
        check_is_fitted(self, "components_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        dev = Xa.device
        P = to_device(self.get_precision(), dev)
        Xr = Xa.astype(P.dtype) - to_device(self.mean_, dev)
        d = Xa.shape[1]
        _, logdet = ember.linalg.slogdet(P)
        ll = -0.5 * (Xr * (Xr @ P)).sum(axis=1)
        ll = ll - 0.5 * (d * math.log(2.0 * math.pi) - logdet)
        return to_output(ll, input_kind(X))

    def score(self, X, y=None):
        """Average log-likelihood of the samples."""
        s = self.score_samples(X)
        return float(s.mean())


class TruncatedSVD(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Dimensionality reduction by a truncated SVD of the (uncentred) data."""

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "algorithm": [StrOptions({"arpack", "randomized"})],
        "n_iter": [Interval(Integral, 0, None, closed="left")],
        "n_oversamples": [Interval(Integral, 1, None, closed="left")],
        "power_iteration_normalizer": [StrOptions({"auto", "QR", "LU", "none"})],
        "random_state": ["random_state"],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        n_components=2,
        *,
        algorithm="randomized",
        n_iter=5,
        n_oversamples=10,
        power_iteration_normalizer="auto",
        random_state=None,
        tol=0.0,
    ):
        self.n_components = n_components
        self.algorithm = algorithm
        self.n_iter = n_iter
        self.n_oversamples = n_oversamples
        self.power_iteration_normalizer = power_iteration_normalizer
        self.random_state = random_state
        self.tol = tol

    def fit(self, X, y=None):
        """Fit the model on X."""
        self.fit_transform(X)
        return self

    def fit_transform(self, X, y=None):
        """Fit and return X projected on the components (U * Sigma)."""
        self._validate_params()
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=True)
        k = self.n_components
        d = Xa.shape[1]
        if self.algorithm == "arpack":
            if k >= min(Xa.shape):
                raise ValueError(f"n_components must be < n_features; got {k} >= {min(Xa.shape)}")
            # The exact thin SVD gives what ARPACK converges to.
            U, S, Vt = ember.linalg.svd(Xa, full_matrices=False)
            U, S, Vt = U[:, :k], S[:k], Vt[:k]
        else:
            if k > d:
                raise ValueError(f"n_components({k}) must be <= n_features({d}).")
            rng = check_random_state(self.random_state)
            U, S, Vt = randomized_svd(
                Xa,
                k,
                n_iter=self.n_iter,
                n_oversamples=self.n_oversamples,
                random_state=rng,
                flip_sign=False,
            )
        U, Vt = svd_flip(U, Vt, u_based_decision=False)
        Z = U * S
        ev = Z.var(axis=0)
        full = Xa.var(axis=0).sum()
        kind = input_kind(X)
        self.components_ = to_output(Vt, kind)
        self.explained_variance_ = to_output(ev, kind)
        self.explained_variance_ratio_ = to_output(ev / full, kind)
        self.singular_values_ = to_output(S, kind)
        self._n_features_out = k
        return to_output(Z, kind)

    def transform(self, X):
        """Project X on the components."""
        check_is_fitted(self, "components_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        C = to_device(self.components_, Xa.device)
        return to_output(Xa.astype(C.dtype) @ C.T, input_kind(X))

    def inverse_transform(self, X):
        """Map back to the original space."""
        check_is_fitted(self, "components_")
        Za = check_array(X, estimator=self)
        C = to_device(self.components_, Za.device)
        return to_output(Za.astype(C.dtype) @ C, input_kind(X))
