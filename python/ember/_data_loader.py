"""``ember.data.DataLoader`` (PyTorch's arguments, in PyTorch's order)."""

from __future__ import annotations

import builtins
import numbers

import numpy as _np

from . import _core
from . import _data_workers as _workers
from ._array import asarray
from ._data_sampling import BatchSampler, IterableDataset, Sampler


class DataLoader:
    """Iterates over `dataset` in mini-batches.

    - `batch_size`: samples per batch (a positive int); the last batch is smaller unless
      `drop_last` is True, when it is dropped. ``len(loader)`` is the number of batches.
      ``None``: samples one at a time, not collated.
    - `shuffle`: a new random order every epoch (every ``iter(loader)``), drawn from
      `generator`: an ``ember.random.Generator``, an int seed (the same seed gives the same
      sequence of epochs), or None (fresh entropy). `sampler` (an iterable of indices) or
      `batch_sampler` (of lists of indices) choose the order instead.
    - `collate_fn`: merges a list of samples into a batch (default ``default_collate``: arrays
      are stacked; tuples and dicts are collated element-wise; numbers become arrays).
    - `num_workers`: worker processes that load and collate batches in parallel (the standard
      library's multiprocessing, `multiprocessing_context` as in PyTorch), `prefetch_factor`
      batches each in flight, batches in order; `worker_init_fn(worker_id)` runs first in each,
      ``ember.data.get_worker_info()`` tells a worker who it is; `persistent_workers` keeps them
      across epochs; `timeout` seconds at most per batch. Workers compute on the CPU.
    - `device`: every array of every batch is moved there with ``.to(device)`` (None: left where
      the dataset has it).
    - `pin_memory`: the batch's CPU arrays are copied into page-locked host memory
      (``ember.cuda.pinned_empty``), and moved to `device` with ``non_blocking=True`` (one
      asynchronous copy each, ordered on the current stream). Ignored without CUDA, as in
      PyTorch.

    A ``TensorDataset``, or a ``Subset`` of one (as ``random_split`` returns), with the default
    `collate_fn` and no sampler, takes a fast path: each batch is one gather (``ember.take``
    along axis 0) per array on that array's device, giving a tuple of arrays (workers would add
    nothing there, so it takes the fast path with them too).
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 device=None):  # fmt: skip
        from . import data as _data

        who = "ember.data.DataLoader"
        self._iterable = isinstance(dataset, IterableDataset)
        n = _data._len_or_none(dataset)
        if not self._iterable and (n is None or not hasattr(dataset, "__getitem__")):
            raise TypeError(
                f"{who}: dataset must support len() and indexing, or be an IterableDataset, "
                f"got {type(dataset).__name__}"
            )
        if batch_size is not None:
            if isinstance(batch_size, builtins.bool) or not isinstance(
                batch_size, (numbers.Integral, _np.integer)
            ):
                raise TypeError(f"{who}: batch_size must be a positive int, got {batch_size!r}")
            if batch_size <= 0:
                raise ValueError(f"{who}: batch_size must be a positive int, got {batch_size!r}")
        shuffle = False if shuffle is None else shuffle
        for name, v in (("shuffle", shuffle), ("drop_last", drop_last), ("pin_memory", pin_memory),
                        ("persistent_workers", persistent_workers)):  # fmt: skip
            if not isinstance(v, (builtins.bool, _np.bool_)):
                raise TypeError(f"{who}: {name} must be a bool, got {v!r}")
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError(f"{who}: collate_fn must be callable, got {collate_fn!r}")
        if (
            isinstance(num_workers, builtins.bool)
            or not isinstance(num_workers, numbers.Integral)
            or num_workers < 0
        ):
            raise ValueError(f"{who}: num_workers must be an int >= 0, got {num_workers!r}")
        if num_workers == 0 and (prefetch_factor is not None or persistent_workers):
            raise ValueError(f"{who}: prefetch_factor and persistent_workers need num_workers > 0")
        if sampler is not None and shuffle:
            raise ValueError(f"{who}: sampler and shuffle are mutually exclusive")
        if batch_sampler is not None and (
            batch_size != 1 or shuffle or sampler is not None or drop_last
        ):
            raise ValueError(
                f"{who}: batch_sampler is mutually exclusive with batch_size, shuffle, sampler "
                "and drop_last"
            )
        if self._iterable and (shuffle or sampler is not None or batch_sampler is not None):
            raise ValueError(
                f"{who}: an IterableDataset takes no shuffle, sampler or batch_sampler"
            )
        if worker_init_fn is not None and not callable(worker_init_fn):
            raise TypeError(f"{who}: worker_init_fn must be callable, got {worker_init_fn!r}")
        if device is not None:
            device = _core.Device(device) if not isinstance(device, _core.Device) else device
        self.dataset = dataset
        self.batch_size = None if batch_size is None else int(batch_size)
        self.shuffle = builtins.bool(shuffle)
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.drop_last = builtins.bool(drop_last)
        self.collate_fn = (
            (_data.default_collate if batch_size is not None else _identity)
            if collate_fn is None
            else collate_fn
        )
        self.device = device
        self.pin_memory = builtins.bool(pin_memory)
        self.num_workers = int(num_workers)
        self.prefetch_factor = 2 if prefetch_factor is None else int(prefetch_factor)
        self.persistent_workers = builtins.bool(persistent_workers)
        self.timeout = float(timeout)
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self._pool = None
        # the generator is made once, so each epoch continues its stream (a new order each time)
        self.generator = (
            _data._generator(generator, who) if self.shuffle or generator is not None else None
        )

    def __len__(self):
        if self._iterable:
            raise TypeError("ember.data.DataLoader: an IterableDataset has no length")
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _order(self):
        from . import data as _data

        if self.sampler is not None:
            return _np.fromiter((int(i) for i in self.sampler), dtype=_np.int64)
        n = len(self.dataset)
        if self.shuffle:
            return _data._permutation(self.generator, n)
        return _np.arange(n, dtype=_np.int64)

    def _batch_indices(self):
        """The index lists of one epoch's batches."""
        if self.batch_sampler is not None:
            for b in self.batch_sampler:
                yield [int(i) for i in b]
            return
        order = self._order()
        if self.batch_size is None:
            for i in order:
                yield int(i)
            return
        yield from BatchSampler(order.tolist(), self.batch_size, self.drop_last)

    def __iter__(self):
        from . import data as _data

        if self._iterable:
            if self.num_workers > 0:
                yield from _workers.iterate(self)
                return
            yield from self._iter_iterable()
            return
        arrays, index_map = (None, None)
        if (
            self.collate_fn is _data.default_collate
            and self.sampler is None
            and self.batch_sampler is None
        ):
            arrays, index_map = _data._gather_source(self.dataset)
        if arrays is not None:
            order = self._order()
            yield from self._iter_gather(arrays, order if index_map is None else index_map[order])
            return
        if self.num_workers > 0:
            yield from _workers.iterate(self)
            return
        for idx in self._batch_indices():
            if self.batch_size is None:
                yield self._deliver(self.collate_fn(self.dataset[idx]))
            else:
                yield self._deliver(self.collate_fn([self.dataset[i] for i in idx]))

    def _iter_iterable(self):
        it = iter(self.dataset)
        if self.batch_size is None:
            for s in it:
                yield self._deliver(self.collate_fn(s))
            return
        while True:
            samples = []
            for s in it:
                samples.append(s)
                if len(samples) == self.batch_size:
                    break
            if not samples or (self.drop_last and len(samples) < self.batch_size):
                return
            yield self._deliver(self.collate_fn(samples))
            if len(samples) < self.batch_size:
                return

    def _iter_gather(self, arrays, order):
        # the epoch's order goes to each array's device once; batches slice it (views)
        on_device = {}
        for a in arrays:
            key = str(a.device)
            if key not in on_device:
                on_device[key] = asarray(order, device=a.device)
        bs = self.batch_size or 1
        n = len(order)
        stop = n - n % bs if self.drop_last else n
        for start in range(0, stop, bs):
            end = min(start + bs, n)
            batch = tuple(
                _core.take(a, on_device[str(a.device)][start:end], axis=0) for a in arrays
            )
            if self.batch_size is None:
                batch = tuple(b[0] for b in batch)
            yield self._deliver(batch)

    def _deliver(self, batch):
        """The batch pinned (pin_memory, with CUDA) and on `device`."""
        from . import data as _data

        pin = self.pin_memory and _data._cuda_available()
        if pin:
            batch = _data._map_arrays(batch, _data._pinned)
        if self.device is None:
            return batch
        return _data._map_arrays(
            batch, lambda a: a if a.device == self.device else a.to(self.device, non_blocking=pin)
        )

    def __del__(self):
        pool = getattr(self, "_pool", None)
        if pool is not None:
            try:
                pool.shutdown()
            except Exception:
                pass

    def __repr__(self):
        n = "" if self._iterable else f", {len(self)} batches"
        return (
            f"DataLoader({type(self.dataset).__name__}, batch_size={self.batch_size}, "
            f"shuffle={self.shuffle}, drop_last={self.drop_last}, "
            f"num_workers={self.num_workers}{n})"
        )


def _identity(x):
    return x


__all__ = ["DataLoader", "Sampler"]
