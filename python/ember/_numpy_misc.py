"""NumPy's smaller functions, composed from ember ops (any device): aliases (amax, amin, fabs),
creation (array, copy, asanyarray, asfortranarray-free ndim/shape/size queries), elementwise
compositions (angle, cbrt, exp2, logaddexp2, fmax, fmin, modf, isposinf, isneginf, iscomplex,
isreal, iscomplexobj, isrealobj), manipulation (fliplr, flipud, rot90, append, delete, insert,
trim_zeros, ediff1d), index helpers (ix_, unravel_index, ravel_multi_index, diag_indices,
diag_indices_from, tril_indices, triu_indices, tril_indices_from, triu_indices_from,
fill_diagonal), numerics (gradient, trapezoid, vander, select, sort_complex, matvec, vecmat,
nanprod, nancumsum, nancumprod) and memory queries (shares_memory, may_share_memory)."""

from __future__ import annotations

import builtins
import math
import operator

import numpy as _np

from . import _core
from ._manipulation import _asarray

__all__ = [
    "apply_along_axis",
    "array_equiv",
    "asarray_chkfinite",
    "bartlett",
    "bitwise_count",
    "blackman",
    "block",
    "choose",
    "common_type",
    "compress",
    "cross",
    "extract",
    "fromfunction",
    "hamming",
    "hanning",
    "histogram2d",
    "histogram_bin_edges",
    "i0",
    "isfortran",
    "kaiser",
    "iterable",
    "issubdtype",
    "mask_indices",
    "min_scalar_type",
    "piecewise",
    "place",
    "promote_types",
    "put",
    "putmask",
    "real_if_close",
    "require",
    "resize",
    "rint",
    "rollaxis",
    "row_stack",
    "setxor1d",
    "spacing",
    "unwrap",
    "amax",
    "amin",
    "angle",
    "append",
    "array",
    "asanyarray",
    "cbrt",
    "copy",
    "delete",
    "diag_indices",
    "diag_indices_from",
    "ediff1d",
    "exp2",
    "fabs",
    "fill_diagonal",
    "fliplr",
    "flipud",
    "fmax",
    "fmin",
    "gradient",
    "insert",
    "iscomplex",
    "iscomplexobj",
    "isneginf",
    "isposinf",
    "isreal",
    "isrealobj",
    "isscalar",
    "ix_",
    "logaddexp2",
    "matvec",
    "may_share_memory",
    "modf",
    "nancumprod",
    "nancumsum",
    "nanprod",
    "ndim",
    "ravel_multi_index",
    "rot90",
    "select",
    "shape",
    "shares_memory",
    "size",
    "sort_complex",
    "trapezoid",
    "tril_indices",
    "tril_indices_from",
    "trim_zeros",
    "triu_indices",
    "triu_indices_from",
    "unravel_index",
    "vander",
    "vecmat",
]


def _ember():
    import ember

    return ember


def _inexact(x):
    from ._numpy_more import _inexact as f

    return f(x)


# ---- aliases and queries --------------------------------------------------------------------


def amax(a, axis=None, keepdims=False):
    """max (NumPy's other name)."""
    return _ember().max(_asarray(a), axis=axis, keepdims=keepdims)


def amin(a, axis=None, keepdims=False):
    """min (NumPy's other name)."""
    return _ember().min(_asarray(a), axis=axis, keepdims=keepdims)


def fabs(x, /):
    """|x| as a float (integers convert as NumPy's float loops do); complex is a TypeError."""
    x = _inexact(_asarray(x))
    if x.dtype.kind == "c":
        raise TypeError(f"ember.fabs: complex input is not supported, got dtype {x.dtype}")
    return _ember().abs(x)


def array(object, dtype=None, *, copy=True, ndmin=0, device=None):  # noqa: A002
    """NumPy's array: a new array (a copy unless copy=False allows reusing `object`), with at
    least `ndmin` dimensions."""
    em = _ember()
    x = em.asarray(object, dtype=dtype, copy=True if copy else None, device=device)
    ndmin = operator.index(ndmin)
    if x.ndim < ndmin:
        x = x.reshape((1,) * (ndmin - x.ndim) + tuple(x.shape))
    return x


def copy(a, order="K"):
    """A copy of `a` (C order)."""
    if order not in ("K", "C", "A"):
        raise ValueError(f"ember.copy: only C-ordered copies exist, got order={order!r}")
    return _ember().asarray(a, copy=True)


def asanyarray(a, dtype=None, order=None, *, device=None):
    """asarray (ember has no array subclasses to keep)."""
    return _ember().asarray(a, dtype=dtype, device=device)


def ndim(a):
    return _asarray(a).ndim if not isinstance(a, _core.ndarray) else a.ndim


def shape(a):
    return tuple(a.shape) if isinstance(a, _core.ndarray) else tuple(_np.shape(a))


def size(a, axis=None):
    s = shape(a)
    if axis is None:
        return math.prod(s)
    return s[operator.index(axis)]


def isscalar(element):
    """NumPy's isscalar: Python and NumPy scalars (an ember array, even 0-d, is not one)."""
    return not isinstance(element, _core.ndarray) and _np.isscalar(element)


def iscomplexobj(x):
    return getattr(x, "dtype", None) is not None and _asarray(x).dtype.kind == "c"


def isrealobj(x):
    return not iscomplexobj(x)


# ---- elementwise compositions ---------------------------------------------------------------


def angle(z, deg=False):
    """The argument of complex z (of reals: 0 or pi), in radians or degrees."""
    em = _ember()
    z = _asarray(z)
    if z.dtype.kind == "c":
        a = em.atan2(em.imag(z), em.real(z))
    else:
        zf = _inexact(z)
        a = em.atan2(em.zeros_like(zf), zf)
    return a * (180.0 / math.pi) if deg else a


def cbrt(x, /):
    """The real cube root."""
    em = _ember()
    x = _inexact(_asarray(x))
    if x.dtype.kind == "c":
        raise TypeError(f"ember.cbrt: complex input is not supported, got dtype {x.dtype}")
    r = em.pow(em.abs(x), 1.0 / 3.0)
    # one Newton step from the pow result: close to correctly rounded
    r = em.where((r == 0) | ~em.isfinite(r), r, r - (r * r * r - em.abs(x)) / (3.0 * r * r))
    return em.copysign(r, x)


def exp2(x, /):
    """2**x."""
    return _ember().pow(2.0, _inexact(_asarray(x)))


def logaddexp2(x1, x2, /):
    """log2(2**x1 + 2**x2) without overflow."""
    em = _ember()
    x1, x2 = _inexact(_asarray(x1)), _inexact(_asarray(x2))
    ln2 = math.log(2.0)
    return em.logaddexp(x1 * ln2, x2 * ln2) / ln2


def fmax(x1, x2, /):
    """Elementwise maximum ignoring NaN (NaN only where both are NaN)."""
    em = _ember()
    x1, x2 = _asarray(x1), _asarray(x2)
    if x1.dtype.kind not in "fc" and x2.dtype.kind not in "fc":
        return em.maximum(x1, x2)
    return em.where(em.isnan(x1), x2, em.where(em.isnan(x2), x1, em.maximum(x1, x2)))


def fmin(x1, x2, /):
    """Elementwise minimum ignoring NaN (NaN only where both are NaN)."""
    em = _ember()
    x1, x2 = _asarray(x1), _asarray(x2)
    if x1.dtype.kind not in "fc" and x2.dtype.kind not in "fc":
        return em.minimum(x1, x2)
    return em.where(em.isnan(x1), x2, em.where(em.isnan(x2), x1, em.minimum(x1, x2)))


def modf(x, /):
    """(fractional part, integral part), both with x's sign."""
    em = _ember()
    x = _inexact(_asarray(x))
    if x.dtype.kind == "c":
        raise TypeError(f"ember.modf: complex input is not supported, got dtype {x.dtype}")
    whole = em.trunc(x)
    frac = em.where(em.isinf(x), em.copysign(em.zeros_like(x), x), x - whole)
    return em.copysign(frac, x), whole


def isposinf(x, /):
    em = _ember()
    x = _asarray(x)
    return (
        em.isinf(x) & (x > 0)
        if x.dtype.kind == "f"
        else em.zeros(x.shape, dtype=em.bool, device=x.device)
    )


def isneginf(x, /):
    em = _ember()
    x = _asarray(x)
    return (
        em.isinf(x) & (x < 0)
        if x.dtype.kind == "f"
        else em.zeros(x.shape, dtype=em.bool, device=x.device)
    )


def iscomplex(x):
    """Whether each element has a non-zero imaginary part."""
    em = _ember()
    x = _asarray(x)
    if x.dtype.kind != "c":
        return em.zeros(x.shape, dtype=em.bool, device=x.device)
    return em.imag(x) != 0


def isreal(x):
    """Whether each element has a zero imaginary part."""
    return ~iscomplex(x)


# ---- manipulation ---------------------------------------------------------------------------


def fliplr(m):
    m = _asarray(m)
    if m.ndim < 2:
        raise ValueError(f"ember.fliplr: expected at least 2 dimensions, got {m.ndim}")
    return m[:, ::-1]


def flipud(m):
    m = _asarray(m)
    if m.ndim < 1:
        raise ValueError("ember.flipud: expected at least 1 dimension, got 0")
    return m[::-1]


def rot90(m, k=1, axes=(0, 1)):
    """m rotated by 90 degrees k times, from the first axis towards the second (views)."""
    em = _ember()
    m = _asarray(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("ember.rot90: axes must name 2 axes")
    if m.ndim < 2:
        raise ValueError(f"ember.rot90: expected at least 2 dimensions, got {m.ndim}")
    a0, a1 = (operator.index(a) for a in axes)
    if not (-m.ndim <= a0 < m.ndim and -m.ndim <= a1 < m.ndim) or a0 % m.ndim == a1 % m.ndim:
        raise ValueError(f"ember.rot90: invalid axes {axes} for {m.ndim} dimensions")
    a0, a1 = a0 % m.ndim, a1 % m.ndim
    k = operator.index(k) % 4
    if k == 0:
        return m[...]
    if k == 2:
        return em.flip(em.flip(m, axis=a0), axis=a1)
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return em.permute_dims(em.flip(m, axis=a1), tuple(perm))
    return em.flip(em.permute_dims(m, tuple(perm)), axis=a1)


def append(arr, values, axis=None):
    """arr with values appended (both flattened when axis is None)."""
    em = _ember()
    arr, values = _asarray(arr), _asarray(values)
    if axis is None:
        return em.concat([arr.reshape((-1,)), values.reshape((-1,))])
    return em.concat([arr, values], axis=axis)


def _positions(obj, n, who):
    """Non-negative Python indices of `obj` (int, slice, sequence or array) along an axis of
    length n."""
    if isinstance(obj, slice):
        return list(range(*obj.indices(n)))
    if isinstance(obj, _core.ndarray):
        obj = _ember().asnumpy(obj)
    arr = _np.asarray(obj)
    if arr.dtype == bool:
        if arr.shape != (n,):
            raise ValueError(f"{who}: a boolean mask must have the axis's length {n}")
        return [int(i) for i in _np.flatnonzero(arr)]
    if arr.dtype.kind not in "iu":
        raise IndexError(f"{who}: indices must be integers, slices or a boolean mask")
    out = []
    for i in arr.reshape(-1).tolist():
        if not -n <= i < n:
            raise IndexError(f"{who}: index {i} is out of bounds for an axis of size {n}")
        out.append(i % n)
    return out


def _array_and_axis(arr, axis, who):
    """The array (flattened when axis is None) and the axis, normalized."""
    x = _asarray(arr)
    if axis is None:
        return x.reshape((-1,)), 0
    ax = operator.index(axis)
    if not -x.ndim <= ax < x.ndim:
        raise _core.AxisError(f"{who}: axis {axis} is out of bounds for {x.ndim} dimensions")
    return x, ax % x.ndim


def delete(arr, obj, axis=None):
    """arr without the entries `obj` (int, slice, sequence or mask) along `axis` (of the
    flattened arr when None)."""
    em = _ember()
    who = "ember.delete"
    x, ax = _array_and_axis(arr, axis, who)
    n = x.shape[ax]
    drop = set(_positions(obj, n, who))
    keep = [i for i in range(n) if i not in drop]
    return em.take(x, em.asarray(keep, dtype=em.int64, device=x.device), axis=ax)


def insert(arr, obj, values, axis=None):
    """arr with `values` inserted before the positions `obj` along `axis` (NumPy's insert;
    for a sequence of positions, one value per position, in order)."""
    em = _ember()
    who = "ember.insert"
    x, ax = _array_and_axis(arr, axis, who)
    n = x.shape[ax]
    scalar_pos = isinstance(obj, int) or (hasattr(obj, "ndim") and obj.ndim == 0)
    if isinstance(obj, slice):
        pos = list(range(*obj.indices(n + 1)))
    else:
        raw = [
            int(i)
            for i in _np.asarray(em.asnumpy(obj) if isinstance(obj, _core.ndarray) else obj)
            .reshape(-1)
            .tolist()
        ]
        pos = []
        for i in raw:
            if not -(n + 1) <= i <= n:
                raise IndexError(f"{who}: index {i} is out of bounds for an axis of size {n}")
            pos.append(i % (n + 1) if i < 0 else i)
    v = (
        em.asarray(values, dtype=x.dtype, device=x.device)
        if not isinstance(values, _core.ndarray)
        else values.astype(x.dtype)
    )
    moved = em.moveaxis(x, ax, 0)
    if scalar_pos:
        # the values take the axis's place: broadcast to (k, rest) with k from values' shape
        vv = v if v.ndim else v.reshape((1,))
        vv = em.moveaxis(vv, ax, 0) if vv.ndim == x.ndim else vv
        if vv.ndim < moved.ndim:
            vv = vv.reshape((1,) * (moved.ndim - vv.ndim) + tuple(vv.shape))
            vv = em.broadcast_to(vv, (1,) + tuple(moved.shape[1:]))
        else:
            vv = em.broadcast_to(vv, (vv.shape[0],) + tuple(moved.shape[1:]))
        p = pos[0]
        out = em.concat([moved[:p], vv, moved[p:]], axis=0)
        return em.moveaxis(out, 0, ax)
    k = len(pos)
    vv = em.broadcast_to(
        v.reshape((-1,) + (1,) * (moved.ndim - 1)) if v.ndim == 1 and v.shape[0] == k else v,
        (k,) + tuple(moved.shape[1:]),
    )
    # stable order: the new entry j goes before old index pos[j]; ties keep j's order
    order = sorted(range(k), key=lambda j: pos[j])
    pieces, prev = [], 0
    for j in order:
        p = pos[j]
        pieces.append(moved[prev:p])
        pieces.append(vv[j : j + 1])
        prev = p
    pieces.append(moved[prev:])
    return em.moveaxis(em.concat(pieces, axis=0), 0, ax)


def trim_zeros(filt, trim="fb"):
    """The 1-D array without its leading ('f') and/or trailing ('b') zeros."""
    em = _ember()
    x = _asarray(filt)
    if x.ndim != 1:
        raise ValueError(f"ember.trim_zeros: expected a 1-D array, got shape {x.shape}")
    trim = trim.lower()
    (nz,) = em.nonzero(x != 0)
    if nz.shape[0] == 0:
        return x[:0]
    lo = int(nz[0].item()) if "f" in trim else 0
    hi = int(nz[-1].item()) + 1 if "b" in trim else x.shape[0]
    return x[lo:hi]


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened array, with optional values
    before and after."""
    em = _ember()
    x = _asarray(ary).reshape((-1,))
    parts = []
    if to_begin is not None:
        parts.append(em.asarray(to_begin, device=x.device).astype(x.dtype).reshape((-1,)))
    parts.append(x[1:] - x[:-1])
    if to_end is not None:
        parts.append(em.asarray(to_end, device=x.device).astype(x.dtype).reshape((-1,)))
    return parts[0] if len(parts) == 1 else em.concat(parts)


# ---- index helpers --------------------------------------------------------------------------


def ix_(*args):
    """Open meshes from 1-D sequences: arrays of shape (n, 1, ..), (1, m, ..), ..."""
    em = _ember()
    k = len(args)
    out = []
    for i, a in enumerate(args):
        a = _asarray(a)
        if a.ndim != 1:
            raise ValueError("ember.ix_: the inputs must be 1-D")
        if a.dtype == em.bool:
            (a,) = em.nonzero(a)
        out.append(a.reshape((1,) * i + (a.shape[0],) + (1,) * (k - i - 1)))
    return tuple(out)


def unravel_index(indices, shape, order="C"):
    """The coordinate arrays of flat indices in an array of `shape`."""
    em = _ember()
    who = "ember.unravel_index"
    idx = _asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{who}: indices must be integers, got dtype {idx.dtype}")
    dims = tuple(operator.index(d) for d in (shape if hasattr(shape, "__len__") else (shape,)))
    total = math.prod(dims)
    if idx.size and (int(em.min(idx).item()) < 0 or int(em.max(idx).item()) >= total):
        raise ValueError(f"{who}: an index is out of bounds for an array of size {total}")
    if order not in ("C", "F"):
        raise ValueError(f"{who}: order must be 'C' or 'F', got {order!r}")
    rest = idx.astype(em.int64)
    coords = []
    for d in reversed(dims) if order == "C" else dims:
        coords.append(em.remainder(rest, d))
        rest = em.floor_divide(rest, d)
    return tuple(reversed(coords)) if order == "C" else tuple(coords)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """The flat indices of coordinate arrays in an array of shape `dims` (mode 'raise',
    'wrap' or 'clip')."""
    em = _ember()
    who = "ember.ravel_multi_index"
    dims = tuple(operator.index(d) for d in dims)
    coords = [_asarray(c).astype(em.int64) for c in multi_index]
    if len(coords) != len(dims):
        raise ValueError(f"{who}: {len(coords)} coordinate arrays for {len(dims)} dimensions")
    modes = mode if isinstance(mode, tuple | list) else (mode,) * len(dims)
    fixed = []
    for c, d, m in zip(coords, dims, modes, strict=True):
        if m == "wrap":
            c = em.remainder(c, d)
        elif m == "clip":
            c = em.clip(c, 0, d - 1)
        elif m == "raise":
            if c.size and (int(em.min(c).item()) < 0 or int(em.max(c).item()) >= d):
                raise ValueError(f"{who}: invalid entry in coordinates array")
        else:
            raise ValueError(f"{who}: mode must be 'raise', 'wrap' or 'clip', got {m!r}")
        fixed.append(c)
    seq = list(zip(fixed, dims, strict=True))
    if order == "F":
        seq = seq[::-1]
    elif order != "C":
        raise ValueError(f"{who}: order must be 'C' or 'F', got {order!r}")
    flat = None
    for c, d in seq:
        flat = c if flat is None else flat * d + c
    return flat


def diag_indices(n, ndim=2):
    em = _ember()
    i = em.arange(operator.index(n))
    return (i,) * operator.index(ndim)


def diag_indices_from(arr):
    a = _asarray(arr)
    if a.ndim < 2 or len(set(a.shape)) != 1:
        raise ValueError("ember.diag_indices_from: the array must be square, of at least 2-d")
    em = _ember()
    i = em.arange(a.shape[0], device=a.device)
    return (i,) * a.ndim


def _tri_indices(n, k, m, lower, device=None):
    em = _ember()
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    r = em.arange(n, device=device)[:, None]
    c = em.arange(m, device=device)[None, :]
    mask = (c - r <= k) if lower else (c - r >= k)
    return em.nonzero(mask)


def tril_indices(n, k=0, m=None):
    return _tri_indices(n, operator.index(k), m, True)


def triu_indices(n, k=0, m=None):
    return _tri_indices(n, operator.index(k), m, False)


def tril_indices_from(arr, k=0):
    a = _asarray(arr)
    if a.ndim != 2:
        raise ValueError("ember.tril_indices_from: the array must be 2-d")
    return _tri_indices(a.shape[0], operator.index(k), a.shape[1], True, a.device)


def triu_indices_from(arr, k=0):
    a = _asarray(arr)
    if a.ndim != 2:
        raise ValueError("ember.triu_indices_from: the array must be 2-d")
    return _tri_indices(a.shape[0], operator.index(k), a.shape[1], False, a.device)


def fill_diagonal(a, val, wrap=False):
    """Writes `val` on the main diagonal of `a` in place (NumPy's rules: all dimensions equal
    beyond 2-d; for tall 2-d arrays, `wrap` restarts the diagonal below it)."""
    em = _ember()
    who = "ember.fill_diagonal"
    if not isinstance(a, _core.ndarray):
        raise TypeError(f"{who}: expected an ember array, got {type(a).__name__}")
    if a.ndim < 2:
        raise ValueError(f"{who}: the array must be at least 2-d")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError(f"{who}: all dimensions of the input must be of equal length")
    if a.ndim == 2:
        rows, cols = a.shape
        step = cols + 1
        end = rows * cols if wrap else builtins.min(rows, cols) * cols
    else:
        step = sum(a.shape[0] ** j for j in range(a.ndim))
        end = a.size
    target = _flat_view(a, who)[:end:step]
    v = _asarray(val) if not isinstance(val, bool | int | float | complex) else val
    if isinstance(v, _core.ndarray) and v.size != 1:
        reps = -(-target.shape[0] // builtins.max(v.size, 1))
        v = em.tile(v.reshape((-1,)), reps)[: target.shape[0]]
    target[...] = v


# ---- numerics -------------------------------------------------------------------------------


def gradient(f, *varargs, axis=None, edge_order=1):
    """Second-order central differences inside and first- or second-order one-sided ones at the
    ends (NumPy's gradient), for uniform spacings (scalars) or coordinate arrays."""
    em = _ember()
    who = "ember.gradient"
    y = _inexact(_asarray(f))
    if edge_order not in (1, 2):
        raise ValueError(f"{who}: edge_order must be 1 or 2, got {edge_order}")
    axes = (
        list(range(y.ndim)) if axis is None else ([axis] if isinstance(axis, int) else list(axis))
    )
    axes = [operator.index(a) % y.ndim for a in axes]
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and (
        isinstance(varargs[0], int | float) or getattr(varargs[0], "ndim", 1) == 0
    ):
        spacing = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError(f"{who}: expected 0, 1 or {len(axes)} spacings, got {len(varargs)}")
    out = []
    for ax, h in zip(axes, spacing, strict=True):
        n = y.shape[ax]
        if n < edge_order + 1:
            raise ValueError(
                f"{who}: an axis of length {n} is too short for edge_order {edge_order}"
            )
        yk = em.moveaxis(y, ax, 0)
        scalar_h = isinstance(h, int | float) or getattr(h, "ndim", 1) == 0
        if scalar_h:
            h = float(h)
            inner = (yk[2:] - yk[:-2]) / (2.0 * h)
            if edge_order == 1:
                first = (yk[1] - yk[0]) / h
                last = (yk[-1] - yk[-2]) / h
            else:
                first = (-1.5 * yk[0] + 2.0 * yk[1] - 0.5 * yk[2]) / h
                last = (0.5 * yk[-3] - 2.0 * yk[-2] + 1.5 * yk[-1]) / h
        else:
            x = _asarray(h).astype(em.float64).to(y.device)
            if x.shape != (n,):
                raise ValueError(f"{who}: coordinates must have the axis's length {n}")
            d = x[1:] - x[:-1]
            shape = (-1,) + (1,) * (yk.ndim - 1)
            d1, d2 = d[:-1].reshape(shape), d[1:].reshape(shape)
            a = -d2 / (d1 * (d1 + d2))
            b = (d2 - d1) / (d1 * d2)
            c = d1 / (d2 * (d1 + d2))
            inner = a * yk[:-2] + b * yk[1:-1] + c * yk[2:]
            if edge_order == 1:
                first = (yk[1] - yk[0]) / d[0]
                last = (yk[-1] - yk[-2]) / d[-1]
            else:
                h1, h2 = d[0], d[1]
                first = (
                    -(2.0 * h1 + h2) / (h1 * (h1 + h2)) * yk[0]
                    + (h1 + h2) / (h1 * h2) * yk[1]
                    - h1 / (h2 * (h1 + h2)) * yk[2]
                )
                h1, h2 = d[-2], d[-1]
                last = (
                    h2 / (h1 * (h1 + h2)) * yk[-3]
                    - (h1 + h2) / (h1 * h2) * yk[-2]
                    + (2.0 * h2 + h1) / (h2 * (h1 + h2)) * yk[-1]
                )
        g = em.concat([first[None], inner, last[None]], axis=0)
        out.append(em.moveaxis(g.astype(y.dtype), 0, ax))
    return out[0] if len(out) == 1 else tuple(out)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of y by the trapezoidal rule along `axis` (x: sample points, or spacing
    dx)."""
    em = _ember()
    y = _inexact(_asarray(y))
    yk = em.moveaxis(y, operator.index(axis), -1)
    mids = (yk[..., 1:] + yk[..., :-1]) * 0.5
    if x is None:
        return em.sum(mids, axis=-1) * dx
    xs = _asarray(x)
    xs = em.moveaxis(xs, operator.index(axis), -1) if xs.ndim > 1 else xs
    return em.sum(mids * (xs[..., 1:] - xs[..., :-1]), axis=-1)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D x: columns x**(N-1), ..., x**0 (reversed if
    increasing)."""
    em = _ember()
    x = _asarray(x)
    if x.ndim != 1:
        raise ValueError(f"ember.vander: x must be 1-D, got shape {x.shape}")
    n = x.shape[0] if N is None else operator.index(N)
    p = em.arange(n, device=x.device)
    if not increasing:
        p = em.flip(p)
    base = x.astype(em.int64) if x.dtype.kind in "bu" or x.dtype == em.bool else x
    return em.pow(base[:, None], p[None, :].astype(base.dtype))


def select(condlist, choicelist, default=0):
    """The element of the first choice whose condition holds, else `default`."""
    em = _ember()
    if len(condlist) != len(choicelist):
        raise ValueError("ember.select: condlist and choicelist must have the same length")
    if not condlist:
        raise ValueError("ember.select: condlist must not be empty")
    conds = [_asarray(c) for c in condlist]
    for c in conds:
        if c.dtype != em.bool:
            raise TypeError(f"ember.select: conditions must be boolean, got dtype {c.dtype}")
    choices = [_asarray(c) for c in choicelist]
    t = em.result_type(*choices, _asarray(default))
    out = em.asarray(default, dtype=t, device=conds[0].device)
    for c, v in zip(reversed(conds), reversed(choices), strict=True):
        out = em.where(c, v.astype(t), out)
    return out


def sort_complex(a):
    """The array sorted by real part, then imaginary part, as complex."""
    em = _ember()
    x = _asarray(a)
    if x.dtype.kind != "c":
        x = x.astype(em.complex64 if x.dtype.kind in "biu" and x.itemsize <= 2 else em.complex128)
    return em.sort(x)


def matvec(x1, x2, /):
    """Matrix-vector products over broadcast leading dimensions: (..., m, n) x (..., n)."""
    em = _ember()
    return em.matmul(_asarray(x1), _asarray(x2)[..., None])[..., 0]


def vecmat(x1, x2, /):
    """Vector-matrix products (conjugating the vector): (..., n) x (..., n, m)."""
    em = _ember()
    v = _asarray(x1)
    if v.dtype.kind == "c":
        v = em.conj(v)
    return em.matmul(v[..., None, :], _asarray(x2))[..., 0, :]


def nanprod(a, axis=None, dtype=None, keepdims=False):
    """The product treating NaN as 1."""
    em = _ember()
    x = _asarray(a)
    if x.dtype.kind in "fc":
        x = em.where(em.isnan(x), em.ones_like(x), x)
    return em.prod(x, axis=axis, dtype=dtype, keepdims=keepdims)


def nancumsum(a, axis=None, dtype=None):
    """cumsum treating NaN as 0."""
    em = _ember()
    x = _asarray(a)
    if x.dtype.kind in "fc":
        x = em.where(em.isnan(x), em.zeros_like(x), x)
    return em.cumsum(x, axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None):
    """cumprod treating NaN as 1."""
    em = _ember()
    x = _asarray(a)
    if x.dtype.kind in "fc":
        x = em.where(em.isnan(x), em.ones_like(x), x)
    return em.cumprod(x, axis=axis, dtype=dtype)


# ---- memory queries -------------------------------------------------------------------------


def _extent(x):
    base, off = _core._memory_base(x)
    lo = hi = off
    for n, s in zip(x.shape, x.strides, strict=True):
        if n == 0:
            return base, off, off  # no bytes at all
        if s > 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return base, lo, hi + x.itemsize


def may_share_memory(a, b, max_work=None):
    """Whether the byte ranges of two arrays overlap (may share memory)."""
    if not isinstance(a, _core.ndarray) or not isinstance(b, _core.ndarray):
        return False
    ba, la, ha = _extent(a)
    bb, lb, hb = _extent(b)
    return ba == bb and la < hb and lb < ha and la < ha and lb < hb


_MAX_EXACT = 1 << 22  # elements enumerated by shares_memory's exact answer


def shares_memory(a, b, max_work=None):
    """Whether two arrays have a byte in common (exactly: their elements' byte ranges are
    compared; ValueError when that would take more than max_work elements)."""
    if not may_share_memory(a, b):
        return False
    limit = _MAX_EXACT if max_work is None else operator.index(max_work)
    if a.size + b.size > limit:
        raise ValueError(
            f"ember.shares_memory: deciding needs more than max_work={limit} elements of work"
        )
    _, oa = _core._memory_base(a)
    _, ob = _core._memory_base(b)

    def starts(x, off):
        s = _np.full((1,) * x.ndim, off, dtype=_np.int64)
        for k, (n, st) in enumerate(zip(x.shape, x.strides, strict=True)):
            shape = [1] * x.ndim
            shape[k] = n
            s = s + (_np.arange(n, dtype=_np.int64) * st).reshape(shape)
        return _np.unique(s.reshape(-1))

    sa, sb = starts(a, oa), starts(b, ob)
    # element j of b overlaps some element of a when a starts in (start_b - size_a, start_b +
    # size_b)
    i = _np.searchsorted(sa, sb - a.itemsize, side="right")
    ok = i < sa.size
    return bool(_np.any(sa[_np.minimum(i, sa.size - 1)][ok] < (sb + b.itemsize)[ok]))


# ---- selection and placement --------------------------------------------------------------


def choose(a, choices, out=None, mode="raise"):
    """choices[a[i]][i] for each i (choices broadcast against a); mode 'raise', 'wrap' or
    'clip'."""
    em = _ember()
    who = "ember.choose"
    idx = _asarray(a)
    if idx.dtype.kind not in "iub":
        raise TypeError(f"{who}: indices must be integers, got dtype {idx.dtype}")
    cs = [_asarray(c) for c in choices]
    n = len(cs)
    if n == 0:
        raise ValueError(f"{who}: choices must not be empty")
    idx = idx.astype(em.int64)
    if mode == "wrap":
        idx = em.remainder(idx, n)
    elif mode == "clip":
        idx = em.clip(idx, 0, n - 1)
    elif mode == "raise":
        if idx.size and (int(em.min(idx).item()) < 0 or int(em.max(idx).item()) >= n):
            raise ValueError(f"{who}: invalid entry in choice array")
    else:
        raise ValueError(f"{who}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    t = em.result_type(*cs)
    r = em.zeros((), dtype=t, device=idx.device)
    for k in range(n - 1, -1, -1):
        r = em.where(idx == k, cs[k].astype(t), r)
    shape = em.broadcast_shapes(idx.shape, *(c.shape for c in cs))
    r = em.broadcast_to(r, shape).copy()
    if out is not None:
        out[...] = r
        return out
    return r


def compress(condition, a, axis=None):
    """The slices of `a` along `axis` (of the flattened a when None) where the 1-D condition
    holds (a shorter condition counts as false beyond its end)."""
    em = _ember()
    c = _asarray(condition).astype(em.bool).reshape((-1,))
    x = _asarray(a)
    if axis is None:
        x, axis = x.reshape((-1,)), 0
    ax = operator.index(axis) % builtins.max(x.ndim, 1)
    n = x.shape[ax]
    if c.shape[0] > n:
        raise IndexError(
            f"ember.compress: the condition is longer ({c.shape[0]}) than the axis ({n})"
        )
    (keep,) = em.nonzero(c)
    return em.take(x, keep, axis=ax)


def extract(condition, arr):
    """The elements of the flattened arr where the flattened condition is true."""
    em = _ember()
    return _asarray(arr).reshape((-1,))[_asarray(condition).astype(em.bool).reshape((-1,))]


def place(arr, mask, vals):
    """Writes vals (repeated as needed) into arr where mask is true, in order, in place."""
    em = _ember()
    m = _asarray(mask).astype(em.bool)
    (pos,) = em.nonzero(m.reshape((-1,)))
    k = pos.shape[0]
    if k == 0:
        return
    v = _asarray(vals).reshape((-1,)).astype(arr.dtype)
    if v.shape[0] == 0:
        raise ValueError("ember.place: cannot place from an empty vals array")
    v = em.tile(v, -(-k // v.shape[0]))[:k]
    flat = _flat_view(arr, "ember.place")
    flat[pos] = v


def _flat_view(a, who):
    if not isinstance(a, _core.ndarray):
        raise TypeError(f"{who}: expected an ember array, got {type(a).__name__}")
    flat = a.reshape((-1,))
    if a.size and (flat.strides[0] != a.itemsize or not may_share_memory(flat, a)):
        raise ValueError(f"{who}: the array must be C-contiguous")
    return flat


def put(a, ind, v, mode="raise"):
    """a.flat[ind] = v (v repeated as needed), in place; mode 'raise', 'wrap' or 'clip'."""
    em = _ember()
    who = "ember.put"
    flat = _flat_view(a, who)
    idx = _asarray(ind).reshape((-1,)).astype(em.int64)
    n = flat.shape[0]
    if idx.shape[0] == 0:
        return
    if mode == "wrap":
        idx = em.remainder(idx, n)
    elif mode == "clip":
        idx = em.clip(idx, 0, n - 1)
    elif mode == "raise":
        lo, hi = int(em.min(idx).item()), int(em.max(idx).item())
        if lo < -n or hi >= n:
            bad = lo if lo < -n else hi
            raise IndexError(f"{who}: index {bad} is out of bounds for size {n}")
    else:
        raise ValueError(f"{who}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    vals = _asarray(v).reshape((-1,)).astype(a.dtype)
    k = idx.shape[0]
    vals = em.tile(vals, -(-k // vals.shape[0]))[:k]
    flat[idx] = vals


def putmask(a, mask, values):
    """a[i] = values[i % len(values)] where mask[i], in place (NumPy's putmask)."""
    em = _ember()
    flat = _flat_view(a, "ember.putmask")
    m = em.broadcast_to(_asarray(mask).astype(em.bool), a.shape).reshape((-1,))
    v = _asarray(values).reshape((-1,)).astype(a.dtype)
    if v.shape[0] == 0:
        return
    n = flat.shape[0]
    full = em.tile(v, -(-n // v.shape[0]))[:n]
    flat[...] = em.where(m, full, flat)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-vectors (NumPy's cross; 2-vectors give the z component)."""
    em = _ember()
    x, y = _asarray(a), _asarray(b)
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = em.moveaxis(x, axisa, -1), em.moveaxis(y, axisb, -1)
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError(
            "ember.cross: incompatible dimensions for cross product (dimension must be 2 or 3)"
        )
    if x.shape[-1] == 2 and y.shape[-1] == 2:
        return x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0]
    if x.shape[-1] == 2:
        x = em.concat([x, em.zeros_like(x[..., :1])], axis=-1)
    if y.shape[-1] == 2:
        y = em.concat([y, em.zeros_like(y[..., :1])], axis=-1)
    x, y = em.broadcast_arrays(x, y)
    r = em.linalg.cross(x, y, axis=-1)
    return em.moveaxis(r, -1, axisc)


# ---- windows ------------------------------------------------------------------------------


def _window(M, f):
    em = _ember()
    M = operator.index(M)
    if M < 1:
        return em.zeros(0)
    if M == 1:
        return em.ones(1)
    n = em.arange(M).astype(em.float64)
    return f(n, M)


def bartlett(M):
    em = _ember()
    return _window(M, lambda n, M: 1.0 - em.abs(2.0 * n / (M - 1) - 1.0))


def hanning(M):
    em = _ember()
    return _window(M, lambda n, M: 0.5 - 0.5 * em.cos(2.0 * math.pi * n / (M - 1)))


def hamming(M):
    em = _ember()
    return _window(M, lambda n, M: 0.54 - 0.46 * em.cos(2.0 * math.pi * n / (M - 1)))


def blackman(M):
    em = _ember()
    return _window(
        M,
        lambda n, M: (
            0.42
            - 0.5 * em.cos(2.0 * math.pi * n / (M - 1))
            + 0.08 * em.cos(4.0 * math.pi * n / (M - 1))
        ),
    )


def kaiser(M, beta):
    """The Kaiser window of M points with shape parameter beta (float64)."""
    em = _ember()
    beta = float(beta)
    return _window(
        M,
        lambda n, M: (
            i0(beta * em.sqrt(1.0 - ((n - (M - 1) / 2) / ((M - 1) / 2)) ** 2))
            / float(em.asnumpy(i0(em.asarray(beta))))
        ),
    )


_I0_SWITCH = 25.0  # the power series below, the asymptotic expansion above


def i0(x, /):
    """The modified Bessel function of the first kind, order 0, elementwise (NumPy's i0:
    integers compute in float64, complex input is refused). Differentiable: it is composed of
    ember ops. For |x| <= 25 the power series sum (x^2/4)^k / (k!)^2 (positive terms, 60 of
    them); above, e^|x| / sqrt(2 pi |x|) times the asymptotic series sum a_k / |x|^k,
    a_k = a_{k-1} (2k-1)^2 / (8k), whose smallest term there is below 1e-21 of the sum."""
    em = _ember()
    x = _asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("ember.i0: complex input is not supported")
    if x.dtype.kind != "f":
        x = x.astype(em.float64)
    a = em.abs(x)
    small = em.minimum(a, _I0_SWITCH)
    q = small * small * 0.25
    term = em.ones_like(a)
    series = term
    for k in range(1, 61):
        term = term * q * (1.0 / (k * k))
        series = series + term
    big = em.maximum(a, _I0_SWITCH)
    inv = 1.0 / big
    coef, term, asym = 1.0, em.ones_like(a), em.ones_like(a)
    for k in range(1, 31):
        coef *= (2 * k - 1) ** 2 / (8 * k)
        term = term * inv
        asym = asym + coef * term
    asym = asym * em.exp(big) / em.sqrt(2.0 * math.pi * big)
    return em.where(a <= _I0_SWITCH, series, asym)


# ---- more -----------------------------------------------------------------------------------


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """The bin edges histogram would use."""
    from ._sets import histogram

    return histogram(a, bins=bins, range=range, weights=weights)[1]


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """(H, xedges, yedges): the 2-D histogram of points (x, y)."""
    em = _ember()
    from ._sets import bincount, histogram

    x, y = _asarray(x).reshape((-1,)), _asarray(y).reshape((-1,))
    if x.shape != y.shape:
        raise ValueError("ember.histogram2d: x and y must have the same length")
    bx, by = (bins, bins) if not isinstance(bins, list | tuple) else bins
    rx, ry = (None, None) if range is None else range
    ex = histogram(x, bins=bx, range=rx)[1]
    ey = histogram(y, bins=by, range=ry)[1]
    nx, ny = ex.shape[0] - 1, ey.shape[0] - 1
    inside = (x >= ex[0]) & (x <= ex[-1]) & (y >= ey[0]) & (y <= ey[-1])
    ix = em.clip(em.searchsorted(ex, x.astype(ex.dtype), side="right") - 1, 0, nx - 1)
    iy = em.clip(em.searchsorted(ey, y.astype(ey.dtype), side="right") - 1, 0, ny - 1)
    flat = (ix * ny + iy)[inside]
    w = None if weights is None else _asarray(weights).reshape((-1,))[inside]
    h = bincount(flat, weights=w, minlength=nx * ny).reshape((nx, ny))
    if density:
        area = (ex[1:] - ex[:-1])[:, None] * (ey[1:] - ey[:-1])[None, :]
        h = h.astype(em.float64) / (area * em.sum(h))
    elif w is None:
        h = h.astype(em.float64)  # NumPy's histogram2d counts in float64
    return h, ex, ey


def setxor1d(ar1, ar2, assume_unique=False):
    """The sorted values in exactly one of the arrays."""
    em = _ember()
    from ._sets import isin, unique

    a = _asarray(ar1).reshape((-1,))
    b = _asarray(ar2).reshape((-1,))
    ua, ub = (a, b) if assume_unique else (unique(a), unique(b))
    both = em.concat([ua[isin(ua, ub, invert=True)], ub[isin(ub, ua, invert=True)]])
    return em.sort(both)


def rint(x, /):
    """Rounds to the nearest integer, halves to even (NumPy's rint: round)."""
    return _ember().round(_asarray(x))


def rollaxis(a, axis, start=0):
    """NumPy's rollaxis: moves `axis` to before position `start`."""
    em = _ember()
    x = _asarray(a)
    n = x.ndim
    axis = operator.index(axis) % builtins.max(n, 1)
    start = operator.index(start)
    if start < 0:
        start += n
    if not 0 <= start <= n:
        raise _core.AxisError(f"ember.rollaxis: start {start} is out of range for {n} axes")
    if axis < start:
        start -= 1
    return em.moveaxis(x, axis, start) if axis != start else x[...]


def row_stack(tup):
    """vstack (NumPy's deprecated name)."""
    return _ember().vstack(tup)


def resize(a, new_shape):
    """A new array of new_shape filled with a's elements, repeated in order."""
    em = _ember()
    x = _asarray(a).reshape((-1,))
    shape = (
        (operator.index(new_shape),)
        if not hasattr(new_shape, "__len__")
        else tuple(operator.index(d) for d in new_shape)
    )
    if any(d < 0 for d in shape):
        raise ValueError("ember.resize: all elements of new_shape must be non-negative")
    n = math.prod(shape)
    if x.shape[0] == 0 or n == 0:
        return em.zeros(shape, dtype=x.dtype, device=x.device)
    return em.tile(x, -(-n // x.shape[0]))[:n].reshape(shape)


def unwrap(p, discont=None, axis=-1, *, period=2 * math.pi):
    """Unwraps phase jumps larger than discont (default period / 2) along axis."""
    em = _ember()
    x = _inexact(_asarray(p))
    ax = operator.index(axis) % builtins.max(x.ndim, 1)
    xm = em.moveaxis(x, ax, -1)
    if xm.shape[-1] < 2:
        return x[...]
    d = xm[..., 1:] - xm[..., :-1]
    half = period / 2
    discont = half if discont is None else builtins.max(discont, half)
    dd = em.remainder(d + half, period) - half
    dd = em.where((dd == -half) & (d > 0), half, dd)
    corr = em.where(em.abs(d) < discont, 0.0, dd - d)
    fixed = em.concat([xm[..., :1], xm[..., 1:] + em.cumsum(corr, axis=-1)], axis=-1)
    return em.moveaxis(fixed, -1, ax)


def real_if_close(a, tol=100):
    """The real part when every imaginary part is within tol machine epsilons of 0."""
    em = _ember()
    x = _asarray(a)
    if x.dtype.kind != "c":
        return x
    eps = em.finfo(x.dtype).eps
    t = tol * eps if tol > 1 else tol
    return em.real(x) if bool(em.all(em.abs(em.imag(x)) < t).item()) else x


def require(a, dtype=None, requirements=None, *, like=None):
    """asarray (every ember array is aligned, writeable and owns or views C-ordered memory;
    'F' and 'FORTRAN' are not available)."""
    reqs = {r.upper() for r in (requirements or [])}
    if reqs & {"F", "F_CONTIGUOUS", "FORTRAN"}:
        raise ValueError("ember.require: Fortran-ordered arrays are not supported")
    from ._numpy_more import ascontiguousarray

    x = _ember().asarray(a, dtype=dtype)
    return ascontiguousarray(x) if reqs & {"C", "C_CONTIGUOUS", "CONTIGUOUS"} and x.ndim else x


def iterable(y):
    try:
        iter(y)
    except TypeError:
        return False
    return True


def promote_types(type1, type2):
    """The smallest dtype both cast to safely (the dtypes' result_type)."""
    return _ember().result_type(type1, type2)


def issubdtype(arg1, arg2):
    """NumPy's issubdtype for ember dtypes, with NumPy's abstract types as the second
    argument (np.floating, np.integer, ...)."""
    em = _ember()
    kinds = {
        _np.bool_: "bool",
        _np.signedinteger: "signed integer",
        _np.unsignedinteger: "unsigned integer",
        _np.integer: "integral",
        _np.floating: "real floating",
        _np.complexfloating: "complex floating",
        _np.inexact: ("real floating", "complex floating"),
        _np.number: "numeric",
        _np.generic: ("bool", "numeric"),
    }
    d1 = getattr(arg1, "dtype", arg1)
    if arg2 in kinds:
        return em.isdtype(d1, kinds[arg2])
    return d1 == getattr(arg2, "dtype", arg2)


def common_type(*arrays):
    """The inexact dtype all arrays convert to (integers count as float64)."""
    em = _ember()
    ts = []
    for a in arrays:
        d = _asarray(a).dtype
        ts.append(em.float64 if d.kind in "biu" else d)
    return em.result_type(*ts)


def min_scalar_type(a):
    """The smallest dtype that holds the value (NumPy's rule, for Python and NumPy scalars)."""
    if isinstance(a, _core.ndarray):
        return a.dtype
    return getattr(_ember(), str(_np.min_scalar_type(a)))


def isfortran(a):
    """Whether a is Fortran-ordered and not C-ordered (never true of ember's 2-d+ arrays
    except transposed views)."""
    x = _asarray(a)
    if x.ndim < 2:
        return False
    expected = x.itemsize
    for n, s in zip(x.shape, x.strides, strict=True):
        if n != 1 and s != expected:
            return False
        expected *= n
    from ._numpy_more import _is_c_contiguous

    return not _is_c_contiguous(x)


def array_equiv(a1, a2):
    """Whether the arrays are shape-consistent (broadcastable) and equal everywhere."""
    em = _ember()
    x, y = _asarray(a1), _asarray(a2)
    try:
        em.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return False
    return bool(em.all(x == y).item())


def asarray_chkfinite(a, dtype=None):
    """asarray, raising ValueError when the array holds inf or NaN."""
    em = _ember()
    x = em.asarray(a, dtype=dtype)
    if x.dtype.kind in "fc" and not bool(em.all(em.isfinite(x)).item()):
        raise ValueError("ember.asarray_chkfinite: array must not contain infs or NaNs")
    return x


def spacing(x, /):
    """The distance from x to the next float away from zero (negative for negative x)."""
    em = _ember()
    x = _inexact(_asarray(x))
    if x.dtype.kind == "c":
        raise TypeError(f"ember.spacing: complex input is not supported, got dtype {x.dtype}")
    inf = em.full_like(x, float("inf"))
    return em.where(x < 0, em.nextafter(x, -inf) - x, em.nextafter(x, inf) - x)


def bitwise_count(x, /):
    """The number of 1 bits of |x| (uint8)."""
    em = _ember()
    x = _asarray(x)
    if x.dtype.kind not in "biu":
        raise TypeError(f"ember.bitwise_count: expected integers, got dtype {x.dtype}")
    if x.dtype.kind == "b":
        return x.astype(em.uint8)
    v = x
    if x.dtype.kind == "i":
        v = em.where(x < 0, -x, x)  # the magnitude; the most negative value wraps to itself
    u = getattr(em, f"uint{8 * x.itemsize}")
    v = v.view(u)
    count = em.zeros(x.shape, dtype=em.uint8, device=x.device)
    for _ in range(8 * x.itemsize):
        count = count + (v & 1).astype(em.uint8)
        v = v >> 1
    return count


def fromfunction(function, shape, *, dtype=float, device=None, **kwargs):
    """function(*indices) with one index array per dimension of `shape`."""
    em = _ember()
    dt = em.float64 if dtype is float else dtype
    grids = em.indices(tuple(shape), dtype=dt if dt != em.bool else em.int64)
    if device is not None:
        grids = grids.to(device)
    return function(*[g for g in grids], **kwargs)


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[k](x) (or the constant funclist[k]) where condlist[k] holds; an extra function
    covers the rest."""
    em = _ember()
    x = _asarray(x)
    if (
        isinstance(condlist, _core.ndarray)
        and condlist.ndim <= x.ndim
        or not isinstance(condlist, list | tuple)
    ):
        condlist = [condlist]
    conds = [_asarray(c).astype(em.bool) for c in condlist]
    n = len(conds)
    if len(funclist) == n + 1:
        rest = (
            ~em.any(em.stack([em.broadcast_to(c, x.shape) for c in conds]), axis=0)
            if n
            else (em.ones(x.shape, dtype=em.bool, device=x.device))
        )
        conds.append(rest)
    elif len(funclist) != n:
        raise ValueError(
            f"ember.piecewise: with {n} condition(s), funclist must have {n} or "
            f"{n + 1} entries, got {len(funclist)}"
        )
    out = em.zeros_like(x)
    for c, f in zip(conds, funclist, strict=True):
        val = f(x, *args, **kw) if callable(f) else f
        out = em.where(c, val, out)
    return out


def mask_indices(n, mask_func, k=0):
    """The indices where mask_func(ones((n, n)), k) is non-zero (e.g. triu, tril)."""
    em = _ember()
    m = mask_func(em.ones((n, n), dtype=em.int64), k=k)
    return em.nonzero(m != 0)


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to each 1-D slice of arr along axis (a Python loop over the slices; the
    results are stacked where the axis was)."""
    em = _ember()
    x = _asarray(arr)
    ax = operator.index(axis) % builtins.max(x.ndim, 1)
    moved = em.moveaxis(x, ax, -1)
    lead = tuple(moved.shape[:-1])
    flat = moved.reshape((-1, moved.shape[-1]))
    if flat.shape[0] == 0:
        raise ValueError("ember.apply_along_axis: cannot apply to 0 slices")
    results = [_asarray(func1d(flat[i], *args, **kwargs)) for i in range(flat.shape[0])]
    r = em.stack(results).reshape(lead + tuple(results[0].shape))
    if results[0].ndim == 0:
        return r
    nd = results[0].ndim
    # the result's own dimensions go where the axis was
    order = list(range(len(lead)))
    out_axes = order[:ax] + list(range(len(lead), len(lead) + nd)) + order[ax:]
    return em.permute_dims(r, tuple(out_axes))


def block(arrays):
    """Assembles an array from nested lists of blocks (NumPy's block)."""
    em = _ember()

    def depth(a):
        return 1 + depth(a[0]) if isinstance(a, list) and a else (1 if isinstance(a, list) else 0)

    d = depth(arrays)
    if d == 0:
        return _asarray(arrays)[...]

    def ndim_of(a):
        return max(ndim_of(b) for b in a) if isinstance(a, list) else _asarray(a).ndim

    nd = builtins.max(ndim_of(arrays), d)

    def build(a, level):
        if not isinstance(a, list):
            x = _asarray(a)
            return x.reshape((1,) * (nd - x.ndim) + tuple(x.shape))
        if not a:
            raise ValueError("ember.block: lists cannot be empty")
        parts = [build(b, level + 1) for b in a]
        return em.concat(parts, axis=-(d - level))

    return build(arrays, 0)
