"""Image layers of ember.nn beyond convolution: BatchNorm2d/3d, GroupNorm, InstanceNorm1d/2d,
Dropout2d, Upsample (their functions are in ``_functional_image.py``)."""

from __future__ import annotations

from .. import _core
from ._functional_image import dropout2d, group_norm, instance_norm, interpolate
from ._layers import BatchNorm1d
from ._module import Module
from ._parameter import Parameter

__all__ = [
    "BatchNorm2d",
    "BatchNorm3d",
    "Dropout2d",
    "GroupNorm",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "Upsample",
]


class BatchNorm2d(BatchNorm1d):
    """Batch normalization over (N, C, H, W) inputs (see BatchNorm1d)."""

    _ndims = (4,)


class BatchNorm3d(BatchNorm1d):
    """Batch normalization over (N, C, D, H, W) inputs (see BatchNorm1d)."""

    _ndims = (5,)


class GroupNorm(Module):
    """Group normalization (Wu and He) with a learned per-channel scale and shift."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(
                f"ember.nn.GroupNorm: {num_channels} channels are not divisible into "
                f"{num_groups} groups"
            )
        self.num_groups, self.num_channels, self.eps, self.affine = (
            num_groups,
            num_channels,
            eps,
            affine,
        )
        dt = dtype or "float32"
        self.weight = (
            Parameter(_core.ones((num_channels,), dtype=dt, device=device)) if affine else None
        )
        self.bias = (
            Parameter(_core.zeros((num_channels,), dtype=dt, device=device)) if affine else None
        )

    def forward(self, input):
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class _InstanceNorm(Module):
    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=False,
        track_running_stats=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        dt = dtype or "float32"
        self.weight = (
            Parameter(_core.ones((num_features,), dtype=dt, device=device)) if affine else None
        )
        self.bias = (
            Parameter(_core.zeros((num_features,), dtype=dt, device=device)) if affine else None
        )
        if track_running_stats:
            self.register_buffer(
                "running_mean", _core.zeros((num_features,), dtype=dt, device=device)
            )
            self.register_buffer(
                "running_var", _core.ones((num_features,), dtype=dt, device=device)
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)

    def forward(self, input):
        batched = input.ndim == self._dims + 2
        x = input if batched else input[None]
        use_stats = self.training or not self.track_running_stats
        y = instance_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            use_stats,
            self.momentum,
            self.eps,
        )
        return y if batched else y[0]

    def extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}"
        )


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization over (N, C, L)."""

    _dims = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over (N, C, H, W)."""

    _dims = 2


class Dropout2d(Module):
    """Channel dropout for (N, C, H, W) inputs."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        self.p = p

    def forward(self, input):
        return dropout2d(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"


class Upsample(Module):
    """Resizes inputs with ``interpolate``."""

    def __init__(
        self,
        size=None,
        scale_factor=None,
        mode="nearest",
        align_corners=None,
        recompute_scale_factor=None,
    ):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input):
        return interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            self.recompute_scale_factor,
        )

    def extra_repr(self):
        k = f"size={self.size}" if self.size is not None else f"scale_factor={self.scale_factor}"
        return f"{k}, mode={self.mode!r}"
