"""Class and sample weights for unbalanced data (scikit-learn's ``utils.class_weight``).

Labels are encoded where they live (ember labels on their device, host labels, possibly
strings, with NumPy); the weighted class counts are a ``bincount`` on the device and per-sample
weights a ``take``. Results come back as the kind of ``y`` (ember in, ember out; else NumPy).
"""

from __future__ import annotations

import numpy as np

import ember

from ..exceptions import InvalidParameterError, sklearn_compatible
from ._labels import encode_labels
from .validation import _host, device_of, input_kind, is_ember, to_device, to_output

__all__ = ["compute_class_weight", "compute_sample_weight"]


def _np(v):
    return ember.asnumpy(v) if is_ember(v) else np.asarray(v)


def _key(c):
    try:
        return int(c)
    except (TypeError, ValueError):
        return str(c)


def compute_class_weight(class_weight, *, classes, y, sample_weight=None):
    """Weight of each of ``classes``: ones (None / empty dict), n / (K * count) ('balanced',
    weighted counts with ``sample_weight``), or the values of a ``{label: weight}`` dict."""
    if not (class_weight is None or isinstance(class_weight, dict) or class_weight == "balanced"):
        raise sklearn_compatible(InvalidParameterError)(
            "The 'class_weight' parameter of compute_class_weight must be a str among "
            f"{{'balanced'}}, an instance of 'dict' or None. Got {class_weight!r} instead."
        )
    yh = _host(y)
    dev = device_of(yh)
    kind = input_kind(y)
    ch = _np(_host(classes))
    yn = _np(yh).reshape(-1)
    if set(np.unique(yn).tolist()) - set(ch.tolist()):
        raise ValueError("classes should include all valid labels that can be in y")
    K = ch.shape[0]
    if class_weight is None or len(class_weight) == 0:
        return to_output(ember.ones((K,), dtype=ember.float64, device=dev), kind)
    if class_weight == "balanced":
        present, idx = encode_labels(yh.reshape(-1) if is_ember(yh) else yn, dev)
        pn = _np(present)
        if not np.all(np.isin(ch, pn)):
            raise ValueError("classes should have valid labels that are in y")
        w = None
        if sample_weight is not None:
            w = to_device(_host(sample_weight), dev).astype(ember.float64).reshape(-1)
            if w.shape[0] != yn.shape[0]:
                raise ValueError(
                    f"sample_weight.shape == {tuple(w.shape)}, expected ({yn.shape[0]},)!"
                )
        counts = ember.bincount(idx, weights=w, minlength=len(pn)).astype(ember.float64)
        recip = counts.sum() / (len(pn) * counts)
        where = to_device(np.searchsorted(pn, ch).astype(np.int64), dev)
        return to_output(ember.take(recip, where), kind)
    weight = np.ones(K, dtype=np.float64)
    unweighted = []
    for i, c in enumerate(ch):
        c = _key(c)
        if c in class_weight:
            weight[i] = class_weight[c]
        else:
            unweighted.append(c)
    if unweighted and K - len(unweighted) != len(class_weight):
        raise ValueError(f"The classes, {np.array(unweighted).tolist()}, are not in class_weight")
    return to_output(to_device(weight, dev), kind)


def compute_sample_weight(class_weight, y, *, indices=None):
    """Per-sample weights from class weights (products over the outputs of a 2-D y);
    ``indices`` (a subsample, 'balanced' only) counts the classes of ``y[indices]`` and gives
    0 to samples of classes absent from it."""
    if not (
        class_weight is None or isinstance(class_weight, (dict, list)) or class_weight == "balanced"
    ):
        raise sklearn_compatible(InvalidParameterError)(
            "The 'class_weight' parameter of compute_sample_weight must be an instance of "
            f"'dict', an instance of 'list', a str among {{'balanced'}} or None. Got "
            f"{class_weight!r} instead."
        )
    yh = _host(y)
    dev = device_of(yh)
    kind = input_kind(y)
    yn = np.atleast_1d(_np(yh))
    if yn.ndim == 1:
        yn = yn.reshape(-1, 1)
    n_out = yn.shape[1]
    if indices is not None and class_weight != "balanced":
        raise ValueError(
            f"The only valid class_weight for subsampling is 'balanced'. Given {class_weight}."
        )
    if n_out > 1:
        if class_weight is None or isinstance(class_weight, dict):
            raise ValueError(
                "For multi-output, class_weight should be a list of dicts, or the string "
                "'balanced'."
            )
        if isinstance(class_weight, list) and len(class_weight) != n_out:
            raise ValueError(
                "For multi-output, number of elements in class_weight should match number of "
                f"outputs. Got {len(class_weight)} element(s) while having {n_out} outputs."
            )
    total = ember.ones((yn.shape[0],), dtype=ember.float64, device=dev)
    for k in range(n_out):
        col = yn[:, k]
        classes = np.unique(col)
        cw = class_weight if (class_weight == "balanced" or n_out == 1) else class_weight[k]
        pos = to_device(np.searchsorted(classes, col).astype(np.int64), dev)
        if indices is not None:
            ind = _np(_host(indices)).astype(np.int64)
            sub = col[ind]
            sub_classes = np.unique(sub)
            wk = to_device(_np(compute_class_weight(cw, classes=sub_classes, y=sub)), dev)
            per_class = ember.take(
                wk,
                to_device(
                    np.clip(np.searchsorted(sub_classes, classes), 0, len(sub_classes) - 1).astype(
                        np.int64
                    ),
                    dev,
                ),
            )
            missing = to_device(~np.isin(classes, sub_classes), dev)
            per_class = ember.where(missing, 0.0, per_class)
        else:
            per_class = to_device(_np(compute_class_weight(cw, classes=classes, y=col)), dev)
        total = total * ember.take(per_class, pos)
    return to_output(total, kind)
