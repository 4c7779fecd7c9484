"""``ember.nn.parallel`` (``torch.nn.parallel``): ``DistributedDataParallel``, which lives in
:mod:`ember.distributed` and imports on first use."""

from __future__ import annotations

__all__ = ["DistributedDataParallel"]  # noqa: F822 (module __getattr__)


def __getattr__(name):
    if name == "DistributedDataParallel":
        from ..distributed import DistributedDataParallel

        return DistributedDataParallel
    raise AttributeError(f"module 'ember.nn.parallel' has no attribute {name!r}")
