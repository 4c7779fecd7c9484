"""The autograd hooks ember.nn and ember.optim use: ``no_grad``/``enable_grad`` scopes,
``detach``, and whether an op on an array would be recorded now."""

from __future__ import annotations

from ..autograd import enable_grad, is_grad_enabled, no_grad

__all__ = ["detach", "enable_grad", "is_grad_enabled", "needs_grad", "no_grad"]


def detach(x):
    """`x` without autograd history, sharing its data."""
    return x.detach()


def needs_grad(x):
    """Whether an op on `x` would be recorded now (x requires grad, in grad mode)."""
    return x.requires_grad and is_grad_enabled()
