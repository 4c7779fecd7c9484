"""Indexing routines composed from take, where, nonzero and flat views, as NumPy's "Indexing
routines" reference groups them: index arrays (indices, ix_, unravel_index, ravel_multi_index),
indexing-like operations (take_along_axis, choose, compress, select, extract) and inserting data
in place (put_along_axis, place, put, putmask, fill_diagonal). The diagonal and triangle index
generators (diag_indices, tril_indices, ...) are with the matrices they index, in _matrices."""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from . import _core
from ._array import asarray
from ._dtypes import result_type
from ._joining import _axis, stack
from ._manipulation import _asarray, broadcast_shapes, tile
from ._misc import may_share_memory
from ._scan import _check, nonzero

__all__ = [
    "choose",
    "compress",
    "extract",
    "fill_diagonal",
    "indices",
    "ix_",
    "place",
    "put",
    "put_along_axis",
    "putmask",
    "ravel_multi_index",
    "select",
    "take",
    "take_along_axis",
    "unravel_index",
]


# ---- take -------------------------------------------------------------------------------------

_take = _core.take


def take(a, indices, axis=None, out=None, mode="raise"):
    """Elements of `a` at integer `indices` along `axis` (of the flattened `a` for None).
    ``mode``: 'raise' (out-of-range indices raise IndexError; negative ones count from the end),
    'wrap' (indices wrap around) or 'clip' (clipped to the range; negative ones become 0). With
    `out`, the result is written there and `out` returned."""
    who = "ember.take"
    x = _asarray(a)
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"{who}: mode must be one of 'raise', 'wrap' or 'clip' (got {mode!r})")
    if isinstance(indices, list | tuple) and len(indices) == 0:
        indices = _core.zeros(0, dtype=_core.int64, device=x.device)  # NumPy's reading of []
    elif x.device.type != "cpu" and isinstance(indices, list | tuple | np.ndarray):
        # host indices for a device array: checked on the host, so the gather needs no
        # synchronization for its bounds check
        r = _take_host_indices(x, indices, axis, mode, who)
        if r is not None:
            return _into_out(r, out, who)
    if mode != "raise":
        if axis is None:
            n = x.size
        else:
            ax = operator.index(axis)
            n = x.shape[ax] if -x.ndim <= ax < x.ndim else None  # None: take raises AxisError
        if n is not None:
            if isinstance(indices, int) and not isinstance(indices, builtins.bool):
                idx = indices
                if n == 0:
                    raise IndexError(f"{who}: cannot do a non-empty take from an empty axis")
                indices = idx % n if mode == "wrap" else builtins.min(builtins.max(idx, 0), n - 1)
            else:
                idx = (
                    indices
                    if isinstance(indices, _core.ndarray)
                    else asarray(indices, device=x.device)
                )
                if idx.dtype.kind in "iu" and idx.size:
                    if n == 0:
                        raise IndexError(f"{who}: cannot do a non-empty take from an empty axis")
                    if mode == "wrap":
                        indices = _core.remainder(idx.astype(_core.int64), n)
                    else:
                        indices = _core.clip(idx.astype(_core.int64), 0, n - 1)
                    # in range by construction: no bounds check (no GPU synchronization)
                    return _into_out(_core._take_in_range(x, indices, axis), out, who)
                indices = idx
    return _into_out(_take(x, indices, axis), out, who)


def _take_host_indices(x, indices, axis, mode, who):
    """take with host (list or NumPy) integer indices of a device array: wrapped, clipped or
    bounds-checked on the host, then uploaded; None when they are not integers."""
    idx = np.asarray(indices)
    if idx.dtype.kind not in "iu":
        return None
    if axis is None:
        n = x.size
    else:
        ax = operator.index(axis)
        if not -x.ndim <= ax < x.ndim:
            return None  # take raises the AxisError
        n = x.shape[ax]
    idx = idx.astype(np.int64)
    if idx.size:
        if n == 0:
            raise IndexError(f"{who}: cannot do a non-empty take from an empty axis")
        if mode == "wrap":
            idx = idx % n
        elif mode == "clip":
            idx = np.clip(idx, 0, n - 1)
        else:
            lo, hi = int(idx.min()), int(idx.max())
            if lo < -n or hi >= n:
                bad = lo if lo < -n else hi
                where = "" if axis is None else f" for axis {operator.index(axis)}"
                raise IndexError(f"{who}: index {bad} is out of bounds{where} with size {n}")
            idx = np.where(idx < 0, idx + n, idx)
    return _core._take_in_range(x, asarray(idx, device=x.device), axis)


def _into_out(r, out, who):
    if out is None:
        return r
    if not isinstance(out, _core.ndarray):
        raise TypeError(f"{who}: out must be an ember array, got {type(out).__name__}")
    if tuple(out.shape) != tuple(r.shape):
        raise ValueError(
            f"{who}: output array has shape {tuple(out.shape)} but the result has shape "
            f"{tuple(r.shape)}"
        )
    out[...] = r
    return out


def _method_take(self, indices, axis=None, out=None, mode="raise"):
    return take(self, indices, axis, out, mode)


_core.ndarray.take = _method_take


# ---- index arrays ---------------------------------------------------------------------------


def indices(dimensions, dtype=None, *, device=None):
    """An array of shape (len(dimensions), *dimensions): entry i holds each element's index
    along dimension i."""
    dims = tuple(operator.index(d) for d in dimensions)
    out = []
    for i, n in enumerate(dims):
        view = [1] * len(dims)
        view[i] = n
        a = _core.arange(n, dtype=_core.int64 if dtype is None else dtype, device=device)
        out.append(_core.broadcast_to(a.reshape(tuple(view)), dims).copy())
    if not out:
        return _core.zeros((0,), dtype=_core.int64 if dtype is None else dtype, device=device)
    return stack(out)


def ix_(*args):
    """Open meshes from 1-D sequences: arrays of shape (n, 1, ..), (1, m, ..), ..."""
    k = len(args)
    out = []
    for i, a in enumerate(args):
        a = _asarray(a)
        if a.ndim != 1:
            raise ValueError("ember.ix_: the inputs must be 1-D")
        if a.dtype == _core.bool:
            (a,) = nonzero(a)
        out.append(a.reshape((1,) * i + (a.shape[0],) + (1,) * (k - i - 1)))
    return tuple(out)


_INTP_MAX = 2**63 - 1


def _checked_dims(dims, who):
    """dims as ints whose product fits NumPy's intp (NumPy's ValueError otherwise)."""
    dims = tuple(operator.index(d) for d in dims)
    if any(d > _INTP_MAX for d in dims):
        raise ValueError(f"{who}: Maximum allowed dimension exceeded (dims={dims})")
    if math.prod(d for d in dims if d > 0) > _INTP_MAX:
        raise ValueError(
            f"{who}: invalid dims: array size defined by dims is larger than the maximum "
            f"possible size (dims={dims})"
        )
    return dims


def unravel_index(indices, shape, order="C"):
    """The coordinate arrays of flat indices in an array of `shape`."""
    who = "ember.unravel_index"
    idx = _asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{who}: indices must be integers, got dtype {idx.dtype}")
    dims = _checked_dims(shape if hasattr(shape, "__len__") else (shape,), who)
    total = math.prod(dims)
    if idx.size and (int(_core.min(idx).item()) < 0 or int(_core.max(idx).item()) >= total):
        raise ValueError(f"{who}: an index is out of bounds for an array of size {total}")
    if order not in ("C", "F"):
        raise ValueError(f"{who}: order must be 'C' or 'F', got {order!r}")
    rest = idx.astype(_core.int64)
    coords = []
    for d in reversed(dims) if order == "C" else dims:
        coords.append(_core.remainder(rest, d))
        rest = _core.floor_divide(rest, d)
    return tuple(reversed(coords)) if order == "C" else tuple(coords)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """The flat indices of coordinate arrays in an array of shape `dims` (mode 'raise',
    'wrap' or 'clip')."""
    who = "ember.ravel_multi_index"
    dims = _checked_dims(dims, who)
    coords = [_asarray(c).astype(_core.int64) for c in multi_index]
    if len(coords) != len(dims):
        raise ValueError(f"{who}: {len(coords)} coordinate arrays for {len(dims)} dimensions")
    modes = mode if isinstance(mode, tuple | list) else (mode,) * len(dims)
    fixed = []
    for c, d, m in zip(coords, dims, modes, strict=True):
        if m == "wrap":
            c = _core.remainder(c, d)
        elif m == "clip":
            c = _core.clip(c, 0, d - 1)
        elif m == "raise":
            if c.size and (int(_core.min(c).item()) < 0 or int(_core.max(c).item()) >= d):
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


# ---- indexing-like operations ---------------------------------------------------------------


def take_along_axis(x, indices, /, axis=-1):
    """``x`` indexed along `axis` by an integer array of the same number of dimensions (other
    dimensions broadcast), as NumPy's take_along_axis. Negative indices count from the end."""
    who = "ember.take_along_axis"
    x, idx = _asarray(x), _asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{who}: indices must be integers, got dtype {idx.dtype}")
    if idx.ndim != x.ndim:
        raise ValueError(f"{who}: indices have {idx.ndim} dimensions but the array has {x.ndim}")
    d = _axis(axis, x.ndim, who)
    n = x.shape[d]
    shape = []
    for k in range(x.ndim):
        if k == d:
            shape.append(idx.shape[k])
        elif idx.shape[k] == x.shape[k] or idx.shape[k] == 1 or x.shape[k] == 1:
            shape.append(builtins.max(idx.shape[k], x.shape[k]))
        else:
            raise ValueError(
                f"{who}: indices of shape {tuple(idx.shape)} do not broadcast with the array's "
                f"shape {tuple(x.shape)} outside axis {d}"
            )
    idx = _core.where(idx < 0, idx + n, idx).astype(_core.int64)
    # Flat offsets into x broadcast to `shape` (with its own extent n along d), C order.
    full = list(shape)
    full[d] = n
    src = _core.broadcast_to(x, tuple(full)).reshape(-1)
    strides = [1] * x.ndim
    for k in range(x.ndim - 2, -1, -1):
        strides[k] = strides[k + 1] * full[k + 1]
    off = _core.broadcast_to(idx, tuple(shape)) * strides[d]
    for k in range(x.ndim):
        if k != d and shape[k] > 1:
            view = [1] * x.ndim
            view[k] = shape[k]
            coord = _core.arange(shape[k], dtype=_core.int64, device=x.device)
            off = off + coord.reshape(tuple(view)) * strides[k]
    return _core.take(src, off.reshape(-1)).reshape(tuple(shape))


def choose(a, choices, out=None, mode="raise"):
    """choices[a[i]][i] for each i (choices broadcast against a); mode 'raise', 'wrap' or
    'clip'."""
    who = "ember.choose"
    idx = _asarray(a)
    if idx.dtype.kind not in "iub":
        raise TypeError(f"{who}: indices must be integers, got dtype {idx.dtype}")
    cs = [_asarray(c) for c in choices]
    n = len(cs)
    if n == 0:
        raise ValueError(f"{who}: choices must not be empty")
    idx = idx.astype(_core.int64)
    if mode == "wrap":
        idx = _core.remainder(idx, n)
    elif mode == "clip":
        idx = _core.clip(idx, 0, n - 1)
    elif mode == "raise":
        if idx.size and (int(_core.min(idx).item()) < 0 or int(_core.max(idx).item()) >= n):
            raise ValueError(f"{who}: invalid entry in choice array")
    else:
        raise ValueError(f"{who}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    t = result_type(*cs)
    r = _core.zeros((), dtype=t, device=idx.device)
    for k in range(n - 1, -1, -1):
        r = _core.where(idx == k, cs[k].astype(t), r)
    shape = broadcast_shapes(idx.shape, *(c.shape for c in cs))
    r = _core.broadcast_to(r, shape).copy()
    if out is not None:
        out[...] = r
        return out
    return r


def compress(condition, a, axis=None):
    """The slices of `a` along `axis` (of the flattened a when None) where the 1-D condition
    holds (a shorter condition counts as false beyond its end)."""
    c = _asarray(condition).astype(_core.bool).reshape((-1,))
    x = _asarray(a)
    if axis is None:
        x, axis = x.reshape((-1,)), 0
    ax = operator.index(axis) % builtins.max(x.ndim, 1)
    n = x.shape[ax]
    if c.shape[0] > n:
        raise IndexError(
            f"ember.compress: the condition is longer ({c.shape[0]}) than the axis ({n})"
        )
    (keep,) = nonzero(c)
    return _core.take(x, keep, axis=ax)


def select(condlist, choicelist, default=0):
    """The element of the first choice whose condition holds, else `default`."""
    if len(condlist) != len(choicelist):
        raise ValueError("ember.select: condlist and choicelist must have the same length")
    if not condlist:
        raise ValueError("ember.select: condlist must not be empty")
    conds = [_asarray(c) for c in condlist]
    for c in conds:
        if c.dtype != _core.bool:
            raise TypeError(f"ember.select: conditions must be boolean, got dtype {c.dtype}")
    choices = [_asarray(c) for c in choicelist]
    t = result_type(*choices, _asarray(default))
    out = asarray(default, dtype=t, device=conds[0].device)
    for c, v in zip(reversed(conds), reversed(choices), strict=True):
        out = _core.where(c, v.astype(t), out)
    return out


def extract(condition, arr):
    """The elements of the flattened arr where the flattened condition is true."""
    return _asarray(arr).reshape((-1,))[_asarray(condition).astype(_core.bool).reshape((-1,))]


# ---- inserting data -------------------------------------------------------------------------


def put_along_axis(arr, indices, values, axis):
    """In place: arr[..., indices, ...] = values along `axis` (indices and values broadcast
    against arr's other dimensions), as NumPy's put_along_axis. With axis None, arr is
    treated as flattened (it must be C-contiguous)."""
    who = "ember.put_along_axis"
    _check(arr, who)
    if not isinstance(indices, _core.ndarray):
        indices = _core._asarray(indices, None, arr.device, None)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(f"{who}: with axis=None, indices must be 1-d")
        flat = arr.reshape((-1,))
        flat[indices] = values
        return
    if indices.ndim != arr.ndim:
        raise ValueError(
            f"{who}: indices and arr must have the same number of dimensions "
            f"(got {indices.ndim} and {arr.ndim})"
        )
    nd = arr.ndim
    ax = axis + nd if axis < 0 else axis
    if not 0 <= ax < nd:
        raise _core.AxisError(f"{who}: axis {axis} is out of bounds for array of dimension {nd}")
    key = []
    for d in range(nd):
        if d == ax:
            key.append(indices)
        else:
            shape = [1] * nd
            shape[d] = arr.shape[d]
            key.append(
                _core.arange(0, arr.shape[d], 1, dtype=_core.int64, device=arr.device).reshape(
                    tuple(shape)
                )
            )
    arr[tuple(key)] = values


def _flat_view(a, who):
    if not isinstance(a, _core.ndarray):
        raise TypeError(f"{who}: expected an ember array, got {type(a).__name__}")
    if not a.flags.writeable:
        raise ValueError(f"{who}: assignment destination is read-only")
    flat = a.reshape((-1,))
    if a.size and (flat.strides[0] != a.itemsize or not may_share_memory(flat, a)):
        raise ValueError(f"{who}: the array must be C-contiguous")
    return flat


def place(arr, mask, vals):
    """Writes vals (repeated as needed) into arr where mask is true, in order, in place."""
    if not isinstance(arr, _core.ndarray):
        raise TypeError(f"ember.place: arr must be an ember.ndarray, got {type(arr).__name__}")
    m = _asarray(mask).astype(_core.bool)
    (pos,) = nonzero(m.reshape((-1,)))
    k = pos.shape[0]
    if k == 0:
        return
    v = _asarray(vals).reshape((-1,)).astype(arr.dtype)
    if v.shape[0] == 0:
        raise ValueError("ember.place: cannot place from an empty vals array")
    v = tile(v, -(-k // v.shape[0]))[:k]
    flat = _flat_view(arr, "ember.place")
    flat[pos] = v


def put(a, ind, v, mode="raise"):
    """a.flat[ind] = v (v repeated as needed), in place; mode 'raise', 'wrap' or 'clip'."""
    who = "ember.put"
    flat = _flat_view(a, who)
    idx = _asarray(ind).reshape((-1,)).astype(_core.int64)
    n = flat.shape[0]
    if idx.shape[0] == 0:
        return
    if mode == "wrap":
        idx = _core.remainder(idx, n)
    elif mode == "clip":
        idx = _core.clip(idx, 0, n - 1)
    elif mode == "raise":
        lo, hi = int(_core.min(idx).item()), int(_core.max(idx).item())
        if lo < -n or hi >= n:
            bad = lo if lo < -n else hi
            raise IndexError(f"{who}: index {bad} is out of bounds for size {n}")
    else:
        raise ValueError(f"{who}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    vals = _asarray(v).reshape((-1,)).astype(a.dtype)
    k = idx.shape[0]
    vals = tile(vals, -(-k // vals.shape[0]))[:k]
    flat[idx] = vals


def putmask(a, mask, values):
    """a[i] = values[i % len(values)] where mask[i], in place (NumPy's putmask)."""
    flat = _flat_view(a, "ember.putmask")
    m = _core.broadcast_to(_asarray(mask).astype(_core.bool), a.shape).reshape((-1,))
    v = _asarray(values).reshape((-1,)).astype(a.dtype)
    if v.shape[0] == 0:
        return
    n = flat.shape[0]
    full = tile(v, -(-n // v.shape[0]))[:n]
    flat[...] = _core.where(m, full, flat)


def fill_diagonal(a, val, wrap=False):
    """Writes `val` on the main diagonal of `a` in place (NumPy's rules: all dimensions equal
    beyond 2-d; for tall 2-d arrays, `wrap` restarts the diagonal below it)."""
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
        v = tile(v.reshape((-1,)), reps)[: target.shape[0]]
    target[...] = v
