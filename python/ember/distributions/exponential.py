"""The exponential distribution."""

from __future__ import annotations

import numbers

import ember as _em

from .. import _core
from . import _sampling, constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Exponential"]


class Exponential(Distribution):
    """The exponential distribution with rate lambda (mean 1/rate)."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = () if isinstance(rate, numbers.Number) else tuple(self.rate.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Exponential, batch_shape, ("rate",), _instance)

    @property
    def mean(self):
        return 1 / self.rate

    @property
    def mode(self):
        return _em.zeros_like(self.rate)

    @property
    def stddev(self):
        return 1 / self.rate

    @property
    def variance(self):
        return 1 / (self.rate * self.rate)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _sampling.standard_exponential(shape, self.rate) / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _core.log(self.rate) - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - _core.exp(-self.rate * value)

    def icdf(self, value):
        return -_core.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - _core.log(self.rate)
