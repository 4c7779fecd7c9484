"""``ember.backends.mps`` (``torch.backends.mps``): Apple's GPUs are not an ember device."""

from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available():
    return False


def is_built():
    return False
