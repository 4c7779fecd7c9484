"""Scalers and polynomial features (scikit-learn's ``sklearn.preprocessing``)."""

from __future__ import annotations

import itertools
from numbers import Integral

import numpy as np

import ember

from ..base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    check_sample_weight,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["MinMaxScaler", "PolynomialFeatures", "StandardScaler", "minmax_scale", "scale"]


def _safe_scale(s):
    """Zero (or tiny) scales become 1, as scikit-learn's ``_handle_zeros_in_scale``."""
    eps = 10 * float(ember.finfo(s.dtype).eps)
    return ember.where(s < eps, 1.0, s)


class StandardScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Remove the mean and scale to unit variance (NaNs are ignored and kept)."""

    _allow_nan = True

    _parameter_constraints = {
        "copy": ["boolean", None],
        "with_mean": ["boolean"],
        "with_std": ["boolean"],
    }

    def __init__(self, *, copy=True, with_mean=True, with_std=True):
        self.copy = copy
        self.with_mean = with_mean
        self.with_std = with_std

    def _reset(self):
        for a in ("n_samples_seen_", "mean_", "var_", "scale_"):
            self.__dict__.pop(a, None)

    def fit(self, X, y=None, sample_weight=None):
        """Compute the mean and standard deviation of each feature."""
        self._reset()
        return self.partial_fit(X, y, sample_weight)

    def partial_fit(self, X, y=None, sample_weight=None):
        """Update the running mean and variance with a batch (Chan et al.'s pairwise rule)."""
        first = not hasattr(self, "n_samples_seen_")
        if first:
            self._validate_params()
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=first)
        kind = input_kind(X)
        valid = ~ember.isnan(Xa)
        w = valid.astype(Xa.dtype)
        if sample_weight is not None:
            w = w * check_sample_weight(sample_weight, Xa, estimator=self)[:, None]
        X0 = ember.where(valid, Xa, 0.0)
        n_b = w.sum(axis=0)
        safe_n = ember.where(n_b == 0, 1.0, n_b)
        mean_b = (X0 * w).sum(axis=0) / safe_n
        var_b = (w * (X0 - mean_b) ** 2).sum(axis=0) / safe_n
        if first:
            n_tot, mean, var = n_b, mean_b, var_b
        else:
            n_old = to_device(
                ember.asarray(np.asarray(self.n_samples_seen_, dtype=np.float64))
                if kind == "numpy"
                else self.n_samples_seen_,
                Xa.device,
            )
            n_old = n_old.astype(Xa.dtype)
            mean_old = to_device(self.mean_, Xa.device)
            var_old = to_device(self.var_, Xa.device)
            n_tot = n_old + n_b
            safe = ember.where(n_tot == 0, 1.0, n_tot)
            delta = mean_b - mean_old
            mean = mean_old + delta * n_b / safe
            var = (var_old * n_old + var_b * n_b + delta * delta * n_old * n_b / safe) / safe
        counts = n_tot
        if sample_weight is None:
            c = counts.astype(ember.int64)
            nseen = int(c[0]) if bool((c == c[0]).all()) else to_output(counts, kind)
        else:
            nseen = to_output(counts, kind)
        self.n_samples_seen_ = nseen
        self.mean_ = to_output(mean, kind) if self.with_mean or self.with_std else None
        if self.with_std:
            self.var_ = to_output(var, kind)
            self.scale_ = to_output(_safe_scale(ember.sqrt(var)), kind)
        else:
            self.var_ = None
            self.scale_ = None
        if not self.with_mean and not self.with_std:
            self.mean_ = None
        return self

    def transform(self, X, copy=None):
        """Standardise X with the fitted statistics."""
        check_is_fitted(self, "n_samples_seen_")
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=False)
        if self.with_mean:
            Xa = Xa - to_device(self.mean_, Xa.device).astype(Xa.dtype)
        if self.with_std:
            Xa = Xa / to_device(self.scale_, Xa.device).astype(Xa.dtype)
        return to_output(Xa, input_kind(X))

    def inverse_transform(self, X, copy=None):
        """Undo ``transform``."""
        check_is_fitted(self, "n_samples_seen_")
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=False)
        if self.with_std:
            Xa = Xa * to_device(self.scale_, Xa.device).astype(Xa.dtype)
        if self.with_mean:
            Xa = Xa + to_device(self.mean_, Xa.device).astype(Xa.dtype)
        return to_output(Xa, input_kind(X))


class MinMaxScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scale each feature to ``feature_range`` (NaNs are ignored and kept)."""

    _allow_nan = True

    _parameter_constraints = {
        "feature_range": [tuple],
        "copy": ["boolean"],
        "clip": ["boolean"],
    }

    def __init__(self, feature_range=(0, 1), *, copy=True, clip=False):
        self.feature_range = feature_range
        self.copy = copy
        self.clip = clip

    def fit(self, X, y=None):
        """Compute each feature's minimum and maximum."""
        for a in ("n_samples_seen_", "data_min_", "data_max_"):
            self.__dict__.pop(a, None)
        return self.partial_fit(X, y)

    def partial_fit(self, X, y=None):
        """Update the running minimum and maximum with a batch."""
        first = not hasattr(self, "n_samples_seen_")
        if first:
            self._validate_params()
        lo, hi = self.feature_range
        if lo >= hi:
            raise ValueError(
                "Minimum of desired feature range must be smaller than maximum. Got "
                f"{self.feature_range!r}."
            )
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=first)
        kind = input_kind(X)
        nan = ember.isnan(Xa)
        dmin = ember.where(nan, float("inf"), Xa).min(axis=0)
        dmax = ember.where(nan, -float("inf"), Xa).max(axis=0)
        if not first:
            dmin = ember.minimum(to_device(self.data_min_, Xa.device), dmin)
            dmax = ember.maximum(to_device(self.data_max_, Xa.device), dmax)
            self.n_samples_seen_ += Xa.shape[0]
        else:
            self.n_samples_seen_ = Xa.shape[0]
        rng = dmax - dmin
        scale = (hi - lo) / _safe_scale(rng)
        self.data_min_ = to_output(dmin, kind)
        self.data_max_ = to_output(dmax, kind)
        self.data_range_ = to_output(rng, kind)
        self.scale_ = to_output(scale, kind)
        self.min_ = to_output(lo - dmin * scale, kind)
        return self

    def transform(self, X):
        """Scale X to ``feature_range``."""
        check_is_fitted(self, "scale_")
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=False)
        out = Xa * to_device(self.scale_, Xa.device) + to_device(self.min_, Xa.device)
        if self.clip:
            out = ember.clip(out, self.feature_range[0], self.feature_range[1])
        return to_output(out, input_kind(X))

    def inverse_transform(self, X):
        """Undo ``transform``."""
        check_is_fitted(self, "scale_")
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=False)
        out = (Xa - to_device(self.min_, Xa.device)) / to_device(self.scale_, Xa.device)
        return to_output(out, input_kind(X))


def scale(X, *, axis=0, with_mean=True, with_std=True, copy=True):
    """Standardise X along an axis (functional StandardScaler)."""
    if axis == 1:
        Xa = check_array(X, estimator="scale")
        out = StandardScaler(with_mean=with_mean, with_std=with_std).fit_transform(Xa.T).T
        return to_output(out, input_kind(X))
    return StandardScaler(with_mean=with_mean, with_std=with_std).fit_transform(X)


def minmax_scale(X, feature_range=(0, 1), *, axis=0, copy=True):
    """Scale each feature to a range (functional MinMaxScaler)."""
    if axis == 1:
        Xa = check_array(X, estimator="minmax_scale")
        out = MinMaxScaler(feature_range=feature_range).fit_transform(Xa.T).T
        return to_output(out, input_kind(X))
    return MinMaxScaler(feature_range=feature_range).fit_transform(X)


class PolynomialFeatures(TransformerMixin, BaseEstimator):
    """All products of features up to ``degree`` (scikit-learn's column order)."""

    _parameter_constraints = {
        "degree": [Interval(Integral, 0, None, closed="left"), tuple],
        "interaction_only": ["boolean"],
        "include_bias": ["boolean"],
        "order": [StrOptions({"C", "F"})],
    }

    def __init__(self, degree=2, *, interaction_only=False, include_bias=True, order="C"):
        self.degree = degree
        self.interaction_only = interaction_only
        self.include_bias = include_bias
        self.order = order

    def _combos(self, d):
        if isinstance(self.degree, tuple):
            if len(self.degree) != 2:
                raise ValueError(
                    f"degree=(min_degree, max_degree) must be a pair, got {self.degree!r}"
                )
            lo, hi = self.degree
            if not (isinstance(lo, Integral) and isinstance(hi, Integral) and 0 <= lo <= hi):
                raise ValueError(
                    "degree=(min_degree, max_degree) must be non-negative integers that fulfil "
                    f"min_degree <= max_degree, got {self.degree}."
                )
        else:
            lo, hi = 0, self.degree
        comb = (
            itertools.combinations
            if self.interaction_only
            else (itertools.combinations_with_replacement)
        )
        start = max(1, lo)
        out = []
        if self.include_bias:
            out.append(())
        for deg in range(start, hi + 1):
            out.extend(comb(range(d), deg))
        return out

    def fit(self, X, y=None):
        """Compute the output feature combinations."""
        self._validate_params()
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=True)
        d = Xa.shape[1]
        combos = self._combos(d)
        powers = np.zeros((len(combos), d), dtype=np.int64)
        for i, c in enumerate(combos):
            for j in c:
                powers[i, j] += 1
        self._combos_ = combos
        self.powers_ = powers
        self.n_output_features_ = len(combos)
        if self.n_output_features_ == 0:
            raise ValueError(
                "Setting degree to zero and include_bias to False would result in an empty "
                "output array."
            )
        return self

    def transform(self, X):
        """Columns: products of the input columns for each combination."""
        check_is_fitted(self, "powers_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        n = Xa.shape[0]
        cols = []
        cache = {}
        for c in self._combos_:
            if not c:
                cols.append(ember.ones((n,), dtype=Xa.dtype, device=Xa.device))
                continue
            prev = cache.get(c[:-1])
            if prev is None:
                prev = ember.ones((n,), dtype=Xa.dtype, device=Xa.device)
                for j in c[:-1]:
                    prev = prev * Xa[:, j]
            col = prev * Xa[:, c[-1]]
            cache[c] = col
            cols.append(col)
        return to_output(ember.stack(cols, axis=1), input_kind(X))

    def get_feature_names_out(self, input_features=None):
        """Names like 'x0', 'x0 x1', 'x1^2'."""
        check_is_fitted(self, "powers_")
        if input_features is None:
            input_features = [f"x{i}" for i in range(self.n_features_in_)]
        names = []
        for row in self.powers_:
            nz = np.nonzero(row)[0]
            if nz.size == 0:
                names.append("1")
                continue
            parts = [
                input_features[j] if row[j] == 1 else f"{input_features[j]}^{row[j]}" for j in nz
            ]
            names.append(" ".join(parts))
        return np.asarray(names, dtype=object)
