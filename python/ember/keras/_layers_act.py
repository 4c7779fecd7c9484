"""ember.keras's activation layers (ReLU, LeakyReLU, PReLU, ELU, Softmax), the noise layers
(GaussianNoise, GaussianDropout, active only in training), ActivityRegularization,
UnitNormalization and the SpectralNormalization wrapper, with Keras 3's arguments, defaults and
weight layouts."""

from __future__ import annotations

import math

import ember as _e

from ..nn import functional as F
from ..nn._grad_mode import no_grad
from . import constraints, initializers, regularizers
from ._layer import Layer, register
from ._layers_core import _ser_init, _ser_reg

__all__ = [
    "ELU",
    "ActivityRegularization",
    "GaussianDropout",
    "GaussianNoise",
    "LeakyReLU",
    "PReLU",
    "ReLU",
    "Softmax",
    "SpectralNormalization",
    "UnitNormalization",
]


def _number(v, who, name, low=None, high=None, allow_none=False):
    if v is None and allow_none:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v):
        raise ValueError(f"{who}: `{name}` must be a number. Received: {name}={v!r}")
    if (low is not None and v < low) or (high is not None and v > high):
        rng = f"[{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{who}: `{name}` must be in {rng}. Received: {name}={v!r}")
    return float(v)


def layer_rng(seed, who):
    """The generator of a random layer: its own (seeded, advancing with each call) when `seed`
    is given, else Keras's global one (reseeded by ``keras.utils.set_random_seed``)."""
    from .. import random as _random

    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"{who}: `seed` must be an int or None. Received: seed={seed!r}")
    return _random.default_rng(int(seed))


def draw(layer):
    if layer._rng is not None:
        return layer._rng
    return initializers.global_rng()


class _Elementwise(Layer):
    supports_masking = True

    def compute_output_shape(self, input_shape):
        return input_shape


@register
class ReLU(_Elementwise):
    """``x`` above `threshold` (capped at `max_value`), ``negative_slope * (x - threshold)``
    below it (Keras 3's rule: the value at the threshold itself is 0)."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        self.max_value = _number(max_value, "ReLU", "max_value", low=0.0, allow_none=True)
        self.negative_slope = _number(negative_slope, "ReLU", "negative_slope", low=0.0)
        self.threshold = _number(threshold, "ReLU", "threshold", low=0.0)

    def call(self, inputs):
        s, m, t = self.negative_slope, self.max_value, self.threshold
        if s == 0.0 and t == 0.0:
            if m is None:
                return F.relu(inputs)
            if m == 6.0:
                return F.relu6(inputs)
        pos = inputs if m is None else _e.minimum(inputs, m)
        neg = s * (inputs - t) if s else _e.zeros_like(inputs)
        return _e.where(inputs > t, pos, neg)

    def get_config(self):
        return {
            **super().get_config(),
            "max_value": self.max_value,
            "negative_slope": self.negative_slope,
            "threshold": self.threshold,
        }


@register
class LeakyReLU(_Elementwise):
    """``x`` for ``x >= 0``, ``negative_slope * x`` below (Keras 3's default slope 0.3; the
    Keras 2 name ``alpha`` is accepted)."""

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
        super().__init__(**kwargs)
        self.negative_slope = _number(negative_slope, "LeakyReLU", "negative_slope", low=0.0)

    def call(self, inputs):
        return F.leaky_relu(inputs, self.negative_slope)

    def get_config(self):
        return {**super().get_config(), "negative_slope": self.negative_slope}


@register
class PReLU(_Elementwise):
    """``relu(x) - alpha * relu(-x)`` with a learned ``alpha`` of the input's shape without the
    batch axis (size 1 along `shared_axes`, counted from 1 as in Keras); alpha starts at 0."""

    def __init__(
        self,
        alpha_initializer="Zeros",
        alpha_regularizer=None,
        alpha_constraint=None,
        shared_axes=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        elif isinstance(shared_axes, int):
            self.shared_axes = [shared_axes]
        else:
            self.shared_axes = [int(a) for a in shared_axes]
        if self.shared_axes is not None and any(a < 1 for a in self.shared_axes):
            raise ValueError(
                "PReLU: `shared_axes` count the non-batch axes from 1. Received: "
                f"shared_axes={shared_axes!r}"
            )

    def build(self, input_shape):
        shape = list(input_shape[1:])
        for a in self.shared_axes or ():
            if a > len(shape):
                raise ValueError(
                    f"PReLU: shared axis {a} is out of range for inputs of shape {input_shape}"
                )
            shape[a - 1] = 1
        if any(s is None for s in shape):
            raise ValueError(
                f"PReLU: the non-shared axes of the input must be defined, got {input_shape}"
            )
        self.alpha = self.add_weight(
            tuple(shape),
            self.alpha_initializer,
            name="alpha",
            regularizer=self.alpha_regularizer,
            constraint=self.alpha_constraint,
        )

    def call(self, inputs):
        return F.relu(inputs) - self.alpha * F.relu(-inputs)

    def get_config(self):
        return {
            **super().get_config(),
            "alpha_initializer": _ser_init(self.alpha_initializer),
            "alpha_regularizer": _ser_reg(self.alpha_regularizer),
            "shared_axes": self.shared_axes,
        }


@register
class ELU(_Elementwise):
    """``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` below."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = _number(alpha, "ELU", "alpha")

    def call(self, inputs):
        return F.elu(inputs, self.alpha)

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


@register
class Softmax(_Elementwise):
    """Softmax over `axis` (an int or a tuple of axes); masked positions (``mask`` False) get
    Keras's large negative logit (-1e9; -3e4 in float16) first."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis) if isinstance(axis, int) else [int(a) for a in axis]

    def call(self, inputs, mask=None):
        x = inputs
        if mask is not None:
            big = -3e4 if x.dtype == _e.float16 else -1e9
            x = x + (1.0 - mask.astype(x.dtype)) * big
        if isinstance(self.axis, int):
            return F.softmax(x, dim=self.axis)
        axes = tuple(self.axis)
        m = _e.max(x, axis=axes, keepdims=True).detach()
        ex = _e.exp(x - m)
        return ex / _e.sum(ex, axis=axes, keepdims=True)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


# ---- noise ---------------------------------------------------------------------------------------


@register
class GaussianNoise(_Elementwise):
    """Adds zero-mean Gaussian noise of standard deviation `stddev` in training only."""

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.stddev = _number(stddev, "GaussianNoise", "stddev", low=0.0, high=1.0)
        self.seed = seed
        self.__dict__["_rng"] = layer_rng(seed, "GaussianNoise")

    def call(self, inputs, training=False):
        if not training or self.stddev == 0.0:
            return inputs
        noise = draw(self).normal(
            0.0, self.stddev, tuple(inputs.shape), dtype=inputs.dtype, device=inputs.device
        )
        return inputs + noise

    def get_config(self):
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}


@register
class GaussianDropout(_Elementwise):
    """Multiplies by Gaussian noise of mean 1 and standard deviation ``sqrt(rate/(1-rate))``
    in training only."""

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = _number(rate, "GaussianDropout", "rate", low=0.0, high=1.0)
        self.seed = seed
        self.__dict__["_rng"] = layer_rng(seed, "GaussianDropout")

    def call(self, inputs, training=False):
        if not training or not 0.0 < self.rate < 1.0:
            return inputs
        std = math.sqrt(self.rate / (1.0 - self.rate))
        noise = draw(self).normal(
            1.0, std, tuple(inputs.shape), dtype=inputs.dtype, device=inputs.device
        )
        return inputs * noise

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}


@register
class ActivityRegularization(_Elementwise):
    """The identity, adding ``l1 * sum|x| + l2 * sum x^2`` (divided by the batch size, as every
    activity regularizer) to the model's losses."""

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        l1 = _number(l1, "ActivityRegularization", "l1", low=0.0)
        l2 = _number(l2, "ActivityRegularization", "l2", low=0.0)
        kwargs.pop("activity_regularizer", None)
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = l1, l2

    def call(self, inputs):
        return inputs

    def get_config(self):
        return {**super().get_config(), "l1": self.l1, "l2": self.l2}


@register
class UnitNormalization(_Elementwise):
    """Scales each vector along `axis` to unit L2 norm: ``x / sqrt(max(sum(x^2), 1e-12))``."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis) if isinstance(axis, int) else [int(a) for a in axis]

    def call(self, inputs):
        axes = self.axis if isinstance(self.axis, int) else tuple(self.axis)
        sq = _e.sum(inputs * inputs, axis=axes, keepdims=True)
        return inputs / _e.sqrt(_e.maximum(sq, 1e-12))

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


# ---- spectral normalization ----------------------------------------------------------------------


def _l2_normalize(v):
    return v / _e.sqrt(_e.maximum(_e.sum(v * v), 1e-12))


@register
class SpectralNormalization(Layer):
    """Keras's wrapper dividing the wrapped layer's ``kernel`` (or ``embeddings``) by its
    spectral norm, estimated by `power_iterations` steps of the power method from the
    non-trainable ``vector_u`` (1, units): in training, ``vector_u`` and the kernel are
    overwritten with the new estimate and ``kernel / sigma`` (no gradient through sigma), then the
    layer runs; in inference the layer runs on the kernel as it is. Weights: the layer's, then
    ``vector_u``."""

    def __init__(self, layer, power_iterations=1, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(
                "SpectralNormalization: `layer` must be a keras.layers.Layer instance. "
                f"Received: layer={layer!r}"
            )
        if isinstance(power_iterations, bool) or not isinstance(power_iterations, int):
            raise ValueError(
                "SpectralNormalization: `power_iterations` must be an int. Received: "
                f"power_iterations={power_iterations!r}"
            )
        if power_iterations <= 0:
            raise ValueError(
                "`power_iterations` should be greater than zero. Received: "
                f"power_iterations={power_iterations}"
            )
        super().__init__(**kwargs)
        self.layer = layer
        self.power_iterations = power_iterations

    def _target(self):
        for name in ("kernel", "embeddings"):
            # the Variable itself (under a mixed policy the attribute is a cast during calls)
            for v in self.layer._tracked:
                if v.name == name:
                    return v
        raise ValueError(
            f"{type(self.layer).__name__} object has no attribute 'kernel' nor 'embeddings'"
        )

    def build(self, input_shape):
        if not self.layer.built:
            self.layer._maybe_build(input_shape)
        kernel = self._target()
        self.vector_u = self.add_weight(
            (1, kernel.shape[-1]),
            initializers.TruncatedNormal(stddev=0.02),
            trainable=False,
            name="vector_u",
        )

    def normalized_weights(self):
        """(new vector_u, kernel / sigma) by the power method (Keras's formulation)."""
        kernel = self._target()
        w = kernel.detach().reshape(-1, kernel.shape[-1])
        u = self.vector_u.detach()
        v = None
        for _ in range(self.power_iterations):
            v = _l2_normalize(_e.matmul(u, w.T))
            u = _l2_normalize(_e.matmul(v, w))
        sigma = _e.matmul(_e.matmul(v, w), u.T)
        return u, kernel.detach() / sigma.reshape(())

    def call(self, inputs, training=False):
        if training:
            with no_grad():
                kernel = self._target()
                u, new = self.normalized_weights()
                zero = _e.all(kernel == 0)  # an all-zero kernel is left alone (no host sync)
                self.vector_u.assign(_e.where(zero, self.vector_u.detach(), u))
                kernel.assign(_e.where(zero, kernel.detach(), new))
        return self.layer(inputs, training=training)

    def compute_output_shape(self, input_shape):
        return self.layer.compute_output_shape(input_shape)

    def get_config(self):
        from ._saving import serialize_layer

        return {
            **super().get_config(),
            "layer": serialize_layer(self.layer),
            "power_iterations": self.power_iterations,
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ._saving import deserialize_layer

        config = dict(config)
        layer = deserialize_layer(config.pop("layer"), custom_objects)
        return cls(layer, **config)
