"""Classification and regression metrics (scikit-learn's names, arguments and results).

Labels given as ember arrays are compared on their device; host labels (possibly strings) are
compared with NumPy. Scores come back as Python floats; matrices as the inputs' kind.
"""

from __future__ import annotations

import numpy as np

import ember

from ..utils.validation import is_ember, to_device, to_output

__all__ = [
    "accuracy_score",
    "confusion_matrix",
    "explained_variance_score",
    "f1_score",
    "mean_absolute_error",
    "mean_squared_error",
    "precision_score",
    "r2_score",
    "recall_score",
    "auc",
    "roc_auc_score",
    "roc_curve",
    "root_mean_squared_error",
]


def _host(a):
    from ..utils.validation import _host as _h

    return _h(a) if not isinstance(a, (list, tuple)) else np.asarray(a)


def _pair(y_true, y_pred, who, numeric=False):
    """Both label vectors on one side: the device when either is ember and both numeric."""
    a, b = _host(y_true), _host(y_pred)
    if not is_ember(a):
        a = np.asarray(a)
    if not is_ember(b):
        b = np.asarray(b)
    la = a.shape[0] if a.ndim else 1
    lb = b.shape[0] if b.ndim else 1
    if la != lb:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{la}, {lb}]"
        )
    if is_ember(a) or is_ember(b):
        dev = a.device if is_ember(a) else b.device
        host_str = any(not is_ember(v) and v.dtype.kind in "OUS" for v in (a, b))
        if not host_str:
            a, b = to_device(a, dev), to_device(b, dev)
            return a, b, ember
        a = ember.asnumpy(a) if is_ember(a) else a
        b = ember.asnumpy(b) if is_ember(b) else b
    if numeric and (a.dtype.kind in "OUS" or b.dtype.kind in "OUS"):
        raise ValueError(f"{who}: y_true and y_pred must be numeric")
    return a, b, np


def _weights(sample_weight, n, xp, like):
    if sample_weight is None:
        return None
    w = _host(sample_weight)
    if xp is ember:
        w = to_device(w, like.device).astype(ember.float64)
    else:
        w = (ember.asnumpy(w) if is_ember(w) else np.asarray(w)).astype(np.float64)
    if w.shape[0] != n:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n}, {w.shape[0]}]"
        )
    return w


def accuracy_score(y_true, y_pred, *, normalize=True, sample_weight=None):
    """Fraction (or count) of exactly matching labels."""
    a, b, xp = _pair(y_true, y_pred, "accuracy_score")
    if a.ndim == 2 and b.ndim == 2:
        hit = (a == b).all(axis=1)
    elif a.ndim != b.ndim:
        raise ValueError(
            f"accuracy_score: Classification metrics can't handle a mix of {a.ndim}-D and "
            f"{b.ndim}-D targets"
        )
    else:
        hit = a == b
    w = _weights(sample_weight, hit.shape[0], xp, a)
    hit = hit.astype(xp.float64)
    if w is None:
        return float(hit.mean()) if normalize else float(hit.sum())
    return float((hit * w).sum() / w.sum()) if normalize else float((hit * w).sum())


def _labels_union(a, b, labels, xp):
    if labels is not None:
        lab = _host(labels)
        return to_device(lab, a.device) if xp is ember else np.asarray(lab)
    if xp is ember:
        return ember.unique(ember.concatenate([a.reshape(-1), b.reshape(-1)]))
    return np.unique(np.concatenate([a.reshape(-1), b.reshape(-1)]))


def _index(v, labels, xp):
    """Positions of v in the sorted label set (or -1 when absent)."""
    if xp is ember:
        order = ember.argsort(labels)
        s = ember.take(labels, order)
        pos = ember.clip(ember.searchsorted(s, v), 0, s.shape[0] - 1)
        ok = ember.take(s, pos) == v
        return ember.where(ok, ember.take(order, pos), -1)
    order = np.argsort(labels, kind="stable")
    s = labels[order]
    pos = np.clip(np.searchsorted(s, v), 0, len(s) - 1)
    return np.where(s[pos] == v, order[pos], -1)


def confusion_matrix(y_true, y_pred, *, labels=None, sample_weight=None, normalize=None):
    """C[i, j] = (weighted) count of samples of true class i predicted as class j."""
    if normalize not in (None, "true", "pred", "all"):
        raise ValueError(
            f"confusion_matrix: normalize must be one of {{'true', 'pred', 'all', None}}, "
            f"got {normalize!r}"
        )
    kind = "ember" if is_ember(y_true) or is_ember(y_pred) else "numpy"
    a, b, xp = _pair(y_true, y_pred, "confusion_matrix")
    lab = _labels_union(a, b, labels, xp)
    K = int(lab.shape[0])
    if K == 0:
        raise ValueError("confusion_matrix: 'labels' should contains at least one label.")
    ia, ib = _index(a, lab, xp), _index(b, lab, xp)
    w = _weights(sample_weight, a.shape[0], xp, a)
    keep = (ia >= 0) & (ib >= 0)
    flat = ia * K + ib
    if xp is ember:
        wv = keep.astype(ember.float64) if w is None else w * keep.astype(ember.float64)
        flat = ember.where(keep, flat, 0)
        cm = ember.bincount(flat, weights=wv, minlength=K * K).reshape(K, K)
    else:
        wv = None if w is None else w[keep]
        cm = np.bincount(flat[keep], weights=wv, minlength=K * K).reshape(K, K)
    if normalize is None:
        if w is None:
            cm = cm.astype(xp.int64)
        return to_output(cm, kind) if xp is ember else cm
    cm = cm.astype(xp.float64)
    if normalize == "true":
        s = cm.sum(axis=1, keepdims=True)
    elif normalize == "pred":
        s = cm.sum(axis=0, keepdims=True)
    else:
        s = cm.sum()
    cm = cm / xp.where(s == 0, 1.0, s)
    return to_output(cm, kind) if xp is ember else cm


def _prf(y_true, y_pred, pos_label, average, sample_weight, labels):
    a, b, xp = _pair(y_true, y_pred, "precision_recall_fscore")
    lab = _labels_union(a, b, labels, xp)
    cm = confusion_matrix(a, b, labels=lab, sample_weight=sample_weight)
    # The counts are computed where the labels live; the K x K matrix and the K labels are then
    # read back (explicit host copies of n_classes-sized results).
    cm = (ember.asnumpy(cm) if is_ember(cm) else np.asarray(cm)).astype(np.float64)
    lab = ember.asnumpy(lab) if xp is ember else lab
    tp = np.diag(cm)
    pred = cm.sum(axis=0)
    true = cm.sum(axis=1)
    if average == "binary":
        if len(lab) > 2:
            raise ValueError(
                "Target is multiclass but average='binary'. Please choose another average "
                "setting, one of [None, 'micro', 'macro', 'weighted']."
            )
        pos = np.nonzero(lab == pos_label)[0]
        if pos.size == 0:
            if len(lab) < 2:
                return 0.0, 0.0
            raise ValueError(
                f"pos_label={pos_label!r} is not a valid label. It should be one of {lab.tolist()}"
            )
        i = pos[0]
        return (tp[i] / pred[i] if pred[i] else 0.0), (tp[i] / true[i] if true[i] else 0.0)
    if average == "micro":
        return tp.sum() / max(pred.sum(), 1e-300), tp.sum() / max(true.sum(), 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(pred > 0, tp / np.where(pred > 0, pred, 1), 0.0)
        r = np.where(true > 0, tp / np.where(true > 0, true, 1), 0.0)
    return p, r, true


def _avg(v, true, average):
    if average is None:
        return v
    if average == "macro":
        return float(np.mean(v))
    if average == "weighted":
        return float(np.sum(v * true) / true.sum())
    raise ValueError(
        f"average has to be one of (None, 'micro', 'macro', 'weighted', 'binary'), got {average!r}"
    )


def precision_score(
    y_true,
    y_pred,
    *,
    labels=None,
    pos_label=1,
    average="binary",
    sample_weight=None,
    zero_division="warn",
):
    """tp / (tp + fp), per class or averaged."""
    out = _prf(y_true, y_pred, pos_label, average, sample_weight, labels)
    if average in ("binary", "micro"):
        return float(out[0])
    return _avg(out[0], out[2], average)


def recall_score(
    y_true,
    y_pred,
    *,
    labels=None,
    pos_label=1,
    average="binary",
    sample_weight=None,
    zero_division="warn",
):
    """tp / (tp + fn), per class or averaged."""
    out = _prf(y_true, y_pred, pos_label, average, sample_weight, labels)
    if average in ("binary", "micro"):
        return float(out[1])
    return _avg(out[1], out[2], average)


def f1_score(
    y_true,
    y_pred,
    *,
    labels=None,
    pos_label=1,
    average="binary",
    sample_weight=None,
    zero_division="warn",
):
    """Harmonic mean of precision and recall, per class or averaged."""
    out = _prf(y_true, y_pred, pos_label, average, sample_weight, labels)
    p, r = np.asarray(out[0], dtype=np.float64), np.asarray(out[1], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1), 0.0)
    if average in ("binary", "micro"):
        return float(f)
    return _avg(f, out[2], average)


def _reg(y_true, y_pred, who):
    a, b, xp = _pair(y_true, y_pred, who, numeric=True)
    a = a.astype(xp.float64)
    b = b.astype(xp.float64)
    if a.ndim == 1 and b.ndim == 2 and b.shape[1] == 1:
        b = b[:, 0]
    if a.ndim == 2 and a.shape[1] == 1 and b.ndim == 1:
        a = a[:, 0]
    if a.shape != b.shape:
        raise ValueError(
            f"{who}: y_true and y_pred have different number of output "
            f"({a.shape[1:] or 1}!={b.shape[1:] or 1})"
        )
    return a, b, xp


def _wmean(v, w, xp):
    if w is None:
        return v.mean(axis=0)
    ww = w if v.ndim == 1 else w[:, None]
    return (v * ww).sum(axis=0) / w.sum()


def _multi(vals, multioutput, xp, weights=None):
    if vals.ndim == 0:
        return float(vals)
    if isinstance(multioutput, str):
        if multioutput == "raw_values":
            return to_output(vals, "ember") if xp is ember else vals
        if multioutput == "uniform_average":
            return float(vals.mean())
        if multioutput == "variance_weighted" and weights is not None:
            return float((vals * weights).sum() / weights.sum())
        raise ValueError(
            f"Allowed 'multioutput' string values are ('raw_values', 'uniform_average', "
            f"'variance_weighted'). You provided multioutput={multioutput!r}."
        )
    mw = np.asarray(multioutput, dtype=np.float64)
    v = ember.asnumpy(vals) if xp is ember else vals
    return float(np.average(v, weights=mw))


def mean_squared_error(y_true, y_pred, *, sample_weight=None, multioutput="uniform_average"):
    """Mean of squared errors."""
    a, b, xp = _reg(y_true, y_pred, "mean_squared_error")
    w = _weights(sample_weight, a.shape[0], xp, a)
    return _multi(_wmean((a - b) ** 2, w, xp), multioutput, xp)


def root_mean_squared_error(y_true, y_pred, *, sample_weight=None, multioutput="uniform_average"):
    """Square root of the mean squared error (per output, then averaged)."""
    a, b, xp = _reg(y_true, y_pred, "root_mean_squared_error")
    w = _weights(sample_weight, a.shape[0], xp, a)
    return _multi(xp.sqrt(_wmean((a - b) ** 2, w, xp)), multioutput, xp)


def _log1p_pair(y_true, y_pred, who, name):
    a, b, xp = _reg(y_true, y_pred, who)
    if bool(xp.any(a <= -1)) or bool(xp.any(b <= -1)):  # host reads: scikit-learn's check
        raise ValueError(
            f"{name} cannot be used when targets contain values less than or equal to -1."
        )
    return xp.log1p(a), xp.log1p(b), xp


def mean_squared_log_error(y_true, y_pred, *, sample_weight=None, multioutput="uniform_average"):
    """Mean squared error of log(1 + y)."""
    a, b, xp = _log1p_pair(
        y_true, y_pred, "mean_squared_log_error", "Mean Squared Logarithmic Error"
    )
    w = _weights(sample_weight, a.shape[0], xp, a)
    return _multi(_wmean((a - b) ** 2, w, xp), multioutput, xp)


def root_mean_squared_log_error(
    y_true, y_pred, *, sample_weight=None, multioutput="uniform_average"
):
    """Square root of the mean squared error of log(1 + y) (per output, then averaged)."""
    a, b, xp = _log1p_pair(
        y_true, y_pred, "root_mean_squared_log_error", "Root Mean Squared Logarithmic Error"
    )
    w = _weights(sample_weight, a.shape[0], xp, a)
    return _multi(xp.sqrt(_wmean((a - b) ** 2, w, xp)), multioutput, xp)


def mean_absolute_error(y_true, y_pred, *, sample_weight=None, multioutput="uniform_average"):
    """Mean of absolute errors."""
    a, b, xp = _reg(y_true, y_pred, "mean_absolute_error")
    w = _weights(sample_weight, a.shape[0], xp, a)
    return _multi(_wmean(xp.abs(a - b), w, xp), multioutput, xp)


def r2_score(
    y_true, y_pred, *, sample_weight=None, multioutput="uniform_average", force_finite=True
):
    """Coefficient of determination: 1 - SS_res / SS_tot."""
    a, b, xp = _reg(y_true, y_pred, "r2_score")
    if a.shape[0] < 2:
        import warnings

        from ..exceptions import UndefinedMetricWarning

        warnings.warn(
            "R^2 score is not well-defined with less than two samples.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        return float("nan")
    w = _weights(sample_weight, a.shape[0], xp, a)
    ww = 1.0 if w is None else (w if a.ndim == 1 else w[:, None])
    num = (ww * (a - b) ** 2).sum(axis=0)
    mean = _wmean(a, w, xp)
    den = (ww * (a - mean) ** 2).sum(axis=0)
    ok_den = den != 0
    ok_num = num != 0
    score = xp.where(ok_den, 1.0 - num / xp.where(ok_den, den, 1.0), 0.0)
    if force_finite:
        score = xp.where(~ok_den & ~ok_num, 1.0, score)
        score = xp.where(~ok_den & ok_num, 0.0, score)
    else:
        score = xp.where(~ok_den, xp.where(ok_num, -np.inf, np.nan), score)
    return _multi(score, multioutput, xp, weights=den)


def explained_variance_score(
    y_true, y_pred, *, sample_weight=None, multioutput="uniform_average", force_finite=True
):
    """1 - Var(y - y_pred) / Var(y)."""
    a, b, xp = _reg(y_true, y_pred, "explained_variance_score")
    w = _weights(sample_weight, a.shape[0], xp, a)
    ww = 1.0 if w is None else (w if a.ndim == 1 else w[:, None])
    diff = a - b
    md = _wmean(diff, w, xp)
    num = _wmean((diff - md) ** 2, w, xp)
    ma = _wmean(a, w, xp)
    den = _wmean((a - ma) ** 2, w, xp)
    del ww
    ok_den = den != 0
    score = xp.where(ok_den, 1.0 - num / xp.where(ok_den, den, 1.0), 0.0)
    if force_finite:
        score = xp.where(~ok_den & (num == 0), 1.0, score)
    return _multi(score, multioutput, xp, weights=den)


def _clf_curve(y, s, w, xp):
    """(fps, tps, thresholds) at each distinct score, highest first (scikit-learn's
    ``_binary_clf_curve``): a stable descending sort and cumulative sums."""
    order = xp.argsort(-s, stable=True) if xp is np else ember.argsort(-s, stable=True)
    s = s[order]
    y = y[order]
    w = xp.ones_like(s) if w is None else w[order]
    tps = xp.cumsum(y * w)
    fps = xp.cumsum((1 - y) * w)
    one = (
        np.ones((1,), dtype=bool)
        if xp is np
        else ember.ones((1,), dtype=ember.bool, device=s.device)
    )
    last = xp.concatenate([s[1:] != s[:-1], one])
    return fps[last], tps[last], s[last]


def _prepend_zero(v, xp):
    zero = (
        np.zeros((1,), dtype=v.dtype)
        if xp is np
        else ember.zeros((1,), dtype=v.dtype, device=v.device)
    )
    return xp.concatenate([zero, v])


def _binary_auc(y, s, w, xp, max_fpr=None):
    """Area under the ROC curve of scores s for 0/1 labels y (ties handled as sklearn); with
    ``max_fpr``, the McClish-standardised partial area."""
    fps, tps, _ = _clf_curve(y, s, w, xp)
    tps = _prepend_zero(tps, xp)
    fps = _prepend_zero(fps, xp)
    P, N = float(tps[-1]), float(fps[-1])
    if P == 0 or N == 0:
        raise ValueError(
            "Only one class is present in y_true. ROC AUC score is not defined in that case."
        )
    if max_fpr is None or max_fpr == 1:
        area = float(((fps[1:] - fps[:-1]) * (tps[1:] + tps[:-1])).sum()) / 2.0
        return area / (P * N)
    # Partial area: the curve (one point per distinct score) is read back to the host.
    fpr = (ember.asnumpy(fps) if xp is ember else fps) / N
    tpr = (ember.asnumpy(tps) if xp is ember else tps) / P
    stop = int(np.searchsorted(fpr, max_fpr, "right"))
    x_i = [fpr[stop - 1], fpr[stop]]
    y_i = [tpr[stop - 1], tpr[stop]]
    tpr = np.append(tpr[:stop], np.interp(max_fpr, x_i, y_i))
    fpr = np.append(fpr[:stop], max_fpr)
    part = float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1])) / 2.0)
    lo, hi = 0.5 * max_fpr**2, max_fpr
    return 0.5 * (1 + (part - lo) / (hi - lo))


def _pos_label_vector(a, pos_label, xp, who):
    lab = ember.unique(a) if xp is ember else np.unique(a)
    if pos_label is None:
        vals = (ember.asnumpy(lab) if xp is ember else lab).tolist()
        if lab.shape[0] > 2 or not set(vals) <= {-1, 0, 1}:
            raise ValueError(
                f"{who}: y_true takes value in {vals!r} and pos_label is not specified: either "
                "make y_true take value in {0, 1} or {-1, 1} or pass pos_label explicitly."
            )
        pos_label = 1
    return (a == pos_label).astype(xp.float64)


def roc_curve(y_true, y_score, *, pos_label=None, sample_weight=None, drop_intermediate=True):
    """(fpr, tpr, thresholds) of a binary classifier's scores (scikit-learn's conventions:
    thresholds start at inf, collinear points dropped when ``drop_intermediate``)."""
    kind = "ember" if is_ember(y_true) or is_ember(y_score) else "numpy"
    a, s, xp = _pair(y_true, y_score, "roc_curve")
    w = _weights(sample_weight, a.shape[0], xp, s)
    y = _pos_label_vector(a, pos_label, xp, "roc_curve")
    fps, tps, thr = _clf_curve(y, s.astype(xp.float64), w, xp)
    if drop_intermediate and fps.shape[0] > 2:
        keep = xp.diff(fps, n=2) != 0
        keep = keep | (xp.diff(tps, n=2) != 0)
        one = (
            np.ones((1,), dtype=bool)
            if xp is np
            else ember.ones((1,), dtype=ember.bool, device=s.device)
        )
        keep = xp.concatenate([one, keep, one])
        fps, tps, thr = fps[keep], tps[keep], thr[keep]
    fps, tps = _prepend_zero(fps, xp), _prepend_zero(tps, xp)
    inf = np.full((1,), np.inf) if xp is np else ember.full((1,), np.inf, device=s.device)
    thr = xp.concatenate([inf, thr.astype(xp.float64)])
    N, P = float(fps[-1]), float(tps[-1])
    import warnings

    from ..exceptions import UndefinedMetricWarning

    if N <= 0 or P <= 0:
        warnings.warn(
            "No negative samples in y_true, false positive value should be meaningless"
            if N <= 0
            else "No positive samples in y_true, true positive value should be meaningless",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    fpr = fps / N if N > 0 else fps * np.nan
    tpr = tps / P if P > 0 else tps * np.nan
    out = (fpr, tpr, thr)
    return tuple(to_output(v, kind) for v in out) if xp is ember else out


def auc(x, y):
    """Area under a curve by the trapezoidal rule (x monotonic)."""
    xa = ember.asnumpy(x) if is_ember(x) else np.asarray(x, dtype=np.float64)
    ya = ember.asnumpy(y) if is_ember(y) else np.asarray(y, dtype=np.float64)
    if xa.shape[0] < 2:
        raise ValueError(
            f"At least 2 points are needed to compute area under curve, but x.shape = {xa.shape[0]}"
        )
    dx = np.diff(xa)
    direction = 1
    if np.any(dx < 0):
        if np.all(dx <= 0):
            direction = -1
        else:
            raise ValueError(f"x is neither increasing nor decreasing : {xa}.")
    return float(direction * np.trapezoid(ya, xa))


def roc_auc_score(
    y_true,
    y_score,
    *,
    average="macro",
    sample_weight=None,
    max_fpr=None,
    multi_class="raise",
    labels=None,
):
    """Area under the ROC curve: binary, or multiclass one-vs-rest (``multi_class='ovr'``)."""
    a, s, xp = _pair(y_true, y_score, "roc_auc_score")
    w = _weights(sample_weight, a.shape[0], xp, s)
    s = s.astype(xp.float64)
    if max_fpr is not None and not 0 < max_fpr <= 1:
        raise ValueError(f"Expected max_fpr in range (0, 1], got: {max_fpr}")
    lab = _labels_union(a, a, labels, xp)
    if s.ndim == 1:
        if lab.shape[0] > 2:
            raise ValueError("multi_class must be in ('ovo', 'ovr') for multiclass y_score")
        if lab.shape[0] < 2:
            raise ValueError(
                "Only one class is present in y_true. ROC AUC score is not defined in that case."
            )
        yb = (a == lab[1]).astype(xp.float64)
        return _binary_auc(yb, s, w, xp, max_fpr)
    K = s.shape[1]
    if multi_class not in ("ovr", "ovo"):
        raise ValueError(
            f"multi_class must be in ('ovo', 'ovr') for a multiclass y_score, got {multi_class!r}"
        )
    if max_fpr is not None and max_fpr != 1:
        raise ValueError(
            "Partial AUC computation not available in multiclass setting, 'max_fpr' must be "
            f"set to `None`, received `max_fpr={max_fpr}` instead"
        )
    if int(lab.shape[0]) != K:
        raise ValueError(
            "Number of classes in y_true not equal to the number of columns in 'y_score'"
        )
    if multi_class == "ovo":
        if average not in ("macro", "weighted"):
            raise ValueError("average must be one of ('macro', 'weighted') for multiclass 'ovo'")
        if sample_weight is not None:
            raise ValueError("roc_auc_score: sample_weight is not supported with 'ovo'")
        scores, prev = [], []
        for i in range(K):
            for j in range(i + 1, K):
                mi, mj = a == lab[i], a == lab[j]
                both = mi | mj
                si, sj = s[:, i][both], s[:, j][both]
                yi = mi[both].astype(xp.float64)
                ai = _binary_auc(yi, si, None, xp)
                aj = _binary_auc(1.0 - yi, sj, None, xp)
                scores.append((ai + aj) / 2.0)
                prev.append(float(both.astype(xp.float64).mean()))
        return float(np.average(scores, weights=prev if average == "weighted" else None))
    aucs, prev = [], []
    for k in range(K):
        yb = (a == lab[k]).astype(xp.float64)
        aucs.append(_binary_auc(yb, s[:, k], w, xp))
        prev.append(float(yb.sum() if w is None else (yb * w).sum()))
    aucs = np.asarray(aucs)
    if average == "weighted":
        return float(np.average(aucs, weights=prev))
    if average == "macro":
        return float(aucs.mean())
    if average is None:
        return aucs
    raise ValueError(f"roc_auc_score: average must be 'macro', 'weighted' or None, got {average!r}")
