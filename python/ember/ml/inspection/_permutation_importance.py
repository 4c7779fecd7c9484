"""``permutation_importance`` (scikit-learn's ``sklearn.inspection.permutation_importance``).

The drop of the score when one column is shuffled, ``n_repeats`` times per column. The
shuffles come from a NumPy ``RandomState`` seeded as scikit-learn seeds it (the same seed for
every column, the repeats shuffling the already shuffled column again), so a deterministic
estimator gets scikit-learn's importances exactly. Only the n shuffled indices are host
bookkeeping: an ember X is permuted on its device (one gather of the column), NumPy X and
DataFrames on the host, and the estimator scores the same kind of X the caller gave.
"""

from __future__ import annotations

import numbers

import numpy as np

import ember

from ..metrics._scorer import check_scoring, get_scorer
from ..utils._bunch import Bunch
from ..utils.validation import is_ember

__all__ = ["permutation_importance"]


def _np_random_state(seed):
    if seed is None:
        return np.random.mtrand._rand
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        return np.random.RandomState(int(seed))
    if isinstance(seed, np.random.RandomState):
        return seed
    raise ValueError(
        f"permutation_importance: random_state={seed!r} cannot be used to seed a "
        "numpy.random.RandomState instance"
    )


def _n_rows(X):
    return int(X.shape[0]) if hasattr(X, "shape") else len(X)


def _rows(a, idx):
    if a is None:
        return None
    if is_ember(a):
        return ember.take(a, ember.asarray(idx, device=a.device), axis=0)
    if hasattr(a, "iloc"):
        return a.iloc[idx]
    return np.asarray(a)[idx]


def _copy(X):
    if is_ember(X):
        return X.copy()
    if hasattr(X, "iloc"):
        return X.copy()
    return np.array(X, copy=True)


def _shuffle_column(X, col, idx):
    """Column ``col`` of X (modified in place, as scikit-learn) reordered by ``idx``."""
    if is_ember(X):
        X[:, col] = ember.take(X[:, col], ember.asarray(idx, device=X.device))
    elif hasattr(X, "iloc"):
        shuffled = X.iloc[idx, col]
        X.iloc[:, col] = shuffled.values
    else:
        X[:, col] = X[idx, col]


def _scorer(estimator, scoring):
    if scoring is None or isinstance(scoring, str) or callable(scoring):
        return check_scoring(estimator, scoring), False
    if isinstance(scoring, dict):
        return {k: get_scorer(v) for k, v in scoring.items()}, True
    if isinstance(scoring, (list, tuple, set)):
        names = list(scoring)
        if not all(isinstance(s, str) for s in names) or len(set(names)) != len(names):
            raise ValueError(
                "permutation_importance: scoring must be a str, a callable, a list/tuple of "
                f"unique str or a dict, got {scoring!r}"
            )
        return {k: get_scorer(k) for k in names}, True
    raise ValueError(
        "permutation_importance: scoring must be a str, a callable, a list/tuple of unique str "
        f"or a dict, got {scoring!r}"
    )


def _score(scorer, multi, est, X, y, sw):
    kw = {} if sw is None else {"sample_weight": sw}
    if multi:
        return {k: float(s(est, X, y, **kw)) for k, s in scorer.items()}
    return float(scorer(est, X, y, **kw))


def _bunch(baseline, scores):
    imp = baseline - np.asarray(scores, dtype=np.float64)
    return Bunch(
        importances_mean=np.mean(imp, axis=1),
        importances_std=np.std(imp, axis=1),
        importances=imp,
    )


def permutation_importance(
    estimator,
    X,
    y,
    *,
    scoring=None,
    n_repeats=5,
    n_jobs=None,
    random_state=None,
    sample_weight=None,
    max_samples=1.0,
):
    """Decrease of ``scoring`` when each feature of X is shuffled (``n_repeats`` times).

    Returns a ``Bunch`` (``importances_mean``, ``importances_std``, ``importances`` of shape
    (n_features, n_repeats)), or a dict of them for several scorers. ``n_jobs`` is accepted
    (the columns run one after another).
    """
    who = "permutation_importance"
    if not hasattr(estimator, "fit"):
        raise TypeError(f"{who}: estimator must be an estimator, got {type(estimator).__name__}")
    if isinstance(n_repeats, bool) or not isinstance(n_repeats, numbers.Integral):
        raise TypeError(f"{who}: n_repeats must be an int, got {n_repeats!r}")
    if n_repeats < 1:
        raise ValueError(f"{who}: n_repeats must be >= 1, got {n_repeats}")
    if not hasattr(X, "iloc") and not is_ember(X):
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"{who}: X must be 2-dimensional, got shape {X.shape}")
    n = _n_rows(X)
    rs = _np_random_state(random_state)
    seed = rs.randint(np.iinfo(np.int32).max + 1)
    if isinstance(max_samples, numbers.Integral) and not isinstance(max_samples, bool):
        ms = int(max_samples)
    elif isinstance(max_samples, numbers.Real) and not isinstance(max_samples, bool):
        if not 0.0 < max_samples <= 1.0:
            raise ValueError(f"{who}: max_samples must be in (0, 1], got {max_samples!r}")
        ms = int(max_samples * n)
    else:
        raise TypeError(f"{who}: max_samples must be an int or a float, got {max_samples!r}")
    if not 0 < ms <= n:
        raise ValueError(f"{who}: max_samples must be <= n_samples, got {max_samples!r}")
    scorer, multi = _scorer(estimator, scoring)
    baseline = _score(scorer, multi, estimator, X, y, sample_weight)
    n_features = int(X.shape[1])
    scores = []
    for col in range(n_features):
        crs = np.random.RandomState(seed)
        Xc, yc, swc = X, y, sample_weight
        if ms < n:
            # a row subset without replacement (not scikit-learn's sampler: other rows)
            rows = crs.choice(n, ms, replace=False)
            Xc, yc, swc = _rows(X, rows), _rows(y, rows), _rows(sample_weight, rows)
        Xp = _copy(Xc)
        idx = np.arange(_n_rows(Xp))
        col_scores = []
        for _ in range(n_repeats):
            crs.shuffle(idx)
            _shuffle_column(Xp, col, idx)
            col_scores.append(_score(scorer, multi, estimator, Xp, yc, swc))
        scores.append(col_scores)
    if multi:
        return {k: _bunch(baseline[k], [[s[k] for s in cs] for cs in scores]) for k in scorer}
    return _bunch(baseline, scores)
