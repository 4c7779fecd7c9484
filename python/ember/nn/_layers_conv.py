"""Convolution and pooling modules of ember.nn (PyTorch's names, parameters, initialization):
Conv1d/2d/3d, ConvTranspose1d/2d, MaxPool1d/2d/3d, AvgPool1d/2d, AdaptiveAvgPool1d/2d,
AdaptiveMaxPool2d, PixelShuffle."""

from __future__ import annotations

import math

from . import _functional_conv as FC  # noqa: N812
from ._module import Module
from ._parameter import Parameter

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveMaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "PixelShuffle",
]


def _uniform(shape, bound, dtype, device):
    from .. import random

    w = random._global.uniform(-bound, bound, shape, dtype=dtype or "float32", device=device)
    return Parameter(w)


class _ConvNd(Module):
    _nd = 2
    _transposed = False

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        output_padding=0,
        device=None,
        dtype=None,
    ):
        super().__init__()
        who = f"ember.nn.{type(self).__name__}"
        nd = self._nd
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{who}: in_channels and out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(
                f"{who}: padding_mode must be zeros, reflect, replicate or circular, got "
                f"{padding_mode!r}"
            )
        k = FC._tuple(kernel_size, nd, who, "kernel_size")
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, k
        self.stride = FC._tuple(stride, nd, who, "stride")
        self.padding = (
            padding if isinstance(padding, str) else FC._tuple(padding, nd, who, "padding")
        )
        self.dilation = FC._tuple(dilation, nd, who, "dilation")
        self.output_padding = FC._tuple(output_padding, nd, who, "output_padding")
        self.groups, self.padding_mode = groups, padding_mode
        if self._transposed:
            shape = (in_channels, out_channels // groups) + k
            fan_in = (out_channels // groups) * math.prod(k)
        else:
            shape = (out_channels, in_channels // groups) + k
            fan_in = (in_channels // groups) * math.prod(k)
        # kaiming_uniform(a=sqrt(5)) as PyTorch: bound = 1 / sqrt(fan_in), for weight and bias
        bound = 1.0 / math.sqrt(fan_in) if fan_in else 0.0
        self.weight = _uniform(shape, bound, dtype, device)
        self.bias = _uniform((out_channels,), bound, dtype, device) if bias else None

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}"
        s += f", stride={self.stride}"
        if self.padding != (0,) * self._nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._nd:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s

    def forward(self, input):
        nd = self._nd
        if self._transposed:
            f = (FC.conv_transpose1d, FC.conv_transpose2d, FC.conv_transpose3d)[nd - 1]
            return f(
                input,
                self.weight,
                self.bias,
                self.stride,
                self.padding,
                self.output_padding,
                self.groups,
                self.dilation,
            )
        conv = (FC.conv1d, FC.conv2d, FC.conv3d)[nd - 1]
        if self.padding_mode != "zeros" and not isinstance(self.padding, str):
            pads = [v for i in reversed(range(nd)) for v in (self.padding[i], self.padding[i])]
            x = FC.pad(input, pads, mode=self.padding_mode)
            return conv(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return conv(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )


class Conv1d(_ConvNd):
    """1-d convolution over (N, C, L)."""

    _nd = 1


class Conv2d(_ConvNd):
    """2-d convolution over (N, C, H, W)."""

    _nd = 2


class Conv3d(_ConvNd):
    """3-d convolution over (N, C, D, H, W)."""

    _nd = 3


class ConvTranspose1d(_ConvNd):
    """Transposed 1-d convolution."""

    _nd = 1
    _transposed = True

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups=1,
        bias=True,
        dilation=1,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            output_padding,
            device,
            dtype,
        )


class ConvTranspose2d(ConvTranspose1d):
    """Transposed 2-d convolution."""

    _nd = 2


class ConvTranspose3d(ConvTranspose1d):
    """Transposed 3-d convolution."""

    _nd = 3


class _Pool(Module):
    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        return_indices=False,
        ceil_mode=False,
        count_include_pad=True,
    ):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode
        self.count_include_pad = count_include_pad

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool1d(_Pool):
    """Max over windows of the last dimension."""

    def forward(self, input):
        return FC.max_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.ceil_mode,
            self.return_indices,
        )


class MaxPool2d(_Pool):
    """Max over windows of the last two dimensions."""

    def forward(self, input):
        return FC.max_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.ceil_mode,
            self.return_indices,
        )


class MaxPool3d(_Pool):
    """Max over windows of the last three dimensions."""

    def forward(self, input):
        return FC.max_pool3d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.ceil_mode,
            self.return_indices,
        )


class AvgPool1d(Module):
    """Mean over windows of the last dimension."""

    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True
    ):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return FC.avg_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )


class AvgPool2d(AvgPool1d):
    """Mean over windows of the last two dimensions."""

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode=False,
        count_include_pad=True,
        divisor_override=None,
    ):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)
        self.divisor_override = divisor_override

    def forward(self, input):
        return FC.avg_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


class AdaptiveAvgPool1d(Module):
    """Means over `output_size` adaptive windows."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return FC.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(AdaptiveAvgPool1d):
    """Means over adaptive windows of the last two dimensions."""

    def forward(self, input):
        return FC.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveMaxPool2d(AdaptiveAvgPool1d):
    """Maxima over adaptive windows of the last two dimensions."""

    def forward(self, input):
        return FC.adaptive_max_pool2d(input, self.output_size)


class PixelShuffle(Module):
    """(N, C r^2, H, W) -> (N, C, H r, W r)."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return FC.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"
