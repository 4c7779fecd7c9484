"""ember.nn.functional: the math of the nn layers and losses as functions, in ember ops only.

Every function runs on any device and, once autograd exists, is differentiated through the ops
it is written in. Names, arguments and results follow ``torch.nn.functional``. Bad input raises
``TypeError`` (not an array, wrong dtype kind) or ``ValueError`` (shapes, arguments) naming the
function and the offending value.

Fused kernels: ``softmax``, ``log_softmax``, ``cross_entropy`` with class-index targets and
``layer_norm`` run one backend kernel per row (``ember._core._softmax`` / ``_cross_entropy`` /
``_layer_norm``, src/core/rows.cpp) for real floating inputs, with fused backward kernels; the
composed versions in the marked blocks below remain for what those kernels do not take
(integer or complex inputs, probability targets, class weights that require grad or have
another dtype, affine parameters of another dtype).
"""

from __future__ import annotations

import math
import numbers
import warnings

from .. import _core
from .._core import ndarray
from ._grad_mode import detach, needs_grad, no_grad

__all__ = [
    "batch_norm",
    "bilinear",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "dropout",
    "embedding",
    "gelu",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "linear",
    "log_softmax",
    "logsigmoid",
    "mse_loss",
    "nll_loss",
    "one_hot",
    "relu",
    "rms_norm",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "softmax",
    "softplus",
    "tanh",
]

_F = "ember.nn.functional."


def _em():
    import ember

    return ember


# ---------------------------------------------------------------------------------------------
# argument checks
# ---------------------------------------------------------------------------------------------


def _array(x, who, name="input"):
    if not isinstance(x, ndarray):
        raise TypeError(f"{who}: {name} must be an ember.ndarray, got {type(x).__name__}")
    return x


def _opt_array(x, who, name):
    return None if x is None else _array(x, who, name)


def _is_float(x):
    return x.dtype.kind in "fc"


def _float_input(x, who, name="input"):
    _array(x, who, name)
    if x.dtype.kind not in "fc":
        raise TypeError(f"{who}: {name} must have a floating-point dtype, got {x.dtype}")
    return x


def _real(v, who, name):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{who}: {name} must be a real number, got {type(v).__name__} {v!r}")
    return float(v)


def _dim(dim, ndim, who, name="dim"):
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"{who}: {name} must be an int, got {type(dim).__name__} {dim!r}")
    dim = int(dim)
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"{who}: {name} {dim} is out of range for a {ndim}-d input (expected to be in "
            f"range [{-n}, {n - 1}])"
        )
    return dim % n


_REDUCTIONS = ("none", "mean", "sum")


def _reduction(reduction, who, allowed=_REDUCTIONS):
    if reduction not in allowed:
        raise ValueError(
            f"{who}: reduction must be one of {', '.join(repr(r) for r in allowed)}, got "
            f"{reduction!r}"
        )
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _same_shape(input, target, who):
    if input.shape != target.shape:
        raise ValueError(
            f"{who}: target shape {target.shape} differs from input shape {input.shape}; they "
            "must be the same"
        )


def _broadcast_target(input, target, who):
    # PyTorch broadcasts a differently-sized target with a warning (usually a bug)
    if input.shape != target.shape:
        warnings.warn(
            f"{who}: using a target shape {target.shape} that differs from the input shape "
            f"{input.shape}; they are broadcast, which is likely not what you want",
            UserWarning,
            stacklevel=3,
        )


def _half(x):
    """float16/bfloat16 inputs are computed in float32 (PyTorch's accumulation type)."""
    return x.dtype in (_core.float16, _core.bfloat16)


def _shape_tuple(s, who, name):
    if isinstance(s, numbers.Integral) and not isinstance(s, bool):
        return (int(s),)
    try:
        t = tuple(s)
    except TypeError:
        raise TypeError(f"{who}: {name} must be an int or a sequence of ints, got {s!r}") from None
    for v in t:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{who}: {name} must be an int or a sequence of ints, got {s!r}")
    return tuple(int(v) for v in t)


# ---------------------------------------------------------------------------------------------
# linear maps
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# activations
# ---------------------------------------------------------------------------------------------


def _inplace_result(input, out, inplace):
    # in place only where no graph records the op; otherwise the result is a new array
    if inplace and not needs_grad(input):
        input[...] = out
        return input
    return out


def relu(input, inplace=False):
    """``max(input, 0)`` (NaN stays NaN; the gradient at 0 is 0, as PyTorch's)."""
    _array(input, _F + "relu")
    return _inplace_result(input, _core.where(input <= 0, 0, input), inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``input`` where positive, ``negative_slope * input`` elsewhere."""
    who = _F + "leaky_relu"
    _array(input, who)
    negative_slope = _real(negative_slope, who, "negative_slope")
    return _inplace_result(input, _core.where(input > 0, input, input * negative_slope), inplace)


# -- erf, composed (one place; replace with a core erf op when the op table gains one) --------
# erfc(a) = t * exp(P(2t - 1) - a^2) for a >= 0, t = 1/(1 + a/2): this project's own
# least-squares fits (tools/fit_erfc.py). Degree 9: ~1e-7 relative error (float32 and below);
# degree 24: ~5e-15 (float64).
_ERFC_P9 = (
    -0.6717940760643877, 0.6726422171821704, 0.04734310669304545, -0.04687488860576777,
    -0.009873771160199142, 0.008703813828217445, 0.0017765691390312231, -0.0020487374926822528,
    -0.0002079116943211029, 0.00033373726000087464,
)  # fmt: skip
_ERFC_P24 = (
    -0.6717940840566925, 0.672643223977655, 0.04734330684182453, -0.04689561023108959,
    -0.009872689361749879, 0.008824938555024265, 0.0017589334566132362, -0.002345812472802766,
    -0.00014624574334548966, 0.0006736785697442777, -9.3742311147664e-05,
    -0.00017430172323647873, 7.143111449244007e-05, 3.174042725856357e-05,
    -3.027068623776785e-05, 1.5134012288395416e-07, 8.71751964248124e-06,
    -2.9765377604365764e-06, -1.4699675583991932e-06, 1.2927075213487474e-06,
    6.279166251405969e-10, -2.933407570180024e-07, 6.068343181891552e-08,
    3.047064387413458e-08, -9.859508616218867e-09,
)  # fmt: skip


def _erfc_nonneg(a):
    """erfc(a) for a >= 0 (a floating array), accurate to its dtype's precision."""
    core_erfc = getattr(_core, "erfc", None)
    if core_erfc is not None:
        return core_erfc(a)
    coef = _ERFC_P24 if a.dtype == _core.float64 else _ERFC_P9
    t = 1 / (a * 0.5 + 1)
    y = t * 2 - 1
    s = y * coef[-1] + coef[-2]
    for c in coef[-3::-1]:
        s = s * y + c
    return t * _core.exp(s - a * a)


def _one_plus_erf(u):
    """1 + erf(u) without cancellation: 2 - erfc(u) for u >= 0, erfc(-u) below."""
    pos = u >= 0
    c = _erfc_nonneg(_core.where(pos, u, -u))
    return _core.where(pos, 2 - c, c)


_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def gelu(input, approximate="none"):
    """``x * Phi(x)`` (the normal CDF; ``approximate="none"``) or PyTorch's tanh approximation
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`` (``approximate="tanh"``)."""
    who = _F + "gelu"
    _float_input(input, who)
    if approximate == "none":
        x = input.astype(_core.float32) if _half(input) else input
        out = x * 0.5 * _one_plus_erf(x * _SQRT_HALF)
    elif approximate == "tanh":
        x = input.astype(_core.float32) if _half(input) else input
        out = x * 0.5 * (1 + _core.tanh((x + x * x * x * 0.044715) * _SQRT_2_OVER_PI))
    else:
        raise ValueError(f"{who}: approximate must be 'none' or 'tanh', got {approximate!r}")
    return out.astype(input.dtype) if _half(input) else out


def _exp_neg_abs(x, pos):
    # exp(-|x|), differentiable at 0 (the branch x >= 0 has slope -1 there)
    return _core.exp(_core.where(pos, -x, x))


def sigmoid(input):
    """``1 / (1 + exp(-x))``, evaluated without overflow on either side."""
    _array(input, _F + "sigmoid")
    pos = input >= 0
    e = _exp_neg_abs(input, pos)
    r = 1 / (1 + e)
    return _core.where(pos, r, e * r)


def logsigmoid(input):
    """``log(sigmoid(x)) = -softplus(-x)``, stable for large |x|."""
    _array(input, _F + "logsigmoid")
    return -_softplus_stable(-input)


def tanh(input):
    """``tanh(x)``."""
    _array(input, _F + "tanh")
    return _core.tanh(input)


def silu(input, inplace=False):
    """``x * sigmoid(x)`` (also called swish)."""
    _array(input, _F + "silu")
    return _inplace_result(input, input * sigmoid(input), inplace)


def _softplus_stable(z):
    # max(z, 0) + log1p(exp(-|z|)): no overflow, and no NaN in either branch's gradient
    pos = z > 0
    return _core.where(pos, z, 0) + _core.log1p(_core.exp(_core.where(pos, -z, z)))


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``."""
    who = _F + "softplus"
    _array(input, who)
    beta = _real(beta, who, "beta")
    threshold = _real(threshold, who, "threshold")
    bx = input * beta if beta != 1.0 else input
    linear_part = bx > threshold
    # the exp only sees arguments <= threshold, so the unused branch cannot overflow
    safe = _core.where(linear_part, 0, bx)
    soft = _core.log1p(_core.exp(safe))
    if beta != 1.0:
        soft = soft / beta
    return _core.where(linear_part, input, soft)


def _softmax_dim(ndim, who):
    warnings.warn(
        f"{who}: implicit dimension choice for softmax is deprecated (as in PyTorch); pass dim",
        UserWarning,
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


# =============================================================================================
# softmax and log_softmax -- FUSED-KERNEL SWAP POINT (one pass, max-subtracted)
# =============================================================================================


def _fused_ok(x):
    # the fused row kernels take real floating arrays; anything else is composed below
    return x.dtype in (_core.float16, _core.bfloat16, _core.float32, _core.float64)


def _stable_shift(x, dim):
    # x - max(x) along dim; the max carries no gradient (softmax does not depend on it)
    m = detach(x.max(axis=dim, keepdims=True))
    # rows that are all -inf (or hold +inf) keep their NaN/inf behaviour as in PyTorch
    return x - m


def _softmax_family(input, dim, dtype, who, log):
    _array(input, who)
    if dim is None:
        dim = _softmax_dim(input.ndim, who)
    x = input if dtype is None else input.astype(dtype)
    if x.ndim == 0:
        return _softmax_family(x.reshape(1), 0, None, who, log).reshape(())
    dim = _dim(dim, x.ndim, who)
    if _fused_ok(x):
        # one kernel per row (src/core/rows.cpp); its backward is the fused backward kernel
        return _core._softmax(x, dim, log)
    target = x.dtype
    half = _half(x)
    if half:
        x = x.astype(_core.float32)
    s = _stable_shift(x, dim)
    if log:
        out = s - _core.log(_core.exp(s).sum(axis=dim, keepdims=True))
    else:
        e = _core.exp(s)
        out = e / e.sum(axis=dim, keepdims=True)
    return out.astype(target) if half else out


def softmax(input, dim=None, dtype=None):
    """``exp(x - max) / sum(exp(x - max))`` along `dim` (stable for any magnitude)."""
    return _softmax_family(input, dim, dtype, _F + "softmax", log=False)


def log_softmax(input, dim=None, dtype=None):
    """``(x - max) - log(sum(exp(x - max)))`` along `dim` (stable for any magnitude)."""
    return _softmax_family(input, dim, dtype, _F + "log_softmax", log=True)


# =============================================================================================
# end of softmax / log_softmax
# =============================================================================================


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
        keep = _em().random.random(input.shape, "float32", device=input.device) >= p
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
    if scale_grad_by_freq or sparse:
        raise ValueError(
            f"{who}: scale_grad_by_freq=True and sparse=True are not supported by ember"
        )
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


def _host_out_of_range(idx, n, ignore):
    """The first index outside [0, n) (other than `ignore`) of a CPU array, or None."""
    from .._array import asnumpy

    a = asnumpy(idx)
    if a.min() >= 0 and a.max() < n:
        return None
    bad = (a < 0) | (a >= n)
    if ignore is not None:
        bad &= a != ignore
    return int(a[bad].reshape(-1)[0]) if bad.any() else None


def _embedding_renorm(weight, flat, max_norm, norm_type):
    em = _em()
    with no_grad():
        w = detach(weight)
        used = (flat[:, None] == _core.arange(w.shape[0], device=w.device)[None, :]).any(axis=0)
        norms = em.linalg.vector_norm(w, ord=norm_type, axis=1)
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


# ---------------------------------------------------------------------------------------------
# normalization
# ---------------------------------------------------------------------------------------------


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


# =============================================================================================
# layer_norm -- FUSED-KERNEL SWAP POINT
# =============================================================================================


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


# =============================================================================================
# end of layer_norm
# =============================================================================================


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x^2) + eps) * weight`` over the trailing `normalized_shape` dimensions;
    `eps` defaults to the dtype's machine epsilon (as PyTorch)."""
    who = _F + "rms_norm"
    _float_input(input, who)
    ns, axes = _trailing_axes(input, normalized_shape, who)
    _check_affine(weight, ns, who, "weight")
    eps = float(_em().finfo(input.dtype).eps) if eps is None else _real(eps, who, "eps")
    half = _half(input)
    x = input.astype(_core.float32) if half else input
    y = x / _core.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    if half:
        y = y.astype(input.dtype)
    if weight is not None:
        y = y * weight
    return y


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


# ---------------------------------------------------------------------------------------------
# losses
# ---------------------------------------------------------------------------------------------


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``(input - target)^2``, reduced."""
    who = _F + "mse_loss"
    _array(input, who)
    _array(target, who, "target")
    reduction = _legacy_reduction(size_average, reduce, reduction, who)
    _broadcast_target(input, target, who)
    d = input - target
    return _reduce(d * d, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``|input - target|``, reduced."""
    who = _F + "l1_loss"
    _array(input, who)
    _array(target, who, "target")
    reduction = _legacy_reduction(size_average, reduce, reduction, who)
    _broadcast_target(input, target, who)
    return _reduce(_core.abs(input - target), reduction)


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


# =============================================================================================
# cross_entropy -- FUSED-KERNEL SWAP POINT (log_softmax + gather + reduction in one pass)
# =============================================================================================


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


# =============================================================================================
# end of cross_entropy
# =============================================================================================


def _clamped_log(x):
    # log clamped at -100 as PyTorch's BCE; no NaN gradient at 0 (max picks the constant)
    return _core.maximum(_core.log(_core.maximum(x, 3.720075976020836e-44)), -100.0)


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
