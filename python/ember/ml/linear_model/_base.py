"""Shared pieces of the linear models and ``LinearRegression`` (least squares by ``lstsq``)."""

from __future__ import annotations

import ember

from ..base import BaseEstimator, RegressorMixin
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    check_sample_weight,
    check_X_y,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["LinearModel", "LinearRegression"]


def preprocess_data(X, y, fit_intercept, sample_weight):
    """Centre X and y by their (weighted) means when fitting an intercept, then scale rows by
    sqrt(weight) (skipped without weights); returns (Xs, ys, X_offset, y_offset)."""
    d = X.shape[1]
    if fit_intercept:
        if sample_weight is None:
            X_off = X.mean(axis=0)
            y_off = y.mean(axis=0)
        else:
            wsum = sample_weight.sum()
            X_off = (X * sample_weight[:, None]).sum(axis=0) / wsum
            ww = sample_weight if y.ndim == 1 else sample_weight[:, None]
            y_off = (y * ww).sum(axis=0) / wsum
        Xc = X - X_off
        yc = y - y_off
    else:
        X_off = ember.zeros((d,), dtype=X.dtype, device=X.device)
        y_off = ember.zeros(y.shape[1:], dtype=X.dtype, device=X.device)
        Xc, yc = X, y
    if sample_weight is not None:
        sq = ember.sqrt(sample_weight)
        Xc = Xc * sq[:, None]
        yc = yc * (sq if y.ndim == 1 else sq[:, None])
    return Xc, yc, X_off, y_off


class LinearModel(BaseEstimator):
    """``predict`` = X @ coef_.T + intercept_ for the fitted linear models."""

    _multi_output = True

    def _decision_function(self, X):
        check_is_fitted(self, "coef_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        coef = to_device(self.coef_, Xa.device)
        if Xa.dtype != coef.dtype:
            Xa = Xa.astype(coef.dtype)
        b = self.intercept_
        b = to_device(b, Xa.device) if hasattr(b, "shape") else b
        if coef.ndim == 1:
            return Xa @ coef + b
        return Xa @ coef.T + b

    def predict(self, X):
        """Predicted targets for X."""
        return to_output(self._decision_function(X), input_kind(X))

    def _set_intercept(self, coef, X_off, y_off, kind):
        """coef (t, d) or (d,) on the device -> ``coef_`` and ``intercept_``."""
        if self.fit_intercept:
            inter = y_off - (coef @ X_off if coef.ndim == 1 else coef @ X_off)
        else:
            inter = None
        self.coef_ = to_output(coef, kind)
        if inter is None:
            self.intercept_ = (
                0.0
                if coef.ndim == 1
                else to_output(
                    ember.zeros((coef.shape[0],), dtype=coef.dtype, device=coef.device), kind
                )
            )
        elif inter.ndim == 0:
            self.intercept_ = float(inter)
        else:
            self.intercept_ = to_output(inter, kind)


def fit_xy(est, X, y, sample_weight, *, y_numeric=True, multi_output=True):
    """Validate for a regressor: float X, numeric y (1-D, or 2-D when ``multi_output``; a
    column vector then warns) in X's dtype, weights."""
    Xa, ya = check_X_y(X, y, estimator=est, y_numeric=y_numeric, multi_output=multi_output)
    ya = ya.astype(Xa.dtype)
    check_n_features(est, Xa, reset=True)
    w = None if sample_weight is None else check_sample_weight(sample_weight, Xa)
    return Xa, ya, w


class LinearRegression(RegressorMixin, LinearModel):
    """Ordinary least squares (``ember.linalg.lstsq`` on centred data)."""

    _parameter_constraints = {
        "fit_intercept": ["boolean"],
        "copy_X": ["boolean"],
        "tol": [float, int],
        "n_jobs": [None, int],
        "positive": ["boolean"],
    }

    def __init__(self, *, fit_intercept=True, copy_X=True, tol=1e-6, n_jobs=None, positive=False):
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.tol = tol
        self.n_jobs = n_jobs
        self.positive = positive

    def fit(self, X, y, sample_weight=None):
        """Least-squares fit; sets ``coef_``, ``intercept_``, ``rank_``, ``singular_``."""
        self._validate_params()
        Xa, ya, w = fit_xy(self, X, y, sample_weight)
        Xc, yc, X_off, y_off = preprocess_data(Xa, ya, self.fit_intercept, w)
        kind = input_kind(X)
        if self.positive:
            from ._coordinate_descent import enet_path_gram

            coef = enet_path_gram(Xc, yc, 0.0, 0.0, positive=True, max_iter=10000, tol=1e-10)[0]
        else:
            coef, _, rank, sv = ember.linalg.lstsq(Xc, yc, rcond=None)
            coef = coef.T
            self.rank_ = int(rank)
            self.singular_ = to_output(sv, kind)
        self._set_intercept(coef, X_off, y_off, kind)
        return self
