"""The modules of ``_functional_more.py`` and a few wrappers of existing functions: Hardshrink,
Softshrink, Softsign, Tanhshrink, RReLU, GLU, Softmax2d, AlphaDropout, FeatureAlphaDropout,
LocalResponseNorm, ChannelShuffle, PixelUnshuffle, Fold, Unfold, the Zero/Constant/Reflection/
Replication/Circular pads (1-3 d), AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, LPPool1d/2d,
MaxUnpool1d/2d and the losses MultiLabelSoftMarginLoss, MultiMarginLoss, SoftMarginLoss,
HingeEmbeddingLoss (PyTorch's names, arguments and defaults)."""

from __future__ import annotations

from . import _functional_more as FM  # noqa: N812
from ._functional_activation import softmax
from ._functional_conv import _tuple, fold, pad, unfold
from ._functional_sample import glu
from ._layers_extra import _simple
from ._loss import _Loss
from ._module import Module

Hardshrink = _simple("Hardshrink", FM.hardshrink, "``x`` where |x| > lambd, else 0.", lambd=0.5)
Softshrink = _simple("Softshrink", FM.softshrink, "Shrinks x towards 0 by lambd.", lambd=0.5)
Softsign = _simple("Softsign", FM.softsign, "``x / (1 + |x|)``.")
Tanhshrink = _simple("Tanhshrink", FM.tanhshrink, "``x - tanh(x)``.")
GLU = _simple("GLU", glu, "``a * sigmoid(b)`` of the halves of the input along `dim`.", dim=-1)
ChannelShuffle = _simple("ChannelShuffle", FM.channel_shuffle,
                         "Interleaves the channels of `groups` groups.", groups=1)  # fmt: skip
PixelUnshuffle = _simple("PixelUnshuffle", FM.pixel_unshuffle,
                         "(*, C, H r, W r) -> (*, C r^2, H, W).", downscale_factor=1)  # fmt: skip
LocalResponseNorm = _simple("LocalResponseNorm", FM.local_response_norm,
                            "Normalizes by the mean square over neighbouring channels.",
                            size=1, alpha=1e-4, beta=0.75, k=1.0)  # fmt: skip
AdaptiveAvgPool3d = _simple("AdaptiveAvgPool3d", FM.adaptive_avg_pool3d,
                            "Means over adaptive windows of the last three dimensions.",
                            output_size=1)  # fmt: skip
AdaptiveMaxPool1d = _simple("AdaptiveMaxPool1d", FM.adaptive_max_pool1d,
                            "Maxima over adaptive windows of the last dimension.",
                            output_size=1, return_indices=False)  # fmt: skip
Unfold = _simple("Unfold", unfold, "Sliding blocks of the input as columns (``F.unfold``).",
                 kernel_size=1, dilation=1, padding=0, stride=1)  # fmt: skip
Fold = _simple("Fold", fold, "Columns summed back into an image (``F.fold``).", output_size=1,
               kernel_size=1, dilation=1, padding=0, stride=1)  # fmt: skip


class Softmax2d(Module):
    """``softmax`` over the channels of a (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):  # noqa: A002
        if input.ndim not in (3, 4):
            raise ValueError(
                f"ember.nn.Softmax2d: Softmax2d requires a 3D or 4D tensor as input, got "
                f"{input.ndim}-d"
            )
        return softmax(input, -3)


class RReLU(Module):
    """Randomized leaky ReLU (``F.rrelu``): random slopes in training, the mean in eval."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):  # noqa: A002
        return FM.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}"


class AlphaDropout(Module):
    """``F.alpha_dropout`` while training."""

    _fn = staticmethod(FM.alpha_dropout)

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(
                f"ember.nn.{type(self).__name__}: dropout probability has to be between 0 and "
                f"1, but got {p}"
            )
        self.p, self.inplace = p, inplace

    def forward(self, input):  # noqa: A002
        return self._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class FeatureAlphaDropout(AlphaDropout):
    """``F.feature_alpha_dropout`` while training."""

    _fn = staticmethod(FM.feature_alpha_dropout)


# ---- padding -----------------------------------------------------------------------------------


def _pad_class(name, nd, mode, with_value):
    doc = f"``F.pad`` of the last {nd} dimension(s), mode {mode!r}."

    def __init__(self, padding, value=0.0):
        Module.__init__(self)
        self.padding = _tuple(padding, 2 * nd, f"ember.nn.{name}", "padding")
        self.value = value

    def init_value(self, padding, value):
        __init__(self, padding, value)

    def init_plain(self, padding):
        __init__(self, padding, 0.0)

    def forward(self, input):  # noqa: A002
        if input.ndim not in (nd + 1, nd + 2):
            raise ValueError(f"ember.nn.{name}: expected {nd + 1}D or {nd + 2}D input, got "
                             f"{input.ndim}D")  # fmt: skip
        if mode == "constant":
            return pad(input, list(self.padding), "constant", self.value)
        return pad(input, list(self.padding), mode)

    def extra_repr(self):
        return f"{self.padding}" + (f", value={self.value}" if with_value else "")

    return type(name, (Module,), {"__init__": init_value if with_value else init_plain,
                                  "forward": forward, "extra_repr": extra_repr,
                                  "__doc__": doc})  # fmt: skip


ZeroPad1d = _pad_class("ZeroPad1d", 1, "constant", False)
ZeroPad2d = _pad_class("ZeroPad2d", 2, "constant", False)
ZeroPad3d = _pad_class("ZeroPad3d", 3, "constant", False)
ConstantPad1d = _pad_class("ConstantPad1d", 1, "constant", True)
ConstantPad2d = _pad_class("ConstantPad2d", 2, "constant", True)
ConstantPad3d = _pad_class("ConstantPad3d", 3, "constant", True)
ReflectionPad1d = _pad_class("ReflectionPad1d", 1, "reflect", False)
ReflectionPad2d = _pad_class("ReflectionPad2d", 2, "reflect", False)
ReflectionPad3d = _pad_class("ReflectionPad3d", 3, "reflect", False)
ReplicationPad1d = _pad_class("ReplicationPad1d", 1, "replicate", False)
ReplicationPad2d = _pad_class("ReplicationPad2d", 2, "replicate", False)
ReplicationPad3d = _pad_class("ReplicationPad3d", 3, "replicate", False)
CircularPad1d = _pad_class("CircularPad1d", 1, "circular", False)
CircularPad2d = _pad_class("CircularPad2d", 2, "circular", False)
CircularPad3d = _pad_class("CircularPad3d", 3, "circular", False)


# ---- pools -------------------------------------------------------------------------------------


class AvgPool3d(Module):
    """Mean over sliding windows of the last three dimensions (``F.avg_pool3d``)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):  # fmt: skip
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):  # noqa: A002
        return FM.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                             self.count_include_pad, self.divisor_override)  # fmt: skip

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _LPPool(Module):
    _fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input):  # noqa: A002
        return self._fn(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")  # fmt: skip


class LPPool1d(_LPPool):
    """``(sum of x^p over each window)^(1 / p)`` along the last dimension."""

    _fn = staticmethod(FM.lp_pool1d)


class LPPool2d(_LPPool):
    """``(sum of x^p over each window)^(1 / p)`` over the last two dimensions."""

    _fn = staticmethod(FM.lp_pool2d)


class _MaxUnpool(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding = padding

    def forward(self, input, indices, output_size=None):  # noqa: A002
        return self._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpool):
    """The inverse of ``MaxPool1d`` (with its ``return_indices``)."""

    _fn = staticmethod(FM.max_unpool1d)


class MaxUnpool2d(_MaxUnpool):
    """The inverse of ``MaxPool2d`` (with its ``return_indices``)."""

    _fn = staticmethod(FM.max_unpool2d)


# ---- losses ------------------------------------------------------------------------------------


class SoftMarginLoss(_Loss):
    """``log(1 + exp(-y x))``."""

    def forward(self, input, target):  # noqa: A002
        return FM.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """Multi-label one-versus-all logistic loss (``F.multilabel_soft_margin_loss``)."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def forward(self, input, target):  # noqa: A002
        return FM.multilabel_soft_margin_loss(input, target, self.weight,
                                              reduction=self.reduction)  # fmt: skip


class MultiMarginLoss(_Loss):
    """Multi-class hinge loss (``F.multi_margin_loss``)."""

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError(f"ember.nn.MultiMarginLoss: only p == 1 and p == 2 supported, got {p}")
        self.p, self.margin = p, margin
        self.register_buffer("weight", weight)

    def forward(self, input, target):  # noqa: A002
        return FM.multi_margin_loss(input, target, self.p, self.margin, self.weight,
                                    reduction=self.reduction)  # fmt: skip


class HingeEmbeddingLoss(_Loss):
    """``x`` where target is 1, ``max(0, margin - x)`` where it is -1."""

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):  # noqa: A002
        return FM.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)
