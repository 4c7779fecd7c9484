"""ember.keras's convolution, pooling, padding and normalization layers: Conv1D/2D/3D,
MaxPooling1D/2D/3D, AveragePooling1D/2D/3D, Global{Average,Max}Pooling1D/2D/3D, ZeroPadding1D/2D,
LayerNormalization, BatchNormalization.

Images are channels_last (Keras's default) and kernels are Keras's ``(*kernel_size, in, out)``;
the work runs on ember.nn.functional's channels-first convolution and pooling, with transposes
around them. ``padding="same"`` pads as TensorFlow does (the odd pixel at the end), so strided
"same" convolutions match Keras.
"""

from __future__ import annotations

import math

import ember as _e

from ..nn import functional as F
from ..nn._grad_mode import no_grad
from . import activations, initializers, regularizers
from ._layer import Layer, register
from ._layers_core import _ser_init, _ser_reg


def _tuple(v, n, who, name):
    if isinstance(v, int) and not isinstance(v, bool):
        v = (v,) * n
    v = tuple(v)
    if len(v) != n or any(not isinstance(i, int) or i <= 0 for i in v):
        raise ValueError(
            f"{who}: the `{name}` argument must be a tuple of {n} positive integers. "
            f"Received: {name}={v!r}"
        )
    return v


def _padding(p, who):
    p = str(p).lower()
    if p not in ("valid", "same", "causal"):
        raise ValueError(
            f"{who}: the `padding` argument must be one of 'valid', 'same' (or 'causal' for "
            f"Conv1D). Received: padding={p!r}"
        )
    return p


def _data_format(df, who):
    df = df or "channels_last"
    if df not in ("channels_last", "channels_first"):
        raise ValueError(
            f"{who}: data_format must be 'channels_last' or 'channels_first', got {df!r}"
        )
    return df


def _same_pads(sizes, kernel, strides, dilation):
    """TensorFlow's 'same' padding: (before, after) per spatial axis, the extra one after."""
    pads = []
    for n, k, s, d in zip(sizes, kernel, strides, dilation, strict=True):
        out = -(-n // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
        pads.append((total // 2, total - total // 2))
    return pads


def _out_len(n, k, s, d, padding):
    if n is None:
        return None
    if padding == "same":
        return -(-n // s)
    if padding == "causal":
        return -(-n // s) if s == 1 else (n - 1) // s + 1
    eff = (k - 1) * d + 1
    return max(0, (n - eff) // s + 1)


def _to_cf(x, fmt):
    return (
        x
        if fmt == "channels_first"
        else _e.permute_dims(x, (0, x.ndim - 1) + tuple(range(1, x.ndim - 1)))
    )


def _from_cf(x, fmt):
    return (
        x if fmt == "channels_first" else _e.permute_dims(x, (0,) + tuple(range(2, x.ndim)) + (1,))
    )


def _pad_cf(x, pads, value=0.0):
    """Pads the spatial axes of a channels-first array: pads = [(lo, hi) per spatial axis]."""
    if not any(lo or hi for lo, hi in pads):
        return x
    spec = []
    for lo, hi in reversed(pads):
        spec += [lo, hi]
    return F.pad(x, tuple(spec), value=value)


class _Conv(Layer):
    rank = 2

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        groups=1,
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
        who = type(self).__name__
        if isinstance(filters, bool) or not isinstance(filters, int) or filters <= 0:
            raise ValueError(
                f"Invalid value for argument `filters`. Expected a strictly positive value. "
                f"Received filters={filters!r}."
            )
        self.filters = filters
        self.kernel_size = _tuple(kernel_size, self.rank, who, "kernel_size")
        self.strides = _tuple(strides, self.rank, who, "strides")
        self.padding = _padding(padding, who)
        if self.padding == "causal" and self.rank != 1:
            raise ValueError(f"{who}: padding='causal' is only for Conv1D")
        self.data_format = _data_format(data_format, who)
        self.dilation_rate = _tuple(dilation_rate, self.rank, who, "dilation_rate")
        if filters % groups:
            raise ValueError(
                f"The number of filters must be evenly divisible by the number of groups. "
                f"Received: groups={groups}, filters={filters}."
            )
        self.groups = groups
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint

    def _channels(self, input_shape):
        c = input_shape[1] if self.data_format == "channels_first" else input_shape[-1]
        if c is None:
            raise ValueError(f"{self.name}: the channel dimension of the inputs must be defined")
        return c

    def build(self, input_shape):
        if len(input_shape) != self.rank + 2:
            raise ValueError(
                f"Input 0 of layer {self.name!r} is incompatible with the layer: expected "
                f"ndim={self.rank + 2}, found ndim={len(input_shape)}. Full shape received: "
                f"{tuple(input_shape)}"
            )
        c = self._channels(input_shape)
        if c % self.groups:
            raise ValueError(
                f"The number of input channels must be evenly divisible by the number of groups. "
                f"Received groups={self.groups}, but the input has {c} channels"
            )
        shape = self.kernel_size + (c // self.groups, self.filters)
        self.kernel = self.add_weight(
            shape,
            self.kernel_initializer,
            name="kernel",
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                (self.filters,),
                self.bias_initializer,
                name="bias",
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )

    def call(self, inputs):
        x = _to_cf(inputs, self.data_format)
        sizes = tuple(x.shape[2:])
        pad = 0
        if self.padding == "same":
            pads = _same_pads(sizes, self.kernel_size, self.strides, self.dilation_rate)
            if all(lo == hi for lo, hi in pads):
                pad = tuple(lo for lo, _ in pads)  # symmetric: the convolution pads itself
            else:
                x = _pad_cf(x, pads)  # TensorFlow's extra pixel at the end
        elif self.padding == "causal":
            x = _pad_cf(x, [((self.kernel_size[0] - 1) * self.dilation_rate[0], 0)])
        # (*k, in, out) -> (out, in, *k)
        w = _e.permute_dims(self.kernel, (self.rank + 1, self.rank) + tuple(range(self.rank)))
        conv = (F.conv1d, F.conv2d, F.conv3d)[self.rank - 1]
        y = conv(
            x,
            w,
            self.bias,
            stride=self.strides,
            padding=pad,
            dilation=self.dilation_rate,
            groups=self.groups,
        )
        return self.activation(_from_cf(y, self.data_format))

    def compute_output_shape(self, input_shape):
        cf = self.data_format == "channels_first"
        sizes = input_shape[2:] if cf else input_shape[1:-1]
        out = tuple(
            _out_len(n, k, s, d, self.padding)
            for n, k, s, d in zip(
                sizes, self.kernel_size, self.strides, self.dilation_rate, strict=True
            )
        )
        if cf:
            return (input_shape[0], self.filters) + out
        return (input_shape[0],) + out + (self.filters,)

    def get_config(self):
        return {
            **super().get_config(),
            "filters": self.filters,
            "kernel_size": list(self.kernel_size),
            "strides": list(self.strides),
            "padding": self.padding,
            "data_format": self.data_format,
            "dilation_rate": list(self.dilation_rate),
            "groups": self.groups,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": _ser_init(self.kernel_initializer),
            "bias_initializer": _ser_init(self.bias_initializer),
            "kernel_regularizer": _ser_reg(self.kernel_regularizer),
            "bias_regularizer": _ser_reg(self.bias_regularizer),
        }


@register
class Conv1D(_Conv):
    """1-D convolution over ``(batch, steps, channels)``; kernel ``(k, in/groups, filters)``."""

    rank = 1


@register
class Conv2D(_Conv):
    """2-D convolution over ``(batch, rows, cols, channels)``; kernel
    ``(kh, kw, in/groups, filters)``."""

    rank = 2


class _Pool(Layer):
    rank = 2
    kind = "max"

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        who = type(self).__name__
        self.pool_size = _tuple(pool_size, self.rank, who, "pool_size")
        self.strides = (
            self.pool_size if strides is None else _tuple(strides, self.rank, who, "strides")
        )
        self.padding = _padding(padding, who)
        if self.padding == "causal":
            raise ValueError(f"{who}: padding must be 'valid' or 'same', got 'causal'")
        self.data_format = _data_format(data_format, who)

    def call(self, inputs):
        x = _to_cf(inputs, self.data_format)
        ones = (1,) * self.rank
        pads = (
            _same_pads(tuple(x.shape[2:]), self.pool_size, self.strides, ones)
            if self.padding == "same"
            else [(0, 0)] * self.rank
        )
        if self.kind == "max":
            xp = _pad_cf(x, pads, value=-math.inf)
            pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[self.rank - 1]
            y = pool(xp, self.pool_size, self.strides)
        else:
            pool = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[self.rank - 1]
            y = pool(_pad_cf(x, pads), self.pool_size, self.strides)
            if any(lo or hi for lo, hi in pads):
                # TensorFlow averages over the real pixels only
                mask = _e.ones((1, 1) + tuple(x.shape[2:]), dtype=x.dtype, device=x.device)
                y = y / pool(_pad_cf(mask, pads), self.pool_size, self.strides)
        return _from_cf(y, self.data_format)

    def compute_output_shape(self, input_shape):
        cf = self.data_format == "channels_first"
        sizes = input_shape[2:] if cf else input_shape[1:-1]
        out = tuple(
            _out_len(n, k, s, 1, self.padding)
            for n, k, s in zip(sizes, self.pool_size, self.strides, strict=True)
        )
        if cf:
            return (input_shape[0], input_shape[1]) + out
        return (input_shape[0],) + out + (input_shape[-1],)

    def get_config(self):
        return {
            **super().get_config(),
            "pool_size": list(self.pool_size),
            "strides": list(self.strides),
            "padding": self.padding,
            "data_format": self.data_format,
        }


@register
class Conv3D(_Conv):
    """3-D convolution over ``(batch, depth, rows, cols, channels)``; kernel
    ``(kd, kh, kw, in/groups, filters)``."""

    rank = 3


@register
class MaxPooling3D(_Pool):
    rank, kind = 3, "max"


@register
class AveragePooling3D(_Pool):
    rank, kind = 3, "avg"


@register
class MaxPooling2D(_Pool):
    rank, kind = 2, "max"


@register
class AveragePooling2D(_Pool):
    rank, kind = 2, "avg"


@register
class MaxPooling1D(_Pool):
    rank, kind = 1, "max"


@register
class AveragePooling1D(_Pool):
    rank, kind = 1, "avg"


MaxPool2D, AvgPool2D, MaxPool1D, AvgPool1D = (
    MaxPooling2D,
    AveragePooling2D,
    MaxPooling1D,
    (AveragePooling1D),
)


class _GlobalPool(Layer):
    rank = 2
    kind = "avg"

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _data_format(data_format, type(self).__name__)
        self.keepdims = bool(keepdims)

    def _axes(self, ndim):
        if self.data_format == "channels_first":
            return tuple(range(2, ndim))
        return tuple(range(1, ndim - 1))

    def call(self, inputs, mask=None):
        axes = self._axes(inputs.ndim)
        if mask is not None and self.rank == 1:
            # Keras: masked steps (padding) take no part in the pooling
            m = _e.expand_dims(mask, axis=1 if self.data_format == "channels_first" else -1)
            if self.kind == "avg":
                w = m.astype(inputs.dtype)
                total = _e.sum(inputs * w, axis=axes, keepdims=self.keepdims)
                return total / _e.maximum(_e.sum(w, axis=axes, keepdims=self.keepdims), 1.0)
            return _e.max(_e.where(m, inputs, -math.inf), axis=axes, keepdims=self.keepdims)
        if self.kind == "avg":
            return _e.mean(inputs, axis=axes, keepdims=self.keepdims)
        return _e.max(inputs, axis=axes, keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        axes = self._axes(len(input_shape))
        if self.keepdims:
            return tuple(1 if i in axes else s for i, s in enumerate(input_shape))
        return tuple(s for i, s in enumerate(input_shape) if i not in axes)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format, "keepdims": self.keepdims}


@register
class GlobalAveragePooling3D(_GlobalPool):
    rank, kind = 3, "avg"


@register
class GlobalMaxPooling3D(_GlobalPool):
    rank, kind = 3, "max"


@register
class GlobalAveragePooling2D(_GlobalPool):
    rank, kind = 2, "avg"


@register
class GlobalMaxPooling2D(_GlobalPool):
    rank, kind = 2, "max"


@register
class GlobalAveragePooling1D(_GlobalPool):
    rank, kind = 1, "avg"


@register
class GlobalMaxPooling1D(_GlobalPool):
    rank, kind = 1, "max"


class _ZeroPadding(Layer):
    rank = 2

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(**kwargs)
        who = type(self).__name__
        if isinstance(padding, int):
            pads = ((padding, padding),) * self.rank
        elif self.rank == 1 and len(padding) == 2 and all(isinstance(p, int) for p in padding):
            pads = (tuple(padding),)
        elif len(padding) == self.rank and all(isinstance(p, int) for p in padding):
            pads = tuple((p, p) for p in padding)
        elif len(padding) == self.rank:
            pads = tuple(tuple(p) for p in padding)
        else:
            raise ValueError(f"{who}: invalid padding {padding!r}")
        if any(len(p) != 2 or min(p) < 0 for p in pads):
            raise ValueError(f"{who}: padding values must be non-negative ints, got {padding!r}")
        self.padding = pads
        self.data_format = _data_format(data_format, who)

    def call(self, inputs):
        return _from_cf(
            _pad_cf(_to_cf(inputs, self.data_format), list(self.padding)), self.data_format
        )

    def compute_output_shape(self, input_shape):
        cf = self.data_format == "channels_first"
        shape = list(input_shape)
        first = 2 if cf else 1
        for i, (lo, hi) in enumerate(self.padding):
            if shape[first + i] is not None:
                shape[first + i] += lo + hi
        return tuple(shape)

    def get_config(self):
        return {
            **super().get_config(),
            "padding": [list(p) for p in self.padding],
            "data_format": self.data_format,
        }


@register
class ZeroPadding2D(_ZeroPadding):
    rank = 2


@register
class ZeroPadding1D(_ZeroPadding):
    rank = 1


# ---- normalization ------------------------------------------------------------------------------


def _axes_of(axis, ndim, who):
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"{who}: axis {a} is out of range for input of rank {ndim}")
        out.append(a % ndim)
    return sorted(out)


@register
class LayerNormalization(Layer):
    """``(x - mean) / sqrt(var + epsilon) * gamma + beta`` over `axis` (default -1, epsilon
    1e-3 as Keras)."""

    supports_masking = True

    def __init__(
        self,
        axis=-1,
        epsilon=1e-3,
        center=True,
        scale=True,
        rms_scaling=False,
        beta_initializer="zeros",
        gamma_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.axis = axis if isinstance(axis, int) else list(axis)
        self.epsilon = float(epsilon)
        self.center, self.scale, self.rms_scaling = bool(center), bool(scale), bool(rms_scaling)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)

    def build(self, input_shape):
        axes = _axes_of(self.axis, len(input_shape), self.name)
        shape = tuple(input_shape[a] for a in axes)
        self.gamma = self.beta = None
        if self.scale:
            self.gamma = self.add_weight(
                shape, self.gamma_initializer, name="gamma", regularizer=self.gamma_regularizer
            )
        if self.center and not self.rms_scaling:
            self.beta = self.add_weight(
                shape, self.beta_initializer, name="beta", regularizer=self.beta_regularizer
            )

    def _bshape(self, x, axes):
        return tuple(x.shape[i] if i in axes else 1 for i in range(x.ndim))

    def call(self, inputs):
        axes = _axes_of(self.axis, inputs.ndim, self.name)
        if self.rms_scaling:
            ms = _e.mean(inputs * inputs, axis=tuple(axes), keepdims=True)
            y = inputs / _e.sqrt(ms + self.epsilon)
        else:
            mean = _e.mean(inputs, axis=tuple(axes), keepdims=True)
            c = inputs - mean
            var = _e.mean(c * c, axis=tuple(axes), keepdims=True)
            y = c / _e.sqrt(var + self.epsilon)
        bs = self._bshape(inputs, axes)
        if self.gamma is not None:
            y = y * _e.reshape(self.gamma, bs)
        if self.beta is not None:
            y = y + _e.reshape(self.beta, bs)
        return y

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {
            **super().get_config(),
            "axis": self.axis,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            "rms_scaling": self.rms_scaling,
            "beta_initializer": _ser_init(self.beta_initializer),
            "gamma_initializer": _ser_init(self.gamma_initializer),
        }


@register
class BatchNormalization(Layer):
    """Keras's batch normalization: in training, the batch's mean and (biased) variance over all
    axes but `axis` normalize the inputs and update ``moving_* = moving_* * momentum + batch_* *
    (1 - momentum)``; in inference (and when ``trainable=False``) the moving statistics are
    used. Defaults: momentum 0.99, epsilon 1e-3."""

    supports_masking = True

    def __init__(
        self,
        axis=-1,
        momentum=0.99,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        moving_mean_initializer="zeros",
        moving_variance_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        synchronized=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.axis = int(axis)
        self.momentum, self.epsilon = float(momentum), float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)

    def build(self, input_shape):
        ax = _axes_of(self.axis, len(input_shape), self.name)[0]
        n = input_shape[ax]
        if n is None:
            raise ValueError(f"{self.name}: axis {self.axis} of the input shape must be defined")
        self.gamma = self.beta = None
        if self.scale:
            self.gamma = self.add_weight(
                (n,), self.gamma_initializer, name="gamma", regularizer=self.gamma_regularizer
            )
        if self.center:
            self.beta = self.add_weight(
                (n,), self.beta_initializer, name="beta", regularizer=self.beta_regularizer
            )
        self.moving_mean = self.add_weight(
            (n,), self.moving_mean_initializer, trainable=False, name="moving_mean"
        )
        self.moving_variance = self.add_weight(
            (n,), self.moving_variance_initializer, trainable=False, name="moving_variance"
        )

    def call(self, inputs, training=False):
        ax = _axes_of(self.axis, inputs.ndim, self.name)[0]
        red = tuple(i for i in range(inputs.ndim) if i != ax)
        bs = tuple(inputs.shape[i] if i == ax else 1 for i in range(inputs.ndim))
        if training and self.trainable:
            mean = _e.mean(inputs, axis=red, keepdims=True)
            c = inputs - mean
            var = _e.mean(c * c, axis=red, keepdims=True)
            with no_grad():
                m = self.momentum
                mm, mv = self.moving_mean, self.moving_variance
                mm *= m
                mm += (1.0 - m) * _e.reshape(mean.detach(), mm.shape)
                mv *= m
                mv += (1.0 - m) * _e.reshape(var.detach(), mv.shape)
            y = c / _e.sqrt(var + self.epsilon)
        else:
            mean = _e.reshape(self.moving_mean, bs)
            var = _e.reshape(self.moving_variance, bs)
            y = (inputs - mean) / _e.sqrt(var + self.epsilon)
        if self.gamma is not None:
            y = y * _e.reshape(self.gamma, bs)
        if self.beta is not None:
            y = y + _e.reshape(self.beta, bs)
        return y

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {
            **super().get_config(),
            "axis": self.axis,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            "beta_initializer": _ser_init(self.beta_initializer),
            "gamma_initializer": _ser_init(self.gamma_initializer),
            "moving_mean_initializer": _ser_init(self.moving_mean_initializer),
            "moving_variance_initializer": _ser_init(self.moving_variance_initializer),
        }
