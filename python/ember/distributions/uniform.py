"""The continuous uniform distribution."""

from __future__ import annotations

import math
import numbers

from .. import _core
from . import _sampling, constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Uniform on the half-open interval [low, high)."""

    arg_constraints = {
        "low": constraints.dependent(is_discrete=False, event_dim=0),
        "high": constraints.dependent(is_discrete=False, event_dim=0),
    }
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        both_numbers = isinstance(low, numbers.Number) and isinstance(high, numbers.Number)
        batch_shape = () if both_numbers else tuple(self.low.shape)
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and not bool(_core.all(self.low < self.high)):
            raise ValueError("Uniform is not defined when low>= high")

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Uniform, batch_shape, ("low", "high"), _instance)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self.high * math.nan

    @property
    def stddev(self):
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self):
        d = self.high - self.low
        return d * d / 12

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rand = _sampling.uniform(shape, self.low)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = (self.low <= value).astype(self.low.dtype)
        ub = (self.high > value).astype(self.low.dtype)
        return _core.log(lb * ub) - _core.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _core.clip((value - self.low) / (self.high - self.low), 0.0, 1.0)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return _core.log(self.high - self.low)
