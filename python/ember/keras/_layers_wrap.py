"""Keras's ``TimeDistributed`` (a layer applied to every time step, as one call over the
batch and time dimensions merged) and the ``Normalization`` preprocessing layer (``adapt`` to
data: per-feature mean and variance as non-trainable weights; ``invert=True`` undoes it)."""

from __future__ import annotations

import numpy as np

import ember as _e

from ._layer import Layer, register

__all__ = ["Normalization", "TimeDistributed"]

_EPSILON = 1e-7  # keras.config.epsilon()


@register
class TimeDistributed(Layer):
    """Applies `layer` to every slice ``inputs[:, t]`` (inputs of shape (batch, time, ...))."""

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(
                "Please initialize `TimeDistributed` layer with a `keras.layers.Layer` "
                f"instance. Received: {layer}"
            )
        super().__init__(**kwargs)
        self.layer = layer

    def _check(self, shape):
        if len(shape) < 3:
            raise ValueError(
                "`TimeDistributed` Layer should be passed an `input_shape` with at least 3 "
                f"dimensions, received: {tuple(shape)}"
            )

    def build(self, input_shape):
        self._check(input_shape)
        if not self.layer.built:
            self.layer._maybe_build((input_shape[0],) + tuple(input_shape[2:]))

    def call(self, inputs, training=None):
        self._check(inputs.shape)
        n, t = inputs.shape[0], inputs.shape[1]
        y = self.layer(inputs.reshape((n * t,) + tuple(inputs.shape[2:])), training=training)
        return y.reshape((n, t) + tuple(y.shape[1:]))

    def compute_output_shape(self, input_shape):
        self._check(input_shape)
        inner = self.layer.compute_output_shape((input_shape[0],) + tuple(input_shape[2:]))
        return (input_shape[0], input_shape[1]) + tuple(inner[1:])

    def get_config(self):
        from ._saving import serialize_layer

        return {**super().get_config(), "layer": serialize_layer(self.layer)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ._saving import deserialize_layer

        config = dict(config)
        layer = deserialize_layer(config.pop("layer"), custom_objects)
        return cls(layer, **config)


@register
class Normalization(Layer):
    """``(x - mean) / max(sqrt(variance), epsilon)`` per feature along `axis` (default the last);
    `mean`/`variance` given, or learned by :meth:`adapt`."""

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        if (mean is None) != (variance is None):
            raise ValueError(
                "When setting values directly, both `mean` and `variance` must be set. "
                f"Received: mean={mean} and variance={variance}"
            )
        self.axis = (axis,) if isinstance(axis, int) else tuple(axis or ())
        self.invert = bool(invert)
        self._init_mean, self._init_var = mean, variance

    def _stat_shape(self, shape):
        nd = len(shape)
        keep = {a % nd for a in self.axis}
        return tuple(shape[i] if i in keep else 1 for i in range(1, nd))

    def build(self, input_shape):
        shape = self._stat_shape(input_shape)
        self.mean = self.add_weight(shape, "zeros", trainable=False, name="mean")
        self.variance = self.add_weight(shape, "ones", trainable=False, name="variance")
        if self._init_mean is not None:
            for var, v in ((self.mean, self._init_mean), (self.variance, self._init_var)):
                a = _e.asarray(np.asarray(v, "float32"), device=var.device)
                var.assign(_e.broadcast_to(a, shape))

    def adapt(self, data, batch_size=None, steps=None):
        """Sets the mean and variance from `data` (an array; all axes but `axis` reduced)."""
        x = data if isinstance(data, _e.ndarray) else _e.asarray(np.asarray(data))
        x = x.astype(_e.float32) if x.dtype != _e.float32 else x
        if not self.built:
            self._maybe_build(tuple(x.shape))
        nd = x.ndim
        keep = {a % nd for a in self.axis}
        red = tuple(i for i in range(nd) if i not in keep)
        x = x.to(self.mean.device)
        self.mean.assign(_e.mean(x, axis=red, keepdims=True)[0])
        self.variance.assign(_e.var(x, axis=red, keepdims=True)[0])

    def call(self, inputs):
        x = inputs.astype(self.mean.dtype) if inputs.dtype != self.mean.dtype else inputs
        std = _e.maximum(_e.sqrt(self.variance), _EPSILON)
        return x * std + self.mean if self.invert else (x - self.mean) / std

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        conf = {**super().get_config(), "axis": list(self.axis), "invert": self.invert}
        conf["mean"] = None if self._init_mean is None else np.asarray(self._init_mean).tolist()
        conf["variance"] = None if self._init_var is None else np.asarray(self._init_var).tolist()
        return conf
