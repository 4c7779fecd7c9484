"""ember.data: datasets and mini-batch loading (``Dataset``, ``TensorDataset``, ``Subset``,
``random_split``, ``DataLoader``, ``default_collate``), with PyTorch's names and semantics.

Batches are ember arrays. A ``DataLoader`` over a ``TensorDataset`` (or a ``Subset`` of one, as
``random_split`` makes) gathers each batch with one ``ember.take`` per array, on the arrays' own
device, instead of stacking one sample at a time; other datasets go through ``collate_fn``.
"""

from __future__ import annotations

import builtins
import math
import numbers
import warnings
from collections.abc import Mapping, Sequence

import numpy as _np

from . import cuda as _cuda
from . import random as _random
from ._array import asarray, asnumpy
from ._core import ndarray
from ._joining import stack as _joining_stack

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "WorkerInfo",
    "default_collate",
    "get_worker_info",
    "random_split",
]


class Dataset:
    """A map-style dataset: ``dataset[i]`` is sample ``i`` for ``0 <= i < len(dataset)``.

    Subclasses implement ``__getitem__`` and ``__len__``."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __len__")


def _index(i, n, who):
    """``i`` as a Python int in ``[0, n)`` (negative counts from the end), or IndexError."""
    if isinstance(i, builtins.bool) or not isinstance(i, (numbers.Integral, _np.integer)):
        if isinstance(i, ndarray) and i.ndim == 0 and i.dtype.kind in "iu":
            i = i.item()
        else:
            raise TypeError(f"{who}: index must be an int, got {type(i).__name__} {i!r}")
    i = int(i)
    if not -n <= i < n:
        raise IndexError(f"{who}: index {i} is out of range for length {n}")
    return i + n if i < 0 else i


def _int_list(values, who, name):
    """A list of Python ints from a sequence, NumPy or ember array of integers."""
    if isinstance(values, ndarray):
        values = asnumpy(values)
    if isinstance(values, _np.ndarray):
        if values.ndim != 1 or (values.dtype.kind not in "iu" and values.size):
            raise TypeError(
                f"{who}: {name} must be a 1-d sequence of ints, got an array of shape "
                f"{values.shape} and dtype {values.dtype}"
            )
        return [int(v) for v in values]
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence | range):
        try:
            values = list(values)
        except TypeError:
            raise TypeError(
                f"{who}: {name} must be a sequence of ints, got {type(values).__name__}"
            ) from None
    out = []
    for v in values:
        if isinstance(v, builtins.bool) or not isinstance(v, (numbers.Integral, _np.integer)):
            raise TypeError(f"{who}: {name} must contain ints, got {type(v).__name__} {v!r}")
        out.append(int(v))
    return out


class TensorDataset(Dataset):
    """Samples are rows of arrays sharing their first dimension: ``dataset[i]`` is
    ``(a[i] for a in arrays)`` as a tuple.

    Arrays that are not ember arrays (NumPy arrays, lists) are converted with
    ``ember.asarray``. Arrays may live on any device; a ``DataLoader`` gathers each batch on the
    device of each array.
    """

    def __init__(self, *arrays):
        who = "ember.data.TensorDataset"
        if not arrays:
            raise ValueError(f"{who}: needs at least one array")
        conv = []
        for k, a in enumerate(arrays):
            if not isinstance(a, ndarray):
                try:
                    a = asarray(a)
                except (TypeError, ValueError) as e:
                    raise TypeError(f"{who}: array {k} is not array-like: {e}") from None
            if a.ndim == 0:
                raise ValueError(f"{who}: array {k} is 0-d; every array needs a first dimension")
            conv.append(a)
        sizes = [a.shape[0] for a in conv]
        if any(s != sizes[0] for s in sizes):
            raise ValueError(
                f"{who}: the arrays' first dimensions differ: {tuple(sizes)}; they must be equal"
            )
        self.arrays = tuple(conv)

    def __getitem__(self, index):
        i = _index(index, len(self), "ember.data.TensorDataset")
        return tuple(a[i] for a in self.arrays)

    def __len__(self):
        return self.arrays[0].shape[0]

    def __repr__(self):
        shapes = ", ".join(str(tuple(a.shape)) for a in self.arrays)
        return f"TensorDataset({shapes})"


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order: ``subset[i]`` is
    ``dataset[indices[i]]``."""

    def __init__(self, dataset, indices):
        who = "ember.data.Subset"
        self.dataset = dataset
        self.indices = _int_list(indices, who, "indices")
        n = _len_or_none(dataset)
        if n is not None:
            for i in self.indices:
                if not -n <= i < n:
                    raise IndexError(f"{who}: index {i} is out of range for a dataset of {n}")

    def __getitem__(self, index):
        if isinstance(index, list):
            return [
                self.dataset[self.indices[_index(i, len(self), "ember.data.Subset")]] for i in index
            ]
        return self.dataset[self.indices[_index(index, len(self), "ember.data.Subset")]]

    def __len__(self):
        return len(self.indices)

    def __repr__(self):
        return f"Subset({type(self.dataset).__name__}, {len(self)} samples)"


def _len_or_none(dataset):
    try:
        return len(dataset)
    except TypeError:
        return None


def _generator(generator, who):
    """An ember.random Generator from None (fresh entropy), an int seed or a Generator."""
    if generator is None:
        return _random.default_rng()
    if isinstance(generator, _random.Generator):
        return generator
    if isinstance(generator, (numbers.Integral, _np.integer)) and not isinstance(
        generator, builtins.bool
    ):
        if generator < 0:
            raise ValueError(f"{who}: generator seed must be non-negative, got {generator}")
        return _random.default_rng(int(generator))
    raise TypeError(
        f"{who}: generator must be None, an int seed or an ember.random.Generator, "
        f"got {type(generator).__name__} {generator!r}"
    )


def _permutation(gen, n):
    return asnumpy(gen.permutation(n, device="cpu")).astype(_np.int64, copy=False)


def random_split(dataset, lengths, generator=None):
    """Splits `dataset` into non-overlapping random ``Subset``\\ s of the given lengths.

    `lengths` are ints summing to ``len(dataset)``, or fractions summing to 1: then each split
    gets ``floor(fraction * len(dataset))`` samples and the samples left over go one each to the
    splits in order, as in PyTorch. `generator` is an ``ember.random.Generator``, an int seed,
    or None (fresh entropy).
    """
    who = "ember.data.random_split"
    n = _len_or_none(dataset)
    if n is None:
        raise TypeError(f"{who}: dataset must have a length, got {type(dataset).__name__}")
    if isinstance(lengths, (str, bytes)) or not isinstance(lengths, Sequence):
        try:
            lengths = list(lengths)
        except TypeError:
            raise TypeError(
                f"{who}: lengths must be a sequence of ints or fractions, "
                f"got {type(lengths).__name__}"
            ) from None
    lengths = list(lengths)
    if not lengths:
        raise ValueError(f"{who}: lengths must not be empty")
    for v in lengths:
        if isinstance(v, builtins.bool) or not isinstance(v, (numbers.Real, _np.number)):
            raise TypeError(f"{who}: lengths must be ints or fractions, got {v!r}")
        if not math.isfinite(float(v)) or v < 0:
            raise ValueError(f"{who}: lengths must be non-negative, got {v!r}")
    all_ints = all(isinstance(v, (numbers.Integral, _np.integer)) for v in lengths)
    if not all_ints:
        if not math.isclose(sum(float(v) for v in lengths), 1.0) or any(v > 1 for v in lengths):
            raise ValueError(
                f"{who}: fractional lengths must sum to 1, got {lengths!r} (sum "
                f"{sum(float(v) for v in lengths)})"
            )
        sizes = [math.floor(n * float(f)) for f in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, s in enumerate(sizes):
            if s == 0:
                warnings.warn(
                    f"{who}: length of split {i} is 0; that split will be empty",
                    stacklevel=2,
                )
        lengths = sizes
    lengths = [int(v) for v in lengths]
    if sum(lengths) != n:
        raise ValueError(
            f"{who}: the lengths {lengths} sum to {sum(lengths)}, not to the dataset's length {n}"
        )
    order = _permutation(_generator(generator, who), n).tolist()
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, order[start : start + length]))
        start += length
    return out


def _stack(arrays):
    """Stacks same-shaped ember arrays along a new first axis (on their common device)."""
    first = arrays[0]
    for a in arrays[1:]:
        if a.shape != first.shape:
            raise ValueError(
                "ember.data.default_collate: samples must have equal shapes to be stacked, "
                f"got {tuple(first.shape)} and {tuple(a.shape)}"
            )
        if a.device != first.device:
            raise ValueError(
                "ember.data.default_collate: samples must be on one device to be stacked, "
                f"got {first.device} and {a.device}"
            )
    return _joining_stack(list(arrays), axis=0)


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def default_collate(batch):
    """Merges a list of samples into a batch.

    Ember arrays are stacked along a new first axis; NumPy arrays and Python or NumPy numbers
    become one ember array (Python ``bool``, ``int``, ``float``, ``complex`` give bool, int64,
    float64, complex128); strings stay a list; dicts, tuples (named ones too) and lists of those
    are collated element by element, keeping their type.
    """
    who = "ember.data.default_collate"
    if not isinstance(batch, Sequence) or isinstance(batch, (str, bytes)):
        raise TypeError(f"{who}: batch must be a list of samples, got {type(batch).__name__}")
    if not batch:
        raise ValueError(f"{who}: batch is empty")
    elem = batch[0]
    if isinstance(elem, ndarray):
        for b in batch:
            if not isinstance(b, ndarray):
                raise TypeError(
                    f"{who}: a batch mixes ember arrays with {type(b).__name__}; samples at the "
                    "same position must have the same type"
                )
        return _stack(batch)
    if isinstance(elem, _np.ndarray):
        try:
            return asarray(_np.stack([_np.asarray(b) for b in batch]))
        except ValueError as e:
            raise ValueError(f"{who}: cannot stack NumPy samples: {e}") from None
    if isinstance(elem, (builtins.bool, _np.bool_)):
        return asarray(_np.asarray(batch, dtype=_np.bool_))
    if isinstance(elem, (numbers.Number, _np.number)):
        if isinstance(elem, _np.number):
            return asarray(_np.asarray(batch))
        if isinstance(elem, numbers.Integral):
            return asarray(_np.asarray(batch, dtype=_np.int64))
        if isinstance(elem, numbers.Real):
            return asarray(_np.asarray(batch, dtype=_np.float64))
        return asarray(_np.asarray(batch, dtype=_np.complex128))
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, Mapping):
        keys = list(elem.keys())
        for b in batch:
            if not isinstance(b, Mapping) or set(b.keys()) != set(keys):
                raise ValueError(
                    f"{who}: dict samples must all have the keys {keys}, got "
                    f"{list(b.keys()) if isinstance(b, Mapping) else type(b).__name__}"
                )
        out = {k: default_collate([b[k] for b in batch]) for k in keys}
        return out if type(elem) is dict else _rebuild_mapping(elem, out)
    if isinstance(elem, Sequence):
        n = len(elem)
        for b in batch:
            if not isinstance(b, Sequence) or len(b) != n:
                raise ValueError(
                    f"{who}: sequence samples must all have length {n}, got "
                    f"{len(b) if isinstance(b, Sequence) else type(b).__name__}"
                )
        fields = [default_collate(list(s)) for s in zip(*batch, strict=True)]
        if _is_namedtuple(elem):
            return type(elem)(*fields)
        if isinstance(elem, tuple):
            return tuple(fields)
        return fields
    raise TypeError(
        f"{who}: samples must be ember or NumPy arrays, numbers, strings, dicts, tuples or "
        f"lists; got {type(elem).__name__}"
    )


def _rebuild_mapping(elem, out):
    try:
        return type(elem)(out)
    except TypeError:
        return out


def _gather_source(dataset):
    """For a TensorDataset, or Subsets of one, its arrays and the index map (None: identity)."""
    index_map = None
    while type(dataset).__getitem__ is Subset.__getitem__ and isinstance(dataset, Subset):
        idx = _np.asarray(dataset.indices, dtype=_np.int64)
        index_map = idx if index_map is None else idx[index_map]
        dataset = dataset.dataset
    if isinstance(dataset, TensorDataset) and (
        type(dataset).__getitem__ is TensorDataset.__getitem__
    ):
        if index_map is not None:
            n = len(dataset)
            index_map = _np.where(index_map < 0, index_map + n, index_map)
        return dataset.arrays, index_map
    return None, None


def _cuda_available():
    return _cuda.is_available()


def _pinned(a):
    """A CPU array in pinned host memory with a's values (a itself when it already is)."""
    if a.device.type != "cpu" or _cuda.is_pinned(a):
        return a
    p = _cuda.pinned_empty(a.shape, a.dtype)
    p[...] = a
    return p


def _map_arrays(batch, fn):
    """fn applied to every ember array inside a batch (nested tuples, lists, dicts)."""
    if isinstance(batch, ndarray):
        return fn(batch)
    if isinstance(batch, Mapping):
        out = {k: _map_arrays(v, fn) for k, v in batch.items()}
        return out if type(batch) is dict else _rebuild_mapping(batch, out)
    if _is_namedtuple(batch):
        return type(batch)(*(_map_arrays(v, fn) for v in batch))
    if isinstance(batch, tuple):
        return tuple(_map_arrays(v, fn) for v in batch)
    if isinstance(batch, list):
        return [_map_arrays(v, fn) for v in batch]
    return batch


# The loader, samplers and other dataset kinds live in their own modules (PyTorch's names).
from ._data_loader import DataLoader  # noqa: E402
from ._data_sampling import (  # noqa: E402
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    IterableDataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from ._data_workers import WorkerInfo, get_worker_info  # noqa: E402


def __getattr__(name):
    # image datasets and batch transforms import on first use (Pillow is needed only then)
    if name in ("IMG_EXTENSIONS", "ImageFolder", "ToArray"):
        from . import _data_images

        return getattr(_data_images, name)
    if name == "transforms":
        from . import _data_transforms

        return _data_transforms
    raise AttributeError(f"module 'ember.data' has no attribute {name!r}")
