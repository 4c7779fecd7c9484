"""The beta distribution."""

from __future__ import annotations

import numbers

import ember as _em

from .. import _core, special
from . import _sampling, constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Beta"]


class Beta(Distribution):
    """The beta distribution on [0, 1] with concentrations alpha (``concentration1``) and
    beta (``concentration0``). ``rsample`` is g1 / (g1 + g0) of two gamma draws, differentiable
    in both concentrations (implicit reparameterization, as :class:`Gamma`)."""

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        both_numbers = isinstance(concentration1, numbers.Number) and isinstance(
            concentration0, numbers.Number
        )
        batch_shape = () if both_numbers else tuple(self.concentration1.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(
            Beta, batch_shape, ("concentration1", "concentration0"), _instance
        )

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        # the Dirichlet's mode, first coordinate: (a - 1)+ / ((a - 1)+ + (b - 1)+); with both
        # concentrations below 1 that is 0/0 and PyTorch's argmax picks the first vertex, 1
        a, b = self.concentration1, self.concentration0
        am1, bm1 = _core.maximum(a - 1, 0.0), _core.maximum(b - 1, 0.0)
        return _core.where((a < 1) & (b < 1), 1.0, am1 / (am1 + bm1))

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return a * b / (total * total * (total + 1))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        g1 = _sampling.standard_gamma(_core.broadcast_to(self.concentration1, shape))
        g0 = _sampling.standard_gamma(_core.broadcast_to(self.concentration0, shape))
        x = g1 / (g1 + g0)
        fi = _em.finfo(x.dtype)
        return _core.clip(x, float(fi.tiny), 1 - float(fi.eps))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return (
            special.xlogy(a - 1, value)
            + special.xlog1py(b - 1, -value)
            + special.gammaln(a + b)
            - special.gammaln(a)
            - special.gammaln(b)
        )

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return (
            special.gammaln(a)
            + special.gammaln(b)
            - special.gammaln(total)
            - (2 - total) * special.digamma(total)
            - (a - 1) * special.digamma(a)
            - (b - 1) * special.digamma(b)
        )

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return special.gammaln(x) + special.gammaln(y) - special.gammaln(x + y)
