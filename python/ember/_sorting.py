"""Sorting, searching and counting: sort and argsort (Array API and NumPy spellings),
searchsorted, lexsort, partition, argpartition, sort_complex and count_nonzero, composed from the
backends' sort family (a radix sort on the GPU) and ember ops, so they run on any device without
host copies. Every sort is stable; NaN sorts last (first when descending), -0.0 equals 0.0,
complex numbers order by real then imaginary part (NumPy's order). The order statistics built on
sort (quantile, percentile, median) are in _statistics."""

from __future__ import annotations

import builtins
import operator

from . import _core
from ._array import asarray
from ._dtypes import result_type
from ._indexing import take_along_axis
from ._joining import _axis
from ._manipulation import _asarray

__all__ = [
    "argpartition",
    "argsort",
    "count_nonzero",
    "lexsort",
    "partition",
    "searchsorted",
    "sort",
    "sort_complex",
]


_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _check_kind(kind, order, who):
    if kind not in _KINDS:
        raise ValueError(f"{who}: kind must be one of {_KINDS[1:]} or None, got {kind!r}")
    if order is not None:
        raise ValueError(f"{who}: order is only for structured arrays, which ember does not have")


def _sort_args(x, axis, who, zero_d_as_1d=False):
    """(x, axis) to sort along. NumPy's argsort and argpartition read a 0-d array as 1-d (one
    element, axis 0 or -1); sort and partition raise AxisError for it unless axis is None."""
    x = _asarray(x)
    if axis is None:
        return x.reshape(-1), -1
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{who}: axis must be an integer or None, got {axis!r}") from None
    if x.ndim == 0:
        if not zero_d_as_1d:
            raise _core.AxisError(f"{who}: axis {a} is out of bounds for array of dimension 0")
        x = x.reshape(1)
    return x, _axis(a, x.ndim, who)


def sort(x, /, axis=-1, kind=None, order=None, *, descending=False, stable=True):
    """A sorted copy of ``x`` along `axis` (``None``: flattened). Stable; NaN last;
    ``descending=True`` is the reverse order (NaN first) with equal elements in input order.
    Differentiable: the gradient flows back through the permutation."""
    who = "ember.sort"
    _check_kind(kind, order, who)
    x, a = _sort_args(x, axis, who)
    return _core._sort(x, a, builtins.bool(descending), builtins.bool(stable))


def argsort(x, /, axis=-1, kind=None, order=None, *, descending=False, stable=True):
    """The int64 indices that sort ``x`` along `axis` (``None``: flattened), stable (ties keep
    their input order, also with ``descending=True``). Not differentiable (integer output)."""
    who = "ember.argsort"
    _check_kind(kind, order, who)
    x, a = _sort_args(x, axis, who, zero_d_as_1d=True)
    return _core._argsort(x, a, builtins.bool(descending), builtins.bool(stable))


def searchsorted(x1, x2, /, side="left", sorter=None):
    """Insertion positions (int64) of ``x2``'s elements in the ascending 1-D ``x1`` that keep it
    sorted: before equal elements for ``side='left'``, after them for ``'right'``. ``sorter``
    holds indices that sort ``x1``. Runs on the device (a binary search per element)."""
    who = "ember.searchsorted"
    if side not in ("left", "right"):
        raise ValueError(f"{who}: side must be 'left' or 'right', got {side!r}")
    x1 = _asarray(x1)
    if x1.ndim != 1:
        raise ValueError(f"{who}: x1 must be 1-dimensional, got {x1.ndim} dimensions")
    if sorter is not None:
        sorter = _asarray(sorter)
        if sorter.dtype.kind not in "iu":
            raise TypeError(f"{who}: sorter must be integers, got dtype {sorter.dtype}")
        if sorter.shape != x1.shape:
            raise ValueError(f"{who}: sorter has shape {sorter.shape} but x1 has {x1.shape}")
        x1 = _core.take(x1, sorter)
    if isinstance(x2, builtins.bool | int | float | complex):
        dt = result_type(x1, x2)
        v = _core.full((), x2, dtype=dt, device=x1.device)
    else:
        v = x2 if isinstance(x2, _core.ndarray) else asarray(x2, device=x1.device)
        dt = result_type(x1, v)
    if x1.device != v.device:
        raise ValueError(f"{who}: x1 is on {x1.device} but x2 is on {v.device}")
    x1 = x1 if x1.dtype == dt else x1.astype(dt)
    v = v if v.dtype == dt else v.astype(dt)
    return _core._searchsorted(x1, v, side == "right")


def lexsort(keys, axis=-1):
    """Indices that sort by several keys, the last key primary (NumPy's lexsort): repeated
    stable argsorts, from the first key to the last."""
    who = "ember.lexsort"
    if isinstance(keys, _core.ndarray):
        if keys.ndim == 0:
            raise TypeError(f"{who}: need a sequence of keys, got a 0-d array")
        ks = [keys[i] for i in range(keys.shape[0])]
    else:
        ks = [_asarray(k) for k in keys]
    if not ks:
        raise TypeError(f"{who}: need at least one key")
    shape = ks[0].shape
    for k in ks[1:]:
        if k.shape != shape:
            raise ValueError(f"{who}: all keys need the same shape, got {shape} and {k.shape}")
    if len(shape) == 0:
        raise _core.AxisError(f"{who}: axis {axis} is out of bounds for 0-dimensional keys")
    a = _axis(axis, len(shape), who)
    idx = _core._argsort(ks[0], a, False, True)
    for k in ks[1:]:
        order = _core._argsort(take_along_axis(k, idx, axis=a), a, False, True)
        idx = take_along_axis(idx, order, axis=a)
    return idx


def _check_kth(kth, n, who):
    ks = kth if isinstance(kth, list | tuple) else [kth]
    try:
        ks = [operator.index(k) for k in ks]
    except TypeError:
        raise TypeError(f"{who}: kth must be an integer or a sequence of integers") from None
    for k in ks:
        if not -n <= k < n:
            raise ValueError(f"{who}: kth(={k}) out of bounds ({n})")


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A copy of ``a`` with the k-th element of each slice along `axis` where a sort would put it,
    smaller ones before, larger ones after (NumPy's partition property). Computed by a sort."""
    who = "ember.partition"
    if kind != "introselect":
        raise ValueError(f"{who}: kind must be 'introselect', got {kind!r}")
    _check_kind(None, order, who)
    x, ax = _sort_args(a, axis, who)
    _check_kth(kth, x.shape[ax], who)
    return _core._sort(x, ax, False, True)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """Indices that partition ``a`` (see partition). Computed by a stable argsort."""
    who = "ember.argpartition"
    if kind != "introselect":
        raise ValueError(f"{who}: kind must be 'introselect', got {kind!r}")
    _check_kind(None, order, who)
    x, ax = _sort_args(a, axis, who, zero_d_as_1d=True)
    _check_kth(kth, x.shape[ax], who)
    return _core._argsort(x, ax, False, True)


def _method_sort(self, axis=-1, kind=None, order=None, *, descending=False, stable=True):
    """Sorts the array in place along `axis` (NumPy's ndarray.sort)."""
    who = "ember.ndarray.sort"
    _check_kind(kind, order, who)
    if axis is None:
        raise ValueError(f"{who}: axis=None is not allowed for an in-place sort")
    x, a = _sort_args(self, axis, who)
    self[...] = _core._sort(x, a, builtins.bool(descending), builtins.bool(stable))


def _method_argsort(self, axis=-1, kind=None, order=None, *, descending=False, stable=True):
    """The indices that sort the array (see ember.argsort)."""
    return argsort(self, axis, kind, order, descending=descending, stable=stable)


def _method_searchsorted(self, v, side="left", sorter=None):
    """Insertion positions of v in this sorted 1-D array (see ember.searchsorted)."""
    return searchsorted(self, v, side=side, sorter=sorter)


def _method_partition(self, kth, axis=-1, kind="introselect", order=None):
    """Partitions the array in place (see ember.partition)."""
    self[...] = partition(self, kth, axis, kind, order)


def _method_argpartition(self, kth, axis=-1, kind="introselect", order=None):
    """Indices that partition the array (see ember.argpartition)."""
    return argpartition(self, kth, axis, kind, order)


_core.ndarray.sort = _method_sort


_core.ndarray.argsort = _method_argsort


_core.ndarray.searchsorted = _method_searchsorted


_core.ndarray.partition = _method_partition


_core.ndarray.argpartition = _method_argpartition


def sort_complex(a):
    """The array sorted by real part, then imaginary part, as complex."""
    x = _asarray(a)
    if x.dtype.kind != "c":
        x = x.astype(
            _core.complex64 if x.dtype.kind in "biu" and x.itemsize <= 2 else _core.complex128
        )
    return sort(x)


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """The number of non-zero elements (along `axis`), as int64."""
    x = _asarray(x)
    return _core.sum(x != 0, axis=axis, dtype=_core.int64, keepdims=keepdims)
