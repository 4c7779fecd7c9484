"""``HistGradientBoostingRegressor`` / ``HistGradientBoostingClassifier`` (scikit-learn's API)
on ember arrays: features are binned once (``max_bins`` bins plus one for NaN), and each
iteration grows ``n_trees_per_iteration_`` leaf-wise trees on the loss's gradients and hessians
(``_hist_grower``). Raw predictions of the training rows are updated from the leaf each row
ends in, without descending the tree again. Early stopping follows scikit-learn: on by
default ('auto') above 10,000 samples, scored by the loss (or a scorer) on a held-out
``validation_fraction`` and a training subset of at most 10,000 rows.

Not provided: categorical features, monotonic and interaction constraints (not parameters).
Binning uses all training rows (scikit-learn subsamples 200,000 for the quantiles), and the
validation split is drawn by ember's generator, so it differs from scikit-learn's for the same
``random_state``.
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
from ._gb_losses import check_link_domain, make_loss
from ._hist_grower import apply_bins, bin_thresholds, grow_hist_tree, predict_trees, staged_values

__all__ = ["HistGradientBoostingClassifier", "HistGradientBoostingRegressor"]

_SMALL_TRAINSET = 10_000

_COMMON = {
    "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
    "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
    "max_leaf_nodes": [Interval(numbers.Integral, 2, None, closed="left"), None],
    "max_depth": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "min_samples_leaf": [Interval(numbers.Integral, 1, None, closed="left")],
    "l2_regularization": [Interval(numbers.Real, 0, None, closed="left")],
    "max_features": [Interval(numbers.Real, 0, 1, closed="right")],
    "max_bins": [Interval(numbers.Integral, 2, 255, closed="both")],
    "warm_start": ["boolean"],
    "early_stopping": [StrOptions({"auto"}), "boolean"],
    "scoring": [str, callable, None],
    "validation_fraction": [
        Interval(numbers.Real, 0, 1, closed="neither"),
        Interval(numbers.Integral, 1, None, closed="left"),
        None,
    ],
    "n_iter_no_change": [Interval(numbers.Integral, 1, None, closed="left")],
    "tol": [Interval(numbers.Real, 0, None, closed="left")],
    "verbose": [numbers.Integral, "boolean"],
    "random_state": ["random_state"],
}


def _f32(a):
    return a.astype(ember.float32).astype(ember.float64)


def _host(c):
    return ember.asnumpy(c) if is_ember(c) else np.asarray(c)


class _BaseHGB(BaseEstimator):
    _allow_nan = True
    _classify = False

    # -- fitting ------------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Fit the boosted trees; returns self."""
        self._validate_params()
        who = type(self).__name__
        if isinstance(self.max_features, bool):
            raise ValueError(
                f"{who}: max_features must be a float in (0, 1], got {self.max_features!r}"
            )
        Xa, ya = check_X_y(
            X, y, estimator=self, y_numeric=not self._classify, ensure_all_finite="allow-nan"
        )
        check_n_features(self, Xa, reset=True)
        kind = input_kind(X)
        dev = Xa.device
        n = int(Xa.shape[0])
        Xf = Xa.astype(ember.float64)
        y_dev, K = self._encode_y(ya, y, dev, who)
        sw_given = sample_weight is not None
        sw = check_sample_weight(sample_weight, Xf, ember.float64)
        sw = self._class_weighted(sw, y_dev, dev, who)
        sw_given = sw_given or getattr(self, "class_weight", None) is not None
        loss = self._make_loss(K, sw_given)
        if not self._classify:
            check_link_domain(loss, y_dev, who)
        self._loss_obj = loss
        self.n_trees_per_iteration_ = loss.K
        self._dtype = Xa.dtype
        self._dev = dev
        es = self.early_stopping
        self.do_early_stopping_ = n > _SMALL_TRAINSET if es == "auto" else bool(es)
        rng = check_random_state(self.random_state)
        warm = self.warm_start and hasattr(self, "_predictors")
        if not warm:
            self._seed = int(rng.integers(0, 2**31 - 1, size=1)[0])  # host: one seed per fit
        srng = ember.random.default_rng(self._seed)
        use_val = self.do_early_stopping_ and self.validation_fraction is not None
        tr, va = None, None
        if use_val:
            tr, va = self._split(y_dev, n, srng, who)
        Xt, yt, swt = (Xf, y_dev, sw) if tr is None else (
            ember.take(Xf, tr, axis=0), ember.take(y_dev, tr), ember.take(sw, tr))  # fmt: skip
        nt = int(Xt.shape[0])
        thr = bin_thresholds(Xt, self.max_bins, swt if sw_given else None)
        data = apply_bins(Xt, thr)
        self._thr = thr
        if warm:
            if self.max_iter < self.n_iter_:
                raise ValueError(
                    f"{who}: max_iter={self.max_iter} must be larger than or equal to "
                    f"n_iter_={self.n_iter_} when warm_start==True"
                )
            predictors = [list(p) for p in self._predictors]
            baseline = self._baseline
        else:
            predictors = []
            baseline = loss.baseline(yt, swt).astype(ember.float64)
            self._baseline = baseline
            self.train_score_ = []
            self.validation_score_ = []
        Kt = loss.K
        raw = ember.broadcast_to(baseline[None, :], (nt, Kt)) + 0.0
        flat = [t for it in predictors for t in it]
        if flat:
            raw = raw + predict_trees(flat, Xt, Kt)
        cols = [raw[:, k] for k in range(Kt)]
        # early-stopping state: a small training subset and the validation rows
        small = None
        scorer = None
        if self.do_early_stopping_:
            if nt > _SMALL_TRAINSET:
                small = ember.argsort(srng.random((nt,), device=dev))[:_SMALL_TRAINSET]
            if self.scoring != "loss":
                from ..metrics._scorer import check_scoring

                scorer = check_scoring(self, self.scoring)
            if va is not None:
                Xv, yv, swv = ember.take(Xf, va, axis=0), ember.take(y_dev, va), ember.take(sw, va)
                rawv = ember.broadcast_to(baseline[None, :], (int(Xv.shape[0]), Kt)) + 0.0
                if flat:
                    rawv = rawv + predict_trees(flat, Xv, Kt)
            if not warm or not self.train_score_:
                self.train_score_, self.validation_score_ = [], []
                self._record(loss, scorer, cols, yt, swt, small, Xt, kind, predictors,
                             (rawv, yv, swv, Xv) if va is not None else None)  # fmt: skip
        begin = len(predictors)
        params = {
            "max_leaf_nodes": self.max_leaf_nodes,
            "max_depth": self.max_depth,
            "min_samples_leaf": self.min_samples_leaf,
            "l2": float(self.l2_regularization),
            "shrinkage": float(self.learning_rate),
            "max_features": float(self.max_features),
            "rng": srng,
        }
        weighted_h = sw_given
        for _ in range(begin, self.max_iter):
            raw = ember.stack(cols, axis=1)
            g, h = loss.grad_hess(yt, raw)
            if g.ndim == 1:
                g = g[:, None]
                h = None if h is None else h[:, None]
            it_trees = []
            for k in range(Kt):
                # scikit-learn keeps gradients and hessians in float32 (sums in float64):
                # rounding them the same way keeps near-tied splits in the same order
                gk = _f32(g[:, k] * swt)
                if h is None:
                    hk = _f32(swt) if weighted_h else None
                else:
                    hk = _f32(h[:, k] * swt)
                tree, leaf = grow_hist_tree(data, gk, hk, **params)
                if not loss.differentiable:
                    lv = loss.leaf_values(yt, cols[k], swt, leaf, tree.node_count)
                    lv = lv * float(self.learning_rate)
                    vals = ember.asnumpy(lv)  # host: the tree keeps its leaf values
                    tree.value = np.where(tree.is_leaf, vals, tree.value)
                    upd = ember.take(lv, leaf)
                else:
                    upd = ember.take(ember.asarray(tree.value, device=dev), leaf)
                cols[k] = cols[k] + upd
                it_trees.append(tree)
            predictors.append(it_trees)
            if self.do_early_stopping_:
                val = None
                if va is not None:
                    rawv = rawv + predict_trees(it_trees, Xv, Kt)
                    val = (rawv, yv, swv, Xv)
                self._record(loss, scorer, cols, yt, swt, small, Xt, kind, predictors, val)
                scores = self.validation_score_ if va is not None else self.train_score_
                if self._should_stop(scores):
                    break
        self._predictors = predictors
        self.n_iter_ = len(predictors)
        self.train_score_ = np.asarray(self.train_score_, dtype=np.float64)
        self.validation_score_ = np.asarray(self.validation_score_, dtype=np.float64)
        self._kind = kind
        self._dtype = Xa.dtype
        self._dev = dev
        return self

    def _record(self, loss, scorer, cols, yt, swt, small, Xt, kind, predictors, val):
        raw = ember.stack(cols, axis=1)
        if scorer is None:
            if small is not None:
                s = -float(loss.value(ember.take(yt, small), ember.take(raw, small, axis=0),
                                      ember.take(swt, small)))  # fmt: skip
            else:
                s = -float(loss.value(yt, raw, swt))
            self.train_score_.append(s)
            if val is not None:
                rawv, yv, swv, _ = val
                self.validation_score_.append(-float(loss.value(yv, rawv, swv)))
            return
        # a scorer sees the model as it stands (predictions from the trees so far)
        self._predictors = predictors
        self._dev = Xt.device
        Xs, ys = Xt, yt
        if small is not None:
            Xs, ys = ember.take(Xt, small, axis=0), ember.take(yt, small)
        self.train_score_.append(float(scorer(self, Xs, self._decode_y(ys))))
        if val is not None:
            _, yv, _, Xv = val
            self.validation_score_.append(float(scorer(self, Xv, self._decode_y(yv))))

    def _should_stop(self, scores):
        ref = self.n_iter_no_change + 1
        if len(scores) < ref:
            return False
        reference = scores[-ref] + self.tol
        return not any(s > reference for s in scores[-self.n_iter_no_change :])

    def _split(self, y, n, rng, who):
        vf = self.validation_fraction
        n_val = int(vf) if isinstance(vf, numbers.Integral) else int(math.ceil(vf * n))
        if n_val >= n or n_val < 1:
            raise ValueError(
                f"{who}: validation_fraction={vf!r} leaves {n - n_val} training and {n_val} "
                f"validation samples out of n_samples={n}"
            )
        dev = y.device
        perm = ember.argsort(rng.random((n,), device=dev))
        if not self._classify:
            return perm[n_val:], perm[:n_val]
        # stratified: each class gives its share of the validation rows
        yp = ember.take(y, perm)
        o = ember.argsort(yp)  # stable: random order inside each class
        rows = ember.take(perm, o)
        ys = ember.take(yp, o)
        K = int(self.classes_.shape[0])
        counts = ember.bincount(y, minlength=K)
        quota = ember.round(counts.astype(ember.float64) * (n_val / n)).astype(ember.int64)
        starts = ember.cumsum(counts) - counts
        rank = ember.arange(n, device=dev) - ember.take(starts, ys)
        is_val = rank < ember.take(quota, ys)
        iv = is_val.astype(ember.int64)
        n_v = int(iv.sum())  # host: the split's sizes
        key = ember.argsort(1 - iv)  # validation rows first, order kept
        rows = ember.take(rows, key)
        if n_v == 0 or n_v == n:
            raise ValueError(f"{who}: the validation split is empty (n_samples={n}, {vf=})")
        return rows[n_v:], rows[:n_v]

    # -- prediction ---------------------------------------------------------------------
    def _check_X(self, X):
        check_is_fitted(self, "_predictors")
        Xa = check_array(X, estimator=self, ensure_all_finite="allow-nan")
        check_n_features(self, Xa, reset=False)
        return to_device(Xa, self._dev).astype(ember.float64)

    def _raw_predict(self, X):
        Xa = self._check_X(X)
        K = self.n_trees_per_iteration_
        n = int(Xa.shape[0])
        base = ember.broadcast_to(self._baseline[None, :], (n, K))
        flat = [t for it in self._predictors for t in it]
        return base + predict_trees(flat, Xa, K) if flat else base + 0.0

    def _staged_raw_predict(self, X):
        Xa = self._check_X(X)
        K = self.n_trees_per_iteration_
        n = int(Xa.shape[0])
        raw = ember.broadcast_to(self._baseline[None, :], (n, K)) + 0.0
        flat = [t for it in self._predictors for t in it]
        for contrib in staged_values(flat, Xa, K):
            raw = raw + contrib
            yield raw

    @property
    def n_features_(self):  # pragma: no cover (compatibility alias)
        return self.n_features_in_


class HistGradientBoostingRegressor(RegressorMixin, _BaseHGB):
    """Histogram-based gradient boosting regressor (losses 'squared_error', 'absolute_error',
    'poisson', 'gamma', 'quantile'); NaN in X is supported."""

    _parameter_constraints = {
        **_COMMON,
        "loss": [StrOptions({"squared_error", "absolute_error", "poisson", "gamma", "quantile"})],
        "quantile": [Interval(numbers.Real, 0, 1, closed="both"), None],
    }

    def __init__(
        self,
        loss="squared_error",
        *,
        quantile=None,
        learning_rate=0.1,
        max_iter=100,
        max_leaf_nodes=31,
        max_depth=None,
        min_samples_leaf=20,
        l2_regularization=0.0,
        max_features=1.0,
        max_bins=255,
        warm_start=False,
        early_stopping="auto",
        scoring="loss",
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-7,
        verbose=0,
        random_state=None,
    ):
        self.loss = loss
        self.quantile = quantile
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.l2_regularization = l2_regularization
        self.max_features = max_features
        self.max_bins = max_bins
        self.warm_start = warm_start
        self.early_stopping = early_stopping
        self.scoring = scoring
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state

    def _encode_y(self, ya, y, dev, who):
        return ya.astype(ember.float64), 1

    def _decode_y(self, yi):
        return yi

    def _class_weighted(self, sw, y, dev, who):
        return sw

    def _make_loss(self, K, weighted):
        if self.loss == "quantile" and self.quantile is None:
            raise ValueError(
                f"{type(self).__name__}: quantile must be set when loss='quantile' (got None)"
            )
        return make_loss(self.loss, weighted=weighted, quantile=self.quantile)

    def predict(self, X):
        """Predicted values (inverse link of the raw predictions)."""
        raw = self._raw_predict(X)
        return to_output(self._loss_obj.inverse(raw).astype(self._dtype), input_kind(X))

    def staged_predict(self, X):
        """Predictions after each iteration (a generator)."""
        kind = input_kind(X)
        for raw in self._staged_raw_predict(X):
            yield to_output(self._loss_obj.inverse(raw).astype(self._dtype), kind)


class HistGradientBoostingClassifier(ClassifierMixin, _BaseHGB):
    """Histogram-based gradient boosting classifier (log-loss, binary or multiclass: one tree
    per class and iteration); NaN in X is supported."""

    _classify = True
    _parameter_constraints = {
        **_COMMON,
        "loss": [StrOptions({"log_loss"})],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def __init__(
        self,
        loss="log_loss",
        *,
        learning_rate=0.1,
        max_iter=100,
        max_leaf_nodes=31,
        max_depth=None,
        min_samples_leaf=20,
        l2_regularization=0.0,
        max_features=1.0,
        max_bins=255,
        warm_start=False,
        early_stopping="auto",
        scoring="loss",
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-7,
        verbose=0,
        random_state=None,
        class_weight=None,
    ):
        self.loss = loss
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.l2_regularization = l2_regularization
        self.max_features = max_features
        self.max_bins = max_bins
        self.warm_start = warm_start
        self.early_stopping = early_stopping
        self.scoring = scoring
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state
        self.class_weight = class_weight

    def _encode_y(self, ya, y, dev, who):
        check_classification_targets(ya, who)
        yk = ya if input_kind(y) == "ember" else _host(ya)
        classes, yi = encode_labels(yk, dev)
        if self.warm_start and hasattr(self, "_predictors"):
            old = _host(self.classes_)
            if len(old) != len(_host(classes)) or not np.all(old == _host(classes)):
                raise ValueError(f"{who}: warm start needs the same classes as the first fit")
        self.classes_ = classes if input_kind(y) == "ember" else _host(classes)
        K = int(classes.shape[0])
        if K < 2:
            raise ValueError(
                f"{who}: y needs samples of at least 2 classes in the data, but the data "
                f"contains only one class: {_host(classes)[0]!r}"
            )
        return yi, K

    def _decode_y(self, yi):
        return decode_labels(self.classes_, yi, "ember" if is_ember(self.classes_) else "numpy")

    def _class_weighted(self, sw, y, dev, who):
        from ..tree._tree import class_weight_vector

        K = int(self.classes_.shape[0])
        cw = class_weight_vector(self.class_weight, self.classes_, y, K, dev, who)
        return sw if cw is None else sw * ember.take(cw, y)

    def _make_loss(self, K, weighted):
        return make_loss("log_loss", n_classes=K)

    def decision_function(self, X):
        """Raw predictions: (n,) for two classes, (n, n_classes) otherwise."""
        raw = self._raw_predict(X)
        out = raw[:, 0] if raw.shape[1] == 1 else raw
        return to_output(out.astype(self._dtype), input_kind(X))

    def predict_proba(self, X):
        """Class probabilities (columns in ``classes_`` order)."""
        raw = self._raw_predict(X)
        return to_output(self._loss_obj.proba(raw).astype(self._dtype), input_kind(X))

    def predict(self, X):
        raw = self._raw_predict(X)
        idx = ember.argmax(self._loss_obj.proba(raw), axis=1)
        return decode_labels(self.classes_, idx, input_kind(X))

    def staged_decision_function(self, X):
        kind = input_kind(X)
        for raw in self._staged_raw_predict(X):
            out = raw[:, 0] if raw.shape[1] == 1 else raw
            yield to_output(out.astype(self._dtype), kind)

    def staged_predict_proba(self, X):
        kind = input_kind(X)
        for raw in self._staged_raw_predict(X):
            yield to_output(self._loss_obj.proba(raw).astype(self._dtype), kind)

    def staged_predict(self, X):
        kind = input_kind(X)
        for raw in self._staged_raw_predict(X):
            idx = ember.argmax(self._loss_obj.proba(raw), axis=1)
            yield decode_labels(self.classes_, idx, kind)
