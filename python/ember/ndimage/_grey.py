"""Grey-scale morphology of ember.ndimage: erosion, dilation, opening, closing, gradient.

A flat structuring element (``size``/``footprint``) is the minimum or maximum filter; a
non-flat ``structure`` subtracts (erosion) or adds (dilation) its heights to the shifted slices
before the elementwise minimum/maximum, in float64, cast to the output type as SciPy does.
"""

from __future__ import annotations

import operator

import numpy as np

from . import _rank as R
from . import _util as U


def _grey(func, input, size, footprint, structure, output, mode, cval, origin, axes, is_max):
    em = U.ember_mod()
    if structure is None:
        return R._minmax_nd(func, input, size, footprint, output, mode, cval, origin, axes, is_max)
    input = U.check_input(func, input)
    if U.is_complex(input.dtype):
        raise TypeError(f"{func}: Complex type not supported")
    axes = U.check_axes(func, axes, input.ndim)
    st = U.host_array(func, "structure", structure, dtype=np.float64)
    if st.ndim != len(axes):
        raise RuntimeError(f"{func}: structure array has incorrect shape {st.shape}")
    fp = (
        np.ones(st.shape, bool)
        if footprint is None
        else U.host_array(func, "footprint", footprint, dtype=bool)
    )
    if fp.shape != st.shape:
        raise RuntimeError(f"{func}: footprint and structure shapes differ")
    origins = [operator.index(o) for o in U.normalize_sequence(func, "origin", origin, len(axes))]
    fp_full, full_origin = R._full_footprint(input, axes, fp, origins)
    st_full = st.reshape(fp_full.shape)
    dtype, out_arr = U.resolve_output(func, output, input)
    x = input.astype(em.float64, copy=False)
    padded = R._padded_for_footprint(
        func, x, fp_full, full_origin, mode, float(R._cval_for(input, cval))
    )
    shp = tuple(input.shape)
    op = em.maximum if is_max else em.minimum
    acc = None
    for idx in zip(*np.nonzero(fp_full), strict=True):
        t = padded[tuple(slice(i, i + n) for i, n in zip(idx, shp, strict=True))]
        h = float(st_full[idx])
        t = t + h if is_max else t - h
        acc = t if acc is None else op(acc, t)
    return U.finish(acc, dtype, out_arr)


def grey_erosion(
    input,
    size=None,
    footprint=None,
    structure=None,
    output=None,
    mode="reflect",
    cval=0.0,
    origin=0,
    *,
    axes=None,
):
    """Grey-scale erosion (``scipy.ndimage.grey_erosion``)."""
    func = "grey_erosion"
    if size is None and footprint is None and structure is None:
        raise ValueError(f"{func}: size, footprint, or structure must be specified")
    return _grey(func, input, size, footprint, structure, output, mode, cval, origin, axes, False)


def grey_dilation(
    input,
    size=None,
    footprint=None,
    structure=None,
    output=None,
    mode="reflect",
    cval=0.0,
    origin=0,
    *,
    axes=None,
):
    """Grey-scale dilation (``scipy.ndimage.grey_dilation``): the reflected element."""
    func = "grey_dilation"
    if size is None and footprint is None and structure is None:
        raise ValueError(f"{func}: size, footprint, or structure must be specified")
    if structure is not None:
        structure = U.host_array(func, "structure", structure)
        structure = structure[(slice(None, None, -1),) * structure.ndim]
    if footprint is not None:
        footprint = U.host_array(func, "footprint", footprint, dtype=bool)
        footprint = footprint[(slice(None, None, -1),) * footprint.ndim]
    input = U.check_input(func, input)
    axes_t = U.check_axes(func, axes, input.ndim)
    origins = U.normalize_sequence(func, "origin", origin, len(axes_t))
    for ii in range(len(origins)):
        origins[ii] = -operator.index(origins[ii])
        if footprint is not None:
            sz = footprint.shape[ii]
        elif structure is not None:
            sz = structure.shape[ii]
        elif np.isscalar(size):
            sz = size
        else:
            sz = size[ii]
        if not sz & 1:
            origins[ii] -= 1
    return _grey(func, input, size, footprint, structure, output, mode, cval, origins, axes, True)


def grey_opening(
    input,
    size=None,
    footprint=None,
    structure=None,
    output=None,
    mode="reflect",
    cval=0.0,
    origin=0,
    *,
    axes=None,
):
    """Grey-scale opening: erosion then dilation (``scipy.ndimage.grey_opening``)."""
    tmp = grey_erosion(input, size, footprint, structure, None, mode, cval, origin, axes=axes)
    return grey_dilation(tmp, size, footprint, structure, output, mode, cval, origin, axes=axes)


def grey_closing(
    input,
    size=None,
    footprint=None,
    structure=None,
    output=None,
    mode="reflect",
    cval=0.0,
    origin=0,
    *,
    axes=None,
):
    """Grey-scale closing: dilation then erosion (``scipy.ndimage.grey_closing``)."""
    tmp = grey_dilation(input, size, footprint, structure, None, mode, cval, origin, axes=axes)
    return grey_erosion(tmp, size, footprint, structure, output, mode, cval, origin, axes=axes)


def morphological_gradient(
    input,
    size=None,
    footprint=None,
    structure=None,
    output=None,
    mode="reflect",
    cval=0.0,
    origin=0,
    *,
    axes=None,
):
    """Dilation minus erosion (``scipy.ndimage.morphological_gradient``)."""
    d = grey_dilation(input, size, footprint, structure, None, mode, cval, origin, axes=axes)
    e = grey_erosion(input, size, footprint, structure, None, mode, cval, origin, axes=axes)
    res = d - e
    if output is None:
        return res
    dtype, out_arr = U.resolve_output("morphological_gradient", output, res)
    return U.finish(res, dtype, out_arr)


def white_tophat(
    input,
    size=None,
    footprint=None,
    structure=None,
    output=None,
    mode="reflect",
    cval=0.0,
    origin=0,
    *,
    axes=None,
):
    """Input minus its grey opening (``scipy.ndimage.white_tophat``)."""
    em = U.ember_mod()
    x = U.check_input("white_tophat", input)
    tmp = grey_opening(x, size, footprint, structure, None, mode, cval, origin, axes=axes)
    res = em.logical_xor(x, tmp) if x.dtype == em.bool else x - tmp
    return res if output is None else _store("white_tophat", res, output)


def black_tophat(
    input,
    size=None,
    footprint=None,
    structure=None,
    output=None,
    mode="reflect",
    cval=0.0,
    origin=0,
    *,
    axes=None,
):
    """Grey closing minus the input (``scipy.ndimage.black_tophat``)."""
    em = U.ember_mod()
    x = U.check_input("black_tophat", input)
    tmp = grey_closing(x, size, footprint, structure, None, mode, cval, origin, axes=axes)
    res = em.logical_xor(x, tmp) if x.dtype == em.bool else tmp - x
    return res if output is None else _store("black_tophat", res, output)


def morphological_laplace(
    input,
    size=None,
    footprint=None,
    structure=None,
    output=None,
    mode="reflect",
    cval=0.0,
    origin=0,
    *,
    axes=None,
):
    """Dilation plus erosion minus twice the input (``scipy.ndimage.morphological_laplace``)."""
    x = U.check_input("morphological_laplace", input)
    d = grey_dilation(x, size, footprint, structure, None, mode, cval, origin, axes=axes)
    e = grey_erosion(x, size, footprint, structure, None, mode, cval, origin, axes=axes)
    res = d + e - 2 * x
    return res if output is None else _store("morphological_laplace", res, output)


def _store(func, res, output):
    dtype, out_arr = U.resolve_output(func, output, res)
    return U.finish(res, dtype, out_arr)
