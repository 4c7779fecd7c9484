"""Hyper-parameter search (scikit-learn's ``GridSearchCV``, ``RandomizedSearchCV``,
``ParameterGrid``, ``ParameterSampler``).

Every candidate is fitted on every split with the ember estimators (their arrays stay on the
inputs' device); the bookkeeping (``cv_results_``: per-split scores, means, ranks) is a handful
of host floats per fit, laid out with scikit-learn's keys.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping, Sequence
from numbers import Integral

import numpy as np

from ..base import BaseEstimator, clone, is_classifier
from ..utils.validation import check_random_state, not_fitted
from ._validation import _fit_and_score, _scorers, _warn_failed, check_cv

__all__ = ["GridSearchCV", "ParameterGrid", "ParameterSampler", "RandomizedSearchCV"]


class ParameterGrid:
    """Every combination of a dict (or list of dicts) of parameter lists, keys sorted and the
    last key varying fastest."""

    def __init__(self, param_grid):
        if not isinstance(param_grid, (Mapping, Sequence)) or isinstance(param_grid, str):
            raise TypeError(
                f"Parameter grid should be a dict or a list, got: {param_grid!r} of type "
                f"{type(param_grid).__name__}"
            )
        grids = [param_grid] if isinstance(param_grid, Mapping) else list(param_grid)
        for g in grids:
            if not isinstance(g, dict):
                raise TypeError(f"Parameter grid is not a dict ({g!r})")
            for key, value in g.items():
                if isinstance(value, np.ndarray) and value.ndim > 1:
                    raise ValueError(
                        f"Parameter array for {key!r} should be one-dimensional, got: {value!r} "
                        f"with shape {value.shape}"
                    )
                if isinstance(value, str) or not isinstance(value, (np.ndarray, Sequence)):
                    raise TypeError(
                        f"Parameter grid for parameter {key!r} needs to be a list or a numpy "
                        f"array, but got {value!r} (of type {type(value).__name__}) instead. "
                        "Single values need to be wrapped in a list with one element."
                    )
                if len(value) == 0:
                    raise ValueError(
                        f"Parameter grid for parameter {key!r} need to be a non-empty sequence, "
                        f"got: {value!r}"
                    )
        self.param_grid = grids

    def __iter__(self):
        for g in self.param_grid:
            keys = sorted(g)
            if not keys:
                yield {}
                continue
            for values in itertools.product(*(g[k] for k in keys)):
                yield dict(zip(keys, values, strict=True))

    def __len__(self):
        total = 0
        for g in self.param_grid:
            n = 1
            for v in g.values():
                n *= len(v)
            total += n
        return total

    def __getitem__(self, ind):
        return list(self)[ind]


class ParameterSampler:
    """``n_iter`` draws of parameter settings: lists are sampled uniformly, objects with an
    ``rvs`` method (scipy.stats distributions) drawn from. When every value is a list, the grid
    is sampled without replacement (all of it when it has at most ``n_iter`` points)."""

    def __init__(self, param_distributions, n_iter, *, random_state=None):
        dists = (
            [param_distributions]
            if isinstance(param_distributions, Mapping)
            else list(param_distributions)
        )
        for d in dists:
            if not isinstance(d, dict):
                raise TypeError(f"Parameter distribution is not a dict ({d!r})")
            for key, v in d.items():
                if not (hasattr(v, "rvs") or isinstance(v, (np.ndarray, Sequence))) or isinstance(
                    v, str
                ):
                    raise TypeError(
                        f"Parameter grid for parameter {key!r} is not iterable or a distribution "
                        f"(value={v})"
                    )
        self.param_distributions = dists
        self.n_iter = n_iter
        self.random_state = random_state

    def _all_lists(self):
        return all(not hasattr(v, "rvs") for d in self.param_distributions for v in d.values())

    def __iter__(self):
        rng = check_random_state(self.random_state)
        if self._all_lists():
            grid = ParameterGrid(self.param_distributions)
            n = len(grid)
            n_iter = self.n_iter
            if n < n_iter:
                import warnings

                warnings.warn(
                    f"The total space of parameters {n} is smaller than n_iter={n_iter}. "
                    "Running {n} iterations. For exhaustive searches, use GridSearchCV.".replace(
                        "{n}", str(n)
                    ),
                    UserWarning,
                    stacklevel=2,
                )
                n_iter = n
            points = list(grid)
            pick = np.asarray(rng.permutation(n).tolist()[:n_iter], dtype=np.int64)
            for i in pick:
                yield points[int(i)]
            return
        # Distributions: scipy's rvs wants a NumPy RandomState, seeded from the ember stream.
        np_rng = np.random.RandomState(int(rng.integers(0, 2**31 - 1)))
        for _ in range(self.n_iter):
            d = self.param_distributions[int(np_rng.randint(len(self.param_distributions)))]
            params = {}
            for k in sorted(d):
                v = d[k]
                if hasattr(v, "rvs"):
                    params[k] = v.rvs(random_state=np_rng)
                else:
                    params[k] = v[int(np_rng.randint(len(v)))]
            yield params

    def __len__(self):
        if self._all_lists():
            return min(self.n_iter, len(ParameterGrid(self.param_distributions)))
        return self.n_iter


def _rank_min(scores):
    """1 + number of strictly better scores; NaN ranks last (scikit-learn's 'min' ranking)."""
    s = np.asarray(scores, dtype=np.float64)
    if np.all(np.isnan(s)):
        return np.ones(len(s), dtype=np.int32)
    s = np.where(np.isnan(s), -np.inf, s)
    return (1 + (s[None, :] > s[:, None]).sum(axis=1)).astype(np.int32)


def _param_column(candidates, name):
    values = [c.get(name, None) for c in candidates]
    mask = [name not in c for c in candidates]
    try:
        arr = np.array([v for v, m in zip(values, mask, strict=True) if not m])
        typed = arr.ndim == 1 and arr.dtype.kind != "O"
    except Exception:
        typed = False
    if typed and not any(mask):
        data = np.array(values)
    else:
        data = np.empty(len(values), dtype=object)
        data[:] = values
    return np.ma.MaskedArray(data, mask=mask)


class BaseSearchCV(BaseEstimator):
    """Shared fit/refit/delegation of the searches."""

    _required_parameters = ["estimator"]

    @property
    def _estimator_type(self):
        return getattr(self.estimator, "_estimator_type", None)

    def _check_refit(self, scorers, multimetric):
        if multimetric and self.refit is not False and not callable(self.refit):
            if not isinstance(self.refit, str) or self.refit not in scorers:
                raise ValueError(
                    "For multi-metric scoring, the parameter refit must be set to a scorer key or "
                    "a callable to refit an estimator with the best parameter setting on the "
                    f"whole data and make the best_* attributes available for that metric. If "
                    f"this is not needed, refit should be set to False explicitly. {self.refit!r} "
                    "was passed."
                )

    def fit(self, X, y=None, **params):
        """Fit every candidate on every split, then refit the best on all of X."""
        self._validate_params()
        if not hasattr(self.estimator, "fit"):
            raise TypeError(
                f"estimator should be an estimator implementing 'fit' method, "
                f"{self.estimator!r} was passed"
            )
        scorers, multimetric = _scorers(self.scoring)
        self._check_refit(scorers, multimetric)
        splitter = check_cv(self.cv, y, classifier=is_classifier(self.estimator))
        splits = list(splitter.split(X, y, None))
        candidates = list(self._candidates())
        results = []
        for cand in candidates:
            for train, test in splits:
                est = clone(self.estimator).set_params(**clone(cand, safe=False))
                results.append(
                    _fit_and_score(
                        est,
                        X,
                        y,
                        train,
                        test,
                        scorers,
                        params,
                        self.error_score,
                        self.return_train_score,
                    )
                )
        _warn_failed(results, self.error_score)
        self.cv_results_ = self._format(candidates, results, len(splits), scorers, multimetric)
        self.multimetric_ = multimetric
        self.n_splits_ = len(splits)
        self.scorer_ = scorers if multimetric else scorers["score"]
        refit_metric = self.refit if multimetric else "score"
        if self.refit is not False:
            if callable(self.refit):
                idx = self.refit(self.cv_results_)
                if not isinstance(idx, Integral) or not 0 <= idx < len(candidates):
                    raise IndexError("best_index_ index out of range")
                self.best_index_ = int(idx)
            else:
                self.best_index_ = int(np.argmin(self.cv_results_[f"rank_test_{refit_metric}"]))
                self.best_score_ = float(
                    self.cv_results_[f"mean_test_{refit_metric}"][self.best_index_]
                )
            self.best_params_ = candidates[self.best_index_]
            best = clone(self.estimator).set_params(**clone(self.best_params_, safe=False))
            t0 = time.perf_counter()
            if y is None:
                best.fit(X, **params)
            else:
                best.fit(X, y, **params)
            self.refit_time_ = time.perf_counter() - t0
            self.best_estimator_ = best
            for attr in ("n_features_in_", "feature_names_in_"):
                if hasattr(best, attr):
                    setattr(self, attr, getattr(best, attr))
        return self

    def _format(self, candidates, results, n_splits, scorers, multimetric):
        n = len(candidates)
        out = {}

        def grid(key, inner):
            return np.asarray(
                [r[key] if inner is None else r[key][inner] for r in results], dtype=np.float64
            ).reshape(n, n_splits)

        for key in ("fit_time", "score_time"):
            a = grid(key, None)
            out[f"mean_{key}"] = a.mean(axis=1)
            out[f"std_{key}"] = a.std(axis=1)
        names = sorted({k for c in candidates for k in c})
        for name in names:
            out[f"param_{name}"] = _param_column(candidates, name)
        out["params"] = candidates
        sets = ["test"] + (["train"] if self.return_train_score else [])
        for metric in scorers:
            suffix = metric if multimetric else "score"
            for which in sets:
                a = grid(which, metric)
                for i in range(n_splits):
                    out[f"split{i}_{which}_{suffix}"] = a[:, i]
                out[f"mean_{which}_{suffix}"] = a.mean(axis=1)
                out[f"std_{which}_{suffix}"] = a.std(axis=1)
                if which == "test":
                    out[f"rank_test_{suffix}"] = _rank_min(out[f"mean_test_{suffix}"])
        return out

    # -- delegation to the refitted estimator

    def _best(self, method):
        if self.refit is False:
            raise AttributeError(
                f"This {type(self).__name__} instance was initialized with `refit=False`. "
                f"{method} is available only after refitting on the best parameters. You can "
                "refit an estimator manually using the `best_params_` attribute"
            )
        if not hasattr(self, "best_estimator_"):
            raise not_fitted(self)
        if not hasattr(self.best_estimator_, method):
            raise AttributeError(
                f"This {type(self).__name__} has no attribute {method!r} "
                f"('{type(self.best_estimator_).__name__}' object has no attribute {method!r})"
            )
        return getattr(self.best_estimator_, method)

    def predict(self, X):
        return self._best("predict")(X)

    def predict_proba(self, X):
        return self._best("predict_proba")(X)

    def predict_log_proba(self, X):
        return self._best("predict_log_proba")(X)

    def decision_function(self, X):
        return self._best("decision_function")(X)

    def transform(self, X):
        return self._best("transform")(X)

    def inverse_transform(self, X):
        return self._best("inverse_transform")(X)

    def score_samples(self, X):
        return self._best("score_samples")(X)

    def score(self, X, y=None, **params):
        """The refit metric's score of the best estimator."""
        self._best("fit")
        scorer = self.scorer_[self.refit] if self.multimetric_ else self.scorer_
        return scorer(self.best_estimator_, X, y, **params)

    @property
    def classes_(self):
        return self._best("classes_")


class GridSearchCV(BaseSearchCV):
    """Exhaustive search over ``param_grid`` with cross-validation."""

    _parameter_constraints = {"return_train_score": ["boolean"]}

    def __init__(
        self,
        estimator,
        param_grid,
        *,
        scoring=None,
        n_jobs=None,
        refit=True,
        cv=None,
        verbose=0,
        pre_dispatch="2*n_jobs",
        error_score=np.nan,
        return_train_score=False,
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.refit = refit
        self.cv = cv
        self.verbose = verbose
        self.pre_dispatch = pre_dispatch
        self.error_score = error_score
        self.return_train_score = return_train_score

    def _candidates(self):
        return ParameterGrid(self.param_grid)


class RandomizedSearchCV(BaseSearchCV):
    """Search over ``n_iter`` settings drawn from ``param_distributions``."""

    _parameter_constraints = {"return_train_score": ["boolean"], "random_state": ["random_state"]}

    def __init__(
        self,
        estimator,
        param_distributions,
        *,
        n_iter=10,
        scoring=None,
        n_jobs=None,
        refit=True,
        cv=None,
        verbose=0,
        pre_dispatch="2*n_jobs",
        random_state=None,
        error_score=np.nan,
        return_train_score=False,
    ):
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.n_iter = n_iter
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.refit = refit
        self.cv = cv
        self.verbose = verbose
        self.pre_dispatch = pre_dispatch
        self.random_state = random_state
        self.error_score = error_score
        self.return_train_score = return_train_score

    def _candidates(self):
        return ParameterSampler(
            self.param_distributions, self.n_iter, random_state=self.random_state
        )
