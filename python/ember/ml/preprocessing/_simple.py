"""``MaxAbsScaler``, ``Binarizer``, ``FunctionTransformer`` and ``OrdinalEncoder``
(scikit-learn's ``sklearn.preprocessing``).

``OrdinalEncoder`` follows ``OneHotEncoder``: ember columns are encoded on their device
(``unique`` + ``searchsorted``), host columns (strings, objects) with NumPy on the host.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

import ember

from ..base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from ..utils._param_validation import StrOptions
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    is_ember,
    to_device,
    to_output,
)
from ._data import _safe_scale

__all__ = ["Binarizer", "FunctionTransformer", "MaxAbsScaler", "OrdinalEncoder", "maxabs_scale"]


class MaxAbsScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scale each feature by its maximum absolute value (NaNs ignored and kept)."""

    _allow_nan = True
    _parameter_constraints = {"copy": ["boolean"]}

    def __init__(self, *, copy=True):
        self.copy = copy

    def fit(self, X, y=None):
        for a in ("max_abs_", "scale_", "n_samples_seen_"):
            self.__dict__.pop(a, None)
        return self.partial_fit(X, y)

    def partial_fit(self, X, y=None):
        """Update the running maximum absolute value with a batch."""
        first = not hasattr(self, "max_abs_")
        if first:
            self._validate_params()
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=first)
        kind = input_kind(X)
        m = ember.nanmax(ember.abs(Xa), axis=0)
        if not first:
            m = ember.maximum(m, to_device(self.max_abs_, Xa.device).astype(Xa.dtype))
            self.n_samples_seen_ += int(Xa.shape[0])
        else:
            self.n_samples_seen_ = int(Xa.shape[0])
        self.max_abs_ = to_output(m, kind)
        self.scale_ = to_output(_safe_scale(m), kind)
        return self

    def transform(self, X):
        check_is_fitted(self, "scale_")
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=False)
        return to_output(Xa / to_device(self.scale_, Xa.device).astype(Xa.dtype), input_kind(X))

    def inverse_transform(self, X):
        check_is_fitted(self, "scale_")
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=False)
        return to_output(Xa * to_device(self.scale_, Xa.device).astype(Xa.dtype), input_kind(X))


def maxabs_scale(X, *, axis=0, copy=True):
    """Scale each feature (``axis=0``) or sample (``axis=1``) by its maximum absolute value."""
    Xa = check_array(X, ensure_all_finite="allow-nan")
    m = ember.nanmax(ember.abs(Xa), axis=axis, keepdims=True)
    return to_output(Xa / _safe_scale(m), input_kind(X))


class Binarizer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """1 where a value is above ``threshold``, else 0 (stateless)."""

    _parameter_constraints = {"threshold": [numbers.Real], "copy": ["boolean"]}

    def __init__(self, *, threshold=0.0, copy=True):
        self.threshold = threshold
        self.copy = copy

    def fit(self, X, y=None):
        self._validate_params()
        check_n_features(self, check_array(X, estimator=self), reset=True)
        return self

    def transform(self, X, copy=None):
        check_is_fitted(self, "n_features_in_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        return to_output((Xa > self.threshold).astype(Xa.dtype), input_kind(X))


class FunctionTransformer(TransformerMixin, BaseEstimator):
    """Apply ``func`` (identity when None) to X; ``inverse_func`` undoes it."""

    _parameter_constraints = {
        "func": [callable, None],
        "inverse_func": [callable, None],
        "validate": ["boolean"],
        "accept_sparse": ["boolean"],
        "check_inverse": ["boolean"],
        "feature_names_out": [callable, StrOptions({"one-to-one"}), None],
        "kw_args": [dict, None],
        "inv_kw_args": [dict, None],
    }

    def __init__(
        self,
        func=None,
        inverse_func=None,
        *,
        validate=False,
        accept_sparse=False,
        check_inverse=True,
        feature_names_out=None,
        kw_args=None,
        inv_kw_args=None,
    ):
        self.func = func
        self.inverse_func = inverse_func
        self.validate = validate
        self.accept_sparse = accept_sparse
        self.check_inverse = check_inverse
        self.feature_names_out = feature_names_out
        self.kw_args = kw_args
        self.inv_kw_args = inv_kw_args

    def _check_input(self, X, *, reset):
        if self.validate:
            Xa = check_array(X, estimator=self)
            check_n_features(self, Xa, reset=reset)
            return to_output(Xa, input_kind(X))
        if reset and hasattr(X, "shape") and len(X.shape) == 2:
            self.n_features_in_ = int(X.shape[1])
            cols = getattr(X, "columns", None)
            if cols is not None and all(isinstance(c, str) for c in cols):
                self.feature_names_in_ = np.asarray(list(cols), dtype=object)
        return X

    @staticmethod
    def _apply(func, X, kw):
        return X if func is None else func(X, **(kw or {}))

    def fit(self, X, y=None):
        self._validate_params()
        X = self._check_input(X, reset=True)
        if self.check_inverse and not (self.func is None or self.inverse_func is None):
            n = X.shape[0] if hasattr(X, "shape") else len(X)
            idx = np.arange(0, n, max(1, n // 100))
            sub = (
                ember.take(X, ember.asarray(idx, device=X.device), axis=0)
                if is_ember(X)
                else (X.iloc[idx] if hasattr(X, "iloc") else np.asarray(X)[idx])
            )
            back = self._apply(
                self.inverse_func, self._apply(self.func, sub, self.kw_args), self.inv_kw_args
            )
            a = ember.asnumpy(sub) if is_ember(sub) else np.asarray(sub, dtype=np.float64)
            b = ember.asnumpy(back) if is_ember(back) else np.asarray(back, dtype=np.float64)
            if a.shape != b.shape or not np.allclose(a, b, equal_nan=True):
                warnings.warn(
                    "The provided functions are not strictly inverse of each other. If you are "
                    "sure you want to proceed regardless, set 'check_inverse=False'.",
                    UserWarning,
                    stacklevel=2,
                )
        return self

    def transform(self, X):
        X = self._check_input(X, reset=False)
        return self._apply(self.func, X, self.kw_args)

    def inverse_transform(self, X):
        if self.validate:
            X = to_output(check_array(X, estimator=self), input_kind(X))
        return self._apply(self.inverse_func, X, self.inv_kw_args)

    def get_feature_names_out(self, input_features=None):
        if self.feature_names_out is None:
            raise AttributeError(
                "This 'FunctionTransformer' has no attribute 'get_feature_names_out'"
            )
        names = input_features
        if names is None:
            names = getattr(self, "feature_names_in_", None)
            if names is None:
                names = [f"x{i}" for i in range(getattr(self, "n_features_in_", 0))]
        if self.feature_names_out == "one-to-one":
            return np.asarray([str(n) for n in names], dtype=object)
        return np.asarray(list(self.feature_names_out(self, names)), dtype=object)


def _is_nan(v):
    return isinstance(v, float) and v != v


class OrdinalEncoder(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Each category of each column to its position among the column's sorted categories."""

    _allow_nan = True
    _parameter_constraints = {
        "categories": [StrOptions({"auto"}), list],
        "dtype": "no_validation",
        "handle_unknown": [StrOptions({"error", "use_encoded_value"})],
        "unknown_value": [numbers.Real, None],
        "encoded_missing_value": [numbers.Real],
        "min_frequency": [None],
        "max_categories": [None],
    }

    def __init__(
        self,
        *,
        categories="auto",
        dtype=np.float64,
        handle_unknown="error",
        unknown_value=None,
        encoded_missing_value=np.nan,
        min_frequency=None,
        max_categories=None,
    ):
        self.categories = categories
        self.dtype = dtype
        self.handle_unknown = handle_unknown
        self.unknown_value = unknown_value
        self.encoded_missing_value = encoded_missing_value
        self.min_frequency = min_frequency
        self.max_categories = max_categories

    def _columns(self, X):
        if is_ember(X):
            if X.ndim != 2:
                raise ValueError(f"Expected 2D array, got {X.ndim}D array instead")
            return [X[:, j] for j in range(X.shape[1])], "ember"
        if hasattr(X, "columns") and hasattr(X, "iloc"):
            return [X.iloc[:, j].to_numpy() for j in range(X.shape[1])], "numpy"
        h = np.asarray(X)
        if h.ndim != 2:
            raise ValueError(
                f"Expected 2D array, got {h.ndim}D array instead:\narray={h!r}.\nReshape your "
                "data either using array.reshape(-1, 1) if your data has a single feature or "
                "array.reshape(1, -1) if it contains a single sample."
            )
        return [h[:, j] for j in range(h.shape[1])], "numpy"

    @staticmethod
    def _missing(c, kind):
        if kind == "ember":
            if c.dtype in (ember.float32, ember.float64):
                return ember.isnan(c)
            return ember.zeros(c.shape, dtype=ember.bool, device=c.device)
        if c.dtype.kind == "f":
            return np.isnan(c)
        if c.dtype.kind == "O":
            return np.asarray([v is None or _is_nan(v) for v in c], dtype=bool)
        return np.zeros(c.shape, dtype=bool)

    def fit(self, X, y=None):
        """Learn the categories of every column (a missing value sorts last)."""
        self._validate_params()
        if self.handle_unknown == "use_encoded_value":
            if not (
                isinstance(self.unknown_value, numbers.Integral) or _is_nan(self.unknown_value)
            ):
                raise TypeError(
                    "unknown_value should be an integer or np.nan when handle_unknown is "
                    f"'use_encoded_value', got {self.unknown_value}."
                )
        elif self.unknown_value is not None:
            raise TypeError(
                "unknown_value should only be set when handle_unknown is 'use_encoded_value', "
                f"got {self.unknown_value}."
            )
        cols, kind = self._columns(X)
        self.n_features_in_ = len(cols)
        if hasattr(X, "columns"):
            self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        cats = []
        for j, c in enumerate(cols):
            miss = self._missing(c, kind)
            has_missing = bool(miss.any())
            if self.categories != "auto":
                given = np.asarray(self.categories[j])
                cat = to_device(given, c.device) if kind == "ember" else given
                if self.handle_unknown == "error":
                    self._positions(c[~miss], cat, kind, j, check=True)
            elif kind == "ember":
                cat = ember.unique(c[~miss])
                if has_missing:
                    nan = ember.full((1,), float("nan"), dtype=c.dtype, device=c.device)
                    cat = ember.concatenate([cat, nan])
            else:
                vals = c[~miss]
                try:
                    cat = np.unique(vals)
                except TypeError as exc:
                    raise TypeError(
                        "Encoders require their input argument must be uniformly strings or "
                        f"numbers. Got {sorted({type(v).__name__ for v in vals})}"
                    ) from exc
                if has_missing:
                    first = c[miss][0]
                    cat = np.append(cat.astype(object) if cat.dtype.kind in "OU" else cat, first)
            cats.append(cat)
        self.categories_ = cats
        n_known = [int(c.shape[0]) - int(self._has_missing_cat(c)) for c in cats]
        if self.handle_unknown == "use_encoded_value" and isinstance(
            self.unknown_value, numbers.Integral
        ):
            if any(0 <= self.unknown_value < n for n in n_known):
                raise ValueError(
                    f"The used value for unknown_value {self.unknown_value} is one of the values "
                    "already used for encoding the seen categories."
                )
        emv = self.encoded_missing_value
        if not _is_nan(emv):
            bad = [
                j
                for j, (c, n) in enumerate(zip(cats, n_known, strict=True))
                if self._has_missing_cat(c) and 0 <= emv < n
            ]
            if bad:
                names = getattr(self, "feature_names_in_", None)
                which = [str(names[j]) if names is not None else j for j in bad]
                raise ValueError(
                    f"encoded_missing_value ({emv}) is already used to encode a known category "
                    f"in features: {which}"
                )
        return self

    @staticmethod
    def _has_missing_cat(cat):
        if cat.shape[0] == 0:
            return False
        last = cat[-1]
        if is_ember(cat):
            return cat.dtype in (ember.float32, ember.float64) and bool(ember.isnan(last))
        return last is None or _is_nan(last) or (isinstance(last, np.floating) and last != last)

    def _positions(self, c, cat, kind, j, check):
        """(position, known) of each value of column c among the (non-missing) categories."""
        n = int(cat.shape[0]) - int(self._has_missing_cat(cat))
        if kind == "ember":
            cc = to_device(cat[:n], c.device)
            if n == 0:
                z = ember.zeros(c.shape, dtype=ember.int64, device=c.device)
                return z, z.astype(ember.bool)
            pos = ember.clip(ember.searchsorted(cc, c), 0, n - 1)
            ok = ember.take(cc, pos) == c
            if check and not bool(ok.all()):
                raise ValueError(f"Found unknown categories in column {j} during fit")
            return pos, ok
        ch = np.asarray(cat[:n])
        if n == 0:
            return np.zeros(c.shape, dtype=np.int64), np.zeros(c.shape, dtype=bool)
        pos = np.clip(np.searchsorted(ch, c), 0, n - 1)
        ok = ch[pos] == c
        if check and not ok.all():
            raise ValueError(
                f"Found unknown categories {list(np.unique(c[~ok]))!r} in column {j} during fit"
            )
        return pos, ok

    def transform(self, X):
        """Category positions as ``dtype`` (missing -> encoded_missing_value, unseen ->
        unknown_value)."""
        check_is_fitted(self, "categories_")
        cols, kind = self._columns(X)
        if len(cols) != self.n_features_in_:
            raise ValueError(
                f"X has {len(cols)} features, but OrdinalEncoder is expecting "
                f"{self.n_features_in_} features as input."
            )
        xp = ember if kind == "ember" else np
        out = []
        for j, (c, cat) in enumerate(zip(cols, self.categories_, strict=True)):
            miss = self._missing(c, kind)
            safe = xp.where(miss, 0, c) if kind == "ember" else c
            if kind == "numpy" and miss.any():
                safe = c.copy()
                safe[miss] = c[~miss][0] if (~miss).any() else 0
            pos, ok = self._positions(safe, cat, kind, j, check=False)
            unknown = ~ok & ~miss
            if bool(unknown.any()) and self.handle_unknown == "error":
                bad = ember.asnumpy(c[unknown]) if kind == "ember" else c[unknown]
                raise ValueError(
                    f"Found unknown categories {list(np.unique(bad))!r} in column {j} during "
                    "transform"
                )
            v = pos.astype(xp.float64)
            if self.handle_unknown == "use_encoded_value":
                v = xp.where(unknown, float(self.unknown_value), v)
            v = xp.where(miss, float(self.encoded_missing_value), v)
            out.append(v)
        res = xp.stack(out, axis=1) if out else xp.zeros((0, 0))
        return res.astype(np.dtype(self.dtype).name if kind == "ember" else self.dtype)

    def inverse_transform(self, X):
        """Codes back to categories (None for unknown_value, NaN for missing)."""
        check_is_fitted(self, "categories_")
        Xh = ember.asnumpy(X) if is_ember(X) else np.asarray(X, dtype=np.float64)
        if Xh.ndim != 2 or Xh.shape[1] != self.n_features_in_:
            raise ValueError(
                f"Shape of the passed X data is not correct. Expected {self.n_features_in_} "
                f"columns, got {Xh.shape[1] if Xh.ndim == 2 else Xh.ndim}."
            )
        cats = [ember.asnumpy(c) if is_ember(c) else np.asarray(c) for c in self.categories_]
        numeric = all(c.dtype.kind in "fiub" for c in cats)
        out = np.empty(Xh.shape, dtype=np.float64 if numeric else object)
        for j, c in enumerate(cats):
            n = len(c) - int(self._has_missing_cat(c))
            col = Xh[:, j]
            miss = (
                np.isnan(col)
                if _is_nan(self.encoded_missing_value)
                else col == self.encoded_missing_value
            )
            unk = np.zeros(col.shape, dtype=bool)
            if self.handle_unknown == "use_encoded_value":
                uv = self.unknown_value
                unk = np.isnan(col) if _is_nan(uv) else col == uv
                unk &= ~miss if self._has_missing_cat(c) else np.ones_like(unk)
            idx = np.clip(np.nan_to_num(col, nan=0).astype(np.int64), 0, max(n - 1, 0))
            vals = c[:n][idx].astype(out.dtype) if n else np.full(col.shape, np.nan)
            if self._has_missing_cat(c):
                vals = np.where(miss, np.nan, vals) if numeric else np.where(miss, c[-1], vals)
            if unk.any():
                if numeric:
                    out = out.astype(object)
                vals = np.asarray(vals, dtype=object)
                vals[unk] = None
            out[:, j] = vals
        return out
