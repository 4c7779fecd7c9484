"""``cross_val_predict``, ``learning_curve`` and ``validation_curve`` (scikit-learn's)."""

from __future__ import annotations

import numpy as np

import ember

from ..base import clone, is_classifier
from ..utils.validation import is_ember, to_device
from ._split import _num_samples, _safe_index
from ._validation import _fit_and_score, _scorers, _warn_failed, check_cv

__all__ = ["cross_val_predict", "learning_curve", "validation_curve"]


def _np(v):
    return ember.asnumpy(v) if is_ember(v) else np.asarray(v)


def _align_columns(pred, est_classes, all_classes, method):
    """Columns of a fold's class scores placed at the full class set's positions (classes the
    fold did not see get 0 for probabilities, the smallest float for decision values)."""
    fold = _np(est_classes)
    if len(fold) == len(all_classes):
        return pred
    pos = np.searchsorted(all_classes, fold)
    fill = 0.0 if method in ("predict_proba",) else float(np.finfo(np.float64).min)
    if method == "predict_log_proba":
        fill = -np.inf
    if is_ember(pred):
        # Column placement as a matmul with a 0/1 matrix (exact: one 1 per column).
        E = np.zeros((len(fold), len(all_classes)))
        E[np.arange(len(fold)), pos] = 1.0
        seen = E.sum(axis=0) > 0
        Ed = to_device(E, pred.device).astype(pred.dtype)
        missing = to_device(~seen, pred.device)
        return ember.where(missing[None, :], fill, ember.matmul(pred, Ed))
    out = np.full((pred.shape[0], len(all_classes)), fill, dtype=np.asarray(pred).dtype)
    out[:, pos] = pred
    return out


def cross_val_predict(
    estimator,
    X,
    y=None,
    *,
    groups=None,
    cv=None,
    n_jobs=None,
    verbose=0,
    params=None,
    pre_dispatch="2*n_jobs",
    method="predict",
):
    """Out-of-fold predictions: each sample predicted by the model fitted without its fold
    (in the input's kind; the folds must partition the samples)."""
    splitter = check_cv(cv, y, classifier=is_classifier(estimator))
    splits = list(splitter.split(X, y, groups))
    n = _num_samples(X)
    test_all = np.concatenate([np.asarray(te) for _, te in splits])
    if len(test_all) != n or not np.array_equal(np.sort(test_all), np.arange(n)):
        raise ValueError("cross_val_predict only works for partitions")
    all_classes = None
    if method in ("predict_proba", "predict_log_proba", "decision_function") and y is not None:
        all_classes = np.unique(_np(y))
    preds = []
    for train, test in splits:
        est = clone(estimator)
        Xtr, Xte = _safe_index(X, train), _safe_index(X, test)
        if y is None:
            est.fit(Xtr, **(params or {}))
        else:
            est.fit(Xtr, _safe_index(y, train), **(params or {}))
        p = getattr(est, method)(Xte)
        if all_classes is not None and hasattr(est, "classes_") and p.ndim == 2:
            p = _align_columns(p, est.classes_, all_classes, method)
        preds.append(p)
    inv = np.empty(n, dtype=np.int64)
    inv[test_all] = np.arange(n)
    if all(is_ember(p) for p in preds):
        cat = ember.concatenate(preds, axis=0)
        return ember.take(cat, to_device(inv, cat.device), axis=0)
    cat = np.concatenate([_np(p) for p in preds], axis=0)
    return cat[inv]


def learning_curve(
    estimator,
    X,
    y,
    *,
    groups=None,
    train_sizes=np.linspace(0.1, 1.0, 5),
    cv=None,
    scoring=None,
    exploit_incremental_learning=False,
    n_jobs=None,
    pre_dispatch="all",
    verbose=0,
    shuffle=False,
    random_state=None,
    error_score=np.nan,
    return_times=False,
    params=None,
):
    """(train_sizes_abs, train_scores, test_scores[, fit_times, score_times]): the estimator
    fitted on growing prefixes of each training split."""
    splitter = check_cv(cv, y, classifier=is_classifier(estimator))
    splits = list(splitter.split(X, y, groups))
    scorers, _ = _scorers(scoring)
    n_max = len(splits[0][0])
    sizes = np.asarray(train_sizes)
    if np.issubdtype(sizes.dtype, np.floating):
        if sizes.min() <= 0 or sizes.max() > 1:
            raise ValueError(
                "train_sizes has been interpreted as fractions of the maximum number of training "
                f"samples and must be within (0, 1], but is within [{sizes.min()}, {sizes.max()}]."
            )
        abs_sizes = np.clip((sizes * n_max).astype(int), 1, n_max)
    else:
        if sizes.min() <= 0 or sizes.max() > n_max:
            raise ValueError(
                "train_sizes has been interpreted as absolute numbers of training samples and "
                f"must be within (0, {n_max}], but is within [{sizes.min()}, {sizes.max()}]."
            )
        abs_sizes = sizes.astype(int)
    abs_sizes = np.unique(abs_sizes)
    if shuffle:
        from ._split import _permutation

        splits = [(np.asarray(tr)[_permutation(random_state, len(tr))], te) for tr, te in splits]
    results = []
    for size in abs_sizes:
        for train, test in splits:
            results.append(
                _fit_and_score(
                    clone(estimator),
                    X,
                    y,
                    np.asarray(train)[:size],
                    test,
                    scorers,
                    params,
                    error_score,
                    True,
                )
            )
    _warn_failed(results, error_score)
    shape = (len(abs_sizes), len(splits))
    train = np.asarray([r["train"]["score"] for r in results]).reshape(shape)
    test = np.asarray([r["test"]["score"] for r in results]).reshape(shape)
    out = [abs_sizes, train, test]
    if return_times:
        out.append(np.asarray([r["fit_time"] for r in results]).reshape(shape))
        out.append(np.asarray([r["score_time"] for r in results]).reshape(shape))
    return tuple(out)


def validation_curve(
    estimator,
    X,
    y,
    *,
    param_name,
    param_range,
    groups=None,
    cv=None,
    scoring=None,
    n_jobs=None,
    pre_dispatch="all",
    verbose=0,
    error_score=np.nan,
    params=None,
):
    """(train_scores, test_scores), shape (len(param_range), n_splits): one parameter varied."""
    splitter = check_cv(cv, y, classifier=is_classifier(estimator))
    splits = list(splitter.split(X, y, groups))
    scorers, _ = _scorers(scoring)
    results = []
    for value in param_range:
        for train, test in splits:
            est = clone(estimator).set_params(**{param_name: value})
            results.append(
                _fit_and_score(est, X, y, train, test, scorers, params, error_score, True)
            )
    _warn_failed(results, error_score)
    shape = (len(param_range), len(splits))
    train = np.asarray([r["train"]["score"] for r in results]).reshape(shape)
    test = np.asarray([r["test"]["score"] for r in results]).reshape(shape)
    return train, test
