"""Exact Euclidean distance transform of ember.ndimage (``distance_transform_edt``).

Separable and exact: along the first axis the distance to the nearest background element of
each line comes from two doubling scans (``ceil(log2 n)`` elementwise max/min passes of shifted
slices give the index of the last background element at or before, and the first at or after,
every position). Every further axis takes, for every element, the minimum over offsets ``k`` of
``f[i + k] + (k * sampling)**2`` (the lower envelope of parabolas), with ``|k|`` bounded by the
largest finite squared distance so far; the nearest-feature coordinates ride along through the
same ``where`` selections, which yields ``return_indices``.
"""

from __future__ import annotations

import math

import numpy as np

from . import _util as U


def _shift(x, axis, k, fill):
    """``y[i] = x[i - k]`` along ``axis`` (``k`` may be negative), ``fill`` outside."""
    n = x.shape[axis]
    nd = x.ndim
    if k > 0:
        p = U.pad_axis(x, axis, k, 0, "constant", fill)
        return p[U.axis_slice(nd, axis, 0, n)]
    p = U.pad_axis(x, axis, 0, -k, "constant", fill)
    return p[U.axis_slice(nd, axis, -k, -k + n)]


def _coord(shape, axis, device):
    em = U.ember_mod()
    shp = [1] * len(shape)
    shp[axis] = shape[axis]
    return em.broadcast_to(
        em.arange(shape[axis], dtype=em.int64, device=device).reshape(shp), tuple(shape)
    )


def _first_axis(bg, axis, s, want_feat):
    """Squared distance along ``axis`` to the nearest background element, and its coordinate."""
    em = U.ember_mod()
    shape = tuple(bg.shape)
    n = shape[axis]
    big = 4 * n + 4
    i = _coord(shape, axis, bg.device)
    last = em.where(bg, i, -big)
    nxt = em.where(bg, i, big)
    step = 1
    while step < n:
        last = em.maximum(last, _shift(last, axis, step, -big))
        nxt = em.minimum(nxt, _shift(nxt, axis, -step, big))
        step *= 2
    d_last = i - last
    d_next = nxt - i
    use_next = d_next < d_last
    d = em.where(use_next, d_next, d_last)
    f = (d.astype(em.float64) * s) ** 2
    f = em.where(d >= big - n, math.inf, f)
    feat = em.where(use_next, nxt, last) if want_feat else None
    return f, feat


def distance_transform_edt(
    input, sampling=None, return_distances=True, return_indices=False, distances=None, indices=None
):
    """Exact Euclidean distance transform (``scipy.ndimage.distance_transform_edt``)."""
    em = U.ember_mod()
    func = "distance_transform_edt"
    if (not return_distances) and (not return_indices):
        raise RuntimeError(f"{func}: at least one of return_distances/return_indices must be True")
    input = U.as_array(input)
    nd = input.ndim
    shape = tuple(input.shape)
    if sampling is None:
        samp = [1.0] * nd
    else:
        samp = [float(v) for v in U.normalize_sequence(func, "sampling", sampling, nd)]
        if any(v <= 0 for v in samp):
            raise ValueError(f"{func}: sampling must be positive, got {sampling!r}")
    want_feat = bool(return_indices)
    if distances is not None and (
        not isinstance(distances, em.ndarray)
        or distances.dtype != em.float64
        or tuple(distances.shape) != shape
    ):
        raise RuntimeError(f"{func}: distances array must be float64 with the input's shape")
    if indices is not None and (
        not isinstance(indices, em.ndarray) or tuple(indices.shape) != (nd,) + shape
    ):
        raise RuntimeError(f"{func}: indices array has wrong shape; expected {(nd,) + shape}")
    if nd == 0:
        input = input.reshape(1)
        shape = (1,)
        nd = 1
    bg = input == 0
    if input.size and not bool(em.any(bg)):
        # no background at all: SciPy's result is the distance to the point (-1, 0, ..., 0)
        coords = [_coord(shape, a, input.device) for a in range(nd)]
        f = None
        for a in range(nd):
            c = (coords[a] + (1 if a == 0 else 0)).astype(em.float64) * samp[a]
            f = c * c if f is None else f + c * c
        feats = [
            em.full(shape, -1 if a == 0 else 0, dtype=em.int64, device=input.device)
            for a in range(nd)
        ]
        return _results(input, f, feats, return_distances, return_indices, distances, indices)
    f, feat_axis = _first_axis(bg, 0, samp[0], want_feat)
    feats = None
    if want_feat:
        feats = [feat_axis] + [_coord(shape, a, input.device) for a in range(1, nd)]
    for a in range(1, nd):
        # offsets beyond sqrt(f[i]) cannot improve f[i]; an infinite f[i] needs the whole line
        fmax = float(em.max(f)) if f.size else 0.0
        R = shape[a] - 1
        if math.isfinite(fmax):
            R = min(R, int(math.ceil(math.sqrt(fmax) / samp[a])) + 1)
        best = f
        bfeat = feats
        for k in range(1, R + 1):
            add = (k * samp[a]) ** 2
            for sgn in (k, -k):
                cand = _shift(f, a, sgn, math.inf) + add
                better = cand < best
                best = em.where(better, cand, best)
                if want_feat:
                    pairs = zip(feats, bfeat, strict=True)
                    bfeat = [em.where(better, _shift(ft, a, sgn, 0), bf) for ft, bf in pairs]
        f = best
        feats = bfeat
    return _results(input, f, feats, return_distances, return_indices, distances, indices)


def _results(input, f, feats, return_distances, return_indices, distances, indices):
    em = U.ember_mod()
    nd = max(input.ndim, 1)
    out = []
    if return_distances:
        dist = em.sqrt(f).reshape(tuple(input.shape) if input.ndim else ())
        if distances is not None:
            distances[...] = dist
        else:
            out.append(dist)
    if return_indices:
        ft = em.stack([x.astype(em.int32) for x in feats]).reshape((nd,) + tuple(input.shape))
        if indices is not None:
            indices[...] = ft.astype(indices.dtype)
        else:
            out.append(ft)
    if not out:
        return None
    return out[0] if len(out) == 1 else tuple(out)


def distance_transform_cdt(
    input,
    metric="chessboard",
    return_distances=True,
    return_indices=False,
    distances=None,
    indices=None,
):
    """Chamfer distance transform (``scipy.ndimage.distance_transform_cdt``).

    The distance is the number of steps of the structuring element's neighbourhood to the
    nearest background element: relaxation ``f <- min(f, f[shifted] + 1)`` over the element's
    offsets until nothing changes (one pass per unit of the largest distance).
    """
    em = U.ember_mod()
    func = "distance_transform_cdt"
    if (not return_distances) and (not return_indices):
        raise RuntimeError(f"{func}: at least one of distances/indices must be requested")
    input = U.as_array(input)
    nd = input.ndim
    shape = tuple(input.shape)
    if isinstance(metric, str):
        if metric not in ("chessboard", "taxicab", "cityblock", "manhattan"):
            raise ValueError(f"{func}: invalid metric provided: {metric!r}")
        conn = nd if metric == "chessboard" else 1
        st = np.abs(np.indices([3] * nd) - 1).sum(axis=0) <= conn
        if metric == "chessboard":
            st = np.ones([3] * nd, bool)
    else:
        st = U.host_array(func, "metric", metric, dtype=bool)
        if st.ndim != nd or any(s != 3 for s in st.shape):
            raise RuntimeError(f"{func}: metric structure must be of shape {(3,) * nd}")
    offsets = [
        tuple(int(v) - 1 for v in d)
        for d in zip(*np.nonzero(st), strict=True)
        if any(v != 1 for v in d)
    ]
    big = int(np.prod(shape)) + 1 if shape else 2
    f = em.where(input != 0, big, 0).astype(em.int64)
    feats = None
    if return_indices:
        feats = [_coord(shape, a, input.device) for a in range(nd)]
    while offsets:
        best = f.copy()
        bfeat = [c.copy() for c in feats] if feats is not None else None
        for off in offsets:
            cand = f
            fts = feats
            for a, k in enumerate(off):
                if k:
                    cand = _shift(cand, a, k, big)
                    if fts is not None:
                        fts = [_shift(c, a, k, 0) for c in fts]
            cand = cand + 1
            better = cand < best
            best = em.where(better, cand, best)
            if bfeat is not None:
                bfeat = [em.where(better, c, b) for c, b in zip(fts, bfeat, strict=True)]
        changed = bool(em.any(best != f))
        f, feats = best, bfeat
        if not changed:
            break
    unreached = f >= big
    dist = em.where(unreached, -1, f).astype(em.int32)
    out = []
    if return_distances:
        if distances is not None:
            distances[...] = dist.astype(distances.dtype)
        else:
            out.append(dist)
    if return_indices:
        # unreached elements keep their own coordinates, as in SciPy
        ft = em.stack([c.astype(em.int32) for c in feats])
        if indices is not None:
            indices[...] = ft.astype(indices.dtype)
        else:
            out.append(ft)
    if not out:
        return None
    return out[0] if len(out) == 1 else tuple(out)


def distance_transform_bf(
    input,
    metric="euclidean",
    sampling=None,
    return_distances=True,
    return_indices=False,
    distances=None,
    indices=None,
):
    """Distance transform by any exact method (``scipy.ndimage.distance_transform_bf``).

    SciPy's brute force is exact, so the same results come from the exact transforms: the
    Euclidean one (float64) and the chamfer ones for taxicab/chessboard (uint32, where SciPy's
    result does not depend on ``sampling``).
    """
    em = U.ember_mod()
    func = "distance_transform_bf"
    m = str(metric).lower()
    if m not in ("euclidean", "taxicab", "cityblock", "manhattan", "chessboard"):
        raise RuntimeError(f"{func}: distance metric not supported: {metric!r}")
    if m == "euclidean":
        return distance_transform_edt(
            input, sampling, return_distances, return_indices, distances, indices
        )
    if (not return_distances) and (not return_indices):
        raise RuntimeError(f"{func}: at least one of distances/indices must be requested")
    res = distance_transform_cdt(
        input, "chessboard" if m == "chessboard" else "taxicab", True, return_indices
    )
    dist, ind = res if return_indices else (res, None)
    out = []
    if return_distances:
        dist = dist.astype(em.uint32)
        if distances is not None:
            distances[...] = dist.astype(distances.dtype)
        else:
            out.append(dist)
    if return_indices:
        if indices is not None:
            indices[...] = ind.astype(indices.dtype)
        else:
            out.append(ind)
    if not out:
        return None
    return out[0] if len(out) == 1 else tuple(out)
