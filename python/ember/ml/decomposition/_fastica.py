"""FastICA (scikit-learn's ``sklearn.decomposition.FastICA``) over ember ops.

Whitening is a thin SVD (or the eigendecomposition of ``Xc^T Xc``) on X's device; the
fixed-point iterations (symmetric 'parallel' or one-unit 'deflation' with Gram-Schmidt) are
matmuls and elementwise nonlinearities on the same device. One scalar (the convergence
measure) is read back per iteration. The default ``w_init`` draws from NumPy's RandomState
seeded as scikit-learn's, so the same ``random_state`` gives the same start.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from ..exceptions import ConvergenceWarning, sklearn_compatible
from ..utils._param_validation import Interval, Options, StrOptions
from ..utils.validation import (
    _host,
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["FastICA"]


def _logcosh(x, fun_args):
    alpha = fun_args.get("alpha", 1.0)
    gx = ember.tanh(alpha * x)
    return gx, (alpha * (1.0 - gx * gx)).mean(axis=-1)


def _exp(x, fun_args):
    e = ember.exp(-(x * x) / 2.0)
    return x * e, ((1.0 - x * x) * e).mean(axis=-1)


def _cube(x, fun_args):
    return x * x * x, (3.0 * x * x).mean(axis=-1)


_FUNS = {"logcosh": _logcosh, "exp": _exp, "cube": _cube}


def _sym_decorrelation(W):
    """(W W^T)^-1/2 W."""
    s, u = ember.linalg.eigh(W @ W.T)
    tiny = float(np.finfo(np.float32 if W.dtype == ember.float32 else np.float64).tiny)
    s = ember.maximum(s, tiny)
    return (u * (1.0 / ember.sqrt(s))[None, :]) @ (u.T @ W)


def _warn_not_converged():
    warnings.warn(
        "FastICA did not converge. Consider increasing tolerance or the maximum number of "
        "iterations.",
        sklearn_compatible(ConvergenceWarning),
        stacklevel=3,
    )


def _ica_par(X, tol, g, fun_args, max_iter, w_init):
    W = _sym_decorrelation(w_init)
    p = float(X.shape[1])
    n_iter = 0
    for _ in range(max_iter):
        n_iter += 1
        gwtx, g_wtx = g(W @ X, fun_args)
        W1 = _sym_decorrelation((gwtx @ X.T) / p - g_wtx[:, None] * W)
        lim = float(ember.abs(ember.abs((W1 * W).sum(axis=1)) - 1.0).max())
        W = W1
        if lim < tol:
            break
    else:
        _warn_not_converged()
    return W, n_iter


def _ica_def(X, tol, g, fun_args, max_iter, w_init):
    k = w_init.shape[0]
    W = ember.zeros((k, k), dtype=X.dtype, device=X.device)
    n_iter = []
    for j in range(k):
        w = w_init[j].copy()
        w = w / ember.sqrt((w * w).sum())
        done = 0
        for _ in range(max_iter):
            done += 1
            gwtx, g_wtx = g((w @ X)[None, :], fun_args)
            w1 = (X * gwtx).mean(axis=1) - g_wtx[0] * w
            if j:
                w1 = w1 - (w1 @ W[:j].T) @ W[:j]
            w1 = w1 / ember.sqrt((w1 * w1).sum())
            lim = float(ember.abs(ember.abs((w1 * w).sum()) - 1.0))
            w = w1
            if lim < tol:
                break
        else:
            _warn_not_converged()
        n_iter.append(done)
        W[j] = w
    return W, max(n_iter)


class FastICA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Independent component analysis by the FastICA fixed-point algorithm."""

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "algorithm": [StrOptions({"parallel", "deflation"})],
        "whiten": [StrOptions({"arbitrary-variance", "unit-variance"}), Options(bool, {False})],
        "fun": [StrOptions({"logcosh", "exp", "cube"}), callable],
        "fun_args": [dict, None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "w_init": ["array-like", None],
        "whiten_solver": [StrOptions({"eigh", "svd"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components=None,
        *,
        algorithm="parallel",
        whiten="unit-variance",
        fun="logcosh",
        fun_args=None,
        max_iter=200,
        tol=1e-4,
        w_init=None,
        whiten_solver="svd",
        random_state=None,
    ):
        self.n_components = n_components
        self.algorithm = algorithm
        self.whiten = whiten
        self.fun = fun
        self.fun_args = fun_args
        self.max_iter = max_iter
        self.tol = tol
        self.w_init = w_init
        self.whiten_solver = whiten_solver
        self.random_state = random_state

    def _w_init(self, k, dev, dt):
        if self.w_init is not None:
            w = to_device(_host(self.w_init), dev).astype(dt)
            if tuple(w.shape) != (k, k):
                raise ValueError(
                    f"FastICA: w_init has invalid shape {tuple(w.shape)} -- should be {(k, k)}"
                )
            return w
        rs = self.random_state
        if isinstance(rs, ember.random.Generator):
            return rs.standard_normal((k, k), device=dev).astype(dt)
        if rs is None or isinstance(rs, (Integral, np.integer)):
            rs = np.random.RandomState(rs) if rs is not None else np.random.mtrand._rand
        # A k x k start drawn as scikit-learn draws it (NumPy's RandomState), then moved.
        return to_device(rs.normal(size=(k, k)), dev).astype(dt)

    def _fit_transform(self, X, compute_sources):
        self._validate_params()
        Xa = check_array(X, estimator=self, ensure_min_samples=2)
        check_n_features(self, Xa, reset=True)
        fun_args = {} if self.fun_args is None else self.fun_args
        alpha = fun_args.get("alpha", 1.0)
        if not 1 <= alpha <= 2:
            raise ValueError(f"FastICA: fun_args['alpha'] must be in [1,2], got {alpha!r}")
        if callable(self.fun):

            def g(x, fa):
                return self.fun(x, **fa)

        else:
            g = _FUNS[self.fun]
        n, d = Xa.shape
        dev, dt = Xa.device, Xa.dtype
        k = self.n_components
        if not self.whiten and k is not None:
            k = None
            warnings.warn("Ignoring n_components with whiten=False.", stacklevel=3)
        if k is None:
            k = min(n, d)
        if k > min(n, d):
            k = min(n, d)
            warnings.warn(f"n_components is too large: it will be set to {k}", stacklevel=3)
        XT = Xa.T
        K = mean = None
        if self.whiten:
            mean = Xa.mean(axis=0)
            XT = (Xa - mean).T
            if self.whiten_solver == "eigh":
                ev, u = ember.linalg.eigh(XT @ XT.T)
                eps = float(np.finfo(np.float32 if dt == ember.float32 else np.float64).eps) * 10
                if bool((ev < eps).any()):
                    warnings.warn(
                        "There are some small singular values, using whiten_solver = 'svd' "
                        "might lead to more accurate results.",
                        stacklevel=3,
                    )
                ev = ember.sqrt(ember.where(ev < eps, eps, ev))
                s, u = ember.flip(ev, axis=0), ember.flip(u, axis=1)
            else:
                u, s, _ = ember.linalg.svd(XT, full_matrices=False)
            sg = ember.sign(u[0])
            u = u * sg[None, :]
            K = (u / s[None, :]).T[:k]
            X1 = (K @ XT) * float(np.sqrt(n))
        else:
            X1 = XT
        w_init = self._w_init(k, dev, X1.dtype)
        solver = _ica_par if self.algorithm == "parallel" else _ica_def
        W, n_iter = solver(
            X1, tol=self.tol, g=g, fun_args=fun_args, max_iter=self.max_iter, w_init=w_init
        )
        self.n_iter_ = n_iter
        S = None
        if compute_sources or self.whiten == "unit-variance":
            S = ((W @ K) @ XT).T if self.whiten else (W @ XT).T
        kind = input_kind(X)
        if self.whiten:
            if self.whiten == "unit-variance":
                S_std = S.std(axis=0)
                S = S / S_std[None, :]
                W = W / S_std[:, None]
            comps = W @ K
            self.mean_ = to_output(mean, kind)
            self.whitening_ = to_output(K, kind)
        else:
            comps = W
        self.components_ = to_output(comps, kind)
        self.mixing_ = to_output(ember.linalg.pinv(comps), kind)
        self._unmixing = to_output(W, kind)
        self._n_features_out = comps.shape[0]
        return to_output(S, kind) if compute_sources else None

    def fit(self, X, y=None):
        """Fit the model; sets ``components_``, ``mixing_``, ``mean_``, ``whitening_``,
        ``n_iter_``."""
        self._fit_transform(X, compute_sources=False)
        return self

    def fit_transform(self, X, y=None):
        """Fit and return the estimated sources."""
        return self._fit_transform(X, compute_sources=True)

    def transform(self, X, copy=True):
        """Recover the sources from X (apply the unmixing matrix)."""
        check_is_fitted(self, "components_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        C = to_device(self.components_, Xa.device)
        Xa = Xa.astype(C.dtype)
        if self.whiten:
            Xa = Xa - to_device(self.mean_, Xa.device)
        return to_output(Xa @ C.T, input_kind(X))

    def inverse_transform(self, X, copy=True):
        """Transform the sources back to the mixed data (apply the mixing matrix)."""
        check_is_fitted(self, "mixing_")
        Sa = check_array(X, estimator=self)
        A = to_device(self.mixing_, Sa.device)
        if Sa.shape[1] != A.shape[1]:
            raise ValueError(
                f"X has {Sa.shape[1]} features, but FastICA.inverse_transform is expecting "
                f"{A.shape[1]} features as input."
            )
        out = Sa.astype(A.dtype) @ A.T
        if self.whiten:
            out = out + to_device(self.mean_, Sa.device)
        return to_output(out, input_kind(X))
