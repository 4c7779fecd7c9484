"""``ember.ml.impute.KNNImputer`` (scikit-learn's): every missing entry becomes the (optionally
distance-weighted) mean of that feature over the ``n_neighbors`` nearest training rows that
observe it, under the ``nan_euclidean`` metric
``sqrt(n_features / n_present * sum over coordinates present in both of (x - y)^2)``.

All on X's device: the distance matrix is three matmuls (as scikit-learn's formula), each
feature's donors are ranked with ``ember.argsort`` over a key that pushes non-donors last and
gathered with ``take_along_axis``. The per-feature loop and the masks of which features have
missing values (one boolean per feature) are host bookkeeping."""

from __future__ import annotations

import numbers

import numpy as np

import ember

from .base import BaseEstimator, TransformerMixin
from .utils._mask import missing_mask
from .utils._param_validation import Interval, StrOptions
from .utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["KNNImputer"]


def _nan_euclidean(X, Y, mx, my):
    """scikit-learn's nan_euclidean distances (NaN where two rows share no observed feature)."""
    Xz = ember.where(mx, 0.0, X)
    Yz = ember.where(my, 0.0, Y)
    XX, YY = Xz * Xz, Yz * Yz
    px, py = (~mx).astype(X.dtype), (~my).astype(X.dtype)
    D = XX.sum(axis=1)[:, None] - 2.0 * (Xz @ Yz.T) + YY.sum(axis=1)[None, :]
    D = ember.maximum(D, 0.0)
    D = D - XX @ my.astype(X.dtype).T - mx.astype(X.dtype) @ YY.T
    D = ember.maximum(D, 0.0)
    cnt = px @ py.T
    D = ember.where(cnt == 0, float("nan"), D / ember.maximum(cnt, 1.0) * X.shape[1])
    return ember.sqrt(D)


class KNNImputer(TransformerMixin, BaseEstimator):
    """Imputation of missing values by the k nearest neighbours (nan_euclidean)."""

    _allow_nan = True

    _parameter_constraints = {
        "missing_values": [numbers.Real, None],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "weights": [StrOptions({"uniform", "distance"}), callable],
        "metric": [StrOptions({"nan_euclidean"}), callable],
        "copy": ["boolean"],
        "add_indicator": ["boolean"],
        "keep_empty_features": ["boolean"],
    }

    def __init__(
        self,
        *,
        missing_values=np.nan,
        n_neighbors=5,
        weights="uniform",
        metric="nan_euclidean",
        copy=True,
        add_indicator=False,
        keep_empty_features=False,
    ):
        self.missing_values = missing_values
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.metric = metric
        self.copy = copy
        self.add_indicator = add_indicator
        self.keep_empty_features = keep_empty_features

    def _missing(self, Xa):  # noqa: N803
        return missing_mask(Xa, self.missing_values)

    def fit(self, X, y=None):
        """Store the training rows (the donors) and their missing-value mask."""
        self._validate_params()
        if callable(self.metric):
            raise ValueError(
                "KNNImputer.fit: only metric='nan_euclidean' is supported by ember, got a "
                f"callable {self.metric!r}"
            )
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan", dtype="float64")
        check_n_features(self, Xa, reset=True)
        mask = self._missing(Xa)
        self._fit_X = Xa
        self._mask_fit_X = mask
        self._valid_mask = ember.asnumpy(~mask.all(axis=0))  # host: one bool per feature
        self._indicator_features = np.flatnonzero(ember.asnumpy(mask.any(axis=0)))
        return self

    def _weights(self, dist):
        if self.weights == "uniform":
            return ember.where(ember.isnan(dist), 0.0, ember.ones_like(dist))
        if callable(self.weights):
            w = to_device(self.weights(dist), dist.device).astype(dist.dtype)
        else:
            zero = dist == 0
            zrow = zero.any(axis=1, keepdims=True)
            w = ember.where(zrow, zero.astype(dist.dtype), 1.0 / ember.where(zero, 1.0, dist))
        return ember.where(ember.isnan(w), 0.0, w)

    def transform(self, X):
        """Impute every missing entry from its nearest donors."""
        check_is_fitted(self, "_fit_X")
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan", dtype="float64")
        check_n_features(self, Xa, reset=False)
        fitX = to_device(self._fit_X, Xa.device)
        fmask = to_device(self._mask_fit_X, Xa.device)
        mask = self._missing(Xa)
        valid = self._valid_mask
        out = ember.asarray(Xa, copy=True)
        cols = np.flatnonzero(ember.asnumpy(mask.any(axis=0)) & valid)  # host bookkeeping
        if cols.size:
            rows_any = ember.nonzero(mask[:, to_device(np.flatnonzero(valid), Xa.device)].any(
                axis=1))[0]  # fmt: skip
            R = ember.take(Xa, rows_any, axis=0)
            D = _nan_euclidean(R, fitX, ember.take(mask, rows_any, axis=0), fmask)
            for j in cols.tolist():
                donor = ~fmask[:, j]
                n_donors = int(donor.sum())
                recv = ember.take(mask[:, j], rows_any, axis=0)
                # non-donors sort last, donors at an unknown (NaN) distance just before them
                key = ember.where(ember.isnan(D), 1e300, D)
                key = ember.where(donor[None, :], key, float("inf"))
                k = min(self.n_neighbors, n_donors)
                idx = ember.argsort(key, axis=1, stable=True)[:, :k]
                dd = ember.take_along_axis(D, idx, axis=1)
                vals = ember.take(fitX[:, j], idx.reshape(-1), axis=0).reshape(idx.shape)
                w = self._weights(dd)
                wsum = w.sum(axis=1)
                est = (w * vals).sum(axis=1) / ember.where(wsum == 0, 1.0, wsum)
                col_obs = ember.where(donor, fitX[:, j], 0.0)
                col_mean = col_obs.sum() / max(n_donors, 1)
                no_dist = ember.isnan(ember.where(donor[None, :], D, float("nan"))).all(axis=1)
                est = ember.where(no_dist | (wsum == 0), col_mean, est)
                cur = ember.take(out[:, j], rows_any, axis=0)
                out[rows_any, j] = ember.where(recv, est, cur)
        if self.keep_empty_features:
            # features never observed during fit become 0 (all rows, as scikit-learn)
            out = ember.where(~to_device(valid, Xa.device)[None, :], 0.0, out)
        elif not valid.all():
            out = ember.take(out, to_device(np.flatnonzero(valid), Xa.device), axis=1)
        if self.add_indicator:
            feats = to_device(self._indicator_features.astype(np.int64), Xa.device)
            ind = ember.take(mask, feats, axis=1).astype(out.dtype)
            out = ember.concatenate([out, ind], axis=1)
        return to_output(out, input_kind(X))

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "_fit_X")
        names = input_features
        if names is None:
            names = getattr(self, "feature_names_in_", None)
            if names is None:
                names = [f"x{i}" for i in range(self.n_features_in_)]
        names = np.asarray([str(n) for n in names], dtype=object)
        out = names if self.keep_empty_features else names[self._valid_mask]
        if self.add_indicator:
            ind = np.asarray(
                [f"missingindicator_{names[i]}" for i in self._indicator_features], dtype=object
            )
            out = np.concatenate([out, ind])
        return out
