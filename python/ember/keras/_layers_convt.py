"""ember.keras's transposed, depthwise and separable convolutions: Conv1DTranspose,
Conv2DTranspose, DepthwiseConv1D/2D, SeparableConv1D/2D, with Keras 3's kernel layouts:

- transposed: ``(*kernel_size, filters, in)``, output size Keras's ``deconv_output_length``;
  computed as ember's full transposed convolution (the adjoint of the convolution) cropped to
  TensorFlow's padding of the forward convolution ("same": the extra pixel at the end);
- depthwise: ``kernel`` ``(*kernel_size, in, depth_multiplier)``; output channel
  ``c * depth_multiplier + j`` (TensorFlow's order), run as a grouped convolution;
- separable: ``depthwise_kernel`` ``(*kernel_size, in, depth_multiplier)``, then
  ``pointwise_kernel`` ``(*1, in * depth_multiplier, filters)``, then ``bias``.
"""

from __future__ import annotations

import ember as _e

from ..nn import functional as F
from . import activations, constraints, initializers, regularizers
from ._layer import Layer, register
from ._layers_conv import _data_format, _from_cf, _out_len, _pad_cf, _same_pads, _to_cf, _tuple
from ._layers_core import _ser_init, _ser_reg

__all__ = [
    "Conv1DTranspose",
    "Conv2DTranspose",
    "DepthwiseConv1D",
    "DepthwiseConv2D",
    "SeparableConv1D",
    "SeparableConv2D",
]


def _padding2(p, who):
    p = str(p).lower()
    if p not in ("valid", "same"):
        raise ValueError(
            f"{who}: the `padding` argument must be 'valid' or 'same'. Received: padding={p!r}"
        )
    return p


def _positive(v, who, name):
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ValueError(
            f"Invalid value for argument `{name}`. Expected a strictly positive value. "
            f"Received {name}={v!r} ({who})."
        )
    return v


def conv_cf(x, w, bias, strides, padding, dilation, groups):
    """Convolution of channels-first `x` with ember's weight ``(out, in/groups, *k)`` and
    TensorFlow's padding."""
    rank = x.ndim - 2
    k = tuple(w.shape[2:])
    pad = 0
    if padding == "same":
        pads = _same_pads(tuple(x.shape[2:]), k, strides, dilation)
        if all(lo == hi for lo, hi in pads):
            pad = tuple(lo for lo, _ in pads)
        else:
            x = _pad_cf(x, pads)
    conv = F.conv1d if rank == 1 else F.conv2d
    return conv(x, w, bias, stride=strides, padding=pad, dilation=dilation, groups=groups)


def deconv_length(n, k, s, d, padding, output_padding):
    """Keras's ``deconv_output_length``."""
    if n is None:
        return None
    k = k + (k - 1) * (d - 1)
    if output_padding is None:
        return n * s + max(k - s, 0) if padding == "valid" else n * s
    pad = k // 2 if padding == "same" else 0
    return (n - 1) * s + k - 2 * pad + output_padding


class _ConvCommon(Layer):
    rank = 2

    def _weight_options(self, **specs):
        """``self.<name>_initializer/_regularizer/_constraint`` from each (initializer,
        regularizer, constraint) triple, resolved as Keras resolves them."""
        for name, (ini, reg, con) in specs.items():
            setattr(self, f"{name}_initializer", initializers.get(ini))
            setattr(self, f"{name}_regularizer", regularizers.get(reg))
            setattr(self, f"{name}_constraint", constraints.get(con))

    def _common(self, kernel_size, strides, padding, data_format, dilation_rate, activation, bias):
        who = type(self).__name__
        self.kernel_size = _tuple(kernel_size, self.rank, who, "kernel_size")
        self.strides = _tuple(strides, self.rank, who, "strides")
        self.padding = _padding2(padding, who)
        self.data_format = _data_format(data_format, who)
        self.dilation_rate = _tuple(dilation_rate, self.rank, who, "dilation_rate")
        self.activation = activations.get(activation)
        self.use_bias = bool(bias)

    def _channels(self, input_shape):
        if len(input_shape) != self.rank + 2:
            raise ValueError(
                f"Input 0 of layer {self.name!r} is incompatible with the layer: expected "
                f"ndim={self.rank + 2}, found ndim={len(input_shape)}. Full shape received: "
                f"{tuple(input_shape)}"
            )
        c = input_shape[1] if self.data_format == "channels_first" else input_shape[-1]
        if c is None:
            raise ValueError(f"{self.name}: the channel dimension of the inputs must be defined")
        return c

    def _bias(self, n, initializer, regularizer, constraint):
        if not self.use_bias:
            return None
        return self.add_weight(
            (n,), initializer, name="bias", regularizer=regularizer, constraint=constraint
        )

    def _spatial_out(self, sizes):
        return tuple(
            _out_len(n, k, s, d, self.padding)
            for n, k, s, d in zip(
                sizes, self.kernel_size, self.strides, self.dilation_rate, strict=True
            )
        )

    def _shape_with(self, input_shape, sizes, channels):
        if self.data_format == "channels_first":
            return (input_shape[0], channels) + tuple(sizes)
        return (input_shape[0],) + tuple(sizes) + (channels,)

    def _sizes(self, input_shape):
        cf = self.data_format == "channels_first"
        return tuple(input_shape[2:] if cf else input_shape[1:-1])

    def _base_config(self):
        return {
            **super().get_config(),
            "kernel_size": list(self.kernel_size),
            "strides": list(self.strides),
            "padding": self.padding,
            "data_format": self.data_format,
            "dilation_rate": list(self.dilation_rate),
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
        }


# ---- transposed ----------------------------------------------------------------------------------


class _ConvTranspose(_ConvCommon):
    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        output_padding=None,
        data_format=None,
        dilation_rate=1,
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
        self.filters = _positive(filters, who, "filters")
        self._common(
            kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias
        )
        if output_padding is None:
            self.output_padding = None
        else:
            op = (
                (output_padding,) * self.rank if isinstance(output_padding, int) else output_padding
            )
            op = tuple(int(p) for p in op)
            if len(op) != self.rank or any(p < 0 for p in op):
                raise ValueError(
                    f"{who}: `output_padding` must be a non-negative int or a tuple of "
                    f"{self.rank}. Received: output_padding={output_padding!r}"
                )
            for s, p in zip(self.strides, op, strict=True):
                if p >= s:
                    raise ValueError(
                        f"{who}: strides must be greater than output padding. Received "
                        f"strides={self.strides}, output_padding={op}"
                    )
            self.output_padding = op
        self._weight_options(
            kernel=(kernel_initializer, kernel_regularizer, kernel_constraint),
            bias=(bias_initializer, bias_regularizer, bias_constraint),
        )

    def build(self, input_shape):
        c = self._channels(input_shape)
        self.kernel = self.add_weight(
            self.kernel_size + (self.filters, c),
            self.kernel_initializer,
            name="kernel",
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.bias = self._bias(
            self.filters, self.bias_initializer, self.bias_regularizer, self.bias_constraint
        )

    def _out_sizes(self, sizes):
        ops = self.output_padding or (None,) * self.rank
        return tuple(
            deconv_length(n, k, s, d, self.padding, op)
            for n, k, s, d, op in zip(
                sizes, self.kernel_size, self.strides, self.dilation_rate, ops, strict=True
            )
        )

    def call(self, inputs):
        x = _to_cf(inputs, self.data_format)
        sizes = tuple(x.shape[2:])
        outs = self._out_sizes(sizes)
        # (*k, out, in) -> ember's (in, out, *k)
        r = self.rank
        w = _e.permute_dims(self.kernel, (r + 1, r) + tuple(range(r)))
        tconv = F.conv_transpose1d if r == 1 else F.conv_transpose2d
        y = tconv(x, w, None, stride=self.strides, dilation=self.dilation_rate)
        # the forward convolution of an output of size `outs` pads it by `before` (TensorFlow's
        # rule); the adjoint is the full result cropped (or zero-extended) to that window
        crop = []
        for i in range(r):
            k_eff = (self.kernel_size[i] - 1) * self.dilation_rate[i] + 1
            if self.padding == "same":
                total = max((sizes[i] - 1) * self.strides[i] + k_eff - outs[i], 0)
                before = total // 2
            else:
                before = 0
            full = y.shape[2 + i]
            crop.append((before, outs[i], full))
        if any(after > full - before for before, after, full in crop):
            y = _pad_cf(y, [(0, max(0, b + n - f)) for b, n, f in crop])
        index = (slice(None), slice(None)) + tuple(slice(b, b + n) for b, n, _ in crop)
        y = y[index]
        if self.bias is not None:
            y = y + self.bias.reshape((1, -1) + (1,) * r)
        return self.activation(_from_cf(y, self.data_format))

    def compute_output_shape(self, input_shape):
        self._channels(input_shape)
        return self._shape_with(
            input_shape, self._out_sizes(self._sizes(input_shape)), self.filters
        )

    def get_config(self):
        return {
            **self._base_config(),
            "filters": self.filters,
            "output_padding": None if self.output_padding is None else list(self.output_padding),
            "kernel_initializer": _ser_init(self.kernel_initializer),
            "bias_initializer": _ser_init(self.bias_initializer),
            "kernel_regularizer": _ser_reg(self.kernel_regularizer),
            "bias_regularizer": _ser_reg(self.bias_regularizer),
        }


@register
class Conv2DTranspose(_ConvTranspose):
    """Transposed 2-D convolution; kernel ``(kh, kw, filters, in)`` (Keras's)."""

    rank = 2


@register
class Conv1DTranspose(_ConvTranspose):
    """Transposed 1-D convolution; kernel ``(k, filters, in)`` (Keras's)."""

    rank = 1


# ---- depthwise -----------------------------------------------------------------------------------


def _depthwise_weight(kernel, rank):
    """Keras's ``(*k, in, m)`` -> ember's grouped ``(in * m, 1, *k)`` (channel c*m + j)."""
    k = tuple(kernel.shape[:rank])
    c, m = kernel.shape[rank], kernel.shape[rank + 1]
    w = kernel.reshape(k + (c * m,))
    w = _e.permute_dims(w, (rank,) + tuple(range(rank)))
    return w.reshape((c * m, 1) + k)


class _DepthwiseConv(_ConvCommon):
    def __init__(
        self,
        kernel_size,
        strides=1,
        padding="valid",
        depth_multiplier=1,
        data_format=None,
        dilation_rate=1,
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        depthwise_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        depthwise_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        who = type(self).__name__
        self.depth_multiplier = _positive(depth_multiplier, who, "depth_multiplier")
        self._common(
            kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias
        )
        self._weight_options(
            depthwise=(depthwise_initializer, depthwise_regularizer, depthwise_constraint),
            bias=(bias_initializer, bias_regularizer, bias_constraint),
        )

    def build(self, input_shape):
        c = self._channels(input_shape)
        self.kernel = self.add_weight(
            self.kernel_size + (c, self.depth_multiplier),
            self.depthwise_initializer,
            name="kernel",
            regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint,
        )
        self.bias = self._bias(
            c * self.depth_multiplier,
            self.bias_initializer,
            self.bias_regularizer,
            self.bias_constraint,
        )

    def call(self, inputs):
        x = _to_cf(inputs, self.data_format)
        w = _depthwise_weight(self.kernel, self.rank)
        y = conv_cf(x, w, self.bias, self.strides, self.padding, self.dilation_rate, x.shape[1])
        return self.activation(_from_cf(y, self.data_format))

    def compute_output_shape(self, input_shape):
        c = self._channels(input_shape)
        out = self._spatial_out(self._sizes(input_shape))
        return self._shape_with(input_shape, out, c * self.depth_multiplier)

    def get_config(self):
        return {
            **self._base_config(),
            "depth_multiplier": self.depth_multiplier,
            "depthwise_initializer": _ser_init(self.depthwise_initializer),
            "bias_initializer": _ser_init(self.bias_initializer),
            "depthwise_regularizer": _ser_reg(self.depthwise_regularizer),
            "bias_regularizer": _ser_reg(self.bias_regularizer),
        }


@register
class DepthwiseConv2D(_DepthwiseConv):
    """Depthwise 2-D convolution; ``kernel`` ``(kh, kw, in, depth_multiplier)``."""

    rank = 2


@register
class DepthwiseConv1D(_DepthwiseConv):
    """Depthwise 1-D convolution; ``kernel`` ``(k, in, depth_multiplier)``."""

    rank = 1


# ---- separable -----------------------------------------------------------------------------------


class _SeparableConv(_ConvCommon):
    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        depth_multiplier=1,
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        pointwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        depthwise_regularizer=None,
        pointwise_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        depthwise_constraint=None,
        pointwise_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        who = type(self).__name__
        self.filters = _positive(filters, who, "filters")
        self.depth_multiplier = _positive(depth_multiplier, who, "depth_multiplier")
        self._common(
            kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias
        )
        self._weight_options(
            depthwise=(depthwise_initializer, depthwise_regularizer, depthwise_constraint),
            pointwise=(pointwise_initializer, pointwise_regularizer, pointwise_constraint),
            bias=(bias_initializer, bias_regularizer, bias_constraint),
        )

    def build(self, input_shape):
        c = self._channels(input_shape)
        m = self.depth_multiplier
        self.depthwise_kernel = self.add_weight(
            self.kernel_size + (c, m),
            self.depthwise_initializer,
            name="depthwise_kernel",
            regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint,
        )
        self.pointwise_kernel = self.add_weight(
            (1,) * self.rank + (c * m, self.filters),
            self.pointwise_initializer,
            name="pointwise_kernel",
            regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint,
        )
        self.bias = self._bias(
            self.filters, self.bias_initializer, self.bias_regularizer, self.bias_constraint
        )

    def call(self, inputs):
        x = _to_cf(inputs, self.data_format)
        dw = _depthwise_weight(self.depthwise_kernel, self.rank)
        y = conv_cf(x, dw, None, self.strides, self.padding, self.dilation_rate, x.shape[1])
        r = self.rank
        pw = _e.permute_dims(self.pointwise_kernel, (r + 1, r) + tuple(range(r)))
        y = conv_cf(y, pw, self.bias, (1,) * r, "valid", (1,) * r, 1)
        return self.activation(_from_cf(y, self.data_format))

    def compute_output_shape(self, input_shape):
        self._channels(input_shape)
        out = self._spatial_out(self._sizes(input_shape))
        return self._shape_with(input_shape, out, self.filters)

    def get_config(self):
        return {
            **self._base_config(),
            "filters": self.filters,
            "depth_multiplier": self.depth_multiplier,
            "depthwise_initializer": _ser_init(self.depthwise_initializer),
            "pointwise_initializer": _ser_init(self.pointwise_initializer),
            "bias_initializer": _ser_init(self.bias_initializer),
            "depthwise_regularizer": _ser_reg(self.depthwise_regularizer),
            "pointwise_regularizer": _ser_reg(self.pointwise_regularizer),
            "bias_regularizer": _ser_reg(self.bias_regularizer),
        }


@register
class SeparableConv2D(_SeparableConv):
    """Depthwise then pointwise 2-D convolution (Keras's weights: depthwise_kernel,
    pointwise_kernel, bias)."""

    rank = 2


@register
class SeparableConv1D(_SeparableConv):
    """Depthwise then pointwise 1-D convolution."""

    rank = 1
