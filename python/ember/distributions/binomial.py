"""The binomial distribution."""

from __future__ import annotations

import ember as _em

from .. import _core, special
from ..autograd import no_grad
from . import _sampling, constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    # max(x, 0) with gradient 1/2 at 0 (PyTorch's)
    return (_core.maximum(x, 0.0) + x - _core.minimum(x, 0.0)) / 2


class Binomial(Distribution):
    """The number of successes in ``total_count`` trials of probability ``probs`` (or
    sigmoid(``logits``)): give exactly one of the two; ``total_count`` may be an array."""

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.astype(self.probs.dtype)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.astype(self.logits.dtype)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(tuple(self._param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        shape = tuple(batch_shape)
        new.total_count = _core.broadcast_to(self.total_count, shape)
        if "probs" in self.__dict__:
            new.probs = _core.broadcast_to(self.probs, shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = _core.broadcast_to(self.logits, shape)
            new._param = new.logits
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return _core.minimum(_core.floor((self.total_count + 1) * self.probs), self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

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
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            n = _core.broadcast_to(self.total_count.detach(), shape)
            p = _core.broadcast_to(self.probs.detach(), shape)
            return _sampling.binomial(n, p)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, k, logits = self.total_count, value, self.logits
        log_factorial_n = special.gammaln(n + 1)
        log_factorial_k = special.gammaln(k + 1)
        log_factorial_nmk = special.gammaln(n - k + 1)
        # n log(1 + exp(logits)), stably; PyTorch's formula
        normalize = (
            n * _clamp_by_zero(logits)
            + n * _core.log1p(_core.exp(-_core.abs(logits)))
            - log_factorial_n
        )
        return k * logits - log_factorial_k - log_factorial_nmk - normalize

    def entropy(self):
        total = int(float(_core.max(self.total_count))) if self.total_count.size else 0
        if not bool(_core.all(self.total_count == total)):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -_core.sum(_core.exp(log_prob) * log_prob, axis=0)

    def enumerate_support(self, expand=True):
        total = int(float(_core.max(self.total_count))) if self.total_count.size else 0
        if not bool(_core.all(self.total_count == total)):
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`."
            )
        p = self._param
        values = _core.arange(1 + total, dtype=p.dtype, device=p.device)
        values = _core.reshape(values, (-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = _core.broadcast_to(values, (values.shape[0], *self._batch_shape))
        return values
