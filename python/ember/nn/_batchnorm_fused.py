"""Batch normalization in training mode as a few fused kernels (what cuDNN's batch norm does in
its passes), one autograd node: forward = the channel means (one fused reduction), the
variances (another, around the means: no cancellation), the normalization with the affine
transform (one elementwise kernel, in the input's memory order); backward = the two channel
sums (of dy and of dy * (x - mean)) and one elementwise kernel for dx. Statistics in float32 for
float16/bfloat16 inputs, with no float32 copy of the activations (the composed version made
one, and several more passes and saved tensors). On the GPU the reductions keep channels_last's
innermost channel dimension coalesced (ember.fuse's column kernel)."""

from __future__ import annotations

import sys

from .._fusion import fuse

_FNS = {}


def _em():
    return sys.modules["ember"]


def _kernels(axes):
    """The fused functions for reductions over `axes` (cached per axes)."""
    k = _FNS.get(axes)
    if k is None:

        def mean(x):
            return x.astype("float32").mean(axis=axes)

        def var(x, m):
            d = x.astype("float32") - m
            return (d * d).mean(axis=axes)

        def sum_dy(dy):
            return dy.astype("float32").sum(axis=axes)

        def sum_dy_xmu(dy, x, m):
            return (dy.astype("float32") * (x.astype("float32") - m)).sum(axis=axes)

        k = _FNS[axes] = {
            "mean": fuse(kernel_name="ember_bn_mean")(mean),
            "var": fuse(kernel_name="ember_bn_var")(var),
            "sum_dy": fuse(kernel_name="ember_bn_sum_dy")(sum_dy),
            "sum_dy_xmu": fuse(kernel_name="ember_bn_sum_dy_xmu")(sum_dy_xmu),
        }
    return k


# The per-channel arithmetic between the passes, as one kernel each on the GPU (on the CPU the
# eager ops are cheaper than a fused call): the same expressions in the same order, so the
# results are the eager ones bit for bit.
@fuse(kernel_name="ember_bn_coef")
def _coef(var, w, eps):
    inv = 1.0 / _em().sqrt(var + eps)
    return inv, inv * w


@fuse(kernel_name="ember_bn_coef_bwd")
def _coef_bwd(s1, s2, inv, w, n):
    return inv * w, s1 / n, s2 * inv * inv / n, s2 * inv


@fuse(kernel_name="ember_bn_running")
def _running(r, stat, keep, take):
    return r * keep + stat.astype(r.dtype) * take


def _scale(var, weight, eps, gpu):
    """(invstd, invstd * weight) as float32 (C,) arrays."""
    if weight is None:
        return (1.0 / _em().sqrt(var + eps),) * 2
    w = weight.astype("float32", copy=False)
    if gpu:
        return _coef(var, w, eps)
    inv = 1.0 / _em().sqrt(var + eps)
    return inv, inv * w


def update_running(running, stat, momentum, take=None):
    """running <- running * (1 - momentum) + stat * take (default: momentum), in place."""
    take = momentum if take is None else take
    if running.device.type == "cuda":
        running[...] = _running(running, stat, 1.0 - momentum, take)
    else:
        running *= 1.0 - momentum
        running += stat.astype(running.dtype) * take


@fuse(kernel_name="ember_bn_normalize")
def _normalize(x, m, scale, shift):
    return ((x.astype("float32") - m) * scale + shift).astype(x.dtype)


@fuse(kernel_name="ember_bn_backward")
def _dx(dy, x, m, k1, k2, k3):
    return (k1 * (dy.astype("float32") - k2 - (x.astype("float32") - m) * k3)).astype(dy.dtype)


def _stats(x, axes, shape):
    k = _kernels(axes)
    mean = k["mean"](x)
    var = k["var"](x, mean.reshape(shape))
    return mean, var


def _function():
    if "fn" not in _FNS:
        from ..autograd import Function

        class BatchNormFused(Function):
            @staticmethod
            def forward(ctx, x, weight, bias, eps, axes, shape, stats):
                mean, var = _stats(x, axes, shape)
                stats += [mean, var]
                invstd, scale = _scale(var, weight, eps, x.device.type == "cuda")
                shift = 0.0 if bias is None else bias.astype("float32", copy=False).reshape(shape)
                y = _normalize(x, mean.reshape(shape), scale.reshape(shape), shift)
                ctx.save_for_backward(x, weight, mean, invstd)
                ctx.axes, ctx.shape = axes, shape
                ctx.has_w, ctx.b_dtype = weight is not None, None if bias is None else bias.dtype
                return y

            @staticmethod
            def backward(ctx, dy):
                x, weight, mean, invstd = ctx.saved_tensors
                axes, shape = ctx.axes, ctx.shape
                k = _kernels(axes)
                m = mean.reshape(shape)
                s1 = k["sum_dy"](dy)
                s2 = k["sum_dy_xmu"](dy, x, m)
                n = x.size // x.shape[1]
                wf = 1.0 if weight is None else weight.astype("float32", copy=False)
                if dy.device.type == "cuda":
                    w, k2, k3, dwf = _coef_bwd(s1, s2, invstd, wf, float(n))
                else:
                    w = invstd if weight is None else invstd * wf
                    k2, k3, dwf = s1 / n, s2 * invstd * invstd / n, s2 * invstd
                dx = _dx(dy, x, m, w.reshape(shape), k2.reshape(shape), k3.reshape(shape))
                dw = dwf.astype(weight.dtype, copy=False) if ctx.has_w else None
                db = None if ctx.b_dtype is None else s1.astype(ctx.b_dtype, copy=False)
                return dx, dw, db, None, None, None, None

        _FNS["fn"] = BatchNormFused
    return _FNS["fn"]


def batch_norm_train(x, weight, bias, eps, axes, shape):
    """(y, batch mean, biased batch variance): the training-mode batch norm of x over `axes`,
    differentiable in x, weight and bias; the statistics are float32 (C,) arrays."""
    from .. import autograd

    fn = _function()
    grad = autograd.is_grad_enabled() and any(
        a is not None and a.requires_grad for a in (x, weight, bias)
    )
    if grad:
        stats = []  # the forward's statistics, for the running averages
        y = fn.apply(x, weight, bias, eps, axes, shape, stats)
        return (y, *stats)
    mean, var = _stats(x, axes, shape)
    _, scale = _scale(var, weight, eps, x.device.type == "cuda")
    shift = 0.0 if bias is None else bias.astype("float32", copy=False).reshape(shape)
    return _normalize(x, mean.reshape(shape), scale.reshape(shape), shift), mean, var
