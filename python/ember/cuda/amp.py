"""PyTorch's older ``torch.cuda.amp`` spellings: ``autocast(enabled, dtype, cache_enabled)`` is
``ember.autocast("cuda", ...)`` and ``GradScaler`` is ``ember.amp.GradScaler`` (for CUDA)."""

from __future__ import annotations

from .. import amp as _amp

__all__ = ["GradScaler", "autocast"]


class autocast(_amp.autocast):  # noqa: N801 (PyTorch's spelling)
    """``torch.cuda.amp.autocast(enabled=True, dtype=float16, cache_enabled=True)``."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """``torch.cuda.amp.GradScaler(init_scale=65536.0, ...)``: the CUDA GradScaler."""

    def __init__(self, *args, **kwargs):
        super().__init__("cuda", *args, **kwargs)
