"""The gamma distribution."""

from __future__ import annotations

import numbers

import ember as _em

from .. import _core, special
from . import _sampling, constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Gamma"]


class Gamma(Distribution):
    """The gamma distribution with shape ``concentration`` and ``rate`` (1/scale).

    ``rsample`` is differentiable in both parameters: in the rate through x = g / rate, in the
    concentration by implicit reparameterization (the derivative of a standard gamma draw g at
    a fixed value of its CDF, as PyTorch's ``_standard_gamma``)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        both_numbers = isinstance(concentration, numbers.Number) and isinstance(
            rate, numbers.Number
        )
        batch_shape = () if both_numbers else tuple(self.concentration.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, ("concentration", "rate"), _instance)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return _core.maximum((self.concentration - 1) / self.rate, 0.0)

    @property
    def variance(self):
        return self.concentration / (self.rate * self.rate)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        g = _sampling.standard_gamma(_core.broadcast_to(self.concentration, shape))
        value = g / _core.broadcast_to(self.rate, shape)
        tiny = float(_em.finfo(value.dtype).tiny)
        return _core.maximum(value, tiny)  # a draw that rounded to 0 is not in the support

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return special.xlogy(c, r) + special.xlogy(c - 1, value) - r * value - special.gammaln(c)

    def entropy(self):
        c = self.concentration
        return c - _core.log(self.rate) + special.gammaln(c) + (1.0 - c) * special.digamma(c)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return special.gammainc(self.concentration, self.rate * value)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return special.gammaln(x + 1) + (x + 1) * _core.log(-1 / y)
