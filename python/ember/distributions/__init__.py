"""ember.distributions: PyTorch's ``torch.distributions`` on ember arrays.

Each distribution keeps PyTorch's name, constructor, properties (batch_shape, event_shape,
mean, mode, variance, stddev, support, arg_constraints) and methods (sample, rsample where
PyTorch has it, log_prob, cdf/icdf where PyTorch has them, entropy, enumerate_support,
expand). Everything computes with ember ops, so it runs on the parameters' device and is
differentiable (``rsample`` reparameterized: gradients reach loc/scale, rate, concentrations,
scale_tril/covariance). Draws come from ember's global generator: ``ember.manual_seed(s)``
repeats them. ``kl_divergence(p, q)`` dispatches on the pair of types (:func:`register_kl`).
Argument validation is on by default (ValueError naming the parameter and constraint);
``Distribution.set_default_validate_args(False)`` or ``validate_args=False`` turns it off.
"""

from __future__ import annotations

from . import constraints, kl
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .uniform import Uniform

__all__ = [
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Distribution",
    "Exponential",
    "Gamma",
    "Independent",
    "Laplace",
    "MultivariateNormal",
    "Normal",
    "OneHotCategorical",
    "Poisson",
    "Uniform",
    "constraints",
    "kl",
    "kl_divergence",
    "register_kl",
]
