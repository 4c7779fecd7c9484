"""Samplers and the other dataset kinds of ``ember.data`` (PyTorch's names and semantics):
``Sampler``, ``SequentialSampler``, ``RandomSampler``, ``SubsetRandomSampler``,
``WeightedRandomSampler``, ``BatchSampler``; ``IterableDataset``, ``ConcatDataset``,
``ChainDataset``."""

from __future__ import annotations

import bisect
import builtins
import numbers

import numpy as _np

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]


def _rng(generator):
    """A NumPy generator for sampling indices (host-side), from an ember Generator, an int
    seed or None."""
    if generator is None:
        return _np.random.default_rng()
    if isinstance(generator, (numbers.Integral, _np.integer)) and not isinstance(
        generator, builtins.bool
    ):
        return _np.random.default_rng(int(generator))
    seed = getattr(generator, "_host_seed", None)
    if callable(seed):
        return _np.random.default_rng(seed())
    from . import random as _random

    if isinstance(generator, _random.Generator):
        # a fresh draw from the ember generator seeds the host sampler: the generator's stream
        # decides the order, as PyTorch's generator= does
        return _np.random.default_rng(int(generator.integers(0, 2**63 - 1, (), device="cpu")))
    raise TypeError(
        "ember.data: generator must be an ember.random.Generator, an int or None, got "
        f"{generator!r}"
    )


class Sampler:
    """An iterable of dataset indices (a base class: implement ``__iter__`` and ``__len__``)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random order of the dataset (``replacement``: `num_samples` draws with replacement)."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = builtins.bool(replacement)
        self._num_samples = num_samples
        self.generator = generator
        if num_samples is not None and (
            not isinstance(num_samples, numbers.Integral) or num_samples <= 0
        ):
            raise ValueError(
                f"ember.data.RandomSampler: num_samples must be a positive int, got {num_samples!r}"
            )

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        rng = _rng(self.generator)
        if self.replacement:
            return iter(rng.integers(0, n, self.num_samples).tolist())
        out = []
        while len(out) < self.num_samples:
            out += rng.permutation(n).tolist()
        return iter(out[: self.num_samples])

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = list(indices)
        self.generator = generator

    def __iter__(self):
        rng = _rng(self.generator)
        return iter([self.indices[i] for i in rng.permutation(len(self.indices)).tolist()])

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probabilities proportional to `weights`."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        from ._array import asnumpy

        w = _np.asarray(
            asnumpy(weights) if hasattr(weights, "device") else weights, dtype=_np.float64
        )
        if w.ndim != 1 or (w < 0).any() or not _np.isfinite(w).all() or w.sum() <= 0:
            raise ValueError(
                "ember.data.WeightedRandomSampler: weights must be a 1-d sequence of "
                "non-negative finite numbers with a positive sum"
            )
        if (
            isinstance(num_samples, builtins.bool)
            or not isinstance(num_samples, numbers.Integral)
            or num_samples <= 0
        ):
            raise ValueError(
                "ember.data.WeightedRandomSampler: num_samples must be a positive int, got "
                f"{num_samples!r}"
            )
        if not replacement and num_samples > (w > 0).sum():
            raise ValueError(
                "ember.data.WeightedRandomSampler: num_samples exceeds the nonzero weights "
                "without replacement"
            )
        self.weights, self.num_samples, self.replacement = (
            w,
            int(num_samples),
            builtins.bool(replacement),
        )
        self.generator = generator

    def __iter__(self):
        rng = _rng(self.generator)
        p = self.weights / self.weights.sum()
        return iter(rng.choice(len(p), self.num_samples, replace=self.replacement, p=p).tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of `batch_size` (the last shorter unless
    `drop_last`)."""

    def __init__(self, sampler, batch_size, drop_last):
        if (
            isinstance(batch_size, builtins.bool)
            or not isinstance(batch_size, numbers.Integral)
            or batch_size <= 0
        ):
            raise ValueError(
                f"ember.data.BatchSampler: batch_size must be a positive int, got {batch_size!r}"
            )
        self.sampler, self.batch_size, self.drop_last = (
            sampler,
            int(batch_size),
            builtins.bool(drop_last),
        )

    def __iter__(self):
        batch = []
        for i in self.sampler:
            batch.append(int(i))
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class IterableDataset:
    """A dataset that is an iterable of samples (implement ``__iter__``). In a ``DataLoader``
    with workers, each worker iterates its own copy; ``ember.data.get_worker_info()`` tells it
    which share to yield."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")

    def __add__(self, other):
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)

    def __iter__(self):
        for d in self.datasets:
            yield from d


class ConcatDataset:
    """Map-style datasets one after the other: index i goes to the dataset that holds it."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ember.data.ConcatDataset: needs at least one dataset")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError(
                    "ember.data.ConcatDataset: iterable datasets cannot be indexed; use "
                    "ChainDataset"
                )
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, i):
        n = len(self)
        if isinstance(i, builtins.bool) or not isinstance(i, (numbers.Integral, _np.integer)):
            raise TypeError(
                f"ember.data.ConcatDataset: index must be an int, got {type(i).__name__}"
            )
        i = int(i)
        if not -n <= i < n:
            raise IndexError(f"ember.data.ConcatDataset: index {i} is out of range for length {n}")
        if i < 0:
            i += n
        k = bisect.bisect_right(self.cumulative_sizes, i)
        start = self.cumulative_sizes[k - 1] if k else 0
        return self.datasets[k][i - start]
