"""The multivariate normal distribution."""

from __future__ import annotations

import math

import ember as _em

from .. import _core
from ..autograd import no_grad
from . import _linalg, _sampling, constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def _mT(x):
    return _core.matrix_transpose(x)


def _batch_mv(mat, vec):
    return (mat @ vec[..., None])[..., 0]


def _half_log_det(scale_tril):
    return _core.sum(_core.log(_em.diagonal(scale_tril, axis1=-2, axis2=-1)), axis=-1)


def _batch_mahalanobis(scale_tril, x):
    """x^T (L L^T)^-1 x for a batch of lower-triangular L (batch dims broadcast)."""
    y = _batch_mv(_linalg.tril_inverse(scale_tril), x)
    return _core.sum(y * y, axis=-1)


def _precision_to_scale_tril(p):
    # P = U U^T with U = flip(cholesky(flip(P))) upper triangular; the covariance's lower
    # Cholesky factor is then U^-T, the inverse of the lower-triangular U^T
    lf = _linalg.cholesky(_em.flip(p, axis=(-2, -1)))
    return _linalg.tril_inverse(_mT(_em.flip(lf, axis=(-2, -1))))


def _array(x):
    return x if isinstance(x, _core.ndarray) else _em.tensor(x)


class MultivariateNormal(Distribution):
    """The multivariate normal N(loc, Sigma), Sigma given by exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (its lower-triangular
    Cholesky factor with a positive diagonal). Differentiable in all of them: the Cholesky
    factorization and triangular solves have their own backward here."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        loc = _array(loc)
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, precision_matrix, scale_tril)]
        if sum(given) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        if scale_tril is not None:
            mat, name = _array(scale_tril), "scale_tril"
        elif covariance_matrix is not None:
            mat, name = _array(covariance_matrix), "covariance_matrix"
        else:
            mat, name = _array(precision_matrix), "precision_matrix"
        if mat.ndim < 2:
            raise ValueError(
                f"{name} matrix must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        batch_shape = tuple(_em.broadcast_shapes(tuple(mat.shape[:-2]), tuple(loc.shape[:-1])))
        n = loc.shape[-1]
        setattr(self, name, _core.broadcast_to(mat, (*batch_shape, *mat.shape[-2:])))
        self.loc = _core.broadcast_to(loc, (*batch_shape, n))
        super().__init__(batch_shape, (n,), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = mat
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = _linalg.cholesky(mat)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(mat)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        shape = tuple(batch_shape)
        n = self.event_shape[0]
        new.loc = _core.broadcast_to(self.loc, (*shape, n))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, _core.broadcast_to(self.__dict__[name], (*shape, n, n)))
        Distribution.__init__(new, shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        n = self.event_shape[0]
        return (*self._batch_shape, n, n)

    @lazy_property
    def scale_tril(self):
        return _core.broadcast_to(self._unbroadcasted_scale_tril, self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        low = self._unbroadcasted_scale_tril
        return _core.broadcast_to(low @ _mT(low), self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        inv = _linalg.tril_inverse(self._unbroadcasted_scale_tril)
        return _core.broadcast_to(_mT(inv) @ inv, self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        low = self._unbroadcasted_scale_tril
        return _core.broadcast_to(
            _core.sum(low * low, axis=-1), (*self._batch_shape, *self._event_shape)
        )

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _sampling.standard_normal(shape, self.loc)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def sample(self, sample_shape=()):
        with no_grad():
            return self.rsample(sample_shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - half_log_det

    def entropy(self):
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return h
        return _core.broadcast_to(h, tuple(self._batch_shape))
