"""``GradientBoostingRegressor`` / ``GradientBoostingClassifier`` (scikit-learn's classic API)
on ember arrays.

Each stage fits ``n_trees_per_iteration_`` regression trees to the negative gradient with the
histogram engine of ``ember.ml.tree`` (features binned once per fit into ``max_bins`` = 256
bins: exact, and then split as scikit-learn's, for features with at most 256 distinct values;
quantile bins otherwise, so results are close to scikit-learn's but not bit-for-bit), then
sets each leaf to the loss's line-search value (Friedman's step 5, as scikit-learn: the
median for absolute error, a Newton step for log-loss, ...). Leaf values of all leaves come
from one sort or one ``bincount``, never a loop over leaves. With ``max_leaf_nodes`` the trees
are grown best-first by the gradient-boosting grower of ``_hist_grower`` instead.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

import ember

from ..base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from ..tree._grow import bin_features, grow_tree, tree_apply
from ..tree._tree import DecisionTreeRegressor, _host
from ..utils._labels import decode_labels, encode_labels
from ..utils._param_validation import HasMethods, Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_classification_targets,
    check_is_fitted,
    check_n_features,
    check_random_state,
    check_sample_weight,
    check_X_y,
    input_kind,
    to_device,
    to_output,
)
from ._gb_losses import HuberLoss, MultinomialLoss, SquaredError, make_loss, segment_percentile
from ._hist_grower import bin_data, grow_hist_tree, predict_trees

__all__ = ["GradientBoostingClassifier", "GradientBoostingRegressor"]

_EPS = float(np.finfo(np.float64).eps)

_COMMON = {
    "learning_rate": [Interval(numbers.Real, 0.0, None, closed="left")],
    "n_estimators": [Interval(numbers.Integral, 1, None, closed="left")],
    "subsample": [Interval(numbers.Real, 0.0, 1.0, closed="right")],
    "criterion": [StrOptions({"friedman_mse", "squared_error", "deprecated"})],
    "min_samples_split": [
        Interval(numbers.Integral, 2, None, closed="left"),
        Interval(numbers.Real, 0.0, 1.0, closed="right"),
    ],
    "min_samples_leaf": [
        Interval(numbers.Integral, 1, None, closed="left"),
        Interval(numbers.Real, 0.0, 1.0, closed="neither"),
    ],
    "min_weight_fraction_leaf": [Interval(numbers.Real, 0.0, 0.5, closed="both")],
    "max_depth": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "min_impurity_decrease": [Interval(numbers.Real, 0.0, None, closed="left")],
    "random_state": ["random_state"],
    "max_features": [
        Interval(numbers.Integral, 1, None, closed="left"),
        Interval(numbers.Real, 0.0, 1.0, closed="right"),
        StrOptions({"sqrt", "log2"}),
        None,
    ],
    "verbose": [numbers.Integral, "boolean"],
    "max_leaf_nodes": [Interval(numbers.Integral, 2, None, closed="left"), None],
    "warm_start": ["boolean"],
    "validation_fraction": [Interval(numbers.Real, 0.0, 1.0, closed="neither")],
    "n_iter_no_change": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "tol": [Interval(numbers.Real, 0.0, None, closed="left")],
    "ccp_alpha": [Interval(numbers.Real, 0.0, 0.0, closed="both")],
    "max_bins": [Interval(numbers.Integral, 2, 65536, closed="both")],
}


class _ConstantInit:
    """The default ``init_``: a constant raw prediction (scikit-learn's Dummy estimators)."""

    def __init__(self, raw):
        self.raw = raw

    def __repr__(self):
        return f"_ConstantInit({ember.asnumpy(self.raw).tolist()!r})"


class _BaseGB(BaseEstimator):
    _classify = False

    def fit(self, X, y, sample_weight=None, monitor=None):
        """Fit the stages; ``monitor(i, self, locals())`` returning True stops early."""
        self._validate_params()
        who = type(self).__name__
        Xa, ya = check_X_y(X, y, estimator=self, y_numeric=not self._classify)
        check_n_features(self, Xa, reset=True)
        kind = input_kind(X)
        dev = Xa.device
        n, F = int(Xa.shape[0]), int(Xa.shape[1])
        Xf = Xa.astype(ember.float64)
        sw_given = sample_weight is not None
        sw = check_sample_weight(sample_weight, Xf, ember.float64)
        y_dev, K = self._encode_y(ya, y, dev, who)
        loss = self._make_loss(K, who)
        self._loss_obj = loss
        self.n_trees_per_iteration_ = loss.K
        self.max_features_ = self._max_features(F)
        rng = check_random_state(self.random_state)
        warm = self.warm_start and hasattr(self, "estimators_") and len(self.estimators_) > 0
        if not warm:
            self._seed = int(rng.integers(0, 2**31 - 1, size=1)[0])  # host: one seed per fit
        srng = ember.random.default_rng(self._seed)
        if self.n_iter_no_change is not None:
            tr, va = self._split(y_dev, n, srng, who)
            Xt, yt, swt = ember.take(Xf, tr, axis=0), ember.take(y_dev, tr), ember.take(sw, tr)
            Xv, yv, swv = ember.take(Xf, va, axis=0), ember.take(y_dev, va), ember.take(sw, va)
        else:
            Xt, yt, swt = Xf, y_dev, sw
        nt = int(Xt.shape[0])
        Kt = loss.K
        if warm:
            if self.n_estimators < len(self.estimators_):
                raise ValueError(
                    f"{who}: n_estimators={self.n_estimators} must be larger or equal to "
                    f"estimators_.shape[0]={len(self.estimators_)} when warm_start==True"
                )
            stages = [list(s) for s in self.estimators_]
            raw = self._raw_from(Xt, stages)
            train, oob_sc, oob_imp = list(self.train_score_), [], []
            if hasattr(self, "oob_scores_"):
                oob_sc, oob_imp = list(self.oob_scores_), list(self.oob_improvement_)
        else:
            self.init_ = self._fit_init(Xa, Xt, yt, swt, sw_given, loss, dev, K)
            stages, train, oob_sc, oob_imp = [], [], [], []
            raw = self._init_raw(Xt)
        bins = bin_features(Xt, self.max_bins) if self.max_leaf_nodes is None else None
        hbins = bin_data(Xt, 255) if self.max_leaf_nodes is not None else None
        do_oob = self.subsample < 1.0
        n_inbag = max(1, int(self.subsample * nt))
        factor = loss.classic_factor
        cols = [raw[:, k] for k in range(Kt)]
        hist = [math.inf] * self.n_iter_no_change if self.n_iter_no_change is not None else None
        if hist is not None:
            rawv = self._raw_from(Xv, stages)
        y_onehot = None
        if isinstance(loss, MultinomialLoss):
            y_onehot = (yt[:, None] == ember.arange(K, device=dev)[None, :]).astype(ember.float64)
        for i in range(len(stages), self.n_estimators):
            mask = None
            if do_oob:
                pick = ember.argsort(srng.random((nt,), device=dev))[:n_inbag]
                mask = ember.zeros((nt,), dtype=ember.bool, device=dev)
                mask[pick] = True
                if i == 0:
                    raw0 = ember.stack(cols, axis=1)
                    init_loss = factor * _masked_loss(loss, yt, raw0, swt, ~mask)
            raw = ember.stack(cols, axis=1)
            if isinstance(loss, HuberLoss):
                loss.set_delta(yt, raw, swt)
            g, _ = loss.grad_hess(yt, raw)
            neg = -(g if g.ndim == 2 else g[:, None])
            w = swt if mask is None else ember.where(mask, swt, 0.0)
            stage = []
            for k in range(Kt):
                r = neg[:, k]
                est, leaf = self._grow(Xt, r, w, mask, bins, hbins, srng)
                n_nodes = est.tree_.node_count
                lv = self._leaf_values(loss, yt, y_onehot, r, cols[k], swt, leaf, mask, k, n_nodes)
                if lv is not None:
                    est.tree_._a["value"] = ember.where(
                        _is_leaf(est.tree_)[:, None, None], lv[:, None, None],
                        est.tree_._a["value"])  # fmt: skip
                vals = est.tree_._a["value"][:, 0, 0]
                cols[k] = cols[k] + self.learning_rate * ember.take(vals, leaf)
                stage.append(est)
            stages.append(stage)
            raw = ember.stack(cols, axis=1)
            if do_oob:
                train.append(factor * _masked_loss(loss, yt, raw, swt, mask))
                oob_sc.append(factor * _masked_loss(loss, yt, raw, swt, ~mask))
                prev = init_loss if i == 0 else oob_sc[-2]
                oob_imp.append(prev - oob_sc[-1])
            else:
                train.append(factor * loss.value(yt, raw, swt))
            if monitor is not None:
                self._set_state(stages, train, oob_sc, oob_imp, do_oob, kind, Xa, dev)
                if monitor(i, self, locals()):
                    break
            if hist is not None:
                rawv = rawv + self.learning_rate * _stage_values(stage, Xv)
                vl = factor * float(loss.value(yv, rawv, swv))
                if any(vl + self.tol < h for h in hist):
                    hist[i % len(hist)] = vl
                else:
                    break
        self._set_state(stages, train, oob_sc, oob_imp, do_oob, kind, Xa, dev)
        return self

    def _set_state(self, stages, train, oob_sc, oob_imp, do_oob, kind, Xa, dev):
        arr = np.empty((len(stages), self.n_trees_per_iteration_), dtype=object)
        for i, s in enumerate(stages):
            for k, e in enumerate(s):
                arr[i, k] = e
        self.estimators_ = arr
        self.n_estimators_ = len(stages)
        self.train_score_ = _host_scores(train, dev)
        if do_oob:
            self.oob_scores_ = _host_scores(oob_sc, dev)
            self.oob_improvement_ = _host_scores(oob_imp, dev)
            self.oob_score_ = float(self.oob_scores_[-1])
        self._kind = kind
        self._dtype = Xa.dtype
        self._dev = dev

    def _max_features(self, F):
        mf = self.max_features
        if mf is None:
            return F
        if isinstance(mf, str):
            return max(1, int(math.sqrt(F))) if mf == "sqrt" else max(1, int(math.log2(F)))
        if isinstance(mf, numbers.Integral):
            if mf > F:
                raise ValueError(
                    f"{type(self).__name__}: max_features must be <= n_features ({F}), got {mf}"
                )
            return int(mf)
        return max(1, int(mf * F))

    def _split(self, y, n, rng, who):
        n_val = int(math.ceil(self.validation_fraction * n))
        dev = y.device
        perm = ember.argsort(rng.random((n,), device=dev))
        if not self._classify:
            if n_val >= n:
                raise ValueError(f"{who}: validation_fraction leaves no training samples")
            return perm[n_val:], perm[:n_val]
        yp = ember.take(y, perm)
        o = ember.argsort(yp)
        rows, ys = ember.take(perm, o), ember.take(yp, o)
        K = self.n_classes_
        counts = ember.bincount(y, minlength=K)
        quota = ember.round(counts.astype(ember.float64) * (n_val / n)).astype(ember.int64)
        starts = ember.cumsum(counts) - counts
        is_val = (ember.arange(n, device=dev) - ember.take(starts, ys)) < ember.take(quota, ys)
        iv = is_val.astype(ember.int64)
        n_v = int(iv.sum())  # host: the split's sizes
        rows = ember.take(rows, ember.argsort(1 - iv))
        tr = rows[n_v:]
        if int(ember.unique(ember.take(y, tr)).shape[0]) != K:
            raise ValueError(
                f"{who}: The training data after the early stopping split is missing some "
                "classes. Try using another random seed."
            )
        return tr, rows[:n_v]

    def _grow(self, Xt, r, w, mask, bins, hbins, rng):
        """One regression tree on target ``r`` with weights ``w``: (estimator, leaf_of_row)."""
        nt = int(Xt.shape[0])
        msl = self.min_samples_leaf
        msl = int(msl) if isinstance(msl, numbers.Integral) else max(1, int(math.ceil(msl * nt)))
        est = DecisionTreeRegressor(
            criterion="friedman_mse",
            max_depth=self.max_depth,
            min_samples_split=self.min_samples_split,
            min_samples_leaf=self.min_samples_leaf,
            min_weight_fraction_leaf=self.min_weight_fraction_leaf,
            max_features=self.max_features,
            min_impurity_decrease=self.min_impurity_decrease,
            max_bins=self.max_bins,
        )
        est.n_features_in_ = int(Xt.shape[1])
        est.n_outputs_ = 1
        est.max_features_ = self.max_features_
        est._dtype = ember.float64
        if hbins is not None:
            # best-first growth (max_leaf_nodes): gradient -w*r, hessian w; the gain is the
            # squared-error reduction, as scikit-learn's best-first builder
            tree, leaf = grow_hist_tree(
                hbins, -w * r, w, max_leaf_nodes=self.max_leaf_nodes, max_depth=self.max_depth,
                min_samples_leaf=msl, l2=0.0, shrinkage=1.0,
                max_features=self.max_features_ / int(Xt.shape[1]), rng=rng,
            )  # fmt: skip
            est.tree_ = _HistAsTree(tree, int(Xt.shape[1]))
            return est, leaf
        codes, thr, n_thr, bmin, bmax = bins
        mss = self.min_samples_split
        mss = int(mss) if isinstance(mss, numbers.Integral) else max(2, int(math.ceil(mss * nt)))
        mwl = 0.0
        if self.min_weight_fraction_leaf > 0:
            mwl = self.min_weight_fraction_leaf * float(w.sum())
        S = ember.stack([w, w * r, w * r * r], axis=1)
        cnt = ember.ones((nt,), dtype=ember.float64, device=Xt.device)
        if mask is not None:
            cnt = mask.astype(ember.float64)
        cnt = ember.where(w > 0, cnt, 0.0)
        est.tree_ = grow_tree(
            codes, thr, n_thr, bmin, bmax, S, cnt, criterion="squared_error",
            max_depth=self.max_depth, min_samples_split=mss, min_samples_leaf=msl,
            min_weight_leaf=mwl, max_features=self.max_features_,
            min_impurity_decrease=self.min_impurity_decrease, splitter="best", rng=rng,
            kind="ember",
        )  # fmt: skip
        return est, tree_apply(est.tree_, Xt)

    def _leaf_values(self, loss, yt, y_onehot, r, raw_k, sw, leaf, mask, k, n_nodes):
        """Line-search leaf values (node_count,), or None when the tree's means are kept."""
        if isinstance(loss, SquaredError):
            return None  # squared error: the mean residual is already the optimum
        lf = leaf if mask is None else ember.where(mask, leaf, -1)
        if hasattr(loss, "classic_step"):
            y_k = y_onehot[:, k] if y_onehot is not None else yt
            return loss.classic_step(y_k, r, sw, lf, n_nodes)
        return loss.leaf_values(yt, raw_k, sw, lf, n_nodes)

    def _fit_init(self, Xa, Xt, yt, swt, sw_given, loss, dev, K):
        if self.init == "zero":
            return "zero"
        if self.init is None:
            if self._classify:
                return _ConstantInit(self._prior_raw(yt, swt, loss, K))
            if self.loss == "squared_error":
                c = (yt * swt).sum() / swt.sum()
            else:
                q = self.alpha if self.loss == "quantile" else 0.5
                zero = ember.zeros(yt.shape, dtype=ember.int64, device=dev)
                method = "inverted_cdf" if sw_given else "linear"
                c = segment_percentile(yt, swt, zero, 1, q, method)[0]
            return _ConstantInit(ember.reshape(c, (1,)).astype(ember.float64))
        est = clone(self.init)
        yfit = self._decode_y(yt) if self._classify else yt
        Xh, yh = Xt, yfit
        if input_kind(Xa) == "numpy" or not _accepts_ember(est):
            Xh, yh = ember.asnumpy(Xt), _host(yfit)
        if sw_given:
            try:
                est.fit(Xh, yh, sample_weight=_host(swt) if not hasattr(Xh, "device") else swt)
            except TypeError as exc:
                raise ValueError(
                    f"The initial estimator {type(est).__name__} does not support sample weights."
                ) from exc
        else:
            est.fit(Xh, yh)
        return est

    def _prior_raw(self, yt, swt, loss, K):
        counts = ember.bincount(yt, weights=swt, minlength=K)
        p = ember.clip(counts / counts.sum(), _EPS, 1 - _EPS)
        if K == 2:
            lo = ember.log(p[1] / (1 - p[1]))
            if self.loss == "exponential":
                lo = 0.5 * lo
            return ember.reshape(lo, (1,))
        lp = ember.log(p)
        return lp - lp.mean()

    def _init_raw(self, X):
        n = int(X.shape[0])
        K = self.n_trees_per_iteration_
        if isinstance(self.init_, str):
            return ember.zeros((n, K), dtype=ember.float64, device=X.device)
        if isinstance(self.init_, _ConstantInit):
            return ember.broadcast_to(self.init_.raw[None, :], (n, K)) + 0.0
        est = self.init_
        Xh = X if _accepts_ember(est) else ember.asnumpy(X)
        if self._classify:
            p = to_device(_host(est.predict_proba(Xh)) if not hasattr(Xh, "device")
                          else est.predict_proba(Xh), X.device).astype(ember.float64)  # fmt: skip
            p = ember.clip(p, _EPS, 1 - _EPS)
            if K == 1:
                p1 = p[:, 1]
                lo = ember.log(p1 / (1 - p1))
                return (0.5 * lo if self.loss == "exponential" else lo)[:, None]
            lp = ember.log(p)
            return lp - lp.mean(axis=1, keepdims=True)
        pr = est.predict(Xh)
        pr = to_device(pr if hasattr(pr, "device") else np.asarray(pr), X.device)
        return pr.astype(ember.float64).reshape(n, 1)

    def _raw_from(self, X, stages):
        raw = self._init_raw(X)
        for s in stages:
            raw = raw + self.learning_rate * _stage_values(s, X)
        return raw

    # -- prediction ---------------------------------------------------------------------
    def _check_X(self, X):
        check_is_fitted(self, "estimators_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        return to_device(Xa, self._dev).astype(ember.float64)

    def _raw_predict(self, X):
        return self._raw_from(self._check_X(X), self.estimators_)

    def _staged_raw(self, X):
        Xa = self._check_X(X)
        raw = self._init_raw(Xa)
        for s in self.estimators_:
            raw = raw + self.learning_rate * _stage_values(s, Xa)
            yield raw

    @property
    def feature_importances_(self):
        """Impurity-based importances averaged over the trees (normalized to sum 1)."""
        check_is_fitted(self, "estimators_")
        imps = [
            e.tree_.compute_feature_importances(normalize=False)
            for s in self.estimators_
            for e in s
            if e.tree_.node_count > 1
        ]
        F = self.n_features_in_
        if not imps:
            return np.zeros(F, dtype=np.float64) if self._kind == "numpy" else ember.zeros((F,))
        avg = ember.stack(imps, axis=0).mean(axis=0)
        s = avg.sum()
        return to_output(avg / ember.where(s > 0, s, 1.0), self._kind)

    def apply(self, X):
        """Leaf index of every sample in every tree: (n, n_estimators, K)."""
        Xa = self._check_X(X)
        leaves = [[tree_apply(e.tree_, Xa) for e in s] for s in self.estimators_]
        out = ember.stack([ember.stack(s, axis=1) for s in leaves], axis=1)
        return to_output(out, input_kind(X))


def _host_scores(vals, dev):
    """Per-stage scores kept as device scalars during the fit, read back at once."""
    if not vals:
        return np.zeros((0,), dtype=np.float64)
    dv = [v if isinstance(v, ember.ndarray) else ember.asarray(float(v), device=dev) for v in vals]
    return ember.asnumpy(ember.stack([ember.reshape(v, ()) for v in dv])).astype(np.float64)


def _accepts_ember(est):
    return type(est).__module__.startswith("ember.")


def _is_leaf(tree):
    return tree._a["children_left"] == -1


def _masked_loss(loss, y, raw, sw, mask):
    w = ember.where(mask, sw, 0.0)
    return (loss.pointwise(y, raw) * w).sum() / w.sum()


def _stage_values(stage, X):
    """(n, K) leaf values of the K trees of one stage on X."""
    cols = []
    for e in stage:
        t = e.tree_
        if isinstance(t, _HistAsTree):
            cols.append(predict_trees([t.hist], X, 1)[:, 0])
        else:
            cols.append(ember.take(t._a["value"][:, 0, 0], tree_apply(t, X)))
    return ember.stack(cols, axis=1)


class _HistAsTree:
    """A best-first tree (``max_leaf_nodes``) seen through the ``tree_`` attributes."""

    def __init__(self, hist, n_features):
        self.hist = hist
        self.n_features = n_features
        self.node_count = hist.node_count
        self.n_leaves = hist.n_leaves
        self.max_depth = hist.max_depth
        dev = hist._dev
        h = hist
        self._a = {
            "feature": ember.asarray(np.where(h.is_leaf, -2, h.feature), device=dev),
            "threshold": ember.asarray(np.where(h.is_leaf, -2.0, h.threshold), device=dev),
            "children_left": ember.asarray(h.left, device=dev),
            "children_right": ember.asarray(h.right, device=dev),
            "value": ember.asarray(h.value, device=dev)[:, None, None],
            "gain": ember.asarray(h.gain, device=dev),
            "weighted_n_node_samples": ember.asarray(h.count.astype(np.float64), device=dev),
        }

    def compute_feature_importances(self, normalize=True):
        a = self._a
        split = a["feature"] >= 0
        f = ember.where(split, a["feature"], 0)
        imp = ember.bincount(f, weights=ember.where(split, a["gain"], 0.0),
                             minlength=self.n_features)  # fmt: skip
        imp = imp / a["weighted_n_node_samples"][0]
        if normalize:
            s = imp.sum()
            imp = imp / ember.where(s > 0, s, 1.0)
        return imp

    @property
    def value(self):
        return self._a["value"]


class GradientBoostingRegressor(RegressorMixin, _BaseGB):
    """Gradient boosting for regression (losses 'squared_error', 'absolute_error', 'huber',
    'quantile'), trees grown on binned features."""

    _parameter_constraints = {
        **_COMMON,
        "loss": [StrOptions({"squared_error", "absolute_error", "huber", "quantile"})],
        "init": [StrOptions({"zero"}), None, HasMethods(["fit", "predict"])],
        "alpha": [Interval(numbers.Real, 0.0, 1.0, closed="neither")],
    }

    def __init__(
        self,
        *,
        loss="squared_error",
        learning_rate=0.1,
        n_estimators=100,
        subsample=1.0,
        criterion="friedman_mse",
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_depth=3,
        min_impurity_decrease=0.0,
        init=None,
        random_state=None,
        max_features=None,
        alpha=0.9,
        verbose=0,
        max_leaf_nodes=None,
        warm_start=False,
        validation_fraction=0.1,
        n_iter_no_change=None,
        tol=1e-4,
        ccp_alpha=0.0,
        max_bins=256,
    ):
        self.loss = loss
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.subsample = subsample
        self.criterion = criterion
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_depth = max_depth
        self.min_impurity_decrease = min_impurity_decrease
        self.init = init
        self.random_state = random_state
        self.max_features = max_features
        self.alpha = alpha
        self.verbose = verbose
        self.max_leaf_nodes = max_leaf_nodes
        self.warm_start = warm_start
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.ccp_alpha = ccp_alpha
        self.max_bins = max_bins

    def _encode_y(self, ya, y, dev, who):
        return ya.astype(ember.float64), 1

    def _make_loss(self, K, who):
        if self.loss == "huber":
            return HuberLoss(self.alpha)
        return make_loss(self.loss, weighted=True, quantile=self.alpha)

    def predict(self, X):
        """Predicted values."""
        raw = self._raw_predict(X)
        return to_output(raw[:, 0].astype(self._dtype), input_kind(X))

    def staged_predict(self, X):
        """Predictions after each stage (a generator)."""
        kind = input_kind(X)
        for raw in self._staged_raw(X):
            yield to_output(raw[:, 0].astype(self._dtype), kind)


class GradientBoostingClassifier(ClassifierMixin, _BaseGB):
    """Gradient boosting for classification (log-loss, binary or one tree per class per
    stage; 'exponential' for two classes), trees grown on binned features."""

    _classify = True
    _parameter_constraints = {
        **_COMMON,
        "loss": [StrOptions({"log_loss", "exponential"})],
        "init": [StrOptions({"zero"}), None, HasMethods(["fit", "predict_proba"])],
    }

    def __init__(
        self,
        *,
        loss="log_loss",
        learning_rate=0.1,
        n_estimators=100,
        subsample=1.0,
        criterion="friedman_mse",
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_depth=3,
        min_impurity_decrease=0.0,
        init=None,
        random_state=None,
        max_features=None,
        verbose=0,
        max_leaf_nodes=None,
        warm_start=False,
        validation_fraction=0.1,
        n_iter_no_change=None,
        tol=1e-4,
        ccp_alpha=0.0,
        max_bins=256,
    ):
        self.loss = loss
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.subsample = subsample
        self.criterion = criterion
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_depth = max_depth
        self.min_impurity_decrease = min_impurity_decrease
        self.init = init
        self.random_state = random_state
        self.max_features = max_features
        self.verbose = verbose
        self.max_leaf_nodes = max_leaf_nodes
        self.warm_start = warm_start
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.ccp_alpha = ccp_alpha
        self.max_bins = max_bins

    def _encode_y(self, ya, y, dev, who):
        check_classification_targets(ya, who)
        yk = ya if input_kind(y) == "ember" else _host(ya)
        classes, yi = encode_labels(yk, dev)
        K = int(classes.shape[0])
        if self.warm_start and hasattr(self, "classes_"):
            old = _host(self.classes_)
            if len(old) != K or not np.all(old == _host(classes)):
                raise ValueError(f"{who}: warm start needs the same classes as the first fit")
        self.classes_ = classes if input_kind(y) == "ember" else _host(classes)
        self.n_classes_ = K
        if K < 2:
            raise ValueError(
                f"{who}: y contains 1 class after sample_weight trimmed classes with zero "
                "weights, while a minimum of 2 classes are required."
            )
        return yi, K

    def _decode_y(self, yi):
        kind = "numpy" if isinstance(self.classes_, np.ndarray) else "ember"
        return decode_labels(self.classes_, yi, kind)

    def _make_loss(self, K, who):
        if self.loss == "exponential" and K > 2:
            raise ValueError(
                f"{who}: loss='exponential' is only suitable for a binary classification "
                f"problem, you have n_classes={K}. Please use loss='log_loss' instead."
            )
        return make_loss(self.loss, n_classes=K)

    def _proba(self, raw):
        loss = self._loss_obj
        return loss.proba(raw)

    def decision_function(self, X):
        """Raw predictions: (n,) for two classes, (n, n_classes) otherwise."""
        raw = self._raw_predict(X)
        out = raw[:, 0] if raw.shape[1] == 1 else raw
        return to_output(out.astype(self._dtype), input_kind(X))

    def staged_decision_function(self, X):
        kind = input_kind(X)
        for raw in self._staged_raw(X):
            out = raw[:, 0] if raw.shape[1] == 1 else raw
            yield to_output(out.astype(self._dtype), kind)

    def predict_proba(self, X):
        """Class probabilities (columns in ``classes_`` order)."""
        p = self._proba(self._raw_predict(X))
        return to_output(p.astype(self._dtype), input_kind(X))

    def predict_log_proba(self, X):
        p = self._proba(self._raw_predict(X))
        return to_output(ember.log(p).astype(self._dtype), input_kind(X))

    def predict(self, X):
        idx = ember.argmax(self._proba(self._raw_predict(X)), axis=1)
        return decode_labels(self.classes_, idx, input_kind(X))

    def staged_predict_proba(self, X):
        kind = input_kind(X)
        for raw in self._staged_raw(X):
            yield to_output(self._proba(raw).astype(self._dtype), kind)

    def staged_predict(self, X):
        kind = input_kind(X)
        for raw in self._staged_raw(X):
            yield decode_labels(self.classes_, ember.argmax(self._proba(raw), axis=1), kind)
