"""``IsolationForest`` (scikit-learn's ``sklearn.ensemble.IsolationForest``) on ember arrays.

All trees of the forest grow together, level by level, on X's device. Tree ``t`` sees
``max_samples_`` rows (drawn without replacement, or with replacement when ``bootstrap``;
repeated rows count once, as in scikit-learn whose trees get the draw counts as weights) and
``max_features`` features. Each node picks one of its non-constant features uniformly and a
uniform threshold between the node's min and max of that feature (scikit-learn's random
splitter with ``max_features=1``), until ``ceil(log2(max_samples_))`` levels. Per level the
min/max of every (tree, node, feature) comes from one stable ``argsort`` of node keys over
values pre-sorted per (tree, feature) plus two ``searchsorted``; the node counts from one
``bincount``. Trees are kept in heap layout (node ``i`` has children ``2i+1``, ``2i+2``), so
scoring is ``depth`` gathers for all trees and a block of rows at once. The score of a row is
``-2 ** (-E[h(x)] / c(max_samples_))`` with ``h`` = depth of its leaf + ``c(n_leaf)`` and ``c``
scikit-learn's average path length of an unsuccessful BST search. The random streams differ
from scikit-learn's, so scores agree with it statistically, not bit for bit.
"""

from __future__ import annotations

import math
import numbers
import warnings

import ember

from ..base import BaseEstimator
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    check_random_state,
    check_sample_weight,
    input_kind,
    to_output,
)

__all__ = ["IsolationForest"]

_EULER = 0.5772156649015329
_FEATURE_THRESHOLD = 1e-7  # scikit-learn's: a feature within this range is constant in a node


def _c_scalar(n):
    """c(n) of a host number (scikit-learn's ``_average_path_length``)."""
    if n <= 1:
        return 0.0
    if n <= 2:
        return 1.0
    return 2.0 * (math.log(n - 1.0) + _EULER) - 2.0 * (n - 1.0) / n


def average_path_length(n):
    """c(n) elementwise for an ember array of sample counts (float64)."""
    n = n.astype(ember.float64)
    c = 2.0 * (ember.log(ember.maximum(n - 1.0, 1.0)) + _EULER) - 2.0 * (n - 1.0) / ember.maximum(
        n, 1.0
    )
    return ember.where(n <= 1.0, 0.0, ember.where(n <= 2.0, 1.0, c))


def _row_chunks(total, per_item, limit=1 << 22):
    step = max(1, limit // max(per_item, 1))
    return [(i, min(i + step, total)) for i in range(0, total, step)]


def _draw(rng, T, n, S, bootstrap, dev):
    """(T, S) row indices per tree and a (T, S) mask of the first occurrence of each row."""
    if bootstrap:
        rows = rng.integers(0, n, size=(T, S), device=dev)
        rows = ember.sort(rows, axis=1)
        first = ember.ones((T, 1), dtype=ember.bool, device=dev)
        valid = ember.concatenate([first, rows[:, 1:] != rows[:, :-1]], axis=1)
        return rows, valid
    parts = []
    for a, b in _row_chunks(T, n):
        keys = rng.random((b - a, n), device=dev)
        parts.append(ember.argsort(keys, axis=1)[:, :S])
    rows = parts[0] if len(parts) == 1 else ember.concatenate(parts, axis=0)
    return rows, ember.ones((T, S), dtype=ember.bool, device=dev)


def _grow(Xt, valid, depth, rng):
    """Grow T isolation trees on Xt (T, S, Fp) with row mask ``valid`` (T, S).

    Returns (feature, threshold, n_node_samples) as (T, 2**(depth+1) - 1) heap-ordered arrays;
    leaves and absent nodes have feature -1."""
    T, S, Fp = (int(s) for s in Xt.shape)
    dev = Xt.device
    order = ember.argsort(Xt, axis=1)  # per (tree, feature): rows by value
    Vs = ember.take_along_axis(Xt, order, axis=1).reshape(-1)
    t_ids = ember.arange(T, device=dev)[:, None]
    # flat positions for the per-level gathers (flat ``take`` is the fast gather)
    order_flat = order + (t_ids * S)[:, :, None]
    row_flat = (ember.arange(T * S, device=dev) * Fp).reshape(T, S)
    X_flat = Xt.reshape(-1)
    f_ids = ember.arange(Fp, device=dev)[None, None, :]
    node = ember.zeros((T, S), dtype=ember.int64, device=dev)
    active = valid
    feats, thrs, cnts = [], [], []
    for d in range(depth + 1):
        G = 1 << d
        dead = T * G
        key = ember.where(active, t_ids * G + node, dead)  # (T, S)
        counts = ember.bincount(key.reshape(-1), minlength=dead + 1)[:dead].astype(ember.float64)
        cnts.append(counts.reshape(T, G))
        if d == depth:
            feats.append(ember.full((T, G), -1, dtype=ember.int64, device=dev))
            thrs.append(ember.full((T, G), -2.0, dtype=Xt.dtype, device=dev))
            break
        # (tree, node, feature) key of every value in per-feature sorted order
        ks = ember.take(key.reshape(-1), order_flat)
        seg = (ks * Fp + f_ids).reshape(-1)
        o = ember.argsort(seg)  # stable: values stay sorted within a segment
        seg_s = ember.take(seg, o)
        val_s = ember.take(Vs, o)
        want = ember.arange(dead * Fp, device=dev)
        lo = ember.searchsorted(seg_s, want, side="left")
        hi = ember.searchsorted(seg_s, want, side="right")
        last = int(seg_s.shape[0]) - 1
        mn = ember.take(val_s, ember.clip(lo, 0, last)).reshape(dead, Fp)
        mx = ember.take(val_s, ember.clip(hi - 1, 0, last)).reshape(dead, Fp)
        nonconst = (mx > mn + _FEATURE_THRESHOLD) & (counts >= 2.0)[:, None]
        nnc = nonconst.astype(ember.int64).sum(axis=1)
        split = nnc > 0
        u = rng.random((dead,), device=dev)
        r = ember.minimum(ember.floor(u * nnc).astype(ember.int64), ember.maximum(nnc - 1, 0))
        csum = ember.cumsum(nonconst.astype(ember.int64), axis=1)
        f = ember.argmax((csum > r[:, None]).astype(ember.int8), axis=1)
        lo_v = ember.take_along_axis(mn, f[:, None], axis=1)[:, 0]
        hi_v = ember.take_along_axis(mx, f[:, None], axis=1)[:, 0]
        u2 = rng.random((dead,), device=dev).astype(Xt.dtype)
        thr = lo_v + u2 * (hi_v - lo_v)
        thr = ember.where(thr >= hi_v, lo_v, thr)  # scikit-learn's guard against rounding up
        f = ember.where(split, f, -1)
        thr = ember.where(split, thr, -2.0)
        feats.append(f.reshape(T, G))
        thrs.append(thr.reshape(T, G))
        # route the rows of split nodes to their children
        kc = ember.clip(key, 0, dead - 1)
        fr = ember.take(f, kc)
        xr = ember.take(X_flat, row_flat + ember.clip(fr, 0, None))
        right = (xr > ember.take(thr, kc)).astype(ember.int64)
        active = active & (fr >= 0)
        node = ember.where(active, 2 * node + right, 0)
    return (
        ember.concatenate(feats, axis=1),
        ember.concatenate(thrs, axis=1),
        ember.concatenate(cnts, axis=1),
    )


class IsolationForest(BaseEstimator):
    """Isolation Forest anomaly detector (Liu et al. 2008), as scikit-learn's.

    Lower ``score_samples`` = more abnormal; ``predict`` gives -1 for outliers, 1 for inliers.
    """

    _estimator_type = "outlier_detector"

    _parameter_constraints = {
        "n_estimators": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_samples": [
            StrOptions({"auto"}),
            Interval(numbers.Integral, 1, None, closed="left"),
            Interval(numbers.Real, 0, 1, closed="right"),
        ],
        "contamination": [StrOptions({"auto"}), Interval(numbers.Real, 0, 0.5, closed="right")],
        "max_features": [numbers.Integral, Interval(numbers.Real, 0, 1, closed="right")],
        "bootstrap": ["boolean"],
        "n_jobs": [numbers.Integral, None],
        "random_state": ["random_state"],
        "verbose": [numbers.Integral, "boolean"],
        "warm_start": ["boolean"],
    }

    def __init__(
        self,
        *,
        n_estimators=100,
        max_samples="auto",
        contamination="auto",
        max_features=1.0,
        bootstrap=False,
        n_jobs=None,
        random_state=None,
        verbose=0,
        warm_start=False,
    ):
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.contamination = contamination
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start

    def _n_samples(self, n):
        ms = self.max_samples
        if isinstance(ms, str):
            return min(256, n)
        if isinstance(ms, numbers.Integral):
            if ms > n:
                warnings.warn(
                    f"max_samples ({ms}) is greater than the total number of samples ({n}). "
                    "max_samples will be set to n_samples for estimation.",
                    UserWarning,
                    stacklevel=3,
                )
                return n
            return int(ms)
        return max(1, int(float(ms) * n))

    def _n_features(self, F):
        mf = self.max_features
        if isinstance(mf, numbers.Integral) and not isinstance(mf, bool):
            k = int(mf)
        else:
            k = int(float(mf) * F)
        if not 0 < k <= F:
            raise ValueError(
                f"IsolationForest: max_features must be in (0, n_features={F}], got {mf!r}"
            )
        return k

    def fit(self, X, y=None, sample_weight=None):
        """Grow the trees on X (y is ignored); rows of zero ``sample_weight`` are left out."""
        self._validate_params()
        Xa = check_array(X, estimator=self)
        n, F = int(Xa.shape[0]), int(Xa.shape[1])
        dev = Xa.device
        keep = self.warm_start and hasattr(self, "_feature")
        if keep and F != self.n_features_in_:
            raise ValueError(
                f"X has {F} features, but IsolationForest is expecting {self.n_features_in_} "
                "features as input."
            )
        check_n_features(self, Xa, reset=True)
        S = self._n_samples(n)
        Fp = self._n_features(F)
        depth = int(math.ceil(math.log2(max(S, 2))))
        rng = check_random_state(self.random_state)
        T_old = len(self.estimators_samples_) if keep else 0
        T = self.n_estimators - T_old
        if T < 0:
            raise ValueError(
                f"IsolationForest: n_estimators={self.n_estimators} must be larger or equal to "
                f"len(estimators_)={T_old} when warm_start==True"
            )
        if keep and T == 0:
            warnings.warn(
                "Warm-start fitting without increasing n_estimators does not fit new trees.",
                UserWarning,
                stacklevel=2,
            )
        if keep and S != self.max_samples_:
            raise ValueError(
                f"IsolationForest: warm_start needs the same max_samples_ ({self.max_samples_}),"
                f" got {S}"
            )
        if T > 0:
            for _ in range(T_old):  # skip the draws of the kept trees
                rng.random((1,), device=dev)
            sw = check_sample_weight(sample_weight, Xa, ember.float64)
            rows, valid = _draw(rng, T, n, S, self.bootstrap, dev)
            valid = valid & (ember.take(sw, rows.reshape(-1)).reshape(T, S) > 0)
            if Fp < F:
                fidx = ember.argsort(rng.random((T, F), device=dev), axis=1)[:, :Fp]
            else:
                fidx = ember.arange(F, device=dev)[None, :] + ember.zeros(
                    (T, 1), dtype=ember.int64, device=dev
                )
            Xt = ember.take(Xa, rows.reshape(-1), axis=0).reshape(T, S, F)
            if Fp < F:
                Xt = ember.take_along_axis(Xt, fidx[:, None, :] + 0 * rows[:, :, None], axis=2)
            feat, thr, cnt = _grow(Xt, valid, depth, rng)
            # tree-local feature numbers to X's columns
            gfeat = ember.take_along_axis(fidx, ember.clip(feat, 0, None), axis=1)
            gfeat = ember.where(feat >= 0, gfeat, -1)
            level = ember.floor(
                ember.log2(ember.arange(1, feat.shape[1] + 1, device=dev).astype(ember.float64))
            )
            path = level[None, :] + average_path_length(cnt)
            samples = [rows[i] for i in range(T)]
            feats = [fidx[i] for i in range(T)]
            if keep and T_old:
                feat_all = ember.concatenate([self._feature, gfeat], axis=0)
                thr_all = ember.concatenate([self._threshold, thr], axis=0)
                path_all = ember.concatenate([self._path, path], axis=0)
                cnt_all = ember.concatenate([self._count, cnt], axis=0)
                samples = list(self.estimators_samples_) + samples
                feats = list(self.estimators_features_) + feats
            else:
                feat_all, thr_all, path_all, cnt_all = gfeat, thr, path, cnt
            self._feature, self._threshold, self._path, self._count = (
                feat_all,
                thr_all,
                path_all,
                cnt_all,
            )
            self.estimators_samples_ = samples
            self.estimators_features_ = feats
        self._depth = depth
        self.max_samples_ = S
        self._kind = input_kind(X)
        self._xdtype = Xa.dtype
        if self.contamination == "auto":
            self.offset_ = -0.5
        else:
            scores = self._score(Xa)
            self.offset_ = float(ember.percentile(scores, 100.0 * float(self.contamination)))
        return self

    @property
    def n_estimators_(self):
        check_is_fitted(self, "_feature")
        return int(self._feature.shape[0])

    def _score(self, Xa):
        """Scores (n,) float64 of validated X on the fitted device."""
        dev = self._feature.device
        X = Xa if str(Xa.device) == str(dev) else ember.asarray(Xa, device=dev)
        X = X.astype(self._xdtype)
        n, F = int(X.shape[0]), int(X.shape[1])
        T = int(self._feature.shape[0])
        flat = X.reshape(-1)
        NN = int(self._feature.shape[1])
        # flat gathers (tree t's node i at t*NN + i) are much cheaper than take_along_axis
        feat = ember.clip(self._feature, 0, None).reshape(-1)
        leaf = (self._feature < 0).reshape(-1)
        thr = self._threshold.reshape(-1)
        path = self._path.reshape(-1)
        toff = ember.arange(T, device=dev)[:, None] * NN
        out = []
        # blocks of (tree, row) cells: cache-sized on the CPU, large on a GPU (fewer launches)
        cells = 1 << 22 if "cuda" in str(dev) else 1 << 17
        for a, b in _row_chunks(n, T, cells):
            m = b - a
            base = (ember.arange(a, b, device=dev) * F)[None, :]
            node = ember.zeros((T, m), dtype=ember.int64, device=dev)
            for _ in range(self._depth):
                at = node + toff
                x = ember.take(flat, base + ember.take(feat, at))
                child = 2 * node + 1 + (x > ember.take(thr, at)).astype(ember.int64)
                node = ember.where(ember.take(leaf, at), node, child)
            out.append(ember.take(path, node + toff).sum(axis=0))
        depths = out[0] if len(out) == 1 else ember.concatenate(out)
        denom = T * _c_scalar(self.max_samples_)
        expo = depths / denom if denom != 0 else ember.ones_like(depths)
        return -(2.0 ** (-expo))

    def _check_X(self, X):
        check_is_fitted(self, "_feature")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        return Xa

    def score_samples(self, X):
        """Opposite of the anomaly score of Liu et al.: the lower, the more abnormal."""
        return to_output(self._score(self._check_X(X)), input_kind(X))

    def decision_function(self, X):
        """``score_samples(X) - offset_``: negative for outliers."""
        return to_output(self._score(self._check_X(X)) - self.offset_, input_kind(X))

    def predict(self, X):
        """-1 for outliers, 1 for inliers."""
        d = self._score(self._check_X(X)) - self.offset_
        return to_output(ember.where(d < 0, -1, 1).astype(ember.int64), input_kind(X))

    def fit_predict(self, X, y=None, sample_weight=None):
        return self.fit(X, sample_weight=sample_weight).predict(X)

    @property
    def estimators_(self):
        """The trees as ``ember.ml.tree.ExtraTreeRegressor`` objects (built on first access)."""
        check_is_fitted(self, "_feature")
        cached = self.__dict__.get("_trees")
        if cached is not None and len(cached) == self.n_estimators_:
            return cached
        self.__dict__["_trees"] = [self._tree(i) for i in range(self.n_estimators_)]
        return self.__dict__["_trees"]

    def _tree(self, i):
        """Tree ``i`` with its existing nodes renumbered compactly (root 0, level order)."""
        from ..tree import ExtraTreeRegressor
        from ..tree._grow import Tree

        feat, thr, cnt = self._feature[i], self._threshold[i], self._count[i]
        dev = feat.device
        NN = int(feat.shape[0])
        idx = ember.arange(NN, device=dev)
        exists = cnt > 0
        exists = ember.where(idx == 0, True, exists)
        new = ember.cumsum(exists.astype(ember.int64)) - 1
        keep = ember.nonzero(exists)[0]
        f = ember.take(feat, keep)
        split = f >= 0
        lc = ember.take(new, ember.clip(2 * keep + 1, 0, NN - 1))
        rc = ember.take(new, ember.clip(2 * keep + 2, 0, NN - 1))
        n_node = ember.take(cnt, keep)
        arrays = {
            "feature": ember.where(split, f, -2),
            "threshold": ember.where(split, ember.take(thr, keep).astype(ember.float64), -2.0),
            "children_left": ember.where(split, lc, -1),
            "children_right": ember.where(split, rc, -1),
            "n_node_samples": n_node.astype(ember.int64),
            "weighted_n_node_samples": n_node,
            "impurity": ember.zeros_like(n_node),
            "gain": ember.zeros_like(n_node),
            "value": ember.zeros((int(keep.shape[0]), 1, 1), dtype=ember.float64, device=dev),
        }
        est = ExtraTreeRegressor(max_features=1, random_state=None)
        est.tree_ = Tree(arrays, self.n_features_in_, 1, self._depth, self._kind)
        est.n_features_in_ = self.n_features_in_
        est.n_outputs_ = 1
        est.max_features_ = 1
        est._dtype = self._xdtype
        return est

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags
