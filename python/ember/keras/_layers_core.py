"""ember.keras's core layers: Dense, Activation, Dropout, Flatten, Reshape, Permute,
RepeatVector, Embedding, Rescaling, Lambda and the merging layers (Concatenate, Add, ...)."""

from __future__ import annotations

import math

import ember as _e

from ..nn import functional as F
from . import activations, initializers, regularizers
from ._layer import Layer, register


def _positive_int(v, who, name):
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ValueError(
            f"Received an invalid value for `{name}`, expected a positive integer. "
            f"Received: {name}={v!r} ({who})"
        )
    return v


def _ser_init(x):
    return initializers.serialize(x) if isinstance(x, initializers.Initializer) else x


def _ser_reg(x):
    return regularizers.serialize(x) if isinstance(x, regularizers.Regularizer) else x


def _last_dim(input_shape, who):
    if not isinstance(input_shape, tuple) or not input_shape or input_shape[-1] is None:
        raise ValueError(
            f"{who}: the last dimension of the inputs must be defined, got input_shape="
            f"{input_shape}"
        )
    return input_shape[-1]


@register
class Dense(Layer):
    """``activation(inputs @ kernel + bias)``; kernel shape ``(input_dim, units)`` (Keras's)."""

    supports_masking = True

    def __init__(
        self,
        units,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.units = _positive_int(units, "Dense", "units")
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint

    def build(self, input_shape):
        n_in = _last_dim(input_shape, f"Dense {self.name!r}")
        self.kernel = self.add_weight(
            (n_in, self.units),
            self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
            name="kernel",
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                (self.units,),
                self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
                name="bias",
            )

    def call(self, inputs):
        if inputs.shape[-1] != self.kernel.shape[0]:
            raise ValueError(
                f"Input 0 of layer {self.name!r} is incompatible with the layer: expected axis "
                f"-1 of input shape to have value {self.kernel.shape[0]}, but received input "
                f"with shape {tuple(inputs.shape)}"
            )
        y = _e.matmul(inputs, self.kernel)
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": _ser_init(self.kernel_initializer),
            "bias_initializer": _ser_init(self.bias_initializer),
            "kernel_regularizer": _ser_reg(self.kernel_regularizer),
            "bias_regularizer": _ser_reg(self.bias_regularizer),
        }


@register
class Activation(Layer):
    supports_masking = True

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "activation": activations.serialize(self.activation)}


@register
class Dropout(Layer):
    """Zeroes a fraction `rate` of the inputs in training and scales the rest by 1/(1-rate)."""

    supports_masking = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            raise ValueError(
                f"Invalid value received for argument `rate`. Expected a float value between 0 "
                f"and 1. Received: rate={rate!r}"
            )
        self.rate = float(rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed

    def call(self, inputs, training=False):
        if not training or self.rate == 0.0:
            return inputs
        if self.noise_shape is None:
            return F.dropout(inputs, self.rate, training=True)
        from . import initializers as _init

        shape = tuple(
            s if n is None else n for s, n in zip(inputs.shape, self.noise_shape, strict=True)
        )
        keep = _init.global_rng().random(shape, device=inputs.device) >= self.rate
        return inputs * keep.astype(inputs.dtype) / (1.0 - self.rate)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {
            **super().get_config(),
            "rate": self.rate,
            "noise_shape": None if self.noise_shape is None else list(self.noise_shape),
            "seed": self.seed,
        }


@register
class Flatten(Layer):
    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = data_format or "channels_last"

    def call(self, inputs):
        if self.data_format == "channels_first" and inputs.ndim > 2:
            inputs = _e.permute_dims(inputs, (0,) + tuple(range(2, inputs.ndim)) + (1,))
        return _e.reshape(inputs, (inputs.shape[0], -1))

    def compute_output_shape(self, input_shape):
        rest = input_shape[1:]
        n = None if any(s is None for s in rest) else math.prod(rest)
        return (input_shape[0], n)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}


@register
class Reshape(Layer):
    """Reshapes all but the batch axis to `target_shape` (one entry may be -1)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(s) for s in target_shape)
        if sum(s == -1 for s in self.target_shape) > 1:
            raise ValueError(f"Reshape: at most one -1 in target_shape, got {self.target_shape}")

    def _resolve(self, rest, who_shape):
        if -1 not in self.target_shape:
            if any(s is not None for s in rest) and None not in rest:
                if math.prod(rest) != math.prod(self.target_shape):
                    raise ValueError(
                        f"The total size of the tensor must be unchanged. Received: "
                        f"input_shape={who_shape}, target_shape={self.target_shape}"
                    )
            return self.target_shape
        if None in rest:
            return tuple(None if s == -1 else s for s in self.target_shape)
        known = math.prod(s for s in self.target_shape if s != -1)
        total = math.prod(rest)
        if known == 0 or total % known:
            raise ValueError(
                f"The total size of the tensor must be unchanged. Received: input_shape="
                f"{who_shape}, target_shape={self.target_shape}"
            )
        return tuple(total // known if s == -1 else s for s in self.target_shape)

    def call(self, inputs):
        shape = self._resolve(tuple(inputs.shape[1:]), tuple(inputs.shape))
        return _e.reshape(inputs, (inputs.shape[0],) + shape)

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + self._resolve(tuple(input_shape[1:]), input_shape)

    def get_config(self):
        return {**super().get_config(), "target_shape": list(self.target_shape)}


@register
class Permute(Layer):
    """Permutes the non-batch axes: `dims` counts from 1 (``Permute((2, 1))``)."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(
                f"Invalid permutation argument `dims` for Permute Layer. The set of indices in "
                f"`dims` must be consecutive and start from 1. Received dims={self.dims}"
            )

    def call(self, inputs):
        return _e.permute_dims(inputs, (0,) + self.dims)

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + tuple(input_shape[d] for d in self.dims)

    def get_config(self):
        return {**super().get_config(), "dims": list(self.dims)}


@register
class RepeatVector(Layer):
    """``(batch, features)`` -> ``(batch, n, features)``."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        self.n = _positive_int(n, "RepeatVector", "n")

    def call(self, inputs):
        if inputs.ndim != 2:
            raise ValueError(
                f"RepeatVector {self.name!r}: expected a 2-D input (batch, features), got shape "
                f"{tuple(inputs.shape)}"
            )
        x = _e.expand_dims(inputs, axis=1)
        return _e.broadcast_to(x, (x.shape[0], self.n, x.shape[2]))

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.n, input_shape[1])

    def get_config(self):
        return {**super().get_config(), "n": self.n}


@register
class Embedding(Layer):
    """Integer indices ``(batch, ...)`` -> rows of a ``(input_dim, output_dim)`` table."""

    def __init__(
        self,
        input_dim,
        output_dim,
        embeddings_initializer="uniform",
        embeddings_regularizer=None,
        embeddings_constraint=None,
        mask_zero=False,
        **kwargs,
    ):
        kwargs.pop("input_length", None)
        super().__init__(**kwargs)
        self.input_dim = _positive_int(input_dim, "Embedding", "input_dim")
        self.output_dim = _positive_int(output_dim, "Embedding", "output_dim")
        if embeddings_initializer == "uniform":
            embeddings_initializer = initializers.RandomUniform()
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = embeddings_constraint
        self.mask_zero = bool(mask_zero)

    def build(self, input_shape=None):
        self.embeddings = self.add_weight(
            (self.input_dim, self.output_dim),
            self.embeddings_initializer,
            regularizer=self.embeddings_regularizer,
            constraint=self.embeddings_constraint,
            name="embeddings",
        )

    def call(self, inputs):
        idx = inputs if "int" in str(inputs.dtype) else inputs.astype(_e.int64)
        return F.embedding(idx, self.embeddings)

    def compute_mask(self, inputs, mask=None):
        """With ``mask_zero=True``: index 0 is padding; later layers skip those steps."""
        if not self.mask_zero or inputs is None:
            return None
        return inputs != 0

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.output_dim,)

    def _output_dtype(self, inputs):
        return self.dtype

    def get_config(self):
        return {
            **super().get_config(),
            "input_dim": self.input_dim,
            "output_dim": self.output_dim,
            "embeddings_initializer": _ser_init(self.embeddings_initializer),
            "embeddings_regularizer": _ser_reg(self.embeddings_regularizer),
            "mask_zero": self.mask_zero,
        }


@register
class Rescaling(Layer):
    """``inputs * scale + offset`` (``Rescaling(1/255)``)."""

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset

    def call(self, inputs):
        x = inputs if "float" in str(inputs.dtype) else inputs.astype(self.dtype)
        return x * self.scale + self.offset

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}


class Lambda(Layer):
    """Wraps a function of the inputs as a layer (not serializable by ``save``)."""

    def __init__(self, function, output_shape=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        self.function = function
        self._out_shape = output_shape
        self.arguments = arguments or {}

    def call(self, inputs):
        return self.function(inputs, **self.arguments)

    def compute_output_shape(self, input_shape):
        if self._out_shape is None:
            return super().compute_output_shape(input_shape)
        if callable(self._out_shape):
            return tuple(self._out_shape(input_shape))
        return (input_shape[0],) + tuple(self._out_shape)


# ---- merging ------------------------------------------------------------------------------------


class _Merge(Layer):
    def _check(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 1:
            raise ValueError(
                f"A merge layer {self.name!r} should be called on a list of inputs. Received: "
                f"inputs={inputs!r}"
            )

    def call(self, inputs):
        self._check(inputs)
        out = inputs[0]
        for x in inputs[1:]:
            out = self._merge(out, x)
        return out

    def compute_output_shape(self, input_shape):
        self._check(input_shape)
        shapes = [tuple(s) for s in input_shape]
        rank = max(len(s) for s in shapes)
        out = []
        for i in range(rank):
            dims = {s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0} - {1}
            known = {d for d in dims if d is not None}
            if len(known) > 1:
                raise ValueError(
                    "Inputs have incompatible shapes. Received shapes "
                    f"{', '.join(map(str, shapes))}"
                )
            out.append(known.pop() if known else (None if None in dims else 1))
        return tuple(out)


@register
class Add(_Merge):
    def _merge(self, a, b):
        return a + b


@register
class Subtract(_Merge):
    def call(self, inputs):
        self._check(inputs)
        if len(inputs) != 2:
            raise ValueError(
                f"A `Subtract` layer should be called on exactly 2 inputs. Received: {inputs!r}"
            )
        return inputs[0] - inputs[1]


@register
class Multiply(_Merge):
    def _merge(self, a, b):
        return a * b


@register
class Maximum(_Merge):
    def _merge(self, a, b):
        return _e.maximum(a, b)


@register
class Minimum(_Merge):
    def _merge(self, a, b):
        return _e.minimum(a, b)


@register
class Average(_Merge):
    def call(self, inputs):
        return super().call(inputs) / len(inputs)

    def _merge(self, a, b):
        return a + b


@register
class Concatenate(_Merge):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis)

    def call(self, inputs):
        self._check(inputs)
        return _e.concat(list(inputs), axis=self.axis)

    def compute_output_shape(self, input_shape):
        self._check(input_shape)
        shapes = [list(s) for s in input_shape]
        rank = len(shapes[0])
        ax = self.axis % rank
        for s in shapes:
            if len(s) != rank or any(
                i != ax and a is not None and b is not None and a != b
                for i, (a, b) in enumerate(zip(s, shapes[0], strict=True))
            ):
                raise ValueError(
                    "A `Concatenate` layer requires inputs with matching shapes except for the "
                    f"concatenation axis. Received: input_shape={[tuple(x) for x in shapes]}"
                )
        out = list(shapes[0])
        sizes = [s[ax] for s in shapes]
        out[ax] = None if None in sizes else sum(sizes)
        return tuple(out)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}
