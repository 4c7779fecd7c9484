"""Labelling and measurements of ember.ndimage: label, find_objects, center_of_mass, label sums.

``label`` gives every foreground pixel its own flat index and repeatedly takes the minimum over
the structuring element's neighbours (shifted slices) followed by pointer jumping
(``labels = labels[labels]`` with ``ember.take``) until nothing changes; each component ends with
the flat index of its first pixel in raster order, and a cumulative sum over those roots numbers
the components consecutively in SciPy's order. Per-label reductions map labels to positions in
``index`` with ``ember.searchsorted`` and reduce with ``ember.bincount`` (sums, counts) or a
``ember.lexsort`` by (label, value) (minimum, maximum, bounding boxes). Only the final small
per-label tables come to the host, where SciPy's API returns Python objects.
"""

from __future__ import annotations

import operator

import numpy as np

from . import _util as U


def label(input, structure=None, output=None):
    """Label connected features (``scipy.ndimage.label``): returns ``(labels, num_features)``."""
    em = U.ember_mod()
    func = "label"
    input = U.as_array(input)
    if U.is_complex(input.dtype):
        raise TypeError(f"{func}: Complex type not supported")
    nd = input.ndim
    if structure is None:
        st = np.abs(np.indices([3] * nd) - 1).sum(axis=0) <= 1 if nd else np.array(True)
    else:
        st = U.host_array(func, "structure", structure, dtype=bool)
        if st.ndim != nd:
            raise RuntimeError(f"{func}: structure and input must have equal rank")
        if any(s != 3 for s in st.shape):
            raise ValueError(f"{func}: structure dimensions must be equal to 3, got {st.shape}")
        if not np.array_equal(st, st[(slice(None, None, -1),) * st.ndim]):
            # SciPy's exception type for this check
            raise AssertionError(f"{func}: Structuring element is not symmetric")
    shp = tuple(input.shape)
    fg = input != 0
    size = int(np.prod(shp)) if shp else 1
    if nd == 0:
        fg = fg.reshape(1)
        shp1 = (1,)
    else:
        shp1 = shp
    big = size  # larger than every flat index
    ids = em.arange(size, dtype=em.int64, device=input.device).reshape(shp1)
    lab = em.where(fg, ids, big)
    # the neighbours: offsets d != 0 of the (symmetric) structure
    nz = zip(*np.nonzero(st), strict=True) if nd else []
    offsets = [d for d in nz if any(v != 1 for v in d)]
    sentinel = em.full((1,), big, dtype=em.int64, device=input.device)
    true1 = em.ones((1,), dtype=em.bool, device=input.device)
    while offsets:
        # every label is a root here (label[label] == label): a pixel index of its component
        padded = U.pad_all(lab, [(1, 1)] * nd, ["constant"] * nd, big)
        m = lab.copy()
        for d in offsets:
            t = padded[tuple(slice(i, i + n) for i, n in zip(d, shp1, strict=True))]
            em.minimum(m, t, out=m)
        m = em.where(fg, m, big).reshape(-1)
        flat_lab = lab.reshape(-1)
        cand = m < flat_lab
        if not bool(em.any(cand)):
            break
        # hooking: each root takes the smallest label seen next to any pixel of its tree (a
        # segmented minimum: sort (root, label) keys, keep the first key of every root)
        keys = em.sort(flat_lab[cand] * (big + 1) + m[cand])
        roots = keys // (big + 1)
        mins = keys % (big + 1)
        first = em.concatenate([true1, roots[1:] != roots[:-1]])
        roots = roots[first]
        flat = m.copy()
        flat[roots] = em.minimum(flat[roots], mins[first])
        # pointer jumping until stable: label <- label[label] follows each chain to its root;
        # slot ``big`` holds ``big`` for the background
        for _ in range(64):
            jumped = em.take(em.concatenate([flat, sentinel]), flat)
            done = not bool(em.any(jumped != flat))
            flat = jumped
            if done:
                break
        lab = flat.reshape(shp1)
    flat = lab.reshape(-1)
    is_root = (flat == em.arange(size, dtype=em.int64, device=input.device)) & fg.reshape(-1)
    rank = em.cumsum(is_root.astype(em.int64))
    num = int(rank[-1]) if size else 0
    res = em.where(fg.reshape(-1), em.take(rank, em.clip(flat, 0, max(size - 1, 0))), 0)
    res = res.reshape(shp)
    if output is None:
        return res.astype(em.int32), num
    if isinstance(output, em.ndarray):
        if tuple(output.shape) != shp:
            raise ValueError(f"{func}: output shape {tuple(output.shape)} != input shape {shp}")
        output[...] = res.astype(output.dtype)
        return num
    dtype, _ = U.resolve_output(func, output, input)
    return res.astype(dtype), num


def find_objects(input, max_label=0):
    """Bounding-box slices of labelled objects (``scipy.ndimage.find_objects``)."""
    em = U.ember_mod()
    func = "find_objects"
    input = U.as_array(input)
    if not U.is_integer(input.dtype):
        raise TypeError(f"{func}: input must be an integer array, got dtype {input.dtype}")
    max_label = operator.index(max_label)
    if max_label < 1:
        max_label = int(em.max(input)) if input.size else 0
    if max_label < 1:
        return []
    shp = tuple(input.shape)
    flat = input.reshape(-1).astype(em.int64)
    keep = (flat > 0) & (flat <= max_label)
    labels = em.arange(1, max_label + 1, dtype=em.int64, device=input.device)
    table = []
    for d, n in enumerate(shp):
        stride = int(np.prod(shp[d + 1 :])) if d + 1 < len(shp) else 1
        coord = (em.arange(flat.shape[0], dtype=em.int64, device=input.device) // stride) % n
        key = em.where(keep, flat * n + coord, -1)
        key = em.sort(key)
        first = em.searchsorted(key, labels * n)
        last = em.searchsorted(key, (labels + 1) * n) - 1
        nf = key.shape[0]
        present = (first <= last) & (first < nf)
        lo = em.take(key, em.clip(first, 0, nf - 1)) - labels * n
        hi = em.take(key, em.clip(last, 0, nf - 1)) - labels * n
        table.append(em.stack([lo, hi, present.astype(em.int64)]))
    # the small (ndim, 3, max_label) table is what SciPy's API returns as Python slices
    host = em.asnumpy(em.stack(table)) if table else np.zeros((0, 3, max_label), np.int64)
    out = []
    for j in range(max_label):
        if len(shp) == 0 or not host[0, 2, j]:
            out.append(None)
            continue
        out.append(
            tuple(slice(int(host[d, 0, j]), int(host[d, 1, j]) + 1) for d in range(len(shp)))
        )
    return out


# ----------------------------------------------------------------------------------------------
# per-label reductions


def _groups(func, input, labels, index):
    """(values, group ids, number of groups, index info) for label reductions.

    Group ``k`` is ``index[k]``; elements in no group get id ``ngroups`` (dropped).
    """
    em = U.ember_mod()
    input = U.as_array(input)
    if U.is_complex(input.dtype):
        raise TypeError(f"{func}: Complex type not supported")
    if labels is None:
        vals = input.reshape(-1)
        return vals, em.zeros(vals.shape, dtype=em.int64, device=input.device), 1, None, True
    labels = U.as_array(labels, like=input)
    if tuple(labels.shape) != tuple(input.shape):
        try:
            labels = em.broadcast_to(labels, tuple(input.shape))
        except Exception:
            raise ValueError(f"{func}: input and labels must have the same shape") from None
    vals = input.reshape(-1)
    lab = labels.reshape(-1)
    if index is None:
        gid = em.where(lab > 0, 0, 1).astype(em.int64)
        return vals, gid, 1, None, True
    scalar = np.isscalar(index) or (isinstance(index, em.ndarray) and index.ndim == 0)
    idx = np.atleast_1d(U.host_array(func, "index", index, dtype=None))
    order = np.argsort(idx, kind="stable")
    sidx = idx[order]
    dev_sidx = em.asarray(
        sidx.astype(np.float64 if sidx.dtype.kind == "f" else np.int64), device=input.device
    )
    labf = lab.astype(dev_sidx.dtype)
    pos = em.searchsorted(dev_sidx, labf)
    k = len(idx)
    posc = em.clip(pos, 0, k - 1)
    hit = (pos < k) & (em.take(dev_sidx, posc) == labf)
    # group id in sorted-index order, mapped back to the caller's order
    inv = np.empty(k, dtype=np.int64)
    inv[order] = np.arange(k)
    sorted_to_orig = em.asarray(order.astype(np.int64), device=input.device)
    gid = em.where(hit, em.take(sorted_to_orig, posc), k)
    return vals, gid, k, scalar, False


def _bincount(gid, k, weights=None):
    em = U.ember_mod()
    return em.bincount(gid, weights=weights, minlength=k + 1)[:k]


def _finish(res, scalar_like):
    """SciPy returns a scalar for a scalar (or absent) index, else an array."""
    em = U.ember_mod()
    if scalar_like:
        v = res[0]
        return v.item() if isinstance(v, em.ndarray) else v
    return res


def sum_labels(input, labels=None, index=None):
    """Sum of the values of labelled regions (``scipy.ndimage.sum_labels``)."""
    em = U.ember_mod()
    vals, gid, k, scalar, whole = _groups("sum_labels", input, labels, index)
    res = _bincount(gid, k, vals.astype(em.float64))
    return _finish(res, whole or scalar)


sum = sum_labels  # noqa: A001 - SciPy's alias


def mean(input, labels=None, index=None):
    """Mean of the values of labelled regions (``scipy.ndimage.mean``)."""
    em = U.ember_mod()
    vals, gid, k, scalar, whole = _groups("mean", input, labels, index)
    s = _bincount(gid, k, vals.astype(em.float64))
    c = _bincount(gid, k)
    return _finish(s / c, whole or scalar)


def variance(input, labels=None, index=None):
    """Variance of the values of labelled regions (``scipy.ndimage.variance``)."""
    em = U.ember_mod()
    vals, gid, k, scalar, whole = _groups("variance", input, labels, index)
    v = vals.astype(em.float64)
    c = _bincount(gid, k).astype(em.float64)
    mu = _bincount(gid, k, v) / c
    mu_full = em.take(em.concatenate([mu, em.zeros((1,), dtype=em.float64, device=v.device)]), gid)
    d = v - mu_full
    return _finish(_bincount(gid, k, d * d) / c, whole or scalar)


def standard_deviation(input, labels=None, index=None):
    """Standard deviation of labelled regions (``scipy.ndimage.standard_deviation``)."""
    em = U.ember_mod()
    v = variance(input, labels, index)
    return float(np.sqrt(v)) if not isinstance(v, em.ndarray) else em.sqrt(v)


def _extreme(func, input, labels, index, is_max):
    em = U.ember_mod()
    vals, gid, k, scalar, whole = _groups(func, input, labels, index)
    order = em.lexsort((vals, gid))
    sg = em.take(gid, order)
    sv = em.take(vals, order)
    counts = _bincount(gid, k)
    starts = em.cumsum(counts) - counts
    pick = (starts + counts - 1) if is_max else starts
    n = sv.shape[0]
    res = em.take(sv, em.clip(pick, 0, max(n - 1, 0))) if n else em.zeros((k,), dtype=vals.dtype)
    res = em.where(counts > 0, res, 0)
    del sg
    return _finish(res, whole or scalar)


def minimum(input, labels=None, index=None):
    """Minimum over labelled regions (``scipy.ndimage.minimum``)."""
    return _extreme("minimum", input, labels, index, False)


def maximum(input, labels=None, index=None):
    """Maximum over labelled regions (``scipy.ndimage.maximum``)."""
    return _extreme("maximum", input, labels, index, True)


def center_of_mass(input, labels=None, index=None):
    """Centre of mass of labelled regions (``scipy.ndimage.center_of_mass``).

    A tuple of floats for one region, a list of tuples for a sequence of labels.
    """
    em = U.ember_mod()
    func = "center_of_mass"
    input = U.as_array(input)
    vals, gid, k, scalar, whole = _groups(func, input, labels, index)
    v = vals.astype(em.float64)
    total = _bincount(gid, k, v)
    shp = tuple(input.shape)
    ids = em.arange(v.shape[0], dtype=em.int64, device=v.device)
    cols = []
    for d, n in enumerate(shp):
        stride = int(np.prod(shp[d + 1 :])) if d + 1 < len(shp) else 1
        coord = ((ids // stride) % n).astype(em.float64)
        cols.append(_bincount(gid, k, v * coord) / total)
    host = em.asnumpy(em.stack(cols)) if cols else np.zeros((0, k))
    tuples = [tuple(float(host[d, j]) for d in range(len(shp))) for j in range(k)]
    if whole or scalar:
        return tuples[0]
    return tuples


def _positions(func, input, labels, index, is_max):
    """Flat positions of each group's first minimum (maximum) in raster order."""
    em = U.ember_mod()
    vals, gid, k, scalar, whole = _groups(func, input, labels, index)
    n = vals.shape[0]
    flat = em.arange(n, dtype=em.int64, device=vals.device)
    if is_max:
        # values ascending, ties by descending position: the group's last is the first maximum
        order = em.lexsort((-flat, vals, gid))
    else:
        order = em.lexsort((flat, vals, gid))
    counts = _bincount(gid, k)
    starts = em.cumsum(counts) - counts
    pick = (starts + counts - 1) if is_max else starts
    pick = em.clip(pick, 0, max(n - 1, 0))
    pos = em.take(em.take(flat, order), pick) if n else em.zeros((k,), dtype=em.int64)
    val = em.take(em.take(vals, order), pick) if n else em.zeros((k,), dtype=vals.dtype)
    # as SciPy: a label with no elements reports value 0 at position 0
    pos = em.where(counts > 0, pos, 0)
    val = em.where(counts > 0, val, 0)
    return pos, val, counts, whole or scalar


def _unravel(input, pos):
    em = U.ember_mod()
    shp = tuple(U.as_array(input).shape)
    host = em.asnumpy(pos)  # the per-label positions: SciPy returns them as Python tuples
    return [tuple(int(v) for v in np.unravel_index(int(p), shp)) for p in host]


def minimum_position(input, labels=None, index=None):
    """Position of the minimum of labelled regions (``scipy.ndimage.minimum_position``)."""
    pos, _, _, single = _positions("minimum_position", input, labels, index, False)
    out = _unravel(input, pos)
    return out[0] if single else out


def maximum_position(input, labels=None, index=None):
    """Position of the maximum of labelled regions (``scipy.ndimage.maximum_position``)."""
    pos, _, _, single = _positions("maximum_position", input, labels, index, True)
    out = _unravel(input, pos)
    return out[0] if single else out


def extrema(input, labels=None, index=None):
    """Minima, maxima and their positions (``scipy.ndimage.extrema``)."""
    pmin, vmin, _, single = _positions("extrema", input, labels, index, False)
    pmax, vmax, _, _ = _positions("extrema", input, labels, index, True)
    lo, hi = _unravel(input, pmin), _unravel(input, pmax)
    if single:
        return vmin[0].item(), vmax[0].item(), lo[0], hi[0]
    return vmin, vmax, lo, hi


def median(input, labels=None, index=None):
    """Median of the values of labelled regions (``scipy.ndimage.median``)."""
    em = U.ember_mod()
    vals, gid, k, scalar, whole = _groups("median", input, labels, index)
    n = vals.shape[0]
    order = em.lexsort((vals, gid))
    sv = em.take(vals, order).astype(em.float64)
    counts = _bincount(gid, k)
    starts = em.cumsum(counts) - counts
    lo = em.clip(starts + (counts - 1) // 2, 0, max(n - 1, 0))
    hi = em.clip(starts + counts // 2, 0, max(n - 1, 0))
    res = (em.take(sv, lo) + em.take(sv, hi)) / 2.0 if n else em.zeros((k,), dtype=em.float64)
    res = em.where(counts > 0, res, 0.0)  # SciPy reports 0 for a label with no elements
    return _finish(res, whole or scalar)


def histogram(input, min, max, bins, labels=None, index=None):  # noqa: A002 - SciPy's names
    """Histogram of the values of labelled regions (``scipy.ndimage.histogram``).

    NumPy's binning (``bins`` equal bins over ``[min, max]``, the last one closed); one array
    for a scalar or absent index, a list of arrays for a sequence of labels.
    """
    em = U.ember_mod()
    func = "histogram"
    bins = operator.index(bins)
    if bins < 1:
        raise ValueError(f"{func}: bins must be a positive integer, got {bins}")
    vals, gid, k, scalar, whole = _groups(func, input, labels, index)
    edges = em.asarray(np.linspace(float(min), float(max), bins + 1), device=vals.device)
    v = vals.astype(em.float64)
    b = em.searchsorted(edges, v, side="right") - 1
    b = em.where(v == float(max), bins - 1, b)
    keep = (v >= float(min)) & (v <= float(max)) & (gid < k)
    key = em.where(keep, gid * bins + b, k * bins)
    counts = em.bincount(key, minlength=k * bins + 1)[: k * bins].reshape((k, bins))
    if whole or scalar:
        return counts[0]
    # SciPy gives None for a label with no elements (the group sizes: k numbers to the host)
    present = em.asnumpy(_bincount(gid, k)) > 0
    return [counts[j] if present[j] else None for j in range(k)]


def labeled_comprehension(input, labels, index, func, out_dtype, default, pass_positions=False):
    """Apply ``func`` to the values of each labelled region (SciPy's same-named function).

    ``func`` receives ember arrays on the input's device (the region's values, and with
    ``pass_positions`` their flat positions); one call per label, as in SciPy.
    """
    em = U.ember_mod()
    name = "labeled_comprehension"
    input = U.as_array(input)
    flat = input.reshape(-1)
    pos = em.arange(flat.shape[0], dtype=em.int64, device=input.device)
    if labels is None:
        return func(flat, pos) if pass_positions else func(flat)
    labels = U.as_array(labels, like=input)
    try:
        labels = em.broadcast_to(labels, tuple(input.shape)).reshape(-1)
    except Exception:
        raise ValueError(f"{name}: input and labels must have the same shape") from None

    def one(mask):
        v, p = flat[mask], pos[mask]
        return func(v, p) if pass_positions else func(v)

    if index is None:
        return one(labels > 0)
    scalar = np.isscalar(index) or (isinstance(index, em.ndarray) and index.ndim == 0)
    idx = np.atleast_1d(U.host_array(name, "index", index, dtype=None))
    odt = out_dtype if isinstance(out_dtype, (type, np.dtype, str)) else out_dtype.name
    out = np.full(idx.shape, default, dtype=np.dtype(odt))
    for j, lab in enumerate(idx.tolist()):
        mask = labels == lab
        if bool(em.any(mask)):
            r = one(mask)
            out[j] = r.item() if isinstance(r, em.ndarray) else r
    if scalar:
        return out[0].item()
    return em.asarray(out, device=input.device)


def value_indices(arr, *, ignore_value=None):
    """Indices of every distinct value of an integer array (``scipy.ndimage.value_indices``).

    One stable sort groups the flat positions by value; each value's coordinate arrays are
    slices of the sorted, unravelled positions (on the array's device).
    """
    em = U.ember_mod()
    name = "value_indices"
    arr = U.as_array(arr)
    if not U.is_integer(arr.dtype):
        raise ValueError(f"{name}: Parameter 'arr' must be an integer array, got {arr.dtype}")
    flat = arr.reshape(-1)
    n = flat.shape[0]
    if n == 0:
        return {}
    order = em.argsort(flat, stable=True)
    sv = em.take(flat, order)
    # group boundaries: the distinct values and their counts are the dict's keys (host side)
    values, counts = em.unique(sv, return_counts=True)
    values_h = em.asnumpy(values).tolist()
    counts_h = em.asnumpy(counts).tolist()
    shp = tuple(arr.shape)
    coords = []
    rest = order
    for d in range(len(shp) - 1, -1, -1):
        coords.append(rest % shp[d])
        rest = rest // shp[d]
    coords = coords[::-1]
    out = {}
    start = 0
    for v, c in zip(values_h, counts_h, strict=True):
        if ignore_value is None or v != ignore_value:
            key = np.dtype(str(arr.dtype)).type(v)
            out[key] = tuple(x[start : start + c] for x in coords)
        start += c
    return out
