"""``DistributedSampler``: each rank iterates its own 1/num_replicas of a dataset."""

from __future__ import annotations

import math
import numbers

import numpy as _np

from .._data_sampling import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """PyTorch's ``DistributedSampler(dataset, num_replicas=None, rank=None, shuffle=True,
    seed=0, drop_last=False)``: rank r takes indices ``r, r + R, r + 2R, ...`` of the (shuffled,
    with ``seed + epoch``) index list, padded by repetition to a multiple of R, or truncated
    with ``drop_last``. Call ``set_epoch(epoch)`` every epoch to reshuffle. The permutation
    comes from NumPy's generator, so orders differ from PyTorch's (the partition rules match)."""

    def __init__(
        self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False
    ):
        from ._pg import get_rank, get_world_size, is_initialized

        if num_replicas is None or rank is None:
            if not is_initialized():
                raise RuntimeError(
                    "ember.distributed.DistributedSampler: requires the default process group "
                    "(init_process_group) unless num_replicas and rank are given"
                )
            num_replicas = get_world_size() if num_replicas is None else num_replicas
            rank = get_rank() if rank is None else rank
        for name, v in (("num_replicas", num_replicas), ("rank", rank), ("seed", seed)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(
                    f"ember.distributed.DistributedSampler: {name} must be an int, got {v!r}"
                )
        if num_replicas < 1:
            raise ValueError(
                f"ember.distributed.DistributedSampler: num_replicas must be positive, got "
                f"{num_replicas}"
            )
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = int(num_replicas)
        self.rank = int(rank)
        self.epoch = 0
        self.drop_last = bool(drop_last)
        n = len(dataset)
        if self.drop_last and n % self.num_replicas:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = bool(shuffle)
        self.seed = int(seed)

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            indices = _np.random.default_rng(self.seed + self.epoch).permutation(n).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad > 0 and indices:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[: self.total_size]
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch, which reseeds the shuffle (call it before each epoch's iterator)."""
        self.epoch = int(epoch)
