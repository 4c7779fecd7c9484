"""More of ``sklearn.metrics``: ``log_loss``, precision-recall curve and average precision,
balanced accuracy, Matthews' and Cohen's coefficients, top-k accuracy, MAPE and the clustering
comparisons (adjusted Rand index, (adjusted/normalised) mutual information).

As in ``_scores``: labels given as ember arrays are counted on their device, host labels with
NumPy; confusion and contingency tables (K x K counts) are reduced on the host.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

import ember

from ..exceptions import UndefinedMetricWarning
from ..utils.validation import is_ember, to_device, to_output
from ._scores import (
    _clf_curve,
    _multi,
    _pair,
    _pos_label_vector,
    _reg,
    _weights,
    _wmean,
    confusion_matrix,
)

__all__ = [
    "adjusted_mutual_info_score",
    "adjusted_rand_score",
    "average_precision_score",
    "balanced_accuracy_score",
    "cohen_kappa_score",
    "log_loss",
    "matthews_corrcoef",
    "mean_absolute_percentage_error",
    "mutual_info_score",
    "normalized_mutual_info_score",
    "precision_recall_curve",
    "top_k_accuracy_score",
]


def _np(v):
    return ember.asnumpy(v) if is_ember(v) else np.asarray(v)


def _unique_inverse(v, xp):
    if xp is ember:
        cls, inv = ember.unique(v, return_inverse=True)
        return cls, inv.reshape(-1).astype(ember.int64)
    cls, inv = np.unique(v, return_inverse=True)
    return cls, inv.reshape(-1).astype(np.int64)


# ----------------------------------------------------------------------------- log loss


def log_loss(y_true, y_proba=None, *, normalize=True, sample_weight=None, labels=None):
    """Cross-entropy of predicted probabilities (1-D: the positive class's probability),
    clipped to [eps, 1 - eps] of their dtype."""
    if y_proba is None:
        raise TypeError("log_loss() missing required argument: 'y_proba'")
    a, p, xp = _pair(y_true, y_proba, "log_loss")
    if xp is np and p.dtype.kind in "OUS":
        raise ValueError("log_loss: y_proba must be numeric")
    if p.dtype not in (xp.float32, xp.float64):
        p = p.astype(xp.float64)
    lab = _np(labels) if labels is not None else np.unique(_np(a))
    if len(lab) == 1:
        if labels is None:
            raise ValueError(
                f"y_true contains only one label ({lab[0]}). Please provide the list of all "
                "expected class labels explicitly through the labels argument."
            )
        raise ValueError(
            f"The labels array needs to contain at least two labels for log_loss, got {lab}."
        )
    if p.ndim == 1:
        p = xp.stack([1 - p, p], axis=1)
    if p.shape[1] == 1:
        p = xp.concatenate([1 - p, p], axis=1)
    if p.shape[1] != len(lab):
        if labels is None:
            raise ValueError(
                f"y_true and y_prob contain different number of classes: {len(lab)} vs "
                f"{p.shape[1]}. Please provide the true labels explicitly through the labels "
                f"argument. Classes found in y_true: {lab}"
            )
        raise ValueError(
            f"The number of classes in labels is different from that in y_prob. Classes found "
            f"in labels: {lab}"
        )
    ah = _np(a)
    idx = np.searchsorted(lab, ah)
    idx = np.clip(idx, 0, len(lab) - 1)
    if not np.all(lab[idx] == ah):
        raise ValueError(f"y_true contains values not belonging to the passed labels {lab}.")
    if float(p.min()) < 0 or float(p.max()) > 1:
        raise ValueError("y_prob contains values lower than 0 or greater than 1.")
    sums = p.sum(axis=1)
    eps_sum = math.sqrt(float(np.finfo(_np(p[:1]).dtype).eps))
    if not bool((xp.abs(sums - 1) <= eps_sum).all()):
        warnings.warn(
            "The y_prob values do not sum to one. Make sure to pass probabilities.",
            UserWarning,
            stacklevel=2,
        )
    eps = float(np.finfo(_np(p[:1]).dtype).eps)
    p = xp.clip(p, eps, 1 - eps)
    if xp is ember:
        col = to_device(idx.astype(np.int64), p.device)
        picked = ember.take_along_axis(p, col[:, None], axis=1)[:, 0]
    else:
        picked = p[np.arange(p.shape[0]), idx]
    loss = -xp.log(picked.astype(xp.float64))
    w = _weights(sample_weight, loss.shape[0], xp, loss)
    if w is None:
        return float(loss.mean()) if normalize else float(loss.sum())
    return float((loss * w).sum() / w.sum()) if normalize else float((loss * w).sum())


# ----------------------------------------------------------------- precision-recall curve


def precision_recall_curve(
    y_true, y_score, *, pos_label=None, sample_weight=None, drop_intermediate=False
):
    """(precision, recall, thresholds) of a binary classifier at each distinct score, the
    thresholds increasing; precision ends at 1 and recall at 0."""
    kind = "ember" if is_ember(y_true) or is_ember(y_score) else "numpy"
    a, s, xp = _pair(y_true, y_score, "precision_recall_curve")
    w = _weights(sample_weight, a.shape[0], xp, s)
    y = _pos_label_vector(a, pos_label, xp, "precision_recall_curve")
    fps, tps, thr = _clf_curve(y, s.astype(xp.float64), w, xp)
    if drop_intermediate and tps.shape[0] > 2:
        one = (
            np.ones((1,), dtype=bool)
            if xp is np
            else ember.ones((1,), dtype=ember.bool, device=s.device)
        )
        d = tps[1:] != tps[:-1]
        keep = xp.concatenate([one, d[:-1] | d[1:], one])
        fps, tps, thr = fps[keep], tps[keep], thr[keep]
    ps = tps + fps
    precision = tps / xp.where(ps == 0, 1.0, ps)
    precision = xp.where(ps == 0, 1.0, precision)
    P = float(tps[-1])
    if P == 0:
        warnings.warn(
            "No positive class found in y_true, recall is set to one for all thresholds.",
            UserWarning,
            stacklevel=2,
        )
        recall = xp.ones_like(tps)
    else:
        recall = tps / P
    rev = slice(None, None, -1)
    if xp is ember:
        n = int(tps.shape[0])
        back = ember.arange(n - 1, -1, -1, device=s.device)
        precision, recall, thr = (ember.take(v, back) for v in (precision, recall, thr))
        one = ember.ones((1,), dtype=precision.dtype, device=s.device)
        precision = ember.concatenate([precision, one])
        recall = ember.concatenate([recall, ember.zeros_like(one)])
        return to_output(precision, kind), to_output(recall, kind), to_output(thr, kind)
    precision = np.hstack([precision[rev], 1.0])
    recall = np.hstack([recall[rev], 0.0])
    return precision, recall, thr[rev]


def _binary_ap(y, s, w, xp):
    fps, tps, _ = _clf_curve(y, s, w, xp)
    ps = tps + fps
    precision = xp.where(ps == 0, 1.0, tps / xp.where(ps == 0, 1.0, ps))
    P = float(tps[-1])
    if P == 0:
        warnings.warn(
            "No positive class found in y_true, recall is set to one for all thresholds.",
            UserWarning,
            stacklevel=3,
        )
        return 0.0  # recall is constant, so no step contributes
    recall = tps / P
    zero = recall[:1] * 0
    steps = recall - xp.concatenate([zero, recall[:-1]])
    return float((steps * precision).sum())


def average_precision_score(y_true, y_score, *, average="macro", pos_label=1, sample_weight=None):
    """Area under the precision-recall curve as the step sum over thresholds (binary, or per
    class / label of multiclass and multilabel targets, then averaged)."""
    a, s, xp = _pair(y_true, y_score, "average_precision_score")
    w = _weights(sample_weight, a.shape[0], xp, s)
    s = s.astype(xp.float64)
    if average not in (None, "micro", "macro", "weighted", "samples"):
        raise ValueError("average has to be one of (None, 'micro', 'macro', 'weighted', 'samples')")
    if s.ndim == 1:
        lab = _np(ember.unique(a) if xp is ember else np.unique(a))
        if len(lab) > 2:
            raise ValueError(
                "multiclass format is not supported unless y_score is 2-D (one column per class)"
            )
        if len(lab) == 2 and pos_label not in lab.tolist():
            raise ValueError(
                f"pos_label={pos_label} is not a valid label. It should be one of {lab}"
            )
        y = (a == pos_label).astype(xp.float64)
        return _binary_ap(y, s, w, xp)
    if a.ndim == 2:
        Y = a.astype(xp.float64)
    else:
        lab = ember.unique(a) if xp is ember else np.unique(a)
        if pos_label != 1:
            raise ValueError(
                "Parameter pos_label is fixed to 1 for multiclass y_true. Do not set pos_label or "
                "set pos_label to 1."
            )
        if int(lab.shape[0]) != s.shape[1]:
            raise ValueError(
                f"Number of classes in y_true ({int(lab.shape[0])}) not equal to the number of "
                f"columns in 'y_score' ({s.shape[1]})"
            )
        Y = (a[:, None] == lab[None, :]).astype(xp.float64)
    if average == "micro":
        ww = None if w is None else xp.repeat(w, s.shape[1])
        return _binary_ap(Y.reshape(-1), s.reshape(-1), ww, xp)
    if average == "samples":
        vals = [_binary_ap(Y[i], s[i], None, xp) for i in range(Y.shape[0])]
        return float(np.average(vals, weights=None if w is None else _np(w)))
    vals = np.asarray([_binary_ap(Y[:, k], s[:, k], w, xp) for k in range(s.shape[1])])
    if average is None:
        return vals
    if average == "weighted":
        support = _np((Y if w is None else Y * w[:, None]).sum(axis=0))
        if support.sum() == 0:
            return 0.0
        return float(np.average(vals, weights=support))
    return float(vals.mean())


# --------------------------------------------------------------- confusion-matrix scores


def balanced_accuracy_score(y_true, y_pred, *, sample_weight=None, adjusted=False):
    """Mean recall over the classes present in y_true (chance-adjusted when ``adjusted``)."""
    C = _np(confusion_matrix(y_true, y_pred, sample_weight=sample_weight)).astype(np.float64)
    support = C.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_class = np.diag(C) / support
    if np.any(support == 0):
        warnings.warn("y_pred contains classes not in y_true", UserWarning, stacklevel=2)
        per_class = per_class[support != 0]
    score = float(np.mean(per_class))
    if adjusted:
        chance = 1 / len(per_class)
        score = (score - chance) / (1 - chance)
    return score


def matthews_corrcoef(y_true, y_pred, *, sample_weight=None):
    """Matthews correlation coefficient (its multiclass form, Gorodkin's R_K)."""
    C = _np(confusion_matrix(y_true, y_pred, sample_weight=sample_weight)).astype(np.float64)
    t, p = C.sum(axis=1), C.sum(axis=0)
    n_correct, n = np.trace(C), C.sum()
    cov_ytyp = n_correct * n - np.dot(t, p)
    cov_ypyp = n**2 - np.dot(p, p)
    cov_ytyt = n**2 - np.dot(t, t)
    if cov_ypyp * cov_ytyt == 0:
        return 0.0
    return float(cov_ytyp / np.sqrt(cov_ytyt * cov_ypyp))


def cohen_kappa_score(
    y1, y2, *, labels=None, weights=None, sample_weight=None, replace_undefined_by=np.nan
):
    """Cohen's kappa: agreement beyond chance (optionally linear/quadratic weighted)."""
    C = _np(confusion_matrix(y1, y2, labels=labels, sample_weight=sample_weight))
    C = C.astype(np.float64)
    k = C.shape[0]
    expected = np.outer(C.sum(axis=1), C.sum(axis=0)) / C.sum()
    if weights is None:
        W = 1.0 - np.eye(k)
    elif weights in ("linear", "quadratic"):
        grid = np.arange(k)
        W = np.abs(grid[:, None] - grid[None, :]).astype(np.float64)
        if weights == "quadratic":
            W = W**2
    else:
        raise ValueError(f"Unknown kappa weighting type: {weights!r}")
    den = np.sum(W * expected)
    if den == 0:
        warnings.warn(
            "`y2` and `y1` contain only one label, so Cohen's kappa is undefined; the score is "
            f"set to replace_undefined_by={replace_undefined_by}.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        return replace_undefined_by
    return float(1 - np.sum(W * C) / den)


def top_k_accuracy_score(y_true, y_score, *, k=2, normalize=True, sample_weight=None, labels=None):
    """Fraction of samples whose true label is among the ``k`` highest scores (ties go to
    the later class, as scikit-learn's stable sort)."""
    a, s, xp = _pair(y_true, y_score, "top_k_accuracy_score")
    lab = _np(labels) if labels is not None else np.unique(_np(a))
    if labels is not None and len(np.unique(lab)) != len(lab):
        raise ValueError("Parameter 'labels' must be unique.")
    if labels is not None and not all(lab[i] < lab[i + 1] for i in range(len(lab) - 1)):
        raise ValueError("Parameter 'labels' must be ordered.")
    ah = _np(a)
    pos = np.searchsorted(lab, ah)
    pos = np.clip(pos, 0, len(lab) - 1)
    if not np.all(lab[pos] == ah):
        raise ValueError("'y_true' contains labels not in parameter 'labels'.")
    n_classes = len(lab)
    if s.ndim == 2 and s.shape[1] != n_classes and not (s.shape[1] == 1 and n_classes == 2):
        raise ValueError(
            f"Number of classes in 'y_true' ({n_classes}) not equal to the number of classes in "
            f"'y_score' ({s.shape[1]})."
            if labels is None
            else f"Number of given labels ({n_classes}) not equal to the number of classes in "
            f"'y_score' ({s.shape[1]})."
        )
    if k >= n_classes:
        warnings.warn(
            f"'k' ({k}) greater than or equal to 'n_classes' ({n_classes}) will result in a "
            "perfect score and is therefore meaningless.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    dev = s.device if xp is ember else None
    yi = pos if dev is None else to_device(pos.astype(np.int64), dev)
    if s.ndim == 1 or s.shape[1] == 1:
        s1 = s.reshape(-1)
        if k == 1:
            lo, hi = float(s1.min()), float(s1.max())
            thr = 0.5 if 0 <= lo and hi <= 1 else 0.0
            hits = (s1 > thr).astype(xp.int64) == yi
        else:
            hits = (
                xp.ones(s1.shape, dtype=bool)
                if dev is None
                else ember.ones(s1.shape, dtype=ember.bool, device=dev)
            )
    else:
        order = xp.argsort(s, axis=1, stable=True)[:, -k:] if k > 0 else s[:, :0]
        hits = (order == yi[:, None]).any(axis=1)
    hits = hits.astype(xp.float64)
    w = _weights(sample_weight, hits.shape[0], xp, hits)
    if w is None:
        return float(hits.mean()) if normalize else float(hits.sum())
    return float((hits * w).sum() / w.sum()) if normalize else float((hits * w).sum())


def mean_absolute_percentage_error(
    y_true, y_pred, *, sample_weight=None, multioutput="uniform_average"
):
    """Mean of |y_pred - y_true| / max(|y_true|, eps)."""
    a, b, xp = _reg(y_true, y_pred, "mean_absolute_percentage_error")
    w = _weights(sample_weight, a.shape[0], xp, a)
    eps = float(np.finfo(np.float64).eps)
    err = xp.abs(b - a) / xp.maximum(xp.abs(a), eps)
    return _multi(_wmean(err, w, xp), multioutput, xp)


# ------------------------------------------------------------------ clustering comparisons


def _contingency(labels_true, labels_pred):
    """Contingency table (host float64 counts) of two labelings."""
    a, b, xp = _pair(labels_true, labels_pred, "contingency_matrix")
    for name, v in (("labels_true", a), ("labels_pred", b)):
        if v.ndim != 1:
            raise ValueError(f"{name} must be 1D: shape is {tuple(v.shape)}")
    ca, ia = _unique_inverse(a, xp)
    cb, ib = _unique_inverse(b, xp)
    R, C = int(ca.shape[0]), int(cb.shape[0])
    flat = ia * C + ib
    counts = xp.bincount(flat, minlength=R * C)
    return _np(counts).reshape(R, C).astype(np.float64)


def adjusted_rand_score(labels_true, labels_pred):
    """Rand index adjusted for chance, from the pair-confusion counts."""
    M = _contingency(labels_true, labels_pred)
    n = M.sum()
    n_c, n_k = M.sum(axis=1), M.sum(axis=0)
    sq = (M**2).sum()
    tp = sq - n
    fp = (M @ n_k).sum() - sq
    fn = (M.T @ n_c).sum() - sq
    tn = n**2 - fp - fn - sq
    if fn == 0 and fp == 0:
        return 1.0
    return float(2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn)))


def _entropy_counts(c):
    c = c[c > 0]
    if c.size == 0:
        return 1.0
    p = c / c.sum()
    return float(-(p * np.log(p)).sum())


def _mi(M):
    n = M.sum()
    nz = M > 0
    if not nz.any():
        return 0.0
    a, b = M.sum(axis=1), M.sum(axis=0)
    nij = M[nz]
    outer = np.outer(a, b)[nz]
    mi = (nij / n) * (np.log(nij) + math.log(n) - np.log(outer))
    return float(max(np.sum(mi), 0.0))


def mutual_info_score(labels_true, labels_pred, *, contingency=None):
    """Mutual information (nats) of two labelings."""
    M = (
        _contingency(labels_true, labels_pred)
        if contingency is None
        else _np(contingency).astype(np.float64)
    )
    return _mi(M)


def _expected_mi(M):
    """E[MI] under the hypergeometric model of random labelings with the same marginals:
    every (row, column, n_ij) term evaluated at once with ``ember.special.gammaln``."""
    n = int(M.sum())
    a = M.sum(axis=1).astype(np.int64)
    b = M.sum(axis=0).astype(np.int64)
    ai, bj = np.meshgrid(a, b, indexing="ij")
    ai, bj = ai.ravel(), bj.ravel()
    lo = np.maximum(1, ai + bj - n)
    hi = np.minimum(ai, bj)
    cnt = np.maximum(hi - lo + 1, 0)
    if cnt.sum() == 0:
        return 0.0
    rep = np.repeat(np.arange(ai.size), cnt)
    offs = np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    nij = (lo[rep] + offs).astype(np.float64)
    A, B = ai[rep].astype(np.float64), bj[rep].astype(np.float64)
    dev = ember.get_default_device()
    g = ember.special.gammaln
    nd, Ad, Bd = (ember.asarray(v, device=dev) for v in (nij, A, B))
    N = float(n)
    gln = (
        g(Ad + 1)
        + g(Bd + 1)
        + g(N - Ad + 1)
        + g(N - Bd + 1)
        - math.lgamma(N + 1)
        - g(nd + 1)
        - g(Ad - nd + 1)
        - g(Bd - nd + 1)
        - g(N - Ad - Bd + nd + 1)
    )
    term = (nd / N) * (ember.log(N * nd) - ember.log(Ad * Bd)) * ember.exp(gln)
    return float(term.sum())


def _generalized_mean(u, v, method):
    if method == "min":
        return min(u, v)
    if method == "max":
        return max(u, v)
    if method == "geometric":
        return math.sqrt(u * v)
    if method == "arithmetic":
        return (u + v) / 2
    raise ValueError("'average_method' must be 'min', 'geometric', 'arithmetic', or 'max'")


def normalized_mutual_info_score(labels_true, labels_pred, *, average_method="arithmetic"):
    """Mutual information over a mean of the two entropies (1.0 for identical labelings)."""
    M = _contingency(labels_true, labels_pred)
    R, C = M.shape
    if R == C == 1 or R == C == 0:
        return 1.0
    mi = _mi(M)
    if mi == 0:
        return 0.0
    h_t, h_p = _entropy_counts(M.sum(axis=1)), _entropy_counts(M.sum(axis=0))
    norm = _generalized_mean(h_t, h_p, average_method)
    return float(mi / max(norm, np.finfo(np.float64).eps))


def adjusted_mutual_info_score(labels_true, labels_pred, *, average_method="arithmetic"):
    """Mutual information adjusted for chance: (MI - E[MI]) / (mean(H) - E[MI])."""
    M = _contingency(labels_true, labels_pred)
    R, C = M.shape
    if R == C == 1 or R == C == 0:
        return 1.0
    mi = _mi(M)
    emi = _expected_mi(M)
    h_t, h_p = _entropy_counts(M.sum(axis=1)), _entropy_counts(M.sum(axis=0))
    norm = _generalized_mean(h_t, h_p, average_method)
    den = norm - emi
    eps = float(np.finfo(np.float64).eps)
    den = min(den, -eps) if den < 0 else max(den, eps)
    return float((mi - emi) / den)
