"""More of ember.nn.functional: the shrink activations (hardshrink, softshrink, softsign,
tanhshrink), rrelu, alpha dropouts, local_response_norm, pdist, embedding_bag, pools
(avg_pool3d, adaptive_avg_pool3d, adaptive_max_pool1d, lp_pool1d/2d, max_unpool1d/2d),
channel_shuffle, pixel_unshuffle, upsample and the losses soft_margin, multilabel_soft_margin,
multi_margin and hinge_embedding. Composed of ember's differentiable ops (max_unpool: a small
autograd Function whose backward is a gather), so every one has gradients on both devices."""

from __future__ import annotations

import math

from .. import _core, random
from .._array import asarray, asnumpy
from .._indexing import put_along_axis, take_along_axis
from .._joining import stack
from ..autograd import Function
from ._functional_activation import _inplace_result, _softplus_stable
from ._functional_checks import _F, _array, _real, _reduce
from ._functional_conv import _adaptive, _pool, _tuple, avg_pool1d, avg_pool2d, pad
from ._functional_image import interpolate
from ._functional_loss import _legacy_reduction

_SELU_ALPHA_SCALED = 1.7580993408473766  # selu's alpha * scale: its negative saturation value

# ---- activations -------------------------------------------------------------------------------


def hardshrink(input, lambd=0.5):  # noqa: A002
    """``x`` where |x| > lambd, else 0."""
    _array(input, _F + "hardshrink")
    return _core.where(_core.abs(input) > lambd, input, 0).astype(input.dtype, copy=False)


def softshrink(input, lambd=0.5):  # noqa: A002
    """``x - lambd`` above lambd, ``x + lambd`` below -lambd, else 0."""
    who = _F + "softshrink"
    _array(input, who)
    if _real(lambd, who, "lambd") < 0:
        raise ValueError(f"{who}: lambda must be greater or equal to 0, but found to be {lambd}")
    out = _core.where(input > lambd, input - lambd, _core.where(input < -lambd, input + lambd, 0))
    return out.astype(input.dtype, copy=False)


def softsign(input):  # noqa: A002
    """``x / (1 + |x|)``."""
    _array(input, _F + "softsign")
    return input / (1 + _core.abs(input))


def tanhshrink(input):  # noqa: A002
    """``x - tanh(x)``."""
    _array(input, _F + "tanhshrink")
    return input - _core.tanh(input)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):  # noqa: A002
    """Randomized leaky ReLU: negative inputs times a slope drawn uniformly from [lower, upper]
    per element (``ember.random``'s global generator) when `training`, else times the mean
    slope ``(lower + upper) / 2``."""
    who = _F + "rrelu"
    _array(input, who)
    lower, upper = _real(lower, who, "lower"), _real(upper, who, "upper")
    if lower > upper:
        raise ValueError(f"{who}: lower bound {lower} must not exceed upper bound {upper}")
    if training:
        u = random._global.random(input.shape, "float32", device=input.device)
        slope = (lower + (upper - lower) * u).astype(input.dtype, copy=False)
    else:
        slope = (lower + upper) / 2
    out = _core.where(input >= 0, input, input * slope).astype(input.dtype, copy=False)
    return _inplace_result(input, out, inplace)


# ---- alpha dropout -----------------------------------------------------------------------------


def _alpha_dropout(input, p, training, inplace, who, feature):  # noqa: A002
    _array(input, who)
    p = _real(p, who, "p")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{who}: dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.size == 0:
        return input
    if p == 1.0:
        return _inplace_result(input, input * 0, inplace)
    if feature:
        if input.ndim < 2:
            raise ValueError(f"{who}: input must have at least 2 dimensions (N, C, ...)")
        shape = input.shape[:2] + (1,) * (input.ndim - 2)
    else:
        shape = input.shape
    keep = (random._global.random(shape, "float32", device=input.device) >= p).astype(input.dtype)
    # PyTorch's affine correction keeping SELU's zero mean and unit variance
    a = 1.0 / math.sqrt((_SELU_ALPHA_SCALED**2 * p + 1) * (1 - p))
    b = (keep - 1) * (_SELU_ALPHA_SCALED * a) + _SELU_ALPHA_SCALED * a * p
    return _inplace_result(input, input * (keep * a) + b, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):  # noqa: A002
    """Dropout for SELU networks: dropped elements become SELU's saturation value, then an affine
    map restores the mean and variance (PyTorch's formula). Identity unless `training`."""
    return _alpha_dropout(input, p, training, inplace, _F + "alpha_dropout", False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):  # noqa: A002
    """``alpha_dropout`` of whole channels (dimension 1)."""
    return _alpha_dropout(input, p, training, inplace, _F + "feature_alpha_dropout", True)


# ---- normalization and distances ---------------------------------------------------------------


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):  # noqa: A002
    """``x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta`` (the window is
    zero-padded, ``size // 2`` channels before and ``(size - 1) // 2`` after)."""
    who = _F + "local_response_norm"
    _array(input, who)
    if input.ndim < 3:
        raise ValueError(
            f"{who}: expected 3D or higher dimensionality input (got {input.ndim} dimensions)"
        )
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"{who}: size must be a positive int, got {size!r}")
    if input.size == 0:
        return input
    c = input.shape[1]
    sq = (input * input).swapaxes(1, -1)
    sq = pad(sq, [size // 2, (size - 1) // 2])
    acc = sq[..., 0:c]
    for i in range(1, size):
        acc = acc + sq[..., i : i + c]
    div = (acc.swapaxes(1, -1) * (alpha / size) + k) ** beta
    return input / div


def _pnorm(d, p, axis):
    a = _core.abs(d)
    if p == math.inf:
        return _core.max(a, axis=axis)
    if p == 0:
        return (a != 0).astype(d.dtype).sum(axis=axis)
    if p == 1:
        return a.sum(axis=axis)
    if p == 2:
        return _core.sqrt((d * d).sum(axis=axis))
    return (a**p).sum(axis=axis) ** (1.0 / p)


def pdist(input, p=2):  # noqa: A002
    """The p-norm distances between the rows of an (N, M) input, for each pair i < j in
    row-major order: N (N - 1) / 2 values."""
    who = _F + "pdist"
    _array(input, who)
    if input.ndim != 2:
        raise ValueError(f"{who}: input must be a 2-d array, got {input.ndim}-d")
    p = _real(p, who, "p")
    if p < 0:
        raise ValueError(f"{who}: p must be non-negative, got {p}")
    n = input.shape[0]
    ii = [i for i in range(n) for _ in range(i + 1, n)]
    jj = [j for i in range(n) for j in range(i + 1, n)]
    if not ii:
        return _core.zeros((0,), dtype=input.dtype, device=input.device)
    ia = asarray(ii, dtype="int64", device=input.device)
    ja = asarray(jj, dtype="int64", device=input.device)
    return _pnorm(input[ia] - input[ja], p, -1)


# ---- embedding_bag -----------------------------------------------------------------------------


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):  # noqa: A002  # fmt: skip
    """Sums, means or maxima of bags of `weight`'s rows: `input` 2-d (each row a bag) or 1-d
    with `offsets` (the bags' starts); `per_sample_weights` scale the rows (mode "sum");
    `padding_idx` entries are left out of their bag; an empty bag gives zeros."""
    who = _F + "embedding_bag"
    _array(input, who)
    _array(weight, who, "weight")
    if input.dtype.kind not in "iu":
        raise TypeError(f"{who}: input must hold integer indices, got {input.dtype}")
    if weight.ndim != 2:
        raise ValueError(f"{who}: weight must be 2-d, got shape {weight.shape}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"{who}: mode has to be one of sum, mean or max, got {mode!r}")
    if per_sample_weights is not None:
        _array(per_sample_weights, who, "per_sample_weights")
        if mode != "sum":
            raise NotImplementedError(
                f"{who}: embedding_bag: per_sample_weights was not None. per_sample_weights is "
                f"only supported for mode='sum' (got mode={mode!r})"
            )
        if per_sample_weights.shape != input.shape:
            raise ValueError(
                f"{who}: per_sample_weights shape {per_sample_weights.shape} must equal the "
                f"input shape {input.shape}"
            )
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"{who}: if input is 2D, then offsets has to be None")
        b, n = input.shape
        bounds = [(i * n, (i + 1) * n) for i in range(b)]
        flat = input.reshape((-1,))
        psw = None if per_sample_weights is None else per_sample_weights.reshape((-1,))
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError(f"{who}: offsets has to be a 1D Tensor but got None")
        _array(offsets, who, "offsets")
        if offsets.ndim != 1:
            raise ValueError(f"{who}: offsets has to be a 1D Tensor, got {offsets.ndim}-d")
        o = [int(v) for v in asnumpy(offsets).tolist()]
        if o and o[0] != 0:
            raise ValueError(f"{who}: offsets[0] has to be 0, got {o[0]}")
        ends = o[1:] + ([] if include_last_offset else [input.shape[0]])
        bounds = list(zip(o[: len(ends)], ends, strict=True))
        flat, psw = input, per_sample_weights
    else:
        raise ValueError(f"{who}: input has to be 1D or 2D Tensor, got {input.ndim}-d")
    if max_norm is not None:
        from ._functional_layers import embedding

        embedding(flat, weight, max_norm=max_norm, norm_type=norm_type)  # renorms in place
    rows = weight[flat]
    if psw is not None:
        rows = rows * psw.reshape((-1, 1)).astype(rows.dtype, copy=False)
    keep = None
    if padding_idx is not None:
        keep = (flat != padding_idx).reshape((-1, 1))
        rows = _core.where(keep, rows, -math.inf if mode == "max" else 0.0).astype(rows.dtype)
    out = []
    zero = _core.zeros((weight.shape[1],), dtype=rows.dtype, device=rows.device)
    for s, e in bounds:
        seg = rows[s:e]
        if e <= s:
            out.append(zero)
        elif mode == "sum":
            out.append(seg.sum(axis=0))
        elif mode == "mean":
            cnt = keep[s:e].astype(rows.dtype).sum() if keep is not None else float(e - s)
            out.append(seg.sum(axis=0) / _core.maximum(cnt, 1.0))
        else:
            m = seg.max(axis=0)
            out.append(m if keep is None else _core.where(m == -math.inf, 0.0, m).astype(m.dtype))
    if not out:
        return _core.zeros((0, weight.shape[1]), dtype=weight.dtype, device=weight.device)
    return stack(out)


# ---- pools -------------------------------------------------------------------------------------


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):  # noqa: A002  # fmt: skip
    """Mean over sliding windows of the last three dimensions."""
    who = _F + "avg_pool3d"
    y = _pool(input, kernel_size, stride, padding, 1, ceil_mode, 3, who, "avg",
              count_include_pad=count_include_pad)  # fmt: skip
    if divisor_override:
        k = _tuple(kernel_size, 3, who, "kernel_size")
        y = y * (k[0] * k[1] * k[2] / divisor_override)
    return y


def adaptive_avg_pool3d(input, output_size):  # noqa: A002
    """Means over adaptive windows of the last three dimensions (PyTorch's window bounds)."""
    return _adaptive(input, output_size, 3, _F + "adaptive_avg_pool3d", "avg")


def adaptive_max_pool1d(input, output_size, return_indices=False):  # noqa: A002
    """Maxima over `output_size` adaptive windows of the last dimension; with `return_indices`
    also each maximum's position in the input."""
    who = _F + "adaptive_max_pool1d"
    _array(input, who)
    if input.ndim not in (2, 3):
        raise ValueError(f"{who}: input must be 2-d or 3-d, got {input.ndim}-d")
    if not return_indices:
        return _adaptive(input, output_size, 1, who, "max")
    (out,) = _tuple(output_size, 1, who, "output_size")
    n = input.shape[-1]
    vals, idx = [], []
    for i in range(out):
        a, b = (i * n) // out, -(-((i + 1) * n) // out)
        region = input[..., a:b]
        vals.append(region.max(axis=-1))
        idx.append(region.argmax(axis=-1).astype("int64") + a)
    return stack(vals, axis=-1), stack(idx, axis=-1)


def _lp_root(y, norm_type, kprod):
    # PyTorch: (sign(out) * relu(|out|) * kernel elements) ** (1 / p)
    return (_core.sign(y) * _core.maximum(_core.abs(y), 0.0) * kprod) ** (1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """``(sum of x^p over each window)^(1 / p)`` along the last dimension."""
    who = _F + "lp_pool1d"
    _array(input, who)
    p = _real(norm_type, who, "norm_type")
    (k,) = _tuple(kernel_size, 1, who, "kernel_size")
    y = avg_pool1d(input**p, k, stride, 0, ceil_mode)
    return _lp_root(y, p, k)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """``(sum of x^p over each window)^(1 / p)`` over the last two dimensions."""
    who = _F + "lp_pool2d"
    _array(input, who)
    p = _real(norm_type, who, "norm_type")
    kh, kw = _tuple(kernel_size, 2, who, "kernel_size")
    y = avg_pool2d(input**p, (kh, kw), stride, 0, ceil_mode)
    return _lp_root(y, p, kh * kw)


class _Unpool(Function):
    """Scatters x (N, C, L) into zeros (N, C, size) at `idx` (N, C, L); backward gathers."""

    @staticmethod
    def forward(ctx, x, idx, size):
        ctx.idx = idx
        out = _core.zeros(x.shape[:2] + (size,), dtype=x.dtype, device=x.device)
        put_along_axis(out, idx, x, axis=2)
        return out

    @staticmethod
    def backward(ctx, g):
        return take_along_axis(g, ctx.idx, axis=2), None, None


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nd, who):  # noqa: A002
    _array(input, who)
    _array(indices, who, "indices")
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{who}: indices must be an integer array, got {indices.dtype}")
    if input.shape != indices.shape:
        raise ValueError(
            f"{who}: indices shape {indices.shape} must match the input shape {input.shape}"
        )
    if input.ndim not in (nd + 1, nd + 2):
        raise ValueError(f"{who}: input must be {nd + 1}-d or {nd + 2}-d, got {input.ndim}-d")
    k = _tuple(kernel_size, nd, who, "kernel_size")
    s = _tuple(stride if stride is not None else kernel_size, nd, who, "stride")
    p = _tuple(padding, nd, who, "padding")
    spatial = input.shape[-nd:]
    default = tuple((spatial[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(nd))
    if output_size is None:
        out = default
    else:
        out = tuple(int(v) for v in output_size)[-nd:]
        if len(out) != nd:
            raise ValueError(f"{who}: output_size must have {nd} spatial sizes, got {output_size}")
        for i in range(nd):
            if not default[i] - s[i] < out[i] < default[i] + s[i]:
                raise ValueError(
                    f"{who}: invalid output_size {output_size!r} (dim {i} must be between "
                    f"{default[i] - s[i]} and {default[i] + s[i]})"
                )
    batched = input.ndim == nd + 2
    x = input if batched else input[None]
    idx = indices if batched else indices[None]
    n, c = x.shape[:2]
    size = math.prod(out)
    if idx.size:
        lo, hi = int(asnumpy(idx.min())), int(asnumpy(idx.max()))
        if lo < 0 or hi >= size:
            raise ValueError(f"{who}: found an invalid max index {hi if hi >= size else lo}")
    y = _Unpool.apply(
        x.reshape((n, c, -1)), idx.reshape((n, c, -1)).astype("int64", copy=False), size
    )
    y = y.reshape((n, c) + out)
    return y if batched else y[0]


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):  # noqa: A002
    """The inverse of ``max_pool1d``: each value put at its index (from ``return_indices``) in
    zeros of the pooled input's length (or `output_size`)."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1,
                       _F + "max_unpool1d")  # fmt: skip


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):  # noqa: A002
    """The inverse of ``max_pool2d``: each value put at its flat index in its plane."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2,
                       _F + "max_unpool2d")  # fmt: skip


# ---- reshapes ----------------------------------------------------------------------------------


def channel_shuffle(input, groups):  # noqa: A002
    """(N, g * k, *) -> (N, k * g, *): the channels of the `groups` groups interleaved."""
    who = _F + "channel_shuffle"
    _array(input, who)
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise ValueError(f"{who}: number of groups to divide channels in must be positive, "
                         f"got {groups!r}")  # fmt: skip
    if input.ndim < 3:
        raise ValueError(f"{who}: input must have at least 3 dimensions, got {input.ndim}")
    n, c = input.shape[:2]
    if c % groups:
        raise ValueError(f"{who}: number of channels ({c}) must be divisible by groups ({groups})")
    rest = input.shape[2:]
    x = input.reshape((n, groups, c // groups) + rest).swapaxes(1, 2)
    return x.reshape((n, c) + rest)


def pixel_unshuffle(input, downscale_factor):  # noqa: A002
    """(*, C, H r, W r) -> (*, C r^2, H, W): the inverse of ``pixel_shuffle``."""
    who = _F + "pixel_unshuffle"
    _array(input, who)
    r = int(downscale_factor)
    if r <= 0:
        raise ValueError(f"{who}: downscale_factor must be greater than 0, but got {r}")
    if input.ndim < 3 or input.shape[-1] % r or input.shape[-2] % r:
        raise ValueError(
            f"{who}: input must be (*, C, H * r, W * r), got {tuple(input.shape)} for r={r}"
        )
    *lead, c, h, w = input.shape
    x = input.reshape((-1, c, h // r, r, w // r, r)).transpose((0, 1, 3, 5, 2, 4))
    return x.reshape(tuple(lead) + (c * r * r, h // r, w // r))


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):  # noqa: A002
    """``interpolate`` (PyTorch's deprecated name for it)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


# ---- losses ------------------------------------------------------------------------------------


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):  # noqa: A002
    """``log(1 + exp(-y x))``."""
    who = _F + "soft_margin_loss"
    reduction = _legacy_reduction(size_average, reduce, reduction, who)
    _array(input, who)
    _array(target, who, "target")
    return _reduce(_softplus_stable(-target * input), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):  # noqa: A002  # fmt: skip
    """``-mean over classes of (y log sigmoid(x) + (1 - y) log sigmoid(-x))`` (times `weight`)."""
    who = _F + "multilabel_soft_margin_loss"
    reduction = _legacy_reduction(size_average, reduce, reduction, who)
    _array(input, who)
    _array(target, who, "target")
    if input.ndim == 0:
        raise ValueError(f"{who}: input must have a class dimension")
    loss = target * _softplus_stable(-input) + (1 - target) * _softplus_stable(input)
    if weight is not None:
        loss = loss * _array(weight, who, "weight")
    loss = loss.sum(axis=-1) / input.shape[-1]
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):  # noqa: A002  # fmt: skip
    """Multi-class hinge: ``sum over i != y of max(0, margin - x[y] + x[i])^p / C`` (each term
    times ``weight[y]``); p is 1 or 2."""
    who = _F + "multi_margin_loss"
    reduction = _legacy_reduction(size_average, reduce, reduction, who)
    _array(input, who)
    _array(target, who, "target")
    if p not in (1, 2):
        raise ValueError(f"{who}: only p == 1 and p == 2 supported, got {p!r}")
    if target.dtype.kind not in "iu":
        raise TypeError(f"{who}: target must hold class indices, got {target.dtype}")
    if (
        input.ndim not in (1, 2)
        or target.ndim != input.ndim - 1
        or (input.ndim == 2 and target.shape[0] != input.shape[0])
    ):
        raise ValueError(f"{who}: expected input (N, C) or (C,) and target (N,) or (), got "
                         f"{input.shape} and {target.shape}")  # fmt: skip
    x = input if input.ndim == 2 else input[None]
    t = target.reshape((-1, 1)).astype("int64", copy=False)
    c = x.shape[1]
    if t.size:
        lo, hi = int(asnumpy(t.min())), int(asnumpy(t.max()))
        if lo < 0 or hi >= c:
            raise IndexError(f"{who}: target {hi if hi >= c else lo} is out of bounds for {c}")
    xy = take_along_axis(x, t, axis=1)
    z = _core.maximum(margin - xy + x, 0.0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * _array(weight, who, "weight")[t]
    other = _core.arange(c, dtype="int64", device=x.device).reshape((1, c)) != t
    loss = (z * other.astype(z.dtype)).sum(axis=1) / c
    return _reduce(loss if input.ndim == 2 else loss[0], reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):  # noqa: A002  # fmt: skip
    """``x`` where target is 1, ``max(0, margin - x)`` where it is -1."""
    who = _F + "hinge_embedding_loss"
    reduction = _legacy_reduction(size_average, reduce, reduction, who)
    _array(input, who)
    _array(target, who, "target")
    clamp = _core.maximum(margin - input, 0.0)
    loss = _core.where(target != 1, clamp, 0.0) + _core.where(target != -1, input, 0.0)
    return _reduce(loss.astype(input.dtype, copy=False), reduction)
