"""Creation functions composed from the core ones (the *_like family)."""

from . import _core


def _like(x, dtype, device):
    return x.shape, x.dtype if dtype is None else dtype, x.device if device is None else device


def empty_like(x, /, *, dtype=None, device=None, requires_grad=False):
    """An uninitialized array with the shape (and by default dtype and device) of `x`."""
    shape, dt, dev = _like(x, dtype, device)
    return _core.empty(shape, dtype=dt, device=dev, requires_grad=requires_grad)


def zeros_like(x, /, *, dtype=None, device=None, requires_grad=False):
    """Zeros with the shape (and by default dtype and device) of `x`."""
    shape, dt, dev = _like(x, dtype, device)
    return _core.zeros(shape, dtype=dt, device=dev, requires_grad=requires_grad)


def ones_like(x, /, *, dtype=None, device=None, requires_grad=False):
    """Ones with the shape (and by default dtype and device) of `x`."""
    shape, dt, dev = _like(x, dtype, device)
    return _core.ones(shape, dtype=dt, device=dev, requires_grad=requires_grad)


def full_like(x, /, fill_value, *, dtype=None, device=None, requires_grad=False):
    """`fill_value` with the shape (and by default dtype and device) of `x`."""
    shape, dt, dev = _like(x, dtype, device)
    return _core.full(shape, fill_value, dtype=dt, device=dev, requires_grad=requires_grad)
