"""ember.nn.functional's losses: mse, l1, smooth_l1, huber, nll, cross_entropy, binary cross-entropy
(on probabilities and on logits) and kl_div."""

from __future__ import annotations

import math
import warnings

from .. import _core
from ..amp import FLOAT32, cast_policy
from ._functional_activation import _softplus_stable, log_softmax
from ._functional_checks import (
    _F,
    _REDUCTIONS,
    _array,
    _broadcast_target,
    _float_input,
    _fused_ok,
    _host_out_of_range,
    _opt_array,
    _real,
    _reduce,
    _reduction,
    _same_shape,
)
from ._grad_mode import needs_grad


@cast_policy(FLOAT32)
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``(input - target)^2``, reduced."""
    who = _F + "mse_loss"
    _array(input, who)
    _array(target, who, "target")
    reduction = _legacy_reduction(size_average, reduce, reduction, who)
    _broadcast_target(input, target, who)
    d = input - target
    return _reduce(d * d, reduction)


@cast_policy(FLOAT32)
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``|input - target|``, reduced."""
    who = _F + "l1_loss"
    _array(input, who)
    _array(target, who, "target")
    reduction = _legacy_reduction(size_average, reduce, reduction, who)
    _broadcast_target(input, target, who)
    return _reduce(_core.abs(input - target), reduction)


@cast_policy(FLOAT32)
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """``0.5 d^2 / beta`` where ``d = |input - target| < beta``, ``d - 0.5 beta`` elsewhere
    (the L1 loss for beta = 0), reduced."""
    who = _F + "smooth_l1_loss"
    _array(input, who)
    _array(target, who, "target")
    reduction = _legacy_reduction(size_average, reduce, reduction, who)
    beta = _real(beta, who, "beta")
    if beta < 0:
        raise ValueError(f"{who}: beta must be non-negative, got {beta}")
    _broadcast_target(input, target, who)
    d = _core.abs(input - target)
    if beta == 0.0:
        return _reduce(d, reduction)
    return _reduce(_core.where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta), reduction)


@cast_policy(FLOAT32)
def huber_loss(input, target, reduction="mean", delta=1.0):
    """``0.5 d^2`` where ``d = |input - target| < delta``, ``delta (d - 0.5 delta)`` elsewhere."""
    who = _F + "huber_loss"
    _array(input, who)
    _array(target, who, "target")
    _reduction(reduction, who)
    delta = _real(delta, who, "delta")
    if delta <= 0:
        raise ValueError(f"{who}: delta must be positive, got {delta}")
    _broadcast_target(input, target, who)
    d = _core.abs(input - target)
    return _reduce(_core.where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta), reduction)


def _legacy_reduction(size_average, reduce, reduction, who, allowed=_REDUCTIONS):
    if size_average is not None or reduce is not None:
        warnings.warn(
            f"{who}: size_average and reduce are deprecated (as in PyTorch); use reduction",
            UserWarning,
            stacklevel=3,
        )
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
    return _reduction(reduction, who, allowed)


def _class_shape(logp, class_dim, c):
    return tuple(c if i == class_dim else 1 for i in range(logp.ndim))


def _check_index_target(input, target, who):
    if target.dtype.kind not in "iu":
        raise TypeError(
            f"{who}: target must hold class indices (an integer dtype) or class probabilities "
            f"(a floating dtype, the input's shape), got {target.dtype} of shape {target.shape}"
        )
    expected = () if input.ndim == 1 else (input.shape[0],) + tuple(input.shape[2:])
    if tuple(target.shape) != expected:
        raise ValueError(
            f"{who}: target shape {target.shape} does not match input shape {input.shape} "
            f"(class indices need shape {expected})"
        )


def _check_weight(weight, c, who):
    if weight is not None:
        _array(weight, who, "weight")
        if tuple(weight.shape) != (c,):
            raise ValueError(
                f"{who}: weight must have shape ({c},), one value per class, got {weight.shape}"
            )


def _nll(logp, target, weight, ignore_index, class_dim, who):
    """(per-element loss -logp[target] * w[target] (0 where ignored), per-element weights)."""
    c = logp.shape[class_dim]
    t = _core.expand_dims(target, class_dim)
    classes = _core.arange(c, device=logp.device).reshape(_class_shape(logp, class_dim, c))
    onehot = t == classes
    valid = target != ignore_index
    if 0 <= ignore_index < c:
        onehot = onehot & (t != ignore_index)
    bad = None
    if target.size:
        if logp.device.type == "cpu":
            v = _host_out_of_range(target, c, ignore_index)
            if v is not None:
                raise IndexError(f"{who}: target {v} is out of bounds for {c} classes")
        else:
            # no host sync on a GPU: out-of-range targets make their loss NaN instead
            bad = ((target < 0) | (target >= c)) & valid
    # where, not a product: -inf log-probabilities of other classes must not make NaN
    picked = _core.where(onehot, logp, 0).sum(axis=class_dim)
    if weight is None:
        w = valid.astype(logp.dtype)
        loss = -picked
    else:
        wb = weight.reshape(_class_shape(logp, class_dim, c))
        w = _core.where(onehot, wb, 0).sum(axis=class_dim)
        loss = -picked * w
    if bad is not None:
        loss = _core.where(bad, math.nan, loss)
    return loss, w, valid


def _weighted_reduce(loss, w, reduction):
    if reduction == "mean":
        return loss.sum() / w.sum()
    return _reduce(loss, reduction)


@cast_policy(FLOAT32)
def nll_loss(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
):
    """``-input[n, target[n]] * weight[target[n]]`` for log-probabilities `input` (N, C, *) or
    (C,) and class indices `target`; ``"mean"`` divides by the sum of the weights of the
    targets not ignored (PyTorch's weighted mean)."""
    who = _F + "nll_loss"
    _array(input, who)
    _array(target, who, "target")
    reduction = _legacy_reduction(size_average, reduce, reduction, who)
    if input.ndim == 0:
        raise ValueError(f"{who}: input must be at least 1-d (C,) or (N, C, *), got a 0-d array")
    class_dim = 0 if input.ndim == 1 else 1
    _check_index_target(input, target, who)
    _check_weight(weight, input.shape[class_dim], who)
    loss, w, _ = _nll(input, target, weight, int(ignore_index), class_dim, who)
    return _weighted_reduce(loss, w, reduction)


# ---------------------------------------------------------------------------------------------
# cross_entropy: a fused row kernel, and the composed path for what it does not take
# ---------------------------------------------------------------------------------------------


@cast_policy(FLOAT32)
def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    """Cross-entropy of logits `input` ((N, C, *) or (C,)) and either class indices `target`
    (an integer array of shape (N, *) or ()) or class probabilities (a floating array of the
    input's shape). `weight` (C,) rescales classes; `ignore_index` targets contribute nothing;
    `label_smoothing` mixes the target with the uniform distribution. ``"mean"`` divides index
    targets by the sum of their weights and probability targets by N * prod(*)."""
    who = _F + "cross_entropy"
    _array(input, who)
    _array(target, who, "target")
    reduction = _legacy_reduction(size_average, reduce, reduction, who)
    label_smoothing = _real(label_smoothing, who, "label_smoothing")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{who}: label_smoothing must be in [0, 1], got {label_smoothing}")
    if input.ndim == 0:
        raise ValueError(f"{who}: input must be at least 1-d (C,) or (N, C, *), got a 0-d array")
    class_dim = 0 if input.ndim == 1 else 1
    c = input.shape[class_dim]
    _check_weight(weight, c, who)
    if (
        target.dtype.kind in "iu"
        and _fused_ok(input)
        and (weight is None or (weight.dtype == input.dtype and not needs_grad(weight)))
    ):
        # class indices: log-softmax, the gather, smoothing and the weighted reduction in one
        # kernel per row (src/core/rows.cpp); out-of-range targets raise on the CPU, give NaN
        # on a GPU
        _check_index_target(input, target, who)
        return _core._cross_entropy(
            input, target, weight, int(ignore_index), label_smoothing, reduction
        )
    logp = log_softmax(input, class_dim)
    wb = None if weight is None else weight.reshape(_class_shape(logp, class_dim, c))

    if target.dtype.kind in "fc":
        # class probabilities
        _same_shape(input, target, who)
        if ignore_index != -100:
            raise ValueError(f"{who}: ignore_index is not supported with class-probability targets")
        if label_smoothing > 0:
            target = target * (1.0 - label_smoothing) + label_smoothing / c
        prod = logp * target if wb is None else logp * target * wb
        loss = -prod.sum(axis=class_dim)
        if reduction == "mean":
            return loss.sum() / (input.size // c if c else 0)
        return _reduce(loss, reduction)

    _check_index_target(input, target, who)
    ignore_index = int(ignore_index)
    loss, w, valid = _nll(logp, target, weight, ignore_index, class_dim, who)
    nll = _weighted_reduce(loss, w, reduction)
    if label_smoothing == 0.0:
        return nll
    smooth = -(logp.sum(axis=class_dim) if wb is None else (logp * wb).sum(axis=class_dim))
    smooth = _core.where(valid, smooth, 0)
    smooth = _weighted_reduce(smooth, w, reduction)
    return nll * (1.0 - label_smoothing) + smooth * (label_smoothing / c)


def _clamped_log(x):
    # log clamped at -100 as PyTorch's BCE; no NaN gradient at 0 (max picks the constant)
    return _core.maximum(_core.log(_core.maximum(x, 3.720075976020836e-44)), -100.0)


@cast_policy(FLOAT32)
def binary_cross_entropy(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """``-(t log(x) + (1 - t) log(1 - x)) * weight`` for probabilities `input` in [0, 1] (logs
    clamped at -100, as PyTorch)."""
    who = _F + "binary_cross_entropy"
    _float_input(input, who)
    _array(target, who, "target")
    _opt_array(weight, who, "weight")
    reduction = _legacy_reduction(size_average, reduce, reduction, who)
    _same_shape(input, target, who)
    if input.device.type == "cpu" and input.size and bool(((input < 0) | (input > 1)).any()):
        raise ValueError(f"{who}: all elements of input should be between 0 and 1")
    loss = -(target * _clamped_log(input) + (1 - target) * _clamped_log(1 - input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@cast_policy(FLOAT32)
def binary_cross_entropy_with_logits(
    input,
    target,
    weight=None,
    size_average=None,
    reduce=None,
    reduction="mean",
    pos_weight=None,
):
    """``binary_cross_entropy(sigmoid(input), target)`` computed stably from the logits:
    ``(1 - t) x + (1 + (pos_weight - 1) t) softplus(-x)``, times `weight`."""
    who = _F + "binary_cross_entropy_with_logits"
    _float_input(input, who)
    _array(target, who, "target")
    _opt_array(weight, who, "weight")
    _opt_array(pos_weight, who, "pos_weight")
    reduction = _legacy_reduction(size_average, reduce, reduction, who)
    _same_shape(input, target, who)
    sp = _softplus_stable(-input)
    if pos_weight is None:
        loss = (1 - target) * input + sp
    else:
        loss = (1 - target) * input + (target * (pos_weight - 1) + 1) * sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@cast_policy(FLOAT32)
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Pointwise KL divergence ``target * (log(target) - input)`` for log-probabilities `input`
    (`target` in log space too when `log_target`). ``"batchmean"`` divides the sum by the batch
    size (the mathematical KL divergence); ``"mean"`` by the number of elements."""
    who = _F + "kl_div"
    _array(input, who)
    _array(target, who, "target")
    reduction = _legacy_reduction(
        size_average, reduce, reduction, who, ("none", "batchmean", "mean", "sum")
    )
    if reduction == "mean":
        warnings.warn(
            f"{who}: reduction='mean' divides the total loss by both the batch size and the "
            "support size; 'batchmean' divides only by the batch size and is the KL divergence",
            UserWarning,
            stacklevel=2,
        )
    _broadcast_target(input, target, who)
    if log_target:
        loss = _core.exp(target) * (target - input)
    else:
        pos = target > 0
        xlogx = _core.where(pos, target * _core.log(_core.where(pos, target, 1)), 0)
        loss = xlogx - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)
