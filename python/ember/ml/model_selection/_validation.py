"""Cross-validation (``cross_val_score``, ``cross_validate``) and ``check_cv``."""

from __future__ import annotations

import time
from numbers import Integral

import numpy as np

from ..base import clone, is_classifier
from ._split import KFold, StratifiedKFold, _safe_index

__all__ = ["check_cv", "cross_val_score", "cross_validate", "get_scorer"]


def check_cv(cv=5, y=None, *, classifier=False):
    """A splitter from an int (StratifiedKFold for classifiers), a splitter or an iterable."""
    if cv is None:
        cv = 5
    if isinstance(cv, Integral):
        if classifier and y is not None:
            return StratifiedKFold(cv)
        return KFold(cv)
    if hasattr(cv, "split"):
        return cv
    folds = list(cv)

    class _Given:
        def split(self, X=None, y=None, groups=None):
            return iter(folds)

        def get_n_splits(self, *a, **k):
            return len(folds)

    return _Given()


def get_scorer(scoring):
    """A ``scorer(estimator, X, y, sample_weight=None)`` for a metric name (or the callable
    itself)."""
    if callable(scoring):
        return scoring
    from .. import metrics

    table = {
        "accuracy": (metrics.accuracy_score, 1, False),
        "r2": (metrics.r2_score, 1, False),
        "neg_mean_squared_error": (metrics.mean_squared_error, -1, False),
        "neg_root_mean_squared_error": (metrics.root_mean_squared_error, -1, False),
        "neg_mean_absolute_error": (metrics.mean_absolute_error, -1, False),
        "explained_variance": (metrics.explained_variance_score, 1, False),
        "f1": (metrics.f1_score, 1, False),
        "f1_macro": (lambda a, b, **kw: metrics.f1_score(a, b, average="macro", **kw), 1, False),
        "precision": (metrics.precision_score, 1, False),
        "recall": (metrics.recall_score, 1, False),
        "roc_auc": (metrics.roc_auc_score, 1, True),
    }
    if scoring not in table:
        raise ValueError(
            f"{scoring!r} is not a valid scoring value. Use one of {sorted(table)!r} or a callable."
        )
    fn, sign, proba = table[scoring]

    def scorer(est, X, y, sample_weight=None):
        kw = {} if sample_weight is None else {"sample_weight": sample_weight}
        if proba:
            if hasattr(est, "decision_function"):
                s = est.decision_function(X)
            else:
                s = est.predict_proba(X)[:, 1]
            return sign * fn(y, s, **kw)
        return sign * fn(y, est.predict(X), **kw)

    return scorer


def cross_validate(
    estimator,
    X,
    y=None,
    *,
    groups=None,
    scoring=None,
    cv=None,
    n_jobs=None,
    verbose=0,
    params=None,
    return_train_score=False,
    return_estimator=False,
    error_score=np.nan,
):
    """Fit and score a clone of ``estimator`` on every fold; dict of per-fold arrays."""
    splitter = check_cv(cv, y, classifier=is_classifier(estimator))
    if scoring is None:

        def scorer(est, Xs, ys):
            return est.score(Xs, ys)
    else:
        scorer = get_scorer(scoring)
    out = {"fit_time": [], "score_time": [], "test_score": []}
    if return_train_score:
        out["train_score"] = []
    if return_estimator:
        out["estimator"] = []
    for train, test in splitter.split(X, y, groups):
        est = clone(estimator)
        Xtr, Xte = _safe_index(X, train), _safe_index(X, test)
        ytr = None if y is None else _safe_index(y, train)
        yte = None if y is None else _safe_index(y, test)
        t0 = time.perf_counter()
        try:
            est.fit(Xtr, ytr, **(params or {})) if ytr is not None else est.fit(Xtr)
            t1 = time.perf_counter()
            score = float(scorer(est, Xte, yte))
        except Exception:
            if isinstance(error_score, str) and error_score == "raise":
                raise
            t1 = time.perf_counter()
            score = float(error_score)
        out["fit_time"].append(t1 - t0)
        out["score_time"].append(time.perf_counter() - t1)
        out["test_score"].append(score)
        if return_train_score:
            out["train_score"].append(float(scorer(est, Xtr, ytr)))
        if return_estimator:
            out["estimator"].append(est)
    return {k: (v if k == "estimator" else np.asarray(v)) for k, v in out.items()}


def cross_val_score(
    estimator,
    X,
    y=None,
    *,
    groups=None,
    scoring=None,
    cv=None,
    n_jobs=None,
    verbose=0,
    params=None,
    error_score=np.nan,
):
    """Test score of every cross-validation fold (NumPy array)."""
    return cross_validate(
        estimator,
        X,
        y,
        groups=groups,
        scoring=scoring,
        cv=cv,
        params=params,
        error_score=error_score,
    )["test_score"]
