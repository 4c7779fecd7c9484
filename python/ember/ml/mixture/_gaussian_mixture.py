"""``GaussianMixture`` (scikit-learn's ``sklearn.mixture``): EM on the data's device.

The model is held as Cholesky factors of the precisions (scikit-learn's parametrisation):
``precisions_cholesky_`` is the upper factor U with precision = U U^T, so the log-density is
``-0.5 (d log 2pi + |(x - mu) U|^2) + log det U``. All components at once: responsibilities
``exp(log_resp)``, ``nk``/means as matmuls, full covariances one batched ``(k, d, n) @ (k, n, d)``
product, one batched ``cholesky`` and triangular inverse per M-step, E-step ``logsumexp`` over
components. Host work: the lower bound (one scalar per iteration, the stopping rule) and, in
``sample``, the k per-component counts (NumPy's multinomial); the draws are device normals.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    check_random_state,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["GaussianMixture"]

_CHOL_ERROR = (
    "Fitting the mixture model failed because some components have ill-defined empirical "
    "covariance (for instance caused by singleton or collapsed samples). Try to decrease the "
    "number of components, increase reg_covar, or scale the input data."
)


def _check_shape(param, shape, name):
    if tuple(param.shape) != tuple(shape):
        raise ValueError(
            f"The parameter '{name}' should have the shape of {shape}, but got {tuple(param.shape)}"
        )


def _eye(d, like):
    return ember.eye(d, dtype=like.dtype, device=like.device)


def _mT(A):
    return ember.swapaxes(A, -1, -2)


def _estimate_parameters(X, resp, reg_covar, cov_type):
    eps = 10 * float(np.finfo(np.float32 if X.dtype == ember.float32 else np.float64).eps)
    nk = resp.sum(axis=0) + eps
    means = (resp.T @ X) / nk[:, None]
    d = X.shape[1]
    if cov_type == "full":
        D = X[None, :, :] - means[:, None, :]  # (k, n, d)
        cov = (_mT(D) * resp.T[:, None, :]) @ D / nk[:, None, None]
        cov = cov + reg_covar * _eye(d, X)
    elif cov_type == "tied":
        cov = X.T @ X - (nk[:, None] * means).T @ means
        cov = cov / nk.sum() + reg_covar * _eye(d, X)
    else:
        cov = (resp.T @ (X * X)) / nk[:, None] - means * means + reg_covar
        if cov_type == "spherical":
            cov = cov.mean(axis=1)
    return nk, means, cov


def _precision_cholesky(cov, cov_type):
    if cov_type in ("full", "tied"):
        try:
            L = ember.linalg.cholesky(cov)
        except ember.linalg.LinAlgError:
            msg = _CHOL_ERROR
            if cov.dtype == ember.float32:
                msg += (
                    " The numerical accuracy can also be improved by passing float64 data "
                    "instead of float32."
                )
            raise ValueError(msg) from None
        if not bool(ember.isfinite(L).all()):
            raise ValueError(_CHOL_ERROR)
        return _mT(ember.linalg.inv(L))  # (L^-1)^T: upper, U U^T = cov^-1
    if bool((cov <= 0).any()):
        raise ValueError(_CHOL_ERROR)
    return 1.0 / ember.sqrt(cov)


def _flip2(A):
    return ember.flip(ember.flip(A, axis=-1), axis=-2)


def _chol_from_precisions(P, cov_type):
    if cov_type in ("full", "tied"):
        return _flip2(ember.linalg.cholesky(_flip2(P)))
    return ember.sqrt(P)


def _log_det_chol(U, cov_type, d):
    if cov_type == "full":
        return ember.log(ember.diagonal(U, axis1=-2, axis2=-1)).sum(axis=-1)
    if cov_type == "tied":
        return ember.log(ember.diagonal(U)).sum()
    if cov_type == "diag":
        return ember.log(U).sum(axis=1)
    return d * ember.log(U)


def _log_gaussian_prob(X, means, U, cov_type):
    n, d = X.shape
    log_det = _log_det_chol(U, cov_type, d)
    if cov_type == "full":
        Y = X[None, :, :] @ U - (means[:, None, :] @ U)  # (k, n, d)
        lp = (Y * Y).sum(axis=2).T
    elif cov_type == "tied":
        Y = (X @ U)[None, :, :] - (means @ U)[:, None, :]
        lp = (Y * Y).sum(axis=2).T
    elif cov_type == "diag":
        P = U * U
        lp = (means * means * P).sum(axis=1)[None, :] - 2.0 * (X @ (means * P).T) + (X * X) @ P.T
    else:
        P = U * U
        lp = (
            ((means * means).sum(axis=1) * P)[None, :]
            - 2.0 * (X @ means.T) * P[None, :]
            + (X * X).sum(axis=1)[:, None] * P[None, :]
        )
    return -0.5 * (d * math.log(2 * math.pi) + lp) + log_det


class GaussianMixture(BaseEstimator):
    """Gaussian mixture fitted by expectation-maximisation on the data's device."""

    _estimator_type = "density_estimator"

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "reg_covar": [Interval(Real, 0.0, None, closed="left")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "init_params": [StrOptions({"kmeans", "random", "random_from_data", "k-means++"})],
        "random_state": ["random_state"],
        "warm_start": ["boolean"],
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
        "verbose_interval": [Interval(Integral, 1, None, closed="left")],
        "covariance_type": [StrOptions({"full", "tied", "diag", "spherical"})],
        "weights_init": ["array-like", None],
        "means_init": ["array-like", None],
        "precisions_init": ["array-like", None],
    }

    def __init__(
        self,
        n_components=1,
        *,
        covariance_type="full",
        tol=1e-3,
        reg_covar=1e-6,
        max_iter=100,
        n_init=1,
        init_params="kmeans",
        weights_init=None,
        means_init=None,
        precisions_init=None,
        random_state=None,
        warm_start=False,
        verbose=0,
        verbose_interval=10,
    ):
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.tol = tol
        self.reg_covar = reg_covar
        self.max_iter = max_iter
        self.n_init = n_init
        self.init_params = init_params
        self.weights_init = weights_init
        self.means_init = means_init
        self.precisions_init = precisions_init
        self.random_state = random_state
        self.warm_start = warm_start
        self.verbose = verbose
        self.verbose_interval = verbose_interval

    # ------------------------------------------------------------------ checks and init
    def _checked_inits(self, X):
        k, d = self.n_components, X.shape[1]
        w = m = p = None
        if self.weights_init is not None:
            w = check_array(self.weights_init, estimator=self, ensure_2d=False, device=X.device)
            _check_shape(w, (k,), "weights")
            if bool((w < 0).any()) or bool((w > 1).any()):
                raise ValueError(
                    "The parameter 'weights' should be in the range [0, 1], but got max value "
                    f"{float(w.min()):.5f}, min value {float(w.max()):.5f}"
                )
            atol = 1e-6 if w.dtype == ember.float32 else 1e-8
            if abs(1.0 - float(w.sum())) > atol:
                raise ValueError(
                    "The parameter 'weights' should be normalized, but got sum(weights) = "
                    f"{float(w.sum()):.5f}"
                )
        if self.means_init is not None:
            m = check_array(self.means_init, estimator=self, ensure_2d=False, device=X.device)
            _check_shape(m, (k, d), "means")
        if self.precisions_init is not None:
            ct = self.covariance_type
            p = check_array(
                self.precisions_init,
                estimator=self,
                ensure_2d=False,
                allow_nd=ct == "full",
                device=X.device,
            )
            shapes = {"full": (k, d, d), "tied": (d, d), "diag": (k, d), "spherical": (k,)}
            _check_shape(p, shapes[ct], f"{ct} precision")
            if ct in ("full", "tied"):
                sym = bool((ember.abs(p - _mT(p)) <= 1e-8 + 1e-5 * ember.abs(_mT(p))).all())
                if not sym or not bool((ember.linalg.eigvalsh(p) > 0).all()):
                    raise ValueError(f"'{ct} precision' should be symmetric, positive-definite")
            elif bool((p <= 0).any()):
                raise ValueError(f"'{ct} precision' should be positive")
        return w, m, p

    def _resp_init(self, X, rng):
        from ..cluster import KMeans, kmeans_plusplus

        n, k = X.shape[0], self.n_components
        dev = X.device
        if self.init_params == "kmeans":
            labels = KMeans(n_clusters=k, n_init=1, random_state=rng).fit(X).labels_
            return (labels[:, None] == ember.arange(k, device=dev)[None, :]).astype(X.dtype)
        if self.init_params == "random":
            r = rng.uniform(size=(n, k), device=dev).astype(X.dtype)
            return r / r.sum(axis=1)[:, None]
        if self.init_params == "random_from_data":
            idx = to_device(rng.choice(n, size=k, replace=False), dev)
        else:
            _, idx = kmeans_plusplus(X, k, random_state=rng)
        return (ember.arange(n, device=dev)[:, None] == idx[None, :]).astype(X.dtype)

    def _initialize(self, X, rng, inits):
        w0, m0, p0 = inits
        resp = None
        if w0 is None or m0 is None or p0 is None:
            resp = self._resp_init(X, rng)
        weights = means = cov = None
        if resp is not None:
            weights, means, cov = _estimate_parameters(
                X, resp, self.reg_covar, self.covariance_type
            )
            if w0 is None:
                weights = weights / X.shape[0]
        self.weights_ = weights if w0 is None else w0.astype(X.dtype)
        self.means_ = means if m0 is None else m0.astype(X.dtype)
        if p0 is None:
            self.covariances_ = cov
            self.precisions_cholesky_ = _precision_cholesky(cov, self.covariance_type)
        else:
            self.precisions_cholesky_ = _chol_from_precisions(
                p0.astype(X.dtype), self.covariance_type
            )

    # ------------------------------------------------------------------ EM
    def _e_step(self, X):
        wlp = _log_gaussian_prob(
            X, self.means_, self.precisions_cholesky_, self.covariance_type
        ) + ember.log(self.weights_)
        norm = ember.logsumexp(wlp, 1)
        return norm.mean(), wlp - norm[:, None]

    def _m_step(self, X, log_resp):
        w, self.means_, self.covariances_ = _estimate_parameters(
            X, ember.exp(log_resp), self.reg_covar, self.covariance_type
        )
        self.weights_ = w / w.sum()
        self.precisions_cholesky_ = _precision_cholesky(self.covariances_, self.covariance_type)

    def _params(self):
        return (
            self.weights_,
            self.means_,
            getattr(self, "covariances_", None),
            self.precisions_cholesky_,
        )

    def fit(self, X, y=None):
        """Estimate the parameters with EM (``n_init`` starts, the best lower bound kept)."""
        self._fit_predict(X)
        return self

    def fit_predict(self, X, y=None):
        """Fit, then the component of each sample."""
        return to_output(self._fit_predict(X), input_kind(X))

    def _fit_predict(self, X):
        self._validate_params()
        Xa = check_array(X, estimator=self, ensure_min_samples=2)
        if Xa.shape[0] < self.n_components:
            raise ValueError(
                "Expected n_samples >= n_components but got n_components = "
                f"{self.n_components}, n_samples = {Xa.shape[0]}"
            )
        warm = self.warm_start and hasattr(self, "converged_")
        check_n_features(self, Xa, reset=not warm)
        inits = self._checked_inits(Xa)
        kind = input_kind(X)
        n_init = 1 if warm else self.n_init
        if warm:
            self._to_fit_state(Xa)
        best_lb = -math.inf
        best = None
        self.converged_ = False
        rng = check_random_state(self.random_state)
        for _ in range(n_init):
            if not warm:
                self._initialize(Xa, rng, inits)
            lb = self.lower_bound_ if warm else -math.inf
            lbs = []
            converged = False
            n_iter = 0
            for n_iter in range(1, self.max_iter + 1):  # noqa: B007  (read after the loop)
                prev = lb
                lpn, log_resp = self._e_step(Xa)
                self._m_step(Xa, log_resp)
                lb = float(lpn)  # host scalar per iteration: the stopping rule
                lbs.append(lb)
                if abs(lb - prev) < self.tol:
                    converged = True
                    break
            if best is None or lb > best_lb:
                best_lb = lb
                best = (self._params(), n_iter, lbs, converged)
        params, n_iter, lbs, converged = best
        self.converged_ = converged
        if not converged and self.max_iter > 0:
            warnings.warn(
                "Best performing initialization did not converge. Try different init "
                "parameters, or increase max_iter, tol, or check for degenerate data.",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.weights_, self.means_, self.covariances_, self.precisions_cholesky_ = params
        self.n_iter_ = n_iter
        self.lower_bound_ = best_lb
        self.lower_bounds_ = lbs
        _, log_resp = self._e_step(Xa)
        labels = ember.argmax(log_resp, axis=1)
        self._set_outputs(kind)
        return labels

    def _to_fit_state(self, X):
        for name in ("weights_", "means_", "covariances_", "precisions_cholesky_"):
            v = getattr(self, name, None)
            if v is not None:
                setattr(self, name, to_device(v, X.device).astype(X.dtype))

    def _set_outputs(self, kind):
        U = self.precisions_cholesky_
        if self.covariance_type in ("full", "tied"):
            self.precisions_ = U @ _mT(U)
        else:
            self.precisions_ = U * U
        for name in ("weights_", "means_", "covariances_", "precisions_cholesky_", "precisions_"):
            setattr(self, name, to_output(getattr(self, name), kind))

    # ------------------------------------------------------------------ inference
    def _test_data(self, X):
        check_is_fitted(self, "means_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        dev, dt = Xa.device, Xa.dtype
        means = to_device(self.means_, dev).astype(dt)
        U = to_device(self.precisions_cholesky_, dev).astype(dt)
        w = to_device(self.weights_, dev).astype(dt)
        wlp = _log_gaussian_prob(Xa, means, U, self.covariance_type) + ember.log(w)
        return Xa, wlp

    def score_samples(self, X):
        """Log-likelihood of each sample under the model."""
        _, wlp = self._test_data(X)
        return to_output(ember.logsumexp(wlp, 1), input_kind(X))

    def score(self, X, y=None):
        """Mean log-likelihood of X."""
        _, wlp = self._test_data(X)
        return float(ember.logsumexp(wlp, 1).mean())

    def predict(self, X):
        """Most probable component of each sample."""
        _, wlp = self._test_data(X)
        return to_output(ember.argmax(wlp, axis=1), input_kind(X))

    def predict_proba(self, X):
        """Posterior probability of each component for each sample."""
        _, wlp = self._test_data(X)
        return to_output(ember.exp(wlp - ember.logsumexp(wlp, 1)[:, None]), input_kind(X))

    def _n_parameters(self):
        k = self.n_components
        d = self.means_.shape[1]
        cov = {
            "full": k * d * (d + 1) / 2.0,
            "diag": k * d,
            "tied": d * (d + 1) / 2.0,
            "spherical": k,
        }[self.covariance_type]
        return int(cov + d * k + k - 1)

    def bic(self, X):
        """Bayesian information criterion on X (lower is better)."""
        n = check_array(X, estimator=self).shape[0]
        return -2 * self.score(X) * n + self._n_parameters() * math.log(n)

    def aic(self, X):
        """Akaike information criterion on X (lower is better)."""
        n = check_array(X, estimator=self).shape[0]
        return -2 * self.score(X) * n + 2 * self._n_parameters()

    def sample(self, n_samples=1):
        """``n_samples`` draws from the fitted mixture and their component labels."""
        check_is_fitted(self, "means_")
        if n_samples < 1:
            raise ValueError(
                f"Invalid value for 'n_samples': {self.n_components} . The sampling requires "
                "at least one sample."
            )
        kind = "ember" if isinstance(self.means_, ember.ndarray) else "numpy"
        means = (
            to_device(self.means_, ember.get_default_device()) if kind == "numpy" else self.means_
        )
        dev = means.device
        d = means.shape[1]
        seed = self.random_state
        hrng = (
            seed
            if isinstance(seed, np.random.RandomState)
            else np.random.RandomState(seed if isinstance(seed, Integral) else None)
        )
        w = np.asarray(ember.asnumpy(to_device(self.weights_, dev)), dtype=np.float64)
        counts = hrng.multinomial(n_samples, w / w.sum())  # k host integers
        rng = check_random_state(int(hrng.randint(0, 2**31 - 1)))
        Z = rng.standard_normal((n_samples, d), device=dev).astype(means.dtype)
        labels = ember.asarray(np.repeat(np.arange(len(counts)), counts), device=dev)
        mu = ember.take(means, labels, axis=0)
        cov = to_device(self.covariances_, dev).astype(means.dtype)
        ct = self.covariance_type
        if ct == "full":
            Lk = ember.take(ember.linalg.cholesky(cov), labels, axis=0)  # (n, d, d)
            X = mu + (Lk @ Z[:, :, None])[:, :, 0]
        elif ct == "tied":
            X = mu + Z @ ember.linalg.cholesky(cov).T
        elif ct == "diag":
            X = mu + Z * ember.sqrt(ember.take(cov, labels, axis=0))
        else:
            X = mu + Z * ember.sqrt(ember.take(cov, labels))[:, None]
        return to_output(X, kind), to_output(labels.astype(ember.int64), kind)
