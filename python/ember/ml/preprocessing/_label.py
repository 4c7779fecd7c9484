"""``LabelBinarizer`` and ``label_binarize`` (scikit-learn's ``sklearn.preprocessing``):
labels to one-vs-all indicator columns and back.

The indicator matrix is built on a device: ember labels are matched against the classes there;
host labels (which may be strings) are matched on the host with NumPy, and only their class
positions are sent to ember's default device (the house rule of ``utils._labels``). Results
come back in the caller's kind: ember for ember labels, NumPy (or SciPy CSR when
``sparse_output``) otherwise.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

import ember

from ..base import BaseEstimator, TransformerMixin
from ..exceptions import InvalidParameterError, sklearn_compatible
from ..utils._labels import decode_labels, label_positions
from ..utils.multiclass import _as_target, type_of_target, unique_labels
from ..utils.validation import check_is_fitted, input_kind, is_ember, to_device, to_output

__all__ = ["LabelBinarizer", "label_binarize"]


def _check_labels(neg_label, pos_label, sparse_output, who):
    for name, v in (("neg_label", neg_label), ("pos_label", pos_label)):
        if isinstance(v, bool) or not isinstance(v, (Integral, np.integer)):
            raise sklearn_compatible(InvalidParameterError)(
                f"The {name!r} parameter of {who} must be an int. Got {v!r} instead."
            )
    if neg_label >= pos_label:
        raise ValueError(f"neg_label={neg_label} must be strictly less than pos_label={pos_label}.")
    if sparse_output and (pos_label == 0 or neg_label != 0):
        raise ValueError(
            "Sparse binarization is only supported with non zero pos_label and zero neg_label, "
            f"got pos_label={pos_label} and neg_label={neg_label}"
        )


def _int_dtype(y):
    """The output's integer dtype: y's own when it is a signed integer type, else int64."""
    if is_ember(y):
        return y.dtype if np.dtype(str(y.dtype)).kind == "i" else ember.int64
    return y.dtype if y.dtype.kind == "i" else np.int64


def _n_samples(y):
    return int(y.shape[0]) if hasattr(y, "shape") and len(y.shape) else len(y)


def label_binarize(y, *, classes, neg_label=0, pos_label=1, sparse_output=False):
    """One column per class (``pos_label`` where the sample has the class, ``neg_label``
    elsewhere); a single column for binary targets; label indicators are re-coded."""
    _check_labels(neg_label, pos_label, sparse_output, "label_binarize")
    ya = _as_target(y, "y")
    if _n_samples(ya) == 0:
        raise ValueError(f"y has 0 samples: {y!r}")
    y_type = type_of_target(ya)
    if "multioutput" in y_type:
        raise ValueError("Multioutput target data is not supported with label binarization")
    if y_type == "unknown":
        raise ValueError("The type of target data is not known")
    if is_ember(ya) and sparse_output:
        raise ValueError(
            "label_binarize: sparse_output=True is not supported for ember arrays (ember has "
            "no sparse arrays); use sparse_output=False to return a dense array instead."
        )
    kind = input_kind(ya)
    cls = classes if is_ember(classes) else np.asarray(classes)
    if cls.ndim != 1:
        raise ValueError(f"label_binarize: classes should be 1-D, got shape {tuple(cls.shape)}")
    n, K = _n_samples(ya), int(cls.shape[0])
    dev = ya.device if is_ember(ya) else ember.get_default_device()
    idt = _int_dtype(ya)
    if y_type == "binary" and K == 1:
        Y = ember.full((n, 1), neg_label, dtype=idt, device=dev)
        return _finish(Y, kind, sparse_output)
    if y_type == "binary" and K >= 3:
        y_type = "multiclass"
    if y_type == "multilabel-indicator":
        if K != ya.shape[1]:
            raise ValueError(
                f"classes {cls} mismatch with the labels {unique_labels(ya)} found in the data"
            )
        Yd = to_device(ya, dev)
        # Nonzero entries become pos_label (kept as they are when pos_label is 1, as sklearn).
        Y = ember.where(Yd != 0, Yd if pos_label == 1 else pos_label, neg_label).astype(idt)
        # Columns follow the sorted classes; reorder when `classes` is given in another order.
        ch = ember.asnumpy(cls) if is_ember(cls) else cls
        order = np.argsort(ch, kind="stable")
        sorted_cls = ch[order]
        if np.any(ch != sorted_cls):
            cols = np.searchsorted(sorted_cls, ch)
            Y = ember.take(Y, ember.asarray(cols, dtype=ember.int64, device=dev), axis=1)
    elif y_type in ("binary", "multiclass"):
        yv = ya.reshape(-1) if ya.ndim == 2 and ya.shape[1] == 1 else ya
        if yv.ndim != 1:
            raise ValueError(f"y should be a 1d array, got an array of shape {yv.shape} instead.")
        pos = label_positions(yv, cls, dev)
        hit = pos[:, None] == ember.arange(K, device=dev)[None, :]
        Y = ember.where(hit, pos_label, neg_label).astype(idt)
        if y_type == "binary":
            Y = Y[:, K - 1 : K]
    else:
        raise ValueError(f"{y_type} target data is not supported with label binarization")
    return _finish(Y, kind, sparse_output)


def _finish(Y, kind, sparse_output):
    if sparse_output:
        from scipy.sparse import csr_matrix

        return csr_matrix(ember.asnumpy(Y))  # the host copy SciPy needs
    return to_output(Y, kind)


class LabelBinarizer(TransformerMixin, BaseEstimator):
    """Binarize labels one-vs-all: ``classes_`` learned by ``fit``, one indicator column per
    class (one column for two classes)."""

    _parameter_constraints = {
        "neg_label": [Integral],
        "pos_label": [Integral],
        "sparse_output": ["boolean"],
    }

    def __init__(self, *, neg_label=0, pos_label=1, sparse_output=False):
        self.neg_label = neg_label
        self.pos_label = pos_label
        self.sparse_output = sparse_output

    def fit(self, y):
        """Learn ``classes_`` and the target type ``y_type_``."""
        self._validate_params()
        _check_labels(self.neg_label, self.pos_label, self.sparse_output, "LabelBinarizer")
        self.sparse_input_ = hasattr(y, "nnz") and hasattr(y, "toarray")
        ya = _as_target(y, "y")
        self.y_type_ = type_of_target(ya, input_name="y")
        if "multioutput" in self.y_type_:
            raise ValueError("Multioutput target data is not supported with label binarization")
        if _n_samples(ya) == 0:
            raise ValueError(f"y has 0 samples: {y!r}")
        self.classes_ = unique_labels(ya)
        return self

    def fit_transform(self, y):
        """``fit(y)`` then ``transform(y)``."""
        return self.fit(y).transform(y)

    def transform(self, y):
        """Indicator matrix of ``y`` (labels unseen in ``fit`` get all-``neg_label`` rows)."""
        check_is_fitted(self, "classes_")
        ya = _as_target(y, "y")
        if type_of_target(ya).startswith("multilabel") and not self.y_type_.startswith(
            "multilabel"
        ):
            raise ValueError("The object was not fitted with multilabel input.")
        return label_binarize(
            ya,
            classes=self.classes_,
            neg_label=self.neg_label,
            pos_label=self.pos_label,
            sparse_output=self.sparse_output,
        )

    def inverse_transform(self, Y, threshold=None):
        """Labels from indicator rows: the largest column for multiclass targets, else the
        columns above ``threshold`` (default: halfway between ``neg_label`` and
        ``pos_label``)."""
        check_is_fitted(self, "classes_")
        if threshold is None:
            threshold = (self.pos_label + self.neg_label) / 2.0
        if hasattr(Y, "nnz") and hasattr(Y, "toarray"):
            Y = Y.toarray()  # SciPy sparse scores: their dense host copy
        kind = input_kind(Y)
        Ya = Y if is_ember(Y) else ember.asarray(np.asarray(Y), device=ember.get_default_device())
        K = int(self.classes_.shape[0])
        if self.y_type_ == "multiclass":
            if Ya.ndim != 2:
                raise ValueError(
                    f"LabelBinarizer.inverse_transform: Y should be 2-D for a multiclass "
                    f"target, got shape {tuple(Ya.shape)}"
                )
            idx = ember.clip(ember.argmax(Ya, axis=1), 0, K - 1).astype(ember.int64)
            out = decode_labels(self.classes_, idx, kind)
        elif self.y_type_ == "binary":
            if Ya.ndim == 2 and Ya.shape[1] > 2:
                raise ValueError(f"output_type='binary', but y.shape = {tuple(Ya.shape)}")
            above = (Ya.astype(ember.float64) > threshold).astype(ember.int64)
            if Ya.ndim == 2 and Ya.shape[1] == 2:
                idx = above[:, 1]
            elif K == 1:
                idx = ember.zeros((int(Ya.shape[0]),), dtype=ember.int64, device=Ya.device)
            else:
                idx = above.reshape(-1)
            out = decode_labels(self.classes_, idx, kind)
        else:  # multilabel-indicator
            if Ya.ndim != 2 or Ya.shape[1] != K:
                raise ValueError(
                    "The number of class is not equal to the number of dimension of y."
                )
            dt = Ya.dtype if np.dtype(str(Ya.dtype)).kind == "i" else ember.int64
            out = to_output((Ya.astype(ember.float64) > threshold).astype(dt), kind)
        if self.sparse_input_:
            from scipy.sparse import csr_matrix

            out = csr_matrix(ember.asnumpy(out) if is_ember(out) else np.asarray(out))
        return out
