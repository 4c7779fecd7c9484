"""Bit functions beyond the op table's bitwise operators: bitwise_count, packbits and
unpackbits, composed from shifts and sums (any device)."""

from __future__ import annotations

import builtins
import operator

from . import _core
from ._joining import concat
from ._manipulation import _asarray, moveaxis

__all__ = [
    "bitwise_count",
    "packbits",
    "unpackbits",
]


def bitwise_count(x, /):
    """The number of 1 bits of |x| (uint8)."""
    x = _asarray(x)
    if x.dtype.kind not in "biu":
        raise TypeError(f"ember.bitwise_count: expected integers, got dtype {x.dtype}")
    if x.dtype.kind == "b":
        return x.astype(_core.uint8)
    v = x
    if x.dtype.kind == "i":
        v = _core.where(x < 0, -x, x)  # the magnitude; the most negative value wraps to itself
    u = getattr(_core, f"uint{8 * x.itemsize}")
    v = v.view(u)
    count = _core.zeros(x.shape, dtype=_core.uint8, device=x.device)
    for _ in range(8 * x.itemsize):
        count = count + (v & 1).astype(_core.uint8)
        v = v >> 1
    return count


def packbits(a, /, axis=None, bitorder="big"):
    """The truth values of a packed into uint8, 8 per byte along axis (padded with zeros)."""
    x = _asarray(a)
    if x.dtype.kind not in "biu":
        raise TypeError(f"ember.packbits: expected an integer or bool array, got {x.dtype}")
    if bitorder not in ("big", "little"):
        raise ValueError(f"ember.packbits: bitorder must be 'big' or 'little', got {bitorder!r}")
    if axis is None:
        x, axis = x.reshape((-1,)), 0
    ax = operator.index(axis) % builtins.max(x.ndim, 1)
    x = moveaxis(x != 0, ax, -1).astype(_core.uint8)
    n = x.shape[-1]
    pad = (-n) % 8
    if pad:
        x = concat(
            [x, _core.zeros(x.shape[:-1] + (pad,), dtype=_core.uint8, device=x.device)], axis=-1
        )
    x = x.reshape(x.shape[:-1] + ((n + pad) // 8, 8))
    shifts = (
        _core.arange(7, -1, -1, device=x.device)
        if bitorder == "big"
        else _core.arange(8, device=x.device)
    )
    packed = _core.sum(
        _core.bitwise_left_shift(x, shifts.astype(_core.uint8)), axis=-1, dtype=_core.uint8
    )
    return moveaxis(packed, -1, ax)


def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """The bits of a uint8 array, as uint8 zeros and ones (8 per byte along axis)."""
    x = _asarray(a)
    if x.dtype != _core.uint8:
        raise TypeError(f"ember.unpackbits: expected a uint8 array, got {x.dtype}")
    if bitorder not in ("big", "little"):
        raise ValueError(f"ember.unpackbits: bitorder must be 'big' or 'little', got {bitorder!r}")
    if axis is None:
        x, axis = x.reshape((-1,)), 0
    ax = operator.index(axis) % builtins.max(x.ndim, 1)
    x = moveaxis(x, ax, -1)
    shifts = (
        _core.arange(7, -1, -1, device=x.device)
        if bitorder == "big"
        else _core.arange(8, device=x.device)
    )
    bits = _core.bitwise_right_shift(x[..., None], shifts.astype(_core.uint8)) & 1
    bits = bits.reshape(x.shape[:-1] + (x.shape[-1] * 8,))
    if count is not None:
        count = operator.index(count)
        total = bits.shape[-1]
        if count >= 0:
            if count <= total:
                bits = bits[..., :count]
            else:
                z = _core.zeros(
                    bits.shape[:-1] + (count - total,), dtype=_core.uint8, device=x.device
                )
                bits = concat([bits, z], axis=-1)
        else:
            bits = bits[..., : builtins.max(total + count, 0)]
    return moveaxis(bits, -1, ax)
