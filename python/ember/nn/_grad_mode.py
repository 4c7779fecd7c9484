"""Autograd hooks ember.nn and ember.optim use, working before and after autograd exists: whether
the array type has autograd, ``no_grad``/``enable_grad`` scopes, ``detach``."""

from __future__ import annotations

import contextlib

from .._core import ndarray

#: whether ember's arrays carry autograd state (``requires_grad``, ``grad``, ``backward``)
HAS_AUTOGRAD = hasattr(ndarray, "requires_grad")


def _ember():
    import ember

    return ember


@contextlib.contextmanager
def _grad_mode(enabled):
    # the core's switch, for when ember.no_grad is not there yet
    from .. import _core

    prev = _core._is_grad_enabled()
    _core._set_grad_enabled(enabled)
    try:
        yield
    finally:
        _core._set_grad_enabled(prev)


def _scope(public, enabled):
    f = getattr(_ember(), public, None)
    if f is not None:
        return f()
    from .. import _core

    if hasattr(_core, "_set_grad_enabled"):
        return _grad_mode(enabled)
    return contextlib.nullcontext()


def no_grad():
    """``ember.no_grad()`` when autograd exists, else a scope that does nothing."""
    return _scope("no_grad", False)


def enable_grad():
    """``ember.enable_grad()`` when autograd exists, else a scope that does nothing."""
    return _scope("enable_grad", True)


def is_grad_enabled():
    f = getattr(_ember(), "is_grad_enabled", None)
    if f is not None:
        return bool(f())
    from .. import _core

    if hasattr(_core, "_is_grad_enabled"):
        return bool(_core._is_grad_enabled())
    return False


def detach(x):
    """`x` without autograd history, sharing its data (a plain ndarray view before autograd)."""
    if HAS_AUTOGRAD:
        return x.detach()
    return x[...]


def needs_grad(x):
    """Whether an op on `x` would be recorded now (autograd exists, x requires grad, grad mode)."""
    return HAS_AUTOGRAD and getattr(x, "requires_grad", False) and is_grad_enabled()
