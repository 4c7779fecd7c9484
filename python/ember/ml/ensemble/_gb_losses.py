"""Loss functions of ``ember.ml.ensemble``'s gradient boosting (scikit-learn's ``_loss``).

Each loss works on ember arrays on the data's device: ``y`` is (n,) float64 (regression) or the
(n,) int64 class index (classification), ``raw`` the (n, K) raw predictions (K = 1 except for
multiclass log-loss). Gradients and hessians are unweighted (callers multiply by the sample
weights); ``value`` is the sample-weighted mean loss. Non-smooth losses (absolute error,
quantile, Huber) recompute leaf values after a tree is grown (``leaf_values``), from weighted
percentiles over the rows of each leaf, computed for all leaves at once by one sort.
"""

from __future__ import annotations

import ember

__all__ = ["make_loss", "segment_percentile"]

_EPS64 = 2.220446049250313e-16


def _wmean(v, sw):
    return (v * sw).sum() / sw.sum()


def segment_percentile(v, w, seg, n_seg, q, method):
    """Percentile ``q`` (in [0, 1]) of ``v`` within each segment ``seg`` (rows with seg < 0 are
    left out), all segments at once: (n_seg,) values (0 for an empty segment).

    ``method='inverted_cdf'``: the smallest value whose cumulative weight reaches ``q`` of the
    segment's weight (scikit-learn's ``_weighted_percentile``); ``'linear'``: NumPy's default
    percentile of the unweighted values (``np.median`` for q = 0.5)."""
    dev = v.device
    keep = seg >= 0
    big = ember.asarray(n_seg, dtype=ember.int64, device=dev)
    s = ember.where(keep, seg, big)
    o1 = ember.argsort(v)
    o2 = ember.argsort(ember.take(s, o1))
    idx = ember.take(o1, o2)
    vs, ss = ember.take(v, idx), ember.take(s, idx)
    ws = ember.where(ss < n_seg, ember.take(w, idx), 0.0)
    counts = ember.bincount(ss, minlength=n_seg + 1)[:n_seg]
    starts = ember.cumsum(counts) - counts
    n = int(v.shape[0])
    last = max(n - 1, 0)
    if method == "linear":
        pos = q * (counts - 1).astype(ember.float64)
        lo = ember.floor(pos)
        frac = pos - lo
        i_lo = ember.clip(starts + lo.astype(ember.int64), 0, last)
        i_hi = ember.clip(i_lo + (frac > 0).astype(ember.int64), 0, last)
        a, b = ember.take(vs, i_lo), ember.take(vs, i_hi)
        out = a + frac * (b - a)
    else:
        cw = ember.cumsum(ws)
        before = ember.take(ember.concatenate([ember.zeros((1,), device=dev), cw]), starts)
        tot = ember.bincount(ss, weights=ws, minlength=n_seg + 1)[:n_seg]
        sc = ember.clip(ss, 0, n_seg - 1)
        # cumulative weight inside the segment is nondecreasing: the first row reaching
        # q * total sits after the rows still below it
        below = (cw - ember.take(before, sc)) < ember.take(q * tot, sc)
        below = below & (ss < n_seg)
        nb = ember.bincount(ss, weights=below.astype(ember.float64), minlength=n_seg + 1)
        first = starts + nb[:n_seg].astype(ember.int64)
        first = ember.minimum(first, starts + counts - 1)
        out = ember.take(vs, ember.clip(first, 0, last))
    return ember.where(counts > 0, out, 0.0)


class _Loss:
    """Base of the losses; subclasses define ``baseline``, ``grad_hess`` and ``pointwise``."""

    K = 1
    differentiable = True
    constant_hessian = False
    link = "identity"
    # train_score_ of the classic GradientBoosting* is ``factor`` times the mean loss
    classic_factor = 1.0

    def value(self, y, raw, sw):
        """Sample-weighted mean loss (a 0-d device array)."""
        return _wmean(self.pointwise(y, raw), sw)

    def inverse(self, raw):
        """Predictions (regression) from raw predictions (n, K)."""
        r = raw[:, 0]
        return ember.exp(r) if self.link == "log" else r


class SquaredError(_Loss):
    constant_hessian = True
    classic_factor = 2.0

    def baseline(self, y, sw):
        return _wmean(y, sw).reshape(1)

    def grad_hess(self, y, raw):
        return raw[:, 0] - y, None

    def pointwise(self, y, raw):
        return 0.5 * (y - raw[:, 0]) ** 2


class AbsoluteError(_Loss):
    constant_hessian = True
    differentiable = False

    def __init__(self, weighted):
        self.weighted = weighted

    def _pct(self, v, sw, seg, n_seg, q):
        method = "inverted_cdf" if self.weighted else "linear"
        return segment_percentile(v, sw, seg, n_seg, q, method)

    def baseline(self, y, sw):
        zero = ember.zeros(y.shape, dtype=ember.int64, device=y.device)
        return self._pct(y, sw, zero, 1, 0.5)

    def grad_hess(self, y, raw):
        return ember.where(raw[:, 0] > y, 1.0, -1.0), None

    def pointwise(self, y, raw):
        return ember.abs(y - raw[:, 0])

    def leaf_values(self, y, raw_k, sw, leaf, n_leaves):
        return self._pct(y - raw_k, sw, leaf, n_leaves, 0.5)


class PinballLoss(AbsoluteError):
    def __init__(self, weighted, quantile):
        self.weighted = weighted
        self.q = float(quantile)

    def baseline(self, y, sw):
        zero = ember.zeros(y.shape, dtype=ember.int64, device=y.device)
        return self._pct(y, sw, zero, 1, self.q)

    def grad_hess(self, y, raw):
        return ember.where(y >= raw[:, 0], -self.q, 1.0 - self.q), None

    def pointwise(self, y, raw):
        d = y - raw[:, 0]
        return ember.where(d >= 0, self.q * d, (self.q - 1.0) * d)

    def leaf_values(self, y, raw_k, sw, leaf, n_leaves):
        return self._pct(y - raw_k, sw, leaf, n_leaves, self.q)


class HuberLoss(AbsoluteError):
    """Huber loss with ``delta`` the ``quantile`` of the absolute residuals (set per stage)."""

    def __init__(self, quantile):
        self.weighted = True
        self.q = float(quantile)
        self.delta = 1.0

    def set_delta(self, y, raw, sw):
        a = ember.abs(y - raw[:, 0])
        zero = ember.zeros(y.shape, dtype=ember.int64, device=y.device)
        self.delta = segment_percentile(a, sw, zero, 1, self.q, "inverted_cdf")[0]

    def grad_hess(self, y, raw):
        d = raw[:, 0] - y
        return ember.where(ember.abs(d) <= self.delta, d, self.delta * ember.sign(d)), None

    def pointwise(self, y, raw):
        a = ember.abs(y - raw[:, 0])
        return ember.where(a <= self.delta, 0.5 * a * a, self.delta * (a - 0.5 * self.delta))

    def leaf_values(self, y, raw_k, sw, leaf, n_leaves):
        r = y - raw_k
        med = segment_percentile(r, sw, leaf, n_leaves, 0.5, "inverted_cdf")
        keep = leaf >= 0
        lc = ember.where(keep, leaf, 0)
        diff = r - ember.take(med, lc)
        term = ember.sign(diff) * ember.minimum(ember.abs(diff), self.delta)
        w = ember.where(keep, sw, 0.0)
        num = ember.bincount(lc, weights=w * term, minlength=n_leaves)
        den = ember.bincount(lc, weights=w, minlength=n_leaves)
        return med + num / ember.where(den > 0, den, 1.0)


class PoissonLoss(_Loss):
    link = "log"

    def baseline(self, y, sw):
        m = ember.clip(_wmean(y, sw), 10 * _EPS64, None)
        return ember.log(m).reshape(1)

    def grad_hess(self, y, raw):
        e = ember.exp(raw[:, 0])
        return e - y, e

    def pointwise(self, y, raw):
        return ember.exp(raw[:, 0]) - y * raw[:, 0]


class GammaLoss(_Loss):
    link = "log"

    def baseline(self, y, sw):
        m = ember.clip(_wmean(y, sw), 10 * _EPS64, None)
        return ember.log(m).reshape(1)

    def grad_hess(self, y, raw):
        t = y * ember.exp(-raw[:, 0])
        return 1.0 - t, t

    def pointwise(self, y, raw):
        return raw[:, 0] + y * ember.exp(-raw[:, 0])


def _softplus(r):
    return ember.maximum(r, 0.0) + ember.log1p(ember.exp(-ember.abs(r)))


class BinomialLoss(_Loss):
    link = "logit"
    classic_factor = 2.0

    def baseline(self, y, sw):
        p = ember.clip(_wmean(y.astype(ember.float64), sw), 10 * _EPS64, 1 - 10 * _EPS64)
        return ember.log(p / (1 - p)).reshape(1)

    def grad_hess(self, y, raw):
        p = ember.special.expit(raw[:, 0])
        return p - y.astype(ember.float64), p * (1 - p)

    def pointwise(self, y, raw):
        r = raw[:, 0]
        return _softplus(r) - y.astype(ember.float64) * r

    def proba(self, raw):
        p = ember.special.expit(raw[:, 0])
        return ember.stack([1 - p, p], axis=1)

    def classic_step(self, y, neg_g, sw, leaf, n_leaves):
        prob = y.astype(ember.float64) - neg_g
        return _ratio(neg_g, prob * (1 - prob), sw, leaf, n_leaves)


class MultinomialLoss(_Loss):
    link = "softmax"

    def __init__(self, K):
        self.K = K

    def _onehot(self, y):
        k = ember.arange(self.K, device=y.device)
        return (y[:, None] == k[None, :]).astype(ember.float64)

    def baseline(self, y, sw):
        p = (self._onehot(y) * sw[:, None]).sum(axis=0) / sw.sum()
        lp = ember.log(ember.clip(p, _EPS64, 1 - _EPS64))
        return lp - lp.mean()

    def grad_hess(self, y, raw):
        p = self.proba(raw)
        return p - self._onehot(y), p * (1 - p)

    def pointwise(self, y, raw):
        m = raw.max(axis=1, keepdims=True)
        lse = (ember.log(ember.exp(raw - m).sum(axis=1, keepdims=True)) + m)[:, 0]
        return lse - ember.take_along_axis(raw, y[:, None], axis=1)[:, 0]

    def proba(self, raw):
        e = ember.exp(raw - raw.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def classic_step(self, y_k, neg_g, sw, leaf, n_leaves):
        prob = y_k - neg_g
        K = self.K
        return _ratio(neg_g * ((K - 1) / K), prob * (1 - prob), sw, leaf, n_leaves)


class ExponentialLoss(_Loss):
    link = "half_logit"

    def baseline(self, y, sw):
        p = ember.clip(_wmean(y.astype(ember.float64), sw), 10 * _EPS64, 1 - 10 * _EPS64)
        return (0.5 * ember.log(p / (1 - p))).reshape(1)

    def grad_hess(self, y, raw):
        yf = y.astype(ember.float64)
        r = raw[:, 0]
        a, b = yf * ember.exp(-r), (1 - yf) * ember.exp(r)
        return b - a, a + b

    def pointwise(self, y, raw):
        yf = y.astype(ember.float64)
        r = raw[:, 0]
        return yf * ember.exp(-r) + (1 - yf) * ember.exp(r)

    def proba(self, raw):
        p = ember.special.expit(2.0 * raw[:, 0])
        return ember.stack([1 - p, p], axis=1)

    def classic_step(self, y, neg_g, sw, leaf, n_leaves):
        hess = ember.where(y == 0, -neg_g, neg_g)
        return _ratio(neg_g, hess, sw, leaf, n_leaves)


def _ratio(num, den, sw, leaf, n_leaves):
    """Per-leaf weighted average of ``num`` over that of ``den`` (0 where ``den`` ~ 0)."""
    keep = leaf >= 0
    lc = ember.where(keep, leaf, 0)
    w = ember.where(keep, sw, 0.0)
    a = ember.bincount(lc, weights=w * num, minlength=n_leaves)
    b = ember.bincount(lc, weights=w * den, minlength=n_leaves)
    # the weighted averages share the denominator sum(w), which cancels
    ok = ember.abs(b) >= 1e-150 * ember.maximum(ember.abs(a), 1.0)
    return ember.where(ok & (ember.abs(b) > 0), a / ember.where(b != 0, b, 1.0), 0.0)


def make_loss(name, *, n_classes=None, weighted=False, quantile=None):
    """The loss object of a parameter name (``n_classes`` for classifiers)."""
    if name == "squared_error":
        return SquaredError()
    if name == "absolute_error":
        return AbsoluteError(weighted)
    if name == "quantile":
        return PinballLoss(weighted, quantile)
    if name == "huber":
        return HuberLoss(quantile)
    if name == "poisson":
        return PoissonLoss()
    if name == "gamma":
        return GammaLoss()
    if name == "exponential":
        return ExponentialLoss()
    if name == "log_loss":
        return BinomialLoss() if n_classes <= 2 else MultinomialLoss(n_classes)
    raise ValueError(f"unknown loss {name!r}")  # pragma: no cover (validated by callers)


def check_link_domain(loss, y, who):
    """ValueError for targets outside a loss's domain (Poisson: y >= 0, sum > 0; Gamma:
    y > 0), as scikit-learn."""
    if isinstance(loss, PoissonLoss):
        if bool((y < 0).any()) or not float(y.sum()) > 0:
            raise ValueError(
                f"{who}: loss='poisson' requires y >= 0 and sum(y) > 0 (got min(y)="
                f"{float(y.min())}, sum(y)={float(y.sum())})"
            )
    if isinstance(loss, GammaLoss) and bool((y <= 0).any()):
        raise ValueError(f"{who}: loss='gamma' requires y > 0 (got min(y)={float(y.min())})")
