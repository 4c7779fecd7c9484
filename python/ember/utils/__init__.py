"""PyTorch's ``torch.utils`` path: ``ember.utils.data`` is :mod:`ember.data`."""

from . import data

__all__ = ["data"]
