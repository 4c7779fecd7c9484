"""The categorical distribution."""

from __future__ import annotations

import math

import ember as _em

from .. import _core
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


def _as_array(x):
    if isinstance(x, _core.ndarray):
        return x
    return _em.tensor(x)


class Categorical(Distribution):
    """Draws an index in [0, K) with probabilities ``probs`` (normalized over the last
    dimension) or ``softmax(logits)``: give exactly one; the last dimension is the categories,
    the others the batch."""

    arg_constraints = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            probs = _as_array(probs)
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / _core.sum(probs, axis=-1, keepdims=True)
        else:
            logits = _as_array(logits)
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - _em.logsumexp(logits, -1, True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = tuple(self._param.shape[:-1]) if self._param.ndim > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        shape = tuple(batch_shape)
        param_shape = (*shape, self._num_events)
        if "probs" in self.__dict__:
            new.probs = _core.broadcast_to(self.probs, param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = _core.broadcast_to(self.logits, param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return _em.Size(tuple(self._param.shape))

    @property
    def mean(self):
        p = self.probs
        return _core.full(tuple(self._extended_shape()), math.nan, dtype=p.dtype, device=p.device)

    @property
    def mode(self):
        return _core.argmax(self.probs, axis=-1)

    @property
    def variance(self):
        return self.mean

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        n = math.prod(shape[: len(shape) - len(self._batch_shape)])
        p = self.probs.detach()
        probs_2d = _core.reshape(p, (-1, self._num_events))
        if n == 0 or probs_2d.shape[0] == 0:
            return _core.zeros(shape, dtype="int64", device=p.device)
        draws = _em.multinomial(probs_2d, n, True)  # (batch, n)
        return _core.reshape(_core.matrix_transpose(draws), shape).astype("int64")

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.astype("int64")[..., None]
        shape = tuple(_em.broadcast_shapes(tuple(value.shape), tuple(self.logits.shape)))
        value = _core.broadcast_to(value, (*shape[:-1], 1))
        log_pmf = _core.broadcast_to(self.logits, shape)
        return _em.take_along_axis(log_pmf, value, axis=-1)[..., 0]

    def entropy(self):
        min_real = float(_em.finfo(self.logits.dtype).min)
        logits = _core.maximum(self.logits, min_real)
        return -_core.sum(logits * self.probs, axis=-1)

    def enumerate_support(self, expand=True):
        p = self._param
        values = _core.arange(self._num_events, dtype="int64", device=p.device)
        values = _core.reshape(values, (-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = _core.broadcast_to(values, (self._num_events, *self._batch_shape))
        return values
