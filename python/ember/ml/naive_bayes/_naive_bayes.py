"""``GaussianNB``, ``MultinomialNB`` and ``BernoulliNB`` on X's device: per-class sums are one
matmul of the one-hot label matrix with X (weighted by ``sample_weight``); predictions are an
argmax of the joint log-likelihood, probabilities its softmax."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

import ember

from ..base import BaseEstimator, ClassifierMixin
from ..utils._labels import decode_labels, encode_labels
from ..utils._param_validation import Interval
from ..utils.validation import (
    check_array,
    check_classification_targets,
    check_is_fitted,
    check_n_features,
    check_sample_weight,
    check_X_y,
    input_kind,
    is_ember,
    to_device,
    to_output,
)

__all__ = ["BernoulliNB", "GaussianNB", "MultinomialNB"]


class _BaseNB(ClassifierMixin, BaseEstimator):
    def _prepare(self, X, y, sample_weight):
        self._validate_params()
        Xa, ya = check_X_y(X, y, estimator=self)
        check_classification_targets(ya, type(self).__name__)
        check_n_features(self, Xa, reset=True)
        kind = input_kind(X)
        dev = Xa.device
        yk = ya if input_kind(y) == "ember" else ember.asnumpy(ya)
        classes, yi = encode_labels(yk, dev)
        K = int(classes.shape[0])
        Xf = Xa.astype(ember.float64)
        Y = (yi[:, None] == ember.arange(K, device=dev)[None, :]).astype(ember.float64)
        if sample_weight is not None:
            Y = Y * check_sample_weight(sample_weight, Xf, ember.float64)[:, None]
        self.classes_ = (
            classes
            if kind == "ember"
            else (ember.asnumpy(classes) if is_ember(classes) else classes)
        )
        self._dtype = Xa.dtype
        return Xf, Y, K, kind

    def _priors(self, counts, K, given, fit_prior, dev):
        if given is not None:
            p = to_device(
                np.asarray(ember.asnumpy(given) if is_ember(given) else given, dtype=np.float64),
                dev,
            )
            if int(p.shape[0]) != K:
                raise ValueError("Number of priors must match number of classes.")
            return ember.log(p)
        if fit_prior:
            return ember.log(counts) - ember.log(counts.sum())
        return ember.full((K,), -np.log(K), dtype=ember.float64, device=dev)

    def _check_X(self, X):
        check_is_fitted(self, "classes_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        return Xa.astype(ember.float64)

    def predict_joint_log_proba(self, X):
        """log P(x, c) for every class (columns in ``classes_`` order)."""
        return to_output(self._jll(self._check_X(X)).astype(self._dtype), input_kind(X))

    def predict_log_proba(self, X):
        j = self._jll(self._check_X(X))
        out = j - ember.special.logsumexp(j, 1, keepdim=True)
        return to_output(out.astype(self._dtype), input_kind(X))

    def predict_proba(self, X):
        j = self._jll(self._check_X(X))
        out = ember.exp(j - ember.special.logsumexp(j, 1, keepdim=True))
        return to_output(out.astype(self._dtype), input_kind(X))

    def predict(self, X):
        idx = ember.argmax(self._jll(self._check_X(X)), axis=1)
        return decode_labels(self.classes_, idx, input_kind(X))


class GaussianNB(_BaseNB):
    """Gaussian naive Bayes: per-class feature means and variances (plus
    ``var_smoothing`` times the largest feature variance)."""

    _parameter_constraints = {
        "priors": ["array-like", None],
        "var_smoothing": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __init__(self, *, priors=None, var_smoothing=1e-9):
        self.priors = priors
        self.var_smoothing = var_smoothing

    def fit(self, X, y, sample_weight=None):
        Xf, Y, K, kind = self._prepare(X, y, sample_weight)
        dev = Xf.device
        counts = Y.sum(axis=0)
        theta = ember.matmul(Y.T, Xf) / counts[:, None]
        # Two-pass variance: the squared deviations from each class mean.
        var = ember.stack(
            [
                (Y[:, k][:, None] * (Xf - theta[k][None, :]) ** 2).sum(axis=0) / counts[k]
                for k in range(K)
            ],
            axis=0,
        )
        eps = self.var_smoothing * float(Xf.var(axis=0).max())
        var = var + eps
        if self.priors is not None:
            p = np.asarray(
                ember.asnumpy(self.priors) if is_ember(self.priors) else self.priors,
                dtype=np.float64,
            )
            if p.shape[0] != K:
                raise ValueError("Number of priors must match number of classes.")
            if not np.isclose(p.sum(), 1.0):
                raise ValueError("The sum of the priors should be 1.")
            if (p < 0).any():
                raise ValueError("Priors must be non-negative.")
            prior = to_device(p, dev)
        else:
            prior = counts / counts.sum()
        self.epsilon_ = eps
        self.theta_ = to_output(theta, kind)
        self.var_ = to_output(var, kind)
        self.class_count_ = to_output(counts, kind)
        self.class_prior_ = to_output(prior, kind)
        return self

    def _jll(self, Xf):
        dev = Xf.device
        theta = to_device(self.theta_, dev).astype(ember.float64)
        var = to_device(self.var_, dev).astype(ember.float64)
        prior = to_device(self.class_prior_, dev).astype(ember.float64)
        n_ij = -0.5 * ember.log(2.0 * np.pi * var).sum(axis=1)
        # sum_j (x_j - t_kj)^2 / v_kj expanded into matmuls
        inv = 1.0 / var
        quad = (
            ember.matmul(Xf * Xf, inv.T)
            - 2.0 * ember.matmul(Xf, (theta * inv).T)
            + (theta * theta * inv).sum(axis=1)[None, :]
        )
        return ember.log(prior)[None, :] + n_ij[None, :] - 0.5 * quad


class _DiscreteNB(_BaseNB):
    def _alpha(self):
        a = np.asarray(self.alpha, dtype=np.float64)
        if (a < 0).any():
            raise ValueError("All values in alpha must be greater than 0.")
        if not self.force_alpha and (a < 1e-10).any():
            warnings.warn(
                "alpha too small will result in numeric errors, setting alpha = 1.0e-10. Use "
                "`force_alpha=True` to keep alpha unchanged.",
                UserWarning,
                stacklevel=3,
            )
            a = np.maximum(a, 1e-10)
        return a

    def _fit_counts(self, X, y, sample_weight, binarize=None):
        Xf, Y, K, kind = self._prepare(X, y, sample_weight)
        if binarize is not None:
            Xf = (Xf > binarize).astype(ember.float64)
        self._check_non_negative(Xf)
        fc = ember.matmul(Y.T, Xf)
        cc = Y.sum(axis=0)
        alpha = to_device(self._alpha(), Xf.device)
        return Xf, fc, cc, K, kind, alpha

    def _check_non_negative(self, Xf):
        pass

    def _set_common(self, fc, cc, K, kind, flp):
        self.feature_count_ = to_output(fc, kind)
        self.class_count_ = to_output(cc, kind)
        clp = self._priors(cc, K, self.class_prior, self.fit_prior, fc.device)
        self.class_log_prior_ = to_output(clp, kind)
        self.feature_log_prob_ = to_output(flp, kind)


class MultinomialNB(_DiscreteNB):
    """Multinomial naive Bayes for counts (additive smoothing ``alpha``)."""

    _parameter_constraints = {
        "alpha": [Interval(numbers.Real, 0, None, closed="left"), "array-like"],
        "force_alpha": ["boolean"],
        "fit_prior": ["boolean"],
        "class_prior": ["array-like", None],
    }

    def __init__(self, *, alpha=1.0, force_alpha=True, fit_prior=True, class_prior=None):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior

    def _check_non_negative(self, Xf):
        if bool((Xf < 0).any()):
            raise ValueError("Negative values in data passed to MultinomialNB (input X).")

    def fit(self, X, y, sample_weight=None):
        Xf, fc, cc, K, kind, alpha = self._fit_counts(X, y, sample_weight)
        sm = fc + alpha
        flp = ember.log(sm) - ember.log(sm.sum(axis=1, keepdims=True))
        self._set_common(fc, cc, K, kind, flp)
        return self

    def _jll(self, Xf):
        dev = Xf.device
        flp = to_device(self.feature_log_prob_, dev).astype(ember.float64)
        clp = to_device(self.class_log_prior_, dev).astype(ember.float64)
        return ember.matmul(Xf, flp.T) + clp[None, :]


class BernoulliNB(_DiscreteNB):
    """Bernoulli naive Bayes for binary features (X thresholded at ``binarize``)."""

    _parameter_constraints = {
        "alpha": [Interval(numbers.Real, 0, None, closed="left"), "array-like"],
        "force_alpha": ["boolean"],
        "binarize": [None, Interval(numbers.Real, None, None, closed="neither")],
        "fit_prior": ["boolean"],
        "class_prior": ["array-like", None],
    }

    def __init__(
        self, *, alpha=1.0, force_alpha=True, binarize=0.0, fit_prior=True, class_prior=None
    ):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.binarize = binarize
        self.fit_prior = fit_prior
        self.class_prior = class_prior

    def fit(self, X, y, sample_weight=None):
        Xf, fc, cc, K, kind, alpha = self._fit_counts(X, y, sample_weight, self.binarize)
        flp = ember.log(fc + alpha) - ember.log(cc + 2 * alpha)[:, None]
        self._set_common(fc, cc, K, kind, flp)
        return self

    def _jll(self, Xf):
        dev = Xf.device
        if self.binarize is not None:
            Xf = (Xf > self.binarize).astype(ember.float64)
        flp = to_device(self.feature_log_prob_, dev).astype(ember.float64)
        clp = to_device(self.class_log_prior_, dev).astype(ember.float64)
        neg = ember.log(1 - ember.exp(flp))
        return ember.matmul(Xf, (flp - neg).T) + clp[None, :] + neg.sum(axis=1)[None, :]
