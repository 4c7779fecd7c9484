"""Cross-validation (``cross_val_score``, ``cross_validate``) and ``check_cv``."""

from __future__ import annotations

import time
import warnings
from numbers import Integral

import numpy as np

from ..base import clone, is_classifier
from ..exceptions import FitFailedWarning, sklearn_compatible
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
    itself); see ``ember.ml.metrics.get_scorer``."""
    from ..metrics._scorer import get_scorer as _get

    return _get(scoring)


def _scorers(scoring):
    """(dict name -> scorer, multimetric) from None, a name, a callable, a list or a dict."""
    from ..metrics._scorer import _PassthroughScorer

    if scoring is None:
        return {"score": _PassthroughScorer()}, False
    if isinstance(scoring, str) or callable(scoring):
        return {"score": get_scorer(scoring)}, False
    if isinstance(scoring, dict):
        if not scoring:
            raise ValueError(f"An empty dict was passed. {scoring!r}")
        return {k: get_scorer(v) for k, v in scoring.items()}, True
    if isinstance(scoring, (list, tuple, set)):
        names = list(scoring)
        if not names:
            raise ValueError(f"Empty list was given. {scoring!r}")
        if len(set(names)) != len(names):
            raise ValueError(f"Duplicate elements were found in the given list. {scoring!r}")
        if not all(isinstance(n, str) for n in names):
            raise ValueError(
                "One or more of the elements were callables. Use a dict of score name mapped to "
                f"the scorer callable. Got {scoring!r}"
            )
        return {n: get_scorer(n) for n in names}, True
    raise ValueError(
        f"scoring is invalid (got {scoring!r}). Refer to the scoring glossary for details."
    )


def _fit_and_score(estimator, X, y, train, test, scorers, params, error_score, train_score):
    """Fit ``estimator`` on the train rows and score it on the test rows with every scorer;
    a failed fit scores ``error_score`` (FitFailedWarning) unless it is 'raise'."""
    Xtr, Xte = _safe_index(X, train), _safe_index(X, test)
    ytr = None if y is None else _safe_index(y, train)
    yte = None if y is None else _safe_index(y, test)
    t0 = time.perf_counter()
    out = {"estimator": estimator, "fit_error": None}
    try:
        if ytr is None:
            estimator.fit(Xtr, **(params or {}))
        else:
            estimator.fit(Xtr, ytr, **(params or {}))
    except Exception as exc:
        if isinstance(error_score, str) and error_score == "raise":
            raise
        out["fit_error"] = f"{type(exc).__name__}: {exc}"
        out["fit_time"] = time.perf_counter() - t0
        out["score_time"] = 0.0
        out["test"] = {k: float(error_score) for k in scorers}
        if train_score:
            out["train"] = {k: float(error_score) for k in scorers}
        return out
    t1 = time.perf_counter()
    out["fit_time"] = t1 - t0
    out["test"] = {k: _score(sc, estimator, Xte, yte, error_score) for k, sc in scorers.items()}
    out["score_time"] = time.perf_counter() - t1
    if train_score:
        out["train"] = {
            k: _score(sc, estimator, Xtr, ytr, error_score) for k, sc in scorers.items()
        }
    return out


def _score(scorer, est, X, y, error_score):
    try:
        return float(scorer(est, X, y) if y is not None else scorer(est, X))
    except Exception:
        if isinstance(error_score, str) and error_score == "raise":
            raise
        warnings.warn(
            "Scoring failed. The score on this train-test partition for these parameters will "
            f"be set to {error_score}.",
            UserWarning,
            stacklevel=3,
        )
        return float(error_score)


def _warn_failed(results, error_score):
    failed = [r["fit_error"] for r in results if r["fit_error"] is not None]
    if not failed:
        return
    if len(failed) == len(results):
        raise ValueError(
            f"All the {len(results)} fits failed.\nIt is very likely that your model is "
            "misconfigured.\nYou can try to debug the error by setting error_score='raise'.\n\n"
            f"Below are more details about the failures:\n{failed[0]}"
        )
    warnings.warn(
        f"\n{len(failed)} fits failed out of a total of {len(results)}.\nThe score on these "
        f"train-test partitions for these parameters will be set to {error_score}.\nIf these "
        "failures are not expected, you can try to debug them by setting error_score='raise'."
        f"\n\nBelow are more details about the failures:\n{failed[0]}",
        sklearn_compatible(FitFailedWarning),
        stacklevel=3,
    )


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
    return_indices=False,
    error_score=np.nan,
):
    """Fit and score a clone of ``estimator`` on every fold; dict of per-fold arrays
    (``test_<name>`` keys for several metrics, ``test_score`` for one)."""
    splitter = check_cv(cv, y, classifier=is_classifier(estimator))
    scorers, multi = _scorers(scoring)
    splits = list(splitter.split(X, y, groups))
    results = [
        _fit_and_score(
            clone(estimator), X, y, tr, te, scorers, params, error_score, return_train_score
        )
        for tr, te in splits
    ]
    _warn_failed(results, error_score)
    out = {
        "fit_time": np.asarray([r["fit_time"] for r in results]),
        "score_time": np.asarray([r["score_time"] for r in results]),
    }
    if return_estimator:
        out["estimator"] = [r["estimator"] for r in results]
    if return_indices:
        out["indices"] = {"train": [s[0] for s in splits], "test": [s[1] for s in splits]}
    for name in scorers:
        key = name if multi else "score"
        out[f"test_{key}"] = np.asarray([r["test"][name] for r in results])
        if return_train_score:
            out[f"train_{key}"] = np.asarray([r["train"][name] for r in results])
    return out


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
