"""The Poisson distribution."""

from __future__ import annotations

import math
import numbers

from .. import _core, special
from ..autograd import no_grad
from . import _sampling, constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Poisson"]

_SUM_BELOW, _SUM_TERMS = 60, 200  # entropy: the sum over k < 200 below 60, a series above


class Poisson(Distribution):
    """The Poisson distribution with ``rate`` lambda (draws are floats of its dtype)."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = () if isinstance(rate, numbers.Number) else tuple(self.rate.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Poisson, batch_shape, ("rate",), _instance)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return _core.floor(self.rate)

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return _sampling.poisson(_core.broadcast_to(self.rate.detach(), shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return special.xlogy(value, rate) - rate - special.gammaln(value + 1)

    def entropy(self):
        """-sum_k p(k) log p(k). PyTorch's Poisson has no entropy (its exponential-family
        formula lacks the carrier measure); here: the sum over k < 200 (one broadcast
        evaluation) for rates below 60, above them 1/2 log(2 pi e lambda) - 1/(12 lambda) -
        1/(24 lambda^2) - 19/(360 lambda^3) (the asymptotic series: relative error < 3e-9)."""
        lam = self.rate
        small = lam < _SUM_BELOW
        ls = _core.where(small, lam, 1.0)
        k = _core.arange(_SUM_TERMS, dtype=lam.dtype, device=lam.device)
        k = _core.reshape(k, (-1,) + (1,) * lam.ndim)
        logp = special.xlogy(k, ls) - ls - special.gammaln(k + 1)
        total = -_core.sum(_core.exp(logp) * logp, axis=0)
        lb = _core.where(small, float(_SUM_BELOW), lam)
        big = (
            0.5 * _core.log(2 * math.pi * math.e * lb)
            - 1 / (12 * lb)
            - 1 / (24 * lb * lb)
            - 19 / (360 * lb * lb * lb)
        )
        return _core.where(small, total, big)

    @property
    def _natural_params(self):
        return (_core.log(self.rate),)

    def _log_normalizer(self, x):
        return _core.exp(x)
