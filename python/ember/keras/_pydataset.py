"""keras.utils.PyDataset (Keras 3's successor of ``keras.utils.Sequence``): a dataset of
batches indexed ``0 .. len(ds) - 1`` that ``fit``/``evaluate``/``predict`` read in order, or in a
shuffled order of batches each epoch when ``fit(shuffle=True)``, calling ``on_epoch_begin`` and
``on_epoch_end`` around each pass. ``workers``, ``use_multiprocessing`` and ``max_queue_size``
are accepted for Keras's signature; batches are read on the calling thread (an
``ember.utils.data.DataLoader`` with ``num_workers`` is the way to parallel loading here)."""

from __future__ import annotations

import random as _random


class PyDataset:
    """Subclass it with ``__len__`` (the number of batches) and ``__getitem__(index)`` (one batch:
    ``x``, ``(x, y)`` or ``(x, y, sample_weight)``)."""

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    @property
    def workers(self):
        return getattr(self, "_workers", 1)

    @property
    def use_multiprocessing(self):
        return getattr(self, "_use_multiprocessing", False)

    @property
    def max_queue_size(self):
        return getattr(self, "_max_queue_size", 10)

    def __getitem__(self, index):
        raise NotImplementedError(
            f"{type(self).__name__}: a PyDataset must define __getitem__(index) returning a batch"
        )

    @property
    def num_batches(self):
        """The number of batches (``len(self)``), or None for an endless dataset."""
        try:
            return len(self)
        except TypeError:
            return None

    def on_epoch_begin(self):
        """Called at the start of every epoch (override it, e.g. to reshuffle files)."""

    def on_epoch_end(self):
        """Called at the end of every epoch (override it, e.g. to reshuffle samples)."""

    def __iter__(self):
        n = self.num_batches
        i = 0
        while n is None or i < n:
            yield self[i]
            i += 1


Sequence = PyDataset  # Keras 2's name


def epoch_order(ds, shuffle):
    """The batch indices of one epoch of ``ds`` (shuffled by Python's random, which
    ``keras.utils.set_random_seed`` seeds)."""
    order = list(range(ds.num_batches))
    if shuffle:
        _random.shuffle(order)
    return order
