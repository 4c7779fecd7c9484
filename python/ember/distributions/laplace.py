"""The Laplace distribution."""

from __future__ import annotations

import math
import numbers

import ember as _em

from .. import _core
from . import _sampling, constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """The Laplace (double exponential) distribution with location loc and scale b."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        both_numbers = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        batch_shape = () if both_numbers else tuple(self.loc.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Laplace, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale * self.scale

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = float(_em.finfo(self.loc.dtype).eps)
        u = _sampling.uniform(shape, self.loc, eps - 1, 1.0)  # (-1, 1): log1p(-|u|) finite
        return self.loc - self.scale * _core.sign(u) * _core.log1p(-_core.abs(u))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -_core.log(2 * self.scale) - _core.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        d = value - self.loc
        return 0.5 - 0.5 * _core.sign(d) * _core.expm1(-_core.abs(d) / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * _core.sign(term) * _core.log1p(-2 * _core.abs(term))

    def entropy(self):
        return 1 + _core.log(2 * self.scale)
