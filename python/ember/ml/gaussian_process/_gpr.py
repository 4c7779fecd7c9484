"""``GaussianProcessRegressor`` (scikit-learn's Algorithm 2.1 of Rasmussen & Williams).

The kernel matrix, its Cholesky factor ``L_``, ``alpha_ = K^-1 y``, the log-marginal
likelihood and its gradient (``0.5 tr((a a' - K^-1) dK/dtheta)`` per hyperparameter, one
elementwise product and a sum over the (n, n, n_theta) kernel gradient) and the predictive
mean/std/cov are ember ops on the training data's device. ember has no triangular solve yet,
so ``L x = b`` is solved by ``ember.linalg.solve`` (LU of the triangular factor: the same
solution to rounding). Only the outer optimiser is host work: scipy's L-BFGS-B sees the
log-hyperparameters ``theta`` and receives the likelihood and its gradient as host scalars,
one transfer per evaluation. Restart points and ``sample_y``'s standard normals are drawn with
NumPy's RandomState from ``random_state`` as scikit-learn draws them, so both reproduce
scikit-learn's choices.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from operator import itemgetter

import numpy as np

import ember

from ..base import BaseEstimator, RegressorMixin, clone
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    is_ember,
    to_device,
    to_output,
)
from .kernels import RBF, ConstantKernel, Kernel

__all__ = ["GaussianProcessRegressor"]


def _np_rng(seed):
    if seed is None or seed is np.random:
        return np.random.mtrand._rand
    if isinstance(seed, np.random.RandomState):
        return seed
    if isinstance(seed, Integral):
        return np.random.RandomState(int(seed))
    raise ValueError(f"{seed!r} cannot be used to seed a numpy.random.RandomState instance")


def _tri_solve(L, B):
    """X with L X = B (L lower triangular), on L's device."""
    return ember.linalg.solve(L, B)


def _cholesky(K):
    """Lower Cholesky factor, or None where K is not positive definite."""
    try:
        L = ember.linalg.cholesky(K)
    except (ember.linalg.LinAlgError, ValueError, RuntimeError):
        return None
    if not bool(ember.all(ember.isfinite(ember.diagonal(L)))):
        return None
    return L


def _add_diag(K, alpha):
    n = K.shape[0]
    eye = ember.eye(n, dtype=K.dtype, device=K.device)
    if isinstance(alpha, ember.ndarray) and alpha.ndim > 0:
        return K + eye * alpha[None, :]
    return K + eye * alpha


class GaussianProcessRegressor(RegressorMixin, BaseEstimator):
    """Gaussian process regression with hyperparameters fitted by maximising the
    log-marginal likelihood (L-BFGS-B on ``theta``, optional random restarts)."""

    _parameter_constraints = {
        "kernel": [None, Kernel],
        "alpha": [Interval(Real, 0, None, closed="left"), "array-like"],
        "optimizer": [StrOptions({"fmin_l_bfgs_b"}), callable, None],
        "n_restarts_optimizer": [Interval(Integral, 0, None, closed="left")],
        "normalize_y": ["boolean"],
        "copy_X_train": ["boolean"],
        "n_targets": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        kernel=None,
        *,
        alpha=1e-10,
        optimizer="fmin_l_bfgs_b",
        n_restarts_optimizer=0,
        normalize_y=False,
        copy_X_train=True,
        n_targets=None,
        random_state=None,
    ):
        self.kernel = kernel
        self.alpha = alpha
        self.optimizer = optimizer
        self.n_restarts_optimizer = n_restarts_optimizer
        self.normalize_y = normalize_y
        self.copy_X_train = copy_X_train
        self.n_targets = n_targets
        self.random_state = random_state

    _multi_output = True

    @staticmethod
    def _default_kernel(prior=False):
        # fit's default is optimised; the prior before fit uses the fixed version
        if prior:
            return ConstantKernel(1.0, constant_value_bounds="fixed") * RBF(
                1.0, length_scale_bounds="fixed"
            )
        return ConstantKernel() * RBF()

    def fit(self, X, y):
        """Fit the GP: optimise the kernel's hyperparameters, factor K + alpha I."""
        self._validate_params()
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        self.kernel_ = self._default_kernel() if self.kernel is None else clone(self.kernel)
        self._rng = _np_rng(self.random_state)
        kind = input_kind(X)
        Xa = check_array(X, estimator=self, dtype=ember.float64)
        check_n_features(self, Xa, reset=True)
        dev = Xa.device
        ya = check_array(y, ensure_2d=False, dtype=ember.float64, input_name="y", device=dev)
        if ya.shape[0] != Xa.shape[0]:
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"[{Xa.shape[0]}, {ya.shape[0]}]"
            )
        n_targets_seen = ya.shape[1] if ya.ndim > 1 else 1
        if self.n_targets is not None and n_targets_seen != self.n_targets:
            raise ValueError(
                "The number of targets seen in `y` is different from the parameter "
                f"`n_targets`. Got {n_targets_seen} != {self.n_targets}."
            )
        if self.normalize_y:
            mean = ember.mean(ya, axis=0)
            std = ember.std(ya, axis=0)
            std = ember.where(std < 10 * np.finfo(np.float64).eps, 1.0, std)
            ya = (ya - mean) / std
        else:
            shape = (ya.shape[1],) if ya.ndim > 1 else ()
            mean = ember.zeros(shape, dtype=ember.float64, device=dev)
            std = ember.ones(shape, dtype=ember.float64, device=dev)
        self._y_mean, self._y_std = mean, std
        if np.iterable(self.alpha):
            host = ember.asnumpy(self.alpha) if is_ember(self.alpha) else self.alpha
            al = ember.asarray(np.asarray(host, dtype=np.float64), device=dev)
            if al.ndim > 0 and al.shape[0] != ya.shape[0]:
                if al.shape[0] == 1:
                    al = al[0]
                else:
                    raise ValueError(
                        "alpha must be a scalar or an array with same number of entries as "
                        f"y. ({al.shape[0]} != {ya.shape[0]})"
                    )
            self._alpha = al
        else:
            self._alpha = float(self.alpha)
        self._X = Xa.copy() if self.copy_X_train else Xa
        self._y = ya

        if self.optimizer is not None and self.kernel_.n_dims > 0:

            def obj_func(theta, eval_gradient=True):
                if eval_gradient:
                    lml, grad = self.log_marginal_likelihood(
                        theta, eval_gradient=True, clone_kernel=False
                    )
                    return -lml, -grad
                return -self.log_marginal_likelihood(theta, clone_kernel=False)

            optima = [self._constrained_optimization(obj_func, self.kernel_.theta,
                                                     self.kernel_.bounds)]  # fmt: skip
            if self.n_restarts_optimizer > 0:
                if not np.isfinite(self.kernel_.bounds).all():
                    raise ValueError(
                        "Multiple optimizer restarts (n_restarts_optimizer>0) requires that "
                        "all bounds are finite."
                    )
                bounds = self.kernel_.bounds
                for _ in range(self.n_restarts_optimizer):
                    theta0 = self._rng.uniform(bounds[:, 0], bounds[:, 1])
                    optima.append(self._constrained_optimization(obj_func, theta0, bounds))
            values = list(map(itemgetter(1), optima))
            self.kernel_.theta = optima[int(np.argmin(values))][0]
            self.kernel_._check_bounds_params()
            self.log_marginal_likelihood_value_ = -float(np.min(values))
        else:
            self.log_marginal_likelihood_value_ = self.log_marginal_likelihood(
                self.kernel_.theta, clone_kernel=False
            )

        K = _add_diag(self.kernel_._eval(self._X, None, False), self._alpha)
        L = _cholesky(K)
        if L is None:
            raise np.linalg.LinAlgError(
                f"The kernel, {self.kernel_}, is not returning a positive definite matrix. "
                "Try gradually increasing the 'alpha' parameter of your "
                "GaussianProcessRegressor estimator."
            )
        self._L = L
        Y2 = ya[:, None] if ya.ndim == 1 else ya
        A = _tri_solve(L.T, _tri_solve(L, Y2))
        self._A = A[:, 0] if ya.ndim == 1 else A
        self._kind = kind
        self.X_train_ = to_output(self._X, kind)
        self.y_train_ = to_output(self._y, kind)
        self.L_ = to_output(self._L, kind)
        self.alpha_ = to_output(self._A, kind)
        self._y_train_mean = to_output(mean, kind)
        self._y_train_std = to_output(std, kind)
        return self

    def _constrained_optimization(self, obj_func, initial_theta, bounds):
        if self.optimizer == "fmin_l_bfgs_b":
            from scipy.optimize import minimize

            res = minimize(obj_func, initial_theta, method="L-BFGS-B", jac=True, bounds=bounds)
            if res.status != 0:
                warnings.warn(
                    f"lbfgs failed to converge (status={res.status}):\n{res.message}.\n\n"
                    "Increase the number of iterations (max_iter) or scale the data as shown "
                    "in:\n    https://scikit-learn.org/stable/modules/preprocessing.html",
                    ConvergenceWarning,
                    stacklevel=3,
                )
            return res.x, res.fun
        theta_opt, func_min = self.optimizer(obj_func, initial_theta, bounds=bounds)
        return theta_opt, func_min

    def log_marginal_likelihood(self, theta=None, eval_gradient=False, clone_kernel=True):
        """log p(y | X, theta) (and its gradient with respect to theta): host floats."""
        if theta is None:
            if eval_gradient:
                raise ValueError("Gradient can only be evaluated for theta!=None")
            check_is_fitted(self, "log_marginal_likelihood_value_")
            return self.log_marginal_likelihood_value_
        theta = np.asarray(theta, dtype=np.float64)
        if clone_kernel:
            kernel = self.kernel_.clone_with_theta(theta)
        else:
            kernel = self.kernel_
            kernel.theta = theta
        X = self._X
        if eval_gradient:
            K, Kg = kernel._eval(X, None, True)
        else:
            K = kernel._eval(X, None, False)
        K = _add_diag(K, to_device(self._alpha, X.device) if is_ember(self._alpha) else self._alpha)
        L = _cholesky(K)
        if L is None:
            return (-np.inf, np.zeros_like(theta)) if eval_gradient else -np.inf
        Y = self._y[:, None] if self._y.ndim == 1 else self._y
        n, t = Y.shape
        A = _tri_solve(L.T, _tri_solve(L, Y))
        lml = (
            -0.5 * (Y * A).sum()
            - t * ember.log(ember.diagonal(L)).sum()
            - t * n / 2.0 * float(np.log(2 * np.pi))
        )
        if not eval_gradient:
            return float(lml)
        eye = ember.eye(n, dtype=K.dtype, device=K.device)
        Linv = _tri_solve(L, eye)
        W = A @ A.T - t * (Linv.T @ Linv)
        grad = 0.5 * (W[:, :, None] * Kg).sum(axis=(0, 1))
        vals = ember.asnumpy(ember.concatenate([lml.reshape((1,)), grad]))  # one transfer
        return float(vals[0]), np.asarray(vals[1:], dtype=np.float64)

    def predict(self, X, return_std=False, return_cov=False):
        """Predictive mean (and std or covariance); the GP prior before ``fit``."""
        if return_std and return_cov:
            raise RuntimeError("At most one of return_std or return_cov can be requested.")
        kind = input_kind(X)
        if not hasattr(self, "X_train_"):
            kernel = self._default_kernel(prior=True) if self.kernel is None else self.kernel
            Xa = check_array(
                X, estimator=self, dtype=ember.float64, ensure_2d=kernel.requires_vector_input
            )
            nt = 1 if self.n_targets is None else self.n_targets
            shape = (Xa.shape[0],) if nt == 1 else (Xa.shape[0], nt)
            mean = ember.zeros(shape, dtype=ember.float64, device=Xa.device)
            if return_cov:
                cov = kernel._eval(Xa, None, False)
                if nt > 1:
                    cov = ember.stack([cov] * nt, axis=2)
                return to_output(mean, kind), to_output(cov, kind)
            if return_std:
                std = ember.sqrt(kernel._diag(Xa))
                if nt > 1:
                    std = ember.stack([std] * nt, axis=1)
                return to_output(mean, kind), to_output(std, kind)
            return to_output(mean, kind)
        Xa = check_array(X, estimator=self, dtype=ember.float64)
        check_n_features(self, Xa, reset=False)
        dev = Xa.device
        Xt, L, A = (to_device(v, dev) for v in (self._X, self._L, self._A))
        ym, ys = to_device(self._y_mean, dev), to_device(self._y_std, dev)
        Kt = self.kernel_._eval(Xa, Xt, False)
        mean = ys * (Kt @ A) + ym
        if mean.ndim > 1 and mean.shape[1] == 1:
            mean = mean[:, 0]
        if not (return_std or return_cov):
            return to_output(mean, kind)
        V = _tri_solve(L, Kt.T)
        if return_cov:
            cov = self.kernel_._eval(Xa, None, False) - V.T @ V
            if ys.ndim > 0:
                cov = cov[:, :, None] * (ys * ys)[None, None, :]
                if cov.shape[2] == 1:
                    cov = cov[:, :, 0]
            else:
                cov = cov * (ys * ys)
            return to_output(mean, kind), to_output(cov, kind)
        var = self.kernel_._diag(Xa) - (V * V).sum(axis=0)
        if bool(ember.any(var < 0)):
            warnings.warn(
                "Predicted variances smaller than 0. Setting those variances to 0.",
                stacklevel=2,
            )
            var = ember.maximum(var, 0.0)
        if ys.ndim > 0:
            var = var[:, None] * (ys * ys)[None, :]
            if var.shape[1] == 1:
                var = var[:, 0]
        else:
            var = var * (ys * ys)
        return to_output(mean, kind), to_output(ember.sqrt(var), kind)

    def sample_y(self, X, n_samples=1, random_state=0):
        """Draws from the GP at X (n, n_samples) or (n, n_targets, n_samples).

        As NumPy's ``multivariate_normal(method='svd')`` with scikit-learn's RandomState: the
        standard normals are NumPy's, the SVD of the covariance and the products ember's.
        """
        rng = _np_rng(random_state)
        kind = input_kind(X)
        mean, cov = self.predict(X if is_ember(X) else ember.asarray(
            check_array(X, estimator=self, dtype=ember.float64)), return_cov=True)  # fmt: skip

        def draw(m, c):
            _, s, vh = ember.linalg.svd(c)
            z = rng.standard_normal((n_samples, m.shape[0]))  # NumPy's draws (host)
            Z = ember.asarray(z, device=c.device)
            return (Z @ (ember.sqrt(s)[:, None] * vh) + m[None, :]).T

        if mean.ndim == 1:
            out = draw(mean, cov)
        else:
            out = ember.stack([draw(mean[:, k], cov[:, :, k]) for k in range(mean.shape[1])],
                              axis=1)  # fmt: skip
        return to_output(out, kind)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        return tags
