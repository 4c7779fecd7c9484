"""The Bernoulli distribution."""

from __future__ import annotations

import math
import numbers

import ember as _em

from .. import _core
from . import _sampling, constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]


def _bce_with_logits(logits, target):
    """-(t log sigmoid(l) + (1 - t) log sigmoid(-l)), stably."""
    return _core.maximum(logits, 0.0) - logits * target + _softplus_neg_abs(logits)


def _softplus_neg_abs(x):
    return _core.log1p(_core.exp(-_core.abs(x)))


class Bernoulli(Distribution):
    """1 with probability ``probs`` (or sigmoid(``logits``)), 0 otherwise: give exactly one."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = () if is_scalar else tuple(self._param.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        shape = tuple(batch_shape)
        if "probs" in self.__dict__:
            new.probs = _core.broadcast_to(self.probs, shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = _core.broadcast_to(self.logits, shape)
            new._param = new.logits
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new_tensor(*args, **kwargs)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).astype(self.probs.dtype)
        return _core.where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return _em.Size(tuple(self._param.shape))

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with _em.no_grad():
            p = _core.broadcast_to(self.probs, tuple(shape))
            return (_sampling.uniform(shape, p) < p).astype(p.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -_bce_with_logits(self.logits, value)

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        values = _core.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = _core.reshape(values, (-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = _core.broadcast_to(values, (2, *self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (_core.log(self.probs / (1 - self.probs)),)

    def _log_normalizer(self, x):
        return _core.log1p(_core.exp(x))
