"""``DecisionTreeClassifier``/``DecisionTreeRegressor`` and their extremely randomized
variants on ember arrays (any device), grown by the histogram engine of ``_grow``.

Unlike scikit-learn's exact splitter, every feature is first quantized into at most
``max_bins`` (default 256) bins; features with at most ``max_bins`` distinct values are binned
exactly (thresholds at the midpoints between distinct values), so trees then split as
scikit-learn's do.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

import ember

from ..base import BaseEstimator, ClassifierMixin, RegressorMixin
from ..utils._labels import decode_labels, encode_labels
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_classification_targets,
    check_is_fitted,
    check_n_features,
    check_random_state,
    check_sample_weight,
    check_X_y,
    input_kind,
    is_ember,
    to_device,
    to_output,
)
from ._grow import bin_features, grow_tree, tree_apply

__all__ = [
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "ExtraTreeClassifier",
    "ExtraTreeRegressor",
]

_COMMON = {
    "splitter": [StrOptions({"best", "random"})],
    "max_depth": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "min_samples_split": [
        Interval(numbers.Integral, 2, None, closed="left"),
        Interval(numbers.Real, 0.0, 1.0, closed="right"),
    ],
    "min_samples_leaf": [
        Interval(numbers.Integral, 1, None, closed="left"),
        Interval(numbers.Real, 0.0, 1.0, closed="neither"),
    ],
    "min_weight_fraction_leaf": [Interval(numbers.Real, 0.0, 0.5, closed="both")],
    "max_features": [
        Interval(numbers.Integral, 1, None, closed="left"),
        Interval(numbers.Real, 0.0, 1.0, closed="right"),
        StrOptions({"sqrt", "log2"}),
        None,
    ],
    "random_state": ["random_state"],
    "min_impurity_decrease": [Interval(numbers.Real, 0.0, None, closed="left")],
    "max_bins": [Interval(numbers.Integral, 2, 65536, closed="both")],
}


def resolve_max_features(max_features, F, who):
    if max_features is None:
        return F
    if isinstance(max_features, str):
        v = max(1, int(math.sqrt(F))) if max_features == "sqrt" else max(1, int(math.log2(F)))
        return v
    if isinstance(max_features, numbers.Integral):
        if max_features > F:
            raise ValueError(f"{who}: max_features must be <= n_features ({F}), got {max_features}")
        return int(max_features)
    return max(1, int(max_features * F))


def class_weight_vector(class_weight, classes, yi, K, dev, who):
    """Per-class weights (K,) for ``class_weight`` ('balanced' or a dict over labels)."""
    if class_weight is None:
        return None
    if isinstance(class_weight, str):
        if class_weight not in ("balanced", "balanced_subsample"):
            raise ValueError(f"{who}: class_weight must be dict, 'balanced' or None")
        counts = ember.bincount(yi, minlength=K).astype(ember.float64)
        return float(yi.shape[0]) / (K * ember.where(counts > 0, counts, 1.0))
    cls = ember.asnumpy(classes) if is_ember(classes) else np.asarray(classes)
    w = np.ones(K, dtype=np.float64)
    for k, v in class_weight.items():
        hits = np.nonzero(cls == k)[0]
        if hits.size == 0:
            raise ValueError(f"{who}: The classes, {[k]!r}, are not in class_weight")
        w[hits[0]] = float(v)
    return to_device(w, dev)


class _FitData:
    """The quantized training data shared by one tree or all trees of a forest."""

    def __init__(self, est, X, y, sample_weight, classify):
        who = type(est).__name__
        Xa, ya = check_X_y(X, y, estimator=est, y_numeric=not classify)
        check_n_features(est, Xa, reset=True)
        self.kind = input_kind(X)
        self.dtype = Xa.dtype
        dev = Xa.device
        n = int(Xa.shape[0])
        if classify:
            check_classification_targets(ya, who)
            yk = ya if input_kind(y) == "ember" else ember.asnumpy(ya) if is_ember(ya) else ya
            classes, yi = encode_labels(yk, dev)
            self.classes = classes
            self.K = int(classes.shape[0])
            self.yi = yi
        else:
            self.y = ya.astype(ember.float64)
        self.sw = check_sample_weight(sample_weight, Xa, ember.float64)
        self.n = n
        self.F = int(Xa.shape[1])
        self.dev = dev
        self.X = Xa.astype(ember.float64)
        self.codes, self.thr, self.n_thr, self.bmin, self.bmax = bin_features(Xa, est.max_bins)

    def channels(self, criterion, weights):
        """(n, C) weighted statistic channels of every row."""
        if criterion == "squared_error":
            y = self.y
            return ember.stack([weights, weights * y, weights * y * y], axis=1)
        onehot = self.yi[:, None] == ember.arange(self.K, device=self.dev)[None, :]
        return onehot.astype(ember.float64) * weights[:, None]


def fit_tree(est, data, cnt, rng, class_w=None):
    """Grow one tree of ``est``'s parameters on ``data`` with row multiplicities ``cnt``."""
    who = type(est).__name__
    n = data.n
    mss = est.min_samples_split
    mss = int(mss) if isinstance(mss, numbers.Integral) else max(2, int(math.ceil(mss * n)))
    msl = est.min_samples_leaf
    msl = int(msl) if isinstance(msl, numbers.Integral) else max(1, int(math.ceil(msl * n)))
    mf = resolve_max_features(est.max_features, data.F, who)
    # rows of zero weight are left out (as if removed): they must not move thresholds
    cntf = ember.where(data.sw > 0, cnt.astype(ember.float64), 0.0)
    w = data.sw * cntf
    if class_w is not None:
        w = w * ember.take(class_w, data.yi)
    mwl = 0.0
    if est.min_weight_fraction_leaf > 0:
        mwl = est.min_weight_fraction_leaf * float(w.sum())
    criterion = est.criterion
    if criterion in ("friedman_mse",):
        criterion = "squared_error"
    S = data.channels(criterion, w)
    return grow_tree(
        data.codes,
        data.thr,
        data.n_thr,
        data.bmin,
        data.bmax,
        S,
        # sample counts see each drawn row once (its multiplicity is a weight), as scikit-learn
        (cntf > 0).astype(ember.float64),
        criterion=criterion,
        max_depth=est.max_depth,
        min_samples_split=mss,
        min_samples_leaf=msl,
        min_weight_leaf=mwl,
        max_features=mf,
        min_impurity_decrease=est.min_impurity_decrease,
        splitter=est.splitter,
        rng=rng,
        kind=data.kind,
    )


class _BaseTree(BaseEstimator):
    def _fit(self, X, y, sample_weight, classify):
        self._validate_params()
        data = _FitData(self, X, y, sample_weight, classify)
        rng = check_random_state(self.random_state)
        cw = None
        if classify:
            cw = class_weight_vector(
                self.class_weight, data.classes, data.yi, data.K, data.dev, type(self).__name__
            )
            self.classes_ = data.classes if data.kind == "ember" else _host(data.classes)
            self.n_classes_ = data.K
        cnt = ember.ones((data.n,), dtype=ember.int64, device=data.dev)
        self.tree_ = fit_tree(self, data, cnt, rng, cw)
        self.max_features_ = resolve_max_features(self.max_features, data.F, type(self).__name__)
        self.n_outputs_ = 1
        self._dtype = data.dtype
        return self

    def _check_X(self, X):
        check_is_fitted(self, "tree_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        dev = self.tree_._a["feature"].device
        return to_device(Xa, dev).astype(ember.float64)

    def apply(self, X):
        """Index of the leaf each sample ends in."""
        return to_output(tree_apply(self.tree_, self._check_X(X)), input_kind(X))

    def decision_path(self, X):
        """Indicator (n_samples, node_count) of the nodes each sample passes (dense)."""
        Xa = self._check_X(X)
        t = self.tree_
        a = t._a
        n = int(Xa.shape[0])
        node = ember.zeros((n,), dtype=ember.int64, device=Xa.device)
        ind = ember.zeros((n, t.node_count), dtype=ember.int64, device=Xa.device)
        rows = ember.arange(n, device=Xa.device)
        ind[rows, node] = 1
        for _ in range(t.max_depth):
            f = ember.take(a["feature"], node)
            x = ember.take_along_axis(Xa, ember.clip(f, 0, None)[:, None], axis=1)[:, 0]
            go = x <= ember.take(a["threshold"], node)
            nxt = ember.where(
                go, ember.take(a["children_left"], node), ember.take(a["children_right"], node)
            )
            node = ember.where(f >= 0, nxt, node)
            ind[rows, node] = 1
        return to_output(ind, input_kind(X))

    def get_depth(self):
        check_is_fitted(self, "tree_")
        return self.tree_.max_depth

    def get_n_leaves(self):
        check_is_fitted(self, "tree_")
        return self.tree_.n_leaves

    @property
    def feature_importances_(self):
        check_is_fitted(self, "tree_")
        return to_output(self.tree_.compute_feature_importances(), self.tree_._kind)

    def _leaf_values(self, X):
        Xa = self._check_X(X)
        leaf = tree_apply(self.tree_, Xa)
        return ember.take(self.tree_._a["value"][:, 0, :], leaf, axis=0)


def _host(c):
    return ember.asnumpy(c) if is_ember(c) else np.asarray(c)


class DecisionTreeClassifier(ClassifierMixin, _BaseTree):
    """Decision tree classifier (criteria 'gini', 'entropy', 'log_loss') grown breadth-first
    on binned features (``max_bins``, default 256)."""

    _parameter_constraints = {
        **_COMMON,
        "criterion": [StrOptions({"gini", "entropy", "log_loss"})],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def __init__(
        self,
        *,
        criterion="gini",
        splitter="best",
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_features=None,
        random_state=None,
        min_impurity_decrease=0.0,
        class_weight=None,
        max_bins=256,
    ):
        self.criterion = criterion
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.random_state = random_state
        self.min_impurity_decrease = min_impurity_decrease
        self.class_weight = class_weight
        self.max_bins = max_bins

    def fit(self, X, y, sample_weight=None):
        return self._fit(X, y, sample_weight, True)

    def predict_proba(self, X):
        """Class fractions of the leaf each sample ends in (columns in ``classes_`` order)."""
        p = self._leaf_values(X)
        return to_output(p.astype(self._dtype), input_kind(X))

    def predict_log_proba(self, X):
        p = self._leaf_values(X)
        return to_output(ember.log(p).astype(self._dtype), input_kind(X))

    def predict(self, X):
        idx = ember.argmax(self._leaf_values(X), axis=1)
        return decode_labels(self.classes_, idx, input_kind(X))


class DecisionTreeRegressor(RegressorMixin, _BaseTree):
    """Decision tree regressor (criterion 'squared_error'; 'friedman_mse' is accepted and
    treated as squared error) grown breadth-first on binned features."""

    _parameter_constraints = {
        **_COMMON,
        "criterion": [StrOptions({"squared_error", "friedman_mse"})],
    }

    def __init__(
        self,
        *,
        criterion="squared_error",
        splitter="best",
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_features=None,
        random_state=None,
        min_impurity_decrease=0.0,
        max_bins=256,
    ):
        self.criterion = criterion
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.random_state = random_state
        self.min_impurity_decrease = min_impurity_decrease
        self.max_bins = max_bins

    def fit(self, X, y, sample_weight=None):
        return self._fit(X, y, sample_weight, False)

    def predict(self, X):
        v = self._leaf_values(X)[:, 0]
        return to_output(v.astype(self._dtype), input_kind(X))


class ExtraTreeClassifier(DecisionTreeClassifier):
    """Extremely randomized tree classifier: one random cut per feature and node."""

    def __init__(
        self,
        *,
        criterion="gini",
        splitter="random",
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_features="sqrt",
        random_state=None,
        min_impurity_decrease=0.0,
        class_weight=None,
        max_bins=256,
    ):
        super().__init__(
            criterion=criterion,
            splitter=splitter,
            max_depth=max_depth,
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            min_weight_fraction_leaf=min_weight_fraction_leaf,
            max_features=max_features,
            random_state=random_state,
            min_impurity_decrease=min_impurity_decrease,
            class_weight=class_weight,
            max_bins=max_bins,
        )


class ExtraTreeRegressor(DecisionTreeRegressor):
    """Extremely randomized tree regressor: one random cut per feature and node."""

    def __init__(
        self,
        *,
        criterion="squared_error",
        splitter="random",
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_features=1.0,
        random_state=None,
        min_impurity_decrease=0.0,
        max_bins=256,
    ):
        super().__init__(
            criterion=criterion,
            splitter=splitter,
            max_depth=max_depth,
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            min_weight_fraction_leaf=min_weight_fraction_leaf,
            max_features=max_features,
            random_state=random_state,
            min_impurity_decrease=min_impurity_decrease,
            max_bins=max_bins,
        )
