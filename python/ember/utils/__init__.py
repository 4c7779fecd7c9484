"""PyTorch's ``torch.utils`` path: ``ember.utils.data`` is :mod:`ember.data`;
``ember.utils.checkpoint`` is activation checkpointing."""

from . import checkpoint, data

__all__ = ["checkpoint", "data"]
