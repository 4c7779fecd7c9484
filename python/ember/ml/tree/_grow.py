"""Histogram tree growth on ember arrays (the engine of ``ember.ml.tree`` and
``ember.ml.ensemble``).

Every feature is quantized once into at most ``max_bins`` bins (``bin_features``); a tree is
then grown level by level: for all open nodes of a level at once, per-(node, feature, bin)
histograms of the statistic channels are built with ``bincount`` over a combined key, a
cumulative sum over the bins gives the children's statistics for every candidate split, and an
argmin per node picks the best one. Rows are routed to the next level with a gather. The only
Python loops run over levels (and over the few statistic channels), never over rows or nodes.
"""

from __future__ import annotations

import math

import ember

__all__ = ["Tree", "bin_features", "grow_tree", "tree_apply"]

_EPS = 1e-12
# Largest histogram (nodes * features * bins) built in one piece; a level with more open
# nodes is processed in chunks of nodes so memory stays bounded on deep trees.
_HIST_BUDGET = 1 << 22


def bin_features(X, max_bins):
    """Quantize the columns of X (n, F): ``(codes, thresholds, n_thr, bin_min, bin_max)``.

    ``thresholds`` is (F, B-1) float64 (padded with +inf), ``codes`` (n, F) int64 with
    ``codes[i, f] = #{k : thresholds[f, k] < X[i, f]}``, so ``X[i, f] <= thresholds[f, k]``
    exactly when ``codes[i, f] <= k``; ``bin_min``/``bin_max`` (F, B) are the extreme training
    values in each bin. A feature with at most ``max_bins`` distinct values gets
    the midpoints between consecutive distinct values (exact, as scikit-learn's splitter); other
    features get midpoints at the ``k/max_bins`` quantiles of their sorted values.
    """
    n, F = int(X.shape[0]), int(X.shape[1])
    dev = X.device
    X = X.astype(ember.float64)
    nb = max_bins - 1
    if n < 2:
        thr = ember.full((F, 1), math.inf, dtype=ember.float64, device=dev)
        codes = ember.zeros((n, F), dtype=ember.int64, device=dev)
        return codes, thr[:, :0], 0, X.T, X.T
    Xs = ember.sort(X, axis=0)
    d = Xs[1:] != Xs[:-1]  # (n-1, F): a new distinct value starts after row i
    mids = (Xs[1:] + Xs[:-1]) * 0.5
    # midpoints that round up onto the upper value would send it left: keep the lower value
    mids = ember.where(mids == Xs[1:], Xs[:-1], mids)
    n_distinct = d.astype(ember.int64).sum(axis=0) + 1
    exact = n_distinct <= max_bins
    # exact thresholds: scatter the midpoint of the r-th boundary of feature f to slot f*nb + r
    rank = ember.cumsum(d.astype(ember.int64), axis=0) - 1
    fidx = ember.arange(F, device=dev)[None, :]
    dump = F * nb
    slot = ember.where(d & (rank < nb), fidx * nb + rank, dump).reshape(-1)
    size = F * nb + 1
    vals = ember.bincount(slot, weights=mids.reshape(-1), minlength=size)[:dump]
    filled = ember.bincount(slot, minlength=size)[:dump] > 0
    thr_exact = ember.where(filled, vals, math.inf).reshape(F, nb)
    # quantile thresholds for the other features
    pos = (ember.arange(1, nb + 1, device=dev) * n) // max_bins  # split before sorted row pos
    pos = ember.clip(pos, 1, n - 1)
    thr_q = ember.take(mids, pos - 1, axis=0).T  # (F, nb)
    thr = ember.where(exact[:, None], thr_exact, thr_q)
    n_thr = ember.where(exact, n_distinct - 1, nb)
    used = int(n_thr.max())  # host sync: the number of bins sizes every histogram
    thr = thr[:, :used]
    cols, lo_v, hi_v = [], [], []
    edges = ember.concatenate([thr, ember.full((F, 1), math.inf, device=dev)], axis=1)
    for f in range(F):  # one pass per feature, once per fit
        cols.append(ember.searchsorted(thr[f], X[:, f], side="left"))
        # smallest and largest training value of every bin (thresholds are placed between them)
        end = ember.searchsorted(Xs[:, f], edges[f], side="right")
        beg = ember.concatenate([ember.zeros((1,), dtype=end.dtype, device=dev), end[:-1]])
        lo_v.append(ember.take(Xs[:, f], ember.clip(beg, 0, n - 1)))
        hi_v.append(ember.take(Xs[:, f], ember.clip(end - 1, 0, n - 1)))
    codes = ember.stack(cols, axis=1).astype(ember.int64)
    return codes, thr, used, ember.stack(lo_v, axis=0), ember.stack(hi_v, axis=0)


class Tree:
    """A fitted tree as flat arrays (scikit-learn's ``tree_``), kept on the fit device.

    Node 0 is the root; nodes are numbered level by level. Leaves have ``children_left ==
    children_right == -1``, ``feature == -2`` and ``threshold == -2``. ``value`` is
    (node_count, 1, n_classes) class fractions (classifier) or (node_count, 1, 1) means.
    """

    def __init__(self, arrays, n_features, n_classes, max_depth, kind):
        self._a = arrays
        self._kind = kind
        self.n_features = n_features
        self.n_classes = n_classes
        self.n_outputs = 1
        self.max_depth = max_depth
        self.node_count = int(arrays["feature"].shape[0])
        self.n_leaves = int((arrays["children_left"] == -1).astype(ember.int64).sum())

    def _out(self, name):
        from ..utils.validation import to_output

        return to_output(self._a[name], self._kind)

    feature = property(lambda self: self._out("feature"))
    threshold = property(lambda self: self._out("threshold"))
    children_left = property(lambda self: self._out("children_left"))
    children_right = property(lambda self: self._out("children_right"))
    impurity = property(lambda self: self._out("impurity"))
    n_node_samples = property(lambda self: self._out("n_node_samples"))
    weighted_n_node_samples = property(lambda self: self._out("weighted_n_node_samples"))
    value = property(lambda self: self._out("value"))

    def compute_feature_importances(self, normalize=True):
        """Total impurity decrease brought by each feature (normalized to sum 1)."""
        a = self._a
        split = a["feature"] >= 0
        f = ember.where(split, a["feature"], 0)
        g = ember.where(split, a["gain"], 0.0)
        imp = ember.bincount(f, weights=g, minlength=self.n_features)
        root = a["weighted_n_node_samples"][0]
        imp = imp / root
        if normalize:
            s = imp.sum()
            imp = ember.where(s > 0, imp / ember.where(s > 0, s, 1.0), imp)
        return imp


def tree_apply(tree, X):
    """Leaf index of every row of X (n, F) by a vectorized descent (one gather per level)."""
    a = tree._a
    dev = a["feature"].device
    n = int(X.shape[0])
    node = ember.zeros((n,), dtype=ember.int64, device=dev)
    feat, thr = a["feature"], a["threshold"]
    left, right = a["children_left"], a["children_right"]
    for _ in range(tree.max_depth):
        f = ember.take(feat, node)
        x = ember.take_along_axis(X, ember.clip(f, 0, None)[:, None], axis=1)[:, 0]
        go_left = x <= ember.take(thr, node)
        nxt = ember.where(go_left, ember.take(left, node), ember.take(right, node))
        node = ember.where(f >= 0, nxt, node)
    return node


def _xlogx(a):
    return ember.special.xlogy(a, a)


def _children_cost(CL, CR, WL, WR, criterion):
    """Weighted impurity sum W_l * imp_l + W_r * imp_r of every candidate split."""
    if criterion == "gini":
        sl = WL - (CL * CL).sum(axis=-1) / ember.where(WL > 0, WL, 1.0)
        sr = WR - (CR * CR).sum(axis=-1) / ember.where(WR > 0, WR, 1.0)
        return sl + sr
    if criterion in ("entropy", "log_loss"):
        el = _xlogx(WL) - _xlogx(CL).sum(axis=-1)
        er = _xlogx(WR) - _xlogx(CR).sum(axis=-1)
        return (el + er) / math.log(2.0)
    # squared error: channels (w, w*y, w*y^2)
    sl = CL[..., 2] - CL[..., 1] ** 2 / ember.where(WL > 0, WL, 1.0)
    sr = CR[..., 2] - CR[..., 1] ** 2 / ember.where(WR > 0, WR, 1.0)
    return sl + sr


def _node_stats(tot, criterion):
    """(weight, impurity, value) of nodes from their channel totals (L, C)."""
    if criterion == "squared_error":
        W = tot[:, 0]
        Wd = ember.where(W > 0, W, 1.0)
        mean = tot[:, 1] / Wd
        imp = ember.clip(tot[:, 2] / Wd - mean * mean, 0.0, None)
        return W, imp, mean[:, None, None]
    W = tot.sum(axis=1)
    Wd = ember.where(W > 0, W, 1.0)
    p = tot / Wd[:, None]
    if criterion == "gini":
        imp = 1.0 - (p * p).sum(axis=1)
    else:
        imp = -ember.special.xlogy(p, p).sum(axis=1) / math.log(2.0)
    return W, imp, p[:, None, :]


def _gather(a, idx, axis):
    """``take_along_axis`` with ``idx`` broadcast over the trailing axes of ``a``."""
    shape = tuple(idx.shape) + tuple(a.shape[idx.ndim :])
    full = idx.reshape(tuple(idx.shape) + (1,) * (a.ndim - idx.ndim))
    return ember.take_along_axis(a, ember.broadcast_to(full, shape), axis=axis)


def _best_splits(ctx, nidc, wS, wcnt, lo, hi, tot, can, rng):
    """Best (feature, bin, child cost, found) of the open nodes lo..hi-1 of a level."""
    codes, F, B, C = ctx["codes"], ctx["F"], ctx["B"], ctx["C"]
    Lc = hi - lo
    dev = codes.device
    inside = (nidc >= lo) & (nidc < hi)
    local = ember.where(inside, nidc - lo, 0)
    key = ((local[:, None] * F + ember.arange(F, device=dev)[None, :]) * B + codes).reshape(-1)
    size = Lc * F * B
    zero = ember.zeros((), dtype=ember.float64, device=dev)

    def hist(weights):
        w = ember.where(inside, weights, zero)
        wf = ember.broadcast_to(w[:, None], (w.shape[0], F)).reshape(-1)
        return ember.bincount(key, weights=wf, minlength=size).reshape(Lc, F, B)

    H = ember.stack([hist(wS[:, c]) for c in range(C)], axis=-1)  # (Lc, F, B, C)
    Hn = hist(wcnt)  # (Lc, F, B) sample counts
    nz = Hn > 0
    bb = ember.arange(B, device=dev)[None, None, :]
    first = ember.where(nz, bb, B).min(axis=2)  # (Lc, F) smallest / largest occupied bin
    last = ember.where(nz, bb, -1).max(axis=2)
    fid = ember.broadcast_to(ember.arange(F, device=dev)[None, :], (Lc, F))
    mf = ctx["max_features"]
    if mf < F:
        # scikit-learn draws features in random order until it has seen max_features
        # non-constant ones: rank the non-constant features first, in random order.
        r = rng.random((Lc, F), device=dev) + ember.where(last > first, 0.0, 2.0)
        fid = ember.argsort(r, axis=1)[:, :mf]
        H, Hn = _gather(H, fid, 1), _gather(Hn, fid, 1)
        first, last = _gather(first, fid, 1), _gather(last, fid, 1)
    Fs = int(fid.shape[1])
    CL = ember.cumsum(H, axis=2)[:, :, :-1, :]
    NL = ember.cumsum(Hn, axis=2)[:, :, :-1]
    rand_thr = None
    if ctx["splitter"] == "random":
        # one threshold per (node, feature) drawn uniformly between the node's smallest and
        # largest value (scikit-learn's extra-trees), cut after the last bin at or below it
        u = rng.random((Lc, Fs), device=dev)
        fl, la = ember.clip(first, 0, B - 1), ember.clip(last, 0, B - 1)
        vmin = ember.take(ctx["bin_min"].reshape(-1), fid * B + fl)
        vmax = ember.take(ctx["bin_max"].reshape(-1), fid * B + la)
        rand_thr = vmin + u * (vmax - vmin)
        bm = ember.take(ctx["bin_max"], fid, axis=0)  # (Lc, Fs, B)
        kb = (bm <= rand_thr[:, :, None]).astype(ember.int64).sum(axis=2) - 1
        kb = ember.clip(kb, 0, B - 2)[:, :, None]
        CL, NL = _gather(CL, kb, 2), _gather(NL, kb, 2)
    else:
        kb = ember.broadcast_to(ember.arange(B - 1, device=dev)[None, None, :], (Lc, Fs, B - 1))
    T = tot[lo:hi][:, None, None, :]
    Nt = Hn.sum(axis=2)[:, :, None]
    CR = T - CL
    NR = Nt - NL
    if ctx["criterion"] == "squared_error":
        WL, WR = CL[..., 0], CR[..., 0]
    else:
        WL, WR = CL.sum(axis=-1), CR.sum(axis=-1)
    msl = ctx["min_samples_leaf"]
    n_thr = ember.take(ctx["n_thr"], fid)[:, :, None]
    valid = (NL >= msl) & (NR >= msl) & (WL > _EPS) & (WR > _EPS) & (kb < n_thr)
    if ctx["mwl"] > 0:
        valid = valid & (WL >= ctx["mwl"]) & (WR >= ctx["mwl"])
    cost = _children_cost(CL, CR, WL, WR, ctx["criterion"])
    K = int(kb.shape[2])
    big = ember.asarray(math.inf, dtype=ember.float64, device=dev)
    cost = ember.where(valid, cost, big).reshape(Lc, Fs * K)
    best = ember.argmin(cost, axis=1)
    best_cost = ember.take_along_axis(cost, best[:, None], axis=1)[:, 0]
    found = ember.isfinite(best_cost) & can[lo:hi]
    j = best // K
    feat = ember.take_along_axis(fid, j[:, None], axis=1)[:, 0]
    kbin = ember.take_along_axis(kb.reshape(Lc, Fs * K), best[:, None], axis=1)[:, 0]
    # threshold: midway between the node's largest value left of the cut and smallest value
    # right of it (scikit-learn's node-local midpoint; exact when the binning is exact)
    occ = _gather(nz if mf >= F else Hn > 0, j[:, None], 1)[:, 0, :]  # (Lc, B)
    b1 = ember.arange(B, device=dev)[None, :]
    kc = kbin[:, None]
    lb = ember.where(occ & (b1 <= kc), b1, -1).max(axis=1)
    rb = ember.where(occ & (b1 > kc), b1, B).min(axis=1)
    lb, rb = ember.clip(lb, 0, B - 1), ember.clip(rb, 0, B - 1)
    vmax = ember.take(ctx["bin_max"].reshape(-1), feat * B + lb)
    vmin = ember.take(ctx["bin_min"].reshape(-1), feat * B + rb)
    thr = (vmax + vmin) * 0.5
    thr = ember.where(thr == vmin, vmax, thr)  # a midpoint rounding up onto the right value
    if rand_thr is not None:
        t = ember.take_along_axis(rand_thr, j[:, None], axis=1)[:, 0]
        # inside a quantile bin the drawn value would disagree with the binned routing
        thr = ember.where((t >= vmax) & (t < vmin), t, thr)
    return feat, kbin, best_cost, found, thr


def grow_tree(codes, thr, n_thr, bin_min, bin_max, S, cnt, *, criterion, max_depth,
              min_samples_split, min_samples_leaf, min_weight_leaf, max_features,
              min_impurity_decrease, splitter, rng, kind):  # fmt: skip
    """Grow one tree; ``S`` (n, C) holds each row's weighted statistic channels (one-hot class
    weights, or (w, w*y, w*y^2) for squared error), ``cnt`` (n,) each row's multiplicity
    (0 for rows outside a bootstrap sample). Returns a ``Tree``."""
    dev = codes.device
    F = int(codes.shape[1])
    B = int(thr.shape[1]) + 1
    C = int(S.shape[1])
    n_thr_dev = ember.full((F,), n_thr, dtype=ember.int64, device=dev)
    n_thr_dev = ember.minimum(n_thr_dev, ember.isfinite(thr).astype(ember.int64).sum(axis=1))
    ctx = {
        "codes": codes, "F": F, "B": B, "C": C, "criterion": criterion,
        "min_samples_leaf": min_samples_leaf, "mwl": min_weight_leaf,
        "n_thr": n_thr_dev, "bin_min": bin_min, "bin_max": bin_max, "splitter": splitter,
        "max_features": max_features,
    }  # fmt: skip
    cntf = cnt.astype(ember.float64)
    nid = ember.where(cntf > 0, 0, -1).astype(ember.int64)
    zero = ember.zeros((), dtype=ember.float64, device=dev)
    L, start, depth = 1, 0, 0
    levels = []
    W_root = None
    while L > 0:
        act = nid >= 0
        nidc = ember.where(act, nid, 0)
        wS = ember.where(act[:, None], S, zero)
        wcnt = ember.where(act, cntf, zero)
        tot = ember.stack(
            [ember.bincount(nidc, weights=wS[:, c], minlength=L) for c in range(C)], axis=1
        )
        ncount = ember.bincount(nidc, weights=wcnt, minlength=L)
        W, imp, value = _node_stats(tot, criterion)
        if W_root is None:
            W_root = W[0]
        is_split = ember.zeros((L,), dtype=ember.bool, device=dev)
        feat = ember.zeros((L,), dtype=ember.int64, device=dev)
        kbin = ember.zeros((L,), dtype=ember.int64, device=dev)
        thr_node = ember.zeros((L,), dtype=ember.float64, device=dev)
        gain = ember.zeros((L,), dtype=ember.float64, device=dev)
        can = (
            (ncount >= min_samples_split)
            & (ncount >= 2 * min_samples_leaf)
            & (imp > 1e-7)
            & (W >= 2 * min_weight_leaf)
        )
        if (max_depth is None or depth < max_depth) and B > 1 and bool(can.any()):
            step = max(1, _HIST_BUDGET // (F * B * C))
            parts = [
                _best_splits(ctx, nidc, wS, wcnt, lo, min(L, lo + step), tot, can, rng)
                for lo in range(0, L, step)
            ]
            feat = ember.concatenate([p[0] for p in parts])
            kbin = ember.concatenate([p[1] for p in parts])
            cost = ember.concatenate([p[2] for p in parts])
            found = ember.concatenate([p[3] for p in parts])
            thr_node = ember.concatenate([p[4] for p in parts])
            gain = ember.where(found, W * imp - cost, 0.0)
            is_split = found & (gain / W_root + 1e-12 >= min_impurity_decrease)
        si = is_split.astype(ember.int64)
        rank = ember.cumsum(si) - 1
        n_split = int(si.sum())  # host sync: the size of the next level
        nxt = start + L
        levels.append(
            {
                "feature": ember.where(is_split, feat, -2),
                "threshold": ember.where(is_split, thr_node, -2.0),
                "children_left": ember.where(is_split, nxt + 2 * rank, -1),
                "children_right": ember.where(is_split, nxt + 2 * rank + 1, -1),
                "impurity": imp,
                "n_node_samples": ncount.astype(ember.int64),
                "weighted_n_node_samples": W,
                "value": value,
                "gain": ember.where(is_split, gain, 0.0),
            }
        )
        if n_split == 0:
            break
        # route the rows: left child 2*rank, right child 2*rank + 1 of the next level
        f_row = ember.take(feat, nidc)
        b_row = ember.take_along_axis(codes, f_row[:, None], axis=1)[:, 0]
        right = (b_row > ember.take(kbin, nidc)).astype(ember.int64)
        new = 2 * ember.take(rank, nidc) + right
        nid = ember.where(act & ember.take(is_split, nidc), new, -1)
        start, L, depth = nxt, 2 * n_split, depth + 1
    arrays = {k: ember.concatenate([lv[k] for lv in levels]) for k in levels[0]}
    n_classes = C if criterion != "squared_error" else 1
    return Tree(arrays, F, n_classes, len(levels) - 1, kind)
