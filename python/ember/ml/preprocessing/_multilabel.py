"""``MultiLabelBinarizer``: sets of labels <-> a 0/1 indicator matrix.

The input is a sequence of label collections (ragged host data); the mapping of labels to
columns is host bookkeeping, the indicator is filled by one scatter of (row, column) pairs.
Indicators given as ember arrays to ``inverse_transform`` are read back once.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np

import ember

from ..base import BaseEstimator, TransformerMixin, check_is_fitted
from ..utils._param_validation import validate_parameter_constraints
from ..utils.validation import is_ember

__all__ = ["MultiLabelBinarizer"]


class MultiLabelBinarizer(TransformerMixin, BaseEstimator):
    """Transform between iterables of label sets and a (n_samples, n_classes) indicator."""

    _parameter_constraints = {"classes": ["array-like", None], "sparse_output": ["boolean"]}

    def __init__(self, *, classes=None, sparse_output=False):
        self.classes = classes
        self.sparse_output = sparse_output

    def fit(self, y):
        """Record the classes (sorted, unless ``classes`` gives their order)."""
        validate_parameter_constraints(
            self._parameter_constraints, self.get_params(deep=False), "MultiLabelBinarizer"
        )
        self._cached_dict = None
        if self.classes is None:
            classes = sorted(set(itertools.chain.from_iterable(y)))
        elif len(set(self.classes)) < len(self.classes):
            raise ValueError(
                "The classes argument contains duplicate classes. Remove these duplicates "
                "before passing them to MultiLabelBinarizer."
            )
        else:
            classes = self.classes
        dtype = int if all(isinstance(c, int) for c in classes) else object
        self.classes_ = np.empty(len(classes), dtype=dtype)
        self.classes_[:] = classes
        return self

    def fit_transform(self, y):
        """``fit`` then ``transform`` (one pass over y)."""
        y = list(y)
        return self.fit(y).transform(y)

    def _mapping(self):
        if getattr(self, "_cached_dict", None) is None:
            self._cached_dict = dict(zip(self.classes_, range(len(self.classes_)), strict=True))
        return self._cached_dict

    def transform(self, y):
        """The indicator matrix (int; CSR when ``sparse_output``); unknown labels are ignored
        with a warning."""
        check_is_fitted(self, "classes_")
        mapping = self._mapping()
        rows, cols, unknown = [], [], set()
        n = 0
        for i, labels in enumerate(y):
            n = i + 1
            seen = set()
            for label in labels:
                try:
                    j = mapping[label]
                except KeyError:
                    unknown.add(label)
                    continue
                if j not in seen:
                    seen.add(j)
                    rows.append(i)
                    cols.append(j)
        if unknown:
            warnings.warn(
                f"unknown class(es) {sorted(unknown, key=str)} will be ignored",
                stacklevel=2,
            )
        K = len(self.classes_)
        if self.sparse_output:
            from scipy import sparse

            data = np.ones(len(rows), dtype=int)
            return sparse.csr_matrix((data, (rows, cols)), shape=(n, K))
        out = np.zeros((n, K), dtype=int)
        if rows:
            out[np.asarray(rows), np.asarray(cols)] = 1
        return out

    def inverse_transform(self, yt):
        """Tuples of the labels whose indicator is set, one per row."""
        check_is_fitted(self, "classes_")
        if hasattr(yt, "toarray"):
            yt = yt.toarray()
        yt = ember.asnumpy(yt) if is_ember(yt) else np.asarray(yt)
        if yt.ndim != 2 or yt.shape[1] != len(self.classes_):
            got = yt.shape[1] if yt.ndim == 2 else yt.shape
            raise ValueError(f"Expected indicator for {len(self.classes_)} classes, but got {got}")
        unexpected = np.setdiff1d(yt, [0, 1])
        if len(unexpected) > 0:
            raise ValueError(f"Expected only 0s and 1s in label indicator. Also got {unexpected}")
        return [tuple(self.classes_.compress(row)) for row in yt]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.target_tags.two_d_labels = True
        return tags
