"""Binary morphology of ember.ndimage: erosion, dilation, opening, closing, structuring elements.

One erosion step is a logical AND over the structuring element's shifted slices of the input
extended with ``border_value``; dilation is the OR over the reflected element (SciPy's origin
rules). Structuring elements are small host-side NumPy arrays; the image stays on its device.
"""

from __future__ import annotations

import operator

import numpy as np

from . import _util as U


def generate_binary_structure(rank, connectivity):
    """Binary structuring element of ``rank`` dims (``scipy.ndimage.generate_binary_structure``)."""
    em = U.ember_mod()
    rank = operator.index(rank)
    connectivity = operator.index(connectivity)
    if connectivity < 1:
        connectivity = 1
    if rank < 1:
        return em.asarray(np.array(True))
    grid = np.indices([3] * rank) - 1
    return em.asarray(np.abs(grid).sum(axis=0) <= connectivity)


def iterate_structure(structure, iterations, origin=None):
    """Dilate a structuring element with itself (``scipy.ndimage.iterate_structure``)."""
    em = U.ember_mod()
    st = U.host_array("iterate_structure", "structure", structure, dtype=bool)
    iterations = operator.index(iterations)
    if iterations < 2:
        out = em.asarray(st.copy())
        return out if origin is None else (out, origin)
    ni = iterations - 1
    shape = [ii + ni * (ii - 1) for ii in st.shape]
    pos = [ni * (st.shape[ii] // 2) for ii in range(len(shape))]
    sl = tuple(slice(pos[ii], pos[ii] + st.shape[ii]) for ii in range(len(shape)))
    out = np.zeros(shape, dtype=bool)
    out[sl] = st
    cur = em.asarray(out)
    for _ in range(ni):
        cur = binary_dilation(cur, st)
    if origin is None:
        return cur
    origin = U.normalize_sequence("iterate_structure", "origin", origin, st.ndim)
    return cur, [iterations * o for o in origin]


def _structure(func, structure, ndim_axes):
    if structure is None:
        grid = np.indices([3] * ndim_axes) - 1
        return np.abs(grid).sum(axis=0) <= 1
    st = U.host_array(func, "structure", structure, dtype=bool)
    if st.ndim != ndim_axes:
        raise RuntimeError(
            f"{func}: structure and input must have same dimensionality "
            f"(structure.ndim={st.ndim}, expected {ndim_axes})"
        )
    if st.size < 1:
        raise RuntimeError(f"{func}: structure must not be empty")
    return st


def _binary_input(func, input):
    em = U.ember_mod()
    input = U.as_array(input)
    if U.is_complex(input.dtype):
        raise TypeError(f"{func}: Complex type not supported")
    return input if input.dtype == em.bool else input != 0


def _expand(st, origins, axes, ndim):
    shape = [1] * ndim
    full_origin = [0] * ndim
    for i, a in enumerate(sorted(axes)):
        shape[a] = st.shape[i]
    for i, a in enumerate(axes):
        full_origin[a] = origins[i]
    st = st.reshape(shape)
    return st, full_origin


def _erode_step(x, st, origins, border_value, dilate):
    """One erosion (AND) or dilation (OR, with the reflected element) of bool array ``x``."""
    em = U.ember_mod()
    if dilate:
        st = st[(slice(None, None, -1),) * st.ndim]
        origins = [-o - (1 if st.shape[i] % 2 == 0 else 0) for i, o in enumerate(origins)]
    shp = tuple(x.shape)
    offsets = list(zip(*np.nonzero(st), strict=True))
    if not offsets:
        return em.full(shp, not dilate, dtype=em.bool, device=x.device)
    pads = []
    for a in range(x.ndim):
        lo = st.shape[a] // 2 + origins[a]
        pads.append((lo, st.shape[a] - 1 - lo))
    padded = U.pad_all(x, pads, ["constant"] * x.ndim, bool(border_value))
    acc = None
    for idx in offsets:
        t = padded[tuple(slice(i, i + n) for i, n in zip(idx, shp, strict=True))]
        if acc is None:
            acc = t
        else:
            acc = (acc | t) if dilate else (acc & t)
    return acc


def _binary_op(
    func, input, structure, iterations, mask, output, border_value, origin, axes, dilate
):
    em = U.ember_mod()
    x = _binary_input(func, input)
    axes = U.check_axes(func, axes, x.ndim)
    st = _structure(func, structure, len(axes))
    origins = [operator.index(o) for o in U.normalize_sequence(func, "origin", origin, len(axes))]
    for i in range(len(axes)):
        U.check_origin(func, origins[i], st.shape[i])
    st, full_origin = _expand(st, origins, axes, x.ndim)
    if isinstance(output, em.ndarray):
        if tuple(output.shape) != tuple(x.shape):
            raise RuntimeError(f"{func}: output shape not correct")
        dtype, out_arr = output.dtype, output
    else:
        # as SciPy: anything but an output array gives a new bool array
        dtype, out_arr = em.bool, None
    m = None
    if mask is not None:
        m = _binary_input(func, mask)
        if tuple(m.shape) != tuple(x.shape):
            raise RuntimeError(f"{func}: mask and input must have equal sizes")
    iterations = operator.index(iterations)
    cur = x
    it = 0
    while True:
        new = _erode_step(cur, st, full_origin, border_value, dilate)
        if m is not None:
            new = em.where(m, new, cur)
        it += 1
        if iterations >= 1 and it >= iterations:
            cur = new
            break
        # iterate until nothing changes (one host-side check per step)
        changed = bool(em.any(new != cur))
        cur = new
        if not changed:
            break
    return U.finish(cur, dtype, out_arr)


def binary_erosion(
    input,
    structure=None,
    iterations=1,
    mask=None,
    output=None,
    border_value=0,
    origin=0,
    brute_force=False,
    *,
    axes=None,
):
    """Multidimensional binary erosion (``scipy.ndimage.binary_erosion``)."""
    return _binary_op(
        "binary_erosion",
        input,
        structure,
        iterations,
        mask,
        output,
        border_value,
        origin,
        axes,
        False,
    )


def binary_dilation(
    input,
    structure=None,
    iterations=1,
    mask=None,
    output=None,
    border_value=0,
    origin=0,
    brute_force=False,
    *,
    axes=None,
):
    """Multidimensional binary dilation (``scipy.ndimage.binary_dilation``)."""
    return _binary_op(
        "binary_dilation",
        input,
        structure,
        iterations,
        mask,
        output,
        border_value,
        origin,
        axes,
        True,
    )


def binary_opening(
    input,
    structure=None,
    iterations=1,
    output=None,
    origin=0,
    mask=None,
    border_value=0,
    brute_force=False,
    *,
    axes=None,
):
    """Multidimensional binary opening: erosion then dilation (``scipy.ndimage.binary_opening``)."""
    tmp = binary_erosion(input, structure, iterations, mask, None, border_value, origin, axes=axes)
    return binary_dilation(
        tmp, structure, iterations, mask, output, border_value, origin, axes=axes
    )


def binary_closing(
    input,
    structure=None,
    iterations=1,
    output=None,
    origin=0,
    mask=None,
    border_value=0,
    brute_force=False,
    *,
    axes=None,
):
    """Multidimensional binary closing: dilation then erosion (``scipy.ndimage.binary_closing``)."""
    tmp = binary_dilation(input, structure, iterations, mask, None, border_value, origin, axes=axes)
    return binary_erosion(tmp, structure, iterations, mask, output, border_value, origin, axes=axes)


def binary_fill_holes(input, structure=None, output=None, origin=0, *, axes=None):
    """Fill the holes of binary objects (``scipy.ndimage.binary_fill_holes``).

    The background reachable from the border is found by dilating from the border inside the
    inverted image until it stops growing; the rest of the background is a hole.
    """
    em = U.ember_mod()
    func = "binary_fill_holes"
    x = _binary_input(func, input)
    inv = ~x
    seed = em.zeros(tuple(x.shape), dtype=em.bool, device=x.device)
    outside = binary_dilation(seed, structure, -1, inv, None, 1, origin, axes=axes)
    res = ~outside
    if isinstance(output, em.ndarray):
        output[...] = U.cast_out(res, output.dtype)
        return output
    if output is not None:
        dtype, _ = U.resolve_output(func, output, x)
        return U.cast_out(res, dtype)
    return res


def binary_propagation(
    input, structure=None, mask=None, output=None, border_value=0, origin=0, *, axes=None
):
    """Dilation repeated until stable inside ``mask`` (``scipy.ndimage.binary_propagation``)."""
    return binary_dilation(input, structure, -1, mask, output, border_value, origin, axes=axes)


def binary_hit_or_miss(
    input, structure1=None, structure2=None, output=None, origin1=0, origin2=None, *, axes=None
):
    """Hit-or-miss transform (``scipy.ndimage.binary_hit_or_miss``)."""
    em = U.ember_mod()
    func = "binary_hit_or_miss"
    x = _binary_input(func, input)
    naxes = len(U.check_axes(func, axes, x.ndim))
    st1 = _structure(func, structure1, naxes)
    st2 = ~st1 if structure2 is None else _structure(func, structure2, naxes)
    if origin2 is None:
        origin2 = origin1
    hit = binary_erosion(x, st1, 1, None, None, 0, origin1, axes=axes)
    miss = binary_erosion(~x, st2, 1, None, None, 0, origin2, axes=axes)
    res = hit & miss
    if isinstance(output, em.ndarray):
        output[...] = U.cast_out(res, output.dtype)
        return output
    return res
