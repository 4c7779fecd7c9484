"""KernelDensity (scikit-learn's ``sklearn.neighbors.KernelDensity``), exact on the device.

``score_samples`` evaluates the sum over all fitted points exactly: per row block of queries
the distance block, the log kernel of every pair, plus log sample weights, and a logsumexp
along the fitted points. ``atol``/``rtol`` are accepted for compatibility; the exact sum meets
any tolerance (scikit-learn's tree uses them only to prune).
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import ember

from ..base import BaseEstimator
from ..metrics.pairwise import block_rows, distances, sq_euclidean
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

__all__ = ["KernelDensity"]

_KERNELS = {"gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine"}
_METRICS = {"euclidean", "l2", "manhattan", "cityblock", "l1", "chebyshev", "minkowski"}


def _log_vn(n):
    """log of the volume of the unit n-ball."""
    return 0.5 * n * math.log(math.pi) - math.lgamma(0.5 * n + 1)


def _log_sn(n):
    """log of the surface area of the unit n-sphere."""
    return math.log(2 * math.pi) + _log_vn(n - 1)


def _log_kernel_norm(h, d, kernel):
    """log of the normalisation of a kernel of bandwidth h in d dimensions (host scalar)."""
    if kernel == "gaussian":
        factor = 0.5 * d * math.log(2 * math.pi)
    elif kernel == "tophat":
        factor = _log_vn(d)
    elif kernel == "epanechnikov":
        factor = _log_vn(d) + math.log(2.0 / (d + 2.0))
    elif kernel == "exponential":
        factor = _log_sn(d - 1) + math.lgamma(d)
    elif kernel == "linear":
        factor = _log_vn(d) - math.log(d + 1.0)
    else:  # cosine: integral of cos(pi r / 2) r^(d-1) over [0, 1], by repeated parts
        factor, tmp = 0.0, 2.0 / math.pi
        for k in range(1, d + 1, 2):
            factor += tmp
            tmp *= -(d - k) * (d - k - 1) * (2.0 / math.pi) ** 2
        factor = math.log(factor) + _log_sn(d - 1)
    return -factor - d * math.log(h)


def _log_kernel(D, h, kernel, squared):
    """Unnormalised log kernel of the distance block D (squared distances when ``squared``)."""
    if kernel == "gaussian":
        return (-0.5 / (h * h)) * (D if squared else D * D)
    dist = ember.sqrt(D) if squared else D
    if kernel == "exponential":
        return -dist / h
    u = dist / h
    inside = u < 1.0
    neg_inf = float("-inf")
    if kernel == "tophat":
        return ember.where(inside, 0.0, neg_inf).astype(D.dtype)
    if kernel == "epanechnikov":
        val = 1.0 - u * u
    elif kernel == "linear":
        val = 1.0 - u
    else:  # cosine
        val = ember.cos((0.5 * math.pi) * u)
    return ember.where(inside, ember.log(ember.where(inside, val, 1.0)), neg_inf)


def _logsumexp_rows(L):
    """log(sum(exp(L), axis=1)), -inf (without a warning) for rows with no finite entry."""
    m = L.max(axis=1, keepdims=True)
    m = ember.where(ember.isfinite(m), m, 0.0)
    s = ember.exp(L - m).sum(axis=1)
    ok = s > 0
    return ember.where(ok, ember.log(ember.where(ok, s, 1.0)) + m[:, 0], float("-inf"))


class KernelDensity(BaseEstimator):
    """Kernel density estimate of the fitted points (optionally weighted)."""

    _parameter_constraints = {
        "bandwidth": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"scott", "silverman"}),
        ],
        "algorithm": [StrOptions({"kd_tree", "ball_tree", "auto"})],
        "kernel": [StrOptions(_KERNELS)],
        "metric": [StrOptions(_METRICS)],
        "atol": [Interval(Real, 0, None, closed="left")],
        "rtol": [Interval(Real, 0, None, closed="left")],
        "breadth_first": ["boolean"],
        "leaf_size": [Interval(Integral, 1, None, closed="left")],
        "metric_params": [None, dict],
    }

    def __init__(
        self,
        *,
        bandwidth=1.0,
        algorithm="auto",
        kernel="gaussian",
        metric="euclidean",
        atol=0,
        rtol=0,
        breadth_first=True,
        leaf_size=40,
        metric_params=None,
    ):
        self.bandwidth = bandwidth
        self.algorithm = algorithm
        self.kernel = kernel
        self.metric = metric
        self.atol = atol
        self.rtol = rtol
        self.breadth_first = breadth_first
        self.leaf_size = leaf_size
        self.metric_params = metric_params

    def fit(self, X, y=None, sample_weight=None):
        """Store the points (and weights); resolve ``bandwidth_`` ('scott', 'silverman')."""
        self._validate_params()
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=True)
        n, d = Xa.shape
        if self.bandwidth == "scott":
            self.bandwidth_ = n ** (-1.0 / (d + 4))
        elif self.bandwidth == "silverman":
            self.bandwidth_ = (n * (d + 2) / 4.0) ** (-1.0 / (d + 4))
        else:
            self.bandwidth_ = float(self.bandwidth)
        self._weighted = sample_weight is not None
        w = check_sample_weight(sample_weight, Xa, estimator=self)
        if self._weighted and bool((w < 0).any()):
            raise ValueError("KernelDensity.fit: Negative values in data passed to sample_weight")
        self._p = float((self.metric_params or {}).get("p", 2))
        self._X = Xa
        self._w = w
        # log 0 = -inf: zero-weight points drop out of the sum.
        pos = w > 0
        self._log_w = ember.where(pos, ember.log(ember.where(pos, w, 1.0)), float("-inf"))
        self._sum_w = float(w.sum()) if self._weighted else float(n)
        self._fit_kind = input_kind(X)
        return self

    def score_samples(self, X):
        """Log of the density at each row of X (normalised to integrate to 1)."""
        check_is_fitted(self, "_X")
        F = self._X
        Q = check_array(X, estimator=self, device=F.device)
        check_n_features(self, Q, reset=False)
        if Q.dtype != F.dtype:
            Q = Q.astype(F.dtype)
        h, d = self.bandwidth_, F.shape[1]
        log_norm = _log_kernel_norm(h, d, self.kernel) - math.log(self._sum_w)
        euclid = self.metric in ("euclidean", "l2") or (self.metric == "minkowski" and self._p == 2)
        # The gaussian kernel needs only squared distances: the matmul form (its rounding
        # error is absolute, ~eps * |x|^2, harmless in -d^2/2h^2). The other kernels take
        # d itself, where sqrt would amplify that error near d = 0: their euclidean distances
        # are summed from the differences (blocked by rows times features).
        gauss = euclid and self.kernel == "gaussian"
        XX = (F * F).sum(axis=1) if gauss else None
        per_col = 1 if gauss or not euclid else d
        rows = block_rows(F.shape[0], F.device, per_col=per_col)
        parts = []
        for s in range(0, Q.shape[0], rows):
            blk = Q[s : s + rows]
            if gauss:
                D = sq_euclidean(blk, F, YY=XX)
            elif euclid:
                diff = blk[:, None, :] - F[None, :, :]
                D = (diff * diff).sum(axis=2)
            else:
                D = distances(blk, F, self.metric, self._p)
            L = _log_kernel(D, h, self.kernel, euclid) + self._log_w[None, :]
            parts.append(_logsumexp_rows(L) + log_norm)
        if not parts:
            out = ember.zeros((0,), dtype=F.dtype, device=F.device)
        else:
            out = parts[0] if len(parts) == 1 else ember.concatenate(parts)
        return to_output(out, input_kind(X))

    def score(self, X, y=None):
        """Total log-likelihood of X under the model."""
        return float(self.score_samples(X).sum())

    def sample(self, n_samples=1, random_state=None):
        """Draw ``n_samples`` points from the model (gaussian and tophat kernels, as
        scikit-learn; other kernels raise NotImplementedError like it).

        tophat: a direction from a standard normal and a radius h * U**(1/d) with U uniform,
        which is the uniform distribution on the ball (scikit-learn maps the normal's own
        chi-square CDF to U; the distribution is the same)."""
        check_is_fitted(self, "_X")
        if self.kernel not in ("gaussian", "tophat"):
            raise NotImplementedError(
                f"KernelDensity.sample: sampling is implemented for the 'gaussian' and "
                f"'tophat' kernels only, got kernel={self.kernel!r}"
            )
        if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 1:
            raise ValueError(
                f"KernelDensity.sample: n_samples must be a positive integer, got {n_samples!r}"
            )
        F = self._X
        n, d = F.shape
        rng = check_random_state(random_state)
        dev, dt = F.device, F.dtype
        u = rng.uniform(0, 1, size=(n_samples,), device=dev).astype(dt)
        if self._weighted:
            cw = ember.cumsum(self._w)
            i = ember.searchsorted(cw, u * cw[-1])
            i = ember.clip(i, 0, n - 1)
        else:
            i = ember.clip((u * n).astype(ember.int64), 0, n - 1)
        centres = ember.take(F, i, axis=0)
        z = rng.standard_normal(size=(n_samples, d), device=dev).astype(dt)
        if self.kernel == "gaussian":
            out = centres + self.bandwidth_ * z
        else:
            r = ember.sqrt((z * z).sum(axis=1, keepdims=True))
            r = ember.where(r == 0, 1.0, r)
            v = rng.uniform(0, 1, size=(n_samples, 1), device=dev).astype(dt)
            out = centres + z * (self.bandwidth_ * v ** (1.0 / d) / r)
        return to_output(out, self._fit_kind)
