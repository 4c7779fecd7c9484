"""The normal distribution."""

from __future__ import annotations

import math
import numbers

from .. import _core, special
from ..autograd import no_grad
from . import _sampling, constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Normal"]


class Normal(Distribution):
    """The normal (Gaussian) distribution N(loc, scale^2)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        both_numbers = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        batch_shape = () if both_numbers else tuple(self.loc.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Normal, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale * self.scale

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return self.loc + self.scale * _sampling.standard_normal(shape, self.loc)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _sampling.standard_normal(shape, self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale * self.scale
        log_scale = _core.log(self.scale)
        d = value - self.loc
        return -(d * d) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + special.erf((value - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value):
        return self.loc + self.scale * special.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + _core.log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / (self.scale * self.scale), -0.5 / (self.scale * self.scale))

    def _log_normalizer(self, x, y):
        return -0.25 * x * x / y + 0.5 * _core.log(-math.pi / y)
