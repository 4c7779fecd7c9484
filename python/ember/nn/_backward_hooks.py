"""PyTorch's full module backward hooks (``register_full_backward_hook`` and
``register_full_backward_pre_hook``), built on ember.autograd.Function.

A call of a module that has such hooks passes its positional array inputs through one identity
Function and its array outputs through another. In the backward pass the outputs' identity
runs first: it gets the gradients with respect to the module's outputs, hands them to the
pre-hooks (each may return replacements), and keeps them. The inputs' identity runs when the
gradients with respect to the module's inputs are known: it calls the full hooks with
``(module, grad_input, grad_output)`` (each may return a replacement ``grad_input``) and passes
the result on. ``grad_input`` has one entry per positional argument, None for those that are
not arrays needing a gradient; when no input needs one, the full hooks are called from the
outputs' identity with ``grad_input`` all None, as PyTorch does."""

from __future__ import annotations

from .._array import ndarray
from ..autograd import Function, is_grad_enabled


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _check_count(got, want, who, what):
    if len(got) != want:
        raise RuntimeError(
            f"ember.nn.Module: a {who} returned {len(got)} {what} gradients; expected {want}"
        )


class _Identity(Function):
    @staticmethod
    def forward(ctx, state, on_grads, *arrays):
        ctx.state = state
        ctx.on_grads = on_grads
        return tuple(a[...] for a in arrays)

    @staticmethod
    def backward(ctx, *grads):
        return (None, None, *ctx.on_grads(ctx.state, grads))


class BackwardHookCall:
    """The hooks of one module call: wraps its inputs (``inputs``) and outputs (``outputs``)."""

    def __init__(self, module, full_hooks, pre_hooks):
        self.module = module
        self.full_hooks = full_hooks
        self.pre_hooks = pre_hooks
        self.n_args = 0
        self.input_pos = []
        self.grad_output = None

    def inputs(self, args):
        self.n_args = len(args)
        if not is_grad_enabled():
            return args
        pos = [i for i, a in enumerate(args) if isinstance(a, ndarray) and a.requires_grad]
        self.input_pos = pos
        if not pos or not self.full_hooks:
            return args
        new = _as_tuple(_Identity.apply(self, BackwardHookCall._on_input, *(args[i] for i in pos)))
        out = list(args)
        for i, a in zip(pos, new, strict=True):
            out[i] = a
        return tuple(out)

    def outputs(self, out):
        if not is_grad_enabled():
            return out
        single = not isinstance(out, (tuple, list))
        outs = (out,) if single else tuple(out)
        pos = [i for i, o in enumerate(outs) if isinstance(o, ndarray) and o.requires_grad]
        if not pos:
            return out
        self.output_pos = pos
        new = _as_tuple(_Identity.apply(self, BackwardHookCall._on_output, *(outs[i] for i in pos)))
        res = list(outs)
        for i, a in zip(pos, new, strict=True):
            res[i] = a
        if single:
            return res[0]
        if isinstance(out, list):
            return res
        return tuple(res) if type(out) is tuple else type(out)(*res)  # a namedtuple

    @staticmethod
    def _on_output(self, grads):
        grads = tuple(grads)
        for hook in list(self.pre_hooks.values()):
            r = hook(self.module, grads)
            if r is not None:
                r = _as_tuple(r)
                _check_count(r, len(grads), "backward pre-hook", "output")
                grads = r
        self.grad_output = grads
        if not self.input_pos and self.full_hooks:
            none = (None,) * self.n_args
            for hook in list(self.full_hooks.values()):
                hook(self.module, none, grads)
        return grads

    @staticmethod
    def _on_input(self, grads):
        full = [None] * self.n_args
        for i, g in zip(self.input_pos, grads, strict=True):
            full[i] = g
        full = tuple(full)
        for hook in list(self.full_hooks.values()):
            r = hook(self.module, full, self.grad_output)
            if r is not None:
                r = _as_tuple(r)
                _check_count(r, self.n_args, "full backward hook", "input")
                full = r
        return tuple(full[i] for i in self.input_pos)
