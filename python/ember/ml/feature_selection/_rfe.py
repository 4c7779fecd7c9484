"""``RFE`` (scikit-learn's recursive feature elimination): refit the estimator on the surviving
columns (gathered on X's device with ``ember.take``) and drop the ``step`` least important ones
until ``n_features_to_select`` remain. The ranking bookkeeping (one integer per feature) lives
on the host; importances are squared ``coef_`` (summed over classes) or
``feature_importances_``, as scikit-learn's."""

from __future__ import annotations

import numbers

import numpy as np

import ember

from ..base import clone
from ..utils._param_validation import Interval
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    to_device,
    to_output,
)
from ._from_model import _get_importances
from ._univariate import _Selector

__all__ = ["RFE"]


class _IfEstimatorHas:
    """A method that exists only when the (fitted, else given) estimator has it, so that
    ``hasattr(rfe, 'predict_proba')`` follows the wrapped estimator as in scikit-learn."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.fn
        inner = obj.__dict__.get("estimator_", obj.estimator)
        if not hasattr(inner, self.fn.__name__):
            raise AttributeError(
                f"This {type(obj).__name__!r} has no attribute {self.fn.__name__!r}: its "
                f"estimator {type(inner).__name__} does not have it"
            )
        return self.fn.__get__(obj, owner)


class RFE(_Selector):
    """Feature ranking with recursive feature elimination."""

    _parameter_constraints = {
        "estimator": [object],
        "n_features_to_select": [
            None,
            Interval(numbers.Real, 0, 1, closed="right"),
            Interval(numbers.Integral, 0, None, closed="neither"),
        ],
        "step": [
            Interval(numbers.Integral, 0, None, closed="neither"),
            Interval(numbers.Real, 0, 1, closed="neither"),
        ],
        "verbose": [Interval(numbers.Integral, 0, None, closed="left"), "boolean"],
        "importance_getter": [str, callable],
    }

    def __init__(
        self, estimator, *, n_features_to_select=None, step=1, verbose=0, importance_getter="auto"
    ):
        self.estimator = estimator
        self.n_features_to_select = n_features_to_select
        self.step = step
        self.verbose = verbose
        self.importance_getter = importance_getter

    @property
    def classes_(self):
        return self.estimator_.classes_

    def _sub(self, Xa, features, kind):
        idx = to_device(np.asarray(features, dtype=np.int64), Xa.device)
        return to_output(ember.take(Xa, idx, axis=1), kind)

    def fit(self, X, y, **fit_params):
        """Rank the features by recursive elimination and fit ``estimator_`` on the kept ones."""
        self._validate_params()
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=True)
        kind = input_kind(X)
        n = Xa.shape[1]
        nsel = self.n_features_to_select
        if nsel is None:
            nsel = n // 2
        elif isinstance(nsel, numbers.Integral):
            nsel = int(nsel)
        else:
            nsel = int(n * nsel)
        step = int(self.step) if self.step >= 1 else int(max(1, self.step * n))
        support = np.ones(n, dtype=bool)
        ranking = np.ones(n, dtype=np.int64)
        while support.sum() > nsel:
            features = np.flatnonzero(support)
            est = clone(self.estimator)
            est.fit(self._sub(Xa, features, kind), y, **fit_params)
            imp = _get_importances(est, self.importance_getter, "square", who="RFE")
            ranks = np.ravel(np.argsort(imp, kind="stable"))
            cut = min(step, int(support.sum()) - nsel)
            support[features[ranks][:cut]] = False
            ranking[~support] += 1
        self.estimator_ = clone(self.estimator)
        self.estimator_.fit(self._sub(Xa, np.flatnonzero(support), kind), y, **fit_params)
        self.n_features_ = int(support.sum())
        self.support_ = support
        self.ranking_ = ranking
        return self

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_

    def _reduced(self, X):
        check_is_fitted(self, "support_")
        return self.transform(X)

    @_IfEstimatorHas
    def predict(self, X):
        """The estimator's prediction on the selected features."""
        Xr = self._reduced(X)  # NotFittedError before estimator_ is read
        return self.estimator_.predict(Xr)

    @_IfEstimatorHas
    def score(self, X, y, **kw):
        """The estimator's score on the selected features."""
        Xr = self._reduced(X)
        return self.estimator_.score(Xr, y, **kw)

    @_IfEstimatorHas
    def decision_function(self, X):
        Xr = self._reduced(X)  # NotFittedError before estimator_ is read
        return self.estimator_.decision_function(Xr)

    @_IfEstimatorHas
    def predict_proba(self, X):
        Xr = self._reduced(X)  # NotFittedError before estimator_ is read
        return self.estimator_.predict_proba(Xr)

    @_IfEstimatorHas
    def predict_log_proba(self, X):
        Xr = self._reduced(X)  # NotFittedError before estimator_ is read
        return self.estimator_.predict_log_proba(Xr)
