"""Synthetic data generators (scikit-learn's ``sklearn.datasets`` ``make_*`` functions).

The samples are drawn with ember's generator on ember's default device (or ``device=``) and
returned as ember arrays there, as cuML's generators return device arrays; the parameters and
the construction follow scikit-learn, the random draws are ember's own.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

import ember

from ..utils.validation import check_random_state, to_device

__all__ = ["make_blobs", "make_circles", "make_classification", "make_moons", "make_regression"]


def _dev(device):
    return ember.get_default_device() if device is None else device


def _shuffle_rows(rng, dev, *arrays):
    n = int(arrays[0].shape[0])
    perm = rng.permutation(n, device=dev)
    return [ember.take(a, perm, axis=0) for a in arrays]


def make_blobs(
    n_samples=100,
    n_features=2,
    *,
    centers=None,
    cluster_std=1.0,
    center_box=(-10.0, 10.0),
    shuffle=True,
    random_state=None,
    return_centers=False,
    device=None,
):
    """Isotropic Gaussian blobs: (X, y[, centers])."""
    dev = _dev(device)
    rng = check_random_state(random_state)
    if isinstance(n_samples, numbers.Integral):
        if centers is None:
            centers = 3
        if isinstance(centers, numbers.Integral):
            k = int(centers)
            C = rng.uniform(center_box[0], center_box[1], size=(k, n_features), device=dev)
        else:
            C = to_device(np.asarray(centers, dtype=np.float64), dev)
            k, n_features = int(C.shape[0]), int(C.shape[1])
        per = [n_samples // k + (1 if i < n_samples % k else 0) for i in range(k)]
    else:
        per = [int(v) for v in n_samples]
        k = len(per)
        if centers is None:
            C = rng.uniform(center_box[0], center_box[1], size=(k, n_features), device=dev)
        else:
            C = to_device(np.asarray(centers, dtype=np.float64), dev)
            if int(C.shape[0]) != k:
                raise ValueError(
                    "Length of `n_samples` not consistent with number of centers. Got "
                    f"n_samples = {n_samples} and centers = {centers}"
                )
            n_features = int(C.shape[1])
    std = np.broadcast_to(np.asarray(cluster_std, dtype=np.float64), (k,)).copy()
    if np.ndim(cluster_std) and len(np.asarray(cluster_std)) != k:
        raise ValueError(
            "Length of `clusters_std` not consistent with number of centers. Got centers = "
            f"{centers} and cluster_std = {cluster_std}"
        )
    labels = np.repeat(np.arange(k), per)
    y = to_device(labels.astype(np.int64), dev)
    noise = rng.normal(size=(int(labels.size), n_features), device=dev)
    X = ember.take(C, y, axis=0) + ember.take(to_device(std, dev), y)[:, None] * noise
    if shuffle:
        X, y = _shuffle_rows(rng, dev, X, y)
    return (X, y, C) if return_centers else (X, y)


def _hypercube_vertices(rng, n_vertices, dim):
    """``n_vertices`` distinct random vertices of {0,1}^dim, as a (n_vertices, dim) host array."""
    chosen: list[int] = []
    seen: set[int] = set()
    total = 2**dim
    while len(chosen) < n_vertices:
        for v in ember.asnumpy(rng.integers(0, min(total, 2**62), size=2 * n_vertices)).tolist():
            if v not in seen:
                seen.add(v)
                chosen.append(v)
                if len(chosen) == n_vertices:
                    break
    bits = [[(v >> b) & 1 for b in range(dim)] for v in chosen]
    return np.asarray(bits, dtype=np.float64).reshape(n_vertices, dim)


def make_classification(
    n_samples=100,
    n_features=20,
    *,
    n_informative=2,
    n_redundant=2,
    n_repeated=0,
    n_classes=2,
    n_clusters_per_class=2,
    weights=None,
    flip_y=0.01,
    class_sep=1.0,
    hypercube=True,
    shift=0.0,
    scale=1.0,
    shuffle=True,
    random_state=None,
    return_X_y=True,
    device=None,
):
    """Gaussian clusters on the vertices of a hypercube, one or more per class, in the
    informative subspace; plus redundant (linear combinations), repeated and noise
    features: (X, y)."""
    dev = _dev(device)
    rng = check_random_state(random_state)
    if n_informative + n_redundant + n_repeated > n_features:
        raise ValueError(
            "Number of informative, redundant and repeated features must sum to less than the "
            "number of total features"
        )
    if n_informative < np.log2(n_classes * n_clusters_per_class):
        raise ValueError(
            f"n_classes({n_classes}) * n_clusters_per_class({n_clusters_per_class}) must be "
            f"smaller or equal 2**n_informative({n_informative})={2**n_informative}"
        )
    if weights is not None:
        weights = list(weights)
        if len(weights) not in (n_classes, n_classes - 1):
            raise ValueError("Weights specified but incompatible with number of classes.")
        if len(weights) == n_classes - 1:
            weights = weights + [1.0 - sum(weights)]
    else:
        weights = [1.0 / n_classes] * n_classes
    n_useless = n_features - n_informative - n_redundant - n_repeated
    n_clusters = n_classes * n_clusters_per_class
    per = [
        int(n_samples * weights[k % n_classes] / n_clusters_per_class) for k in range(n_clusters)
    ]
    for i in range(n_samples - sum(per)):
        per[i % n_clusters] += 1
    cent = _hypercube_vertices(rng, n_clusters, n_informative) * 2 * class_sep - class_sep
    C = to_device(cent, dev)
    if not hypercube:
        C = C * (2 * rng.random(size=(n_clusters, 1), device=dev))
        C = C * rng.random(size=(1, n_informative), device=dev)
    labels = np.repeat(np.arange(n_clusters), per)
    cl = to_device(labels.astype(np.int64), dev)
    y = to_device((labels % n_classes).astype(np.int64), dev)
    Z = rng.standard_normal(size=(n_samples, n_informative), device=dev)
    # Each cluster gets its own random covariance: a per-cluster linear map, then its centroid.
    A = 2 * rng.random(size=(n_clusters, n_informative, n_informative), device=dev) - 1
    Xi = ember.einsum("ni,nij->nj", Z, ember.take(A, cl, axis=0)) + ember.take(C, cl, axis=0)
    blocks = [Xi]
    if n_redundant > 0:
        B = 2 * rng.random(size=(n_informative, n_redundant), device=dev) - 1
        blocks.append(ember.matmul(Xi, B))
    if n_repeated > 0:
        n_src = n_informative + n_redundant
        src = (n_src - 1) * ember.asnumpy(rng.random(size=n_repeated)) + 0.5
        cur = ember.concatenate(blocks, axis=1)
        blocks.append(ember.take(cur, to_device(src.astype(np.int64), dev), axis=1))
    if n_useless > 0:
        blocks.append(rng.standard_normal(size=(n_samples, n_useless), device=dev))
    X = ember.concatenate(blocks, axis=1)
    if flip_y >= 0 and flip_y > 0:
        flip = rng.random(size=n_samples, device=dev) < flip_y
        y = ember.where(flip, rng.integers(0, n_classes, size=n_samples, device=dev), y)
    if shift is None:
        shift = (2 * rng.random(size=n_features, device=dev) - 1) * class_sep
    X = X + shift
    if scale is None:
        scale = 1 + 100 * rng.random(size=n_features, device=dev)
    X = X * scale
    if shuffle:
        X, y = _shuffle_rows(rng, dev, X, y)
        cols = rng.permutation(n_features, device=dev)
        X = ember.take(X, cols, axis=1)
    return X, y


def _low_rank(rng, dev, n_samples, n_features, effective_rank, tail_strength):
    n = min(n_samples, n_features)
    u, _ = ember.linalg.qr(rng.standard_normal(size=(n_samples, n), device=dev))
    v, _ = ember.linalg.qr(rng.standard_normal(size=(n_features, n), device=dev))
    i = np.arange(n, dtype=np.float64)
    low = (1 - tail_strength) * np.exp(-1.0 * (i / effective_rank) ** 2)
    tail = tail_strength * np.exp(-0.1 * i / effective_rank)
    s = to_device(low + tail, dev)
    return ember.matmul(u * s[None, :], v.T)


def make_regression(
    n_samples=100,
    n_features=100,
    *,
    n_informative=10,
    n_targets=1,
    bias=0.0,
    effective_rank=None,
    tail_strength=0.5,
    noise=0.0,
    shuffle=True,
    coef=False,
    random_state=None,
    device=None,
):
    """A random linear model with ``n_informative`` non-zero coefficients (uniform in
    [0, 100)), Gaussian noise of std ``noise``: (X, y[, coef])."""
    dev = _dev(device)
    rng = check_random_state(random_state)
    n_informative = min(n_features, n_informative)
    if effective_rank is None:
        X = rng.standard_normal(size=(n_samples, n_features), device=dev)
    else:
        X = _low_rank(rng, dev, n_samples, n_features, effective_rank, tail_strength)
    gt = ember.zeros((n_features, n_targets), dtype=ember.float64, device=dev)
    if n_informative > 0:
        top = 100 * rng.random(size=(n_informative, n_targets), device=dev)
        gt = ember.concatenate([top, gt[n_informative:]], axis=0)
    y = ember.matmul(X, gt) + bias
    if noise > 0.0:
        y = y + noise * rng.standard_normal(size=tuple(y.shape), device=dev)
    if shuffle:
        X, y = _shuffle_rows(rng, dev, X, y)
        cols = rng.permutation(n_features, device=dev)
        X = ember.take(X, cols, axis=1)
        gt = ember.take(gt, cols, axis=0)
    if n_targets == 1:
        y, gt = y[:, 0], gt[:, 0]
    return (X, y, gt) if coef else (X, y)


def _two_counts(n_samples, who):
    if isinstance(n_samples, numbers.Integral):
        n_out = n_samples // 2
        return n_out, n_samples - n_out
    try:
        n_out, n_in = n_samples
    except ValueError as exc:
        raise ValueError(
            f"`n_samples` can be either an int or a two-element tuple. ({who})"
        ) from exc
    return int(n_out), int(n_in)


def make_moons(n_samples=100, *, shuffle=True, noise=None, random_state=None, device=None):
    """Two interleaving half circles: (X, y)."""
    dev = _dev(device)
    rng = check_random_state(random_state)
    n_out, n_in = _two_counts(n_samples, "make_moons")
    t_out = ember.linspace(0, math.pi, n_out, device=dev)
    t_in = ember.linspace(0, math.pi, n_in, device=dev)
    X = ember.concatenate(
        [
            ember.stack([ember.cos(t_out), ember.sin(t_out)], axis=1),
            ember.stack([1 - ember.cos(t_in), 1 - ember.sin(t_in) - 0.5], axis=1),
        ],
        axis=0,
    )
    y = to_device(np.r_[np.zeros(n_out), np.ones(n_in)].astype(np.int64), dev)
    if shuffle:
        X, y = _shuffle_rows(rng, dev, X, y)
    if noise is not None:
        X = X + noise * rng.standard_normal(size=tuple(X.shape), device=dev)
    return X, y


def make_circles(
    n_samples=100, *, shuffle=True, noise=None, random_state=None, factor=0.8, device=None
):
    """A large circle containing a smaller one (radius ``factor``): (X, y)."""
    if not 0 <= factor < 1:
        raise ValueError("'factor' has to be between 0 and 1.")
    dev = _dev(device)
    rng = check_random_state(random_state)
    n_out, n_in = _two_counts(n_samples, "make_circles")
    t_out = to_device(np.linspace(0, 2 * np.pi, n_out, endpoint=False), dev)
    t_in = to_device(np.linspace(0, 2 * np.pi, n_in, endpoint=False), dev)
    X = ember.concatenate(
        [
            ember.stack([ember.cos(t_out), ember.sin(t_out)], axis=1),
            ember.stack([ember.cos(t_in) * factor, ember.sin(t_in) * factor], axis=1),
        ],
        axis=0,
    )
    y = to_device(np.r_[np.zeros(n_out), np.ones(n_in)].astype(np.int64), dev)
    if shuffle:
        X, y = _shuffle_rows(rng, dev, X, y)
    if noise is not None:
        X = X + noise * rng.standard_normal(size=tuple(X.shape), device=dev)
    return X, y
