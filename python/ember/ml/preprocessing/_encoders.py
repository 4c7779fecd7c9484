"""LabelEncoder and OneHotEncoder (scikit-learn's ``sklearn.preprocessing``).

Ember inputs are encoded on their device (``unique`` + ``searchsorted``); host inputs (which
may hold strings or mixed objects) are encoded with NumPy on the host. ``OneHotEncoder``
returns a SciPy CSR matrix for host inputs with ``sparse_output=True``; ember has no sparse
arrays, so ember inputs always get a dense one-hot ember array.
"""

from __future__ import annotations

import numpy as np

import ember

from ..base import BaseEstimator, TransformerMixin
from ..utils._labels import encode_labels, encode_with_classes
from ..utils._param_validation import StrOptions
from ..utils.validation import (
    check_is_fitted,
    column_or_1d,
    input_kind,
    is_ember,
    to_device,
    to_output,
)

__all__ = ["LabelEncoder", "OneHotEncoder"]


def _label_vector(y, who):
    if is_ember(y):
        return column_or_1d(y, input_name="y")
    h = y.to_numpy() if hasattr(y, "to_numpy") else np.asarray(y)
    if h.ndim == 2 and h.shape[1] == 1:
        h = h.ravel()
    if h.ndim != 1:
        raise ValueError(f"{who}: y should be a 1d array, got an array of shape {h.shape} instead.")
    return h


class LabelEncoder(TransformerMixin, BaseEstimator):
    """Encode labels as 0..n_classes-1 (``classes_`` sorted)."""

    def fit(self, y):
        """Learn the sorted label set."""
        v = _label_vector(y, "LabelEncoder")
        self.classes_, _ = encode_labels(v, v.device if is_ember(v) else "cpu")
        return self

    def fit_transform(self, y):
        """Learn the labels and encode ``y``."""
        v = _label_vector(y, "LabelEncoder")
        dev = v.device if is_ember(v) else ember.get_default_device()
        self.classes_, idx = encode_labels(v, dev)
        return to_output(idx, input_kind(v))

    def transform(self, y):
        """Encode ``y`` (ValueError for labels not seen in ``fit``)."""
        check_is_fitted(self, "classes_")
        v = _label_vector(y, "LabelEncoder")
        dev = v.device if is_ember(v) else ember.get_default_device()
        if v.shape[0] == 0:
            return to_output(ember.zeros((0,), dtype=ember.int64, device=dev), input_kind(v))
        idx = encode_with_classes(v, self.classes_, dev, who="LabelEncoder.transform")
        return to_output(idx, input_kind(v))

    def inverse_transform(self, y):
        """Labels for the codes in ``y``."""
        check_is_fitted(self, "classes_")
        v = _label_vector(y, "LabelEncoder")
        K = int(self.classes_.shape[0])
        if is_ember(v):
            bad = bool(((v < 0) | (v >= K)).any()) if v.shape[0] else False
        else:
            bad = bool(np.any((v < 0) | (v >= K))) if v.shape[0] else False
        if bad:
            raise ValueError(f"y contains previously unseen labels: codes outside [0, {K})")
        if is_ember(v):
            if is_ember(self.classes_):
                return ember.take(to_device(self.classes_, v.device), v.astype(ember.int64))
            return np.asarray(self.classes_)[ember.asnumpy(v).astype(np.int64)]
        c = ember.asnumpy(self.classes_) if is_ember(self.classes_) else self.classes_
        return c[np.asarray(v, dtype=np.int64)]


class OneHotEncoder(TransformerMixin, BaseEstimator):
    """One binary column per category of each input column."""

    _parameter_constraints = {
        "categories": [StrOptions({"auto"}), list],
        "drop": [StrOptions({"first", "if_binary"}), "array-like", None],
        "sparse_output": ["boolean"],
        "dtype": "no_validation",
        "handle_unknown": [StrOptions({"error", "ignore", "infrequent_if_exist", "warn"})],
        "min_frequency": [None],
        "max_categories": [None],
        "feature_name_combiner": [StrOptions({"concat"}), callable],
    }

    def __init__(
        self,
        *,
        categories="auto",
        drop=None,
        sparse_output=True,
        dtype=np.float64,
        handle_unknown="error",
        min_frequency=None,
        max_categories=None,
        feature_name_combiner="concat",
    ):
        self.categories = categories
        self.drop = drop
        self.sparse_output = sparse_output
        self.dtype = dtype
        self.handle_unknown = handle_unknown
        self.min_frequency = min_frequency
        self.max_categories = max_categories
        self.feature_name_combiner = feature_name_combiner

    def _columns(self, X):
        if is_ember(X):
            if X.ndim != 2:
                raise ValueError(f"OneHotEncoder: Expected 2D array, got {X.ndim}D array instead")
            return [X[:, j] for j in range(X.shape[1])], "ember"
        if hasattr(X, "columns") and hasattr(X, "iloc"):
            return [X.iloc[:, j].to_numpy() for j in range(X.shape[1])], "numpy"
        h = np.asarray(X)
        if h.ndim != 2:
            raise ValueError(
                f"OneHotEncoder: Expected 2D array, got {h.ndim}D array instead. Reshape your "
                "data either using array.reshape(-1, 1) if your data has a single feature or "
                "array.reshape(1, -1) if it contains a single sample."
            )
        return [h[:, j] for j in range(h.shape[1])], "numpy"

    def fit(self, X, y=None):
        """Learn the categories of every column."""
        self._validate_params()
        cols, kind = self._columns(X)
        self.n_features_in_ = len(cols)
        if hasattr(X, "columns"):
            self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        cats = []
        for j, c in enumerate(cols):
            if self.categories == "auto":
                cats.append(ember.unique(c) if kind == "ember" else np.unique(c))
            else:
                given = self.categories[j]
                cats.append(
                    to_device(np.asarray(given), c.device) if kind == "ember" else np.asarray(given)
                )
                if self.handle_unknown == "error":
                    encode_with_classes(c, cats[-1], "cpu", who="OneHotEncoder.fit")
        self.categories_ = cats
        self.drop_idx_ = self._drop_idx()
        return self

    def _drop_idx(self):
        if self.drop is None:
            return None
        if isinstance(self.drop, str):
            if self.drop == "first":
                return np.zeros(len(self.categories_), dtype=object)
            out = np.empty(len(self.categories_), dtype=object)
            for j, c in enumerate(self.categories_):
                out[j] = 0 if c.shape[0] == 2 else None
            return out
        out = np.empty(len(self.categories_), dtype=object)
        for j, (c, v) in enumerate(zip(self.categories_, self.drop, strict=True)):
            ch = ember.asnumpy(c) if is_ember(c) else c
            pos = np.nonzero(ch == v)[0]
            if pos.size == 0:
                raise ValueError(
                    f"The following categories were supposed to be dropped, but were not found "
                    f"in the training data: {v!r} (feature {j})"
                )
            out[j] = int(pos[0])
        return out

    def transform(self, X):
        """One-hot encode X (CSR for host inputs when ``sparse_output``)."""
        check_is_fitted(self, "categories_")
        cols, kind = self._columns(X)
        if len(cols) != self.n_features_in_:
            raise ValueError(
                f"X has {len(cols)} features, but OneHotEncoder is expecting "
                f"{self.n_features_in_} features as input."
            )
        blocks = []
        for j, (c, cat) in enumerate(zip(cols, self.categories_, strict=True)):
            K = int(cat.shape[0])
            if kind == "ember":
                cc = to_device(cat, c.device)
                pos = ember.clip(ember.searchsorted(cc, c), 0, K - 1)
                ok = ember.take(cc, pos) == c
                if self.handle_unknown == "error" and not bool(ok.all()):
                    raise ValueError(f"Found unknown categories during transform in column {j}")
                B = (pos[:, None] == ember.arange(K, device=c.device)[None, :]) & ok[:, None]
            else:
                ch = ember.asnumpy(cat) if is_ember(cat) else cat
                pos = np.clip(np.searchsorted(ch, c), 0, K - 1)
                ok = ch[pos] == c
                if self.handle_unknown == "error" and not ok.all():
                    raise ValueError(
                        f"Found unknown categories {np.unique(c[~ok]).tolist()!r} in column {j} "
                        "during transform"
                    )
                B = (pos[:, None] == np.arange(K)[None, :]) & ok[:, None]
            d = None if self.drop_idx_ is None else self.drop_idx_[j]
            if d is not None:
                keep = [i for i in range(K) if i != d]
                B = (
                    B[:, keep]
                    if kind == "numpy"
                    else ember.take(
                        B, ember.asarray(keep, device=B.device, dtype=ember.int64), axis=1
                    )
                )
            blocks.append(B)
        if kind == "ember":
            return ember.concatenate(blocks, axis=1).astype(np.dtype(self.dtype).name)
        out = np.concatenate(blocks, axis=1).astype(self.dtype)
        if self.sparse_output:
            from scipy.sparse import csr_matrix

            return csr_matrix(out)
        return out

    def inverse_transform(self, X):
        """Categories from one-hot rows (None for all-zero rows of ignored unknowns)."""
        check_is_fitted(self, "categories_")
        if hasattr(X, "toarray"):
            X = X.toarray()
        kind = input_kind(X)
        Xh = ember.asnumpy(X) if is_ember(X) else np.asarray(X)
        outs, start = [], 0
        for j, cat in enumerate(self.categories_):
            ch = ember.asnumpy(cat) if is_ember(cat) else cat
            K = ch.shape[0]
            d = None if self.drop_idx_ is None else self.drop_idx_[j]
            width = K - (d is not None)
            blk = Xh[:, start : start + width]
            start += width
            if d is not None:
                full = np.zeros((blk.shape[0], K))
                keep = [i for i in range(K) if i != d]
                full[:, keep] = blk
                full[:, d] = blk.sum(axis=1) == 0
                blk = full
            outs.append(ch[np.argmax(blk, axis=1)])
        res = np.stack(outs, axis=1)
        return (
            to_output(res, "numpy")
            if kind == "numpy" or res.dtype.kind in "OUS"
            else (ember.asarray(res, device=X.device))
        )

    def get_feature_names_out(self, input_features=None):
        """Names 'x0_cat' for every output column."""
        check_is_fitted(self, "categories_")
        if input_features is None:
            input_features = getattr(
                self, "feature_names_in_", [f"x{i}" for i in range(self.n_features_in_)]
            )
        names = []
        for j, cat in enumerate(self.categories_):
            ch = ember.asnumpy(cat) if is_ember(cat) else cat
            d = None if self.drop_idx_ is None else self.drop_idx_[j]
            for i, v in enumerate(ch):
                if i != d:
                    names.append(f"{input_features[j]}_{v}")
        return np.asarray(names, dtype=object)
