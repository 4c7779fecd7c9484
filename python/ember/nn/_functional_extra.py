"""ember.nn.functional beyond the first layers: the remaining activations (elu, selu, celu,
prelu, hardswish, hardsigmoid, hardtanh, relu6, mish, softmin, threshold), distances
(cosine_similarity, pairwise_distance) and losses (cosine_embedding, margin_ranking,
triplet_margin, poisson_nll, gaussian_nll, ctc). Composed of ember's differentiable ops, so every
one has gradients on both devices."""

from __future__ import annotations

import math

from .. import _core
from .._array import asarray
from .._joining import concatenate, stack
from ..amp import FLOAT32, cast_policy
from ._functional_activation import _softplus_stable, softmax
from ._functional_checks import _F, _array, _reduce, _reduction

_SELU_ALPHA = 1.6732632423543772
_SELU_SCALE = 1.0507009873554805


def elu(input, alpha=1.0, inplace=False):
    """``x`` for x > 0, else ``alpha * (exp(x) - 1)``."""
    _array(input, _F + "elu")
    return _core.where(input > 0, input, alpha * _core.expm1(_core.minimum(input, 0.0)))


def selu(input, inplace=False):
    """``scale * elu(x, alpha)`` with the self-normalizing constants."""
    _array(input, _F + "selu")
    return _SELU_SCALE * elu(input, _SELU_ALPHA)


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    _array(input, _F + "celu")
    return _core.where(input > 0, input, alpha * _core.expm1(_core.minimum(input, 0.0) / alpha))


def prelu(input, weight):
    """``x`` for x >= 0, else ``weight * x``; `weight` has 1 element or one per channel (dim 1)."""
    who = _F + "prelu"
    _array(input, who)
    _array(weight, who, "weight")
    w = weight
    if weight.size != 1:
        if input.ndim < 2 or input.shape[1] != weight.size:
            raise ValueError(
                f"{who}: weight has {weight.size} elements but the input has "
                f"{input.shape[1] if input.ndim > 1 else 1} channels"
            )
        w = weight.reshape((1, weight.size) + (1,) * (input.ndim - 2))
    return _core.where(input >= 0, input, w * input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``clip(x, min_val, max_val)``."""
    _array(input, _F + "hardtanh")
    return _core.minimum(_core.maximum(input, min_val), max_val)


def relu6(input, inplace=False):
    """``clip(x, 0, 6)``."""
    return hardtanh(input, 0.0, 6.0)


def hardsigmoid(input, inplace=False):
    """``clip(x / 6 + 1 / 2, 0, 1)``."""
    _array(input, _F + "hardsigmoid")
    return hardtanh(input / 6.0 + 0.5, 0.0, 1.0)


def hardswish(input, inplace=False):
    """``x * hardsigmoid(x)``."""
    _array(input, _F + "hardswish")
    return input * hardsigmoid(input)


def mish(input, inplace=False):
    """``x * tanh(softplus(x))``."""
    _array(input, _F + "mish")
    return input * _core.tanh(_softplus_stable(input))


@cast_policy(FLOAT32)
def softmin(input, dim=None, dtype=None):
    """``softmax(-x)`` along `dim`."""
    _array(input, _F + "softmin")
    return softmax(-input, dim, dtype)


def threshold(input, threshold, value, inplace=False):
    """``x`` where x > threshold, else `value`."""
    _array(input, _F + "threshold")
    return _core.where(input > threshold, input, value).astype(input.dtype, copy=False)


# ---- distances -------------------------------------------------------------------------------


@cast_policy(FLOAT32)
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``x1 . x2 / (max(|x1|, eps) * max(|x2|, eps))`` along `dim` (broadcasting x1 and x2)."""
    who = _F + "cosine_similarity"
    _array(x1, who, "x1")
    _array(x2, who, "x2")
    n1 = _core.maximum(_core.sqrt(_core.sum(x1 * x1, axis=dim)), eps)
    n2 = _core.maximum(_core.sqrt(_core.sum(x2 * x2, axis=dim)), eps)
    return _core.sum(x1 * x2, axis=dim) / (n1 * n2)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along `dim` (PyTorch's ``F.normalize``)."""
    who = _F + "normalize"
    _array(input, who)
    a = _core.abs(input)
    if p == math.inf:
        n = _core.max(a, axis=dim, keepdims=True)
    elif p == 2:
        n = _core.sqrt(_core.sum(a * a, axis=dim, keepdims=True))
    elif p == 1:
        n = _core.sum(a, axis=dim, keepdims=True)
    else:
        n = _core.sum(a**p, axis=dim, keepdims=True) ** (1.0 / p)
    r = input / _core.maximum(n, eps)
    if out is not None:
        out[...] = r
        return out
    return r


@cast_policy(FLOAT32)
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm of ``x1 - x2 + eps`` along the last dimension."""
    who = _F + "pairwise_distance"
    _array(x1, who, "x1")
    _array(x2, who, "x2")
    d = _core.abs(x1 - x2 + eps)
    if p == math.inf:
        return _core.max(d, axis=-1, keepdims=keepdim)
    if p == 2:
        return _core.sqrt(_core.sum(d * d, axis=-1, keepdims=keepdim))
    if p == 1:
        return _core.sum(d, axis=-1, keepdims=keepdim)
    return _core.sum(d**p, axis=-1, keepdims=keepdim) ** (1.0 / p)


# ---- losses ------------------------------------------------------------------------------------


@cast_policy(FLOAT32)
def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):  # fmt: skip
    """``1 - cos(x1, x2)`` where target is 1, ``max(0, cos(x1, x2) - margin)`` where it is -1."""
    who = _F + "cosine_embedding_loss"
    reduction = _reduction(reduction, who)
    cos = cosine_similarity(input1, input2, dim=-1, eps=1e-8)
    loss = _core.where(target > 0, 1.0 - cos, _core.maximum(cos - margin, 0.0))
    return _reduce(loss, reduction)


@cast_policy(FLOAT32)
def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):  # fmt: skip
    """``max(0, -target * (x1 - x2) + margin)``."""
    who = _F + "margin_ranking_loss"
    reduction = _reduction(reduction, who)
    _array(input1, who, "input1")
    _array(input2, who, "input2")
    return _reduce(_core.maximum(-target * (input1 - input2) + margin, 0.0), reduction)


@cast_policy(FLOAT32)
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):  # fmt: skip
    """``max(d(a, p) - d(a, n) + margin, 0)`` with the p-norm distance (``swap``: the smaller of
    d(a, n) and d(p, n))."""
    who = _F + "triplet_margin_loss"
    reduction = _reduction(reduction, who)
    d_ap = pairwise_distance(anchor, positive, p, eps)
    d_an = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_an = _core.minimum(d_an, pairwise_distance(positive, negative, p, eps))
    return _reduce(_core.maximum(d_ap - d_an + margin, 0.0), reduction)


@cast_policy(FLOAT32)
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):  # fmt: skip
    """Poisson negative log likelihood: ``exp(x) - t x`` (log_input) or ``x - t log(x + eps)``;
    ``full`` adds Stirling's term ``t log t - t + log(2 pi t) / 2`` where t > 1."""
    who = _F + "poisson_nll_loss"
    reduction = _reduction(reduction, who)
    _array(input, who)
    _array(target, who, "target")
    if log_input:
        loss = _core.exp(input) - target * input
    else:
        loss = input - target * _core.log(input + eps)
    if full:
        t = _core.maximum(target, 1.0)
        stirling = t * _core.log(t) - t + 0.5 * _core.log(2 * math.pi * t)
        loss = loss + _core.where(target > 1, stirling, 0.0)
    return _reduce(loss, reduction)


@cast_policy(FLOAT32)
def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log likelihood ``(log(max(var, eps)) + (x - t)^2 / max(var, eps)) / 2``
    (``full``: plus ``log(2 pi) / 2``)."""
    who = _F + "gaussian_nll_loss"
    reduction = _reduction(reduction, who)
    _array(input, who)
    if isinstance(var, _core.ndarray):
        if var.ndim == input.ndim - 1 and input.ndim and var.shape == input.shape[:-1]:
            var = var.reshape(var.shape + (1,))
        if bool(_core.any(var < 0)):
            raise ValueError(f"{who}: var has negative entries")
    v = _core.maximum(var, eps) if isinstance(var, _core.ndarray) else max(float(var), eps)
    d = input - target
    loss = 0.5 * (_core.log(v) + d * d / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


@cast_policy(FLOAT32)
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):  # fmt: skip
    """Connectionist temporal classification: ``-log`` of the total probability of every
    alignment of each target to its input (the forward algorithm in log space, one step per
    time step). `log_probs` is (T, N, C) log-probabilities; `targets` (N, S) padded or 1-d
    concatenated; ``reduction="mean"`` divides each loss by its target length first."""
    who = _F + "ctc_loss"
    reduction = _reduction(reduction, who)
    _array(log_probs, who, "log_probs")
    from .._array import asnumpy

    T, N, C = log_probs.shape  # noqa: N806
    il = [int(v) for v in asnumpy(asarray(input_lengths)).reshape(-1)]
    tl = [int(v) for v in asnumpy(asarray(target_lengths)).reshape(-1)]
    tg = asnumpy(asarray(targets)).astype("int64")
    if tg.ndim == 1:
        offs = [0]
        for n in tl:
            offs.append(offs[-1] + n)
        rows = [tg[offs[i] : offs[i + 1]] for i in range(N)]
    else:
        rows = [tg[i, : tl[i]] for i in range(N)]
    losses = []
    neg_inf = -1e30
    for n in range(N):
        labels = [blank]
        for c in rows[n].tolist():
            labels += [c, blank]
        L = len(labels)  # noqa: N806
        lab = asarray(labels, device=log_probs.device)
        # can alpha[s] come from alpha[s - 2]? (a label different from the one two back)
        skip = [s >= 2 and labels[s] != blank and labels[s] != labels[s - 2] for s in range(L)]
        skip_mask = asarray(skip, device=log_probs.device)
        lp = log_probs[:, n, :]
        alpha = _core.where(
            asarray([s < 2 for s in range(L)], device=log_probs.device),
            lp[0][lab],
            neg_inf,
        )
        for t in range(1, il[n]):
            a1 = concatenate(
                [_core.full((1,), neg_inf, dtype=alpha.dtype, device=alpha.device), alpha[:-1]]
            )
            a2 = concatenate(
                [_core.full((2,), neg_inf, dtype=alpha.dtype, device=alpha.device), alpha[:-2]]
            )
            a2 = _core.where(skip_mask, a2, neg_inf)
            m = _core.maximum(_core.maximum(alpha, a1), a2)
            s = _core.exp(alpha - m) + _core.exp(a1 - m) + _core.exp(a2 - m)
            alpha = m + _core.log(s) + lp[t][lab]
        last = alpha[L - 1] if L == 1 else alpha[L - 2 :]
        if L == 1:
            total = last
        else:
            mx = _core.max(last)
            total = mx + _core.log(_core.sum(_core.exp(last - mx)))
        loss = -total
        if zero_infinity:
            loss = _core.where(loss > 1e29, 0.0, loss)
        losses.append(loss)
    out = stack(losses) if losses else _core.zeros((0,), device=log_probs.device)
    if reduction == "mean":
        denom = asarray([max(n, 1) for n in tl], dtype=out.dtype, device=out.device)
        return _core.mean(out / denom)
    return _reduce(out, reduction)
