"""``ember.backends.cuda`` (``torch.backends.cuda``)."""

from __future__ import annotations

__all__ = ["is_built", "matmul"]


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
