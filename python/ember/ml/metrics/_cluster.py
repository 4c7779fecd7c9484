"""Clustering metrics: silhouette (blocked distances + per-cluster sums by one matmul)."""

from __future__ import annotations

import numpy as np

import ember

from ..utils._labels import encode_labels
from ..utils.validation import check_array, check_random_state, input_kind, to_output
from .pairwise import block_rows, distances

__all__ = ["silhouette_samples", "silhouette_score"]


def silhouette_samples(X, labels, *, metric="euclidean", **kwds):
    """Silhouette coefficient of every sample: (b - a) / max(a, b)."""
    Xa = check_array(X, estimator="silhouette_samples")
    n = Xa.shape[0]
    lab = labels.to_numpy() if hasattr(labels, "to_numpy") else labels
    if not hasattr(lab, "shape"):
        lab = np.asarray(lab)
    if lab.shape[0] != n:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n}, {lab.shape[0]}]"
        )
    _, li = encode_labels(lab, Xa.device)
    K = int(li.max()) + 1 if n else 0
    if not 2 <= K <= n - 1:
        raise ValueError(
            f"Number of labels is {K}. Valid values are 2 to n_samples - 1 (inclusive)"
        )
    onehot = (li[:, None] == ember.arange(K, device=Xa.device)[None, :]).astype(Xa.dtype)
    counts = onehot.sum(axis=0)
    p = kwds.get("p", 2)
    rows = block_rows(n, Xa.device)
    out = []
    for s in range(0, n, rows):
        D = distances(Xa[s : s + rows], Xa, metric, p)
        sums = D @ onehot  # (b, K) distance totals per cluster
        own = li[s : s + rows]
        own_cnt = ember.take(counts, own)
        a = ember.take_along_axis(sums, own[:, None], axis=1)[:, 0] / ember.maximum(
            own_cnt - 1, 1.0
        )
        mean_other = sums / counts[None, :]
        mask = own[:, None] == ember.arange(K, device=Xa.device)[None, :]
        b = ember.where(mask, float("inf"), mean_other).min(axis=1)
        sil = (b - a) / ember.maximum(ember.maximum(a, b), 1e-300)
        out.append(ember.where(own_cnt > 1, sil, 0.0))
    res = out[0] if len(out) == 1 else ember.concatenate(out)
    return to_output(ember.nan_to_num(res), input_kind(X))


def silhouette_score(X, labels, *, metric="euclidean", sample_size=None, random_state=None, **kwds):
    """Mean silhouette coefficient (optionally over a random subset of ``sample_size``)."""
    if sample_size is not None:
        Xa = check_array(X, estimator="silhouette_score")
        rng = check_random_state(random_state)
        idx = (
            rng.permutation(Xa.shape[0], device=Xa.device)[:sample_size]
            if hasattr(rng, "permutation")
            else None
        )
        lab = labels if hasattr(labels, "shape") else np.asarray(labels)
        if isinstance(lab, np.ndarray):
            lab = lab[ember.asnumpy(idx)]
        else:
            lab = ember.take(lab, idx)
        X = ember.take(Xa, idx, axis=0)
        labels = lab
    s = silhouette_samples(X, labels, metric=metric, **kwds)
    return float(s.mean())
