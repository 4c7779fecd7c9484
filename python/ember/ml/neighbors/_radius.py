"""RadiusNeighborsClassifier and RadiusNeighborsRegressor (brute force on the device).

Per row block of queries: the distance block D (queries x fitted points), the mask D <= radius,
a weight matrix W (zero outside the mask) and then one matmul: W @ one-hot(y) gives the class
votes, W @ y the weighted target sums. No ragged per-query lists are built; only the per-query
neighbour counts (to find outliers) and the outlier flags come to the host.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np

import ember

from ..base import ClassifierMixin, RegressorMixin
from ..exceptions import DataConversionWarning, sklearn_compatible
from ..metrics.pairwise import block_rows
from ..utils._labels import decode_labels, encode_labels
from ..utils._param_validation import StrOptions
from ..utils.validation import (
    check_classification_targets,
    check_is_fitted,
    check_X_y,
    input_kind,
    is_ember,
    to_device,
    to_output,
)
from ._base import NeighborsBase, _block_distances
from ._classes import KNeighborsRegressor

__all__ = ["RadiusNeighborsClassifier", "RadiusNeighborsRegressor"]

_WEIGHTS = [StrOptions({"uniform", "distance"}), callable, None]


def _radius_weights(D, mask, weights):
    """Weight of each (query, fitted point) pair, 0 outside the radius.

    'distance': 1/d, except that a query with exact matches (d == 0) gives those weight 1 and
    the other neighbours 0 (scikit-learn's rule). A callable receives the whole distance block
    (an ember array, queries x fitted points) rather than scikit-learn's object array of
    per-query arrays; an elementwise callable therefore gives the same weights.
    """
    m = mask.astype(D.dtype)
    if weights in (None, "uniform"):
        return m
    if weights == "distance":
        zero = mask & (D == 0)
        has_zero = zero.any(axis=1, keepdims=True)
        inv = 1.0 / ember.where(mask & ~zero, D, 1.0)
        return ember.where(has_zero, zero.astype(D.dtype), inv * m)
    w = to_device(weights(D), D.device).astype(D.dtype)
    return ember.where(mask, w, 0.0)


def _radius_reduce(est, X, Y):
    """(sums, counts) over the neighbours within ``est.radius`` of every query, block by block:
    sums = W @ Y (weighted sums of the rows of Y), counts = neighbours per query."""
    check_is_fitted(est, "_fit_X")
    Q, self_query = est._query(X)
    F = est._fit_X
    rows = block_rows(F.shape[0], F.device)
    sums, counts = [], []
    for s in range(0, Q.shape[0], rows):
        blk = Q[s : s + rows]
        D, _ = _block_distances(blk, F, est.metric, est._p(), False)
        if self_query:  # a point is not its own neighbour
            rr = ember.arange(blk.shape[0], device=F.device)
            D[rr, rr + s] = float("inf")
        mask = D <= est.radius
        W = _radius_weights(D, mask, est.weights)
        sums.append(W @ Y)
        counts.append(mask.sum(axis=1))
    cat = (lambda p: p[0]) if len(sums) == 1 else ember.concatenate
    return cat(sums), cat(counts)


def _kind(X, est):
    return input_kind(X) if X is not None else est._fit_kind


class RadiusNeighborsClassifier(ClassifierMixin, NeighborsBase):
    """Vote among the fitted points within ``radius`` (uniform, distance or callable weights).

    Queries without neighbours get ``outlier_label`` (probability 1 for that class when it is
    one of ``classes_``); with ``outlier_label=None`` they raise ValueError, as scikit-learn.
    """

    _multi_output = True

    _parameter_constraints = {
        **NeighborsBase._parameter_constraints,
        "weights": _WEIGHTS,
        "outlier_label": [Integral, str, "array-like", None],
    }
    _parameter_constraints.pop("n_neighbors")

    def __init__(
        self,
        radius=1.0,
        *,
        weights="uniform",
        algorithm="auto",
        leaf_size=30,
        p=2,
        metric="minkowski",
        outlier_label=None,
        metric_params=None,
        n_jobs=None,
    ):
        self.radius = radius
        self.weights = weights
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.p = p
        self.metric = metric
        self.outlier_label = outlier_label
        self.metric_params = metric_params
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Store the training points and their labels (one column per output when y is 2-D);
        resolve ``outlier_label_`` (one label per output)."""
        self._validate_params()
        Xa, ya = check_X_y(X, y, estimator=self, multi_output=True)
        check_classification_targets(ya, type(self).__name__)
        if ya.ndim == 2 and ya.shape[1] == 1:
            warnings.warn(
                "A column-vector y was passed when a 1d array was expected. Please change the "
                "shape of y to (n_samples, ), for example using ravel().",
                sklearn_compatible(DataConversionWarning),
                stacklevel=2,
            )
            ya = ya[:, 0]
        self._fit(Xa)
        self._fit_kind = input_kind(X)
        self.outputs_2d_ = ya.ndim == 2
        cols = [ya[:, k] for k in range(ya.shape[1])] if self.outputs_2d_ else [ya]
        classes_list, onehots = [], []
        for col in cols:
            classes, yi = encode_labels(col, Xa.device)
            K = int(classes.shape[0])
            classes_list.append(
                classes if input_kind(X) == "ember" else to_output(classes, "numpy")
            )
            onehots.append((yi[:, None] == ember.arange(K, device=yi.device)).astype(Xa.dtype))
        # One one-hot block per output side by side: a single matmul gives all the votes.
        self._onehot = onehots[0] if len(onehots) == 1 else ember.concatenate(onehots, axis=1)
        self._sizes = [int(o.shape[1]) for o in onehots]
        self.classes_ = classes_list if self.outputs_2d_ else classes_list[0]
        self.outlier_label_ = self._resolve_outlier_label(classes_list)
        return self

    def _resolve_outlier_label(self, classes_list):
        """One outlier label per output; the checks work on the (small) class lists on the
        host, as scikit-learn's."""
        hcs = [_host_classes(c) for c in classes_list]
        lab = self.outlier_label
        if lab is None:
            return None
        if isinstance(lab, str) and lab == "most_frequent":
            out, off = [], 0
            for hc, K in zip(hcs, self._sizes, strict=True):
                top = int(ember.argmax(self._onehot[:, off : off + K].sum(axis=0)))
                out.append(hc[top])
                off += K
            return out
        if not isinstance(lab, str) and hasattr(lab, "__len__"):
            if len(lab) != len(hcs):
                raise ValueError(
                    f"RadiusNeighborsClassifier.fit: The length of outlier_label: {lab!r} is "
                    f"inconsistent with the output length: {len(hcs)}"
                )
            labels = list(lab)
        else:
            labels = [lab] * len(hcs)
        for hc, label in zip(hcs, labels, strict=True):
            if not isinstance(label, str) and hasattr(label, "__len__"):
                raise TypeError(
                    f"RadiusNeighborsClassifier.fit: The outlier_label of classes {hc} is "
                    f"supposed to be a scalar, got {label!r}."
                )
            if np.append(hc, label).dtype != hc.dtype:
                raise TypeError(
                    f"RadiusNeighborsClassifier.fit: The dtype of outlier_label {label!r} is "
                    f"inconsistent with classes {hc} in y."
                )
        return labels

    def _proba(self, X):
        """Per output, the class probabilities (on the device)."""
        check_is_fitted(self, "_onehot")
        votes, counts = _radius_reduce(self, X, self._onehot)
        outl = counts == 0
        # One host flag per query: the indices of outliers are needed for the error message.
        outl_h = ember.asnumpy(outl)
        if outl_h.any() and self.outlier_label_ is None:
            raise ValueError(
                f"No neighbors found for test samples {np.flatnonzero(outl_h)!r}, you can try "
                "using larger radius, giving a label for outliers, or considering removing "
                "them from your dataset."
            )
        classes_list = self.classes_ if self.outputs_2d_ else [self.classes_]
        probs, off = [], 0
        for k, K in enumerate(self._sizes):
            V = votes[:, off : off + K]
            off += K
            if outl_h.any():
                label = self.outlier_label_[k]
                pos = np.flatnonzero(_host_classes(classes_list[k]) == label)
                if pos.size == 1:
                    hot = (ember.arange(K, device=V.device) == int(pos[0])).astype(V.dtype)
                    V = ember.where(outl[:, None], hot[None, :], V)
                else:
                    warnings.warn(
                        f"Outlier label {label} is not in training classes. All class "
                        "probabilities of outliers will be assigned with 0.",
                        UserWarning,
                        stacklevel=3,
                    )
            tot = V.sum(axis=1, keepdims=True)
            probs.append(V / ember.where(tot == 0, 1.0, tot))
        return probs

    def predict_proba(self, X):
        """Fraction of (weighted) neighbour votes for each class (a list of arrays, one per
        output, for 2-D y); outliers: 1 for the outlier label's class (all 0 when it is not a
        class)."""
        check_is_fitted(self, "_onehot")
        kind = _kind(X, self)
        probs = [to_output(P, kind) for P in self._proba(X)]
        return probs if self.outputs_2d_ else probs[0]

    def predict(self, X):
        """Most voted class (ties: the smallest label); ``outlier_label_`` where every class
        probability is 0. Shape (n_queries,) or (n_queries, n_outputs)."""
        check_is_fitted(self, "_onehot")
        kind = _kind(X, self)
        classes_list = self.classes_ if self.outputs_2d_ else [self.classes_]
        cols = []
        for k, P in enumerate(self._proba(X)):
            pred = decode_labels(classes_list[k], ember.argmax(P, axis=1), kind)
            zero = (P == 0).all(axis=1)
            if bool(zero.any()):  # one host flag: only then is the outlier label written
                label = self.outlier_label_[k]
                if is_ember(pred):
                    dt = pred.dtype
                    label = label.item() if isinstance(label, np.generic) else label
                    pred = ember.where(to_device(zero, pred.device), label, pred).astype(dt)
                else:
                    pred = pred.copy()
                    pred[ember.asnumpy(zero)] = label
            cols.append(pred)
        if not self.outputs_2d_:
            return cols[0]
        if all(is_ember(c) for c in cols):
            return ember.stack(cols, axis=1)
        return np.stack([_host_classes(c) for c in cols], axis=1)


def _host_classes(c):
    """A class list (or decoded labels) as a NumPy array on the host (small)."""
    return ember.asnumpy(c) if is_ember(c) else np.asarray(c)


class RadiusNeighborsRegressor(RegressorMixin, NeighborsBase):
    """(Weighted) mean of the targets of the fitted points within ``radius``; NaN (with a
    warning) for queries without neighbours, as scikit-learn."""

    _multi_output = True

    _parameter_constraints = {**NeighborsBase._parameter_constraints, "weights": _WEIGHTS}
    _parameter_constraints.pop("n_neighbors")

    def __init__(
        self,
        radius=1.0,
        *,
        weights="uniform",
        algorithm="auto",
        leaf_size=30,
        p=2,
        metric="minkowski",
        metric_params=None,
        n_jobs=None,
    ):
        self.radius = radius
        self.weights = weights
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.p = p
        self.metric = metric
        self.metric_params = metric_params
        self.n_jobs = n_jobs

    fit = KNeighborsRegressor.fit  # the same: store the training points and targets

    def predict(self, X):
        """Weighted mean target of the neighbours within ``radius`` (NaN where there are none)."""
        check_is_fitted(self, "_y")
        Y = self._y if self._y.ndim == 2 else self._y[:, None]
        # One extra column of ones: W @ [Y, 1] gives the weighted sums and the weight totals.
        ones = ember.ones((Y.shape[0], 1), dtype=Y.dtype, device=Y.device)
        S, _ = _radius_reduce(self, X, ember.concatenate([Y, ones], axis=1))
        tot = S[:, -1:]
        out = S[:, :-1] / ember.where(tot == 0, float("nan"), tot)
        if bool(ember.isnan(out).any()):  # one host flag for the warning
            warnings.warn(
                "One or more samples have no neighbors within specified radius; predicting NaN.",
                UserWarning,
                stacklevel=2,
            )
        if self._y.ndim == 1:
            out = out[:, 0]
        return to_output(out, _kind(X, self))
