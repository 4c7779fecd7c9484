"""The LSTM's time steps as few kernels and autograd nodes (what PyTorch's fused LSTM cell does
off cuDNN): the cell's gate nonlinearities and state update are one ember.fuse kernel forward and
one backward (one autograd node per step instead of about a dozen), and the per-step slices of the
input projection are one autograd node whose backward stacks the step gradients (slicing one
step at a time has a backward that writes a full-sequence gradient per step: quadratic in the
sequence length)."""

from __future__ import annotations

import sys

from .._fusion import fuse
from .._joining import concatenate, stack


def _em():
    """The ember namespace, whose functions ember.fuse's tracer swaps while it traces."""
    return sys.modules["ember"]


def _sig(x):
    return 1.0 / (1.0 + _em().exp(-x))


@fuse(kernel_name="ember_lstm_cell")
def _cell(xi, xf, xg, xo, hi, hf, hg, ho, c):
    i = _sig(xi + hi)
    f = _sig(xf + hf)
    g = _em().tanh(xg + hg)
    o = _sig(xo + ho)
    c2 = f * c + i * g
    return o * _em().tanh(c2), c2, i, f, g, o


@fuse(kernel_name="ember_lstm_cell_backward")
def _cell_backward(i, f, g, o, c, c2, dh, dc):
    tc = _em().tanh(c2)
    dct = dc + dh * o * (1.0 - tc * tc)
    return (
        dct * g * i * (1.0 - i),
        dct * c * f * (1.0 - f),
        dct * i * (1.0 - g * g),
        dh * tc * o * (1.0 - o),
        dct * f,
    )


def _forward(gx, gh, c):
    """(h, c', i, f, g, o): one fused kernel on the GPU; on the CPU the eager ops (vectorized
    and threaded there, faster than a generated loop at these sizes), both outside autograd."""
    q = _quarters(gx) + _quarters(gh)
    if c.device.type == "cuda":
        return _cell(*q, c)
    return _cell.func(*q, c)


def _backward(i, f, g, o, c, c2, dh, dc):
    if c.device.type == "cuda":
        return _cell_backward(i, f, g, o, c, c2, dh, dc)
    return _cell_backward.func(i, f, g, o, c, c2, dh, dc)


def _quarters(x):
    n = x.shape[-1] // 4
    return [x[..., j * n : (j + 1) * n] for j in range(4)]


_CLASSES = {}


def _functions():
    if not _CLASSES:
        from ..autograd import Function

        class LSTMCellFused(Function):
            @staticmethod
            def forward(ctx, gx, gh, c):
                h, c2, i, f, g, o = _forward(gx, gh, c)
                ctx.save_for_backward(i, f, g, o, c, c2)
                return h, c2

            @staticmethod
            def backward(ctx, dh, dc):
                i, f, g, o, c, c2 = ctx.saved_tensors
                di, df, dg, do, dc_prev = _backward(i, f, g, o, c, c2, dh, dc)
                d = concatenate([di, df, dg, do], axis=-1)
                return d, d, dc_prev

        class Steps(Function):
            @staticmethod
            def forward(ctx, x):
                return tuple(x[t] for t in range(x.shape[0]))

            @staticmethod
            def backward(ctx, *grads):
                return stack(grads)

        _CLASSES["cell"], _CLASSES["steps"] = LSTMCellFused, Steps
    return _CLASSES


def lstm_cell(gx, gh, c):
    """(h, c') of an LSTM step from the input's and the hidden state's gate pre-activations
    (gx, gh: (..., 4H) in PyTorch's i, f, g, o order, biases included) and the cell state."""
    from .. import autograd

    if autograd.is_grad_enabled() and (gx.requires_grad or gh.requires_grad or c.requires_grad):
        return _functions()["cell"].apply(gx, gh, c)
    h, c2 = _forward(gx, gh, c)[:2]
    return h, c2


def steps(x):
    """x[0], x[1], ... along the first dimension, with one autograd node for all of them."""
    from .. import autograd

    if x.shape[0] > 1 and autograd.is_grad_enabled() and x.requires_grad:
        return list(_functions()["steps"].apply(x))
    return [x[t] for t in range(x.shape[0])]
