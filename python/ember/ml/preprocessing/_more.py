"""More of ``sklearn.preprocessing``: ``normalize`` / ``Normalizer`` (rows to unit norm) and
``RobustScaler`` (median and interquantile range, NaNs ignored and kept)."""

from __future__ import annotations

import statistics

import ember

from ..base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from ..utils._param_validation import StrOptions
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    to_device,
    to_output,
)
from ._data import _safe_scale

__all__ = ["Normalizer", "RobustScaler", "normalize"]


def _norms(Xa, norm, axis):
    if norm == "l1":
        return ember.abs(Xa).sum(axis=axis, keepdims=True)
    if norm == "l2":
        return ember.sqrt((Xa * Xa).sum(axis=axis, keepdims=True))
    if norm == "max":
        return ember.abs(Xa).max(axis=axis, keepdims=True)
    raise ValueError(f"'{norm}' is not a supported norm")


def normalize(X, norm="l2", *, axis=1, copy=True, return_norm=False):
    """Each sample (``axis=1``) or feature (``axis=0``) scaled to unit `norm` ('l1', 'l2',
    'max'); zero vectors stay zero."""
    if axis not in (0, 1):
        raise ValueError(f"'{axis}' is not a supported axis")
    Xa = check_array(X)
    n = _norms(Xa, norm, axis)
    out = Xa / _safe_scale(n)
    kind = input_kind(X)
    if return_norm:
        return to_output(out, kind), to_output(n.reshape(-1), kind)
    return to_output(out, kind)


class Normalizer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scales each sample to unit norm (stateless; ``fit`` only checks X)."""

    _parameter_constraints = {"norm": [StrOptions({"l1", "l2", "max"})], "copy": ["boolean"]}

    def __init__(self, norm="l2", *, copy=True):
        self.norm = norm
        self.copy = copy

    def fit(self, X, y=None):
        self._validate_params()
        check_n_features(self, check_array(X, estimator=self), reset=True)
        return self

    def transform(self, X, copy=None):
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        return to_output(Xa / _safe_scale(_norms(Xa, self.norm, 1)), input_kind(X))


class RobustScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Removes the median and scales by the interquantile range (``quantile_range`` in
    percent); NaNs are ignored in the statistics and kept."""

    _allow_nan = True

    _parameter_constraints = {
        "with_centering": ["boolean"],
        "with_scaling": ["boolean"],
        "quantile_range": [tuple],
        "copy": ["boolean"],
        "unit_variance": ["boolean"],
    }

    def __init__(
        self,
        *,
        with_centering=True,
        with_scaling=True,
        quantile_range=(25.0, 75.0),
        copy=True,
        unit_variance=False,
    ):
        self.with_centering = with_centering
        self.with_scaling = with_scaling
        self.quantile_range = quantile_range
        self.copy = copy
        self.unit_variance = unit_variance

    def fit(self, X, y=None):
        self._validate_params()
        lo, hi = self.quantile_range
        if not 0 <= lo <= hi <= 100:
            raise ValueError(f"Invalid quantile range: {self.quantile_range}")
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=True)
        kind = input_kind(X)
        self.center_ = to_output(ember.nanmedian(Xa, axis=0), kind) if self.with_centering else None
        if self.with_scaling:
            q = ember.nanpercentile(Xa, [lo, hi], axis=0)
            scale = _safe_scale(q[1] - q[0])
            if self.unit_variance:  # the standard normal's interquantile range
                nd = statistics.NormalDist()
                scale = scale / (nd.inv_cdf(hi / 100.0) - nd.inv_cdf(lo / 100.0))
            self.scale_ = to_output(scale, kind)
        else:
            self.scale_ = None
        return self

    def transform(self, X):
        check_is_fitted(self, "center_" if self.with_centering else "scale_")
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=False)
        if self.with_centering:
            Xa = Xa - to_device(self.center_, Xa.device).astype(Xa.dtype)
        if self.with_scaling:
            Xa = Xa / to_device(self.scale_, Xa.device).astype(Xa.dtype)
        return to_output(Xa, input_kind(X))

    def inverse_transform(self, X):
        check_is_fitted(self, "center_" if self.with_centering else "scale_")
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=False)
        if self.with_scaling:
            Xa = Xa * to_device(self.scale_, Xa.device).astype(Xa.dtype)
        if self.with_centering:
            Xa = Xa + to_device(self.center_, Xa.device).astype(Xa.dtype)
        return to_output(Xa, input_kind(X))
