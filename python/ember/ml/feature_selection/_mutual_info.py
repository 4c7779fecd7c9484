"""mutual_info_regression and mutual_info_classif (scikit-learn's
``sklearn.feature_selection``): k-nearest-neighbour estimators of mutual information.

Continuous-continuous pairs use Kraskov, Stoegbauer and Grassberger's estimator (KSG 1, max
norm): the distance to the k-th neighbour in the joint space, then neighbour counts within it
in each marginal. Continuous-discrete pairs use Ross's estimator (k-th neighbour among the
samples of the same label, then counts among all samples). Discrete-discrete pairs use the
contingency table (``mutual_info_score``). All distances are 1-D absolute differences, so
each feature is one blocked n x n pass on the device (``topk`` for the k-th neighbour,
comparisons and row sums for the counts). Continuous columns are scaled to unit standard
deviation and jittered by ``1e-10`` relative noise as scikit-learn does; the noise is drawn
from NumPy's RandomState seeded as scikit-learn's (so the same ``random_state`` gives the same
numbers), or on the device from an ember Generator.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

import ember

from ..metrics import mutual_info_score
from ..metrics.pairwise import block_rows
from ..utils._param_validation import Interval, StrOptions, validate_parameter_constraints
from ..utils.validation import (
    _host,
    check_array,
    check_classification_targets,
    input_kind,
    is_ember,
    to_device,
)

__all__ = ["mutual_info_classif", "mutual_info_regression"]

_CONSTRAINTS = {
    "discrete_features": ["boolean", "array-like", StrOptions({"auto"})],
    "n_neighbors": [Interval(Integral, 1, None, closed="left")],
    "copy": ["boolean"],
    "random_state": ["random_state"],
    "n_jobs": [Integral, None],
}


def _rows(n, dev):
    return max(1, block_rows(n, dev))


def _digamma_mean(v):
    return ember.digamma(v.astype(ember.float64)).mean()


def _kth_radius(D, k):
    """nextafter(k-th smallest of each row, 0)."""
    r = ember.topk(D, k, dim=1, largest=False, sorted=True).values[:, -1]
    return ember.nextafter(r, ember.zeros_like(r))


def _mi_cc(x, y, k):
    n = x.shape[0]
    dev = x.device
    rows = _rows(n, dev)
    nx, ny = [], []
    for s in range(0, n, rows):
        xb, yb = x[s : s + rows], y[s : s + rows]
        Dx = ember.abs(xb[:, None] - x[None, :])
        Dy = ember.abs(yb[:, None] - y[None, :])
        D = ember.maximum(Dx, Dy)
        r = ember.arange(xb.shape[0], device=dev)
        D[r, r + s] = float("inf")
        rad = _kth_radius(D, k)[:, None]
        nx.append((Dx <= rad).sum(axis=1) - 1)
        ny.append((Dy <= rad).sum(axis=1) - 1)
    nx = ember.concatenate(nx) if len(nx) > 1 else nx[0]
    ny = ember.concatenate(ny) if len(ny) > 1 else ny[0]
    dg = ember.digamma(ember.asarray([float(n), float(k)], device=dev)).sum()
    mi = dg - _digamma_mean(nx + 1) - _digamma_mean(ny + 1)
    return max(0.0, float(mi))


def _mi_cd(c, d, k):
    """c continuous (device), d integer labels (device)."""
    n = c.shape[0]
    dev = c.device
    _, inv, counts = ember.unique(d, return_inverse=True, return_counts=True)
    cnt = ember.take(counts, inv.reshape(-1))  # label count of every sample
    keep = cnt > 1
    if not bool(keep.any()):
        return 0.0
    k_all = ember.minimum(cnt - 1, k)
    kmax = int(k_all.max())
    rows = _rows(n, dev)
    rad = []
    for s in range(0, n, rows):
        cb, db = c[s : s + rows], d[s : s + rows]
        D = ember.abs(cb[:, None] - c[None, :])
        same = db[:, None] == d[None, :]
        r = ember.arange(cb.shape[0], device=dev)
        D = ember.where(same, D, float("inf"))
        D[r, r + s] = float("inf")
        vals = ember.topk(D, kmax, dim=1, largest=False, sorted=True).values
        kk = ember.clip(k_all[s : s + rows] - 1, 0, kmax - 1)
        kth = ember.take_along_axis(vals, kk[:, None], axis=1)[:, 0]
        rad.append(ember.nextafter(kth, ember.zeros_like(kth)))
    rad = ember.concatenate(rad) if len(rad) > 1 else rad[0]
    m = []
    for s in range(0, n, rows):
        cb = c[s : s + rows]
        D = ember.abs(cb[:, None] - c[None, :])
        hit = (D <= rad[s : s + rows][:, None]) & keep[None, :]
        m.append(hit.sum(axis=1))
    m = ember.concatenate(m) if len(m) > 1 else m[0]
    n_keep = int(keep.sum())
    kf = keep.astype(ember.float64)

    def kept_mean(v):
        return (ember.digamma(ember.maximum(v.astype(ember.float64), 1.0)) * kf).sum() / n_keep

    mi = (
        float(ember.digamma(ember.asarray(float(n_keep), device=dev)))
        + float(kept_mean(k_all))
        - float(kept_mean(cnt))
        - float(kept_mean(m))
    )
    return max(0.0, mi)


def _scale_cols(A):
    """Divide by the (population) standard deviation; near-constant columns are kept."""
    sd = ember.sqrt(((A - A.mean(axis=0)) ** 2).mean(axis=0))
    eps = float(np.finfo(np.float64).eps)
    return A / ember.where(sd < 10 * eps, 1.0, sd)


def _noise(rng, shape, dev):
    if isinstance(rng, ember.random.Generator):
        return rng.standard_normal(shape, device=dev).astype(ember.float64)
    return to_device(rng.standard_normal(size=shape), dev)


def _estimate_mi(
    X, y, *, discrete_features, discrete_target, n_neighbors, copy, random_state, n_jobs, who
):
    validate_parameter_constraints(
        _CONSTRAINTS,
        {
            "discrete_features": discrete_features,
            "n_neighbors": n_neighbors,
            "copy": copy,
            "random_state": random_state,
            "n_jobs": n_jobs,
        },
        caller_name=who,
    )
    if hasattr(X, "nnz"):
        X = X.toarray()
    Xa = check_array(X, estimator=who)
    dev = Xa.device
    n, F = Xa.shape
    yh = _host(y)
    ylen = yh.shape[0] if hasattr(yh, "shape") else len(yh)
    if ylen != n:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n}, {ylen}]"
        )
    if isinstance(discrete_features, (str, bool, np.bool_)):
        mask = np.full(F, bool(discrete_features) if discrete_features != "auto" else False)
    else:
        df = np.asarray(
            ember.asnumpy(discrete_features) if is_ember(discrete_features) else discrete_features
        )
        if df.dtype == bool:
            if df.shape != (F,):
                raise ValueError(
                    f"{who}: discrete_features boolean mask has shape {df.shape}, expected ({F},)"
                )
            mask = df
        else:
            mask = np.zeros(F, dtype=bool)
            mask[df.astype(np.int64)] = True
    cont = ~mask
    if isinstance(random_state, ember.random.Generator):
        rng = random_state
    elif random_state is None or isinstance(random_state, (Integral, np.integer)):
        rng = (
            np.random.RandomState(random_state)
            if random_state is not None
            else (np.random.mtrand._rand)
        )
    else:
        rng = random_state
    Xw = Xa.astype(ember.float64)
    if cont.any():
        ci = to_device(np.flatnonzero(cont), dev)
        Xc = _scale_cols(ember.take(Xw, ci, axis=1))
        means = ember.maximum(ember.abs(Xc).mean(axis=0), 1.0)
        Xc = Xc + 1e-10 * means[None, :] * _noise(rng, (n, int(cont.sum())), dev)
        cols = {int(j): Xc[:, t] for t, j in enumerate(np.flatnonzero(cont))}
    else:
        cols = {}
    if discrete_target:
        yn = ember.asnumpy(yh) if is_ember(yh) else np.asarray(yh)
        check_classification_targets(yn, who)
        _, codes = np.unique(yn.ravel(), return_inverse=True)
        yv = to_device(codes.astype(np.int64), dev)
    else:
        yv = yh if is_ember(yh) else to_device(np.asarray(yh, dtype=np.float64), dev)
        yv = yv.astype(ember.float64).reshape(-1)
        if not bool(ember.isfinite(yv).all()):
            raise ValueError(f"{who}: Input y contains NaN or infinity.")
        sd = ember.sqrt(((yv - yv.mean()) ** 2).mean())
        yv = yv / ember.where(sd < 10 * float(np.finfo(np.float64).eps), 1.0, sd)
        yv = yv + 1e-10 * ember.maximum(ember.abs(yv).mean(), 1.0) * _noise(rng, (n,), dev)
    out = []
    for j in range(F):
        if mask[j]:
            xj = Xw[:, j]
            if discrete_target:
                out.append(float(mutual_info_score(xj, yv)))
            else:
                _, xcodes = ember.unique(xj, return_inverse=True)
                out.append(_mi_cd(yv, xcodes.reshape(-1), n_neighbors))
        elif discrete_target:
            out.append(_mi_cd(cols[j], yv, n_neighbors))
        else:
            out.append(_mi_cc(cols[j], yv, n_neighbors))
    res = np.asarray(out, dtype=np.float64)
    return res if input_kind(X) == "numpy" else ember.asarray(res, device=dev)


def mutual_info_regression(
    X, y, *, discrete_features="auto", n_neighbors=3, copy=True, random_state=None, n_jobs=None
):
    """Mutual information between each feature and a continuous target."""
    return _estimate_mi(
        X,
        y,
        discrete_features=discrete_features,
        discrete_target=False,
        n_neighbors=n_neighbors,
        copy=copy,
        random_state=random_state,
        n_jobs=n_jobs,
        who="mutual_info_regression",
    )


def mutual_info_classif(
    X, y, *, discrete_features="auto", n_neighbors=3, copy=True, random_state=None, n_jobs=None
):
    """Mutual information between each feature and a discrete target."""
    return _estimate_mi(
        X,
        y,
        discrete_features=discrete_features,
        discrete_target=True,
        n_neighbors=n_neighbors,
        copy=copy,
        random_state=random_state,
        n_jobs=n_jobs,
        who="mutual_info_classif",
    )
