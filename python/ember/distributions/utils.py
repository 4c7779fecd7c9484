"""Helpers of ember.distributions, with ``torch.distributions.utils``' names."""

from __future__ import annotations

import functools
import numbers

import numpy as _np

import ember as _em

from .. import _core
from ..autograd import enable_grad

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
]


def _is_array(x):
    return isinstance(x, _core.ndarray)


def broadcast_all(*values):
    """The values as ember arrays broadcast to one shape. Python numbers take the dtype and
    device of the first array among the values (the default float dtype when there is none);
    anything else raises ValueError, as PyTorch."""
    first = next((v for v in values if _is_array(v)), None)
    for v in values:
        if not (_is_array(v) or isinstance(v, numbers.Number | _np.number)):
            raise ValueError(
                "Input arguments must all be instances of numbers.Number or ember arrays, got "
                f"{type(v).__name__}"
            )
    if first is None:
        dtype, device = _em.get_default_dtype(), None
    else:
        dtype, device = first.dtype, first.device
    arrays = [
        v if _is_array(v) else _core.full((), float(v), dtype=dtype, device=device) for v in values
    ]
    shape = tuple(_np.broadcast_shapes(*(tuple(a.shape) for a in arrays)))
    return tuple(a if tuple(a.shape) == shape else _core.broadcast_to(a, shape) for a in arrays)


def _sum_rightmost(value, dim):
    """Sums out the `dim` rightmost dimensions."""
    if dim == 0:
        return value
    return _core.sum(value, axis=tuple(range(-dim, 0)))


def clamp_probs(probs):
    """Probabilities clamped to [eps, 1 - eps] (eps of their dtype)."""
    eps = float(_em.finfo(probs.dtype).eps)
    return _core.clip(probs, eps, 1 - eps)


def logits_to_probs(logits, is_binary=False):
    """Sigmoid of the logits (``is_binary``) or their softmax over the last dimension."""
    if is_binary:
        return _em.sigmoid(logits)
    return _em.nn.functional.softmax(logits, -1)


def probs_to_logits(probs, is_binary=False):
    """Log-odds (``is_binary``) or log-probabilities of clamped probabilities."""
    p = clamp_probs(probs)
    if is_binary:
        return _core.log(p) - _core.log1p(-p)
    return _core.log(p)


class lazy_property:  # noqa: N801 (PyTorch's name)
    """A property computed once, under enable_grad, and then stored on the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _standard_shape(sample_shape, who):
    """sample_shape as a tuple of ints (a Size, tuple or list), TypeError otherwise."""
    if isinstance(sample_shape, numbers.Integral) or not hasattr(sample_shape, "__iter__"):
        raise TypeError(
            f"{who}: sample_shape must be a tuple of ints (ember.Size), got "
            f"{type(sample_shape).__name__}"
        )
    return tuple(int(s) for s in sample_shape)
