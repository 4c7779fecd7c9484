"""ember.cuda: NVIDIA GPUs. Until the CUDA backend lands, no GPU is usable and these report so."""

from . import _core


def is_available():
    """True when at least one CUDA device can be used by ember in this process."""
    return _core.device_count("cuda") > 0


def device_count():
    """Number of CUDA devices ember can use (0 without a GPU or without the CUDA backend)."""
    return _core.device_count("cuda")


def unavailable_reason():
    """Why CUDA devices cannot be used, in one line ("" when they can)."""
    return _core.unavailable_reason("cuda")
