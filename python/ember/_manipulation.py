"""Array manipulation composed of views, slicing, concat and take, so each runs on any device and
differentiates through its primitives (NumPy's semantics): shapes (ndim, shape, size,
broadcast_shapes, broadcast_arrays, atleast_*d, ravel, copyto), rearranging (flip, fliplr,
flipud, rot90, roll, moveaxis, rollaxis), tiling (tile, repeat, resize, pad), the stacking and
splitting shorthands (hstack, vstack, row_stack, dstack, column_stack, block, array_split,
hsplit, vsplit, dsplit), and adding or removing elements (append, insert, delete, trim_zeros)."""

from __future__ import annotations

import builtins
import math
import operator

import numpy as _np

from . import _core
from ._array import asarray, asnumpy
from ._dtypes import can_cast
from ._joining import _sections, concat, split
from ._scan import nonzero

__all__ = [
    "append",
    "array_split",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block",
    "broadcast_arrays",
    "broadcast_shapes",
    "column_stack",
    "copyto",
    "delete",
    "dsplit",
    "dstack",
    "flip",
    "fliplr",
    "flipud",
    "hsplit",
    "hstack",
    "insert",
    "moveaxis",
    "ndim",
    "pad",
    "ravel",
    "repeat",
    "reshape",
    "resize",
    "roll",
    "rollaxis",
    "rot90",
    "row_stack",
    "shape",
    "size",
    "tile",
    "trim_zeros",
    "vsplit",
    "vstack",
]


def _asarray(x):
    if isinstance(x, _core.ndarray):
        return x
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


_ORDERS = ("C", "F", "A", "K")
_reshape_c = _core.reshape  # C order, the Array API's reshape (a view when possible)
_method_reshape_c = _core.ndarray.reshape


def _order(order, who):
    if order is None:
        return "C"
    if not isinstance(order, str) or order.upper() not in _ORDERS:
        raise ValueError(f"{who}: order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    return order.upper()


def _reverse(x):
    return _core.permute_dims(x, tuple(range(x.ndim - 1, -1, -1)))


def _reshape(x, shape, order, copy, who):
    order = _order(order, who)
    if order == "K":
        raise ValueError(f"{who}: order 'K' is not permitted for reshaping")
    if order == "A":
        order = "F" if x.flags.f_contiguous and not x.flags.c_contiguous else "C"
    if order == "C":
        return _reshape_c(x, shape, copy=copy)
    # Fortran order: the C-order reshape of the reversed axes, reversed back.
    dims = (shape,) if isinstance(shape, int) or not hasattr(shape, "__len__") else shape
    return _reverse(_reshape_c(_reverse(x), tuple(reversed(tuple(dims))), copy=copy))


def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    """A view with a new shape when possible, else a copy (``copy=False``: a view or
    ValueError). ``order`` 'C' reads and writes the elements in C order, 'F' in Fortran order,
    'A' in Fortran order when the array is Fortran- and not C-contiguous."""
    who = "ember.reshape"
    if newshape is not None:
        if shape is not None:
            raise TypeError(f"{who}: you cannot specify 'newshape' and 'shape' together")
        shape = newshape
    if shape is None:
        raise TypeError(f"{who}: missing the required argument 'shape'")
    return _reshape(_asarray(a), shape, order, copy, who)


def _method_reshape(self, *shape, order="C", copy=None):
    if order == "C" or order is None:
        return _method_reshape_c(self, *shape, copy=copy)
    return _reshape(
        self, shape[0] if len(shape) == 1 else shape, order, copy, "ember.ndarray.reshape"
    )


def _memory_order(x):
    """x's axes permuted to memory order (NumPy's 'K': by decreasing absolute stride, ties in
    C order; a negative stride keeps its axis's logical order)."""
    perm = sorted(range(x.ndim), key=lambda d: -abs(x.strides[d]))
    return _core.permute_dims(x, tuple(perm)) if perm != list(range(x.ndim)) else x


def ravel(x, /, order="C"):
    """The elements as a 1-D array (a view when possible), read in `order`: 'C', 'F', 'A' (F for
    a Fortran- and not C-contiguous array) or 'K' (memory order)."""
    x = _asarray(x)
    order = _order(order, "ember.ravel")
    if order == "A":
        order = "F" if x.flags.f_contiguous and not x.flags.c_contiguous else "C"
    if order == "F":
        x = _reverse(x)
    elif order == "K":
        x = _memory_order(x)
    return _reshape_c(x, -1)


def _method_ravel(self, order="C"):
    return ravel(self, order)


def _method_flatten(self, order="C"):
    return ravel(self, order).copy()


_core.ndarray.reshape = _method_reshape
_core.ndarray.ravel = _method_ravel
_core.ndarray.flatten = _method_flatten


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
    if axis is None or (x.ndim == 0 and axis in (0, -1)):  # NumPy takes axis 0/-1 on 0-d
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
    counts = _np.asarray(asnumpy(repeats) if isinstance(repeats, _core.ndarray) else repeats)
    if counts.ndim != 1 or counts.shape[0] not in (1, n) or counts.dtype.kind not in "iu":
        raise ValueError(
            f"ember.repeat: repeats must be an int or {n} integer counts, got shape "
            f"{counts.shape} and dtype {counts.dtype}"
        )
    if (counts < 0).any():
        raise ValueError("ember.repeat: repeats must be >= 0")
    idx = _np.repeat(_np.arange(n), _np.broadcast_to(counts, (n,)))
    return _core.take(x, asarray(idx, device=x.device), axis=d)


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
    """The arrays broadcast against each other: the ones already of the common shape as they
    are, the others as read-only views (NumPy makes those warn on write and plans read-only;
    a write would land on repeated elements)."""
    xs = [_asarray(a) for a in arrays]
    try:
        shape = _np.broadcast_shapes(*(tuple(x.shape) for x in xs))
    except ValueError:
        shapes = ", ".join(str(tuple(x.shape)) for x in xs)
        raise ValueError(f"ember.broadcast_arrays: shapes {shapes} do not broadcast") from None
    return [x if tuple(x.shape) == shape else _core.broadcast_to(x, shape) for x in xs]


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


def ndim(a):
    return _asarray(a).ndim if not isinstance(a, _core.ndarray) else a.ndim


def shape(a):
    return tuple(a.shape) if isinstance(a, _core.ndarray) else tuple(_np.shape(a))


def size(a, axis=None):
    s = shape(a)
    if axis is None:
        return math.prod(s)
    return s[operator.index(axis)]


def copyto(dst, src, casting="same_kind", where=True):
    """Copies `src` into `dst` (broadcast) where `where` is true, with NumPy's casting rule."""
    who = "ember.copyto"
    if not isinstance(dst, _core.ndarray):
        raise TypeError(f"{who}: dst must be an ember array, got {type(dst).__name__}")
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError(
            f"{who}: casting must be one of 'no', 'equiv', 'safe', 'same_kind', "
            f"'unsafe', got {casting!r}"
        )
    python_scalar = isinstance(src, bool | int | float | complex)
    src = src if python_scalar else _asarray(src)
    if not python_scalar and not can_cast(src.dtype, dst.dtype, casting=casting):
        raise TypeError(
            f"{who}: cannot cast from {src.dtype} to {dst.dtype} with casting rule {casting!r}"
        )
    if where is True:
        dst[...] = src
        return
    mask = _asarray(where)
    if mask.dtype != _core.bool:
        raise TypeError(f"{who}: where must be a boolean array, got dtype {mask.dtype}")
    value = src if python_scalar else src.astype(dst.dtype)
    dst[...] = _core.where(mask, value, dst)


def broadcast_shapes(*shapes):
    """The shape that arrays of `shapes` broadcast to (ValueError when they do not)."""
    out = []
    for shape in shapes:
        shape = tuple(int(n) for n in shape)
        if len(shape) > len(out):
            out = [1] * (len(shape) - len(out)) + out
        for k, n in enumerate(shape):
            j = len(out) - len(shape) + k
            if out[j] == 1:
                out[j] = n
            elif n != 1 and n != out[j]:
                raise ValueError(
                    f"ember.broadcast_shapes: shapes {tuple(shapes)} cannot be broadcast together"
                )
    return tuple(out)


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
        return flip(flip(m, axis=a0), axis=a1)
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return _core.permute_dims(flip(m, axis=a1), tuple(perm))
    return flip(_core.permute_dims(m, tuple(perm)), axis=a1)


def rollaxis(a, axis, start=0):
    """NumPy's rollaxis: moves `axis` to before position `start`."""
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
    return moveaxis(x, axis, start) if axis != start else x[...]


def row_stack(tup):
    """vstack (NumPy's deprecated name)."""
    return vstack(tup)


def block(arrays):
    """Assembles an array from nested lists of blocks (NumPy's block)."""

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
        return concat(parts, axis=-(d - level))

    return build(arrays, 0)


def append(arr, values, axis=None):
    """arr with values appended (both flattened when axis is None)."""
    arr, values = _asarray(arr), _asarray(values)
    if axis is None:
        return concat([arr.reshape((-1,)), values.reshape((-1,))])
    return concat([arr, values], axis=axis)


def _positions(obj, n, who):
    """Non-negative Python indices of `obj` (int, slice, sequence or array) along an axis of
    length n."""
    if isinstance(obj, slice):
        return list(range(*obj.indices(n)))
    if isinstance(obj, _core.ndarray):
        obj = asnumpy(obj)
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
    who = "ember.delete"
    x, ax = _array_and_axis(arr, axis, who)
    n = x.shape[ax]
    drop = set(_positions(obj, n, who))
    keep = [i for i in range(n) if i not in drop]
    return _core.take(x, asarray(keep, dtype=_core.int64, device=x.device), axis=ax)


def insert(arr, obj, values, axis=None):
    """arr with `values` inserted before the positions `obj` along `axis` (NumPy's insert;
    for a sequence of positions, one value per position, in order)."""
    who = "ember.insert"
    x, ax = _array_and_axis(arr, axis, who)
    n = x.shape[ax]
    scalar_pos = isinstance(obj, int) or (hasattr(obj, "ndim") and obj.ndim == 0)
    if isinstance(obj, slice):
        pos = list(range(*obj.indices(n + 1)))
    else:
        raw = [
            int(i)
            for i in _np.asarray(asnumpy(obj) if isinstance(obj, _core.ndarray) else obj)
            .reshape(-1)
            .tolist()
        ]
        pos = []
        for i in raw:
            if not -(n + 1) <= i <= n:
                raise IndexError(f"{who}: index {i} is out of bounds for an axis of size {n}")
            pos.append(i % (n + 1) if i < 0 else i)
    v = (
        asarray(values, dtype=x.dtype, device=x.device)
        if not isinstance(values, _core.ndarray)
        else values.astype(x.dtype)
    )
    moved = moveaxis(x, ax, 0)
    if scalar_pos:
        # the values take the axis's place: broadcast to (k, rest) with k from values' shape
        vv = v if v.ndim else v.reshape((1,))
        vv = moveaxis(vv, ax, 0) if vv.ndim == x.ndim else vv
        if vv.ndim < moved.ndim:
            vv = vv.reshape((1,) * (moved.ndim - vv.ndim) + tuple(vv.shape))
            vv = _core.broadcast_to(vv, (1,) + tuple(moved.shape[1:]))
        else:
            vv = _core.broadcast_to(vv, (vv.shape[0],) + tuple(moved.shape[1:]))
        p = pos[0]
        out = concat([moved[:p], vv, moved[p:]], axis=0)
        return moveaxis(out, 0, ax)
    k = len(pos)
    vv = _core.broadcast_to(
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
    return moveaxis(concat(pieces, axis=0), 0, ax)


def trim_zeros(filt, trim="fb"):
    """The 1-D array without its leading ('f') and/or trailing ('b') zeros."""
    x = _asarray(filt)
    if x.ndim != 1:
        raise ValueError(f"ember.trim_zeros: expected a 1-D array, got shape {x.shape}")
    if not isinstance(trim, str):
        raise TypeError(f"ember.trim_zeros: trim must be a string, got {type(trim).__name__}")
    trim = trim.lower()
    (nz,) = nonzero(x != 0)
    if nz.shape[0] == 0:
        return x[:0]
    lo = int(nz[0].item()) if "f" in trim else 0
    hi = int(nz[-1].item()) + 1 if "b" in trim else x.shape[0]
    return x[lo:hi]


def resize(a, new_shape):
    """A new array of new_shape filled with a's elements, repeated in order."""
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
        return _core.zeros(shape, dtype=x.dtype, device=x.device)
    return tile(x, -(-n // x.shape[0]))[:n].reshape(shape)
