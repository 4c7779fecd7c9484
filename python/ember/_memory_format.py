"""PyTorch's memory formats on ember arrays: ``ember.channels_last`` (N, C, H, W) arrays whose
memory is ordered (N, H, W, C), ``channels_last_3d`` for 5-d, ``contiguous_format`` (C order)
and ``preserve_format``. A format is only a layout: the array's shape, values and NumPy
semantics do not change. Convolutions keep their input's format (``nn/_functional_conv.py``).
"""

from __future__ import annotations

__all__ = [
    "channels_last",
    "channels_last_3d",
    "contiguous_format",
    "memory_format",
    "preserve_format",
]


class memory_format:  # noqa: N801 (PyTorch's spelling)
    """A memory layout for ``contiguous``, ``clone``, ``is_contiguous`` and ``Module.to``."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"ember.{self._name}"

    def __reduce__(self):
        return self._name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
_RANK = {channels_last: 4, channels_last_3d: 5}


def _check(fmt, who):
    if fmt is None:
        return contiguous_format
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{who}: memory_format must be an ember memory format, got {fmt!r}")
    return fmt


def _channels_last_order(x):
    return (0, *range(2, x.ndim), 1)


def is_channels_last(x):
    """Whether x's memory is ordered (N, *spatial, C) (and x is not also C-contiguous)."""
    return x.ndim in (4, 5) and x.transpose(_channels_last_order(x)).flags.c_contiguous


def to_format(x, fmt, who="ember.ndarray.contiguous", copy=False):
    """x in the memory format `fmt` (x itself when already in it and no copy is asked)."""
    fmt = _check(fmt, who)
    if fmt is preserve_format:
        fmt = contiguous_format
        if not x.flags.c_contiguous and is_channels_last(x):
            fmt = channels_last if x.ndim == 4 else channels_last_3d
    if fmt is contiguous_format:
        return x.copy() if copy or not x.flags.c_contiguous else x
    rank = _RANK[fmt]
    if x.ndim != rank:
        raise RuntimeError(f"{who}: {fmt!r} needs a {rank}-d array, got {x.ndim}-d")
    order = _channels_last_order(x)
    if not copy and x.transpose(order).flags.c_contiguous:
        return x
    back = (0, x.ndim - 1, *range(1, x.ndim - 1))
    return x.transpose(order).copy().transpose(back)


def contiguous(self, memory_format=None):
    """The array in `memory_format` (C order by default): itself if already, else a copy.

    PyTorch's ``x.contiguous(memory_format=...)``."""
    if memory_format is preserve_format:
        raise RuntimeError("ember.ndarray.contiguous: preserve_format is not a format to make")
    return to_format(self, memory_format, "ember.ndarray.contiguous")


def clone(self, memory_format=None):
    """A copy; PyTorch's default (``preserve_format``) keeps a channels_last layout."""
    fmt = preserve_format if memory_format is None else memory_format
    return to_format(self, fmt, "ember.ndarray.clone", copy=True)


def is_contiguous(self, memory_format=None):
    """Whether the memory is in `memory_format` (C order by default)."""
    fmt = _check(memory_format, "ember.ndarray.is_contiguous")
    if fmt is contiguous_format:
        return bool(self.flags.c_contiguous)
    if fmt is preserve_format:
        raise RuntimeError("ember.ndarray.is_contiguous: preserve_format is not a format to test")
    return self.ndim == _RANK[fmt] and bool(
        self.transpose(_channels_last_order(self)).flags.c_contiguous
    )
