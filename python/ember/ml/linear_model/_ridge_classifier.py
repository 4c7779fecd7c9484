"""``RidgeClassifier`` and ``RidgeClassifierCV``: ridge regression on {-1, 1} class indicators.

The labels become an (n, K) matrix of +1/-1 indicators on X's device (one column for two
classes, as scikit-learn's ``LabelBinarizer(neg_label=-1)``), the existing ``Ridge`` /
``RidgeCV`` fits it as a multi-output problem, and the predicted class is the column with the
largest score (the sign of the single score for two classes). ``class_weight`` multiplies the
sample weights.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

import ember

from ..base import ClassifierMixin
from ..utils._labels import decode_labels, encode_labels
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_classification_targets,
    check_n_features,
    check_sample_weight,
    check_X_y,
    input_kind,
    is_ember,
    to_output,
)
from ._base import LinearModel
from ._logistic import compute_class_weight
from ._ridge import _SOLVERS, Ridge
from ._ridge_cv import RidgeCV, _check_alphas

__all__ = ["RidgeClassifier", "RidgeClassifierCV"]


class _RidgeClassifierMixin(ClassifierMixin):
    _multi_output = False

    def _prepare(self, X, y, sample_weight):
        Xa, ya = check_X_y(X, y, estimator=self)
        check_classification_targets(ya, type(self).__name__)
        check_n_features(self, Xa, reset=True)
        dev = Xa.device
        classes, yi = encode_labels(ya, dev)
        K = int(classes.shape[0])
        if K < 2:
            raise ValueError("The number of classes has to be greater than one; got 1 class")
        onehot = yi[:, None] == ember.arange(K, device=dev)[None, :]
        Y = ember.where(onehot, 1.0, -1.0).astype(Xa.dtype)
        if K == 2:
            Y = Y[:, 1]  # one target: coef_ (n_features,), as scikit-learn's
        sw = None
        if sample_weight is not None or self.class_weight is not None:
            sw = check_sample_weight(sample_weight, Xa)
        if self.class_weight is not None:
            cw = compute_class_weight(
                self.class_weight,
                classes=ember.asnumpy(classes) if is_ember(classes) else classes,
                y=ya,
            )
            sw = sw * ember.take(ember.asarray(cw, device=dev).astype(Xa.dtype), yi)
        kind = input_kind(X)
        self.classes_ = (
            classes
            if kind == "ember"
            else (ember.asnumpy(classes) if is_ember(classes) else classes)
        )
        return Xa, Y, sw, ya

    def _take_coef(self, est, X):
        kind = input_kind(X)
        self.coef_ = to_output(est.coef_, kind)
        b = est.intercept_
        self.intercept_ = to_output(b, kind) if hasattr(b, "shape") else b

    def decision_function(self, X):
        """Scores: (n,) for two classes, (n, n_classes) otherwise."""
        Z = self._decision_function(X)
        if Z.ndim == 2 and Z.shape[1] == 1:
            Z = Z[:, 0]
        return to_output(Z, input_kind(X))

    def predict(self, X):
        """Class with the largest score."""
        Z = self._decision_function(X)
        if Z.ndim == 2 and Z.shape[1] == 1:
            Z = Z[:, 0]
        idx = (Z > 0).astype(ember.int64) if Z.ndim == 1 else ember.argmax(Z, axis=1)
        return decode_labels(self.classes_, idx, input_kind(X))


class RidgeClassifier(_RidgeClassifierMixin, LinearModel):
    """Classifier using ridge regression on {-1, 1} targets."""

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="left"), np.ndarray, list],
        "fit_intercept": ["boolean"],
        "copy_X": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="left")],
        "solver": [StrOptions(_SOLVERS)],
        "positive": ["boolean"],
        "random_state": ["random_state"],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def __init__(
        self,
        alpha=1.0,
        *,
        fit_intercept=True,
        copy_X=True,
        max_iter=None,
        tol=1e-4,
        class_weight=None,
        solver="auto",
        positive=False,
        random_state=None,
    ):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.max_iter = max_iter
        self.tol = tol
        self.class_weight = class_weight
        self.solver = solver
        self.positive = positive
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        """Fit the ridge model on the class indicators."""
        self._validate_params()
        Xa, Y, sw, _ = self._prepare(X, y, sample_weight)
        est = Ridge(
            alpha=self.alpha,
            fit_intercept=self.fit_intercept,
            max_iter=self.max_iter,
            tol=self.tol,
            solver=self.solver,
            positive=self.positive,
        )
        est.fit(Xa, Y, sample_weight=sw)
        self._take_coef(est, X)
        self.n_iter_ = est.n_iter_
        self.solver_ = est.solver_
        return self


def _no_score(estimator, X, y, sample_weight=None):
    return 0.0


class RidgeClassifierCV(_RidgeClassifierMixin, LinearModel):
    """Ridge classifier with ``alpha`` chosen by leave-one-out (default) or K-fold CV."""

    _parameter_constraints = {
        "alphas": ["array-like", Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "scoring": [str, callable, None],
        "cv": "no_validation",
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "store_cv_results": ["boolean"],
    }

    def __init__(
        self,
        alphas=(0.1, 1.0, 10.0),
        *,
        fit_intercept=True,
        scoring=None,
        cv=None,
        class_weight=None,
        store_cv_results=False,
    ):
        self.alphas = alphas
        self.fit_intercept = fit_intercept
        self.scoring = scoring
        self.cv = cv
        self.class_weight = class_weight
        self.store_cv_results = store_cv_results

    def fit(self, X, y, sample_weight=None):
        """Choose ``alpha_`` and fit on all the data with it."""
        self._validate_params()
        alphas = _check_alphas(self.alphas, strict=self.cv is None)
        Xa, Y, sw, ya = self._prepare(X, y, sample_weight)
        if self.cv is not None:
            if self.store_cv_results:
                raise ValueError("cv!=None and store_cv_results=True are incompatible")
            self._fit_kfold(X, Xa, ya, sample_weight, alphas)
            return self
        from ..model_selection._validation import get_scorer

        scorer = None if self.scoring is None else get_scorer(self.scoring)
        gcv = RidgeCV(
            alphas=alphas,
            fit_intercept=self.fit_intercept,
            # with a scoring, a no-op scorer makes RidgeCV keep the leave-one-out predictions
            scoring=None if scorer is None else _no_score,
            store_cv_results=self.store_cv_results or scorer is not None,
        )
        gcv.fit(Xa, Y, sample_weight=sw)
        if scorer is not None:
            # scikit-learn's rule: the leave-one-out predictions' argmax column against the
            # indicator matrix's argmax (one column for two classes, so both are 0 there)
            from ._ridge_cv import _Identity

            pred = gcv.cv_results_  # (n, t, A) predictions ((n, A) for one target)
            if pred.ndim == 2:
                pred = pred[:, None, :]
            truth = ember.argmax(Y if Y.ndim == 2 else Y[:, None], axis=1)
            kw = {} if sw is None else {"sample_weight": sw}
            scores = [
                float(scorer(_Identity(), ember.argmax(pred[:, :, j], axis=1), truth, **kw))
                for j in range(len(alphas))
            ]
            best = int(np.argmax(scores))
            final = RidgeCV(alphas=[alphas[best]], fit_intercept=self.fit_intercept)
            final.fit(Xa, Y, sample_weight=sw)
            self.alpha_ = float(alphas[best])
            self.best_score_ = float(scores[best])
            gcv_coef = final
        else:
            self.alpha_ = gcv.alpha_
            self.best_score_ = gcv.best_score_
            gcv_coef = gcv
        self._take_coef(gcv_coef, X)
        if self.store_cv_results:
            res = gcv.cv_results_
            self.cv_results_ = to_output(res, input_kind(X))
        else:
            self.__dict__.pop("cv_results_", None)
        return self

    def _fit_kfold(self, X, Xa, ya, sample_weight, alphas):
        from ..model_selection._search import GridSearchCV

        grid = GridSearchCV(
            RidgeClassifier(fit_intercept=self.fit_intercept, class_weight=self.class_weight),
            {"alpha": [float(a) for a in alphas]},
            cv=self.cv,
            scoring=self.scoring,
        )
        params = {} if sample_weight is None else {"sample_weight": sample_weight}
        grid.fit(Xa, ya, **params)
        best = grid.best_estimator_
        self.alpha_ = float(best.alpha)
        self.best_score_ = float(grid.best_score_)
        self._take_coef(best, X)
