"""``ComplementNB`` and ``CategoricalNB`` on X's device.

Complement NB: per-class feature counts are one matmul of the (weighted) one-hot labels with
X; the complement counts are the all-class totals minus them. Categorical NB: per feature, the
class-by-category counts are the one-hot labels times the one-hot categories (one matmul per
feature); the joint log-likelihood gathers each sample's category column with ``take``.
"""

from __future__ import annotations

import numbers

import numpy as np

import ember

from ..utils._param_validation import Interval
from ..utils.validation import check_array, check_n_features, to_device, to_output
from ._naive_bayes import _DiscreteNB

__all__ = ["CategoricalNB", "ComplementNB"]

_COMMON = {
    "alpha": [Interval(numbers.Real, 0, None, closed="left"), "array-like"],
    "force_alpha": ["boolean"],
    "fit_prior": ["boolean"],
    "class_prior": ["array-like", None],
}


class ComplementNB(_DiscreteNB):
    """Complement naive Bayes: each class is scored by the weights of its complement's
    feature distribution (suited to imbalanced text counts)."""

    _parameter_constraints = {**_COMMON, "norm": ["boolean"]}

    def __init__(
        self, *, alpha=1.0, force_alpha=True, fit_prior=True, class_prior=None, norm=False
    ):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.norm = norm

    def _check_non_negative(self, Xf):
        if bool((Xf < 0).any()):
            raise ValueError("Negative values in data passed to ComplementNB (input X).")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.classifier_tags.poor_score = True
        return tags

    def fit(self, X, y, sample_weight=None):
        """Per-class feature counts and complement log-weights."""
        Xf, fc, cc, K, kind, alpha = self._fit_counts(X, y, sample_weight)
        total = fc.sum(axis=0)
        comp = total[None, :] + alpha - fc
        logged = ember.log(comp / comp.sum(axis=1, keepdims=True))
        flp = logged / logged.sum(axis=1, keepdims=True) if self.norm else -logged
        self._set_common(fc, cc, K, kind, flp)
        self.feature_all_ = to_output(total, kind)
        return self

    def _jll(self, Xf):
        dev = Xf.device
        flp = to_device(self.feature_log_prob_, dev).astype(ember.float64)
        j = ember.matmul(Xf, flp.T)
        if int(flp.shape[0]) == 1:
            j = j + to_device(self.class_log_prior_, dev).astype(ember.float64)[None, :]
        return j


class CategoricalNB(_DiscreteNB):
    """Naive Bayes for categorical features coded 0, 1, 2, ... per column."""

    _parameter_constraints = {
        **_COMMON,
        "min_categories": [None, "array-like", Interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(
        self, *, alpha=1.0, force_alpha=True, fit_prior=True, class_prior=None, min_categories=None
    ):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.min_categories = min_categories

    def _check_non_negative(self, Xf):
        if bool((Xf < 0).any()):
            raise ValueError("Negative values in data passed to CategoricalNB (input X).")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags

    def _n_categories(self, n_x):
        if self.min_categories is None:
            return n_x
        mc = np.array(self.min_categories)
        if not np.issubdtype(mc.dtype, np.signedinteger):
            raise ValueError(f"'min_categories' should have integral type. Got {mc.dtype} instead.")
        if mc.ndim > 1 or (mc.ndim == 1 and mc.shape != n_x.shape):
            raise ValueError(
                f"'min_categories' should have shape ({n_x.shape[0]},) when an array-like is "
                f"provided. Got {mc.shape} instead."
            )
        return np.maximum(n_x, mc, dtype=np.int64)

    def fit(self, X, y, sample_weight=None):
        """Per feature, class-by-category counts and smoothed log-probabilities."""
        Xf, Y, K, kind = self._prepare(X, y, sample_weight)
        Xi = Xf.astype(ember.int64)  # scikit-learn casts X to int
        self._check_non_negative(Xi)
        alpha = float(self._alpha())
        dev = Xf.device
        n_x = ember.asnumpy(Xi.max(axis=0)).astype(np.int64) + 1  # d numbers, the attribute
        self.n_categories_ = self._n_categories(n_x)
        counts, flps = [], []
        for i, c in enumerate(self.n_categories_.tolist()):
            onehot = (Xi[:, i][:, None] == ember.arange(c, device=dev)[None, :]).astype(
                ember.float64
            )
            cnt = ember.matmul(Y.T, onehot)
            sm = cnt + alpha
            counts.append(to_output(cnt, kind))
            flps.append(to_output(ember.log(sm) - ember.log(sm.sum(axis=1, keepdims=True)), kind))
        cc = Y.sum(axis=0)
        self.class_count_ = to_output(cc, kind)
        self.category_count_ = counts
        self.feature_log_prob_ = flps
        self.class_log_prior_ = to_output(
            self._priors(cc, K, self.class_prior, self.fit_prior, dev), kind
        )
        return self

    def _check_X(self, X):
        from ..base import check_is_fitted

        check_is_fitted(self, "classes_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        Xi = Xa.astype(ember.int64)
        self._check_non_negative(Xi)
        return Xi

    def _jll(self, Xi):
        dev = Xi.device
        j = to_device(self.class_log_prior_, dev).astype(ember.float64)[None, :]
        for i, flp in enumerate(self.feature_log_prob_):
            f = to_device(flp, dev).astype(ember.float64)
            c = int(f.shape[1])
            col = Xi[:, i]
            if bool((col >= c).any()):
                bad = int(col.max())
                raise IndexError(
                    f"index {bad} is out of bounds for axis 1 with size {c} (feature {i} of "
                    "CategoricalNB has a category not seen in fit)"
                )
            j = j + ember.take(f, col, axis=1).T
        return j
