"""Linear and quadratic discriminant analysis (scikit-learn's ``sklearn.discriminant_analysis``).

Class means are one-hot matmuls (``onehot^T X / counts``) and every covariance, SVD and
eigendecomposition runs on X's device. LDA's ``svd`` solver whitens the within-class scatter by
an SVD and then takes the SVD of the prior-weighted centres; ``lsqr`` solves ``Sigma W = M^T``;
``eigen`` solves the generalised problem ``Sb v = l Sw v`` through the Cholesky factor of
``Sw`` (``L^-1 Sb L^-T`` is symmetric), giving eigenvectors normalised as scipy's
``eigh(Sb, Sw)`` (``V^T Sw V = I``; a column's sign may differ). ``shrinkage='auto'`` is the
Ledoit-Wolf estimate on standardised features, as scikit-learn's. QDA keeps one rotation and
scaling per class (SVD of the centred class, or ``eigh`` of its covariance).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

import ember

from .base import (
    BaseEstimator,
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from .utils._labels import decode_labels, encode_labels
from .utils._param_validation import HasMethods, Interval, StrOptions
from .utils.validation import (
    check_array,
    check_classification_targets,
    check_is_fitted,
    check_n_features,
    check_X_y,
    input_kind,
    is_ember,
    to_device,
    to_output,
)

__all__ = ["LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis"]


def _ledoit_wolf_shrinkage(Xc):
    """Ledoit-Wolf shrinkage intensity of centred data (a host float from device sums)."""
    n, p = Xc.shape
    if p == 1:
        return 0.0
    X2 = Xc * Xc
    trace = X2.sum(axis=0) / n
    mu = float(trace.sum()) / p
    beta_ = float((X2.T @ X2).sum())
    G = Xc.T @ Xc
    delta_ = float((G * G).sum()) / n**2
    beta = (beta_ / n - delta_) / (p * n)
    delta = (delta_ - 2.0 * mu * float(trace.sum()) + p * mu**2) / p
    beta = min(beta, delta)
    return 0.0 if beta == 0 else beta / delta


def _shrunk(S, shrinkage):
    p = S.shape[0]
    mu = float(ember.trace(S)) / p
    eye = ember.eye(p, dtype=S.dtype, device=S.device)
    return (1.0 - shrinkage) * S + shrinkage * mu * eye


def _cov(X, shrinkage=None, covariance_estimator=None):
    """Covariance of the rows of X (biased), optionally shrunk or from an estimator."""
    if covariance_estimator is not None:
        if shrinkage is not None and shrinkage != 0:
            raise ValueError(
                "covariance_estimator and shrinkage parameters are not None. Only one of the "
                "two can be set."
            )
        covariance_estimator.fit(X)
        if not hasattr(covariance_estimator, "covariance_"):
            raise ValueError(
                f"{type(covariance_estimator).__name__} does not have a covariance_ attribute"
            )
        c = covariance_estimator.covariance_
        return to_device(c if is_ember(c) else np.asarray(c), X.device).astype(X.dtype)
    n = X.shape[0]
    Xc = X - X.mean(axis=0)
    if shrinkage == "auto":
        std = ember.sqrt((Xc * Xc).mean(axis=0))
        std = ember.where(std == 0, 1.0, std).astype(X.dtype)
        Z = Xc / std
        s = _ledoit_wolf_shrinkage(Z)
        S = _shrunk(Z.T @ Z / n, s)
        return std[:, None] * S * std[None, :]
    S = Xc.T @ Xc / n
    if shrinkage is None:
        return S
    return _shrunk(S, float(shrinkage))


def _onehot(yi, K, dtype):
    return (yi[:, None] == ember.arange(K, device=yi.device)[None, :]).astype(dtype)


def _class_rows(yi, k):
    return ember.nonzero(yi == k)[0]


def _prepare(est, X, y, K_min_msg):
    """Validated (Xa, yi, classes, counts on the host, priors on the device)."""
    Xa, ya = check_X_y(X, y, estimator=est, ensure_min_samples=2)
    check_classification_targets(ya, type(est).__name__)
    check_n_features(est, Xa, reset=True)
    classes, yi = encode_labels(ya, Xa.device)
    K = int(classes.shape[0])
    n = Xa.shape[0]
    K_min_msg(K, n)
    counts = ember.bincount(yi, minlength=K)
    if est.priors is None:
        priors = counts.astype(Xa.dtype) / float(n)
    else:
        priors = to_device(np.asarray(est.priors, dtype=np.float64), Xa.device).astype(Xa.dtype)
    return Xa, yi, classes, counts, priors


def _log_softmax(Z):
    m = Z.max(axis=1, keepdims=True)
    return Z - (ember.log(ember.exp(Z - m).sum(axis=1, keepdims=True)) + m)


class _DAPrediction:
    """predict / predict_proba / predict_log_proba / decision_function from class scores."""

    def decision_function(self, X):
        """Class scores: (n,) log-likelihood ratio for two classes, (n, n_classes) otherwise."""
        Z = self._scores(X)
        return to_output(self._binary(Z), input_kind(X))

    def predict(self, X):
        """Class label with the largest score."""
        Z = self._scores(X)
        return decode_labels(self.classes_, ember.argmax(Z, axis=1), input_kind(X))

    def predict_log_proba(self, X):
        """Log posterior probabilities (columns in ``classes_`` order)."""
        return to_output(self._log_proba(self._scores(X)), input_kind(X))

    def predict_proba(self, X):
        """Posterior probabilities (columns in ``classes_`` order)."""
        return to_output(ember.exp(self._log_proba(self._scores(X))), input_kind(X))


class LinearDiscriminantAnalysis(
    ClassNamePrefixFeaturesOutMixin, _DAPrediction, ClassifierMixin, TransformerMixin, BaseEstimator
):
    """Classifier with a linear decision boundary from Gaussian class densities sharing one
    covariance; also a supervised dimensionality reduction (``transform``)."""

    _parameter_constraints = {
        "solver": [StrOptions({"svd", "lsqr", "eigen"})],
        "shrinkage": [StrOptions({"auto"}), Interval(Real, 0, 1, closed="both"), None],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "priors": ["array-like", None],
        "store_covariance": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "covariance_estimator": [HasMethods("fit"), None],
    }

    def __init__(
        self,
        solver="svd",
        shrinkage=None,
        priors=None,
        n_components=None,
        store_covariance=False,
        tol=1e-4,
        covariance_estimator=None,
    ):
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.n_components = n_components
        self.store_covariance = store_covariance
        self.tol = tol
        self.covariance_estimator = covariance_estimator

    def _class_cov(self, X, yi, K, priors, shrinkage, cov_est):
        S = None
        for k in range(K):
            Ck = _cov(ember.take(X, _class_rows(yi, k), axis=0), shrinkage, cov_est)
            S = priors[k] * Ck if S is None else S + priors[k] * Ck
        return S

    def fit(self, X, y):
        """Fit the class means, covariance and discriminant directions."""
        self._validate_params()

        def check(K, n):
            if n == K:
                raise ValueError("The number of samples must be more than the number of classes.")

        Xa, yi, classes, counts, priors = _prepare(self, X, y, check)
        n, d = Xa.shape
        K = int(classes.shape[0])
        if bool((priors < 0).any()):
            raise ValueError("priors must be non-negative")
        if abs(float(priors.sum()) - 1.0) > 1e-5:
            warnings.warn("The priors do not sum to 1. Renormalizing", UserWarning, stacklevel=2)
            priors = priors / priors.sum()
        max_components = min(K - 1, d)
        if self.n_components is None:
            self._max_components = max_components
        else:
            if self.n_components > max_components:
                raise ValueError(
                    "n_components cannot be larger than min(n_features, n_classes - 1)."
                )
            self._max_components = self.n_components
        kind = input_kind(X)
        dt = Xa.dtype
        means = (_onehot(yi, K, dt).T @ Xa) / counts.astype(dt)[:, None]
        self.__dict__.pop("covariance_", None)
        self.__dict__.pop("xbar_", None)
        if self.solver == "svd":
            if self.shrinkage is not None:
                raise NotImplementedError("shrinkage not supported with 'svd' solver.")
            if self.covariance_estimator is not None:
                raise ValueError(
                    "covariance estimator is not supported with svd solver. Try another solver"
                )
            coef, intercept, scalings, evr, xbar = self._solve_svd(Xa, yi, K, means, priors)
            self.xbar_ = to_output(xbar, kind)
            if self.store_covariance:
                cov = self._class_cov(Xa, yi, K, priors, None, None)
                self.covariance_ = to_output(cov, kind)
        else:
            cov = self._class_cov(Xa, yi, K, priors, self.shrinkage, self.covariance_estimator)
            self.covariance_ = to_output(cov, kind)
            if self.solver == "lsqr":
                coef = ember.linalg.lstsq(cov, means.T, rcond=None)[0].T
                scalings = evr = None
            else:
                St = _cov(Xa, self.shrinkage, self.covariance_estimator)
                coef, scalings, evr = self._solve_eigen(cov, St - cov, means)
            intercept = -0.5 * (means * coef).sum(axis=1) + ember.log(priors)
        if K == 2:
            coef = (coef[1] - coef[0])[None, :]
            intercept = (intercept[1] - intercept[0]).reshape(1)
        self.classes_ = (
            classes
            if kind == "ember"
            else (ember.asnumpy(classes) if is_ember(classes) else classes)
        )
        self.priors_ = to_output(priors, kind)
        self.means_ = to_output(means, kind)
        self.coef_ = to_output(coef.astype(dt), kind)
        self.intercept_ = to_output(intercept.astype(dt), kind)
        for name, val in (("scalings_", scalings), ("explained_variance_ratio_", evr)):
            if val is None:
                self.__dict__.pop(name, None)
            else:
                setattr(self, name, to_output(val, kind))
        self._n_features_out = self._max_components
        return self

    def _solve_svd(self, X, yi, K, means, priors):
        n = X.shape[0]
        Xc = X - ember.take(means, yi, axis=0)
        xbar = priors @ means
        D = Xc - Xc.mean(axis=0)
        std = ember.sqrt((D * D).mean(axis=0))
        std = ember.where(std == 0, 1.0, std).astype(X.dtype)
        Z = (Xc / std) * (1.0 / n) ** 0.5
        _, S, Vt = ember.linalg.svd(Z, full_matrices=False)
        rank = int((S > self.tol).sum())
        scalings = (Vt[:rank] / std[None, :]).T / S[:rank][None, :]
        fac = 1.0 if K == 1 else 1.0 / (K - 1)
        Mb = ember.sqrt(n * priors * fac)[:, None] * (means - xbar[None, :])
        _, S2, Vt2 = ember.linalg.svd(Mb @ scalings, full_matrices=False)
        if self._max_components == 0:
            evr = ember.empty((0,), dtype=S2.dtype, device=X.device)
        else:
            evr = (S2 * S2 / (S2 * S2).sum())[: self._max_components]
        rank2 = int((S2 > self.tol * S2[0]).sum())
        scalings = scalings @ Vt2.T[:, :rank2]
        c = (means - xbar[None, :]) @ scalings
        intercept = -0.5 * (c * c).sum(axis=1) + ember.log(priors)
        coef = c @ scalings.T
        intercept = intercept - coef @ xbar
        return coef, intercept, scalings, evr, xbar

    def _solve_eigen(self, Sw, Sb, means):
        # Generalised symmetric problem Sb v = l Sw v via Sw = L L^T.
        L = ember.linalg.cholesky(Sw)
        Linv = ember.linalg.inv(L)
        C = Linv @ Sb @ Linv.T
        C = 0.5 * (C + C.T)
        evals, U = ember.linalg.eigh(C)
        evecs = Linv.T @ U
        order = ember.flip(ember.argsort(evals), axis=0)
        evals = ember.take(evals, order)
        evecs = ember.take(evecs, order, axis=1)
        evr = (evals / evals.sum())[: self._max_components]
        coef = (means @ evecs) @ evecs.T
        return coef, evecs, evr

    def _scores(self, X):
        check_is_fitted(self, "coef_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        W = to_device(self.coef_, Xa.device)
        Xa = Xa.astype(W.dtype) if Xa.dtype != W.dtype else Xa
        Z = Xa @ W.T + to_device(self.intercept_, Xa.device)
        return Z

    def _binary(self, Z):
        return Z[:, 0] if Z.shape[1] == 1 else Z

    def _log_proba(self, Z):
        if Z.shape[1] == 1:
            z = Z[:, 0]
            p = ember.sigmoid(z)
            P = ember.stack([1.0 - p, p], axis=1)
            tiny = float(ember.finfo(P.dtype).tiny)
            return ember.log(ember.where(P == 0, tiny, P))
        return _log_softmax(Z)

    def predict(self, X):
        """Class label with the largest decision value."""
        Z = self._scores(X)
        idx = (Z[:, 0] > 0).astype(ember.int64) if Z.shape[1] == 1 else ember.argmax(Z, axis=1)
        return decode_labels(self.classes_, idx, input_kind(X))

    def transform(self, X):
        """Project X onto the discriminant directions (``n_components`` columns)."""
        if self.solver == "lsqr":
            raise NotImplementedError(
                "transform not implemented for 'lsqr' solver (use 'svd' or 'eigen')."
            )
        check_is_fitted(self, "scalings_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        S = to_device(self.scalings_, Xa.device)
        Xa = Xa.astype(S.dtype) if Xa.dtype != S.dtype else Xa
        if self.solver == "svd":
            Xa = Xa - to_device(self.xbar_, Xa.device)
        return to_output((Xa @ S)[:, : self._max_components], input_kind(X))


class QuadraticDiscriminantAnalysis(_DAPrediction, ClassifierMixin, BaseEstimator):
    """Classifier with a quadratic decision boundary: one Gaussian per class."""

    _parameter_constraints = {
        "solver": [StrOptions({"svd", "eigen"})],
        "shrinkage": [StrOptions({"auto"}), Interval(Real, 0, 1, closed="both"), None],
        "priors": ["array-like", None],
        "reg_param": [Interval(Real, 0, 1, closed="both")],
        "store_covariance": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "covariance_estimator": [HasMethods("fit"), None],
    }

    def __init__(
        self,
        *,
        solver="svd",
        shrinkage=None,
        priors=None,
        reg_param=0.0,
        store_covariance=False,
        tol=1.0e-4,
        covariance_estimator=None,
    ):
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.reg_param = reg_param
        self.store_covariance = store_covariance
        self.tol = tol
        self.covariance_estimator = covariance_estimator

    def _class_model(self, Xk):
        n = Xk.shape[0]
        if self.solver == "svd":
            _, S, Vt = ember.linalg.svd(Xk - Xk.mean(axis=0), full_matrices=False)
            scaling = (1.0 - self.reg_param) * (S * S / n) + self.reg_param
            rotation = Vt.T
            cov = (rotation * scaling[None, :]) @ Vt if self.store_covariance else None
            return scaling, rotation, cov
        cov = _cov(Xk, self.shrinkage, self.covariance_estimator)
        evals, evecs = ember.linalg.eigh(cov)
        order = ember.flip(ember.argsort(evals), axis=0)
        return ember.take(evals, order), ember.take(evecs, order, axis=1), cov

    def fit(self, X, y):
        """Fit one mean, rotation and scaling per class."""
        self._validate_params()

        def check(K, n):
            if K < 2:
                raise ValueError(
                    f"The number of classes has to be greater than one. Got {K} class."
                )

        Xa, yi, classes, counts, priors = _prepare(self, X, y, check)
        d = Xa.shape[1]
        K = int(classes.shape[0])
        if self.solver == "svd":
            if self.shrinkage is not None:
                raise NotImplementedError("shrinkage not supported with 'svd' solver.")
            if self.covariance_estimator is not None:
                raise ValueError(
                    "covariance_estimator is not supported with solver='svd'. Try "
                    "solver='eigen' instead."
                )
        labels = ember.asnumpy(classes) if is_ember(classes) else np.asarray(classes)
        counts_h = ember.asnumpy(counts)  # K numbers for the messages below
        kind = input_kind(X)
        means, scalings, rotations, covs = [], [], [], []
        for k in range(K):
            Xk = ember.take(Xa, _class_rows(yi, k), axis=0)
            if counts_h[k] == 1:
                raise ValueError(
                    f"y has only 1 sample in class {labels[k]}, covariance is ill defined."
                )
            means.append(Xk.mean(axis=0))
            scaling, rotation, cov = self._class_model(Xk)
            rank = int((scaling > self.tol).sum())
            if rank < d:
                if self.solver == "svd" and counts_h[k] <= d:
                    raise np.linalg.LinAlgError(
                        f"The covariance matrix of class {labels[k]} is not full rank. When "
                        "using `solver='svd'` the number of samples in each class should be "
                        f"more than the number of features, but class {labels[k]} has "
                        f"{counts_h[k]} samples and {d} features. Try using `solver='eigen'` "
                        "and setting the parameter `shrinkage` for regularization."
                    )
                param = "shrinkage" if self.solver == "eigen" else "reg_param"
                raise np.linalg.LinAlgError(
                    f"The covariance matrix of class {labels[k]} is not full rank. Increase "
                    f"the value of `{param}` to reduce the collinearity."
                )
            scalings.append(to_output(scaling, kind))
            rotations.append(to_output(rotation, kind))
            covs.append(to_output(cov, kind))
        self.classes_ = classes if kind == "ember" else labels
        self.priors_ = to_output(priors, kind)
        self.means_ = to_output(ember.stack(means), kind)
        self.scalings_ = scalings
        self.rotations_ = rotations
        if self.store_covariance:
            self.covariance_ = covs
        else:
            self.__dict__.pop("covariance_", None)
        return self

    def _scores(self, X):
        check_is_fitted(self, "rotations_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        dev = Xa.device
        means = to_device(self.means_, dev)
        Xa = Xa.astype(means.dtype) if Xa.dtype != means.dtype else Xa
        cols, logdet = [], []
        for k in range(len(self.rotations_)):
            R = to_device(self.rotations_[k], dev)
            S = to_device(self.scalings_[k], dev)
            Z = (Xa - means[k][None, :]) @ (R * (S**-0.5)[None, :])
            cols.append((Z * Z).sum(axis=1))
            logdet.append(ember.log(S).sum())
        norm2 = ember.stack(cols, axis=1)
        u = ember.stack(logdet)
        return -0.5 * (norm2 + u[None, :]) + ember.log(to_device(self.priors_, dev))[None, :]

    def _binary(self, Z):
        return Z[:, 1] - Z[:, 0] if Z.shape[1] == 2 else Z

    def _log_proba(self, Z):
        return _log_softmax(Z)
