"""ember.nn.functional's linear maps (linear, bilinear), dropout, embedding and one_hot."""

from __future__ import annotations

from .. import _core, linalg, random
from ..amp import LOW, cast_policy
from ._functional_activation import _inplace_result
from ._functional_checks import (
    _F,
    _array,
    _host_out_of_range,
    _opt_array,
    _real,
)
from ._grad_mode import detach, needs_grad, no_grad


@cast_policy(LOW)
def linear(input, weight, bias=None):
    """``input @ weight.T + bias``: input (*, in_features), weight (out_features, in_features)
    (or (in_features,): a vector product), bias (out_features,) or None."""
    who = _F + "linear"
    _array(input, who)
    _array(weight, who, "weight")
    _opt_array(bias, who, "bias")
    if weight.ndim not in (1, 2):
        raise ValueError(f"{who}: weight must be 1-d or 2-d, got shape {weight.shape}")
    if input.ndim == 0 or input.shape[-1] != weight.shape[-1]:
        raise ValueError(
            f"{who}: input shape {input.shape} and weight shape {weight.shape} do not match "
            f"(input's last dimension must be {weight.shape[-1]})"
        )
    out = _core.matmul(input, weight.mT if weight.ndim == 2 else weight)
    if bias is not None:
        out = out + bias
    return out


@cast_policy(LOW)
def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]``."""
    who = _F + "bilinear"
    _array(input1, who, "input1")
    _array(input2, who, "input2")
    _array(weight, who, "weight")
    _opt_array(bias, who, "bias")
    if weight.ndim != 3:
        raise ValueError(f"{who}: weight must be 3-d (out, in1, in2), got shape {weight.shape}")
    out_f, in1, in2 = weight.shape
    if (
        input1.ndim == 0
        or input2.ndim == 0
        or input1.shape[-1] != in1
        or input2.shape[-1] != in2
        or input1.shape[:-1] != input2.shape[:-1]
    ):
        raise ValueError(
            f"{who}: input1 shape {input1.shape} and input2 shape {input2.shape} do not match "
            f"weight shape {weight.shape} (expected (*, {in1}) and (*, {in2}) with the same "
            "leading dimensions)"
        )
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    w = _core.permute_dims(weight, (1, 0, 2)).reshape(in1, out_f * in2)
    t = _core.matmul(x1, w).reshape(-1, out_f, in2)
    out = (t * x2[:, None, :]).sum(axis=-1)
    if bias is not None:
        out = out + bias
    return out.reshape(lead + (out_f,))


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability `p` (from ``ember.random``'s global generator) and
    scales the others by ``1 / (1 - p)``; the identity when `training` is False or p is 0."""
    who = _F + "dropout"
    _array(input, who)
    p = _real(p, who, "p")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{who}: dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.size == 0:
        return input
    if p == 1.0:
        out = input * 0
    else:
        keep = random.random(input.shape, "float32", device=input.device) >= p
        out = input * keep * (1.0 / (1.0 - p))
    return _inplace_result(input, out, inplace)


def embedding(
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    sparse=False,
):
    """Rows of `weight` (num_embeddings, dim) at the integer indices `input`: shape
    ``input.shape + (dim,)``. Rows at `padding_idx` get no gradient. With `max_norm`, the rows
    looked up are first renormalized in place to norm at most `max_norm` (as PyTorch)."""
    who = _F + "embedding"
    _array(input, who)
    _array(weight, who, "weight")
    if input.dtype.kind not in "iu":
        raise TypeError(f"{who}: input must have an integer dtype, got {input.dtype}")
    if weight.ndim != 2:
        raise ValueError(f"{who}: weight must be 2-d (num_embeddings, dim), got {weight.shape}")
    if scale_grad_by_freq:
        raise ValueError(f"{who}: scale_grad_by_freq=True is not supported by ember")
    # sparse=True: ember has no sparse arrays; the weight's gradient is dense, zero in the rows
    # not looked up (what optim.SparseAdam reads as the sparse gradient's rows)
    del sparse
    n = weight.shape[0]
    if padding_idx is not None:
        padding_idx = int(padding_idx)
        if not -n <= padding_idx < n:
            raise ValueError(f"{who}: padding_idx {padding_idx} is out of range for {n} embeddings")
        padding_idx %= n
    flat = input.reshape(-1)
    if flat.size:
        if input.device.type == "cpu":
            bad = _host_out_of_range(flat, n, None)
        else:
            # take() checks the upper bound (it reads min and max anyway); negative indices
            # would wrap around there, so they are refused here
            lo = int(flat.min())
            bad = lo if lo < 0 else None
        if bad is not None:
            raise IndexError(f"{who}: index {bad} is out of range for {n} embeddings")
    if max_norm is not None:
        _embedding_renorm(weight, flat, _real(max_norm, who, "max_norm"), norm_type)
    out = _core.take(weight, flat, axis=0)
    if padding_idx is not None and needs_grad(weight):
        # same values; the padding row's positions pass no gradient back to the weight
        keep = (flat != padding_idx)[:, None]
        out = _core.where(keep, out, detach(out))
    return out.reshape(input.shape + (weight.shape[1],))


def _embedding_renorm(weight, flat, max_norm, norm_type):
    with no_grad():
        w = detach(weight)
        used = (flat[:, None] == _core.arange(w.shape[0], device=w.device)[None, :]).any(axis=0)
        norms = linalg.vector_norm(w, ord=norm_type, axis=1)
        scale = _core.where(used & (norms > max_norm), max_norm / (norms + 1e-7), 1)
        w[...] = w * scale[:, None]


def one_hot(tensor, num_classes=-1):
    """int64 array of shape ``tensor.shape + (num_classes,)`` with ones at the indices."""
    who = _F + "one_hot"
    _array(tensor, who, "tensor")
    if tensor.dtype.kind not in "iu":
        raise TypeError(f"{who}: tensor must have an integer dtype, got {tensor.dtype}")
    if num_classes == -1:
        num_classes = int(tensor.max()) + 1 if tensor.size else 0
    num_classes = int(num_classes)
    if tensor.size and (int(tensor.min()) < 0 or int(tensor.max()) >= num_classes):
        raise ValueError(f"{who}: class values must be in [0, {num_classes})")
    classes = _core.arange(num_classes, device=tensor.device)
    return (tensor[..., None] == classes).astype(_core.int64)
