"""MeanShift, estimate_bandwidth and get_bin_seeds (scikit-learn's ``sklearn.cluster``).

All seeds climb at once on X's device: each round is one blocked distance matrix between the
current means and X, a flat-kernel mask ``d <= bandwidth`` and a masked mean (a matmul). A
seed stops when its shift is at most ``1e-3 * bandwidth``, when its window is empty, or after
``max_iter`` shifts, exactly as scikit-learn's per-seed loop; stopped seeds are frozen. Only a
flag per round is read back. The converged modes (one per seed) are then de-duplicated,
ordered by window size and suppressed greedily within ``bandwidth`` (a short host pass over
the distinct modes), and every sample takes its nearest surviving centre on the device.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, ClusterMixin
from ..metrics.pairwise import block_rows, sq_euclidean
from ..utils._param_validation import Interval, validate_parameter_constraints
from ..utils.validation import (
    _host,
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["MeanShift", "estimate_bandwidth", "get_bin_seeds"]


def _direct_sq(A, B):
    """Squared euclidean distances from differences (exact for the radius tests)."""
    n, d = A.shape
    rows = block_rows(B.shape[0], A.device, per_col=d)
    parts = []
    for s in range(0, n, rows):
        diff = A[s : s + rows, None, :] - B[None, :, :]
        parts.append((diff * diff).sum(axis=2))
    if not parts:
        return ember.zeros((0, B.shape[0]), dtype=A.dtype, device=A.device)
    return parts[0] if len(parts) == 1 else ember.concatenate(parts, axis=0)


def estimate_bandwidth(X, *, quantile=0.3, n_samples=None, random_state=0, n_jobs=None):
    """Mean distance from each sample to its ``int(n * quantile)``-th nearest sample
    (itself counted), on X's device."""
    validate_parameter_constraints(
        {
            "quantile": [Interval(Real, 0, 1, closed="both")],
            "n_samples": [Interval(Integral, 1, None, closed="left"), None],
            "random_state": ["random_state"],
            "n_jobs": [Integral, None],
        },
        {
            "quantile": quantile,
            "n_samples": n_samples,
            "random_state": random_state,
            "n_jobs": n_jobs,
        },
        caller_name="estimate_bandwidth",
    )
    Xa = check_array(X, estimator="estimate_bandwidth")
    if n_samples is not None:
        # The subsample is drawn as scikit-learn draws it (NumPy's RandomState).
        rs = random_state
        if isinstance(rs, ember.random.Generator):
            idx = ember.asnumpy(rs.permutation(Xa.shape[0]))
        else:
            if rs is None or isinstance(rs, (Integral, np.integer)):
                rs = np.random.RandomState(rs) if rs is not None else np.random.mtrand._rand
            idx = rs.permutation(Xa.shape[0])
        Xa = ember.take(Xa, to_device(idx[:n_samples], Xa.device), axis=0)
    n = Xa.shape[0]
    k = max(1, int(n * quantile))
    rows = block_rows(n, Xa.device)
    total = 0.0
    for s in range(0, n, rows):
        D = sq_euclidean(Xa[s : s + rows], Xa)
        kth = ember.topk(D, k, dim=1, largest=False, sorted=True).values[:, -1]
        total = total + ember.sqrt(kth).sum()
    return float(total) / n


def get_bin_seeds(X, bin_size, min_bin_freq=1):
    """Seeds at the centres of the grid cells (side ``bin_size``) holding at least
    ``min_bin_freq`` samples."""
    Xa = X if isinstance(X, ember.ndarray) else check_array(X, estimator="get_bin_seeds")
    if bin_size == 0:
        return X
    cells = ember.round(Xa / bin_size)
    uniq, counts = ember.unique(cells, axis=0, return_counts=True)
    seeds = uniq[counts >= min_bin_freq]
    if seeds.shape[0] == Xa.shape[0]:
        warnings.warn(
            f"Binning data failed with provided bin_size={bin_size:f}, using data points as seeds.",
            stacklevel=2,
        )
        return X
    return seeds.astype(ember.float32).astype(ember.float64) * bin_size


class MeanShift(ClusterMixin, BaseEstimator):
    """Mean shift clustering with a flat kernel."""

    _parameter_constraints = {
        "bandwidth": [Interval(Real, 0, None, closed="neither"), None],
        "seeds": ["array-like", None],
        "bin_seeding": ["boolean"],
        "min_bin_freq": [Interval(Integral, 1, None, closed="left")],
        "cluster_all": ["boolean"],
        "n_jobs": [Integral, None],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        bandwidth=None,
        seeds=None,
        bin_seeding=False,
        min_bin_freq=1,
        cluster_all=True,
        n_jobs=None,
        max_iter=300,
    ):
        self.bandwidth = bandwidth
        self.seeds = seeds
        self.bin_seeding = bin_seeding
        self.min_bin_freq = min_bin_freq
        self.cluster_all = cluster_all
        self.n_jobs = n_jobs
        self.max_iter = max_iter

    def _climb(self, X, M, bw):
        """Shift every seed (rows of M) to its mode; (modes, window sizes, iterations)."""
        s = M.shape[0]
        dev = X.device
        bw2 = bw * bw
        thresh2 = (1e-3 * bw) ** 2
        active = ember.ones((s,), dtype=ember.bool, device=dev)
        cnt = ember.zeros((s,), dtype=X.dtype, device=dev)
        iters = ember.zeros((s,), dtype=ember.int64, device=dev)
        for it in range(self.max_iter + 1):
            W = (_direct_sq(M, X) <= bw2).astype(X.dtype)
            c = W.sum(axis=1)
            empty = c == 0
            new = (W @ X) / ember.maximum(c, 1.0)[:, None]
            shift = ((new - M) ** 2).sum(axis=1)
            upd = active & ~empty
            M = ember.where(upd[:, None], new, M)
            cnt = ember.where(active, c, cnt)
            stop = empty | (shift <= thresh2) | (it == self.max_iter)
            iters = ember.where(active & ~stop, iters + 1, iters)
            active = active & ~stop
            if not bool(active.any()):
                break
        return M, cnt, iters

    def fit(self, X, y=None):
        """Cluster X; sets ``cluster_centers_``, ``labels_``, ``n_iter_``."""
        self._validate_params()
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=True)
        bw = self.bandwidth
        if bw is None:
            bw = estimate_bandwidth(Xa, n_jobs=self.n_jobs)
        dev = Xa.device
        if self.seeds is not None:
            S = to_device(_host(self.seeds), dev).astype(Xa.dtype)
            if S.ndim != 2 or S.shape[1] != Xa.shape[1]:
                raise ValueError(
                    f"MeanShift: seeds must have shape (n_seeds, {Xa.shape[1]}), got "
                    f"{tuple(S.shape)}"
                )
        elif self.bin_seeding:
            S = get_bin_seeds(Xa, bw, self.min_bin_freq)
        else:
            S = Xa
        modes, cnt, iters = self._climb(Xa, S.astype(Xa.dtype), float(bw))
        self.n_iter_ = int(iters.max())
        keep = cnt > 0
        if not bool(keep.any()):
            raise ValueError(
                f"MeanShift: No point was within bandwidth={bw:f} of any seed. Try a different "
                "seeding strategy or increase the bandwidth."
            )
        # Distinct modes with their window sizes (host bookkeeping over the modes only).
        mh = ember.asnumpy(modes[keep])
        ch = ember.asnumpy(cnt[keep]).astype(np.int64)
        table = {}
        for row, c in zip(map(tuple, mh), ch, strict=True):
            table[row] = c  # a repeated mode keeps the last window size, as a dict update
        items = sorted(table.items(), key=lambda t: (t[1], t[0]), reverse=True)
        centers = ember.asarray(np.array([t[0] for t in items]), device=dev).astype(Xa.dtype)
        near = ember.asnumpy(_direct_sq(centers, centers) <= bw * bw)
        unique = np.ones(len(items), dtype=bool)
        for i in range(len(items)):
            if unique[i]:
                unique[near[i]] = False
                unique[i] = True
        centers = centers[to_device(unique, dev)]
        D = sq_euclidean(Xa, centers)
        lab = ember.argmin(D, axis=1).astype(ember.int64)
        if not self.cluster_all:
            dmin = ember.sqrt(ember.min(D, axis=1))
            lab = ember.where(dmin <= bw, lab, -1)
        kind = input_kind(X)
        self.cluster_centers_ = to_output(centers, kind)
        self.labels_ = to_output(lab, kind)
        return self

    def predict(self, X):
        """Index of the nearest cluster centre of each sample."""
        check_is_fitted(self, "cluster_centers_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        C = to_device(self.cluster_centers_, Xa.device)
        lab = ember.argmin(sq_euclidean(Xa.astype(C.dtype), C), axis=1).astype(ember.int64)
        return to_output(lab, input_kind(X))
