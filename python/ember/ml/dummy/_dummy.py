"""``DummyClassifier`` and ``DummyRegressor``: baselines that ignore X.

Class priors are weighted ``bincount``s of the encoded labels on the target's device; the
regressor's constants are (weighted) means/percentiles there. Predictions are built on X's
device (ember X) or the default device (host X, returned as NumPy). The random strategies draw
from a NumPy RandomState seeded like scikit-learn's ``check_random_state`` (n labels of host
bookkeeping, sent to the device once), so ``random_state=int`` gives scikit-learn's predictions.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, ClassifierMixin, RegressorMixin, check_is_fitted
from ..utils._labels import encode_labels
from ..utils._param_validation import Interval, StrOptions
from ..utils._stats import weighted_percentile
from ..utils.validation import (
    _host,
    check_array,
    check_sample_weight,
    device_of,
    input_kind,
    is_ember,
    to_device,
    to_output,
)

__all__ = ["DummyClassifier", "DummyRegressor"]


def _num_samples(X):
    if hasattr(X, "shape") and len(X.shape) > 0:
        return int(X.shape[0])
    if hasattr(X, "__len__"):
        return len(X)
    if hasattr(X, "__array__"):
        return int(np.asarray(X).shape[0])
    raise TypeError(f"Expected sequence or array-like, got {type(X).__name__}")


def _record_features(est, X):
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) == 2:
        est.n_features_in_ = int(shape[1])
    else:
        est.__dict__.pop("n_features_in_", None)
    cols = getattr(X, "columns", None)
    if cols is not None and all(isinstance(c, str) for c in cols):
        est.feature_names_in_ = np.asarray(list(cols), dtype=object)
    else:
        est.__dict__.pop("feature_names_in_", None)


def _np_rng(random_state):
    from ..model_selection._split import _np_rng as r

    return r(random_state)


def _weights_on(sample_weight, n, dev):
    if sample_weight is None:
        return None
    ref = ember.empty((n, 1), dtype=ember.float64, device=dev)
    return check_sample_weight(sample_weight, ref, ember.float64)


class DummyClassifier(ClassifierMixin, BaseEstimator):
    """Predicts without looking at X: the class prior, the most frequent class, random draws
    (stratified or uniform) or a constant."""

    _parameter_constraints = {
        "strategy": [StrOptions({"most_frequent", "prior", "stratified", "uniform", "constant"})],
        "random_state": ["random_state"],
        "constant": [Integral, str, "array-like", None],
    }
    _non_deterministic = True

    def __init__(self, *, strategy="prior", random_state=None, constant=None):
        self.strategy = strategy
        self.random_state = random_state
        self.constant = constant

    def fit(self, X, y, sample_weight=None):
        """Record the classes and their (weighted) frequencies."""
        self._validate_params()
        _record_features(self, X)
        yh = _host(y)
        if not is_ember(yh):
            yh = np.atleast_1d(np.asarray(yh))
        if yh.ndim == 1:
            yh = yh.reshape(-1, 1)
        n = int(yh.shape[0])
        if _num_samples(X) != n:
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"[{_num_samples(X)}, {n}]"
            )
        self.n_outputs_ = int(yh.shape[1])
        self.sparse_output_ = False
        dev = device_of(yh)
        w = _weights_on(sample_weight, n, dev)
        if self.strategy == "constant":
            if self.constant is None:
                raise ValueError(
                    "Constant target value has to be specified when the constant strategy is used."
                )
            const = np.reshape(np.atleast_1d(np.asarray(self.constant)), (-1, 1))
            if const.shape[0] != self.n_outputs_:
                raise ValueError(f"Constant target value should have shape ({self.n_outputs_}, 1).")
        classes, n_classes, priors = [], [], []
        for k in range(self.n_outputs_):
            col = yh[:, k]
            c, idx = encode_labels(col, dev)
            K = int(c.shape[0])
            cnt = ember.bincount(idx, weights=w, minlength=K).astype(ember.float64)
            priors.append(ember.asnumpy(cnt / cnt.sum()))  # K numbers, the fitted attribute
            classes.append(ember.asnumpy(c) if is_ember(c) else c)
            n_classes.append(K)
        if self.strategy == "constant":
            for k in range(self.n_outputs_):
                if not any(const[k][0] == c for c in classes[k]):
                    raise ValueError(
                        "The constant target value must be present in the training data. You "
                        f"provided constant={self.constant}. Possible values are: "
                        f"{classes[k].tolist()}."
                    )
        if self.n_outputs_ == 1:
            self.classes_, self.n_classes_, self.class_prior_ = classes[0], n_classes[0], priors[0]
        else:
            self.classes_, self.n_classes_, self.class_prior_ = classes, n_classes, priors
        self._strategy = self.strategy
        return self

    def _lists(self):
        if self.n_outputs_ == 1:
            return [self.classes_], [self.n_classes_], [self.class_prior_], [self.constant]
        return self.classes_, self.n_classes_, self.class_prior_, list(self.constant or [])

    def predict_proba(self, X):
        """Class probabilities (n_samples, n_classes) per output (a list for several)."""
        check_is_fitted(self, "classes_")
        n = _num_samples(X)
        dev, kind = device_of(X), input_kind(X)
        rs = _np_rng(self.random_state)
        classes, n_classes, priors, constant = self._lists()
        out = []
        for k in range(self.n_outputs_):
            K = n_classes[k]
            prior = to_device(priors[k], dev)
            ar = ember.arange(K, device=dev)
            if self._strategy == "most_frequent":
                P = ember.broadcast_to((ar == int(np.argmax(priors[k])))[None, :], (n, K))
            elif self._strategy == "prior":
                P = ember.ones((n, 1), dtype=ember.float64, device=dev) * prior[None, :]
            elif self._strategy == "stratified":
                P = to_device(rs.multinomial(1, priors[k], size=n), dev)
            elif self._strategy == "uniform":
                P = ember.full((n, K), 1.0 / K, dtype=ember.float64, device=dev)
            else:
                pos = int(np.nonzero(np.asarray(classes[k]) == constant[k])[0][0])
                P = ember.broadcast_to((ar == pos)[None, :], (n, K))
            out.append(to_output(P.astype(ember.float64), kind))
        return out[0] if self.n_outputs_ == 1 else out

    def predict_log_proba(self, X):
        """Logarithm of ``predict_proba``."""
        P = self.predict_proba(X)
        log = ember.log if input_kind(X) == "ember" else np.log
        with np.errstate(divide="ignore"):
            return log(P) if self.n_outputs_ == 1 else [log(p) for p in P]

    def predict(self, X):
        """Predicted labels (n_samples,) or (n_samples, n_outputs)."""
        check_is_fitted(self, "classes_")
        n = _num_samples(X)
        dev, kind = device_of(X), input_kind(X)
        classes, n_classes, priors, constant = self._lists()
        if self._strategy == "stratified":
            P = self.predict_proba(X)
            P = [P] if self.n_outputs_ == 1 else P
        rs = _np_rng(self.random_state)
        cols = []
        for k in range(self.n_outputs_):
            c = np.asarray(classes[k])
            if self._strategy in ("most_frequent", "prior"):
                idx = ember.full((n,), int(np.argmax(priors[k])), dtype=ember.int64, device=dev)
            elif self._strategy == "stratified":
                idx = ember.argmax(to_device(P[k], dev), axis=1)
            elif self._strategy == "uniform":
                idx = to_device(rs.randint(n_classes[k], size=n).astype(np.int64), dev)
            else:
                pos = int(np.nonzero(c == constant[k])[0][0])
                idx = ember.full((n,), pos, dtype=ember.int64, device=dev)
            if c.dtype.kind in "OUSb" or kind == "numpy":
                cols.append(c[ember.asnumpy(idx)])
            else:
                cols.append(ember.take(to_device(c, dev), idx))
        if self.n_outputs_ == 1:
            return to_output(cols[0], kind) if is_ember(cols[0]) else cols[0]
        if all(is_ember(v) for v in cols):
            return to_output(ember.stack(cols, axis=1), kind)
        return np.stack([ember.asnumpy(v) if is_ember(v) else v for v in cols], axis=1)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        tags.no_validation = True  # X is never looked at, as scikit-learn's
        tags.input_tags.sparse = True
        return tags

    def score(self, X, y, sample_weight=None):
        """Mean accuracy; ``X=None`` stands for ``len(y)`` samples."""
        if X is None:
            X = np.zeros((len(y), 1))
        return super().score(X, y, sample_weight)


class DummyRegressor(RegressorMixin, BaseEstimator):
    """Predicts a constant: the (weighted) mean, median, a quantile or a given value."""

    _parameter_constraints = {
        "strategy": [StrOptions({"mean", "median", "quantile", "constant"})],
        "quantile": [Interval(Real, 0.0, 1.0, closed="both"), None],
        "constant": [Interval(Real, None, None, closed="neither"), "array-like", None],
    }

    def __init__(self, *, strategy="mean", constant=None, quantile=None):
        self.strategy = strategy
        self.constant = constant
        self.quantile = quantile

    def fit(self, X, y, sample_weight=None):
        """Compute the constant prediction from y."""
        self._validate_params()
        _record_features(self, X)
        ya = check_array(y, estimator="DummyRegressor", input_name="y", ensure_2d=False)
        if ya.shape[0] == 0:
            raise ValueError("y must not be empty.")
        if ya.ndim == 1:
            ya = ya.reshape(-1, 1)
        n = int(ya.shape[0])
        if _num_samples(X) != n:
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"[{_num_samples(X)}, {n}]"
            )
        self.n_outputs_ = int(ya.shape[1])
        w = _weights_on(sample_weight, n, ya.device)
        yf = ya.astype(ember.float64)
        if self.strategy == "mean":
            c = yf.mean(axis=0) if w is None else (yf * w[:, None]).sum(axis=0) / w.sum()
        elif self.strategy == "median":
            c = ember.median(yf, axis=0) if w is None else weighted_percentile(yf, w, 50.0)
        elif self.strategy == "quantile":
            if self.quantile is None:
                raise ValueError(
                    "When using `strategy='quantile', you have to specify the desired quantile "
                    "in the range [0, 1]."
                )
            q = self.quantile * 100.0
            c = ember.percentile(yf, q, axis=0) if w is None else weighted_percentile(yf, w, q)
        else:
            if self.constant is None:
                raise TypeError(
                    "Constant target value has to be specified when the constant strategy is used."
                )
            c = check_array(
                self.constant,
                estimator="DummyRegressor",
                input_name="constant",
                ensure_2d=False,
                ensure_min_samples=0,
                device=ya.device,
            )
            if self.n_outputs_ != 1 and c.reshape(-1).shape[0] != self.n_outputs_:
                raise ValueError(f"Constant target value should have shape ({self.n_outputs_}, 1).")
        c = c.reshape(1, -1)
        self.constant_ = to_output(c, input_kind(y))
        return self

    def predict(self, X, return_std=False):
        """The constant for every sample (and zeros as the standard deviation)."""
        check_is_fitted(self, "constant_")
        n = _num_samples(X)
        dev, kind = device_of(X), input_kind(X)
        c = to_device(self.constant_, dev)
        y = ember.broadcast_to(c, (n, self.n_outputs_)) + ember.zeros(
            (n, self.n_outputs_), dtype=c.dtype, device=dev
        )
        std = ember.zeros((n, self.n_outputs_), dtype=ember.float64, device=dev)
        if self.n_outputs_ == 1:
            y, std = y.reshape(-1), std.reshape(-1)
        y, std = to_output(y, kind), to_output(std, kind)
        return (y, std) if return_std else y

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        tags.no_validation = True
        tags.input_tags.sparse = True
        return tags

    def score(self, X, y, sample_weight=None):
        """R^2 of the constant prediction; ``X=None`` stands for ``len(y)`` samples."""
        if X is None:
            X = np.zeros((len(y), 1))
        return super().score(X, y, sample_weight)
