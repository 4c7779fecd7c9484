"""``ember.backends.cuda`` (``torch.backends.cuda``)."""

from __future__ import annotations

__all__ = ["enable_flash_sdp", "enable_math_sdp", "flash_sdp_enabled", "is_built", "matmul",
           "math_sdp_enabled"]  # fmt: skip

_SDP = {"flash": True, "math": True}


def enable_flash_sdp(enabled):
    """Whether ``F.scaled_dot_product_attention`` may use the fused kernel on the GPU (float16
    and bfloat16, head dimension 64 or 128, no explicit mask, no dropout)."""
    _SDP["flash"] = bool(enabled)


def flash_sdp_enabled():
    return _SDP["flash"]


def enable_math_sdp(enabled):
    """Whether the composed ops (the math backend) may compute the attention (they always do
    where the fused kernel does not apply)."""
    _SDP["math"] = bool(enabled)


def math_sdp_enabled():
    return _SDP["math"]


def is_built():
    """Whether this build of ember has its CUDA backend (always: it loads CUDA at run time)."""
    return True


class _Matmul:
    """``matmul.allow_tf32``: float32 matmuls on GPUs may use TF32 tensor cores."""

    @property
    def allow_tf32(self):
        from .. import _linalg

        return _linalg.get_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        from .. import _linalg

        _linalg.set_matmul_precision("high" if value else "highest")

    def __repr__(self):
        return f"ember.backends.cuda.matmul(allow_tf32={self.allow_tf32})"


matmul = _Matmul()
