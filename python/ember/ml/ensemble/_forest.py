"""Random forests and extra-trees (scikit-learn's ``RandomForestClassifier`` & co.) on ember
arrays: the features are binned once for the whole forest, each tree is grown on bootstrap
multiplicities (a ``bincount`` of drawn row indices, used as weights) by the level-wise
histogram engine of ``ember.ml.tree``, and predictions are averaged on the device."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

import ember

from ..base import BaseEstimator, ClassifierMixin, RegressorMixin
from ..tree._grow import tree_apply
from ..tree._tree import (
    _COMMON,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreeClassifier,
    ExtraTreeRegressor,
    _FitData,
    class_weight_vector,
    fit_tree,
    resolve_max_features,
)
from ..utils._labels import decode_labels
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    check_random_state,
    input_kind,
    is_ember,
    to_device,
    to_output,
)

__all__ = [
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
    "RandomForestClassifier",
    "RandomForestRegressor",
]

_TREE_PARAMS = (
    "criterion",
    "max_depth",
    "min_samples_split",
    "min_samples_leaf",
    "min_weight_fraction_leaf",
    "max_features",
    "min_impurity_decrease",
    "max_bins",
)

_FOREST = {
    **{k: v for k, v in _COMMON.items() if k != "splitter"},
    "n_estimators": [Interval(numbers.Integral, 1, None, closed="left")],
    "bootstrap": ["boolean"],
    "oob_score": ["boolean", callable],
    "n_jobs": [numbers.Integral, None],
    "verbose": [numbers.Integral],
    "warm_start": ["boolean"],
    "max_samples": [
        None,
        Interval(numbers.Real, 0.0, 1.0, closed="right"),
        Interval(numbers.Integral, 1, None, closed="left"),
    ],
}


class _BaseForest(BaseEstimator):
    _tree_cls = None
    _splitter = "best"

    def _fit(self, X, y, sample_weight, classify):
        self._validate_params()
        who = type(self).__name__
        if self.oob_score and not self.bootstrap:
            raise ValueError(f"{who}: Out of bag estimation only available if bootstrap=True")
        data = _FitData(self, X, y, sample_weight, classify)
        n, dev = data.n, data.dev
        rng = check_random_state(self.random_state)
        n_draw = n
        self._n_rows = n
        if self.bootstrap and self.max_samples is not None:
            ms = self.max_samples
            if isinstance(ms, numbers.Integral):
                if ms > n:
                    raise ValueError(f"{who}: `max_samples` must be <= n_samples={n} but got {ms}")
                n_draw = int(ms)
            else:
                n_draw = max(1, round(n * ms))
        cw_all = None
        if classify:
            self.classes_ = data.classes if data.kind == "ember" else _host(data.classes)
            self.n_classes_ = data.K
            if self.class_weight != "balanced_subsample":
                cw_all = class_weight_vector(self.class_weight, data.classes, data.yi, data.K,
                                             dev, who)  # fmt: skip
        params = {k: getattr(self, k) for k in _TREE_PARAMS}
        params["splitter"] = self._splitter
        trees = list(getattr(self, "estimators_", [])) if self.warm_start else []
        n_more = self.n_estimators - len(trees)
        if n_more < 0:
            raise ValueError(
                f"{who}: n_estimators={self.n_estimators} must be larger or equal to "
                f"len(estimators_)={len(trees)} when warm_start==True"
            )
        if n_more == 0 and trees:
            warnings.warn(
                "Warm-start fitting without increasing n_estimators does not fit new trees.",
                UserWarning,
                stacklevel=3,
            )
        for _ in range(len(trees)):  # the seeds the kept trees used
            rng.integers(0, 2**31 - 1, size=1)
        for _ in range(n_more):
            seed = int(rng.integers(0, 2**31 - 1, size=1)[0])  # host: one seed per tree
            trng = ember.random.default_rng(seed)
            cnt = self._counts(trng, n, n_draw, dev)
            cw = cw_all
            if classify and self.class_weight == "balanced_subsample":
                counts = ember.bincount(data.yi, weights=cnt.astype(ember.float64),
                                        minlength=data.K)  # fmt: skip
                tot = counts.sum()
                cw = tot / (data.K * ember.where(counts > 0, counts, 1.0))
            est = self._tree_cls(**params, random_state=seed)
            est.tree_ = fit_tree(est, data, cnt, trng, cw)
            est.n_features_in_ = data.F
            est.n_outputs_ = 1
            est.max_features_ = resolve_max_features(self.max_features, data.F, who)
            est._dtype = data.dtype
            if classify:
                est.classes_ = self.classes_
                est.n_classes_ = data.K
            trees.append(est)
        self.estimators_ = trees
        self.estimator_ = self._tree_cls(**params)
        self.n_outputs_ = 1
        self._dtype = data.dtype
        self._kind = data.kind
        self._n_draw = n_draw
        if self.oob_score:
            self._set_oob(data, classify)
        return self

    def _counts(self, trng, n, n_draw, dev):
        """Row multiplicities of one tree: its bootstrap draw (the first draw of its seed)."""
        if self.bootstrap:
            idx = trng.integers(0, n, size=n_draw, device=dev)
            return ember.bincount(idx, minlength=n)
        return ember.ones((n,), dtype=ember.int64, device=dev)

    @property
    def estimators_samples_(self):
        """Indices of the rows each tree was grown on (its bootstrap draw, with repeats)."""
        check_is_fitted(self, "estimators_")
        dev = self.estimators_[0].tree_._a["feature"].device
        n = self._n_draw if self.bootstrap else None
        out = []
        for e in self.estimators_:
            if self.bootstrap:
                idx = ember.random.default_rng(e.random_state).integers(
                    0, self._n_rows, size=n, device=dev
                )
            else:
                idx = ember.arange(self._n_rows, device=dev)
            out.append(to_output(idx, self._kind))
        return out

    def _set_oob(self, data, classify):
        oob_sum = None
        oob_n = ember.zeros((data.n,), dtype=ember.float64, device=data.dev)
        for e in self.estimators_:  # the rows each tree did not draw (regenerated from its seed)
            trng = ember.random.default_rng(e.random_state)
            oob = (self._counts(trng, data.n, self._n_draw, data.dev) == 0).astype(ember.float64)
            t = e.tree_
            v = ember.take(t._a["value"][:, 0, :], tree_apply(t, data.X), axis=0) * oob[:, None]
            oob_sum = v if oob_sum is None else oob_sum + v
            oob_n = oob_n + oob
        seen = oob_n > 0
        avg = oob_sum / ember.where(seen, oob_n, 1.0)[:, None]
        if classify:
            pred = ember.argmax(avg, axis=1)
            ok = ((pred == data.yi) & seen).astype(ember.float64).sum()
            self.oob_decision_function_ = to_output(avg, data.kind)
            self.oob_score_ = float(ok) / max(1.0, float(seen.astype(ember.float64).sum()))
        else:
            p = avg[:, 0]
            y = data.y
            sf = seen.astype(ember.float64)
            m = float((y * sf).sum() / sf.sum())
            ss_res = float((((y - p) ** 2) * sf).sum())
            ss_tot = float((((y - m) ** 2) * sf).sum())
            self.oob_prediction_ = to_output(p, data.kind)
            self.oob_score_ = 1.0 - ss_res / ss_tot if ss_tot > 0 else 0.0

    def _check_X(self, X):
        check_is_fitted(self, "estimators_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        dev = self.estimators_[0].tree_._a["feature"].device
        return to_device(Xa, dev).astype(ember.float64)

    def _mean_value(self, X):
        Xa = self._check_X(X)
        acc = None
        for est in self.estimators_:
            t = est.tree_
            v = ember.take(t._a["value"][:, 0, :], tree_apply(t, Xa), axis=0)
            acc = v if acc is None else acc + v
        return acc / len(self.estimators_)

    def apply(self, X):
        """Leaf index of every sample in every tree, (n_samples, n_estimators)."""
        Xa = self._check_X(X)
        out = ember.stack([tree_apply(e.tree_, Xa) for e in self.estimators_], axis=1)
        return to_output(out, input_kind(X))

    @property
    def feature_importances_(self):
        """Mean of the trees' normalized impurity-based importances (normalized to sum 1)."""
        check_is_fitted(self, "estimators_")
        imps = [
            e.tree_.compute_feature_importances()
            for e in self.estimators_
            if e.tree_.node_count > 1
        ]
        if not imps:
            return to_output(ember.zeros((self.n_features_in_,), dtype=ember.float64), self._kind)
        m = ember.stack(imps, axis=0).mean(axis=0)
        return to_output(m / m.sum(), self._kind)

    def __len__(self):
        return len(self.estimators_)

    def __getitem__(self, i):
        return self.estimators_[i]

    def __iter__(self):
        return iter(self.estimators_)


def _host(c):
    return ember.asnumpy(c) if is_ember(c) else np.asarray(c)


class _ForestClassifier(ClassifierMixin, _BaseForest):
    _parameter_constraints = {
        **_FOREST,
        "criterion": [StrOptions({"gini", "entropy", "log_loss"})],
        "class_weight": [dict, StrOptions({"balanced", "balanced_subsample"}), None],
    }

    def fit(self, X, y, sample_weight=None):
        return self._fit(X, y, sample_weight, True)

    def predict_proba(self, X):
        """Mean of the trees' leaf class fractions."""
        return to_output(self._mean_value(X).astype(self._dtype), input_kind(X))

    def predict_log_proba(self, X):
        return to_output(ember.log(self._mean_value(X)).astype(self._dtype), input_kind(X))

    def predict(self, X):
        idx = ember.argmax(self._mean_value(X), axis=1)
        return decode_labels(self.classes_, idx, input_kind(X))


class _ForestRegressor(RegressorMixin, _BaseForest):
    _parameter_constraints = {
        **_FOREST,
        "criterion": [StrOptions({"squared_error", "friedman_mse"})],
    }

    def fit(self, X, y, sample_weight=None):
        return self._fit(X, y, sample_weight, False)

    def predict(self, X):
        """Mean of the trees' predictions."""
        return to_output(self._mean_value(X)[:, 0].astype(self._dtype), input_kind(X))


def _init(self, kw):
    for k, v in kw.items():
        setattr(self, k, v)


class RandomForestClassifier(_ForestClassifier):
    """Random forest classifier: bootstrap trees with ``max_features='sqrt'`` per split."""

    _tree_cls = DecisionTreeClassifier

    def __init__(self, n_estimators=100, *, criterion="gini", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features="sqrt", min_impurity_decrease=0.0, bootstrap=True,
                 oob_score=False, n_jobs=None, random_state=None, verbose=0, warm_start=False,
                 class_weight=None, max_samples=None, max_bins=256):  # fmt: skip
        _init(self, {k: v for k, v in locals().items() if k != "self"})


class ExtraTreesClassifier(_ForestClassifier):
    """Extra-trees classifier: one random cut per feature and node, no bootstrap by default."""

    _tree_cls = ExtraTreeClassifier
    _splitter = "random"

    def __init__(self, n_estimators=100, *, criterion="gini", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features="sqrt", min_impurity_decrease=0.0, bootstrap=False,
                 oob_score=False, n_jobs=None, random_state=None, verbose=0, warm_start=False,
                 class_weight=None, max_samples=None, max_bins=256):  # fmt: skip
        _init(self, {k: v for k, v in locals().items() if k != "self"})


class RandomForestRegressor(_ForestRegressor):
    """Random forest regressor: bootstrap trees over all features (``max_features=1.0``)."""

    _tree_cls = DecisionTreeRegressor

    def __init__(self, n_estimators=100, *, criterion="squared_error", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=1.0, min_impurity_decrease=0.0, bootstrap=True,
                 oob_score=False, n_jobs=None, random_state=None, verbose=0, warm_start=False,
                 max_samples=None, max_bins=256):  # fmt: skip
        _init(self, {k: v for k, v in locals().items() if k != "self"})


class ExtraTreesRegressor(_ForestRegressor):
    """Extra-trees regressor: one random cut per feature and node, no bootstrap by default."""

    _tree_cls = ExtraTreeRegressor
    _splitter = "random"

    def __init__(self, n_estimators=100, *, criterion="squared_error", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=1.0, min_impurity_decrease=0.0, bootstrap=False,
                 oob_score=False, n_jobs=None, random_state=None, verbose=0, warm_start=False,
                 max_samples=None, max_bins=256):  # fmt: skip
        _init(self, {k: v for k, v in locals().items() if k != "self"})
