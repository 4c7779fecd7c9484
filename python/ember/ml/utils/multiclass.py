"""Target-type helpers (scikit-learn's ``sklearn.utils.multiclass``): ``type_of_target`` and
``unique_labels``.

Ember arrays are inspected on their device (``unique`` there; only the count of distinct values
and the labels themselves come back); host targets, which may hold strings, are inspected with
NumPy on the host, as ``utils._labels`` encodes them.
"""

from __future__ import annotations

import numpy as np

import ember

from .validation import _host, is_ember

__all__ = ["type_of_target", "unique_labels"]


def _as_target(y, input_name):
    """``y`` as an ember array (kept on its device) or a NumPy array (host containers)."""
    if hasattr(y, "nnz") and hasattr(y, "toarray"):
        y = y.toarray()  # a SciPy sparse target: its dense host copy
    h = _host(y)
    if is_ember(h):
        return h
    if isinstance(y, (str, bytes)) or h.ndim == 0:
        raise ValueError(
            f"Expected array-like (array or non-string sequence), got {input_name or 'y'}={y!r}"
        )
    return h


def _unique(y):
    return ember.unique(y.reshape(-1)) if is_ember(y) else np.unique(y.reshape(-1))


def type_of_target(y, input_name=""):
    """The kind of target ``y`` holds: 'binary', 'multiclass', 'multilabel-indicator',
    'continuous', 'multiclass-multioutput', 'continuous-multioutput' or 'unknown'."""
    y = _as_target(y, input_name)
    if y.ndim > 2:
        return "unknown"
    if not is_ember(y) and y.dtype == object and y.size and not isinstance(y.flat[0], str):
        return "unknown"  # sequences of sequences, mixed objects (as scikit-learn)
    if y.ndim == 2 and y.shape[1] == 0:
        return "unknown"
    wide = y.ndim == 2 and y.shape[1] > 1
    uniq = _unique(y) if y.size else None
    n_uniq = 0 if uniq is None else int(uniq.shape[0])
    floating = y.dtype in (ember.float32, ember.float64) if is_ember(y) else y.dtype.kind == "f"
    if floating and y.size:
        xp = ember if is_ember(y) else np
        integral = bool((uniq == xp.round(uniq)).all())
    else:
        integral = True
    if wide and n_uniq < 3 and (not floating or integral):
        if is_ember(y) or y.dtype.kind in "biuf":
            return "multilabel-indicator"
    suffix = "-multioutput" if wide else ""
    if floating and not integral:
        if is_ember(y):
            finite = bool(ember.isfinite(y).all())
        else:
            finite = bool(np.isfinite(y).all())
        if not finite:
            raise ValueError(f"Input {input_name or 'y'} contains NaN or infinity.")
        return "continuous" + suffix
    if n_uniq > 2 or wide:
        return "multiclass" + suffix
    return "binary"


def unique_labels(*ys):
    """The sorted labels of all of ``ys`` (``arange(n_labels)`` for label indicators);
    an ember array when every input is one, NumPy otherwise."""
    if not ys:
        raise ValueError("No argument has been passed.")
    arrays = [_as_target(y, "y") for y in ys]
    types = {type_of_target(y) for y in arrays}
    if types == {"binary", "multiclass"}:
        types = {"multiclass"}
    if len(types) > 1:
        raise ValueError(f"Mix type of y not allowed, got types {types}")
    kind = types.pop()
    if kind == "multilabel-indicator":
        widths = {int(y.shape[1]) for y in arrays}
        if len(widths) > 1:
            raise ValueError("Multi-label binary indicator input with different numbers of labels")
        n = widths.pop()
        if all(is_ember(y) for y in arrays):
            return ember.arange(n, device=arrays[0].device)
        return np.arange(n)
    if kind not in ("binary", "multiclass"):
        raise ValueError(f"Unknown label type: {kind!r}")
    if all(is_ember(y) for y in arrays):
        dev = arrays[0].device
        parts = [ember.asarray(y.reshape(-1), device=dev) for y in arrays]
        return ember.unique(ember.concatenate(parts) if len(parts) > 1 else parts[0])
    # Host labels (possibly strings): the union is taken with NumPy on the host.
    hosts = [ember.asnumpy(y) if is_ember(y) else y for y in arrays]
    labels = set()
    for h in hosts:
        labels.update(np.unique(h.reshape(-1)).tolist())
    if len({isinstance(v, str) for v in labels}) > 1:
        raise ValueError("Mix of label input types (string and number)")
    return np.asarray(sorted(labels), dtype=np.result_type(*[h.dtype for h in hosts]))
