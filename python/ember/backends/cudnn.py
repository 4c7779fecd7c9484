"""``ember.backends.cudnn`` (``torch.backends.cudnn``): GPU convolutions run through cuDNN 9
(its graph API, loaded with dlopen on first use) when it is present; without it they run
im2col + cuBLAS (``ember.show_config()`` says which). PyTorch's switches, with its defaults:
``enabled``, ``benchmark`` (time the engines cuDNN's heuristics rank first and keep the
fastest), ``deterministic`` (no engine cuDNN marks non-deterministic), ``allow_tf32`` (float32
convolutions may use TF32 tensor cores)."""

from __future__ import annotations

__all__ = ["allow_tf32", "benchmark", "deterministic", "enabled", "is_available", "version"]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    """Whether cuDNN 9 loads (the nvidia-cudnn-cu13 wheel, EMBER_CUDNN_LIBRARY or the system's)."""
    from ..nn import _cudnn

    return _cudnn.load() is not None


def version():
    """cuDNN's version as an int (e.g. 92801), or None when it does not load."""
    from ..nn import _cudnn

    return _cudnn.version()
