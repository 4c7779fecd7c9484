"""``PLSRegression`` (scikit-learn's PLS2 with NIPALS, mode A, regression deflation).

Centring/scaling, the power iterations for the first singular vectors of ``X_k' y_k``, the
sign flip, the rank-one deflations and the rotations (``W (P' W)^+``) are ember ops on X's
device. Per power iteration one scalar (the squared change of the x weights) comes to the host
for scikit-learn's stopping rule ``|w - w_old|^2 < tol`` (a single target stops after one
iteration, as scikit-learn); per component the q flags "this y column is not constant" come to
the host for scikit-learn's "y residual is constant" early stop.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, RegressorMixin, TransformerMixin
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["PLSRegression"]

_EPS = float(np.finfo(np.float64).eps)


def _host(*vals):
    """A few device scalars to the host in one explicit transfer."""
    return ember.asnumpy(ember.stack([v.reshape(()) for v in vals])).tolist()


def _power_method(X, Y, max_iter, tol):
    """First left/right singular vectors of X'Y by scikit-learn's NIPALS iteration (mode A)."""
    # the first y column not numerically zero starts the iteration
    nonzero = np.asarray(ember.asnumpy(ember.any(ember.abs(Y) > _EPS, axis=0)))
    if not nonzero.any():
        raise StopIteration("y residual is constant")
    y_score = Y[:, int(np.argmax(nonzero))]
    q = Y.shape[1]
    w_old = 100.0  # scikit-learn's start for the first convergence check
    n_iter = 0
    for i in range(max_iter):
        w = (X.T @ y_score) / (y_score @ y_score)
        w = w / (ember.sqrt(w @ w) + _EPS)
        x_score = X @ w
        c = (Y.T @ x_score) / (x_score @ x_score)
        y_score = (Y @ c) / (c @ c + _EPS)
        n_iter = i + 1
        if q == 1:
            break
        d = w - w_old
        if _host(d @ d)[0] < tol:
            break
        w_old = w
    if n_iter == max_iter:
        warnings.warn("Maximum number of iterations reached", ConvergenceWarning, stacklevel=3)
    return w, c, n_iter


class PLSRegression(ClassNamePrefixFeaturesOutMixin, TransformerMixin, RegressorMixin,
                    BaseEstimator):  # fmt: skip
    """Partial least squares regression (PLS2), scikit-learn's NIPALS algorithm."""

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "scale": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "copy": ["boolean"],
    }
    _multi_output = True

    def __init__(self, n_components=2, *, scale=True, max_iter=500, tol=1e-06, copy=True):
        self.n_components = n_components
        self.scale = scale
        self.max_iter = max_iter
        self.tol = tol
        self.copy = copy

    def fit(self, X, y):
        """Fit the PLS components; sets weights, loadings, scores, rotations, ``coef_``."""
        self._validate_params()
        kind = input_kind(X)
        Xa = check_array(X, estimator=self, dtype=ember.float64, ensure_min_samples=2)
        dev = Xa.device
        ya = check_array(y, ensure_2d=False, dtype=ember.float64, input_name="y", device=dev)
        if ya.shape[0] != Xa.shape[0]:
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"[{Xa.shape[0]}, {ya.shape[0]}]"
            )
        check_n_features(self, Xa, reset=True)
        self._predict_1d = ya.ndim == 1
        Y = ya[:, None] if ya.ndim == 1 else ya
        n, p = Xa.shape
        q = Y.shape[1]
        k_max = self.n_components
        if k_max > min(n, p):
            raise ValueError(
                f"`n_components` upper bound is {min(n, p)}. Got {k_max} instead. Reduce "
                "`n_components`."
            )
        x_mean, y_mean = ember.mean(Xa, axis=0), ember.mean(Y, axis=0)
        Xk, Yk = Xa - x_mean, Y - y_mean
        if self.scale:
            x_std = ember.std(Xk, axis=0, ddof=1)
            x_std = ember.where(x_std == 0.0, 1.0, x_std)
            y_std = ember.std(Yk, axis=0, ddof=1)
            y_std = ember.where(y_std == 0.0, 1.0, y_std)
            Xk, Yk = Xk / x_std, Yk / y_std
        else:
            x_std = ember.ones((p,), dtype=ember.float64, device=dev)
            y_std = ember.ones((q,), dtype=ember.float64, device=dev)
        zeros = lambda r: ember.zeros((r,), dtype=ember.float64, device=dev)  # noqa: E731
        cols = {name: [] for name in ("xw", "yw", "xs", "ys", "xl", "yl")}
        self.n_iter_ = []
        for k in range(k_max):
            Yk = ember.where(ember.all(ember.abs(Yk) < 10 * _EPS, axis=0)[None, :], 0.0, Yk)
            try:
                w, c, it = _power_method(Xk, Yk, self.max_iter, self.tol)
            except StopIteration:
                warnings.warn(f"y residual is constant at iteration {k}", stacklevel=2)
                for name, r in (("xw", p), ("yw", q), ("xs", n), ("ys", n), ("xl", p), ("yl", q)):
                    cols[name] += [zeros(r)] * (k_max - k)
                break
            self.n_iter_.append(it)
            # scikit-learn's sign convention: the largest |x weight| is positive
            s = ember.sign(w[ember.argmax(ember.abs(w))])
            w, c = w * s, c * s
            t = Xk @ w
            u = (Yk @ c) / (c @ c)
            tt = t @ t
            pl = (t @ Xk) / tt
            Xk = Xk - t[:, None] * pl[None, :]
            ql = (t @ Yk) / tt
            Yk = Yk - t[:, None] * ql[None, :]
            for name, v in (("xw", w), ("yw", c), ("xs", t), ("ys", u), ("xl", pl), ("yl", ql)):
                cols[name].append(v)
        names = ("xw", "yw", "xs", "ys", "xl", "yl")
        W, Cw, T, U, P, Ql = (ember.stack(cols[m], axis=1) for m in names)
        x_rot = W @ ember.linalg.pinv(P.T @ W)
        y_rot = Cw @ ember.linalg.pinv(Ql.T @ Cw)
        coef = ((x_rot @ Ql.T) * y_std[None, :]).T / x_std[None, :]
        self._x_mean, self._y_mean, self._x_std, self._y_std = x_mean, y_mean, x_std, y_std
        self._P, self._Ql, self._xrot, self._yrot, self._coef = P, Ql, x_rot, y_rot, coef
        out = lambda a: to_output(a, kind)  # noqa: E731
        self.x_weights_, self.y_weights_ = out(W), out(Cw)
        self.x_loadings_, self.y_loadings_ = out(P), out(Ql)
        self.x_scores_, self.y_scores_ = out(T), out(U)
        self._x_scores, self._y_scores = self.x_scores_, self.y_scores_
        self.x_rotations_, self.y_rotations_ = out(x_rot), out(y_rot)
        self.coef_ = out(coef)
        self.intercept_ = out(y_mean)
        self._n_features_out = k_max
        return self

    def transform(self, X, y=None, copy=True):
        """X scores (and y scores when ``y`` is given)."""
        check_is_fitted(self, "x_rotations_")
        kind = input_kind(X)
        Xa = check_array(X, estimator=self, dtype=ember.float64)
        check_n_features(self, Xa, reset=False)
        dev = Xa.device
        xs = ((Xa - to_device(self._x_mean, dev)) / to_device(self._x_std, dev)) @ to_device(
            self._xrot, dev
        )
        if y is None:
            return to_output(xs, kind)
        ya = check_array(y, ensure_2d=False, dtype=ember.float64, input_name="y", device=dev)
        Y = ya[:, None] if ya.ndim == 1 else ya
        ys = ((Y - to_device(self._y_mean, dev)) / to_device(self._y_std, dev)) @ to_device(
            self._yrot, dev
        )
        return to_output(xs, kind), to_output(ys, kind)

    def inverse_transform(self, X, y=None):
        """Back from the component space: ``X P' * std + mean`` (and the same for y)."""
        check_is_fitted(self, "x_rotations_")
        kind = input_kind(X)
        Xa = check_array(X, dtype=ember.float64, input_name="X")
        dev = Xa.device
        Xr = (Xa @ to_device(self._P, dev).T) * to_device(self._x_std, dev) + to_device(
            self._x_mean, dev
        )
        if y is None:
            return to_output(Xr, kind)
        ya = check_array(y, dtype=ember.float64, input_name="y", device=dev)
        Yr = (ya @ to_device(self._Ql, dev).T) * to_device(self._y_std, dev) + to_device(
            self._y_mean, dev
        )
        return to_output(Xr, kind), to_output(Yr, kind)

    def predict(self, X, copy=True):
        """``(X - x_mean) coef_' + intercept_``; 1-d when fitted on a 1-d y."""
        check_is_fitted(self, "x_rotations_")
        kind = input_kind(X)
        Xa = check_array(X, estimator=self, dtype=ember.float64)
        check_n_features(self, Xa, reset=False)
        dev = Xa.device
        pred = (Xa - to_device(self._x_mean, dev)) @ to_device(self._coef, dev).T + to_device(
            self._y_mean, dev
        )
        if self._predict_1d:
            pred = pred.reshape((-1,))
        return to_output(pred, kind)

    def fit_transform(self, X, y=None):
        """``fit(X, y).transform(X, y)``."""
        return self.fit(X, y).transform(X, y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        tags.target_tags.required = False
        return tags
