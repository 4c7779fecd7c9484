"""``classification_report`` and ``precision_recall_fscore_support`` (scikit-learn's
``sklearn.metrics``), with scikit-learn's text layout, averages and ``zero_division`` rules.

The per-label counts (true positives, predicted and true totals, weighted when asked) are
``bincount``s where the labels live: on the device for ember labels, with NumPy for host labels
(which may be strings). Only the K per-label counts (and the three averaged scores of the
per-sample 'samples' average) come back to the host, where the report is formatted.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

import ember

from ..exceptions import InvalidParameterError, UndefinedMetricWarning, sklearn_compatible
from ..utils._labels import label_positions
from ..utils.multiclass import _as_target, type_of_target, unique_labels
from ..utils.validation import is_ember, to_device

__all__ = ["classification_report", "precision_recall_fscore_support"]

_AVERAGES = (None, "micro", "macro", "weighted", "samples", "binary")


def _check_zero_division(zero_division, who):
    if isinstance(zero_division, str) and zero_division == "warn":
        return 0.0
    if isinstance(zero_division, numbers.Real) and not isinstance(zero_division, bool):
        if math.isnan(zero_division):
            return float("nan")
        if zero_division in (0, 1):
            return float(zero_division)
    raise sklearn_compatible(InvalidParameterError)(
        f"The 'zero_division' parameter of {who} must be a float among {{0.0, 1.0}}, a float "
        f"nan or a str among {{'warn'}}. Got {zero_division!r} instead."
    )


def _len(y):
    return int(y.shape[0]) if hasattr(y, "shape") else len(y)


def _check_targets(y_true, y_pred, sample_weight):
    """(y_type, present labels (host NumPy), y_true, y_pred, weights) as scikit-learn checks
    them: same length, compatible target types, 1-D labels or label indicators."""
    a, b = _as_target(y_true, "y_true"), _as_target(y_pred, "y_pred")
    lengths = [_len(a), _len(b)] + ([] if sample_weight is None else [_len(sample_weight)])
    if len(set(lengths)) > 1:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: {lengths!r}")
    tt, tp = type_of_target(a, "y_true"), type_of_target(b, "y_pred")
    if lengths[0] < 1:
        raise ValueError(
            "Found empty input array (e.g., `y_true` or `y_pred`) while a minimum of 1 sample "
            "is required."
        )
    kinds = {tt, tp}
    if kinds == {"binary", "multiclass"}:
        kinds = {"multiclass"}
    if len(kinds) > 1:
        raise ValueError(f"Classification metrics can't handle a mix of {tt} and {tp} targets")
    y_type = kinds.pop()
    if y_type not in ("binary", "multiclass", "multilabel-indicator"):
        raise ValueError(f"{y_type} is not supported")
    if y_type != "multilabel-indicator":
        a, b = (v.reshape(-1) if v.ndim == 2 and v.shape[1] == 1 else v for v in (a, b))
        for name, v in (("y_true", a), ("y_pred", b)):
            if v.ndim != 1:
                raise ValueError(
                    f"{name} should be a 1d array, got an array of shape {tuple(v.shape)} instead."
                )
    present = unique_labels(a, b)
    present = ember.asnumpy(present) if is_ember(present) else present
    if y_type == "binary" and len(present) > 2:
        y_type = "multiclass"
    return y_type, present, a, b


def _where(a, b, sample_weight):
    """The device (or None for NumPy) the counts are taken on, and both label arrays there."""
    numeric = all(is_ember(v) or v.dtype.kind not in "OUS" for v in (a, b))
    if numeric and (is_ember(a) or is_ember(b)):
        dev = a.device if is_ember(a) else b.device
        return dev, to_device(a, dev), to_device(b, dev)
    a = ember.asnumpy(a) if is_ember(a) else a
    b = ember.asnumpy(b) if is_ember(b) else b
    return None, a, b


def _weights(sample_weight, dev):
    if sample_weight is None:
        return None
    w = sample_weight
    if dev is None:
        return (ember.asnumpy(w) if is_ember(w) else np.asarray(w)).astype(np.float64)
    return to_device(w if is_ember(w) else np.asarray(w), dev).astype(ember.float64)


def _host(v):
    return ember.asnumpy(v) if is_ember(v) else np.asarray(v)


def _label_counts(a, b, labels, w, dev):
    """tp, predicted and true totals of each label (host arrays; floats when weighted)."""
    K = len(labels)
    if dev is None:
        it, ip, xp = label_positions(a, labels, None), label_positions(b, labels, None), np
    else:
        it, ip, xp = label_positions(a, labels, dev), label_positions(b, labels, dev), ember
    hit = (it >= 0) & (it == ip)

    def count(idx, keep):
        slot = xp.where(keep, idx, K)
        out = xp.bincount(slot, weights=w, minlength=K + 1)
        return _host(out)[:K]

    out = [count(it, hit), count(ip, ip >= 0), count(it, it >= 0)]
    if not bool((a == b).any()):
        # scikit-learn's counts are float zeros when no sample at all is predicted right, and
        # its report then prints the supports as floats: kept for an identical report.
        out = [v.astype(np.float64) for v in out]
    return out


def _multilabel_counts(a, b, labels, w, dev, samplewise):
    """Column (or, samplewise, row) sums of tp, predicted and true indicators."""
    L = int(a.shape[1])
    if np.any(labels >= L):
        raise ValueError(
            f"All labels must be in [0, n labels) for multilabel targets. Got {labels.max()} "
            f"> {L - 1}"
        )
    if np.any(labels < 0):
        raise ValueError(
            f"All labels must be in [0, n labels) for multilabel targets. Got {labels.min()} < 0"
        )
    if dev is None:
        A, B, xp = np.asarray(a)[:, labels] != 0, np.asarray(b)[:, labels] != 0, np
    else:
        cols = ember.asarray(labels.astype(np.int64), device=dev)
        A = ember.take(a, cols, axis=1) != 0
        B = ember.take(b, cols, axis=1) != 0
        xp = ember
    T = A & B
    if samplewise:
        sums = [m.astype(xp.float64).sum(axis=1) for m in (T, B, A)]
        return sums, xp
    if w is None:
        return [_host(m.astype(xp.int64).sum(axis=0)) for m in (T, B, A)], np
    return [_host((m.astype(xp.float64) * w[:, None]).sum(axis=0)) for m in (T, B, A)], np


def _warn_prf(average, modifier, what, size):
    axis0, axis1 = ("label", "sample") if average == "samples" else ("sample", "label")
    where = "due to" if size == 1 else f"in {axis1}s with"
    warnings.warn(
        f"{what} is ill-defined and being set to 0.0 {where} no {modifier} {axis0}s. Use "
        "`zero_division` parameter to control this behavior.",
        UndefinedMetricWarning,
        stacklevel=4,
    )


def _divide(num, den, xp, what, modifier, average, warn_for, zero_division, zd_value):
    """num / den with ``zero_division``'s value where den == 0 (and its warning)."""
    zero = den == 0
    out = num.astype(xp.float64) / xp.where(zero, 1, den).astype(xp.float64)
    if not bool(zero.any()):
        return out
    out = xp.where(zero, zd_value, out)
    if isinstance(zero_division, str) and what.lower() in warn_for:
        _warn_prf(average, modifier, what, int(out.shape[0]))
    return out


def _nanaverage(v, weights, xp):
    """Mean of the non-NaN values (weighted; unweighted when the weights sum to zero)."""
    if v.shape[0] == 0:
        return float("nan")
    ok = ~xp.isnan(v)
    if not bool(ok.any()):
        return float("nan")
    vv = xp.where(ok, v, 0.0)
    if weights is None:
        return float(vv.sum() / ok.astype(xp.float64).sum())
    ww = xp.where(ok, weights.astype(xp.float64), 0.0)
    total = float(ww.sum())
    if total == 0:
        return float(vv.sum() / ok.astype(xp.float64).sum())
    return float((vv * ww).sum() / total)


def _prf_from_counts(tp, pred, true, average, weights, xp, warn_for, zero_division, zd):
    if average == "micro":
        tp, pred, true = (np.asarray([np.sum(v)]) for v in (tp, pred, true))
    args = (average, warn_for, zero_division, zd)
    p = _divide(tp, pred, xp, "Precision", "predicted", *args)
    r = _divide(tp, true, xp, "Recall", "true", *args)
    f = _divide(2 * tp, true + pred, xp, "F-score", "true nor predicted", *args)
    if average is None:
        return p, r, f, true
    if average == "weighted":
        weights = true
    elif average != "samples":
        weights = None
    return tuple(_nanaverage(v, weights, xp) for v in (p, r, f)) + (None,)


class _Counts:
    """The validated targets of one metric call and their per-label counts."""

    def __init__(self, y_true, y_pred, labels, sample_weight, who):
        self.y_type, self.present, a, b = _check_targets(y_true, y_pred, sample_weight)
        self.labels_given = labels is not None
        self.labels = self.present if labels is None else _host(labels).reshape(-1)
        self.dev, self.a, self.b = _where(a, b, sample_weight)
        self.w = _weights(sample_weight, self.dev)
        self.who = who
        if self.y_type == "multilabel-indicator":
            self.labels = self.labels.astype(np.int64)  # label indicators: column numbers
            (self.tp, self.pred, self.true), _ = _multilabel_counts(
                self.a, self.b, self.labels, self.w, self.dev, False
            )
        else:
            self.tp, self.pred, self.true = _label_counts(
                self.a, self.b, self.labels, self.w, self.dev
            )

    def scores(self, average, warn_for, zero_division):
        zd = _check_zero_division(zero_division, self.who)
        if average == "samples":
            if self.y_type != "multilabel-indicator":
                raise ValueError(
                    "Samplewise metrics are not available outside of multilabel classification."
                )
            (tp, pred, true), xp = _multilabel_counts(
                self.a, self.b, self.labels, self.w, self.dev, True
            )
            args = (warn_for, zero_division, zd)
            return _prf_from_counts(tp, pred, true, average, self.w, xp, *args)
        return _prf_from_counts(
            self.tp, self.pred, self.true, average, None, np, warn_for, zero_division, zd
        )


def precision_recall_fscore_support(
    y_true,
    y_pred,
    *,
    beta=1.0,
    labels=None,
    pos_label=1,
    average=None,
    warn_for=("precision", "recall", "f-score"),
    sample_weight=None,
    zero_division="warn",
):
    """Precision, recall, F-beta and support per label (``average=None``) or averaged
    ('micro', 'macro', 'weighted', 'samples', 'binary'; support is then None)."""
    if average not in _AVERAGES:
        raise ValueError(f"average has to be one of {_AVERAGES[:-1]!r}")
    if beta != 1.0:
        raise ValueError(
            f"precision_recall_fscore_support: only beta=1.0 (the F1 score) is supported, got "
            f"beta={beta!r}"
        )
    _check_zero_division(zero_division, "precision_recall_fscore_support")
    c = _Counts(y_true, y_pred, labels, sample_weight, "precision_recall_fscore_support")
    if average == "binary":
        if c.y_type != "binary":
            opts = [o for o in _AVERAGES[:-1] if c.y_type != "multiclass" or o != "samples"]
            raise ValueError(
                f"Target is {c.y_type} but average='binary'. Please choose another average "
                f"setting, one of {opts!r}."
            )
        if pos_label not in c.present.tolist() and len(c.present) >= 2:
            raise ValueError(
                f"pos_label={pos_label} is not a valid label. It should be one of {c.present}"
            )
        c = _Counts(y_true, y_pred, [pos_label], sample_weight, c.who)
        average = "macro"
    warn_for = {w.lower() for w in warn_for}
    p, r, f, s = c.scores(average, warn_for, zero_division)
    return p, r, f, s


def classification_report(
    y_true,
    y_pred,
    *,
    labels=None,
    target_names=None,
    sample_weight=None,
    digits=2,
    output_dict=False,
    zero_division="warn",
):
    """Text (or dict) report of precision, recall, F1 and support per label and averaged,
    laid out exactly as scikit-learn's."""
    if isinstance(digits, bool) or not isinstance(digits, numbers.Integral) or digits < 0:
        raise sklearn_compatible(InvalidParameterError)(
            f"The 'digits' parameter of classification_report must be an int in the range "
            f"[0, inf). Got {digits!r} instead."
        )
    _check_zero_division(zero_division, "classification_report")
    c = _Counts(y_true, y_pred, labels, sample_weight, "classification_report")
    labels = c.labels
    micro_is_accuracy = c.y_type in ("multiclass", "binary") and (
        not c.labels_given or set(labels.tolist()) >= set(c.present.tolist())
    )
    if target_names is not None and len(labels) != len(target_names):
        if c.labels_given:
            warnings.warn(
                f"labels size, {len(labels)}, does not match size of target_names, "
                f"{len(target_names)}",
                UserWarning,
                stacklevel=2,
            )
        else:
            raise ValueError(
                f"Number of classes, {len(labels)}, does not match size of target_names, "
                f"{len(target_names)}. Try specifying the labels parameter"
            )
    if target_names is None:
        target_names = [f"{lab}" for lab in labels]
    headers = ["precision", "recall", "f1-score", "support"]
    warn_for = {"precision", "recall", "f-score"}
    p, r, f1, s = c.scores(None, warn_for, zero_division)
    rows = list(zip(target_names, p, r, f1, s, strict=False))
    averages = ["micro", "macro", "weighted"]
    if c.y_type.startswith("multilabel"):
        averages.append("samples")
    if output_dict:
        report = {
            row[0]: dict(zip(headers, [float(v) for v in row[1:]], strict=True)) for row in rows
        }
    else:
        width = max(max(len(str(n)) for n in target_names), len("weighted avg"), digits)
        head_fmt = "{:>{width}s} " + " {:>9}" * len(headers)
        text = head_fmt.format("", *headers, width=width) + "\n\n"
        row_fmt = "{:>{width}s} " + " {:>9.{digits}f}" * 3 + " {:>9}\n"
        for row in rows:
            text += row_fmt.format(*row, width=width, digits=digits)
        text += "\n"
    for average in averages:
        heading = "accuracy" if average == "micro" and micro_is_accuracy else f"{average} avg"
        ap, ar, af, _ = c.scores(average, warn_for, zero_division)
        avg = [ap, ar, af, np.sum(s)]
        if output_dict:
            report[heading] = dict(zip(headers, [float(v) for v in avg], strict=True))
        elif heading == "accuracy":
            acc_fmt = "{:>{width}s} " + " {:>9.{digits}}" * 2 + " {:>9.{digits}f}" + " {:>9}\n"
            text += acc_fmt.format(heading, "", "", *avg[2:], width=width, digits=digits)
        else:
            text += row_fmt.format(heading, *avg, width=width, digits=digits)
    if output_dict:
        if "accuracy" in report:
            report["accuracy"] = report["accuracy"]["precision"]
        return report
    return text
