"""``act(F.linear(x, w, b))`` as one matmul with a fused epilogue where the library allows it
(cuBLASLt on CUDA: bias, ReLU, tanh-GELU; ``_cublaslt.py``), else composed from ember's own ops
(the same ops eager code runs, so the CPU result is eager's bit for bit).

``ember.compile`` calls it when a recorded ``F.linear``/``nn.Linear`` result is consumed only by
a ReLU or a tanh GELU (``_compile/_mm.py``). Gradients: the fused forward is one autograd node
whose backward is the linear's (dx = g' @ w, dw = g'^T x, db = sum g') with g' = g * (y > 0)
for ReLU (the output says where the pre-activation was positive); a tanh GELU that needs a
gradient keeps only the bias in the epilogue and runs the GELU as ember ops after it (its
derivative needs the pre-activation)."""

from __future__ import annotations

from .. import _core
from . import _cublaslt

ACTS = (None, "relu", "gelu_tanh")


def _composed(x, w, b, act):
    # the defining modules' functions (ember.compile swaps ember.nn.functional's names)
    from ._functional_activation import gelu, relu
    from ._functional_layers import linear

    y = linear(x, w, b)
    if act == "relu":
        return relu(y)
    if act == "gelu_tanh":
        return gelu(y, approximate="tanh")
    return y


def _rows(x):
    """x as (M, K) rows (a view where the strides allow)."""
    return x if x.ndim == 2 else x.reshape((-1, x.shape[-1]))


class _LinearEpilogue:
    """The autograd Function (made on first use: ember.autograd imports ember.nn)."""

    cls = None

    @classmethod
    def get(cls):
        if cls.cls is None:
            from ..autograd import Function

            class LinearEpilogue(Function):
                @staticmethod
                def forward(ctx, x2, w, b, act):
                    y = _cublaslt.run(x2, w, b, act)
                    if y is None:
                        y = _composed(x2, w, b, act)
                    ctx.act = act
                    ctx.has_bias = b is not None
                    ctx.save_for_backward(x2, w, y if act == "relu" else None)
                    return y

                @staticmethod
                def backward(ctx, g):
                    x2, w, y = ctx.saved_tensors
                    if ctx.act == "relu":
                        g = _core.where(y > 0, g, 0).astype(g.dtype, copy=False)
                    dx = g @ w if ctx.needs_input_grad[0] else None
                    dw = g.mT @ x2 if ctx.needs_input_grad[1] else None
                    db = g.sum(axis=0) if ctx.has_bias and ctx.needs_input_grad[2] else None
                    return dx, dw, db, None

            cls.cls = LinearEpilogue
        return cls.cls


def linear_act(x, w, b=None, act=None):
    """``act(x @ w.T + b)`` with x (*, K), w (N, K), b (N,) or None; act None, "relu" or
    "gelu_tanh"."""
    if act not in ACTS:
        raise ValueError(
            f"ember.nn.functional.linear: unknown epilogue activation {act!r} (expected one of "
            f"{ACTS})"
        )
    if x.ndim == 0 or w.ndim != 2 or x.device.type != "cuda":
        return _composed(x, w, b, act)
    x2 = _rows(x)
    if not _cublaslt.eligible(x2, w, b, act):
        return _composed(x, w, b, act)
    grad = _core._is_grad_enabled() and (
        x.requires_grad or w.requires_grad or (b is not None and b.requires_grad)
    )
    if grad and act == "gelu_tanh":  # GELU's derivative needs the pre-activation
        from ._functional_activation import gelu

        return gelu(linear_act(x, w, b, None), approximate="tanh")
    if grad:
        y = _LinearEpilogue.get().apply(x2, w, b, act)
    else:
        y = _cublaslt.run(x2, w, b, act)
        if y is None:
            return _composed(x, w, b, act)
    return y if x.ndim == 2 else y.reshape((*x.shape[:-1], w.shape[0]))
