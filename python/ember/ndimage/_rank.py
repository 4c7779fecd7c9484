"""Order-statistic filters of ember.ndimage: minimum, maximum, rank, median, percentile.

Minimum and maximum are elementwise ``ember.minimum``/``ember.maximum`` over shifted slices of the
mode-extended input (separable 1-D passes for box footprints). Rank filters (median, percentile)
stack the footprint's shifted slices on a new last axis and ``ember.sort`` it, chunked along the
first axis so the stacked temporary stays bounded; everything stays in the input's dtype.
"""

from __future__ import annotations

import operator

import numpy as np

from . import _util as U

_CHUNK_ELEMS = 1 << 24  # bound on elements of the stacked temporary of a rank filter
_NETWORK_MAX = 64  # footprints up to this size select with a min/max network


def _size_1d(func, size):
    size = operator.index(size)
    if size < 1:
        raise RuntimeError(f"{func}: incorrect filter size: size={size}")
    return size


def _minmax_1d_work(x, size, axis, mode, cval, origin, is_max):
    em = U.ember_mod()
    n = x.shape[axis]
    left = size // 2 + origin
    right = size - 1 - left
    padded = U.pad_axis(x, axis, left, right, mode, cval)
    op = em.maximum if is_max else em.minimum
    nd = x.ndim
    acc = None
    for j in range(size):
        t = padded[U.axis_slice(nd, axis, j, j + n)]
        # the first tap is a view of ``padded``: a fresh buffer, then update it in place
        acc = t.copy() if acc is None else op(acc, t, out=acc)
    return acc


def _cval_for(x, cval):
    """SciPy casts cval to the input type before extending (a C cast: -1 -> 255 for uint8)."""
    if U.is_integer(x.dtype):
        with np.errstate(all="ignore"):
            return np.array(float(cval)).astype(np.int64).astype(str(x.dtype)).item()
    if str(x.dtype) == "bool":
        return bool(cval)
    return cval


def _minmax1d(func, input, size, axis, output, mode, cval, origin, is_max):
    input = U.check_input(func, input)
    if U.is_complex(input.dtype):
        raise TypeError(f"{func}: Complex type not supported")
    size = _size_1d(func, size)
    axis = U.check_axis(func, axis, input.ndim)
    origin = U.check_origin(func, origin, size)
    m = U.filter_mode(func, mode)
    dtype, out_arr = U.resolve_output(func, output, input)
    x, cv = _separable_operand(input, cval)
    res = _minmax_1d_work(x, size, axis, m, cv, origin, is_max)
    return U.finish(res, dtype, out_arr)


def _separable_operand(input, cval):
    """The array and cval a separable min/max pass works on.

    SciPy's 1-D min/max passes compare in double with ``cval`` as given, so an integer input
    whose ``cval`` its type cannot hold (-1 for uint8, 2.5 for int16) is compared in float64 and
    C-cast back afterwards; otherwise the input's own type is exact.
    """
    em = U.ember_mod()
    cv = _cval_for(input, cval)
    if U.is_integer(input.dtype) and float(cv) != float(cval):
        return input.astype(em.float64, copy=False), float(cval)
    return input, cv


def minimum_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """1-D minimum filter (``scipy.ndimage.minimum_filter1d``)."""
    return _minmax1d("minimum_filter1d", input, size, axis, output, mode, cval, origin, False)


def maximum_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """1-D maximum filter (``scipy.ndimage.maximum_filter1d``)."""
    return _minmax1d("maximum_filter1d", input, size, axis, output, mode, cval, origin, True)


def _footprint(func, input, size, footprint, axes):
    """(sizes, footprint or None) over ``axes``; footprint None means a full box."""
    k = len(axes)
    if footprint is None:
        if size is None:
            raise RuntimeError(f"{func}: no footprint provided (size and footprint are None)")
        sizes = [_size_1d(func, s) for s in U.normalize_sequence(func, "size", size, k)]
        return sizes, None
    fp = U.host_array(func, "footprint", footprint, dtype=bool)
    if fp.ndim != k:
        raise RuntimeError(
            f"{func}: footprint array has incorrect shape {fp.shape} for {k} filtered axes"
        )
    if fp.size == 0 or not fp.any():
        raise ValueError(f"{func}: All-zero footprint is not supported.")
    if fp.all():
        return list(fp.shape), None
    return list(fp.shape), fp


def _full_footprint(input, axes, fp, origins):
    nd = input.ndim
    shape = [1] * nd
    full_origin = [0] * nd
    for i, a in enumerate(sorted(axes)):
        shape[a] = fp.shape[i]
    for i, a in enumerate(axes):
        full_origin[a] = origins[i]
    fp = fp.reshape(shape)
    return fp, full_origin


def _padded_for_footprint(func, x, fp, origins, mode, cval):
    if not isinstance(mode, str):
        raise RuntimeError(
            f"{func}: A sequence of modes is not supported for non-separable footprints"
        )
    m = U.filter_mode(func, mode)
    pads = []
    for a in range(x.ndim):
        U.check_origin(func, origins[a], fp.shape[a])
        lo = fp.shape[a] // 2 + origins[a]
        pads.append((lo, fp.shape[a] - 1 - lo))
    return U.pad_all(x, pads, [m] * x.ndim, cval)


def _minmax_nd(func, input, size, footprint, output, mode, cval, origin, axes, is_max):
    em = U.ember_mod()
    input = U.check_input(func, input)
    if U.is_complex(input.dtype):
        raise TypeError(f"{func}: Complex type not supported")
    axes = U.check_axes(func, axes, input.ndim)
    sizes, fp = _footprint(func, input, size, footprint, axes)
    origins = U.normalize_sequence(func, "origin", origin, len(axes))
    dtype, out_arr = U.resolve_output(func, output, input)
    cv = _cval_for(input, cval)
    if fp is None:
        modes = U.normalize_sequence(func, "mode", mode, len(axes))
        x = input
        for i, a in enumerate(axes):
            if sizes[i] <= 1:
                continue
            o = U.check_origin(func, origins[i], sizes[i])
            x, cv = _separable_operand(x, cval)
            x = _minmax_1d_work(x, sizes[i], a, U.filter_mode(func, modes[i]), cv, o, is_max)
            x = U.cast_out(x, dtype)
        return U.finish(x, dtype, out_arr, src=input)
    fp, full_origin = _full_footprint(input, axes, fp, origins)
    padded = _padded_for_footprint(func, input, fp, full_origin, mode, cv)
    shp = tuple(input.shape)
    op = em.maximum if is_max else em.minimum
    acc = None
    for idx in zip(*np.nonzero(fp), strict=True):
        t = padded[tuple(slice(i, i + n) for i, n in zip(idx, shp, strict=True))]
        acc = t.copy() if acc is None else op(acc, t, out=acc)
    return U.finish(acc, dtype, out_arr)


def minimum_filter(
    input, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None
):
    """Multidimensional minimum filter (``scipy.ndimage.minimum_filter``)."""
    return _minmax_nd(
        "minimum_filter", input, size, footprint, output, mode, cval, origin, axes, False
    )


def maximum_filter(
    input, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None
):
    """Multidimensional maximum filter (``scipy.ndimage.maximum_filter``)."""
    return _minmax_nd(
        "maximum_filter", input, size, footprint, output, mode, cval, origin, axes, True
    )


_NETWORKS: dict = {}


def _selection_network(count, rank):
    """Comparators of a sorting network pruned to what output ``rank`` of ``count`` needs.

    Batcher's odd-even merge sort for the next power of two, minus the comparators that touch
    the (conceptually +inf) padding positions, minus those that cannot reach output ``rank``.
    Each entry is ``(i, j, need_min, need_max)``.
    """
    key = (count, rank)
    if key in _NETWORKS:
        return _NETWORKS[key]
    size = 1
    while size < count:
        size *= 2
    comps = []
    p = 1
    while p < size:
        k = p
        while k >= 1:
            for j in range(k % p, size - k, 2 * k):
                for i in range(min(k, size - j - k)):
                    a, b = i + j, i + j + k
                    if a // (2 * p) == b // (2 * p) and b < count:
                        comps.append((a, b))
            k //= 2
        p *= 2
    needed = {rank}
    kept = []
    for a, b in reversed(comps):
        na, nb = a in needed, b in needed
        if na or nb:
            kept.append((a, b, na, nb))
            needed.add(a)
            needed.add(b)
    kept.reverse()
    _NETWORKS[key] = kept
    return kept


def _select(taps, rank):
    """The ``rank``-th smallest of equally shaped arrays, elementwise, by a selection network."""
    em = U.ember_mod()
    vals = list(taps)
    owned = [False] * len(vals)  # taps start as views of the padded input: never written
    spare = None
    for a, b, need_min, need_max in _selection_network(len(vals), rank):
        va, vb = vals[a], vals[b]
        if need_min and need_max:
            lo = em.minimum(va, vb) if spare is None else em.minimum(va, vb, out=spare)
            spare = None
            if owned[b]:
                em.maximum(va, vb, out=vb)
            else:
                vals[b] = em.maximum(va, vb)
                owned[b] = True
            if owned[a]:
                spare = va  # its buffer is free again
            vals[a] = lo
            owned[a] = True
        elif need_min:
            if owned[a]:
                em.minimum(va, vb, out=va)
            else:
                vals[a] = em.minimum(va, vb)
                owned[a] = True
        else:
            if owned[b]:
                em.maximum(va, vb, out=vb)
            else:
                vals[b] = em.maximum(va, vb)
                owned[b] = True
    return vals[rank]


def _select_function(count, rank):
    """The selection network as one function of the taps (for ember.fuse): the same minimum and
    maximum operations as ``_select``, so the same results, in one generated kernel."""
    network = _selection_network(count, rank)

    def select(*taps):
        vals = list(taps)
        for a, b, need_min, need_max in network:
            va, vb = vals[a], vals[b]
            if need_min:
                vals[a] = U.ember_mod().minimum(va, vb)
            if need_max:
                vals[b] = U.ember_mod().maximum(va, vb)
        return vals[rank]

    return select


# GPU rank filters run their selection network as one ember.fuse kernel (instead of one pass
# per comparator); the CPU keeps the passes unless FUSE_ON_CPU is set (the tests do).
FUSE_ON_CPU = False
_FUSED: dict = {}


def _fused_select(count, rank, like):
    if like.device.type != "cuda" and not FUSE_ON_CPU:
        return None
    fn = _FUSED.get((count, rank))
    if fn is None:
        fn = _FUSED[(count, rank)] = U.ember_mod().fuse(kernel_name="ndimage_select")(
            _select_function(count, rank)
        )
    return fn


def _rank_core(func, input, rank, size, footprint, output, mode, cval, origin, axes, kind):
    em = U.ember_mod()
    input = U.check_input(func, input)
    if U.is_complex(input.dtype):
        raise TypeError(f"{func}: Complex type not supported")
    axes = U.check_axes(func, axes, input.ndim)
    sizes, fp = _footprint(func, input, size, footprint, axes)
    if fp is None:
        fp = np.ones(sizes, dtype=bool)
    count = int(fp.sum())
    if kind == "percentile":
        pct = float(rank)
        if pct < 0.0:
            pct += 100.0
        if pct < 0.0 or pct > 100.0:
            raise RuntimeError(f"{func}: invalid percentile={rank!r}")
        rank = int(float(count) * pct / 100.0)
        if rank == count:
            rank -= 1
    elif kind == "median":
        rank = count // 2
    else:
        rank = operator.index(rank)
        if rank < 0:
            rank += count
        if rank < 0 or rank >= count:
            raise RuntimeError(f"{func}: rank not within filter footprint size (rank={rank})")
    if rank == 0 or rank == count - 1:
        fp_arg = None if fp.all() else fp
        sz_arg = list(fp.shape) if fp_arg is None else None
        return _minmax_nd(
            func, input, sz_arg, fp_arg, output, mode, cval, origin, axes, rank == count - 1
        )
    origins = U.normalize_sequence(func, "origin", origin, len(axes))
    dtype, out_arr = U.resolve_output(func, output, input)
    cv = _cval_for(input, cval)
    fp, full_origin = _full_footprint(input, axes, fp, origins)
    padded = _padded_for_footprint(func, input, fp, full_origin, mode, cv)
    shp = tuple(input.shape)
    offsets = list(zip(*np.nonzero(fp), strict=True))
    if input.size == 0:
        return U.finish(input.copy(), dtype, out_arr)
    # chunk along the longest axis so ``rows * row_elems * count`` stays bounded
    ax = int(np.argmax(shp))
    row_elems = max(1, input.size // shp[ax])
    step = max(1, _CHUNK_ELEMS // (row_elems * count))
    network = count <= _NETWORK_MAX and input.dtype != em.bool
    fused = _fused_select(count, rank, input) if network else None
    if fused is not None:  # one kernel over views of the padded input: no chunks needed
        step = shp[ax]
    pieces = []
    for r0 in range(0, shp[ax], step):
        r1 = min(shp[ax], r0 + step)
        taps = []
        for idx in offsets:
            sl = [slice(i, i + n) for i, n in zip(idx, shp, strict=True)]
            sl[ax] = slice(idx[ax] + r0, idx[ax] + r1)
            taps.append(padded[tuple(sl)])
        if fused is not None:
            pieces.append(fused(*taps))
        elif network:
            # elementwise min/max only: no stacked temporary and no sort
            pieces.append(_select(taps, rank))
        else:
            stk = em.stack(taps, axis=-1)
            pieces.append(em.sort(stk, axis=-1)[..., rank])
    res = pieces[0] if len(pieces) == 1 else em.concatenate(pieces, axis=ax)
    return U.finish(res, dtype, out_arr)


def rank_filter(
    input,
    rank,
    size=None,
    footprint=None,
    output=None,
    mode="reflect",
    cval=0.0,
    origin=0,
    *,
    axes=None,
):
    """Multidimensional rank filter (``scipy.ndimage.rank_filter``)."""
    return _rank_core(
        "rank_filter", input, rank, size, footprint, output, mode, cval, origin, axes, "rank"
    )


def median_filter(
    input, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None
):
    """Multidimensional median filter (``scipy.ndimage.median_filter``)."""
    return _rank_core(
        "median_filter", input, 0, size, footprint, output, mode, cval, origin, axes, "median"
    )


def percentile_filter(
    input,
    percentile,
    size=None,
    footprint=None,
    output=None,
    mode="reflect",
    cval=0.0,
    origin=0,
    *,
    axes=None,
):
    """Multidimensional percentile filter (``scipy.ndimage.percentile_filter``)."""
    return _rank_core(
        "percentile_filter",
        input,
        percentile,
        size,
        footprint,
        output,
        mode,
        cval,
        origin,
        axes,
        "percentile",
    )
