"""RANSACRegressor (scikit-learn's ``sklearn.linear_model``).

The trials are sequential by nature: each one draws a minimal subset, fits the base estimator on
it, and counts the samples whose residual is within the threshold. The subsets are drawn on the
host with NumPy's RandomState exactly as scikit-learn's ``sample_without_replacement`` draws
them, so the trials, the consensus set and the final model equal scikit-learn's. The subset
fits, predictions, residuals and inlier masks are ember ops on X's device; each trial reads back
its inlier count and, when that count competes, the inlier score (the host control flow of the
algorithm needs both).
"""

from __future__ import annotations

import inspect
import math
import warnings
from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, RegressorMixin, clone
from ..exceptions import ConvergenceWarning
from ..model_selection._split import _np_rng
from ..utils._param_validation import HasMethods, Interval, Options, StrOptions
from ..utils.validation import (
    _host,
    check_array,
    check_is_fitted,
    check_n_features,
    check_sample_weight,
    check_X_y,
    input_kind,
    to_device,
    to_output,
)
from ._base import LinearRegression

__all__ = ["RANSACRegressor"]

_EPSILON = float(np.spacing(1))


class _RealNotInt(Interval):
    """A real number in the interval that is not an int (a fraction of the samples)."""

    def is_satisfied_by(self, val):
        return not isinstance(val, (Integral, np.integer)) and super().is_satisfied_by(val)


def _sample_without_replacement(n_population, n_samples, rs):
    """``n_samples`` distinct indices below ``n_population``, consuming ``rs`` exactly as
    scikit-learn's ``sample_without_replacement(method='auto')``."""
    ratio = n_samples / n_population if n_population != 0 else 1.0
    if 0.01 < ratio < 0.99:
        return rs.permutation(n_population)[:n_samples]
    out = np.empty(n_samples, dtype=np.int64)
    if ratio < 0.2:  # tracking selection
        seen = set()
        for i in range(n_samples):
            j = rs.randint(n_population)
            while j in seen:
                j = rs.randint(n_population)
            seen.add(j)
            out[i] = j
        return out
    out[:] = np.arange(n_samples)  # reservoir sampling
    for i in range(n_samples, n_population):
        j = rs.randint(0, i + 1)
        if j < n_samples:
            out[j] = i
    return out


def _dynamic_max_trials(n_inliers, n_samples, min_samples, probability):
    """Trials needed to draw one outlier-free subset with ``probability``."""
    ratio = n_inliers / float(n_samples)
    nom = max(_EPSILON, 1 - probability)
    denom = max(_EPSILON, 1 - ratio**min_samples)
    if nom == 1:
        return 0
    if denom == 1:
        return float("inf")
    return abs(float(math.ceil(math.log(nom) / math.log(denom))))


def _rows(A, idx):
    return ember.take(A, to_device(np.asarray(idx, dtype=np.int64), A.device), axis=0)


class RANSACRegressor(RegressorMixin, BaseEstimator):
    """Robust regression: the base estimator refitted on the largest consensus set found by
    random minimal subsets."""

    _multi_output = True
    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "score", "predict"]), None],
        "min_samples": [
            Interval(Integral, 1, None, closed="left"),
            _RealNotInt(Real, 0, 1, closed="both"),
            None,
        ],
        "residual_threshold": [Interval(Real, 0, None, closed="left"), None],
        "is_data_valid": [callable, None],
        "is_model_valid": [callable, None],
        "max_trials": [Interval(Integral, 0, None, closed="left"), Options(Real, {np.inf})],
        "max_skips": [Interval(Integral, 0, None, closed="left"), Options(Real, {np.inf})],
        "stop_n_inliers": [Interval(Integral, 0, None, closed="left"), Options(Real, {np.inf})],
        "stop_score": [Interval(Real, None, None, closed="both")],
        "stop_probability": [Interval(Real, 0, 1, closed="both")],
        "loss": [StrOptions({"absolute_error", "squared_error"}), callable],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        min_samples=None,
        residual_threshold=None,
        is_data_valid=None,
        is_model_valid=None,
        max_trials=100,
        max_skips=np.inf,
        stop_n_inliers=np.inf,
        stop_score=np.inf,
        stop_probability=0.99,
        loss="absolute_error",
        random_state=None,
    ):
        self.estimator = estimator
        self.min_samples = min_samples
        self.residual_threshold = residual_threshold
        self.is_data_valid = is_data_valid
        self.is_model_valid = is_model_valid
        self.max_trials = max_trials
        self.max_skips = max_skips
        self.stop_n_inliers = stop_n_inliers
        self.stop_score = stop_score
        self.stop_probability = stop_probability
        self.loss = loss
        self.random_state = random_state

    def _min_samples(self, estimator, n, d):
        who = type(self).__name__
        if self.min_samples is None:
            if not isinstance(estimator, LinearRegression):
                raise ValueError(
                    f"{who}: `min_samples` needs to be explicitly set when estimator is not a "
                    "LinearRegression."
                )
            m = d + 1
        elif 0 < self.min_samples < 1:
            m = int(np.ceil(self.min_samples * n))
        else:
            m = int(self.min_samples)
        if m > n:
            raise ValueError(
                f"{who}: `min_samples` may not be larger than number of samples: n_samples = {n}."
            )
        return m

    def _loss(self, ndim):
        if callable(self.loss):
            return self.loss
        if self.loss == "absolute_error":
            if ndim == 1:
                return lambda t, p: ember.abs(t - p)
            return lambda t, p: ember.abs(t - p).sum(axis=1)
        if ndim == 1:
            return lambda t, p: (t - p) ** 2
        return lambda t, p: ((t - p) ** 2).sum(axis=1)

    def _skips(self):
        return self.n_skips_no_inliers_ + self.n_skips_invalid_data_ + self.n_skips_invalid_model_

    def fit(self, X, y, sample_weight=None):
        """Find the largest consensus set and fit ``estimator_`` on it."""
        self._validate_params()
        who = type(self).__name__
        Xa, ya = check_X_y(X, y, estimator=self, multi_output=True, ensure_all_finite=False)
        ya = ya.astype(Xa.dtype)
        check_n_features(self, Xa, reset=True)
        kind = input_kind(X)
        estimator = clone(self.estimator) if self.estimator is not None else LinearRegression()
        n, d = Xa.shape
        m = self._min_samples(estimator, n, d)
        if self.residual_threshold is None:
            thr = float(ember.median(ember.abs(ya - ember.median(ya))))
        else:
            thr = float(self.residual_threshold)
        loss = self._loss(ya.ndim)
        rs = _np_rng(self.random_state)
        try:  # not every estimator takes a random_state
            estimator.set_params(random_state=rs)
        except ValueError:
            pass
        has_sw = "sample_weight" in inspect.signature(estimator.fit).parameters
        if sample_weight is not None and not has_sw:
            raise ValueError(
                f"{who}: {type(estimator).__name__} does not support sample_weight. Sample "
                "weights are only used for the calibration itself."
            )
        w = None if sample_weight is None else check_sample_weight(sample_weight, Xa)

        def data(idx):
            """Rows idx of X, y (and weights) on the device."""
            return _rows(Xa, idx), _rows(ya, idx), (None if w is None else _rows(w, idx))

        def fit_on(Xs, ys, ws):
            if ws is None:
                estimator.fit(Xs, ys)
            else:
                estimator.fit(Xs, ys, sample_weight=ws)

        def host_kind(A):
            return to_output(A, kind)

        n_best, score_best = 1, -np.inf
        mask_best = None
        self.n_skips_no_inliers_ = 0
        self.n_skips_invalid_data_ = 0
        self.n_skips_invalid_model_ = 0
        self.n_trials_ = 0
        max_trials = self.max_trials
        while self.n_trials_ < max_trials:
            self.n_trials_ += 1
            if self._skips() > self.max_skips:
                break
            sub = _sample_without_replacement(n, m, rs)
            Xs, ys, ws = data(sub)
            if self.is_data_valid is not None and not self.is_data_valid(
                host_kind(Xs), host_kind(ys)
            ):
                self.n_skips_invalid_data_ += 1
                continue
            fit_on(Xs, ys, ws)
            if self.is_model_valid is not None and not self.is_model_valid(
                estimator, host_kind(Xs), host_kind(ys)
            ):
                self.n_skips_invalid_model_ += 1
                continue
            pred = to_device(_host(estimator.predict(Xa)), Xa.device)
            mask = to_device(_host(loss(ya, pred)), Xa.device) <= thr
            n_in = int(mask.astype(ember.int64).sum())
            if n_in < n_best:
                self.n_skips_no_inliers_ += 1
                continue
            idx = ember.flatnonzero(mask)
            Xi, yi = ember.take(Xa, idx, axis=0), ember.take(ya, idx, axis=0)
            if w is None:
                score = float(estimator.score(Xi, yi))
            else:
                score = float(estimator.score(Xi, yi, sample_weight=ember.take(w, idx)))
            if n_in == n_best and score < score_best:
                continue
            n_best, score_best, mask_best = n_in, score, mask
            max_trials = min(max_trials, _dynamic_max_trials(n_best, n, m, self.stop_probability))
            if n_best >= self.stop_n_inliers or score_best >= self.stop_score:
                break
        if mask_best is None:
            if self._skips() > self.max_skips:
                raise ValueError(
                    f"{who}: RANSAC skipped more iterations than `max_skips` without finding a "
                    "valid consensus set. Iterations were skipped because each randomly chosen "
                    "sub-sample failed the passing criteria. See estimator attributes for "
                    "diagnostics (n_skips*)."
                )
            raise ValueError(
                f"{who}: RANSAC could not find a valid consensus set. All `max_trials` "
                "iterations were skipped because each randomly chosen sub-sample failed the "
                "passing criteria. See estimator attributes for diagnostics (n_skips*)."
            )
        if self._skips() > self.max_skips:
            warnings.warn(
                "RANSAC found a valid consensus set but exited early due to skipping more "
                "iterations than `max_skips`. See estimator attributes for diagnostics "
                "(n_skips*).",
                ConvergenceWarning,
                stacklevel=2,
            )
        # The final model is fitted on the inliers in the caller's kind (NumPy in, NumPy out).
        idx = ember.flatnonzero(mask_best)
        Xf, yf = host_kind(ember.take(Xa, idx, axis=0)), host_kind(ember.take(ya, idx, axis=0))
        if w is None:
            estimator.fit(Xf, yf)
        else:
            estimator.fit(Xf, yf, sample_weight=host_kind(ember.take(w, idx)))
        self.estimator_ = estimator
        self.inlier_mask_ = host_kind(mask_best)
        return self

    def predict(self, X):
        """Predictions of the estimator fitted on the consensus set."""
        check_is_fitted(self, "estimator_")
        Xa = check_array(X, estimator=self, ensure_all_finite=False)
        check_n_features(self, Xa, reset=False)
        pred = to_device(_host(self.estimator_.predict(Xa)), Xa.device)
        return to_output(pred, input_kind(X))

    def score(self, X, y):
        """Score of the estimator fitted on the consensus set."""
        check_is_fitted(self, "estimator_")
        Xa = check_array(X, estimator=self, ensure_all_finite=False)
        check_n_features(self, Xa, reset=False)
        return self.estimator_.score(Xa, to_device(_host(y), Xa.device))
