"""More clustering metrics: homogeneity / completeness / V-measure, Fowlkes-Mallows (from the
K x K contingency table, host bookkeeping as the other label-pair metrics), Davies-Bouldin and
Calinski-Harabasz (cluster centres as one-hot matmuls on X's device)."""

from __future__ import annotations

import math

import numpy as np

import ember

from ..utils._labels import encode_labels
from ..utils.validation import check_array
from ._more import _contingency, _entropy_counts, _mi

__all__ = [
    "calinski_harabasz_score",
    "completeness_score",
    "davies_bouldin_score",
    "fowlkes_mallows_score",
    "homogeneity_completeness_v_measure",
    "homogeneity_score",
    "v_measure_score",
]


def homogeneity_completeness_v_measure(labels_true, labels_pred, *, beta=1.0):
    """(homogeneity, completeness, V-measure) of a clustering against the true classes."""
    M = _contingency(labels_true, labels_pred)
    if M.sum() == 0:
        return 1.0, 1.0, 1.0
    h_true = _entropy_counts(M.sum(axis=1))
    h_pred = _entropy_counts(M.sum(axis=0))
    mi = _mi(M)
    hom = mi / h_true if h_true else 1.0
    com = mi / h_pred if h_pred else 1.0
    if hom + com == 0.0:
        v = 0.0
    else:
        v = (1 + beta) * hom * com / (beta * hom + com)
    return float(hom), float(com), float(v)


def homogeneity_score(labels_true, labels_pred):
    """1.0 when every cluster holds members of a single class."""
    return homogeneity_completeness_v_measure(labels_true, labels_pred)[0]


def completeness_score(labels_true, labels_pred):
    """1.0 when all members of a class fall in the same cluster."""
    return homogeneity_completeness_v_measure(labels_true, labels_pred)[1]


def v_measure_score(labels_true, labels_pred, *, beta=1.0):
    """Weighted harmonic mean of homogeneity and completeness."""
    return homogeneity_completeness_v_measure(labels_true, labels_pred, beta=beta)[2]


def fowlkes_mallows_score(labels_true, labels_pred):
    """Geometric mean of pairwise precision and recall."""
    M = _contingency(labels_true, labels_pred)
    n = M.sum()
    tk = float((M**2).sum() - n)
    pk = float((M.sum(axis=0) ** 2).sum() - n)
    qk = float((M.sum(axis=1) ** 2).sum() - n)
    return math.sqrt(tk / pk) * math.sqrt(tk / qk) if tk != 0.0 else 0.0


def _clusters(X, labels, who):
    Xa = check_array(X, estimator=who)
    n = int(Xa.shape[0])
    lab = labels.to_numpy() if hasattr(labels, "to_numpy") else labels
    if not hasattr(lab, "shape"):
        lab = np.asarray(lab)
    if lab.shape[0] != n:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n}, {lab.shape[0]}]"
        )
    _, li = encode_labels(lab, Xa.device)
    K = int(li.max()) + 1 if n else 0
    if not 1 < K < n:
        raise ValueError(
            f"Number of labels is {K}. Valid values are 2 to n_samples - 1 (inclusive)"
        )
    Xf = Xa.astype(ember.float64)
    onehot = (li[:, None] == ember.arange(K, device=Xa.device)[None, :]).astype(ember.float64)
    counts = onehot.sum(axis=0)
    centres = (onehot.T @ Xf) / counts[:, None]
    return Xf, li, onehot, counts, centres, n, K


def davies_bouldin_score(X, labels):
    """Mean over clusters of the worst (s_i + s_j) / d(c_i, c_j) ratio."""
    Xf, li, onehot, counts, centres, n, K = _clusters(X, labels, "davies_bouldin_score")
    own = ember.take(centres, li, axis=0)
    dist = ember.sqrt(((Xf - own) ** 2).sum(axis=1))
    intra = (onehot.T @ dist[:, None])[:, 0] / counts
    diff = centres[:, None, :] - centres[None, :, :]
    cdist = ember.sqrt((diff**2).sum(axis=2))
    if bool(ember.all(ember.abs(intra) <= 1e-8)) or bool(ember.all(ember.abs(cdist) <= 1e-8)):
        return 0.0
    cdist = ember.where(cdist == 0, float("inf"), cdist)
    combined = intra[:, None] + intra[None, :]
    return float((combined / cdist).max(axis=1).mean())


def calinski_harabasz_score(X, labels):
    """Between-cluster over within-cluster dispersion, scaled by (n - k) / (k - 1)."""
    Xf, li, onehot, counts, centres, n, K = _clusters(X, labels, "calinski_harabasz_score")
    mean = Xf.mean(axis=0)
    extra = float((counts * ((centres - mean[None, :]) ** 2).sum(axis=1)).sum())
    own = ember.take(centres, li, axis=0)
    intra = float(((Xf - own) ** 2).sum())
    return 1.0 if intra == 0.0 else extra * (n - K) / (intra * (K - 1.0))
