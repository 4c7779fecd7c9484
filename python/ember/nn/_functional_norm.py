"""ember.nn.functional's normalizations: layer_norm, rms_norm and batch_norm."""

from __future__ import annotations

from .. import _core
from .._dtypes import finfo
from ..amp import FLOAT32, cast_policy
from ._batchnorm_fused import batch_norm_train, update_running
from ._functional_checks import (
    _F,
    _array,
    _float_input,
    _fused_ok,
    _half,
    _real,
    _shape_tuple,
)
from ._grad_mode import detach, no_grad


def _trailing_axes(input, normalized_shape, who):
    ns = _shape_tuple(normalized_shape, who, "normalized_shape")
    if not ns:
        raise ValueError(f"{who}: normalized_shape must have at least one dimension")
    if input.ndim < len(ns) or tuple(input.shape[input.ndim - len(ns) :]) != ns:
        raise ValueError(
            f"{who}: input shape {input.shape} does not end with normalized_shape {ns}"
        )
    return ns, tuple(range(input.ndim - len(ns), input.ndim))


def _check_affine(p, ns, who, name):
    if p is not None:
        _array(p, who, name)
        if tuple(p.shape) != ns:
            raise ValueError(f"{who}: {name} shape {p.shape} differs from normalized_shape {ns}")


# ---------------------------------------------------------------------------------------------
# layer_norm: a fused row kernel, and the composed path for what it does not take
# ---------------------------------------------------------------------------------------------


@cast_policy(FLOAT32)
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the trailing `normalized_shape`
    dimensions (biased variance)."""
    who = _F + "layer_norm"
    _float_input(input, who)
    ns, axes = _trailing_axes(input, normalized_shape, who)
    _check_affine(weight, ns, who, "weight")
    _check_affine(bias, ns, who, "bias")
    eps = _real(eps, who, "eps")
    if _fused_ok(input) and all(p is None or p.dtype == input.dtype for p in (weight, bias)):
        # one kernel per row (mean, rstd and the affine map); weight/bias of another dtype
        # promote the result, so they take the composed path
        return _core._layer_norm(input, len(ns), weight, bias, eps)
    half = _half(input)
    x = input.astype(_core.float32) if half else input
    d = x - x.mean(axis=axes, keepdims=True)
    var = (d * d).mean(axis=axes, keepdims=True)
    y = d / _core.sqrt(var + eps)
    if half:
        y = y.astype(input.dtype)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x^2) + eps) * weight`` over the trailing `normalized_shape` dimensions;
    `eps` defaults to the dtype's machine epsilon (as PyTorch)."""
    who = _F + "rms_norm"
    _float_input(input, who)
    ns, axes = _trailing_axes(input, normalized_shape, who)
    _check_affine(weight, ns, who, "weight")
    eps = float(finfo(input.dtype).eps) if eps is None else _real(eps, who, "eps")
    half = _half(input)
    x = input.astype(_core.float32) if half else input
    y = x / _core.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    if half:
        y = y.astype(input.dtype)
    if weight is not None:
        y = y * weight
    return y


_FUSED_BN = (_core.float16, _core.bfloat16, _core.float32)


def batch_norm(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-5,
):
    """Normalizes each channel (dimension 1 of an (N, C, *) input). Training: with the batch's
    mean and biased variance, updating `running_mean`/`running_var` in place (when given) with
    ``(1 - momentum) * running + momentum * batch`` (unbiased variance). Otherwise: with the
    running statistics."""
    who = _F + "batch_norm"
    _float_input(input, who)
    if input.ndim < 2:
        raise ValueError(f"{who}: input must be at least 2-d (N, C, *), got shape {input.shape}")
    c = input.shape[1]
    for name, a in (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        if a is not None:
            _array(a, who, name)
            if tuple(a.shape) != (c,):
                raise ValueError(
                    f"{who}: {name} shape {a.shape} does not match the input's {c} channels "
                    f"(input shape {input.shape})"
                )
    eps = _real(eps, who, "eps")
    shape = (1, c) + (1,) * (input.ndim - 2)
    axes = (0,) + tuple(range(2, input.ndim))
    if training and input.dtype in _FUSED_BN and input.size // max(c, 1) > 1:
        # the fused kernels: statistics, normalization and backward in a few passes
        y, mean, var = batch_norm_train(input, weight, bias, eps, axes, shape)
        if running_mean is not None or running_var is not None:
            momentum = _real(momentum, who, "momentum")
            n = input.size // c
            with no_grad():
                if running_mean is not None:
                    update_running(running_mean, mean, momentum)
                if running_var is not None:
                    update_running(running_var, var, momentum, momentum * n / (n - 1))
        return y
    half = _half(input)
    x = input.astype(_core.float32) if half else input
    if training:
        n = input.size // c if c else 0
        if n <= 1:
            raise ValueError(
                f"{who}: expected more than 1 value per channel when training, got input shape "
                f"{input.shape}"
            )
        mean = x.mean(axis=axes, keepdims=True)
        d = x - mean
        var = (d * d).mean(axis=axes, keepdims=True)
        if running_mean is not None or running_var is not None:
            momentum = _real(momentum, who, "momentum")
            with no_grad():
                if running_mean is not None:
                    running_mean *= 1.0 - momentum
                    running_mean += detach(mean).reshape(c) * momentum
                if running_var is not None:
                    running_var *= 1.0 - momentum
                    running_var += detach(var).reshape(c) * (momentum * n / (n - 1))
        y = d / _core.sqrt(var + eps)
    else:
        if running_mean is None or running_var is None:
            raise ValueError(f"{who}: running_mean and running_var are needed when not training")
        y = (x - running_mean.reshape(shape)) / _core.sqrt(running_var.reshape(shape) + eps)
    if half:
        y = y.astype(input.dtype)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y
