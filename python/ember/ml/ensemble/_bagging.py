"""``BaggingClassifier`` and ``BaggingRegressor`` (scikit-learn's ``sklearn.ensemble``).

Each member is a clone of the base estimator (default: ``ember.ml`` decision trees) fitted
on rows drawn with or without replacement and on a subset of the features, both drawn with
``ember.random.default_rng`` on X's device and gathered with ``ember.take`` there. The
classifier averages the members' probabilities (mapped onto all classes by a one-hot
matrix product, since a member may see only some classes), or counts their votes when the
base has no ``predict_proba``; the regressor averages the predictions. The random streams
differ from scikit-learn's, so results match it only where no sampling happens
(``bootstrap=False`` with all rows and features).
"""

from __future__ import annotations

import numbers

import numpy as np

import ember

from ..base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from ..utils._labels import decode_labels, encode_labels
from ..utils._param_validation import HasMethods, Interval
from ..utils.validation import (
    check_array,
    check_classification_targets,
    check_is_fitted,
    check_n_features,
    check_X_y,
    input_kind,
    is_ember,
    to_output,
)

__all__ = ["BaggingClassifier", "BaggingRegressor"]


def _as_ember(a, device):
    if is_ember(a):
        return a if str(a.device) == str(device) else ember.asarray(a, device=device)
    return ember.asarray(np.asarray(a), device=device)


def _count(value, total, name, who):
    """An int count from an int or a fraction of ``total`` (ValueError when out of range)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        n = int(value)
    else:
        n = max(1, int(float(value) * total))
    if not 0 < n <= total:
        raise ValueError(f"{who}: {name} must be in (0, {total}], got {value!r}")
    return n


class _BaseBagging(BaseEstimator):
    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "n_estimators": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_samples": [
            Interval(numbers.Integral, 1, None, closed="left"),
            Interval(numbers.Real, 0, 1, closed="right"),
        ],
        "max_features": [
            Interval(numbers.Integral, 1, None, closed="left"),
            Interval(numbers.Real, 0, 1, closed="right"),
        ],
        "bootstrap": ["boolean"],
        "bootstrap_features": ["boolean"],
        "n_jobs": [numbers.Integral, None],
        "random_state": ["random_state"],
        "verbose": [numbers.Integral, "boolean"],
    }

    def __init__(
        self,
        estimator=None,
        n_estimators=10,
        *,
        max_samples=1.0,
        max_features=1.0,
        bootstrap=True,
        bootstrap_features=False,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.bootstrap_features = bootstrap_features
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _seed(self):
        rs = self.random_state
        if rs is None:
            return None
        if isinstance(rs, (int, np.integer)):
            return int(rs)
        if isinstance(rs, np.random.RandomState):
            return int(rs.randint(np.iinfo(np.int32).max))
        return int(rs.integers(np.iinfo(np.int32).max))

    def _fit_members(self, Xa, y):
        who = type(self).__name__
        n, F = int(Xa.shape[0]), int(Xa.shape[1])
        ns = _count(self.max_samples, n, "max_samples", who)
        nf = _count(self.max_features, F, "max_features", who)
        dev = Xa.device
        rng = ember.random.default_rng(self._seed())
        base = self.estimator if self.estimator is not None else self._default_estimator()
        self.estimator_ = base
        self.estimators_, self.estimators_samples_, self.estimators_features_ = [], [], []
        for _ in range(self.n_estimators):
            if self.bootstrap_features:
                feats = rng.integers(0, F, size=nf)
            else:
                feats = rng.permutation(F)[:nf]
            if self.bootstrap:
                rows = rng.integers(0, n, size=ns)
            else:
                rows = rng.permutation(n)[:ns]
            feats = _as_ember(feats, dev).astype(ember.int64)
            rows = _as_ember(rows, dev).astype(ember.int64)
            Xs = ember.take(ember.take(Xa, rows, axis=0), feats, axis=1)
            est = clone(base)
            if "random_state" in est.get_params(deep=False):
                est.set_params(random_state=int(rng.integers(0, np.iinfo(np.int32).max)))
            est.fit(Xs, ember.take(y, rows))
            self.estimators_.append(est)
            self.estimators_samples_.append(rows)
            self.estimators_features_.append(feats)
        self.n_estimators_ = self.n_estimators

    def _X(self, X):
        check_is_fitted(self, "estimators_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        return Xa

    def _sub(self, Xa, k):
        return ember.take(Xa, self.estimators_features_[k], axis=1)


class BaggingClassifier(ClassifierMixin, _BaseBagging):
    """Bagged classifiers: averaged probabilities (or votes when the base has no
    ``predict_proba``)."""

    def _default_estimator(self):
        from ..tree import DecisionTreeClassifier

        return DecisionTreeClassifier()

    def fit(self, X, y):
        self._validate_params()
        Xa, ya = check_X_y(X, y, estimator=self)
        check_classification_targets(ya, type(self).__name__)
        check_n_features(self, Xa, reset=True)
        yk = ya if input_kind(y) == "ember" else (ember.asnumpy(ya) if is_ember(ya) else ya)
        self.classes_, yi = encode_labels(yk, Xa.device)
        self.n_classes_ = int(self.classes_.shape[0])
        self._fit_members(Xa, yi)
        return self

    def _onehot(self, est_classes, dev):
        c = _as_ember(est_classes, dev).astype(ember.int64)
        ar = ember.arange(self.n_classes_, device=dev)
        return (c[:, None] == ar[None, :]).astype(ember.float64)

    def _proba(self, Xa):
        dev = Xa.device
        n = int(Xa.shape[0])
        P = ember.zeros((n, self.n_classes_), dtype=ember.float64, device=dev)
        soft = hasattr(self.estimators_[0], "predict_proba")
        for k, est in enumerate(self.estimators_):
            Xs = self._sub(Xa, k)
            if soft:
                p = _as_ember(est.predict_proba(Xs), dev).astype(ember.float64)
                P = P + p @ self._onehot(est.classes_, dev)
            else:
                pred = _as_ember(est.predict(Xs), dev).reshape(-1).astype(ember.int64)
                ar = ember.arange(self.n_classes_, device=dev)
                P = P + (pred[:, None] == ar[None, :]).astype(ember.float64)
        return P / len(self.estimators_)

    def predict_proba(self, X):
        """Mean of the members' class probabilities (vote fractions without predict_proba)."""
        Xa = self._X(X)
        return to_output(self._proba(Xa), input_kind(X))

    def predict_log_proba(self, X):
        Xa = self._X(X)
        return to_output(ember.log(self._proba(Xa)), input_kind(X))

    def predict(self, X):
        Xa = self._X(X)
        idx = ember.argmax(self._proba(Xa), axis=1)
        return decode_labels(self.classes_, idx, input_kind(X))

    def decision_function(self, X):
        """Mean of the members' decision functions (bases that have one)."""
        if not hasattr(self.estimators_[0], "decision_function"):
            raise AttributeError(
                f"BaggingClassifier: the base estimator {type(self.estimators_[0]).__name__} "
                "has no attribute 'decision_function'"
            )
        Xa = self._X(X)
        dev = Xa.device
        acc = None
        for k, est in enumerate(self.estimators_):
            d = _as_ember(est.decision_function(self._sub(Xa, k)), dev).astype(ember.float64)
            acc = d if acc is None else acc + d
        return to_output(acc / len(self.estimators_), input_kind(X))


class BaggingRegressor(RegressorMixin, _BaseBagging):
    """Bagged regressors: the mean of the members' predictions."""

    def _default_estimator(self):
        from ..tree import DecisionTreeRegressor

        return DecisionTreeRegressor()

    def fit(self, X, y):
        self._validate_params()
        Xa, ya = check_X_y(X, y, estimator=self, y_numeric=True)
        check_n_features(self, Xa, reset=True)
        self._fit_members(Xa, ya)
        return self

    def predict(self, X):
        Xa = self._X(X)
        dev = Xa.device
        acc = None
        for k, est in enumerate(self.estimators_):
            p = _as_ember(est.predict(self._sub(Xa, k)), dev).reshape(-1).astype(ember.float64)
            acc = p if acc is None else acc + p
        return to_output(acc / len(self.estimators_), input_kind(X))
