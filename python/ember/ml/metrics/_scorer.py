"""Scorers (scikit-learn's ``make_scorer``, ``get_scorer``, ``check_scoring``): a metric wrapped
as ``scorer(estimator, X, y, sample_weight=None)``, greater is better (losses negated)."""

from __future__ import annotations

__all__ = ["check_scoring", "get_scorer", "get_scorer_names", "make_scorer"]


class _Scorer:
    """Calls ``estimator.<response_method>(X)`` and scores it with ``score_func``."""

    def __init__(self, score_func, sign, kwargs, response_method):
        self._score_func = score_func
        self._sign = sign
        self._kwargs = kwargs
        self._response_method = response_method

    def _response(self, est, X):
        methods = self._response_method
        methods = (methods,) if isinstance(methods, str) else tuple(methods)
        for m in methods:
            if hasattr(est, m):
                out = getattr(est, m)(X)
                if m == "predict_proba" and out.ndim == 2 and out.shape[1] == 2:
                    out = out[:, 1]  # binary: the positive class's column
                return out
        raise AttributeError(
            f"{type(est).__name__} has none of the following attributes: {', '.join(methods)}."
        )

    def __call__(self, estimator, X, y_true, sample_weight=None, **kw):
        y_pred = self._response(estimator, X)
        kwargs = dict(self._kwargs)
        if sample_weight is not None:
            kwargs["sample_weight"] = sample_weight
        return self._sign * self._score_func(y_true, y_pred, **kwargs)

    def __repr__(self):
        name = getattr(self._score_func, "__name__", repr(self._score_func))
        extra = "" if self._sign > 0 else ", greater_is_better=False"
        method = self._response_method
        method = f"'{method}'" if isinstance(method, str) else repr(method)
        args = "".join(f", {k}={v!r}" for k, v in self._kwargs.items())
        return f"make_scorer({name}{extra}, response_method={method}{args})"


def make_scorer(score_func, *, response_method="predict", greater_is_better=True, **kwargs):
    """A scorer from a metric ``score_func(y_true, y_pred, **kwargs)``."""
    if response_method in (None, "default"):
        response_method = "predict"
    return _Scorer(score_func, 1 if greater_is_better else -1, kwargs, response_method)


def _table():
    from . import _more as mo
    from . import _scores as sc

    dec = ("decision_function", "predict_proba")
    t = {
        "accuracy": (sc.accuracy_score, 1, {}, "predict"),
        "balanced_accuracy": (mo.balanced_accuracy_score, 1, {}, "predict"),
        "r2": (sc.r2_score, 1, {}, "predict"),
        "explained_variance": (sc.explained_variance_score, 1, {}, "predict"),
        "neg_mean_squared_error": (sc.mean_squared_error, -1, {}, "predict"),
        "neg_root_mean_squared_error": (sc.root_mean_squared_error, -1, {}, "predict"),
        "neg_mean_absolute_error": (sc.mean_absolute_error, -1, {}, "predict"),
        "neg_mean_absolute_percentage_error": (
            mo.mean_absolute_percentage_error,
            -1,
            {},
            "predict",
        ),
        "neg_log_loss": (mo.log_loss, -1, {}, "predict_proba"),
        "roc_auc": (sc.roc_auc_score, 1, {}, dec),
        "roc_auc_ovr": (sc.roc_auc_score, 1, {"multi_class": "ovr"}, "predict_proba"),
        "roc_auc_ovo": (sc.roc_auc_score, 1, {"multi_class": "ovo"}, "predict_proba"),
        "roc_auc_ovr_weighted": (
            sc.roc_auc_score,
            1,
            {"multi_class": "ovr", "average": "weighted"},
            "predict_proba",
        ),
        "average_precision": (mo.average_precision_score, 1, {}, dec),
        "matthews_corrcoef": (mo.matthews_corrcoef, 1, {}, "predict"),
        "adjusted_rand_score": (mo.adjusted_rand_score, 1, {}, "predict"),
        "normalized_mutual_info_score": (mo.normalized_mutual_info_score, 1, {}, "predict"),
        "adjusted_mutual_info_score": (mo.adjusted_mutual_info_score, 1, {}, "predict"),
    }
    for name, fn in (("f1", sc.f1_score), ("precision", sc.precision_score)):
        t[name] = (fn, 1, {}, "predict")
        for avg in ("macro", "micro", "weighted"):
            t[f"{name}_{avg}"] = (fn, 1, {"average": avg}, "predict")
    t["recall"] = (sc.recall_score, 1, {}, "predict")
    for avg in ("macro", "micro", "weighted"):
        t[f"recall_{avg}"] = (sc.recall_score, 1, {"average": avg}, "predict")
    return t


def get_scorer_names():
    """The names ``get_scorer`` accepts."""
    return sorted(_table())


def get_scorer(scoring):
    """The scorer for a metric name (a callable or scorer is returned as it is)."""
    if callable(scoring):
        return scoring
    if scoring is None:
        return None
    table = _table()
    if not isinstance(scoring, str) or scoring not in table:
        raise ValueError(
            f"{scoring!r} is not a valid scoring value. Use sklearn.metrics.get_scorer_names() "
            "to get valid options."
        )
    fn, sign, kw, method = table[scoring]
    return _Scorer(fn, sign, kw, method)


class _PassthroughScorer:
    """``estimator.score(X, y)``."""

    def __call__(self, estimator, X, y=None, sample_weight=None):
        if sample_weight is not None:
            return estimator.score(X, y, sample_weight=sample_weight)
        return estimator.score(X, y)

    def __repr__(self):
        return "_PassthroughScorer()"


def check_scoring(estimator=None, scoring=None, *, allow_none=False):
    """A scorer from ``scoring``, or the estimator's own ``score`` when it is None."""
    if scoring is None:
        if estimator is not None and hasattr(estimator, "score"):
            return _PassthroughScorer()
        if allow_none:
            return None
        raise TypeError(
            "If no scoring is specified, the estimator passed should have a 'score' method. "
            f"The estimator {estimator!r} does not."
        )
    return get_scorer(scoring)
