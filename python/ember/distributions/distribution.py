"""The base class of ember.distributions (``torch.distributions.Distribution``)."""

from __future__ import annotations

import warnings

import ember as _em

from .. import _core
from ..autograd import no_grad
from . import constraints
from .utils import _standard_shape, lazy_property

__all__ = ["Distribution"]


class Distribution:
    """A probability distribution with a batch of independent parameter sets.

    ``batch_shape`` is the shape of that batch, ``event_shape`` the shape of one draw;
    ``sample(sample_shape)`` returns ``sample_shape + batch_shape + event_shape``. Parameters
    are checked against ``arg_constraints`` at construction (ValueError naming the parameter)
    and values given to ``log_prob`` against ``support``, unless ``validate_args=False`` (the
    default is True, as PyTorch's under ``__debug__``; see :meth:`set_default_validate_args`).
    Draws use ember's global generator (``ember.manual_seed`` repeats them)."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turns validation on or off for distributions built without ``validate_args``."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: expected True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = _em.Size(tuple(batch_shape))
        self._event_shape = _em.Size(tuple(event_shape))
        if validate_args is not None:
            self._validate_args = bool(validate_args)
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. Please set "
                    "`arg_constraints = {}` or initialize the distribution with "
                    "`validate_args=False` to turn off validation.",
                    stacklevel=2,
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(
                    getattr(type(self), param, None), lazy_property
                ):
                    continue  # not given: computed from the parameter that was
                value = getattr(self, param)
                if not bool(_core.all(constraint.check(value))):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}"
                    )

    def expand(self, batch_shape, _instance=None):
        """A new distribution with its parameters expanded to `batch_shape` (no copies)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement expand")

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        """Parameter name -> the constraint its values satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint the values of the distribution satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self):
        return _core.sqrt(self.variance)

    def sample(self, sample_shape=()):
        """Draws of shape ``sample_shape + batch_shape + event_shape`` (no gradient)."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """Reparameterized draws: differentiable in the parameters (``has_rsample``)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement rsample")

    def sample_n(self, n):
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", stacklevel=2)
        return self.sample((n,))

    def log_prob(self, value):
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def cdf(self, value):
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value):
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def enumerate_support(self, expand=True):
        raise NotImplementedError(f"{type(self).__name__} does not implement enumerate_support")

    def entropy(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self):
        return _core.exp(self.entropy())

    def _extended_shape(self, sample_shape=()):
        shape = _standard_shape(sample_shape, f"{type(self).__name__}.sample")
        return _em.Size(shape + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        if not isinstance(value, _core.ndarray):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape = tuple(value.shape)
        n_event = len(self._event_shape)
        if shape[len(shape) - n_event :] != tuple(self._event_shape):
            raise ValueError(
                f"The right-most size of value must match event_shape: {_em.Size(shape)} vs "
                f"{self._event_shape}."
            )
        expected = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(shape), reversed(expected), strict=False):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{_em.Size(shape)} vs {_em.Size(expected)}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable sample validation. "
                "Please initialize the distribution with `validate_args=False` to turn off "
                "validation.",
                stacklevel=3,
            )
            return
        if not bool(_core.all(support.check(value))):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {shape}) to be "
                f"within the support ({support!r}) of the distribution {self!r}, but found "
                f"invalid values:\n{value}"
            )

    def _expand_params(self, cls, batch_shape, names, _instance=None):
        """The shared ``expand`` of a family whose parameters `names` all have the batch shape:
        each broadcast (a view) to `batch_shape`, validation as this distribution's."""
        new = self._get_checked_instance(cls, _instance)
        shape = tuple(batch_shape)
        for name in names:
            setattr(new, name, _core.broadcast_to(getattr(self, name), shape))
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        parts = []
        for p in names:
            v = self.__dict__[p]
            parts.append(f"{p}: {v if v.size == 1 else v.size()}")
        return f"{self.__class__.__name__}({', '.join(parts)})"
