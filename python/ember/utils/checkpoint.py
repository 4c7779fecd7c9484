"""PyTorch's ``torch.utils.checkpoint``: activation checkpointing. The forward runs without
recording; the backward runs the function again with recording on (the global random state
restored, so dropout draws the same masks) and back-propagates through that recomputation:
gradients reach the inputs and every parameter the function uses (PyTorch's reentrant
algorithm, used for both ``use_reentrant`` values)."""

from __future__ import annotations

import warnings

from .. import _core

__all__ = ["checkpoint", "checkpoint_sequential"]


def _detach_like(a):
    if isinstance(a, _core.ndarray):
        d = a.detach()
        if a.requires_grad:
            d.requires_grad_(True)
        return d
    return a


def checkpoint(
    function,
    *args,
    use_reentrant=None,
    context_fn=None,
    determinism_check="default",
    debug=False,
    preserve_rng_state=True,
    **kwargs,
):
    """``function(*args, **kwargs)`` without keeping its intermediate values for backward: they
    are recomputed when the gradient is needed."""
    from .. import random
    from ..autograd import Function, backward, enable_grad, is_grad_enabled

    if use_reentrant is None:
        warnings.warn(
            "ember.utils.checkpoint: pass use_reentrant=True or False explicitly (PyTorch "
            "requires it); both run the same algorithm here",
            stacklevel=2,
        )
    if context_fn is not None:
        raise ValueError("ember.utils.checkpoint: context_fn is not supported")
    needs = [isinstance(a, _core.ndarray) and a.requires_grad for a in args]
    if not is_grad_enabled():
        return function(*args, **kwargs)
    state = random._global.state if preserve_rng_state else None

    class _Checkpoint(Function):
        @staticmethod
        def forward(ctx, *inputs):
            out = function(*inputs, **kwargs)
            ctx.single = not isinstance(out, tuple)
            return out

        @staticmethod
        def backward(ctx, *grads):
            inputs = [_detach_like(a) for a in args]
            after = random._global.state
            if state is not None:
                random._global.state = state
            try:
                with enable_grad():
                    out = function(*inputs, **kwargs)
            finally:
                random._global.state = after
            outs = (out,) if not isinstance(out, tuple) else out
            pairs = [
                (o, g)
                for o, g in zip(outs, grads, strict=False)
                if isinstance(o, _core.ndarray) and o.requires_grad and g is not None
            ]
            if pairs:
                backward([o for o, _ in pairs], [g for _, g in pairs])
            return tuple(
                i.grad if isinstance(i, _core.ndarray) and n else None
                for i, n in zip(inputs, needs, strict=True)
            )

    if not any(needs):
        # No input needs a gradient, so the recomputation could not be reached from the
        # outputs: run normally (the parameters inside keep their gradients, as PyTorch's
        # non-reentrant checkpoint gives them).
        return function(*args, **kwargs)
    return _Checkpoint.apply(*args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):  # noqa: A002
    """Runs the modules of ``functions`` (a Sequential or a list) in ``segments`` checkpointed
    groups; the last group runs normally, as PyTorch's."""
    mods = list(functions.children()) if hasattr(functions, "children") else list(functions)
    if segments <= 0:
        raise ValueError(f"ember.utils.checkpoint_sequential: segments must be > 0, got {segments}")
    size = -(-len(mods) // segments) if mods else 0
    groups = [mods[i : i + size] for i in range(0, len(mods), size)] if size else []

    def run(group):
        def f(x):
            for m in group:
                x = m(x)
            return x

        return f

    for k, group in enumerate(groups):
        if k == len(groups) - 1:
            input = run(group)(input)  # noqa: A001
        else:
            input = checkpoint(run(group), input, use_reentrant=use_reentrant or True, **kwargs)  # noqa: A001
    return input
