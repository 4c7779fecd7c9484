"""``StackingClassifier`` and ``StackingRegressor`` (scikit-learn's ``sklearn.ensemble``).

X is validated once into an ember array on its device and handed to clones of the members
(classifiers see the labels encoded to 0..K-1, as scikit-learn's LabelEncoder does). The
final estimator learns from out-of-fold member outputs: for every split the member is fitted on
the training rows (``ember.take``) and its ``stack_method`` output on the test rows is placed
back by one gather of the concatenated folds. Meta-features (and X with ``passthrough``) are
joined with ``ember.concatenate`` on the device; split indices are host bookkeeping.
"""

from __future__ import annotations

import copy
import numbers

import numpy as np

import ember

from ..base import (
    BaseEstimator,
    ClassifierMixin,
    RegressorMixin,
    TransformerMixin,
    clone,
    is_classifier,
    is_regressor,
)
from ..utils._bunch import Bunch
from ..utils._labels import decode_labels, encode_labels
from ..utils._param_validation import HasMethods, StrOptions
from ..utils.validation import (
    check_array,
    check_classification_targets,
    check_is_fitted,
    check_n_features,
    check_X_y,
    input_kind,
    is_ember,
    to_device,
    to_output,
)

__all__ = ["StackingClassifier", "StackingRegressor"]


def _as_ember(a, device):
    if is_ember(a):
        return a if str(a.device) == str(device) else ember.asarray(a, device=device)
    return ember.asarray(np.asarray(a), device=device)


class _BaseStacking(TransformerMixin, BaseEstimator):
    _parameter_constraints = {
        "estimators": [list],
        "final_estimator": [None, HasMethods("fit")],
        "cv": [None, numbers.Integral, HasMethods("split"), StrOptions({"prefit"}), "array-like"],
        "n_jobs": [None, numbers.Integral],
        "passthrough": ["boolean"],
        "verbose": [numbers.Integral, "boolean"],
    }

    def _validate_estimators(self):
        est = self.estimators
        if len(est) == 0:
            raise ValueError(
                "Invalid 'estimators' attribute, 'estimators' should be a non-empty list of "
                "(string, estimator) tuples."
            )
        for item in est:
            if not (
                isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str)
            ):
                raise ValueError(
                    "Invalid 'estimators' attribute, 'estimators' should be a non-empty list of "
                    "(string, estimator) tuples."
                )
        names = [n for n, _ in est]
        if len(set(names)) != len(names):
            raise ValueError(f"Names provided are not unique: {names!r}")
        bad = [n for n in names if "__" in n]
        if bad:
            raise ValueError(f"Estimator names must not contain __: got {bad!r}")
        if not any(e != "drop" for _, e in est):
            raise ValueError(
                "All estimators are dropped. At least one is required to be an estimator."
            )
        return names, [e for _, e in est]

    def _method_name(self, name, est, method):
        if est == "drop":
            return None
        methods = (
            ["predict_proba", "decision_function", "predict"] if method == "auto" else [method]
        )
        for m in methods:
            if hasattr(est, m):
                return m
        raise ValueError(f"Underlying estimator {name} does not implement the method {method}.")

    def _out_of_fold(self, est, Xa, y, cv, method, sw):
        """Each sample's ``method`` output from a clone fitted without its fold."""
        n = Xa.shape[0]
        splits = list(cv.split(Xa, y))
        test_all = np.concatenate([np.asarray(te) for _, te in splits])
        if len(test_all) != n or not np.array_equal(np.sort(test_all), np.arange(n)):
            raise ValueError("cross_val_predict only works for partitions")
        dev = Xa.device
        parts = []
        for train, test in splits:
            tr = to_device(np.asarray(train, dtype=np.int64), dev)
            te = to_device(np.asarray(test, dtype=np.int64), dev)
            m = clone(est)
            kw = {} if sw is None else {"sample_weight": ember.take(sw, tr)}
            m.fit(ember.take(Xa, tr, axis=0), ember.take(y, tr), **kw)
            p = _as_ember(getattr(m, method)(ember.take(Xa, te, axis=0)), dev)
            if p.ndim == 2 and method != "predict" and hasattr(m, "classes_"):
                from ..model_selection._curves import _align_columns

                p = _align_columns(p, m.classes_, np.arange(self._n_classes), method)
            parts.append(p)
        inv = np.empty(n, dtype=np.int64)
        inv[test_all] = np.arange(n)
        cat = ember.concatenate(parts, axis=0)
        return ember.take(cat, to_device(inv, dev), axis=0)

    def _fit_stack(self, Xa, y, sample_weight):
        from ..model_selection._validation import check_cv

        self._validate_params()
        names, ests = self._validate_estimators()
        self._validate_final_estimator()
        dev = Xa.device
        sw = None if sample_weight is None else _as_ember(sample_weight, dev).astype(ember.float64)
        kw = {} if sw is None else {"sample_weight": sw}
        if isinstance(self.cv, str) and self.cv == "prefit":
            self.estimators_ = []
            for e in ests:
                if e != "drop":
                    check_is_fitted(e)
                    self.estimators_.append(e)
        else:
            self.estimators_ = [clone(e).fit(Xa, y, **kw) for e in ests if e != "drop"]
        self.named_estimators_ = Bunch()
        it = iter(self.estimators_)
        for n, e in zip(names, ests, strict=True):
            self.named_estimators_[n] = "drop" if e == "drop" else next(it)
        methods = [
            self._method_name(n, e, self._stack_method()) for n, e in zip(names, ests, strict=True)
        ]
        if isinstance(self.cv, str) and self.cv == "prefit":
            preds = [
                _as_ember(getattr(e, m)(Xa), dev)
                for e, m in zip(ests, methods, strict=True)
                if e != "drop"
            ]
        else:
            yh = ember.asnumpy(y)
            cv = check_cv(self.cv, yh, classifier=is_classifier(self))
            if getattr(cv, "random_state", 0) is None:
                cv.random_state = np.random.RandomState()  # every member sees the same folds
            preds = [
                self._out_of_fold(e, Xa, y, copy.deepcopy(cv), m, sw)
                for e, m in zip(ests, methods, strict=True)
                if e != "drop"
            ]
        self.stack_method_ = [m for m, e in zip(methods, ests, strict=True) if e != "drop"]
        meta = self._concatenate(Xa, preds)
        self.final_estimator_.fit(meta, y, **kw)
        return self

    def _concatenate(self, Xa, preds):
        cols = []
        for i, p in enumerate(preds):
            if p.ndim == 1:
                cols.append(p.reshape(-1, 1))
            elif self.stack_method_[i] == "predict_proba" and self._n_classes == 2:
                cols.append(p[:, 1:])
            else:
                cols.append(p)
        cols = [c.astype(ember.float64) for c in cols]
        self._n_feature_outs = [int(c.shape[1]) for c in cols]
        if self.passthrough:
            cols.append(Xa.astype(ember.float64))
        return ember.concatenate(cols, axis=1)

    def _check_X(self, X):
        check_is_fitted(self, "estimators_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        return Xa

    def _meta(self, Xa):
        preds = [
            _as_ember(getattr(e, m)(Xa), Xa.device)
            for e, m in zip(self.estimators_, self.stack_method_, strict=True)
        ]
        return self._concatenate(Xa, preds)

    def transform(self, X):
        """The members' outputs (and X with ``passthrough``) side by side."""
        Xa = self._check_X(X)
        return to_output(self._meta(Xa), input_kind(X))

    @property
    def named_estimators(self):
        return Bunch(**dict(self.estimators))

    def _check_fit_params(self, fit_params):
        extra = set(fit_params) - {"sample_weight"}
        if extra:
            raise ValueError(
                f"{type(self).__name__}.fit got unexpected argument(s) {sorted(extra)}, which are "
                "not routed to any object."
            )
        return fit_params.get("sample_weight")


class StackingClassifier(ClassifierMixin, _BaseStacking):
    """A classifier fitted on the cross-validated outputs of several classifiers."""

    _parameter_constraints = {
        **_BaseStacking._parameter_constraints,
        "stack_method": [StrOptions({"auto", "predict_proba", "decision_function", "predict"})],
    }

    def __init__(
        self,
        estimators,
        final_estimator=None,
        *,
        cv=None,
        stack_method="auto",
        n_jobs=None,
        passthrough=False,
        verbose=0,
    ):
        self.estimators = estimators
        self.final_estimator = final_estimator
        self.cv = cv
        self.stack_method = stack_method
        self.n_jobs = n_jobs
        self.passthrough = passthrough
        self.verbose = verbose

    def _stack_method(self):
        return self.stack_method

    def _validate_final_estimator(self):
        from ..linear_model import LogisticRegression

        fe = self.final_estimator
        self.final_estimator_ = clone(fe) if fe is not None else LogisticRegression()
        if not is_classifier(self.final_estimator_):
            raise ValueError(
                f"'final_estimator' parameter should be a classifier. Got {self.final_estimator_}"
            )

    def fit(self, X, y, **fit_params):
        """Fit the members on all of X and the final classifier on their out-of-fold outputs."""
        sw = self._check_fit_params(fit_params)
        Xa, ya = check_X_y(X, y, estimator=self)
        check_classification_targets(ya, type(self).__name__)
        check_n_features(self, Xa, reset=True)
        yk = ya if input_kind(y) == "ember" else (ember.asnumpy(ya) if is_ember(ya) else ya)
        self.classes_, yi = encode_labels(yk, Xa.device)
        self._n_classes = int(self.classes_.shape[0])
        if self._n_classes < 2:
            raise ValueError(
                "StackingClassifier needs samples of at least 2 classes in the data, but the "
                f"data contains only one class: {self.classes_[0]!r}"
            )
        return self._fit_stack(Xa, yi, sw)

    def predict(self, X):
        """The final classifier's labels for the members' outputs."""
        Xa = self._check_X(X)
        idx = _as_ember(self.final_estimator_.predict(self._meta(Xa)), Xa.device)
        return decode_labels(self.classes_, idx.astype(ember.int64), input_kind(X))

    def predict_proba(self, X):
        """The final classifier's class probabilities."""
        Xa = self._check_X(X)
        return to_output(
            _as_ember(self.final_estimator_.predict_proba(self._meta(Xa)), Xa.device),
            input_kind(X),
        )

    def decision_function(self, X):
        """The final classifier's decision values."""
        Xa = self._check_X(X)
        return to_output(
            _as_ember(self.final_estimator_.decision_function(self._meta(Xa)), Xa.device),
            input_kind(X),
        )


class StackingRegressor(RegressorMixin, _BaseStacking):
    """A regressor fitted on the cross-validated predictions of several regressors."""

    _n_classes = 0

    def __init__(
        self,
        estimators,
        final_estimator=None,
        *,
        cv=None,
        n_jobs=None,
        passthrough=False,
        verbose=0,
    ):
        self.estimators = estimators
        self.final_estimator = final_estimator
        self.cv = cv
        self.n_jobs = n_jobs
        self.passthrough = passthrough
        self.verbose = verbose

    def _stack_method(self):
        return "predict"

    def _validate_final_estimator(self):
        from ..linear_model import RidgeCV

        fe = self.final_estimator
        self.final_estimator_ = clone(fe) if fe is not None else RidgeCV()
        if not is_regressor(self.final_estimator_):
            raise ValueError(
                f"'final_estimator' parameter should be a regressor. Got {self.final_estimator_}"
            )

    def fit(self, X, y, **fit_params):
        """Fit the members on all of X and the final regressor on their out-of-fold predictions."""
        sw = self._check_fit_params(fit_params)
        Xa, ya = check_X_y(X, y, estimator=self, y_numeric=True)
        check_n_features(self, Xa, reset=True)
        return self._fit_stack(Xa, ya, sw)

    def predict(self, X):
        """The final regressor's prediction from the members' predictions."""
        Xa = self._check_X(X)
        out = _as_ember(self.final_estimator_.predict(self._meta(Xa)), Xa.device)
        return to_output(out, input_kind(X))
