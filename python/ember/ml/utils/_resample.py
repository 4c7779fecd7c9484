"""``shuffle`` and ``resample`` (scikit-learn's ``sklearn.utils``): row indices drawn with
ember's generator; ember arrays are gathered on their device, host containers by position."""

from __future__ import annotations

import numpy as np

import ember

from .validation import _host, check_random_state, is_ember, to_device

__all__ = ["resample", "shuffle"]


def _n(x):
    if hasattr(x, "shape") and len(x.shape) > 0:
        return int(x.shape[0])
    return len(x)


def _take(x, idx):
    if x is None:
        return None
    if is_ember(x):
        return ember.take(x, to_device(idx, x.device), axis=0)
    if hasattr(x, "iloc"):
        return x.iloc[idx]
    if isinstance(x, np.ndarray):
        return x[idx]
    if hasattr(x, "tocsr"):
        return x.tocsr()[idx]
    return [x[i] for i in idx]


def _stratified(rng, y, n_samples, replace):
    """Per-class sample counts proportional to the class sizes (largest remainders first),
    then rows drawn within each class."""
    yh = ember.asnumpy(y) if is_ember(y) else np.asarray(_host(y))
    if yh.ndim == 2:
        yh = np.asarray([" ".join(map(str, r)) for r in yh])
    classes, inv = np.unique(yh, return_inverse=True)
    counts = np.bincount(inv)
    exact = counts / counts.sum() * n_samples
    take = np.floor(exact).astype(np.int64)
    left = n_samples - int(take.sum())
    if left > 0:
        order = np.argsort(-(exact - take), kind="stable")
        take[order[:left]] += 1
    out = []
    for k in range(len(classes)):
        rows = np.flatnonzero(inv == k)
        if replace:
            pick = np.asarray(ember.asnumpy(rng.integers(0, len(rows), size=int(take[k]))))
        else:
            pick = np.asarray(ember.asnumpy(rng.permutation(len(rows))))[: int(take[k])]
        out.append(rows[pick])
    idx = np.concatenate(out) if out else np.zeros(0, dtype=np.int64)
    return idx[np.asarray(ember.asnumpy(rng.permutation(len(idx))))]


def resample(
    *arrays, replace=True, n_samples=None, random_state=None, stratify=None, sample_weight=None
):
    """The same random rows of every array (with replacement by default); one array gives
    the array, several a list."""
    if not arrays:
        return None
    rng = check_random_state(random_state)
    n = _n(arrays[0])
    for a in arrays[1:]:
        if a is not None and _n(a) != n:
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"{[_n(x) for x in arrays if x is not None]!r}"
            )
    m = n if n_samples is None else int(n_samples)
    if not replace and m > n:
        raise ValueError(f"Cannot sample {m} out of arrays with dim {n} when replace is False")
    if sample_weight is not None:
        if not replace:
            raise NotImplementedError(
                "Resampling with sample_weight is only implemented for replace=True."
            )
        if stratify is not None:
            raise NotImplementedError(
                "Resampling with sample_weight is only implemented for stratify=None."
            )
        w = np.asarray(
            ember.asnumpy(sample_weight) if is_ember(sample_weight) else sample_weight,
            dtype=np.float64,
        )
        cdf = np.cumsum(w / w.sum())
        u = np.asarray(ember.asnumpy(rng.random(size=m)))
        idx = np.minimum(np.searchsorted(cdf, u, side="right"), n - 1)
    elif stratify is not None:
        idx = _stratified(rng, stratify, m, replace)
    elif replace:
        idx = np.asarray(ember.asnumpy(rng.integers(0, n, size=m)))
    else:
        idx = np.asarray(ember.asnumpy(rng.permutation(n)))[:m]
    idx = idx.astype(np.int64)
    out = [_take(a, idx) for a in arrays]
    return out[0] if len(out) == 1 else out


def shuffle(*arrays, random_state=None, n_samples=None):
    """The rows of every array in one random order (``resample`` without replacement)."""
    return resample(*arrays, replace=False, n_samples=n_samples, random_state=random_state)
