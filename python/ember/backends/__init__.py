"""ember.backends (PyTorch's ``torch.backends``): switches of the libraries ember's GPU path
uses, in PyTorch's names, so code written for PyTorch sets them unchanged.

- ``ember.backends.cuda.matmul.allow_tf32``: float32 matmuls may use TF32 tensor cores (the same
  switch as ``ember.set_matmul_precision("high")``).
- ``ember.backends.cudnn``: ``is_available()`` is False and ``version()`` None: ember does not use
  cuDNN yet (convolutions run im2col + cuBLAS, see ``ember.show_config()``); ``enabled``,
  ``benchmark``, ``deterministic`` and ``allow_tf32`` are kept for the cuDNN path to read.
- ``ember.backends.mps.is_available()``: False (ember runs on NVIDIA GPUs and the CPU).
"""

from . import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
