"""More classification and ranking metrics: hamming / zero-one / hinge / Brier losses, Jaccard,
DET curve, (N)DCG, coverage error and label-ranking average precision.

Scores and label indicators are ember arrays on the scores' device (the default device for
host inputs); per-sample rank statistics compare every pair of labels of a row at once
(n x L x L booleans, rows in blocks). Results are Python floats (curves: the inputs' kind).
"""

from __future__ import annotations

import numpy as np

import ember

from ..utils.multiclass import type_of_target
from ..utils.validation import _host, device_of, input_kind, is_ember, to_device
from ._classification import _check_zero_division, _Counts, _divide, _nanaverage
from ._scores import _clf_curve, _pos_label_vector, accuracy_score

__all__ = [
    "brier_score_loss",
    "coverage_error",
    "dcg_score",
    "det_curve",
    "hamming_loss",
    "hinge_loss",
    "jaccard_score",
    "label_ranking_average_precision_score",
    "ndcg_score",
    "zero_one_loss",
]


def _weights(sample_weight, n, dev):
    if sample_weight is None:
        return None
    w = to_device(_host(sample_weight), dev).astype(ember.float64).reshape(-1)
    if w.shape[0] != n:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n}, {w.shape[0]}]"
        )
    return w


def _average(v, w):
    return float(v.mean()) if w is None else float((v * w).sum() / w.sum())


def zero_one_loss(y_true, y_pred, *, normalize=True, sample_weight=None):
    """Fraction (or count / total weight) of misclassified samples."""
    score = accuracy_score(y_true, y_pred, normalize=normalize, sample_weight=sample_weight)
    if normalize:
        return 1.0 - score
    if sample_weight is None:
        n = y_true.shape[0] if hasattr(y_true, "shape") else len(y_true)
        return float(n - score)
    return float(np.sum(_host_np(sample_weight)) - score)


def _host_np(v):
    h = _host(v)
    return ember.asnumpy(h) if is_ember(h) else np.asarray(h)


def hamming_loss(y_true, y_pred, *, sample_weight=None):
    """Fraction of wrong labels (of all label indicators for multilabel targets)."""
    c = _Counts(y_true, y_pred, None, sample_weight, "hamming_loss")
    a, b, w = c.a, c.b, c.w
    xp = np if c.dev is None else ember
    if c.y_type == "multilabel-indicator":
        diff = (a != b).astype(xp.float64)
        per = diff.sum(axis=1)
        total = per.sum() if w is None else (per * w).sum()
        norm = a.shape[0] if w is None else w.sum()
        return float(total / (norm * a.shape[1]))
    miss = (a != b).astype(xp.float64)
    return float(miss.mean()) if w is None else float((miss * w).sum() / w.sum())


def jaccard_score(
    y_true,
    y_pred,
    *,
    labels=None,
    pos_label=1,
    average="binary",
    sample_weight=None,
    zero_division="warn",
):
    """Jaccard index |true & pred| / |true | pred| per label, or averaged."""
    averages = (None, "micro", "macro", "weighted", "samples", "binary")
    if average not in averages:
        raise ValueError(f"average has to be one of {averages[:-1]!r}")
    zd = _check_zero_division(zero_division, "jaccard_score")
    c = _Counts(y_true, y_pred, labels, sample_weight, "jaccard_score")
    if average == "binary":
        if c.y_type != "binary":
            opts = [o for o in averages[:-1] if c.y_type != "multiclass" or o != "samples"]
            raise ValueError(
                f"Target is {c.y_type} but average='binary'. Please choose another average "
                f"setting, one of {opts!r}."
            )
        if pos_label not in c.present.tolist() and len(c.present) >= 2:
            raise ValueError(
                f"pos_label={pos_label} is not a valid label. It should be one of {c.present}"
            )
        c = _Counts(y_true, y_pred, [pos_label], sample_weight, "jaccard_score")
        average = "macro"
    args = (average, {"jaccard"}, zero_division, zd)
    if average == "samples":
        if c.y_type != "multilabel-indicator":
            raise ValueError(
                "Samplewise metrics are not available outside of multilabel classification."
            )
        from ._classification import _multilabel_counts

        (tp, pred, true), xp = _multilabel_counts(c.a, c.b, c.labels, c.w, c.dev, True)
        j = _divide(tp, pred + true - tp, xp, "Jaccard", "true or predicted", *args)
        return _nanaverage(j, c.w, xp)
    tp, pred, true = c.tp, c.pred, c.true
    if average == "micro":
        tp, pred, true = (np.asarray([np.sum(v)]) for v in (tp, pred, true))
    j = _divide(tp, pred + true - tp, np, "Jaccard", "true or predicted", *args)
    if average is None:
        return j
    if average == "weighted":
        if float(np.sum(true)) == 0:
            return 0.0
        return float(np.average(j, weights=true))
    return float(np.mean(j))


def _scores_2d(y_score, who, dev=None):
    h = _host(y_score)
    dev = dev if dev is not None else device_of(h)
    return to_device(h if is_ember(h) else np.asarray(h, dtype=np.float64), dev).astype(
        ember.float64
    )


def hinge_loss(y_true, pred_decision, *, labels=None, sample_weight=None):
    """Average hinge loss (binary: max(0, 1 - y f); multiclass: Crammer-Singer margins)."""
    D = _scores_2d(pred_decision, "hinge_loss")
    dev = D.device
    yh = _host_np(y_true)
    if yh.ndim == 2 and yh.shape[1] == 1:
        yh = yh[:, 0]
    n = yh.shape[0]
    if D.shape[0] != n:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n}, {D.shape[0]}]"
        )
    w = _weights(sample_weight, n, dev)
    uniq = np.unique(_host_np(labels) if labels is not None else yh)
    if uniq.size > 2:
        if D.ndim <= 1:
            raise ValueError(
                "The shape of pred_decision cannot be 1d array with a multiclass target. "
                f"pred_decision shape must be (n_samples, n_classes), that is ({n}, "
                f"{uniq.size}). Got: {tuple(D.shape)}"
            )
        if uniq.size != D.shape[1]:
            if labels is None:
                raise ValueError(
                    "Please include all labels in y_true or pass labels as third argument"
                )
            raise ValueError(
                "The shape of pred_decision is not consistent with the number of classes. "
                "With a multiclass target, pred_decision shape must be (n_samples, n_classes), "
                f"that is ({n}, {uniq.size}). Got: {tuple(D.shape)}"
            )
        pos = np.searchsorted(uniq, yh)
        if np.any(pos >= uniq.size) or np.any(uniq[np.minimum(pos, uniq.size - 1)] != yh):
            raise ValueError("y contains previously unseen labels")
        yi = to_device(pos.astype(np.int64), dev)
        own = ember.take_along_axis(D, yi[:, None], axis=1)[:, 0]
        mask = yi[:, None] == ember.arange(D.shape[1], device=dev)[None, :]
        other = ember.where(mask, -float("inf"), D).max(axis=1)
        margin = own - other
    else:
        if D.ndim == 2:
            if D.shape[1] != 1:
                raise ValueError(
                    f"y should be a 1d array, got an array of shape {tuple(D.shape)} instead."
                )
            D = D[:, 0]
        classes = np.unique(yh)
        sign = np.where(yh == classes[-1], 1.0, -1.0) if classes.size == 2 else -np.ones(n)
        margin = to_device(sign, dev) * D
    losses = ember.maximum(1 - margin, 0.0)
    return _average(losses, w)


def brier_score_loss(
    y_true, y_proba, *, sample_weight=None, pos_label=None, labels=None, scale_by_half="auto"
):
    """Mean squared difference between predicted probabilities and the one-hot outcome
    (halved for binary problems when ``scale_by_half='auto'``)."""
    P = _scores_2d(y_proba, "brier_score_loss")
    dev = P.device
    if P.size and float(P.max()) > 1:
        raise ValueError(f"y_prob contains values greater than 1: {float(P.max())}")
    if P.size and float(P.min()) < 0:
        raise ValueError(f"y_prob contains values lower than 0: {float(P.min())}")
    yh = _host_np(y_true)
    n = yh.shape[0]
    if P.shape[0] != n:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n}, {P.shape[0]}]"
        )
    w = _weights(sample_weight, n, dev)
    if P.ndim == 1 or P.shape[1] == 1:
        P = P.reshape(-1)
        y_true_e = to_device(yh, dev) if yh.dtype.kind not in "OUS" else yh
        kind = type_of_target(yh, "y_true")
        if kind not in ("binary",) and not (kind == "multiclass" and np.unique(yh).size <= 2):
            if np.unique(yh).size > 2:
                raise ValueError(
                    f"The type of the target inferred from y_true is {kind} but should be binary"
                    " according to the shape of y_prob."
                )
        pos = _pos_label_vector(y_true_e, pos_label, ember if is_ember(y_true_e) else np, "brier")
        Y = to_device(_host_np(pos), dev).astype(ember.float64)
        err = ((Y - P) ** 2) * 2
        half = True
    else:
        classes = np.unique(_host_np(labels)) if labels is not None else np.unique(yh)
        if classes.size != P.shape[1]:
            if labels is None:
                raise ValueError(
                    f"y_true and y_prob contain different number of classes: {classes.size} vs "
                    f"{P.shape[1]}. Please provide the true labels explicitly through the labels "
                    f"argument. Classes found in y_true: {classes}"
                )
            raise ValueError(
                "The number of classes in labels is different from that in y_prob. Classes "
                f"found in labels: {classes}"
            )
        yi = to_device(np.searchsorted(classes, yh).astype(np.int64), dev)
        Y = (yi[:, None] == ember.arange(P.shape[1], device=dev)[None, :]).astype(ember.float64)
        err = ((Y - P) ** 2).sum(axis=1)
        half = P.shape[1] < 3
    score = _average(err, w)
    if scale_by_half == "auto":
        scale_by_half = half
    return score * 0.5 if scale_by_half else score


def det_curve(y_true, y_score, pos_label=None, sample_weight=None, drop_intermediate=False):
    """(fpr, fnr, thresholds) of the detection error tradeoff curve."""
    from ._scores import _pair

    a, s, xp = _pair(y_true, y_score, "det_curve")
    s = s.astype(xp.float64)
    yb = _pos_label_vector(a, pos_label, xp, "det_curve")
    w = None if sample_weight is None else _weights(sample_weight, a.shape[0], device_of(s))
    if w is not None and xp is np:
        w = ember.asnumpy(w)
    fps, tps, thr = _clf_curve(yb, s, w, xp)
    fps, tps, thr = (_host_np(v).astype(np.float64) for v in (fps, tps, thr))
    fps = np.concatenate([[0.0], fps])
    tps = np.concatenate([[0.0], tps])
    thr = np.concatenate([[np.inf], thr])
    if drop_intermediate and len(fps) > 2:
        keep = np.concatenate([[True], np.logical_or(np.diff(tps[:-1]), np.diff(tps[1:])), [True]])
        fps, tps, thr = fps[keep], tps[keep], thr[keep]
    if np.unique(_host_np(a)).shape[0] != 2:
        raise ValueError(
            "Only one class is present in y_true. Detection error tradeoff curve is not "
            "defined in that case."
        )
    fns = tps[-1] - tps
    first = np.searchsorted(fps, fps[0], side="right")
    first = first - 1 if first > 0 else None
    last = np.searchsorted(tps, tps[-1]) + 1
    sl = slice(first, last)
    kind = input_kind(y_score)
    out = (fps[sl][::-1] / fps[-1], fns[sl][::-1] / tps[-1], thr[sl][::-1])
    if kind == "ember":
        dev = device_of(y_score)
        return tuple(to_device(np.ascontiguousarray(v), dev) for v in out)
    return tuple(np.ascontiguousarray(v) for v in out)


def _ranking_inputs(y_true, y_score, sample_weight, who, allowed):
    T = _scores_2d(y_true, who)
    S = _scores_2d(y_score, who, T.device)
    kind = type_of_target(_host(y_true), "y_true")
    if kind not in allowed:
        raise ValueError(f"{kind} format is not supported")
    if tuple(T.shape) != tuple(S.shape):
        raise ValueError("y_true and y_score have different shape")
    w = _weights(sample_weight, T.shape[0], T.device)
    return T, S, w


def _row_blocks(n, L):
    return max(1, min(n, (1 << 24) // max(1, L * L)))


def coverage_error(y_true, y_score, *, sample_weight=None):
    """Average depth in the score ranking needed to cover every true label."""
    T, S, w = _ranking_inputs(
        y_true, y_score, sample_weight, "coverage_error", ("multilabel-indicator",)
    )
    rel = T != 0
    lo = ember.where(rel, S, float("inf")).min(axis=1)
    cov = (S >= lo[:, None]).sum(axis=1).astype(ember.float64)
    cov = ember.where(rel.any(axis=1), cov, 0.0)
    return _average(cov, w)


def label_ranking_average_precision_score(y_true, y_score, *, sample_weight=None):
    """Label ranking average precision: per true label, the share of true labels among the
    labels scored at least as high, averaged."""
    T, S, w = _ranking_inputs(
        y_true,
        y_score,
        sample_weight,
        "label_ranking_average_precision_score",
        ("multilabel-indicator", "binary"),
    )
    n, L = T.shape
    rel = (T != 0).astype(ember.float64)
    out = []
    step = _row_blocks(n, L)
    for s0 in range(0, n, step):
        Sb, Rb = S[s0 : s0 + step], rel[s0 : s0 + step]
        ge = (Sb[:, None, :] >= Sb[:, :, None]).astype(ember.float64)  # [i, j, l]: s_l >= s_j
        rank = ge.sum(axis=2)
        hits = (ge * Rb[:, None, :]).sum(axis=2)
        nrel = Rb.sum(axis=1)
        aux = (Rb * hits / rank).sum(axis=1) / ember.maximum(nrel, 1.0)
        out.append(ember.where((nrel == 0) | (nrel == L), 1.0, aux))
    aux = out[0] if len(out) == 1 else ember.concatenate(out)
    return _average(aux, w)


_DCG_TYPES = ("multilabel-indicator", "continuous-multioutput", "multiclass-multioutput")


def _dcg_check(y_true, y_score, sample_weight, who):
    kind = type_of_target(_host(y_true), "y_true")
    if kind not in _DCG_TYPES:
        raise ValueError(f"Only {_DCG_TYPES} formats are supported. Got {kind} instead")
    T = _scores_2d(y_true, who)
    S = _scores_2d(y_score, who, T.device)
    if tuple(T.shape) != tuple(S.shape):
        raise ValueError(
            f"Input y_true and y_score have different shapes: {tuple(T.shape)} vs {tuple(S.shape)}"
        )
    if T.ndim != 2:
        raise ValueError(f"{who}: y_true must be 2-D")
    return T, S, _weights(sample_weight, T.shape[0], T.device)


def _dcg_rows(T, S, k, log_base, ignore_ties):
    n, L = T.shape
    dev = T.device
    disc = 1.0 / (
        ember.log(ember.arange(L, device=dev).astype(ember.float64) + 2) / np.log(log_base)
    )
    if k is not None:
        disc = ember.where(ember.arange(L, device=dev) < k, disc, 0.0)
    if ignore_ties:
        order = ember.argsort(-S, axis=1)
        ranked = ember.take_along_axis(T, order, axis=1)
        return ranked @ disc
    # Tied scores share the mean gain over the positions they occupy together.
    csum = ember.concatenate(
        [ember.zeros((1,), dtype=ember.float64, device=dev), ember.cumsum(disc)]
    )
    out = []
    step = _row_blocks(n, L)
    for s0 in range(0, n, step):
        Sb, Tb = S[s0 : s0 + step], T[s0 : s0 + step]
        gt = (Sb[:, None, :] > Sb[:, :, None]).sum(axis=2)
        eq = (Sb[:, None, :] == Sb[:, :, None]).sum(axis=2)
        span = ember.take(csum, gt + eq) - ember.take(csum, gt)
        out.append((Tb * span / eq.astype(ember.float64)).sum(axis=1))
    return out[0] if len(out) == 1 else ember.concatenate(out)


def dcg_score(y_true, y_score, *, k=None, log_base=2, sample_weight=None, ignore_ties=False):
    """Discounted cumulative gain of the ranking ``y_score`` induces on ``y_true``'s gains."""
    T, S, w = _dcg_check(y_true, y_score, sample_weight, "dcg_score")
    return _average(_dcg_rows(T, S, k, log_base, ignore_ties), w)


def ndcg_score(y_true, y_score, *, k=None, sample_weight=None, ignore_ties=False):
    """DCG normalised by the ideal DCG of each row (0 where no gain is positive)."""
    T, S, w = _dcg_check(y_true, y_score, sample_weight, "ndcg_score")
    if bool((T < 0).any()):
        raise ValueError("ndcg_score should not be used on negative y_true values.")
    if T.shape[1] <= 1:
        raise ValueError(
            "Computing NDCG is only meaningful when there is more than 1 document. Got "
            f"{T.shape[1]} instead."
        )
    gain = _dcg_rows(T, S, k, 2, ignore_ties)
    ideal = _dcg_rows(T, T, k, 2, True)
    zero = ideal == 0
    g = ember.where(zero, 0.0, gain / ember.where(zero, 1.0, ideal))
    return _average(g, w)
