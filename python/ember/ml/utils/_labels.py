"""Class-label encoding for classifiers: labels to 0..K-1 indices on X's device and back."""

from __future__ import annotations

import numpy as np

import ember

from .validation import is_ember, to_device

__all__ = ["encode_labels", "decode_labels", "encode_with_classes", "label_positions"]


def encode_labels(y, device):
    """(classes, indices): sorted unique labels and each label's index as int64 on ``device``.

    Ember labels stay on their device (``ember.unique``); host labels (which may be strings)
    are encoded with NumPy on the host, and only the integer indices are sent to ``device``.
    """
    if is_ember(y):
        classes, inv = ember.unique(y, return_inverse=True)
        return classes, to_device(inv.reshape(-1).astype(ember.int64), device)
    y = np.asarray(y)
    classes, inv = np.unique(y, return_inverse=True)
    return classes, to_device(inv.reshape(-1).astype(np.int64), device)


def encode_with_classes(y, classes, device, who="encode"):
    """Indices of ``y`` in already-fitted ``classes``; ValueError for unseen labels."""
    if is_ember(classes) and is_ember(y):
        c = to_device(classes, y.device)
        idx = ember.searchsorted(c, y)
        idx = ember.clip(idx, 0, c.shape[0] - 1)
        if not bool((ember.take(c, idx) == y).all()):
            raise ValueError(f"{who}: y contains previously unseen labels")
        return to_device(idx.astype(ember.int64), device)
    c = ember.asnumpy(classes) if is_ember(classes) else np.asarray(classes)
    yh = ember.asnumpy(y) if is_ember(y) else np.asarray(y)
    idx = np.clip(np.searchsorted(c, yh), 0, len(c) - 1)
    if not np.all(c[idx] == yh):
        unseen = np.setdiff1d(yh, c)
        raise ValueError(f"{who}: y contains previously unseen labels: {unseen.tolist()!r}")
    return to_device(idx.astype(np.int64), device)


def decode_labels(classes, idx, kind):
    """``classes[idx]`` in the caller's kind (NumPy labels for host inputs)."""
    if kind == "numpy":
        c = ember.asnumpy(classes) if is_ember(classes) else np.asarray(classes)
        return c[ember.asnumpy(idx)]
    if is_ember(classes):
        return ember.take(to_device(classes, idx.device), idx)
    c = np.asarray(classes)
    if c.dtype.kind in "OUS":
        return c[ember.asnumpy(idx)]
    return ember.take(to_device(c, idx.device), idx)


def label_positions(y, classes, device):
    """Position of each label of ``y`` in ``classes`` (any order), -1 where absent, as int64 on
    ``device``. Ember labels are matched on their device (sort + ``searchsorted``); host labels
    (possibly strings) with NumPy, and only the positions are sent to ``device`` (kept as NumPy
    when ``device`` is None)."""
    numeric = is_ember(classes) or np.asarray(classes).dtype.kind not in "OUS"
    if device is not None and is_ember(y) and numeric:
        c = to_device(classes if is_ember(classes) else np.asarray(classes), y.device)
        if c.shape[0] == 0:
            return to_device(ember.full(y.shape, -1, dtype=ember.int64, device=y.device), device)
        order = ember.argsort(c)
        s = ember.take(c, order)
        pos = ember.clip(ember.searchsorted(s, y), 0, s.shape[0] - 1)
        hit = ember.take(s, pos) == y
        out = ember.where(hit, ember.take(order, pos), -1).astype(ember.int64)
        return to_device(out, device)
    c = ember.asnumpy(classes) if is_ember(classes) else np.asarray(classes)
    yh = ember.asnumpy(y) if is_ember(y) else np.asarray(y)
    if c.shape[0] == 0:
        out = np.full(yh.shape, -1, dtype=np.int64)
    else:
        order = np.argsort(c, kind="stable")
        s = c[order]
        pos = np.clip(np.searchsorted(s, yh), 0, len(s) - 1)
        out = np.where(s[pos] == yh, order[pos], -1).astype(np.int64)
    return out if device is None else to_device(out, device)
