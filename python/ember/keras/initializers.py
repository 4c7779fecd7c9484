"""ember.keras.initializers: Keras's weight initializers (names, defaults and fan rules for
channels-last kernels), drawing on the current default device with ember.random."""

from __future__ import annotations

import math

import numpy as _np

import ember as _e

from .. import random as _random

__all__ = [
    "Constant",
    "GlorotNormal",
    "GlorotUniform",
    "HeNormal",
    "HeUniform",
    "Identity",
    "Initializer",
    "LecunNormal",
    "LecunUniform",
    "Ones",
    "Orthogonal",
    "RandomNormal",
    "RandomUniform",
    "TruncatedNormal",
    "VarianceScaling",
    "Zeros",
    "get",
]


def _dtype(dtype):
    return _e.dtype(dtype or "float32")


_GLOBAL = []


def global_rng():
    """The generator of unseeded initializers (reseeded by keras.utils.set_random_seed)."""
    if not _GLOBAL:
        _GLOBAL.append(_random.default_rng())
    return _GLOBAL[0]


def set_seed(seed):
    _GLOBAL[:] = [_random.default_rng(seed)]


def compute_fans(shape):
    """Keras's fans: a kernel ``(..., in, out)`` has receptive field ``prod(shape[:-2])``."""
    shape = tuple(shape)
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = math.prod(shape[:-2])
    return shape[-2] * receptive, shape[-1] * receptive


class Initializer:
    """Base class: ``init(shape, dtype=None)`` returns a new array on the default device."""

    def __call__(self, shape, dtype=None):
        raise NotImplementedError(f"{type(self).__name__} must implement __call__")

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class _Seeded(Initializer):
    def __init__(self, seed=None):
        if seed is not None and not isinstance(seed, (int, _np.integer)):
            raise ValueError(f"{type(self).__name__}: seed must be an int or None, got {seed!r}")
        self.seed = seed
        self._calls = 0

    def _rng(self):
        if self.seed is None:
            return global_rng()
        # a seeded initializer gives the same values each call, as Keras's do
        return _random.default_rng(int(self.seed))

    def get_config(self):
        return {"seed": self.seed}


def _truncated(rng, shape, dtype):
    """Standard normal truncated to [-2, 2]: redraws the outliers a fixed number of times (no
    device-to-host check; after 12 rounds a value is left outside with probability 1e-16)."""
    z = rng.standard_normal(shape, dtype=dtype)
    for _ in range(12):
        bad = _e.abs(z) > 2.0
        z = _e.where(bad, rng.standard_normal(shape, dtype=dtype), z)
    return _e.clip(z, -2.0, 2.0)


class Zeros(Initializer):
    def __call__(self, shape, dtype=None):
        return _e.zeros(tuple(shape), dtype=_dtype(dtype))


class Ones(Initializer):
    def __call__(self, shape, dtype=None):
        return _e.ones(tuple(shape), dtype=_dtype(dtype))


class Constant(Initializer):
    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        return _e.full(tuple(shape), self.value, dtype=_dtype(dtype))

    def get_config(self):
        return {"value": self.value}


class RandomNormal(_Seeded):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None):
        z = self._rng().standard_normal(tuple(shape), dtype=_dtype(dtype))
        return z * self.stddev + self.mean

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class TruncatedNormal(RandomNormal):
    def __call__(self, shape, dtype=None):
        z = _truncated(self._rng(), tuple(shape), _dtype(dtype))
        return z * self.stddev + self.mean


class RandomUniform(_Seeded):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape, dtype=None):
        return self._rng().uniform(self.minval, self.maxval, tuple(shape)).astype(_dtype(dtype))

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class VarianceScaling(_Seeded):
    """Keras's VarianceScaling: variance ``scale / n`` with n the fan_in, fan_out or their mean."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        super().__init__(seed)
        if scale <= 0.0:
            raise ValueError(f"VarianceScaling: scale must be positive, got {scale}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(
                f"VarianceScaling: mode must be 'fan_in', 'fan_out' or 'fan_avg', got {mode!r}"
            )
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("truncated_normal", "untruncated_normal", "uniform"):
            raise ValueError(
                "VarianceScaling: distribution must be 'truncated_normal', 'untruncated_normal' "
                f"or 'uniform', got {distribution!r}"
            )
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def __call__(self, shape, dtype=None):
        shape = tuple(shape)
        fan_in, fan_out = compute_fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        dt = _dtype(dtype)
        rng = self._rng()
        if self.distribution == "truncated_normal":
            # the stddev of a standard normal truncated to [-2, 2]
            return _truncated(rng, shape, dt) * (math.sqrt(scale) / 0.87962566103423978)
        if self.distribution == "untruncated_normal":
            return rng.standard_normal(shape, dtype=dt) * math.sqrt(scale)
        limit = math.sqrt(3.0 * scale)
        return rng.uniform(-limit, limit, shape).astype(dt)

    def get_config(self):
        return {
            "scale": self.scale,
            "mode": self.mode,
            "distribution": self.distribution,
            "seed": self.seed,
        }


class GlorotUniform(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "uniform", seed)

    def get_config(self):
        return {"seed": self.seed}


class GlorotNormal(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class HeNormal(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class HeUniform(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "uniform", seed)

    def get_config(self):
        return {"seed": self.seed}


class LecunNormal(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_in", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class LecunUniform(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_in", "uniform", seed)

    def get_config(self):
        return {"seed": self.seed}


class Orthogonal(_Seeded):
    """An orthogonal matrix (QR of a Gaussian, signs fixed by R's diagonal) times `gain`."""

    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed)
        self.gain = gain

    def __call__(self, shape, dtype=None):
        from .. import linalg

        shape = tuple(shape)
        if len(shape) < 2:
            raise ValueError(f"Orthogonal: the shape must have at least 2 dims, got {shape}")
        rows = math.prod(shape[:-1])
        cols = shape[-1]
        a = self._rng().standard_normal((max(rows, cols), min(rows, cols)), dtype=_e.float32)
        q, r = linalg.qr(a)
        q = q * _e.sign(_e.diagonal(r))
        if rows < cols:
            q = q.T
        return (q * self.gain).reshape(shape).astype(_dtype(dtype))

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


class Identity(Initializer):
    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None):
        if len(shape) != 2:
            raise ValueError(f"Identity: the shape must be 2-D, got {tuple(shape)}")
        return _e.eye(shape[0], shape[1], dtype=_dtype(dtype)) * self.gain

    def get_config(self):
        return {"gain": self.gain}


IdentityInitializer = Identity

_BY_NAME = {
    "zeros": Zeros,
    "ones": Ones,
    "constant": Constant,
    "random_normal": RandomNormal,
    "random_uniform": RandomUniform,
    "truncated_normal": TruncatedNormal,
    "variance_scaling": VarianceScaling,
    "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal,
    "he_normal": HeNormal,
    "he_uniform": HeUniform,
    "lecun_normal": LecunNormal,
    "lecun_uniform": LecunUniform,
    "orthogonal": Orthogonal,
    "identity": Identity,
}
_BY_CLASS = {cls.__name__: cls for cls in _BY_NAME.values()}


def get(identifier):
    """An initializer from a name (``"glorot_uniform"``), a class name, a config dict, an
    ``Initializer`` or a callable ``(shape, dtype) -> array``."""
    if identifier is None:
        return None
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier) or _BY_CLASS.get(identifier)
        if cls is None:
            raise ValueError(
                f"Could not interpret initializer identifier: {identifier!r}; known "
                f"initializers: {', '.join(sorted(_BY_NAME))}"
            )
        return cls()
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}")


def serialize(init):
    if init is None:
        return None
    if isinstance(init, Initializer):
        return {"class_name": type(init).__name__, "config": init.get_config()}
    raise ValueError(f"initializers.serialize: cannot serialize {init!r}")


def deserialize(config, custom_objects=None):
    if config is None:
        return None
    if isinstance(config, str):
        return get(config)
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or _BY_CLASS.get(name)
    if cls is None:
        from ._layer import registered

        cls = registered(name, custom_objects, "initializers.deserialize")
    return cls.from_config(config.get("config", {}))
