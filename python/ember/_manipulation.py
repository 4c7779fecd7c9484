"""Array manipulation composed of views, slicing, concat and where, so each runs on any device and
differentiates through its primitives: flip, roll, moveaxis, tile, repeat, tril/triu, meshgrid,
diff, atleast_*d, the stacking and splitting shorthands, broadcast_arrays, ravel, and the
comparisons isclose/allclose/array_equal, nan_to_num, count_nonzero (NumPy's semantics)."""

from __future__ import annotations

import builtins
import operator

import numpy as _np

from . import _core
from ._joining import _sections, concat, split

__all__ = [
    "allclose",
    "array_equal",
    "array_split",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_arrays",
    "column_stack",
    "count_nonzero",
    "diff",
    "dsplit",
    "dstack",
    "flip",
    "hsplit",
    "hstack",
    "isclose",
    "meshgrid",
    "moveaxis",
    "nan_to_num",
    "pad",
    "ravel",
    "repeat",
    "roll",
    "tile",
    "tril",
    "triu",
    "vsplit",
    "vstack",
]


def _asarray(x):
    if isinstance(x, _core.ndarray):
        return x
    from ._array import asarray

    return asarray(x)


def _axes(axis, ndim, who):
    """`axis` (None: all, an int or a sequence) as sorted, distinct, non-negative axes."""
    if axis is None:
        return list(range(ndim))
    seq = axis if isinstance(axis, tuple | list) else (axis,)
    out = []
    for a in seq:
        try:
            i = operator.index(a)
        except TypeError:
            raise TypeError(
                f"{who}: axis must be an integer or a tuple of them, got {a!r}"
            ) from None
        if not -ndim <= i < ndim:
            raise _core.AxisError(f"{who}: axis {a} is out of bounds for {ndim} dimensions")
        i %= ndim
        if i in out:
            raise ValueError(f"{who}: repeated axis {a}")
        out.append(i)
    return out


def ravel(x, /):
    """The elements in C order as a 1-D array (a view when possible)."""
    return _asarray(x).reshape(-1)


def flip(x, /, *, axis=None):
    """Reverses the order of elements along `axis` (all axes for None): a view."""
    x = _asarray(x)
    axes = _axes(axis, x.ndim, "ember.flip")
    return x[tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(x.ndim))]


def roll(x, /, shift, *, axis=None):
    """Shifts elements along `axis` cyclically (``axis=None``: over the flattened array)."""
    x = _asarray(x)
    if axis is None:
        return roll(x.reshape(-1), shift, axis=0).reshape(x.shape)
    shifts = shift if isinstance(shift, tuple | list) else (shift,)
    axes = axis if isinstance(axis, tuple | list) else (axis,)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1:
        axes = tuple(axes) * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("ember.roll: shift and axis must have the same length")
    total = {}
    for s, a in zip(shifts, axes, strict=True):
        (d,) = _axes(a, x.ndim, "ember.roll")
        total[d] = total.get(d, 0) + operator.index(s)
    for d, s in total.items():
        n = x.shape[d]
        k = s % n if n else 0
        if k:
            lead = (slice(None),) * d
            x = concat([x[lead + (slice(n - k, None),)], x[lead + (slice(0, n - k),)]], axis=d)
    return x


def moveaxis(x, source, destination, /):
    """Moves axes `source` to positions `destination` (others keep their order): a view."""
    x = _asarray(x)
    src = source if isinstance(source, tuple | list) else (source,)
    dst = destination if isinstance(destination, tuple | list) else (destination,)
    if len(src) != len(dst):
        raise ValueError("ember.moveaxis: source and destination must have the same length")
    s = [_axes(a, x.ndim, "ember.moveaxis")[0] for a in src]
    t = [_axes(a, x.ndim, "ember.moveaxis")[0] for a in dst]
    if len(set(s)) != len(s) or len(set(t)) != len(t):
        raise ValueError("ember.moveaxis: repeated axis")
    order = [d for d in range(x.ndim) if d not in s]
    for dest, orig in sorted(zip(t, s, strict=True)):
        order.insert(dest, orig)
    return _core.permute_dims(x, tuple(order))


def tile(x, reps, /):
    """Repeats the whole array `reps` times along each axis (NumPy's rules for unequal lengths)."""
    x = _asarray(x)
    reps = tuple(reps) if isinstance(reps, tuple | list) else (reps,)
    reps = tuple(operator.index(r) for r in reps)
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"ember.tile: repetitions must be >= 0, got {reps}")
    nd = builtins.max(len(reps), x.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    shape = (1,) * (nd - x.ndim) + tuple(x.shape)
    inter = []
    for s in shape:
        inter += [1, s]
    big = []
    for r, s in zip(reps, shape, strict=True):
        big += [r, s]
    y = _core.broadcast_to(x.reshape(tuple(inter)), tuple(big))
    return y.reshape(tuple(r * s for r, s in zip(reps, shape, strict=True)))


def repeat(x, repeats, /, *, axis=None):
    """Repeats each element `repeats` times (an int, or one count per element along `axis`);
    ``axis=None`` works on the flattened array."""
    x = _asarray(x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    (d,) = _axes(axis, x.ndim, "ember.repeat")
    n = x.shape[d]
    if isinstance(repeats, _core.ndarray) and repeats.ndim == 0:
        repeats = int(repeats)
    if isinstance(repeats, int | _np.integer):
        r = int(repeats)
        if r < 0:
            raise ValueError(f"ember.repeat: repeats must be >= 0, got {r}")
        shape = tuple(x.shape)
        y = _core.broadcast_to(_core.expand_dims(x, d + 1), shape[: d + 1] + (r,) + shape[d + 1 :])
        return y.reshape(shape[:d] + (n * r,) + shape[d + 1 :])
    from ._array import asnumpy

    counts = _np.asarray(asnumpy(repeats) if isinstance(repeats, _core.ndarray) else repeats)
    if counts.ndim != 1 or counts.shape[0] not in (1, n) or counts.dtype.kind not in "iu":
        raise ValueError(
            f"ember.repeat: repeats must be an int or {n} integer counts, got shape "
            f"{counts.shape} and dtype {counts.dtype}"
        )
    if (counts < 0).any():
        raise ValueError("ember.repeat: repeats must be >= 0")
    idx = _np.repeat(_np.arange(n), _np.broadcast_to(counts, (n,)))
    from ._array import asarray

    return _core.take(x, asarray(idx, device=x.device), axis=d)


def _triangle(x, k, lower, who):
    x = _asarray(x)
    if x.ndim < 2:
        raise ValueError(f"{who}: the array must have at least 2 dimensions, got {x.ndim}")
    n, m = x.shape[-2], x.shape[-1]
    rows = _core.arange(n, device=x.device).reshape(n, 1)
    cols = _core.arange(m, device=x.device).reshape(1, m)
    k = operator.index(k)
    keep = (cols - rows <= k) if lower else (cols - rows >= k)
    return _core.where(keep, x, _core.zeros((), dtype=x.dtype, device=x.device))


def tril(x, /, *, k=0):
    """The lower triangle (on and below diagonal `k`) of the last two axes; zeros above."""
    return _triangle(x, k, True, "ember.tril")


def triu(x, /, *, k=0):
    """The upper triangle (on and above diagonal `k`) of the last two axes; zeros below."""
    return _triangle(x, k, False, "ember.triu")


def meshgrid(*arrays, indexing="xy"):
    """Coordinate arrays from 1-D arrays (``indexing="xy"``: the first two axes swapped, as
    NumPy's default)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"ember.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [_asarray(a).reshape(-1) for a in arrays]
    shape = [x.shape[0] for x in xs]
    if indexing == "xy" and len(xs) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xs):
        pos = i
        if indexing == "xy" and len(xs) >= 2 and i < 2:
            pos = 1 - i
        view = [1] * len(xs)
        view[pos] = x.shape[0]
        out.append(_core.broadcast_to(x.reshape(tuple(view)), tuple(shape)).copy())
    return out


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """The `n`-th discrete difference along `axis` (``x[1:] - x[:-1]``, repeated)."""
    x = _asarray(x)
    if x.ndim == 0:
        raise ValueError("ember.diff: the array must have at least 1 dimension")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"ember.diff: order n must be >= 0, got {n}")
    (d,) = _axes(axis, x.ndim, "ember.diff")

    def widen(v):
        v = _asarray(v)
        if v.ndim == 0:
            shape = list(x.shape)
            shape[d] = 1
            v = _core.broadcast_to(v, tuple(shape))
        return v

    parts = ([widen(prepend)] if prepend is not None else []) + [x]
    parts += [widen(append)] if append is not None else []
    if len(parts) > 1:
        x = concat(parts, axis=d)
    lead = (slice(None),) * d
    for _ in range(n):
        x = x[lead + (slice(1, None),)] - x[lead + (slice(None, -1),)]
    return x


def atleast_1d(*arrays):
    """Each array with at least one dimension (a 0-d one becomes shape (1,))."""
    out = [_asarray(a) if _asarray(a).ndim >= 1 else _asarray(a).reshape(1) for a in arrays]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arrays):
    """Each array with at least two dimensions: (1,) + shape for 1-D, (1, 1) for 0-d."""
    out = []
    for a in arrays:
        a = _asarray(a)
        out.append(a if a.ndim >= 2 else a.reshape((1,) * (2 - a.ndim) + tuple(a.shape)))
    return out[0] if len(out) == 1 else out


def atleast_3d(*arrays):
    """Each array with at least three dimensions: 0-d (1, 1, 1), 1-D (1, n, 1), 2-D (m, n, 1)."""
    out = []
    for a in arrays:
        a = _asarray(a)
        if a.ndim == 0:
            a = a.reshape(1, 1, 1)
        elif a.ndim == 1:
            a = a.reshape(1, a.shape[0], 1)
        elif a.ndim == 2:
            a = a.reshape(a.shape[0], a.shape[1], 1)
        out.append(a)
    return out[0] if len(out) == 1 else out


def _listed(arrays):
    return arrays if isinstance(arrays, list | tuple) else list(arrays)


def hstack(arrays, /, *, dtype=None):
    """Joins along the second axis (the first for 1-D arrays)."""
    xs = [atleast_1d(a) for a in _listed(arrays)]
    return concat(xs, axis=0 if xs and xs[0].ndim == 1 else 1, dtype=dtype)


def vstack(arrays, /, *, dtype=None):
    """Joins along the first axis, 1-D arrays as rows."""
    return concat([atleast_2d(a) for a in _listed(arrays)], axis=0, dtype=dtype)


def dstack(arrays, /):
    """Joins along the third axis (arrays made at least 3-D first)."""
    return concat([atleast_3d(a) for a in _listed(arrays)], axis=2)


def column_stack(arrays, /):
    """1-D arrays as columns (and 2-D ones as they are), joined along the second axis."""
    xs = []
    for a in _listed(arrays):
        a = _asarray(a)
        xs.append(a.reshape(a.shape[0], 1) if a.ndim == 1 else atleast_2d(a))
    return concat(xs, axis=1)


def array_split(x, indices_or_sections, /, axis=0):
    """Like split, but N sections need not divide the axis: the first ``len % N`` parts are
    one longer."""
    x = _asarray(x)
    if hasattr(indices_or_sections, "__iter__"):
        return split(x, indices_or_sections, axis)
    (d,) = _axes(axis, x.ndim, "ember.array_split")
    n = x.shape[d]
    k = _sections(indices_or_sections, n, "ember.array_split")
    q, r = divmod(n, k)
    sizes = [q + 1] * r + [q] * (k - r)
    bounds, acc = [], 0
    for s in sizes[:-1]:
        acc += s
        bounds.append(acc)
    return split(x, bounds, d)


def hsplit(x, indices_or_sections, /):
    """split along the second axis (the first for 1-D arrays)."""
    x = _asarray(x)
    if x.ndim == 0:
        raise ValueError("ember.hsplit: the array must have at least 1 dimension")
    return split(x, indices_or_sections, 1 if x.ndim > 1 else 0)


def vsplit(x, indices_or_sections, /):
    """split along the first axis of an array of at least 2 dimensions."""
    x = _asarray(x)
    if x.ndim < 2:
        raise ValueError("ember.vsplit: the array must have at least 2 dimensions")
    return split(x, indices_or_sections, 0)


def dsplit(x, indices_or_sections, /):
    """split along the third axis of an array of at least 3 dimensions."""
    x = _asarray(x)
    if x.ndim < 3:
        raise ValueError("ember.dsplit: the array must have at least 3 dimensions")
    return split(x, indices_or_sections, 2)


def broadcast_arrays(*arrays):
    """The arrays broadcast against each other (views)."""
    xs = [_asarray(a) for a in arrays]
    try:
        shape = _np.broadcast_shapes(*(tuple(x.shape) for x in xs))
    except ValueError:
        shapes = ", ".join(str(tuple(x.shape)) for x in xs)
        raise ValueError(f"ember.broadcast_arrays: shapes {shapes} do not broadcast") from None
    return [_core.broadcast_to(x, shape) for x in xs]


def isclose(a, b, /, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|a - b| <= atol + rtol * |b|`` elementwise; infinities are close only to themselves."""
    a, b = _asarray(a), _asarray(b)
    close = _core.abs(a - b) <= atol + rtol * _core.abs(b)
    out = (a == b) | (close & _core.isfinite(a) & _core.isfinite(b))
    if equal_nan:
        out = out | (_core.isnan(a) & _core.isnan(b))
    return out


def allclose(a, b, /, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of a is close to b (see isclose), as a Python bool."""
    return builtins.bool(_core.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def array_equal(a, b, /, equal_nan=False):
    """True when a and b have the same shape and elements (NaNs equal with `equal_nan`)."""
    a, b = _asarray(a), _asarray(b)
    if tuple(a.shape) != tuple(b.shape):
        return False
    eq = a == b
    if equal_nan:
        eq = eq | (_core.isnan(a) & _core.isnan(b))
    return builtins.bool(_core.all(eq))


def nan_to_num(x, /, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN -> `nan`, +inf -> `posinf` (default: the dtype's largest value), -inf -> `neginf`
    (default: its most negative); complex arrays are treated part by part."""
    x = _asarray(x)
    kind = x.dtype.kind
    if kind not in "fc":
        return x.copy() if copy else x
    if kind == "c":
        re = nan_to_num(_core.real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(_core.imag(x), nan=nan, posinf=posinf, neginf=neginf)
        out = (re + im * 1j).astype(x.dtype)
    else:
        from ._dtypes import finfo

        fi = finfo(x.dtype)
        big = fi.max if posinf is None else posinf
        small = -fi.max if neginf is None else neginf
        zero = _core.zeros((), dtype=x.dtype, device=x.device)
        out = _core.where(_core.isnan(x), zero + nan, x)
        out = _core.where(out == _np.inf, zero + big, out)
        out = _core.where(out == -_np.inf, zero + small, out)
    if not copy:
        x[...] = out
        return x
    return out


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """The number of non-zero elements (along `axis`), as int64."""
    x = _asarray(x)
    return _core.sum(x != 0, axis=axis, dtype=_core.int64, keepdims=keepdims)


def _pad_widths(pad_width, ndim):
    try:
        w = _np.broadcast_to(_np.asarray(pad_width, dtype=_np.int64), (ndim, 2))
    except (ValueError, TypeError):
        raise ValueError(
            f"ember.pad: pad_width {pad_width!r} does not give (before, after) for "
            f"{ndim} dimensions"
        ) from None
    if (w < 0).any():
        raise ValueError(f"ember.pad: pad widths must be >= 0, got {pad_width!r}")
    return [(int(a), int(b)) for a, b in w]


def pad(x, pad_width, mode="constant", *, constant_values=0):
    """Pads each axis by (before, after) elements (NumPy's broadcasting of `pad_width`) with
    ``mode`` "constant" (`constant_values`), "edge", "reflect" (mirrored without the edge) or
    "wrap" (periodic)."""
    x = _asarray(x)
    if mode not in ("constant", "edge", "reflect", "wrap"):
        raise ValueError(
            f"ember.pad: mode must be 'constant', 'edge', 'reflect' or 'wrap', got {mode!r}"
        )
    widths = _pad_widths(pad_width, x.ndim)
    for d, (before, after) in enumerate(widths):
        if not before and not after:
            continue
        n = x.shape[d]
        lead = (slice(None),) * d

        def part(sl, x=x, lead=lead):
            return x[lead + (sl,)]

        if mode == "constant":
            shape = list(x.shape)
            pieces = []
            for w in (before, after):
                shape[d] = w
                pieces.append(
                    _core.full(tuple(shape), constant_values, dtype=x.dtype, device=x.device)
                )
            x = concat([pieces[0], x, pieces[1]], axis=d)
            continue
        if n == 0:
            raise ValueError(f"ember.pad: cannot pad an empty axis {d} in mode {mode!r}")
        if mode == "edge":
            shape = list(x.shape)
            lo, hi = part(slice(0, 1)), part(slice(n - 1, n))
            shape[d] = before
            b = _core.broadcast_to(lo, tuple(shape))
            shape[d] = after
            a = _core.broadcast_to(hi, tuple(shape))
            x = concat([b, x, a], axis=d)
            continue
        # reflect / wrap: the padding is built from whole periods of the axis
        if mode == "reflect" and n == 1:
            shape = list(x.shape)
            shape[d] = n + before + after
            x = _core.broadcast_to(x, tuple(shape)).copy()
            continue
        if mode == "reflect":  # period a0 .. a(n-1) a(n-2) .. a1
            period = concat([x, flip(part(slice(1, n - 1)), axis=d)], axis=d) if n > 2 else x
        else:
            period = x
        p = period.shape[d]
        offset = (-before) % p
        reps = (offset + before + n + after + p - 1) // p
        tiled = concat([period] * reps, axis=d)
        x = tiled[lead + (slice(offset, offset + before + n + after),)]
    return x
