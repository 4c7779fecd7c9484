"""``F.interpolate`` (nearest, linear, bilinear, bicubic, ``align_corners``), ``F.group_norm``,
``F.instance_norm``, ``F.dropout2d`` (PyTorch's names and semantics), composed of differentiable
ember ops on either device."""

from __future__ import annotations

import math

from .. import _core
from ..amp import FLOAT32, cast_policy
from ._functional_checks import _F, _array


@cast_policy(FLOAT32)
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """Normalizes each group of channels of each sample over the group's channels and the
    spatial dimensions (biased variance), then scales and shifts per channel."""
    who = _F + "group_norm"
    _array(input, who)
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise ValueError(f"{who}: {c} channels are not divisible into {num_groups} groups")
    x = input.reshape((n, num_groups, -1))
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    y = ((x - mean) / _core.sqrt(var + eps)).reshape(input.shape)
    shape = (1, c) + (1,) * (input.ndim - 2)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def instance_norm(
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-5,
):
    """Normalizes each channel of each sample over its spatial dimensions."""
    who = _F + "instance_norm"
    _array(input, who)
    axes = tuple(range(2, input.ndim))
    shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
    if use_input_stats:
        mean = input.mean(axis=axes, keepdims=True)
        var = ((input - mean) ** 2).mean(axis=axes, keepdims=True)
        if running_mean is not None and running_var is not None:
            from ._grad_mode import no_grad

            with no_grad():
                m = mean.detach().mean(axis=0).reshape((-1,))
                cnt = math.prod(input.shape[2:])
                v = var.detach().mean(axis=0).reshape((-1,)) * (cnt / max(cnt - 1, 1))
                running_mean[...] = (1 - momentum) * running_mean + momentum * m
                running_var[...] = (1 - momentum) * running_var + momentum * v
    else:
        mean, var = running_mean.reshape(shape), running_var.reshape(shape)
    y = (input - mean) / _core.sqrt(var + eps)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def dropout2d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """Zeroes whole channels with probability `p` (the others scaled by 1 / (1 - p))."""
    who = _F + "dropout2d"
    _array(input, who)
    if not 0 <= p <= 1:
        raise ValueError(f"{who}: p must be in [0, 1], got {p}")
    if not training or p == 0:
        return input
    from .. import random

    shape = (
        input.shape[:2] + (1,) * (input.ndim - 2)
        if input.ndim == 4
        else (input.shape[0],) + (1,) * (input.ndim - 1)
    )
    keep = (random._global.random(shape, "float32", device=input.device) >= p).astype(input.dtype)
    return input * keep * (1.0 / (1.0 - p)) if p < 1 else input * 0


# ---- interpolation -----------------------------------------------------------------------------


def _source(out_n, in_n, scale, align_corners, mode):
    """Source coordinates of each output position along one dimension (PyTorch's rules)."""
    o = _core.arange(out_n, dtype="float64")
    if mode == "nearest":
        s = (in_n / out_n) if scale is None else 1.0 / scale
        return _core.minimum(_core.floor(o * s), in_n - 1).astype("int64")
    if align_corners:
        return o * ((in_n - 1) / (out_n - 1)) if out_n > 1 else o * 0.0
    s = (in_n / out_n) if scale is None else 1.0 / scale
    return (o + 0.5) * s - 0.5


def _cubic_weights(t, a=-0.75):
    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    """Resizes the spatial dimensions (PyTorch's ``interpolate``): nearest (1-3 d), linear,
    bilinear, bicubic; `align_corners` as PyTorch's."""
    who = _F + "interpolate"
    _array(input, who)
    nd = input.ndim - 2
    if nd < 1:
        raise ValueError(f"{who}: input must be (N, C, ...) with spatial dimensions")
    if mode not in ("nearest", "linear", "bilinear", "bicubic"):
        raise ValueError(f"{who}: mode must be nearest, linear, bilinear or bicubic, got {mode!r}")
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{who}: give exactly one of size and scale_factor")
    if mode == "nearest" and align_corners is not None:
        raise ValueError(f"{who}: align_corners works with the linear modes only")
    spatial = input.shape[2:]
    if size is not None:
        out = (size,) * nd if isinstance(size, int) else tuple(size)
        scales = (None,) * nd
    else:
        sf = (scale_factor,) * nd if isinstance(scale_factor, (int, float)) else tuple(scale_factor)
        out = tuple(int(math.floor(spatial[i] * sf[i])) for i in range(nd))
        scales = sf if not recompute_scale_factor else (None,) * nd
    x = input
    for i in range(nd):
        dim = 2 + i
        n_in, n_out = spatial[i], out[i]
        src = _source(
            n_out,
            n_in,
            scales[i],
            bool(align_corners),
            "nearest" if mode == "nearest" else "linear",
        )
        if mode == "nearest":
            x = _core._take_in_range(x, src.to(x.device), axis=dim)
            continue
        shape = [1] * x.ndim
        shape[dim] = n_out
        if mode == "bicubic":
            f = _core.floor(src)
            t = (src - f).astype(x.dtype).to(x.device).reshape(tuple(shape))
            acc = None
            for j, w in enumerate(_cubic_weights(t)):
                idx = _core.clip(f.astype("int64") - 1 + j, 0, n_in - 1).to(x.device)
                term = _core._take_in_range(x, idx, axis=dim) * w
                acc = term if acc is None else acc + term
            x = acc
        else:
            src = _core.maximum(src, 0.0)
            lo = _core.minimum(_core.floor(src).astype("int64"), n_in - 1)
            hi = _core.minimum(lo + 1, n_in - 1)
            t = (src - lo.astype("float64")).astype(x.dtype).to(x.device).reshape(tuple(shape))
            x = (
                _core._take_in_range(x, lo.to(x.device), axis=dim) * (1 - t)
                + _core._take_in_range(x, hi.to(x.device), axis=dim) * t
            )
    return x
