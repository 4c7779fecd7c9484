"""ember.backends: PyTorch's switches, in PyTorch's names (code written for PyTorch sets them)."""

from __future__ import annotations

import ember
import pytest


def test_cudnn_switches_and_availability():
    import ember as torch

    assert isinstance(torch.backends.cudnn.is_available(), bool)  # True where cuDNN 9 loads
    v = torch.backends.cudnn.version()
    assert (v is None) == (not torch.backends.cudnn.is_available())
    assert torch.backends.cudnn.enabled and not torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.deterministic = True
    try:
        assert ember.backends.cudnn.benchmark and ember.backends.cudnn.deterministic
    finally:
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = False
    assert torch.backends.mps.is_available() is False
    assert torch.backends.cuda.is_built()


def test_tf32_switches_are_the_matmul_precision():
    before = ember.get_matmul_precision()
    try:
        ember.backends.cuda.matmul.allow_tf32 = True
        assert ember.get_matmul_precision() == "high"
        assert ember.backends.cuda.matmul.allow_tf32 is True
        ember.set_float32_matmul_precision("highest")
        assert ember.backends.cuda.matmul.allow_tf32 is False
        ember.set_float32_matmul_precision("medium")
        assert ember.get_float32_matmul_precision() == "high"
        with pytest.raises(ValueError, match="precision"):
            ember.set_float32_matmul_precision("low")
    finally:
        ember.set_matmul_precision(before)
