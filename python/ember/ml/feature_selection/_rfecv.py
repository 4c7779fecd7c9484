"""``RFECV`` (recursive feature elimination with cross-validated choice of the number of
features) and ``SequentialFeatureSelector`` (greedy forward/backward selection by
cross-validated score).

Columns and rows are gathered on X's device with ``ember.take``; the supports, rankings and
the per-step scores (a few numbers per fit) are host bookkeeping.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

import ember

from ..base import clone, is_classifier
from ..utils._param_validation import HasMethods, Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    to_device,
    to_output,
)
from ._from_model import _get_importances
from ._rfe import RFE
from ._univariate import _Selector

__all__ = ["RFECV", "SequentialFeatureSelector"]


def _cols(Xa, features, kind):
    idx = to_device(np.asarray(features, dtype=np.int64), Xa.device)
    return to_output(ember.take(Xa, idx, axis=1), kind)


def _rows(v, idx):
    from ..model_selection._split import _safe_index

    return _safe_index(v, idx)


def _rfe_path(est0, Xa, y, kind, nsel, step, getter, score):
    """Recursive elimination down to ``nsel`` features; ``score(est, features)`` is called
    after every fit (scikit-learn's ``step_score``). Returns per-step n_features, scores,
    supports and rankings, and the final support and ranking."""
    n = Xa.shape[1]
    step = int(max(1, step * n)) if 0.0 < step < 1.0 else int(step)
    support = np.ones(n, dtype=bool)
    ranking = np.ones(n, dtype=np.int64)
    n_feat, scores, supports, rankings = [], [], [], []
    while support.sum() > nsel:
        features = np.flatnonzero(support)
        est = clone(est0)
        est.fit(_cols(Xa, features, kind), y)
        n_feat.append(len(features))
        scores.append(score(est, features))
        supports.append(support.copy())
        rankings.append(ranking.copy())
        imp = _get_importances(est, getter, "square", who="RFECV")
        ranks = np.ravel(np.argsort(np.asarray(imp), kind="stable"))
        cut = min(step, int(support.sum()) - nsel)
        support[features[ranks][:cut]] = False
        ranking[~support] += 1
    features = np.flatnonzero(support)
    est = clone(est0)
    est.fit(_cols(Xa, features, kind), y)
    n_feat.append(len(features))
    scores.append(score(est, features))
    supports.append(support.copy())
    rankings.append(ranking.copy())
    return n_feat, scores, supports, rankings


class RFECV(RFE):
    """Recursive feature elimination, the number of features chosen by cross-validation."""

    _parameter_constraints = {
        **{k: v for k, v in RFE._parameter_constraints.items() if k != "n_features_to_select"},
        "min_features_to_select": [Interval(numbers.Integral, 0, None, closed="neither")],
        "cv": [None, numbers.Integral, HasMethods("split"), "array-like"],
        "scoring": [None, str, callable],
        "n_jobs": [None, numbers.Integral],
    }

    def __init__(
        self,
        estimator,
        *,
        step=1,
        min_features_to_select=1,
        cv=None,
        scoring=None,
        verbose=0,
        n_jobs=None,
        importance_getter="auto",
    ):
        self.estimator = estimator
        self.step = step
        self.importance_getter = importance_getter
        self.cv = cv
        self.scoring = scoring
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.min_features_to_select = min_features_to_select

    def fit(self, X, y, groups=None, **fit_params):
        """Eliminate recursively on every training fold, score each step on the test fold,
        keep the number of features with the best total score and refit on all of X."""
        from ..metrics._scorer import check_scoring
        from ..model_selection._validation import check_cv

        self._validate_params()
        if not hasattr(y, "shape") and not isinstance(y, list):
            y = np.asarray(y)
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan", ensure_min_features=2)
        check_n_features(self, Xa, reset=True)
        kind = input_kind(X)
        n = Xa.shape[1]
        if self.min_features_to_select > n:
            warnings.warn(
                f"Found min_features_to_select={self.min_features_to_select} > n_features={n}. "
                "There will be no feature selection and all features will be kept.",
                UserWarning,
                stacklevel=2,
            )
        cv = check_cv(self.cv, y, classifier=is_classifier(self.estimator))
        scorer = check_scoring(self.estimator, self.scoring)
        nmin = min(self.min_features_to_select, n)
        runs = []
        for train, test in cv.split(Xa, y, groups):
            Xtr = _rows(Xa, train)
            Xte = _rows(Xa, test)
            ytr, yte = _rows(y, train), _rows(y, test)

            def score(est, features, Xte=Xte, yte=yte):
                return scorer(est, _cols(Xte, features, kind), yte)

            runs.append(
                _rfe_path(
                    self.estimator, Xtr, ytr, kind, nmin, self.step, self.importance_getter, score
                )
            )
        n_feat = np.asarray(runs[0][0])[::-1]
        scores = np.asarray([r[1] for r in runs], dtype=np.float64)
        supports = np.asarray([r[2] for r in runs])
        rankings = np.asarray([r[3] for r in runs])
        best = int(n_feat[np.argmax(scores.sum(axis=0)[::-1])])
        rfe = RFE(
            estimator=self.estimator,
            n_features_to_select=best,
            step=self.step,
            importance_getter=self.importance_getter,
            verbose=self.verbose,
        ).fit(to_output(Xa, kind), y, **fit_params)
        self.support_ = rfe.support_
        self.n_features_ = rfe.n_features_
        self.ranking_ = rfe.ranking_
        self.estimator_ = clone(self.estimator)
        self.estimator_.fit(_cols(Xa, np.flatnonzero(self.support_), kind), y, **fit_params)
        s_rev = scores[:, ::-1]
        sup_rev = supports[:, ::-1]
        rank_rev = rankings[:, ::-1]
        k = scores.shape[0]
        self.cv_results_ = {
            "mean_test_score": np.mean(s_rev, axis=0),
            "std_test_score": np.std(s_rev, axis=0),
            **{f"split{i}_test_score": s_rev[i] for i in range(k)},
            **{f"split{i}_ranking": rank_rev[i] for i in range(k)},
            **{f"split{i}_support": sup_rev[i] for i in range(k)},
            "n_features": n_feat,
        }
        return self


class SequentialFeatureSelector(_Selector):
    """Greedy feature selection: add (forward) or remove (backward) the feature whose change
    gives the best cross-validated score, until the wanted number or a gain below ``tol``."""

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"])],
        "n_features_to_select": [
            StrOptions({"auto"}),
            Interval(float, 0, 1, closed="right"),
            Interval(numbers.Integral, 0, None, closed="neither"),
        ],
        "tol": [None, Interval(numbers.Real, None, None, closed="neither")],
        "direction": [StrOptions({"forward", "backward"})],
        "scoring": [None, str, callable],
        "cv": [numbers.Integral, HasMethods("split"), "array-like", None],
        "n_jobs": [None, numbers.Integral],
    }

    def __init__(
        self,
        estimator,
        *,
        n_features_to_select="auto",
        tol=None,
        direction="forward",
        scoring=None,
        cv=5,
        n_jobs=None,
    ):
        self.estimator = estimator
        self.n_features_to_select = n_features_to_select
        self.tol = tol
        self.direction = direction
        self.scoring = scoring
        self.cv = cv
        self.n_jobs = n_jobs

    def fit(self, X, y=None, **params):
        """Select features greedily by cross-validated score."""
        from ..model_selection._validation import check_cv, cross_val_score

        self._validate_params()
        if y is not None and not hasattr(y, "shape") and not isinstance(y, list):
            y = np.asarray(y)
        Xa = check_array(X, estimator=self, ensure_min_features=2)
        check_n_features(self, Xa, reset=True)
        kind = input_kind(X)
        n = Xa.shape[1]
        nsel = self.n_features_to_select
        if nsel == "auto":
            self.n_features_to_select_ = n - 1 if self.tol is not None else n // 2
        elif isinstance(nsel, numbers.Integral):
            if nsel >= n:
                raise ValueError("n_features_to_select must be < n_features.")
            self.n_features_to_select_ = int(nsel)
        else:
            self.n_features_to_select_ = int(n * nsel)
        if self.tol is not None and self.tol < 0 and self.direction == "forward":
            raise ValueError("tol must be strictly positive when doing forward selection")
        cv = check_cv(self.cv, y, classifier=is_classifier(self.estimator))
        est = clone(self.estimator)
        mask = np.zeros(n, dtype=bool)
        n_iter = (
            self.n_features_to_select_
            if nsel == "auto" or self.direction == "forward"
            else n - self.n_features_to_select_
        )
        old = -np.inf
        auto = self.tol is not None and nsel == "auto"
        for _ in range(n_iter):
            scores = {}
            for f in np.flatnonzero(~mask):
                cand = mask.copy()
                cand[f] = True
                if self.direction == "backward":
                    cand = ~cand
                Xn = _cols(Xa, np.flatnonzero(cand), kind)
                scores[f] = cross_val_score(est, Xn, y, cv=cv, scoring=self.scoring).mean()
            best = max(scores, key=lambda f: scores[f])
            if auto and (scores[best] - old) < self.tol:
                break
            old = scores[best]
            mask[best] = True
        if self.direction == "backward":
            mask = ~mask
        self.support_ = mask
        self.n_features_to_select_ = int(mask.sum())
        return self

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_

    def transform(self, X):
        """The selected columns of X (NaN/inf rejected, as at fit)."""
        check_is_fitted(self, "support_")
        check_array(X, estimator="SequentialFeatureSelector")
        return super().transform(X)
