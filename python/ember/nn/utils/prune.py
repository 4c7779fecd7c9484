"""PyTorch's ``torch.nn.utils.prune``: a parameter ``<name>`` becomes ``<name>_orig`` (the
parameter) times the buffer ``<name>_mask``, recomputed by a forward pre-hook; pruning again
combines masks; ``remove`` makes the pruned values permanent. Masks are computed on the
parameter's device (``topk`` of magnitudes, norms along a dimension, random draws from
ember's generator)."""

from __future__ import annotations

import numbers

from ... import _core
from ..._array import asarray
from ..._joining import concatenate
from ..._sorting import argsort
from .._grad_mode import no_grad
from .._parameter import Parameter

__all__ = [
    "custom_from_mask",
    "global_unstructured",
    "identity",
    "is_pruned",
    "l1_unstructured",
    "ln_structured",
    "random_structured",
    "random_unstructured",
    "remove",
]


def _count(amount, n, who):
    if isinstance(amount, bool) or not isinstance(amount, numbers.Real):
        raise TypeError(f"{who}: amount must be an int or a float, got {amount!r}")
    if isinstance(amount, numbers.Integral):
        if amount < 0 or amount > n:
            raise ValueError(
                f"amount={amount} should be smaller than the number of parameters to prune={n}"
            )
        return int(amount)
    if not 0.0 <= amount <= 1.0:
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")  # fmt: skip
    return int(round(amount * n))


def _apply(module, name, new_mask):
    """Installs (or combines) `new_mask` on ``module.<name>``."""
    if name + "_orig" in module._parameters:
        mask = getattr(module, name + "_mask")
        new_mask = mask * new_mask
        module._buffers[name + "_mask"] = new_mask
    else:
        orig = module._parameters.pop(name, None)
        if orig is None:
            raise ValueError(f"Parameter '{name}' of module {module} has to be pruned")
        module.register_parameter(name + "_orig", orig)
        module.register_buffer(name + "_mask", new_mask)

        def compute(m, _inputs=None):
            object.__setattr__(m, name, getattr(m, name + "_orig") * getattr(m, name + "_mask"))

        handle = module.register_forward_pre_hook(compute)
        module.__dict__.setdefault("_prune_hooks", {})[name] = (handle, compute)
    module.__dict__["_prune_hooks"][name][1](module)
    return module


def _orig(module, name):
    return (
        getattr(module, name + "_orig")
        if name + "_orig" in module._parameters
        else getattr(module, name)
    )


def _current_mask(module, name, t):
    if name + "_mask" in module._buffers:
        return getattr(module, name + "_mask")
    return _core.ones(t.shape, dtype=t.dtype, device=t.device)


def _smallest_mask(scores, k, mask):
    """`mask` with the k smallest `scores` among its unpruned entries set to 0."""
    flat = _core.where(mask.reshape(-1) > 0, scores.reshape(-1), float("inf"))
    out = mask.reshape(-1).copy()
    if k:
        idx = argsort(flat)[:k]
        out[idx] = 0
    return out.reshape(mask.shape)


def identity(module, name):
    """A mask of ones (the reparametrization without pruning)."""
    t = _orig(module, name)
    return _apply(module, name, _core.ones(t.shape, dtype=t.dtype, device=t.device))


def l1_unstructured(module, name, amount, importance_scores=None):
    """Zeroes the `amount` (count or fraction) entries of smallest magnitude."""
    t = _orig(module, name)
    with no_grad():
        mask = _current_mask(module, name, t)
        k = _count(amount, int((mask > 0).sum().item()), "ember.nn.utils.prune.l1_unstructured")
        scores = _core.abs(t if importance_scores is None else importance_scores)
        return _apply(module, name, _smallest_mask(scores, k, mask))


def random_unstructured(module, name, amount):
    """Zeroes `amount` entries chosen at random."""
    from ... import random

    t = _orig(module, name)
    with no_grad():
        mask = _current_mask(module, name, t)
        k = _count(amount, int((mask > 0).sum().item()), "ember.nn.utils.prune.random_unstructured")
        scores = random._global.random(t.shape, device=t.device)
        return _apply(module, name, _smallest_mask(scores, k, mask))


def _structured(module, name, amount, dim, scores_of, who):
    t = _orig(module, name)
    with no_grad():
        mask = _current_mask(module, name, t)
        d = dim % t.ndim
        n = t.shape[d]
        k = _count(amount, n, who)
        scores = scores_of(t, d)
        order = argsort(scores)
        keep = _core.ones((n,), dtype=t.dtype, device=t.device)
        if k:
            keep[order[:k]] = 0
        shape = [1] * t.ndim
        shape[d] = n
        return _apply(module, name, mask * keep.reshape(shape))


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Zeroes the `amount` slices along `dim` of smallest L`n` norm."""

    def scores_of(t, d):
        x = t if importance_scores is None else importance_scores
        axes = tuple(i for i in range(x.ndim) if i != d)
        a = _core.abs(x)
        if n == float("inf") or n == "inf":
            return a.max(axis=axes)
        if n == "fro" or n == 2:
            return _core.sqrt((a * a).sum(axis=axes))
        return (a**n).sum(axis=axes) ** (1.0 / n)

    return _structured(module, name, amount, dim, scores_of, "ember.nn.utils.prune.ln_structured")


def random_structured(module, name, amount, dim):
    """Zeroes `amount` slices along `dim` chosen at random."""
    from ... import random

    def scores_of(t, d):
        return random._global.random((t.shape[d],), device=t.device)

    return _structured(module, name, amount, dim, scores_of,
                       "ember.nn.utils.prune.random_structured")  # fmt: skip


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prunes the `amount` entries of smallest magnitude across all (module, name) pairs
    together (``pruning_method`` = ``L1Unstructured``/``l1_unstructured`` or
    ``RandomUnstructured``/``random_unstructured``)."""
    pairs = list(parameters)
    amount = kwargs.get("amount")
    name = getattr(pruning_method, "__name__", str(pruning_method)).lower()
    with no_grad():
        tensors = [_orig(m, n) for m, n in pairs]
        masks = [_current_mask(m, n, t) for (m, n), t in zip(pairs, tensors, strict=True)]
        if "random" in name:
            from ... import random

            scores = [random._global.random(t.shape, device=t.device) for t in tensors]
        else:
            src = importance_scores or {}
            scores = [_core.abs(src.get(p, t)) for p, t in zip(pairs, tensors, strict=True)]
        flat_s = concatenate([s.reshape(-1) for s in scores])
        flat_m = concatenate([m.reshape(-1) for m in masks])
        k = _count(amount, int((flat_m > 0).sum().item()),
                   "ember.nn.utils.prune.global_unstructured")  # fmt: skip
        new = _smallest_mask(flat_s, k, flat_m)
        start = 0
        for (m, n), t in zip(pairs, tensors, strict=True):
            size = t.size
            _apply(m, n, new[start : start + size].reshape(t.shape) * 1.0)
            start += size


def L1Unstructured(module, name, amount):  # noqa: N802 (PyTorch's class name)
    return l1_unstructured(module, name, amount)


def RandomUnstructured(module, name, amount):  # noqa: N802 (PyTorch's class name)
    return random_unstructured(module, name, amount)


def custom_from_mask(module, name, mask):
    """Prunes with a given mask (combined with any earlier one)."""
    t = _orig(module, name)
    return _apply(module, name, asarray(mask, device=t.device).astype(t.dtype))


def is_pruned(module):
    """Whether `module` or any of its submodules has a pruned parameter."""
    return any(m.__dict__.get("_prune_hooks") for m in module.modules())


def remove(module, name):
    """Makes the pruning permanent: ``<name>`` becomes a plain parameter holding
    ``<name>_orig * <name>_mask``."""
    hooks = module.__dict__.get("_prune_hooks", {})
    if name not in hooks:
        raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                         "can be removed")  # fmt: skip
    handle, compute = hooks.pop(name)
    handle.remove()
    with no_grad():
        value = (getattr(module, name + "_orig") * getattr(module, name + "_mask")).detach()
    module.__dict__.pop(name, None)
    del module._parameters[name + "_orig"]
    del module._buffers[name + "_mask"]
    module.register_parameter(name, Parameter(value))
    return module
