"""Spline interpolation of ember.ndimage: map_coordinates, affine_transform, shift, zoom, rotate.

Every output point's input coordinate is computed as an ember array; per axis the coordinate is
folded into the input by the boundary mode (SciPy's ``map_coordinate`` rules), the first tap and
the ``order + 1`` B-spline weights are computed elementwise, and the taps' indices are folded by
the mode's extension. The result is a sum over the ``(order + 1) ** ndim`` tap combinations of a
gather (``ember.take`` on the flattened, prefiltered input) times the product of the weights.
"""

from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from . import _spline as S
from . import _util as U

_TAP_MODE = {
    "mirror": "mirror",
    "constant": "mirror",
    "wrap": "mirror",
    "reflect": "reflect",
    "grid-mirror": "reflect",
    "grid-wrap": "wrap",
    "nearest": "nearest",
    "grid-constant": "cval",
}


def _trunc(x):
    return U.ember_mod().trunc(x)


def _map_coordinate(c, n, mode):
    """Fold float coordinates ``c`` into ``[0, n - 1]`` the way SciPy's geometric transforms do.

    Returns ``(cc, outside)``: ``outside`` (or None) marks points that take ``cval``.
    """
    em = U.ember_mod()
    if mode == "constant":
        return c, (c < 0) | (c > n - 1)
    if mode == "grid-constant":
        return c, None  # interpolated everywhere; taps outside take cval
    if mode == "nearest":
        return c, None  # interpolated everywhere; the taps are clamped (``_fold_taps``)
    if n <= 1:
        return em.zeros_like(c), None
    lo = c < 0
    hi = c > n - 1
    if mode == "mirror":
        s2 = float(2 * n - 2)
        a = s2 * _trunc(-c / s2) + c
        a = em.where(a <= 1 - n, a + s2, -a)
        b = c - s2 * _trunc(c / s2)
        b = em.where(b >= n, s2 - b, b)
    elif mode in ("reflect", "grid-mirror"):
        s2 = float(2 * n)
        a = em.where(c < -s2, s2 * _trunc(-c / s2) + c, c)
        a = em.where(a < -n, a + s2, -a - 1.0)
        b = c - s2 * _trunc(c / s2)
        b = em.where(b >= n, s2 - b - 1.0, b)
    elif mode == "wrap":
        sz = float(n - 1)
        a = c + sz * (_trunc(-c / sz) + 1.0)
        b = c - sz * _trunc(c / sz)
    elif mode == "grid-wrap":
        a = c + n * (_trunc((-1.0 - c) / n) + 1.0)
        b = c - n * _trunc(c / n)
    else:  # pragma: no cover - validated earlier
        raise AssertionError(mode)
    return em.where(lo, a, em.where(hi, b, c)), None


def _fold_taps(idx, n, tap_mode):
    """Integer tap indices folded into ``range(n)``; returns ``(idx, valid or None)``."""
    em = U.ember_mod()
    if tap_mode == "cval":
        valid = (idx >= 0) & (idx < n)
        return em.clip(idx, 0, n - 1), valid
    if tap_mode == "nearest":
        return em.clip(idx, 0, n - 1), None
    if n <= 1:
        return em.zeros_like(idx), None
    if tap_mode == "wrap":
        return idx % n, None
    if tap_mode == "reflect":
        m = idx % (2 * n)
        return em.where(m < n, m, 2 * n - 1 - m), None
    m = idx % (2 * n - 2)
    return em.where(m < n, m, 2 * n - 2 - m), None


def _interpolate(filtered, coords, order, mode, cval, npad, orders=None):
    """Values of ``filtered`` (float work array) at ``coords`` (list of float64 ember arrays).

    ``orders`` optionally gives a spline order per axis (default ``order`` on every axis).
    """
    em = U.ember_mod()
    nd = filtered.ndim
    orders = [order] * nd if orders is None else list(orders)
    shape = tuple(filtered.shape)
    flat = filtered.reshape(-1)
    outside = None
    per_axis = []
    tap_mode = _TAP_MODE[mode]
    stride = 1
    strides = []
    for d in range(nd - 1, -1, -1):
        strides.append(stride)
        stride *= shape[d]
    strides = strides[::-1]
    for d in range(nd):
        n = shape[d]
        c = coords[d]
        order = orders[d]
        if npad:
            c = c + float(npad)
        cc, out_d = _map_coordinate(c, n, mode)
        if out_d is not None:
            outside = out_d if outside is None else (outside | out_d)
        if order & 1:
            start = em.floor(cc) - float(order // 2)
        else:
            start = em.floor(cc + 0.5) - float(order // 2)
        weights = S.spline_weights(cc - start, order) if order > 0 else [None]
        start_i = start.astype(em.int64)
        taps = []
        for j in range(order + 1):
            idx, valid = _fold_taps(start_i + j, n, tap_mode)
            taps.append((idx * strides[d], valid, weights[j]))
        per_axis.append(taps)
    result = None
    for combo in np.ndindex(*[o + 1 for o in orders]):
        flat_idx = None
        valid = None
        weight = None
        for d, j in enumerate(combo):
            idx, v, w = per_axis[d][j]
            flat_idx = idx if flat_idx is None else flat_idx + idx
            if v is not None:
                valid = v if valid is None else (valid & v)
            if w is not None:
                weight = w if weight is None else weight * w
        vals = em.take(flat, flat_idx.reshape(-1)).reshape(tuple(flat_idx.shape))
        if valid is not None:
            vals = em.where(valid, vals, float(cval))
        term = vals if weight is None else vals * weight
        result = term if result is None else em.add(result, term, out=result)
    if outside is not None:
        result = em.where(outside, float(cval), result)
    return result


def _interpolate_separable(x, coords1d, order, mode, cval, npad):
    """Interpolation on a grid whose coordinates are separable (zoom, shift, diagonal affine).

    The tensor-product B-spline sum factorises, so it is done as one 1-D pass per axis: each
    pass gathers ``order + 1`` slabs with ``ember.take`` along that axis and weights them.
    """
    em = U.ember_mod()
    nd = x.ndim
    tap_mode = _TAP_MODE[mode]
    for d in range(nd):
        n = x.shape[d]
        c = coords1d[d]
        if npad:
            c = c + float(npad)
        cc, outside = _map_coordinate(c, n, mode)
        if order & 1:
            start = em.floor(cc) - float(order // 2)
        else:
            start = em.floor(cc + 0.5) - float(order // 2)
        weights = S.spline_weights(cc - start, order) if order > 0 else [None]
        start_i = start.astype(em.int64)
        bshape = [1] * nd
        bshape[d] = c.shape[0]
        acc = None
        for j in range(order + 1):
            idx, valid = _fold_taps(start_i + j, n, tap_mode)
            vals = em.take(x, idx, axis=d)
            if valid is not None:
                vals = em.where(valid.reshape(bshape), vals, float(cval))
            if weights[j] is not None:
                vals = vals * weights[j].astype(x.dtype).reshape(bshape)
            acc = vals if acc is None else em.add(acc, vals, out=acc)
        if outside is not None:
            acc = em.where(outside.reshape(bshape), float(cval), acc)
        x = acc
    return x


def _prepare(func, input, order, mode, cval, prefilter):
    """The prefiltered (and for nearest/grid-constant pre-padded) work array and its padding."""
    em = U.ember_mod()
    work = em.float32 if input.dtype == em.float32 else em.float64
    x = input.astype(work, copy=False)
    npad = 0
    if prefilter and order > 1:
        if mode in ("nearest", "grid-constant"):
            npad = 12
            m = "nearest" if mode == "nearest" else "constant"
            x = U.pad_all(x, [(npad, npad)] * x.ndim, [m] * x.ndim, float(cval))
        for ax in range(x.ndim):
            x = S.spline_filter1d_work(x, order, ax, mode)
    return x, npad


def _common(func, input, order, mode):
    input = U.check_input(func, input)
    order = S._check_order(func, order)
    mode = U.interp_mode(func, mode)
    if input.ndim < 1:
        raise RuntimeError(f"{func}: input and output rank must be > 0")
    return input, order, mode


def _run(func, input, coords_fn, out_shape, output, order, mode, cval, prefilter):
    """Shared driver: complex inputs as real and imaginary parts, output casting."""
    em = U.ember_mod()
    cplx = U.is_complex(input.dtype)
    dtype, out_arr = U.resolve_output(func, output, input, shape=out_shape, complex_output=cplx)
    if cplx:
        cv = complex(cval)
        re = _run_real(em.real(input), coords_fn, order, mode, cv.real, prefilter)
        im = _run_real(em.imag(input), coords_fn, order, mode, cv.imag, prefilter)
        return U.finish(re + 1j * im, dtype, out_arr)
    res = _run_real(input, coords_fn, order, mode, cval, prefilter)
    return U.finish(U.round_out(res, dtype), dtype, out_arr)


def _run_real(input, coords_fn, order, mode, cval, prefilter):
    filtered, npad = _prepare("", input, order, mode, cval, prefilter)
    axis_coords = getattr(coords_fn, "axis_coords", None)
    if axis_coords is not None:
        return _interpolate_separable(
            filtered, axis_coords(filtered.device), order, mode, cval, npad
        )
    coords = coords_fn(filtered.device)
    return _interpolate(filtered, coords, order, mode, cval, npad)


def map_coordinates(
    input, coordinates, output=None, order=3, mode="constant", cval=0.0, prefilter=True
):
    """Map the input to new coordinates by interpolation (``scipy.ndimage.map_coordinates``)."""
    func = "map_coordinates"
    em = U.ember_mod()
    input, order, mode = _common(func, input, order, mode)
    coordinates = U.as_array(coordinates, like=input)
    if U.is_complex(coordinates.dtype):
        raise TypeError(f"{func}: Complex type not supported for coordinates")
    out_shape = tuple(coordinates.shape[1:])
    if coordinates.ndim < 2 and coordinates.shape[0:1] != (input.ndim,) or len(out_shape) < 1:
        raise RuntimeError(f"{func}: input and output rank must be > 0")
    if coordinates.shape[0] != input.ndim:
        raise RuntimeError(
            f"{func}: invalid shape for coordinate array: {tuple(coordinates.shape)} for input "
            f"rank {input.ndim}"
        )

    def coords_fn(device):
        c = coordinates.astype(em.float64, copy=False)
        if c.device != device:
            c = em.asarray(c, device=device)
        return [c[d] for d in range(input.ndim)]

    return _run(func, input, coords_fn, out_shape, output, order, mode, cval, prefilter)


def _grid(device, out_shape, d):
    """``arange(out_shape[d])`` shaped to broadcast along axis ``d`` of the output."""
    em = U.ember_mod()
    shp = [1] * len(out_shape)
    shp[d] = out_shape[d]
    return em.arange(out_shape[d], dtype=em.float64, device=device).reshape(shp)


def _zoom_shift_coords(zooms, shifts, out_shape, grid_mode=False):
    """SciPy's zoom/shift coordinates, in its order of operations: ``(k + shift) * zoom``."""
    em = U.ember_mod()

    def axis_coords(device):
        coords = []
        for h in range(len(out_shape)):
            c = em.arange(out_shape[h], dtype=em.float64, device=device)
            if shifts is not None:
                c = c + float(shifts[h])
            if zooms is not None:
                if grid_mode:
                    c = (c + 0.5) * float(zooms[h]) - 0.5
                else:
                    c = c * float(zooms[h])
            coords.append(c)
        return coords

    def fn(device):
        nd = len(out_shape)
        out = []
        for h, c in enumerate(axis_coords(device)):
            shp = [1] * nd
            shp[h] = out_shape[h]
            out.append(em.broadcast_to(c.reshape(shp), out_shape))
        return out

    fn.axis_coords = axis_coords
    return fn


def _affine_coords(matrix, offset, out_shape, diagonal):
    em = U.ember_mod()
    if diagonal:
        return _zoom_shift_coords(matrix, offset / matrix, out_shape)

    def fn(device):
        coords = []
        for h in range(matrix.shape[0]):
            c = None
            for ll in range(len(out_shape)):
                if matrix[h, ll] == 0:
                    continue
                t = _grid(device, out_shape, ll) * float(matrix[h, ll])
                c = t if c is None else c + t
            c = float(offset[h]) if c is None else c + float(offset[h])
            coords.append(
                em.broadcast_to(
                    em.asarray(c, dtype=em.float64, device=device)
                    if not hasattr(c, "shape")
                    else c,
                    out_shape,
                )
            )
        return coords

    return fn


def affine_transform(
    input,
    matrix,
    offset=0.0,
    output_shape=None,
    output=None,
    order=3,
    mode="constant",
    cval=0.0,
    prefilter=True,
):
    """Apply an affine transformation (``scipy.ndimage.affine_transform``)."""
    func = "affine_transform"
    em = U.ember_mod()
    input, order, mode = _common(func, input, order, mode)
    if output_shape is None:
        output_shape = tuple(output.shape) if isinstance(output, em.ndarray) else input.shape
    output_shape = tuple(int(s) for s in output_shape)
    if len(output_shape) < 1:
        raise RuntimeError(f"{func}: input and output rank must be > 0")
    matrix = U.host_array(func, "matrix", matrix)
    nd = input.ndim
    if matrix.ndim not in (1, 2) or matrix.shape[0] < 1:
        raise RuntimeError(f"{func}: no proper affine matrix provided (shape {matrix.shape})")
    if matrix.ndim == 2 and matrix.shape[1] == nd + 1 and matrix.shape[0] in (nd, nd + 1):
        if matrix.shape[0] == nd + 1:
            expected = [0] * nd + [1]
            if not np.all(matrix[nd] == expected):
                raise ValueError(
                    f"{func}: expected homogeneous transformation matrix with shape "
                    f"{matrix.shape} for image shape {tuple(input.shape)}, but bottom row was not "
                    f"equal to {expected}"
                )
        offset = matrix[:nd, nd]
        matrix = matrix[:nd, :nd]
    if matrix.shape[0] != nd:
        raise RuntimeError(f"{func}: affine matrix has wrong number of rows: {matrix.shape}")
    if matrix.ndim == 2 and matrix.shape[1] != len(output_shape):
        raise RuntimeError(f"{func}: affine matrix has wrong number of columns: {matrix.shape}")
    if matrix.ndim == 1 and len(output_shape) != nd:
        raise RuntimeError(f"{func}: input and output rank must be equal for a diagonal matrix")
    offset = np.asarray(U.normalize_sequence(func, "offset", offset, nd), dtype=np.float64)
    fn = _affine_coords(matrix, offset, output_shape, matrix.ndim == 1)
    return _run(func, input, fn, output_shape, output, order, mode, cval, prefilter)


def shift(input, shift, output=None, order=3, mode="constant", cval=0.0, prefilter=True):
    """Shift an array by spline interpolation (``scipy.ndimage.shift``)."""
    func = "shift"
    input, order, mode = _common(func, input, order, mode)
    sh = np.asarray(U.normalize_sequence(func, "shift", shift, input.ndim), dtype=np.float64)
    fn = _zoom_shift_coords(None, -sh, tuple(input.shape))
    return _run(func, input, fn, tuple(input.shape), output, order, mode, cval, prefilter)


def zoom(
    input,
    zoom,
    output=None,
    order=3,
    mode="constant",
    cval=0.0,
    prefilter=True,
    *,
    grid_mode=False,
):
    """Zoom an array by spline interpolation (``scipy.ndimage.zoom``)."""
    func = "zoom"
    input, order, mode = _common(func, input, order, mode)
    zooms = U.normalize_sequence(func, "zoom", zoom, input.ndim)
    out_shape = tuple(int(round(s * float(z))) for s, z in zip(input.shape, zooms, strict=True))
    if all(float(z) == 1 for z in zooms) and prefilter:
        dtype, out_arr = U.resolve_output(
            func, output, input, shape=out_shape, complex_output=U.is_complex(input.dtype)
        )
        return U.finish(input.copy(), dtype, out_arr)
    if grid_mode:
        suggest = {"constant": "grid-constant", "wrap": "grid-wrap"}.get(mode)
        if suggest is not None:
            warnings.warn(
                f"It is recommended to use mode = {suggest} instead of {mode} when grid_mode "
                "is True.",
                UserWarning,
                stacklevel=2,
            )
    num = np.array(input.shape, dtype=np.float64)
    den = np.array(out_shape, dtype=np.float64)
    if not grid_mode:
        num -= 1
        den -= 1
    factors = np.ones(input.ndim)
    np.divide(num, den, out=factors, where=den != 0)
    fn = _zoom_shift_coords(factors, None, out_shape, grid_mode)
    return _run(func, input, fn, out_shape, output, order, mode, cval, prefilter)


def _cosdg(a):
    r = math.fmod(a, 360.0)
    exact = {0.0: 1.0, 90.0: 0.0, 180.0: -1.0, 270.0: 0.0, -90.0: 0.0, -180.0: -1.0, -270.0: 0.0}
    return exact.get(r, math.cos(math.radians(a)))


def _sindg(a):
    r = math.fmod(a, 360.0)
    exact = {0.0: 0.0, 90.0: 1.0, 180.0: 0.0, 270.0: -1.0, -90.0: -1.0, -180.0: 0.0, -270.0: 1.0}
    return exact.get(r, math.sin(math.radians(a)))


def rotate(
    input,
    angle,
    axes=(1, 0),
    reshape=True,
    output=None,
    order=3,
    mode="constant",
    cval=0.0,
    prefilter=True,
):
    """Rotate an array in the plane of ``axes`` (``scipy.ndimage.rotate``)."""
    func = "rotate"
    input = U.check_input(func, input)
    nd = input.ndim
    if nd < 2:
        raise ValueError(f"{func}: input array should be at least 2D, got ndim={nd}")
    axes = list(axes)
    if len(axes) != 2:
        raise ValueError(f"{func}: axes should contain exactly two values, got {axes}")
    if not all(float(a).is_integer() for a in axes):
        raise ValueError(f"{func}: axes should contain only integer values, got {axes}")
    axes = [operator.index(int(a)) + (nd if a < 0 else 0) for a in axes]
    if any(a < 0 or a >= nd for a in axes):
        raise ValueError(f"{func}: invalid rotation plane specified: axes={axes}")
    axes.sort()
    c, s = _cosdg(float(angle)), _sindg(float(angle))
    rot = np.array([[c, s], [-s, c]])
    img_shape = np.asarray(input.shape)
    in_plane = img_shape[axes]
    if reshape:
        iy, ix = in_plane
        bounds = rot @ np.array([[0, 0, iy, iy], [0, ix, 0, ix]])
        out_plane = (np.ptp(bounds, axis=1) + 0.5).astype(int)
    else:
        out_plane = img_shape[axes]
    out_center = rot @ ((out_plane - 1) / 2)
    in_center = (in_plane - 1) / 2
    plane_offset = in_center - out_center
    out_shape = img_shape.copy()
    out_shape[axes] = out_plane
    out_shape = tuple(int(v) for v in out_shape)
    # one affine map over the whole array: the rotation in the plane, identity elsewhere
    matrix = np.eye(nd)
    offset = np.zeros(nd)
    for i, a in enumerate(axes):
        for j, b in enumerate(axes):
            matrix[a, b] = rot[i, j]
        offset[a] = plane_offset[i]
    input, order, mode = _common(func, input, order, mode)
    if prefilter and order > 1 and nd > 2:
        # SciPy prefilters each 2-D plane on its own: filter only the rotated axes
        fn = _affine_coords(matrix, offset, out_shape, False)
        return _run_planes(func, input, fn, out_shape, output, order, mode, cval, axes)
    fn = _affine_coords(matrix, offset, out_shape, False)
    return _run(func, input, fn, out_shape, output, order, mode, cval, prefilter)


def _run_planes(func, input, coords_fn, out_shape, output, order, mode, cval, axes):
    em = U.ember_mod()
    cplx = U.is_complex(input.dtype)
    dtype, out_arr = U.resolve_output(func, output, input, shape=out_shape, complex_output=cplx)

    def one(x, cv):
        work = em.float32 if x.dtype == em.float32 else em.float64
        x = x.astype(work, copy=False)
        npad = 0
        if mode in ("nearest", "grid-constant"):
            npad = 12
            m = "nearest" if mode == "nearest" else "constant"
            pads = [(npad, npad) if a in axes else (0, 0) for a in range(x.ndim)]
            x = U.pad_all(x, pads, [m] * x.ndim, float(cv))
        for ax in axes:
            x = S.spline_filter1d_work(x, order, ax, mode)
        coords = coords_fn(x.device)
        if npad:
            coords = [c - float(npad) if a not in axes else c for a, c in enumerate(coords)]
        # the axes outside the plane are sampled at integers: order 0 there, as per plane
        orders = [order if a in axes else 0 for a in range(x.ndim)]
        return _interpolate(x, coords, order, mode, cv, npad, orders)

    if cplx:
        cv = complex(cval)
        res = one(em.real(input), cv.real) + 1j * one(em.imag(input), cv.imag)
        return U.finish(res, dtype, out_arr)
    return U.finish(U.round_out(one(input, cval), dtype), dtype, out_arr)


def geometric_transform(
    input,
    mapping,
    output_shape=None,
    output=None,
    order=3,
    mode="constant",
    cval=0.0,
    prefilter=True,
    extra_arguments=(),
    extra_keywords=None,
):
    """Apply an arbitrary geometric transform (``scipy.ndimage.geometric_transform``).

    ``mapping`` is a Python callable from output to input coordinates, called once per output
    point on the host as in SciPy; the coordinates it returns (not the image) then travel to the
    input's device, where ``map_coordinates`` interpolates.
    """
    em = U.ember_mod()
    func = "geometric_transform"
    extra_keywords = {} if extra_keywords is None else extra_keywords
    input, order, mode = _common(func, input, order, mode)
    if output_shape is None:
        output_shape = tuple(output.shape) if isinstance(output, em.ndarray) else input.shape
    output_shape = tuple(int(s) for s in output_shape)
    if len(output_shape) < 1:
        raise RuntimeError(f"{func}: input and output rank must be > 0")
    coords = np.empty((input.ndim,) + output_shape, dtype=np.float64)
    for pos in np.ndindex(*output_shape):
        c = mapping(pos, *extra_arguments, **extra_keywords)
        if len(c) != input.ndim:
            raise RuntimeError(f"{func}: mapping must return {input.ndim} coordinates")
        coords[(slice(None),) + pos] = c
    coords = em.asarray(coords, device=input.device)
    return map_coordinates(input, coords, output, order, mode, cval, prefilter)
