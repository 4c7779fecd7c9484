"""Histogram gradient-boosting trees on ember arrays: feature binning with a missing-value bin,
a best-first (leaf-wise) grower over gradient/hessian histograms, and batched prediction.

Binning follows scikit-learn's ``_BinMapper``: a feature with at most ``max_bins`` distinct
values gets the midpoints between them as thresholds, other features the
'averaged_inverted_cdf' percentiles at k / max_bins; NaN goes to a last, separate bin.

The grower follows scikit-learn's ``TreeGrower``: the leaf with the largest gain is split next
(until ``max_leaf_nodes``); a split's gain is G_L^2/(H_L+l2) + G_R^2/(H_R+l2) - G^2/(H+l2);
every threshold is tried twice, with the node's missing values sent right and then left, and a
feature that had no missing value at fit time sends them to the child with more samples.
The rows of each leaf are a contiguous segment of one permutation (``order``), so the
histogram of a new child costs only its own rows; the larger child's histogram is the parent's
minus the smaller's. All numeric work is ember ops on the data's device; per split, one small
array (the best split of each child) comes back to the host to drive the heap.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

import ember

__all__ = ["BinnedData", "HistTree", "bin_data", "grow_hist_tree", "predict_trees"]

_MIN_HESS = 1e-3
_EPS64 = float(np.finfo(np.float64).eps)
_PRED_BUDGET = 1 << 24  # rows x trees descended at once when predicting


class BinnedData:
    """Binned training matrix: ``codes`` (n, F) int64 in [0, B), bin ``B - 1`` holds NaN;
    ``thr`` (F, B - 2) float64 upper edges of the non-missing bins (+inf past a feature's last
    threshold); ``has_missing`` (F,) bool."""

    def __init__(self, codes, thr, has_missing, thr_host):
        self.codes = codes
        self.thr = thr
        self.has_missing = has_missing
        self.thr_host = thr_host
        self.F = int(codes.shape[1])
        self.B = int(thr.shape[1]) + 2

    def take_rows(self, rows):
        return BinnedData(ember.take(self.codes, rows, axis=0), self.thr, self.has_missing,
                          self.thr_host)  # fmt: skip


def bin_thresholds(X, max_bins, sample_weight=None):
    """(F, T) float64 thresholds (padded with +inf) of the columns of X, NaN ignored; with
    ``sample_weight``, rows of zero weight are ignored and quantiles are weighted."""
    n, F = int(X.shape[0]), int(X.shape[1])
    dev = X.device
    isn = ember.isnan(X)
    if sample_weight is not None:
        isn = isn | (sample_weight == 0)[:, None]
    n_valid = n - isn.astype(ember.int64).sum(axis=0)  # (F,)
    if n < 2:
        return ember.full((F, 0), math.inf, dtype=ember.float64, device=dev)
    Xm = ember.where(isn, math.inf, X)  # excluded rows last (as +inf)
    if sample_weight is None:
        Xs = ember.sort(Xm, axis=0)
    else:
        o = ember.argsort(Xm, axis=0)
        Xs = ember.take_along_axis(Xm, o, axis=0)
        Ws = ember.where(ember.take_along_axis(isn, o, axis=0), 0.0, ember.take(sample_weight, o))
    row = ember.arange(1, n, device=dev)[:, None]
    d = (Xs[1:] != Xs[:-1]) & (row < n_valid[None, :])  # a new valid distinct value at row
    n_distinct = ember.where(n_valid > 0, d.astype(ember.int64).sum(axis=0) + 1, 0)
    nb = max_bins - 1
    # exact: midpoints between consecutive distinct values, scattered to slot f*nb + rank
    mids = (Xs[1:] + Xs[:-1]) * 0.5
    rank = ember.cumsum(d.astype(ember.int64), axis=0) - 1
    fidx = ember.arange(F, device=dev)[None, :]
    dump = F * nb
    slot = ember.where(d & (rank < nb), fidx * nb + rank, dump).reshape(-1)
    vals = ember.bincount(slot, weights=ember.where(d, mids, 0.0).reshape(-1), minlength=dump + 1)
    filled = ember.bincount(slot, minlength=dump + 1)[:dump] > 0
    thr_exact = ember.where(filled, vals[:dump], math.inf).reshape(F, nb)
    # quantiles: NumPy's 'averaged_inverted_cdf' percentiles at k / max_bins of each feature's
    # valid values, with NumPy's arithmetic (virtual index n*q - 1; a whole index averages
    # the two neighbours as b - (b - a) * 0.5) so the thresholds equal scikit-learn's
    q = ember.asarray(np.linspace(0, 100, max_bins + 1)[1:-1] / 100, device=dev)
    nv = n_valid.astype(ember.float64)[:, None]
    vi = nv * q[None, :] - 1
    prev = ember.floor(vi)
    whole = (vi - prev) == 0
    above = vi >= nv - 1
    lo_i = ember.where(above, nv - 1, prev).astype(ember.int64)
    hi_i = ember.where(above, nv - 1, prev + 1).astype(ember.int64)
    XT = Xs.T  # (F, n)
    a_v = ember.take_along_axis(XT, ember.clip(lo_i, 0, n - 1), axis=1)
    b_v = ember.take_along_axis(XT, ember.clip(hi_i, 0, n - 1), axis=1)
    thr_q = ember.where(whole, b_v - (b_v - a_v) * 0.5, b_v)
    if sample_weight is not None:
        thr_q = _weighted_quantiles(Xs, Ws, n_valid, max_bins)
    # duplicated quantiles only leave empty bins: drop them (scikit-learn's np.unique)
    dup = ember.concatenate(
        [ember.zeros((F, 1), dtype=ember.bool, device=dev), thr_q[:, 1:] == thr_q[:, :-1]], axis=1
    )
    thr_q = ember.sort(ember.where(dup, math.inf, thr_q), axis=1)
    use_exact = (n_distinct <= max_bins)[:, None]
    thr = ember.where(use_exact, thr_exact, thr_q)
    thr = ember.where(thr > 1e300, math.inf, thr)  # scikit-learn clips at ALMOST_INF
    n_thr = ember.isfinite(thr).astype(ember.int64).sum(axis=1)
    used = int(n_thr.max()) if F else 0  # host sync: sizes every histogram
    return thr[:, :used]


def _weighted_quantiles(Xs, Ws, n_valid, max_bins):
    """scikit-learn's ``_weighted_percentile(average=True)`` at k / max_bins, per column of
    the sorted ``Xs`` (n, F) with weights ``Ws``: the first value whose cumulative weight
    reaches the rank, or the mean with the next one when it reaches it exactly."""
    F = int(Xs.shape[1])
    dev = Xs.device
    cdf = ember.cumsum(Ws, axis=0).T  # (F, n)
    p = ember.asarray(np.linspace(0, 100, max_bins + 1)[1:-1], device=dev)
    r = p[None, :] / 100 * cdf[:, -1:]  # (F, nb)
    r = ember.where(r == 0, 5e-324, r)
    idx = ember.stack([ember.searchsorted(cdf[f], r[f]) for f in range(F)], axis=0)
    top = ember.clip(n_valid - 1, 0, None)[:, None]
    idx = ember.minimum(idx, top)
    XT = Xs.T
    a = ember.take_along_axis(XT, idx, axis=1)
    b = ember.take_along_axis(XT, ember.minimum(idx + 1, top), axis=1)
    above = (ember.take_along_axis(cdf, idx, axis=1) - r) > _EPS64
    return ember.where(above, a, (a + b) / 2)


def bin_data(X, max_bins):
    """Bin X (n, F) float64 (NaN allowed): a ``BinnedData``."""
    thr = bin_thresholds(X, max_bins)
    return apply_bins(X, thr)


def apply_bins(X, thr, thr_host=None):
    """Codes of X under thresholds ``thr`` (from ``bin_thresholds``)."""
    F = int(X.shape[1])
    T = int(thr.shape[1])
    isn = ember.isnan(X)
    cols = [ember.searchsorted(thr[f], X[:, f], side="left") for f in range(F)]
    codes = ember.stack(cols, axis=1).astype(ember.int64) if F else None
    codes = ember.where(isn, T + 1, codes)
    has_missing = isn.any(axis=0)
    if thr_host is None:
        thr_host = np.concatenate(
            [ember.asnumpy(thr), np.full((F, 1), np.inf)], axis=1
        )  # (F, T + 1): the last non-missing bin's edge is +inf
    return BinnedData(codes, thr, has_missing, thr_host)


class HistTree:
    """One fitted tree: host arrays (numbered in creation order, root 0) and their device
    copies used to predict. ``value`` already includes the learning rate."""

    _FIELDS = ("feature", "threshold", "missing_left", "left", "right", "value", "bin",
               "gain", "count", "is_leaf", "depth")  # fmt: skip

    def __init__(self, nodes, dev):
        for k in self._FIELDS:
            setattr(self, k, nodes[k])
        self.node_count = int(len(nodes["feature"]))
        self.n_leaves = int(np.sum(nodes["is_leaf"]))
        self.max_depth = int(np.max(nodes["depth"]))
        self._dev = dev

    def get_n_leaf_nodes(self):
        return self.n_leaves

    def get_max_depth(self):
        return self.max_depth


def predict_trees(trees, X, n_out=1):
    """Sum over ``trees`` (iteration-major, ``n_out`` trees per iteration) of their leaf
    values on X (n, F): (n, n_out). All trees of a chunk descend together."""
    n = int(X.shape[0])
    dev = X.device
    out = ember.zeros((n, n_out), dtype=ember.float64, device=dev)
    for vals, ks in _leaf_value_chunks(trees, X, n_out):
        for k in range(n_out):
            sel = [i for i, kk in enumerate(ks) if kk == k]
            if sel:
                idx = ember.asarray(np.asarray(sel, dtype=np.int64), device=dev)
                out[:, k] = out[:, k] + ember.take(vals, idx, axis=1).sum(axis=1)
    return out


def staged_values(trees, X, n_out=1):
    """Yield, for each iteration, the (n, n_out) contribution of its trees."""
    n_iter = len(trees) // n_out
    step = max(1, _PRED_BUDGET // max(1, int(X.shape[0]) * n_out))
    for a in range(0, n_iter, step):
        b = min(n_iter, a + step)
        chunk = trees[a * n_out : b * n_out]
        vals = _leaf_values(chunk, X)  # (n, (b - a) * n_out)
        for i in range(b - a):
            yield vals[:, i * n_out : (i + 1) * n_out]


def _leaf_value_chunks(trees, X, n_out):
    step = max(n_out, (_PRED_BUDGET // max(1, int(X.shape[0]))) // n_out * n_out)
    for a in range(0, len(trees), step):
        chunk = trees[a : a + step]
        yield _leaf_values(chunk, X), [(a + i) % n_out for i in range(len(chunk))]


def _packed(trees, dev):
    """Concatenated node arrays of ``trees`` on ``dev`` (child links offset per tree)."""
    offs = np.cumsum([0] + [t.node_count for t in trees[:-1]]).astype(np.int64)
    cat = {}
    for name in ("feature", "threshold", "missing_left", "value"):
        cat[name] = np.concatenate([getattr(t, name) for t in trees])
    cat["left"] = np.concatenate([t.left + o for t, o in zip(trees, offs, strict=True)])
    cat["right"] = np.concatenate([t.right + o for t, o in zip(trees, offs, strict=True)])
    arrs = {k: ember.asarray(v, device=dev) for k, v in cat.items()}
    return arrs, ember.asarray(offs, device=dev), max(t.max_depth for t in trees)


def _leaf_values(trees, X):
    """(n, len(trees)) leaf value of every row in every tree (one vectorized descent)."""
    n = int(X.shape[0])
    dev = X.device
    if not trees:
        return ember.zeros((n, 0), dtype=ember.float64, device=dev)
    a, offs, depth = _packed(trees, dev)
    node = ember.broadcast_to(offs[None, :], (n, len(trees)))
    for _ in range(depth):
        f = ember.take(a["feature"], node)
        x = ember.take_along_axis(X, ember.clip(f, 0, None), axis=1)
        go_left = ember.where(
            ember.isnan(x),
            ember.take(a["missing_left"], node),
            x <= ember.take(a["threshold"], node),
        )
        nxt = ember.where(go_left, ember.take(a["left"], node), ember.take(a["right"], node))
        node = ember.where(f >= 0, nxt, node)
    return ember.take(a["value"], node)


class _Grower:
    def __init__(self, data, g, h, *, max_leaf_nodes, max_depth, min_samples_leaf, l2,
                 shrinkage, max_features, rng):  # fmt: skip
        self.d = data
        self.g, self.h = g, h
        self.mln, self.md, self.msl = max_leaf_nodes, max_depth, min_samples_leaf
        self.l2, self.shrink = l2, shrinkage
        self.dev = data.codes.device
        F, B = data.F, data.B
        self.fB = (ember.arange(F, device=self.dev) * B)[None, :]
        self.n_sub = F
        if max_features < 1.0:
            self.n_sub = max(1, int(math.ceil(max_features * F)))
        self.rng = rng

    def hist(self, rows):
        """(F, B, 3) histogram (sum g, sum h, count) of ``rows`` (None: all rows)."""
        d = self.d
        F, B = d.F, d.B
        codes = d.codes if rows is None else ember.take(d.codes, rows, axis=0)
        m = int(codes.shape[0])
        key = (codes + self.fB).reshape(-1)
        size = F * B

        def per_row(v):
            v = v if rows is None else ember.take(v, rows)
            return ember.broadcast_to(v[:, None], (m, F)).reshape(-1)

        Hg = ember.bincount(key, weights=per_row(self.g), minlength=size)
        Hc = ember.bincount(key, minlength=size).astype(ember.float64)
        Hh = Hc if self.h is None else ember.bincount(key, weights=per_row(self.h), minlength=size)
        return ember.stack([Hg, Hh, Hc], axis=1).reshape(F, B, 3)

    def best_splits(self, H, tot, parent):
        """Best split of L nodes: H (L, F, B, 3), tot (L, 3) and parent term (L,) on the
        device. Returns a host array (L, 8): found, gain, feature, bin, missing_left, and the
        left child's (G, H, n)."""
        L = int(H.shape[0])
        F, B = self.d.F, self.d.B
        l2 = self.l2
        nm = H[:, :, : B - 1, :]
        CL = ember.cumsum(nm, axis=2)
        # suffix sums: the right child of a cut after bin k holds bins k+1.. (summed from the
        # last bin down, as scikit-learn's right-to-left scan)
        suf = ember.flip(ember.cumsum(ember.flip(nm, axis=2), axis=2), axis=2)
        zero = ember.zeros_like(suf[:, :, :1, :])
        right_b = ember.concatenate([suf[:, :, 1:, :], zero], axis=2)
        T = tot[:, None, None, :]
        # missing right (bins ascending), then missing left (bins descending): scikit-learn's
        # scan order, so the first maximum is the split it keeps
        left = ember.concatenate([CL, ember.flip(T - right_b, axis=2)], axis=2)
        right = ember.concatenate([T - CL, ember.flip(right_b, axis=2)], axis=2)
        GL, HL, NL = left[..., 0], left[..., 1], left[..., 2]
        GR, HR, NR = right[..., 0], right[..., 1], right[..., 2]
        # scikit-learn's arithmetic: loss(node) = G * value, value = -G / (H + l2 + 1e-15)
        vL = -GL / (HL + (l2 + 1e-15))
        vR = -GR / (HR + (l2 + 1e-15))
        gain = (parent[:, None, None] - GL * vL) - GR * vR
        msl = self.msl
        valid = (NL >= msl) & (NR >= msl) & (HL >= _MIN_HESS) & (HR >= _MIN_HESS)
        half = ember.arange(2 * (B - 1), device=self.dev) >= B - 1  # (2(B-1),)
        valid = valid & (~half[None, None, :] | self.d.has_missing[None, :, None])
        if self.n_sub < F:
            r = self.rng.random((L, F), device=self.dev)
            pick = ember.argsort(ember.argsort(r, axis=1), axis=1) < self.n_sub
            valid = valid & pick[:, :, None]
        gain = ember.where(valid, gain, -math.inf).reshape(L, F * 2 * (B - 1))
        best = ember.argmax(gain, axis=1)
        bg = ember.take_along_axis(gain, best[:, None], axis=1)[:, 0]
        W = 2 * (B - 1)
        f = best // W
        r = best % W
        mleft = r >= B - 1
        b = ember.where(mleft, 2 * (B - 1) - 1 - r, r)
        lf = left.reshape(L, F * W, 3)
        ls = ember.take_along_axis(lf, ember.broadcast_to(best[:, None, None], (L, 1, 3)), axis=1)
        cols = [
            (bg > 0).astype(ember.float64),
            bg,
            f.astype(ember.float64),
            b.astype(ember.float64),
            mleft.astype(ember.float64),
            ls[:, 0, 0],
            ls[:, 0, 1],
            ls[:, 0, 2],
        ]
        return ember.asnumpy(ember.stack(cols, axis=1))  # host sync: drives the heap

    def grow(self):
        d = self.d
        n = int(d.codes.shape[0])
        dev = self.dev
        l2 = self.l2
        H0 = self.hist(None)
        h0 = ember.asnumpy(H0[0])  # host: the root's totals (from feature 0's bins)
        Gt = float(np.sum(h0[:, 0]))
        Ht = float(n if self.h is None else np.sum(h0[:, 1]))
        order = ember.arange(n, device=dev)
        nodes = {k: [] for k in HistTree._FIELDS}
        seg = []  # (start, stop) of each node's rows in ``order``
        stats = []  # (G, H, n) of each node
        hists = {}
        splits = {}

        def new_node(G, Hs, cnt, depth, start, stop):
            nodes["feature"].append(-1)
            nodes["threshold"].append(0.0)
            nodes["missing_left"].append(False)
            nodes["left"].append(-1)
            nodes["right"].append(-1)
            nodes["value"].append(-G / (Hs + (l2 + 1e-15)))
            nodes["bin"].append(0)
            nodes["gain"].append(0.0)
            nodes["count"].append(int(round(cnt)))
            nodes["is_leaf"].append(True)
            nodes["depth"].append(depth)
            seg.append((start, stop))
            stats.append((G, Hs, cnt))
            return len(seg) - 1

        heap = []

        def consider(ids, Hs_list, parents):
            H = ember.stack(Hs_list, axis=0)
            tot = ember.asarray(np.asarray([stats[i] for i in ids], dtype=np.float64), device=dev)
            par = ember.asarray(np.asarray(parents, dtype=np.float64), device=dev)
            res = self.best_splits(H, tot, par)
            for i, node_id in enumerate(ids):
                if res[i, 0] > 0:
                    splits[node_id] = res[i]
                    hists[node_id] = Hs_list[i]
                    heapq.heappush(heap, (-res[i, 1], node_id))

        root = new_node(Gt, Ht, n, 0, 0, n)
        if n >= 2 * self.msl and Ht >= _MIN_HESS:
            consider([root], [H0], [0.0])  # scikit-learn's root has value 0
        n_leaves = 1
        while heap:
            _, nid = heapq.heappop(heap)
            s = splits.pop(nid)
            Hp = hists.pop(nid)
            f, b, ml = int(s[2]), int(s[3]), bool(s[4])
            GL, HL, NL = float(s[5]), float(s[6]), float(s[7])
            G, Hs, cnt = stats[nid]
            GR, HR, NR = G - GL, Hs - HL, cnt - NL
            nl = int(round(NL))
            start, stop = seg[nid]
            rows = order[start:stop]
            c = ember.take(d.codes[:, f], rows)
            go_left = ember.where(c == d.B - 1, ml, c <= b)
            gl = go_left.astype(ember.int64)
            pos = ember.where(go_left, ember.cumsum(gl) - 1, nl + ember.cumsum(1 - gl) - 1)
            new_rows = ember.zeros((stop - start,), dtype=ember.int64, device=dev)
            new_rows[pos] = rows
            order[start:stop] = new_rows
            depth = nodes["depth"][nid] + 1
            li = new_node(GL, HL, NL, depth, start, start + nl)
            ri = new_node(GR, HR, NR, depth, start + nl, stop)
            has_miss = bool(self._has_missing_host()[f])
            nodes["feature"][nid] = f
            nodes["bin"][nid] = b
            nodes["threshold"][nid] = float(d.thr_host[f, b])
            nodes["missing_left"][nid] = ml if has_miss else NL > NR
            nodes["left"][nid], nodes["right"][nid] = li, ri
            nodes["gain"][nid] = float(s[1])
            nodes["is_leaf"][nid] = False
            n_leaves += 1
            if self.mln is not None and n_leaves >= self.mln:
                break
            if self.md is not None and depth >= self.md:
                continue
            can = [NL >= 2 * self.msl, NR >= 2 * self.msl]
            if not any(can):
                continue
            small_left = NL < NR
            small = new_rows[:nl] if small_left else new_rows[nl:]
            Hs_small = self.hist(small)
            Hs_large = Hp - Hs_small
            HL_, HR_ = (Hs_small, Hs_large) if small_left else (Hs_large, Hs_small)
            ids, hl, par = [], [], []
            for ok, cid, hh, Gc, Hc in ((can[0], li, HL_, GL, HL), (can[1], ri, HR_, GR, HR)):
                if ok:
                    ids.append(cid)
                    hl.append(hh)
                    par.append(Gc * (-Gc / (Hc + (l2 + 1e-15))))
            consider(ids, hl, par)
        for i in range(len(seg)):
            if nodes["is_leaf"][i]:
                nodes["value"][i] *= self.shrink
        arr = {
            "feature": np.asarray(nodes["feature"], dtype=np.int64),
            "threshold": np.asarray(nodes["threshold"], dtype=np.float64),
            "missing_left": np.asarray(nodes["missing_left"], dtype=bool),
            "left": np.asarray(nodes["left"], dtype=np.int64),
            "right": np.asarray(nodes["right"], dtype=np.int64),
            "value": np.asarray(nodes["value"], dtype=np.float64),
            "bin": np.asarray(nodes["bin"], dtype=np.int64),
            "gain": np.asarray(nodes["gain"], dtype=np.float64),
            "count": np.asarray(nodes["count"], dtype=np.int64),
            "is_leaf": np.asarray(nodes["is_leaf"], dtype=bool),
            "depth": np.asarray(nodes["depth"], dtype=np.int64),
        }
        tree = HistTree(arr, dev)
        return (
            tree,
            order,
            [seg[i] for i in range(len(seg)) if arr["is_leaf"][i]],
            [i for i in range(len(seg)) if arr["is_leaf"][i]],
        )

    def _has_missing_host(self):
        if not hasattr(self, "_hm"):
            self._hm = ember.asnumpy(self.d.has_missing)
        return self._hm


def grow_hist_tree(data, g, h, **params):
    """Grow one tree on ``data`` (a ``BinnedData``) from gradients ``g`` (n,) and hessians
    ``h`` (n,) (None: all ones, counted). Returns ``(tree, leaf_of_row)``, ``leaf_of_row``
    (n,) int64 the node id of the leaf each training row ends in."""
    grower = _Grower(data, g, h, **params)
    tree, order, segs, leaf_ids = grower.grow()
    n = int(data.codes.shape[0])
    dev = data.codes.device
    starts = np.asarray([s for s, _ in segs], dtype=np.int64)
    ids = np.asarray(leaf_ids, dtype=np.int64)
    srt = np.argsort(starts)
    starts, ids = starts[srt], ids[srt]
    pos = ember.arange(n, device=dev)
    which = ember.searchsorted(ember.asarray(starts, device=dev), pos, side="right") - 1
    leaf_at_pos = ember.take(ember.asarray(ids, device=dev), which)
    leaf_of_row = ember.zeros((n,), dtype=ember.int64, device=dev)
    leaf_of_row[order] = leaf_at_pos
    return tree, leaf_of_row
