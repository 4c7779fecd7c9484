"""Views with explicit strides: PyTorch's ``as_strided``/``x.unfold``/``x.stride()``, NumPy's
``lib.stride_tricks`` (``as_strided`` in bytes, ``sliding_window_view``) and ``x.flat``.

Every view is checked against its storage: shapes, strides and offsets that would reach outside
it raise ValueError (NumPy's ``as_strided`` does not check, and reads or writes stray memory;
ember cannot, on a GPU). Strides are whole elements: NumPy byte strides that are not multiples
of the item size raise ValueError. Gradients flow through ``as_strided``: the gradient of the
view is scattered (summed) onto the storage positions it covers and gathered at the input's."""

from __future__ import annotations

import builtins
import operator

import numpy as np

from . import _array, _core
from ._core import ndarray


def _ints(values, who, what):
    try:
        return [operator.index(v) for v in values]
    except TypeError:
        raise TypeError(f"{who}: {what} must be a sequence of integers, got {values!r}") from None


def _seq(v):
    return list(v) if isinstance(v, (tuple, list)) else [v]


def _positions(shape, strides, offset, device):
    """The storage position of every element of a (shape, strides, offset) view, as int64."""
    pos = _core.full((), offset, dtype="int64", device=device)
    nd = len(shape)
    for d, (n, s) in enumerate(zip(shape, strides, strict=True)):
        ax = _core.arange(n, dtype="int64", device=device) * s
        pos = pos + ax.reshape([n if i == d else 1 for i in range(nd)])
    return _core.broadcast_to(pos, tuple(shape))


def _extent(shape, strides, offset):
    lo = hi = offset
    if all(shape):
        for n, s in zip(shape, strides, strict=True):
            if s < 0:
                lo += (n - 1) * s
            else:
                hi += (n - 1) * s
    return lo, hi


class _AsStrided:
    """The autograd function of as_strided (made lazily: autograd imports this package)."""

    cls = None

    @classmethod
    def get(cls):
        if cls.cls is None:
            from .autograd import Function

            class AsStrided(Function):
                @staticmethod
                def forward(ctx, x, shape, strides, offset, who):
                    ctx.geometry = (x.shape, x.strides_elements, x.storage_offset())
                    ctx.out = (shape, strides, offset)
                    return _core._as_strided(x, shape, strides, offset, who)

                @staticmethod
                def backward(ctx, g):
                    in_shape, in_strides, in_off = ctx.geometry
                    shape, strides, offset = ctx.out
                    lo_i, hi_i = _extent(in_shape, in_strides, in_off)
                    lo_o, hi_o = _extent(shape, strides, offset)
                    base = builtins.min(lo_i, lo_o)
                    n = builtins.max(hi_i, hi_o) - base + 1
                    buf = _core.zeros(n, dtype=g.dtype, device=g.device)
                    pos_o = _positions(shape, strides, offset - base, g.device)
                    _core._add_at(buf, pos_o.reshape(-1), g.reshape(-1))
                    pos_i = _positions(in_shape, in_strides, in_off - base, g.device)
                    return buf.take(pos_i.reshape(-1)).reshape(in_shape), None, None, None, None

            cls.cls = AsStrided
        return cls.cls


def as_strided(input, size, stride, storage_offset=None):  # noqa: A002
    """PyTorch's ``torch.as_strided``: a view of ``input``'s storage with shape ``size``,
    strides ``stride`` (in elements) and ``storage_offset`` (elements from the storage's start;
    the input's own offset when None)."""
    who = "ember.as_strided"
    if not isinstance(input, ndarray):
        raise TypeError(f"{who}: input must be an ember array, got {type(input).__name__}")
    shape = _ints(_seq(size), who, "size")
    strides = _ints(_seq(stride), who, "stride")
    off = input.storage_offset() if storage_offset is None else operator.index(storage_offset)
    if input.requires_grad:
        from .autograd import is_grad_enabled

        if is_grad_enabled():
            return _AsStrided.get().apply(input, shape, strides, off, who)
    return _core._as_strided(input, shape, strides, off, who)


def stride(self, dim=None):
    """PyTorch's ``x.stride()``: the strides in elements (``x.strides`` is NumPy's, in bytes)."""
    st = self.strides_elements
    if dim is None:
        return st
    try:
        return st[dim]
    except IndexError:
        raise IndexError(
            f"ember.ndarray.stride: dim {dim} is out of range for an array of {self.ndim} "
            "dimensions"
        ) from None


def _strides_elements(self):
    item = self.itemsize
    return tuple(s // item for s in self.strides)


def storage_offset(self):
    """PyTorch's ``x.storage_offset()``: elements from the storage's start to the first one."""
    return _core._memory_base(self)[1] // self.itemsize


def unfold(self, dimension, size, step):
    """PyTorch's ``x.unfold(dimension, size, step)``: every slice of ``size`` elements along
    ``dimension``, ``step`` apart, as a new last axis (a view)."""
    who = "ember.ndarray.unfold"
    nd = builtins.max(self.ndim, 1)
    d = operator.index(dimension)
    if not -nd <= d < nd:
        raise IndexError(f"{who}: dimension {d} is out of range for {self.ndim} dimensions")
    d %= nd
    shape = list(self.shape) or [1]
    st = list(self.strides_elements) or [1]
    size, step = operator.index(size), operator.index(step)
    if step <= 0:
        raise ValueError(f"{who}: step must be positive, got {step}")
    if not 0 <= size <= shape[d]:
        raise ValueError(
            f"{who}: size {size} must be at most the dimension's length {shape[d]} (and >= 0)"
        )
    count = (shape[d] - size) // step + 1
    new_shape = shape[:d] + [count] + shape[d + 1 :] + [size]
    new_st = st[:d] + [st[d] * step] + st[d + 1 :] + [st[d]]
    if self.ndim == 0:
        new_shape, new_st = new_shape[1:], new_st[1:]
    return as_strided(self, new_shape, new_st)


# ---- NumPy's lib.stride_tricks ------------------------------------------------------------------


def np_as_strided(x, shape=None, strides=None, subok=False, writeable=True):
    """NumPy's ``lib.stride_tricks.as_strided`` (strides in bytes), checked against the
    storage."""
    who = "ember.lib.stride_tricks.as_strided"
    if not isinstance(x, ndarray):
        x = _array.asarray(x)
    shape = list(x.shape) if shape is None else _ints(_seq(shape), who, "shape")
    item = x.itemsize
    if strides is None:
        st = list(x.strides_elements)
    else:
        bst = _ints(_seq(strides), who, "strides")
        if any(s % item for s in bst):
            raise ValueError(
                f"{who}: strides {tuple(bst)} must be multiples of the item size {item} "
                "(ember views are element-aligned)"
            )
        st = [s // item for s in bst]
    r = as_strided(x, shape, st)
    if not writeable:
        r = _readonly(r)
    return r


def _readonly(r):
    r._writeable = False
    return r


def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """NumPy's ``sliding_window_view``: every window of ``window_shape`` over ``axis`` (all axes
    when None) as trailing axes; a read-only view unless ``writeable``."""
    who = "ember.lib.stride_tricks.sliding_window_view"
    if not isinstance(x, ndarray):
        x = _array.asarray(x)
    window = _ints(_seq(window_shape), who, "window_shape")
    if any(w < 0 for w in window):
        raise ValueError("`window_shape` cannot contain negative values")
    if axis is None:
        if len(window) != x.ndim:
            raise ValueError(
                f"Since axis is `None`, must provide window_shape for all dimensions of `x`; "
                f"got {len(window)} window_shape elements and `x.ndim` is {x.ndim}."
            )
        axes = list(range(x.ndim))
    else:
        axes = _ints(_seq(axis), who, "axis")
        if len(window) != len(axes):
            raise ValueError(
                f"Must provide matching length window_shape and axis; got {len(window)} "
                f"window_shape elements and {len(axes)} axes elements."
            )
        for a in axes:
            if not -x.ndim <= a < x.ndim:
                raise np.exceptions.AxisError(a, x.ndim)
        axes = [a % x.ndim for a in axes]
    shape = list(x.shape)
    for a, w in zip(axes, window, strict=True):
        if shape[a] < w:
            raise ValueError("window shape cannot be larger than input array shape")
        shape[a] -= w - 1
    st = list(x.strides_elements)
    extra = [st[a] for a in axes]
    r = as_strided(x, shape + window, st + extra)
    if not writeable:
        r = _readonly(r)
    return r


# ---- x.flat ---------------------------------------------------------------------------------


class flatiter:  # noqa: N801 - NumPy's name
    """NumPy's ``x.flat``: the array in C order as a 1-D sequence; indexing reads (a copy, as
    NumPy's), item assignment writes into the array, iteration yields 0-d arrays' values."""

    def __init__(self, base):
        self.base = base
        self._i = 0

    def _flat(self):
        return self.base.reshape(-1)

    def __len__(self):
        return int(self.base._numel)

    def __getitem__(self, key):
        return self._flat()[key]

    def __setitem__(self, key, value):
        """``x.flat[key] = value``: NumPy's rule, the values repeated (or cut) to the number of
        positions the key selects; any memory layout."""
        from . import _indexing, _manipulation

        x = self.base
        if not x.flags.writeable:
            raise ValueError("ember.flatiter: assignment destination is read-only")
        n = len(self)
        pos = _core.arange(n, dtype="int64", device=x.device)[key].reshape(-1)
        k = pos.shape[0]
        if k == 0:
            return
        vals = _array.asarray(value, device=x.device).astype(x.dtype).reshape(-1)
        if vals.shape[0] == 0:
            raise ValueError("ember.flatiter: cannot assign from an empty sequence")
        if vals.shape[0] < k:
            vals = _manipulation.tile(vals, -(-k // vals.shape[0]))
        vals = vals[:k]
        if x.flags.c_contiguous:
            x.reshape(-1)[pos] = vals
        else:
            x[_indexing.unravel_index(pos, x.shape)] = vals

    def __iter__(self):
        return iter(self._flat().tolist())

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(_array.asnumpy(self._flat()))
        return a if dtype is None else a.astype(dtype)

    def copy(self):
        return self._flat().copy()

    def __repr__(self):
        return f"<ember.flatiter over an array of shape {tuple(self.base.shape)}>"


def _flat_get(self):
    return flatiter(self)


def _flat_set(self, value):
    flatiter(self)[...] = value


def install():
    nd = ndarray
    nd.strides_elements = property(_strides_elements, doc="Strides in elements (internal).")
    from ._torch_methods import attach

    attach(
        nd,
        {
            "stride": stride,
            "storage_offset": storage_offset,
            "as_strided": lambda self, size, stride, storage_offset=None: as_strided(
                self, size, stride, storage_offset
            ),
            "unfold": unfold,
        },
    )
    nd.flat = property(_flat_get, _flat_set, doc="NumPy's flat iterator over the array.")
