"""The one-hot categorical distribution."""

from __future__ import annotations

import ember as _em

from .. import _core
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical"]


def _one_hot(index, n, dtype):
    classes = _core.arange(n, dtype="int64", device=index.device)
    return (index[..., None] == classes).astype(dtype)


class OneHotCategorical(Distribution):
    """A :class:`Categorical` whose draws are one-hot vectors of length K (event shape (K,))."""

    arg_constraints = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        shape = tuple(batch_shape)
        new._categorical = self._categorical.expand(shape)
        Distribution.__init__(new, shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        p = self._categorical.probs
        return _one_hot(_core.argmax(p, axis=-1), p.shape[-1], p.dtype)

    @property
    def variance(self):
        p = self._categorical.probs
        return p * (1 - p)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        p = self._categorical.probs
        index = self._categorical.sample(sample_shape)
        return _one_hot(index, p.shape[-1], p.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(_core.argmax(value, axis=-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        p = self._param
        n = self.event_shape[0]
        values = _em.eye(n, dtype=p.dtype, device=p.device)
        values = _core.reshape(values, (n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = _core.broadcast_to(values, (n, *self.batch_shape, n))
        return values
