"""``SelectFromModel`` (scikit-learn's): keep the features whose importance (``coef_`` or
``feature_importances_`` of a fitted estimator) reaches a threshold, optionally capped at
``max_features``. The estimator runs on X's device; the per-feature importance vector (one
number per feature) is read to the host for the threshold bookkeeping, as the kept-feature mask
of the other selectors; the columns are gathered on the device by ``_Selector.transform``."""

from __future__ import annotations

import copy
import numbers

import numpy as np

import ember

from ..base import clone
from ..exceptions import NotFittedError
from ..utils._param_validation import Interval
from ..utils.validation import check_array, check_n_features, input_kind, to_output
from ._univariate import _Selector

__all__ = ["SelectFromModel"]


def _host_vec(v):
    """A fitted attribute as a float64 NumPy array (an explicit host read: one value per
    feature, or per class and feature)."""
    return np.asarray(ember.asnumpy(v) if isinstance(v, ember.ndarray) else v, dtype=np.float64)


def _get_importances(estimator, getter, transform="norm", who="SelectFromModel", norm_order=1):
    """Feature importances of a fitted estimator ('auto': ``coef_`` then
    ``feature_importances_``; a dotted attribute path; or a callable)."""
    if callable(getter):
        imp = getter(estimator)
    elif getter == "auto":
        if hasattr(estimator, "coef_"):
            imp = estimator.coef_
        elif hasattr(estimator, "feature_importances_"):
            imp = estimator.feature_importances_
        else:
            raise ValueError(
                f"{who}: when `importance_getter=='auto'`, the underlying estimator "
                f"{type(estimator).__name__} should have `coef_` or `feature_importances_` "
                "attribute. Either pass a fitted estimator to feature selector or call fit "
                "before calling transform."
            )
    else:
        obj = estimator
        for part in str(getter).split("."):
            obj = getattr(obj, part)
        imp = obj
    imp = _host_vec(imp)
    if transform == "square":
        return imp**2 if imp.ndim == 1 else (imp**2).sum(axis=0)
    return np.abs(imp) if imp.ndim == 1 else np.linalg.norm(imp, axis=0, ord=norm_order)


def _threshold_value(threshold, estimator, importances):
    """Resolve None / 'mean' / 'median' / 'k*mean' / a number to a float."""
    if threshold is None:
        l1 = getattr(estimator, "penalty", None) == "l1" or "Lasso" in type(estimator).__name__
        threshold = 1e-5 if l1 else "mean"
    if isinstance(threshold, str):
        if "*" in threshold:
            scale, ref = threshold.split("*")
            scale, ref = float(scale.strip()), ref.strip()
        else:
            scale, ref = 1.0, threshold.strip()
        if ref == "median":
            return scale * float(np.median(importances))
        if ref == "mean":
            return scale * float(np.mean(importances))
        raise ValueError(
            f"SelectFromModel: expected threshold='mean' or threshold='median' got {threshold!r}"
        )
    return float(threshold)


class SelectFromModel(_Selector):
    """Meta-transformer keeping the features an estimator deems important."""

    _parameter_constraints = {
        "estimator": [object],
        "threshold": [str, Interval(numbers.Real, None, None, closed="both"), None],
        "prefit": ["boolean"],
        "norm_order": [Interval(numbers.Integral, None, None, closed="neither")],
        "max_features": [Interval(numbers.Integral, 0, None, closed="left"), callable, None],
        "importance_getter": [str, callable],
    }

    def __init__(
        self,
        estimator,
        *,
        threshold=None,
        prefit=False,
        norm_order=1,
        max_features=None,
        importance_getter="auto",
    ):
        self.estimator = estimator
        self.threshold = threshold
        self.prefit = prefit
        self.norm_order = norm_order
        self.max_features = max_features
        self.importance_getter = importance_getter

    def _check_max_features(self, X):
        if self.max_features is None:
            return
        n = X.shape[1]
        mf = self.max_features(X) if callable(self.max_features) else self.max_features
        if not isinstance(mf, numbers.Integral) or mf < 0 or mf > n:
            raise ValueError(
                f"SelectFromModel: max_features == {mf!r}, must be an integer in [0, {n}]"
            )
        self.max_features_ = int(mf)

    def fit(self, X, y=None, **fit_params):
        """Fit the estimator (or take the prefit one) and record its importances."""
        self._validate_params()
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=True)
        self._check_max_features(Xa)
        if self.prefit:
            if not _is_fitted(self.estimator):
                raise NotFittedError(
                    "When `prefit=True`, `estimator` is expected to be a fitted estimator."
                )
            self.estimator_ = copy.deepcopy(self.estimator)
        else:
            self.estimator_ = clone(self.estimator)
            self.estimator_.fit(to_output(Xa, input_kind(X)), y, **fit_params)
        return self

    def partial_fit(self, X, y=None, **fit_params):
        """Update the estimator with ``partial_fit``."""
        self._validate_params()
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        first = not hasattr(self, "estimator_")
        check_n_features(self, Xa, reset=first)
        if first:
            self._check_max_features(Xa)
            self.estimator_ = clone(self.estimator)
        self.estimator_.partial_fit(to_output(Xa, input_kind(X)), y, **fit_params)
        return self

    @property
    def threshold_(self):
        imp = _get_importances(self.estimator_, self.importance_getter, norm_order=self.norm_order)
        return _threshold_value(self.threshold, self.estimator, imp)

    def _get_support_mask(self):
        est = getattr(self, "estimator_", None)
        if est is None:
            if self.prefit and _is_fitted(self.estimator):
                est = self.estimator
            else:
                raise NotFittedError(
                    "This SelectFromModel instance is not fitted yet. Call 'fit' with "
                    "appropriate arguments before using this estimator."
                )
        scores = _get_importances(est, self.importance_getter, norm_order=self.norm_order)
        thr = _threshold_value(self.threshold, self.estimator, scores)
        mf = getattr(self, "max_features_", None)
        if mf is not None and self.threshold is None:
            thr = -np.inf
        mask = np.ones_like(scores, dtype=bool)
        if mf is not None:
            mask = np.zeros_like(scores, dtype=bool)
            mask[np.argsort(-scores, kind="mergesort")[:mf]] = True
        mask &= scores >= thr
        return mask


def _is_fitted(est):
    return any(k.endswith("_") and not k.startswith("__") for k in vars(est))
