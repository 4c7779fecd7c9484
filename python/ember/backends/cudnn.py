"""``ember.backends.cudnn`` (``torch.backends.cudnn``). ember does not use cuDNN yet: GPU
convolutions run im2col + cuBLAS (``ember.show_config()`` says so), so ``is_available()`` is
False. The switches are kept, with PyTorch's defaults, for the cuDNN path to read."""

from __future__ import annotations

__all__ = ["allow_tf32", "benchmark", "deterministic", "enabled", "is_available", "version"]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    """False: this ember does not load cuDNN."""
    return False


def version():
    """None: no cuDNN is loaded."""
    return None
