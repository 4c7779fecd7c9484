"""Kernels for Gaussian processes (scikit-learn's ``sklearn.gaussian_process.kernels``).

Every kernel evaluates ``K(X, Y)`` and, with ``eval_gradient=True``, its gradient with respect
to ``theta`` (the log of the non-fixed hyperparameters, in the order of ``hyperparameters``:
alphabetical within a kernel, ``k1`` before ``k2`` in a sum or product) as ember arrays on the
input's device. Distances are exact sums of squared coordinate differences (no ``|x|^2 - 2xy``
cancellation), so kernel values agree with scikit-learn's to rounding. NumPy or list inputs are
evaluated on the default device and come back as NumPy arrays; ember arrays stay ember arrays.
Hyperparameters, ``theta`` and ``bounds`` are host values (NumPy), as scikit-learn's.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections import namedtuple

import numpy as np

import ember

from ..exceptions import ConvergenceWarning
from ..utils.validation import input_kind, to_output

__all__ = [
    "ConstantKernel",
    "DotProduct",
    "Exponentiation",
    "Hyperparameter",
    "Kernel",
    "KernelOperator",
    "Matern",
    "Product",
    "RBF",
    "RationalQuadratic",
    "Sum",
    "WhiteKernel",
]


class Hyperparameter(
    namedtuple("Hyperparameter", ("name", "value_type", "bounds", "n_elements", "fixed"))
):
    """A kernel hyperparameter: name, type, (log-space-able) bounds, size, fixed flag."""

    __slots__ = ()

    def __new__(cls, name, value_type, bounds, n_elements=1, fixed=None):
        if not isinstance(bounds, str) or bounds != "fixed":
            bounds = np.atleast_2d(bounds)
            if n_elements > 1 and bounds.shape[0] == 1:
                bounds = np.repeat(bounds, n_elements, 0)
            elif bounds.shape[0] != n_elements:
                raise ValueError(
                    f"Bounds on {name} should have either 1 or {n_elements} dimensions. "
                    f"Given are {bounds.shape[0]}"
                )
        if fixed is None:
            fixed = isinstance(bounds, str) and bounds == "fixed"
        return super().__new__(cls, name, value_type, bounds, n_elements, fixed)

    def __eq__(self, other):
        return (
            self.name == other.name
            and self.value_type == other.value_type
            and np.all(self.bounds == other.bounds)
            and self.n_elements == other.n_elements
            and self.fixed == other.fixed
        )


def _as_ember(X):
    if isinstance(X, ember.ndarray):
        return X if X.dtype == ember.float64 else X.astype(ember.float64)
    return ember.asarray(np.asarray(X, dtype=np.float64))


def _diffs2(X, Y, scale):
    """Per-dimension squared differences ((x_ik - y_jk) / scale_k)^2, a list of (n, m)."""
    d = X.shape[1]
    sc = np.broadcast_to(np.asarray(scale, dtype=np.float64).reshape(-1), (d,))
    return [((X[:, k][:, None] - Y[:, k][None, :]) / float(sc[k])) ** 2 for k in range(d)]


def _sum(parts, like):
    out = parts[0]
    for p in parts[1:]:
        out = out + p
    return out


def _no_grad(n, m, like):
    return ember.zeros((n, m, 0), dtype=ember.float64, device=like.device)


class Kernel:
    """Base class: parameters from ``__init__``, hyperparameters from ``hyperparameter_*``."""

    def get_params(self, deep=True):
        params = {}
        sig = inspect.signature(type(self).__init__)
        for name, p in sig.parameters.items():
            if name == "self" or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                continue
            params[name] = getattr(self, name)
        return params

    def set_params(self, **params):
        if not params:
            return self
        valid = self.get_params(deep=True)
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name} for kernel {self}. Check the list of "
                    "available parameters with `kernel.get_params().keys()`."
                )
            if sub:
                getattr(self, name).set_params(**{sub: value})
            else:
                setattr(self, name, value)
        return self

    def clone_with_theta(self, theta):
        """A copy of the kernel with hyperparameters ``exp(theta)``."""
        new = type(self)(**self.get_params(deep=False))
        new.theta = theta
        return new

    @property
    def n_dims(self):
        return self.theta.shape[0]

    @property
    def hyperparameters(self):
        return [getattr(self, a) for a in dir(self) if a.startswith("hyperparameter_")]

    @property
    def theta(self):
        theta = []
        params = self.get_params()
        for hp in self.hyperparameters:
            if not hp.fixed:
                theta.append(params[hp.name])
        if theta:
            return np.log(np.hstack(theta))
        return np.array([])

    @theta.setter
    def theta(self, theta):
        theta = np.asarray(theta, dtype=np.float64)
        params = self.get_params()
        i = 0
        for hp in self.hyperparameters:
            if hp.fixed:
                continue
            if hp.n_elements > 1:
                params[hp.name] = np.exp(theta[i : i + hp.n_elements])
                i += hp.n_elements
            else:
                params[hp.name] = float(np.exp(theta[i]))
                i += 1
        if i != len(theta):
            raise ValueError(
                f"theta has not the correct number of entries. Should be {i}; given are "
                f"{len(theta)}"
            )
        self.set_params(**params)

    @property
    def bounds(self):
        b = [hp.bounds for hp in self.hyperparameters if not hp.fixed]
        if b:
            return np.log(np.vstack(b))
        return np.array([])

    def __add__(self, b):
        return Sum(self, b if isinstance(b, Kernel) else ConstantKernel(b))

    def __radd__(self, b):
        return Sum(b if isinstance(b, Kernel) else ConstantKernel(b), self)

    def __mul__(self, b):
        return Product(self, b if isinstance(b, Kernel) else ConstantKernel(b))

    def __rmul__(self, b):
        return Product(b if isinstance(b, Kernel) else ConstantKernel(b), self)

    def __pow__(self, b):
        return Exponentiation(self, b)

    def __eq__(self, b):
        if type(self) is not type(b):
            return False
        pa, pb = self.get_params(), b.get_params()
        for key in set(pa) | set(pb):
            va, vb = pa.get(key, None), pb.get(key, None)
            if np.shape(va) != np.shape(vb) or np.any(np.asarray(va) != np.asarray(vb)):
                return False
        return True

    __hash__ = object.__hash__

    def __repr__(self):
        vals = ", ".join(f"{hp.name}={_fmt(getattr(self, hp.name))}" for hp in self.hyperparameters)
        return f"{type(self).__name__}({vals})"

    def __call__(self, X, Y=None, eval_gradient=False):
        """K(X, Y) (Y=None: K(X, X)); with ``eval_gradient``, also dK/dtheta (n, n, n_dims)."""
        if eval_gradient and Y is not None:
            raise ValueError("Gradient can only be evaluated when Y is None.")
        kind = input_kind(X)
        Xe = _as_ember(X)
        Ye = None if Y is None else _as_ember(Y)
        if Ye is not None and Ye.device != Xe.device:
            Ye = ember.asarray(Ye, device=Xe.device)
        out = self._eval(Xe, Ye, eval_gradient)
        if eval_gradient:
            return to_output(out[0], kind), to_output(out[1], kind)
        return to_output(out, kind)

    def diag(self, X):
        """The diagonal of K(X, X), without the whole matrix where possible."""
        kind = input_kind(X)
        return to_output(self._diag(_as_ember(X)), kind)

    def _diag(self, X):
        return ember.diagonal(self._eval(X, None, False))

    def is_stationary(self):
        return True

    @property
    def requires_vector_input(self):
        return True

    def _check_bounds_params(self):
        """Warn when an optimised hyperparameter ends close to one of its bounds."""
        theta = self.theta
        if theta.size == 0:
            return
        lo, hi = self.bounds[:, 0], self.bounds[:, 1]
        names = []
        for hp in self.hyperparameters:
            if not hp.fixed:
                names += [(hp.name, k) for k in range(hp.n_elements)]
        for (name, k), t, a, b in zip(names, theta, lo, hi, strict=True):
            if np.isclose(t, a):
                warnings.warn(
                    f"The optimal value found for dimension {k} of parameter {name} is close "
                    f"to the specified lower bound {math.exp(a)}. Decreasing the bound and "
                    "calling fit again may find a better value.",
                    ConvergenceWarning,
                    stacklevel=3,
                )
            elif np.isclose(t, b):
                warnings.warn(
                    f"The optimal value found for dimension {k} of parameter {name} is close "
                    f"to the specified upper bound {math.exp(b)}. Increasing the bound and "
                    "calling fit again may find a better value.",
                    ConvergenceWarning,
                    stacklevel=3,
                )


def _fmt(v):
    if np.ndim(v) > 0:
        return "[" + ", ".join(f"{x:.3g}" for x in np.ravel(v)) + "]"
    return f"{v:.3g}"


class _Stationary(Kernel):
    """Length-scale kernels (isotropic: a scalar length_scale; anisotropic: one per feature)."""

    @property
    def anisotropic(self):
        return np.iterable(self.length_scale) and len(self.length_scale) > 1

    @property
    def hyperparameter_length_scale(self):
        if self.anisotropic:
            return Hyperparameter(
                "length_scale", "numeric", self.length_scale_bounds, len(self.length_scale)
            )
        return Hyperparameter("length_scale", "numeric", self.length_scale_bounds)

    def _scaled(self, X, Y):
        ls = np.asarray(self.length_scale, dtype=np.float64).reshape(-1)
        if self.anisotropic and len(ls) != X.shape[1]:
            raise ValueError(
                f"Anisotropic kernel must have the same number of dimensions as data "
                f"({len(ls)}!={X.shape[1]})"
            )
        return _diffs2(X, X if Y is None else Y, ls)

    def _diag(self, X):
        return ember.ones((X.shape[0],), dtype=ember.float64, device=X.device)


class RBF(_Stationary):
    """Squared-exponential kernel exp(-|x - y|^2 / (2 l^2))."""

    def __init__(self, length_scale=1.0, length_scale_bounds=(1e-5, 1e5)):
        self.length_scale = length_scale
        self.length_scale_bounds = length_scale_bounds

    def _eval(self, X, Y, eval_gradient):
        D = self._scaled(X, Y)
        K = ember.exp(-0.5 * _sum(D, X))
        if not eval_gradient:
            return K
        if self.hyperparameter_length_scale.fixed:
            return K, _no_grad(K.shape[0], K.shape[1], K)
        if self.anisotropic:
            return K, ember.stack([K * d for d in D], axis=2)
        return K, (K * _sum(D, X))[:, :, None]


class Matern(_Stationary):
    """Matern kernel with smoothness ``nu`` (closed forms for 0.5, 1.5, 2.5 and inf)."""

    def __init__(self, length_scale=1.0, length_scale_bounds=(1e-5, 1e5), nu=1.5):
        self.length_scale = length_scale
        self.length_scale_bounds = length_scale_bounds
        self.nu = nu

    def __repr__(self):
        return f"Matern(length_scale={_fmt(self.length_scale)}, nu={self.nu:.3g})"

    def _eval(self, X, Y, eval_gradient):
        nu = self.nu
        if nu not in (0.5, 1.5, 2.5, np.inf):
            raise ValueError(
                f"Matern: nu={nu!r} is not supported by ember.ml (closed forms only): use "
                "nu in {0.5, 1.5, 2.5, inf}"
            )
        D = self._scaled(X, Y)
        S = _sum(D, X)
        if Y is None:  # exact zeros on the diagonal (sqrt of a rounding residue is not 0)
            S = S * (1.0 - ember.eye(S.shape[0], dtype=ember.float64, device=S.device))
        dist = ember.sqrt(S)
        if nu == 0.5:
            K = ember.exp(-dist)
        elif nu == 1.5:
            t = math.sqrt(3.0) * dist
            K = (1.0 + t) * ember.exp(-t)
        elif nu == 2.5:
            t = math.sqrt(5.0) * dist
            K = (1.0 + t + t * t / 3.0) * ember.exp(-t)
        else:
            K = ember.exp(-0.5 * S)
        if not eval_gradient:
            return K
        if self.hyperparameter_length_scale.fixed:
            return K, _no_grad(K.shape[0], K.shape[1], K)
        parts = D if self.anisotropic else [S]
        if nu == 0.5:
            safe = ember.where(dist > 0, dist, 1.0)
            G = [ember.where(dist > 0, K * p / safe, 0.0) for p in parts]
        elif nu == 1.5:
            e = ember.exp(-math.sqrt(3.0) * dist)
            G = [3.0 * p * e for p in parts]
        elif nu == 2.5:
            t = math.sqrt(5.0) * dist
            e = (t + 1.0) * ember.exp(-t)
            G = [(5.0 / 3.0) * p * e for p in parts]
        else:
            G = [p * K for p in parts]
        return K, ember.stack(G, axis=2)


class RationalQuadratic(_Stationary):
    """(1 + |x - y|^2 / (2 alpha l^2))^-alpha (isotropic)."""

    def __init__(
        self, length_scale=1.0, alpha=1.0, length_scale_bounds=(1e-5, 1e5), alpha_bounds=(1e-5, 1e5)
    ):
        self.length_scale = length_scale
        self.alpha = alpha
        self.length_scale_bounds = length_scale_bounds
        self.alpha_bounds = alpha_bounds

    @property
    def hyperparameter_alpha(self):
        return Hyperparameter("alpha", "numeric", self.alpha_bounds)

    def _eval(self, X, Y, eval_gradient):
        if np.iterable(self.length_scale) and len(self.length_scale) > 1:
            raise AttributeError("RationalQuadratic kernel only supports isotropic version, "
                                 "please use a single scalar for length_scale")  # fmt: skip
        ls = float(np.ravel(self.length_scale)[0])
        d2 = _sum(_diffs2(X, X if Y is None else Y, 1.0), X)
        base = 1.0 + d2 / (2.0 * self.alpha * ls**2)
        K = base ** (-self.alpha)
        if not eval_gradient:
            return K
        G = []
        if not self.hyperparameter_alpha.fixed:
            G.append(K * (-self.alpha * ember.log(base) + d2 / (2.0 * ls**2 * base)))
        if not self.hyperparameter_length_scale.fixed:
            G.append(d2 * K / (ls**2 * base))
        if not G:
            return K, _no_grad(K.shape[0], K.shape[1], K)
        return K, ember.stack(G, axis=2)


class ConstantKernel(Kernel):
    """k(x, y) = constant_value."""

    def __init__(self, constant_value=1.0, constant_value_bounds=(1e-5, 1e5)):
        self.constant_value = constant_value
        self.constant_value_bounds = constant_value_bounds

    @property
    def hyperparameter_constant_value(self):
        return Hyperparameter("constant_value", "numeric", self.constant_value_bounds)

    def __repr__(self):
        return f"{math.sqrt(self.constant_value):.3g}**2"

    def _eval(self, X, Y, eval_gradient):
        m = X.shape[0] if Y is None else Y.shape[0]
        K = ember.full((X.shape[0], m), float(self.constant_value), dtype=ember.float64,
                       device=X.device)  # fmt: skip
        if not eval_gradient:
            return K
        if self.hyperparameter_constant_value.fixed:
            return K, _no_grad(K.shape[0], m, K)
        return K, K[:, :, None]

    def _diag(self, X):
        return ember.full((X.shape[0],), float(self.constant_value), dtype=ember.float64,
                          device=X.device)  # fmt: skip

    @property
    def requires_vector_input(self):
        return False


class WhiteKernel(Kernel):
    """Noise: k(x, y) = noise_level if x is y (same training sample) else 0."""

    def __init__(self, noise_level=1.0, noise_level_bounds=(1e-5, 1e5)):
        self.noise_level = noise_level
        self.noise_level_bounds = noise_level_bounds

    @property
    def hyperparameter_noise_level(self):
        return Hyperparameter("noise_level", "numeric", self.noise_level_bounds)

    def _eval(self, X, Y, eval_gradient):
        n = X.shape[0]
        if Y is not None:
            return ember.zeros((n, Y.shape[0]), dtype=ember.float64, device=X.device)
        K = float(self.noise_level) * ember.eye(n, dtype=ember.float64, device=X.device)
        if not eval_gradient:
            return K
        if self.hyperparameter_noise_level.fixed:
            return K, _no_grad(n, n, K)
        return K, K[:, :, None]

    def _diag(self, X):
        return ember.full((X.shape[0],), float(self.noise_level), dtype=ember.float64,
                          device=X.device)  # fmt: skip

    @property
    def requires_vector_input(self):
        return False


class DotProduct(Kernel):
    """k(x, y) = sigma_0^2 + x . y (not stationary)."""

    def __init__(self, sigma_0=1.0, sigma_0_bounds=(1e-5, 1e5)):
        self.sigma_0 = sigma_0
        self.sigma_0_bounds = sigma_0_bounds

    @property
    def hyperparameter_sigma_0(self):
        return Hyperparameter("sigma_0", "numeric", self.sigma_0_bounds)

    def _eval(self, X, Y, eval_gradient):
        K = X @ (X if Y is None else Y).T + float(self.sigma_0) ** 2
        if not eval_gradient:
            return K
        if self.hyperparameter_sigma_0.fixed:
            return K, _no_grad(K.shape[0], K.shape[1], K)
        g = ember.full(K.shape, 2.0 * float(self.sigma_0) ** 2, dtype=ember.float64,
                       device=K.device)  # fmt: skip
        return K, g[:, :, None]

    def _diag(self, X):
        return (X * X).sum(axis=1) + float(self.sigma_0) ** 2

    def is_stationary(self):
        return False


class KernelOperator(Kernel):
    """A kernel made of two kernels ``k1`` and ``k2``."""

    def __init__(self, k1, k2):
        self.k1 = k1
        self.k2 = k2

    def get_params(self, deep=True):
        params = {"k1": self.k1, "k2": self.k2}
        if deep:
            for name in ("k1", "k2"):
                for k, v in getattr(self, name).get_params().items():
                    params[f"{name}__{k}"] = v
        return params

    @property
    def hyperparameters(self):
        out = []
        for name in ("k1", "k2"):
            for hp in getattr(self, name).hyperparameters:
                out.append(Hyperparameter(f"{name}__{hp.name}", hp.value_type, hp.bounds,
                                          hp.n_elements))  # fmt: skip
        return out

    @property
    def theta(self):
        return np.append(self.k1.theta, self.k2.theta)

    @theta.setter
    def theta(self, theta):
        k = self.k1.n_dims
        self.k1.theta = theta[:k]
        self.k2.theta = theta[k:]

    @property
    def bounds(self):
        if self.k1.bounds.size == 0:
            return self.k2.bounds
        if self.k2.bounds.size == 0:
            return self.k1.bounds
        return np.vstack((self.k1.bounds, self.k2.bounds))

    def clone_with_theta(self, theta):
        new = type(self)(self.k1.clone_with_theta(self.k1.theta),
                         self.k2.clone_with_theta(self.k2.theta))  # fmt: skip
        new.theta = theta
        return new

    def is_stationary(self):
        return self.k1.is_stationary() and self.k2.is_stationary()

    @property
    def requires_vector_input(self):
        return self.k1.requires_vector_input or self.k2.requires_vector_input

    def __eq__(self, b):
        return type(self) is type(b) and self.k1 == b.k1 and self.k2 == b.k2

    __hash__ = object.__hash__


class Sum(KernelOperator):
    """k1 + k2."""

    def _eval(self, X, Y, eval_gradient):
        if not eval_gradient:
            return self.k1._eval(X, Y, False) + self.k2._eval(X, Y, False)
        K1, G1 = self.k1._eval(X, Y, True)
        K2, G2 = self.k2._eval(X, Y, True)
        return K1 + K2, ember.concatenate([G1, G2], axis=2)

    def _diag(self, X):
        return self.k1._diag(X) + self.k2._diag(X)

    def __repr__(self):
        return f"{self.k1} + {self.k2}"


class Product(KernelOperator):
    """k1 * k2."""

    def _eval(self, X, Y, eval_gradient):
        if not eval_gradient:
            return self.k1._eval(X, Y, False) * self.k2._eval(X, Y, False)
        K1, G1 = self.k1._eval(X, Y, True)
        K2, G2 = self.k2._eval(X, Y, True)
        return K1 * K2, ember.concatenate([G1 * K2[:, :, None], G2 * K1[:, :, None]], axis=2)

    def _diag(self, X):
        return self.k1._diag(X) * self.k2._diag(X)

    def __repr__(self):
        return f"{self.k1} * {self.k2}"


class Exponentiation(Kernel):
    """kernel ** exponent."""

    def __init__(self, kernel, exponent):
        self.kernel = kernel
        self.exponent = exponent

    def get_params(self, deep=True):
        params = {"kernel": self.kernel, "exponent": self.exponent}
        if deep:
            for k, v in self.kernel.get_params().items():
                params[f"kernel__{k}"] = v
        return params

    @property
    def hyperparameters(self):
        return [Hyperparameter(f"kernel__{hp.name}", hp.value_type, hp.bounds, hp.n_elements)
                for hp in self.kernel.hyperparameters]  # fmt: skip

    @property
    def theta(self):
        return self.kernel.theta

    @theta.setter
    def theta(self, theta):
        self.kernel.theta = theta

    @property
    def bounds(self):
        return self.kernel.bounds

    def clone_with_theta(self, theta):
        new = Exponentiation(self.kernel.clone_with_theta(self.kernel.theta), self.exponent)
        new.theta = theta
        return new

    def _eval(self, X, Y, eval_gradient):
        e = self.exponent
        if not eval_gradient:
            return self.kernel._eval(X, Y, False) ** e
        K, G = self.kernel._eval(X, Y, True)
        return K**e, G * (e * K ** (e - 1))[:, :, None]

    def _diag(self, X):
        return self.kernel._diag(X) ** self.exponent

    def is_stationary(self):
        return self.kernel.is_stationary()

    @property
    def requires_vector_input(self):
        return self.kernel.requires_vector_input

    def __eq__(self, b):
        return type(self) is type(b) and self.kernel == b.kernel and self.exponent == b.exponent

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{self.kernel} ** {self.exponent}"
