"""ember.nn.functional's activations: relu, leaky_relu, gelu, sigmoid, logsigmoid, tanh, silu,
softplus, softmax and log_softmax."""

from __future__ import annotations

import math
import warnings

from .. import _core
from ..amp import FLOAT32, cast_policy
from ._functional_checks import (
    _F,
    _array,
    _dim,
    _float_input,
    _fused_ok,
    _half,
    _real,
)
from ._grad_mode import detach, needs_grad


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


# ---------------------------------------------------------------------------------------------
# softmax and log_softmax: a fused row kernel, and the composed path for what it does not take
# ---------------------------------------------------------------------------------------------


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
    # integer and complex inputs, which the fused kernel does not take
    s = _stable_shift(x, dim)
    if log:
        return s - _core.log(_core.exp(s).sum(axis=dim, keepdims=True))
    e = _core.exp(s)
    return e / e.sum(axis=dim, keepdims=True)


@cast_policy(FLOAT32)
def softmax(input, dim=None, dtype=None):
    """``exp(x - max) / sum(exp(x - max))`` along `dim` (stable for any magnitude)."""
    return _softmax_family(input, dim, dtype, _F + "softmax", log=False)


@cast_policy(FLOAT32)
def log_softmax(input, dim=None, dtype=None):
    """``(x - max) - log(sum(exp(x - max)))`` along `dim` (stable for any magnitude)."""
    return _softmax_family(input, dim, dtype, _F + "log_softmax", log=True)
