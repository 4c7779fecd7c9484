"""ember.nn.init: in-place initializations of parameters, with PyTorch's names and formulas.

Each ``*_`` function fills its array in place (without recording gradients) and returns it.
Random fills draw from ``ember.random``'s global generator, or from `generator` (an
``ember.random.Generator``) when given, on the array's device and in its dtype.
"""

from __future__ import annotations

import math
import numbers
import warnings

from .. import _core, linalg, random
from .._core import ndarray
from ._grad_mode import detach, no_grad

__all__ = [
    "calculate_gain",
    "constant_",
    "dirac_",
    "eye_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "orthogonal_",
    "sparse_",
    "trunc_normal_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
]

_I = "ember.nn.init."


def _tensor(t, who):
    if not isinstance(t, ndarray):
        raise TypeError(f"{who}: tensor must be an ember.ndarray, got {type(t).__name__}")
    return t


def _floating(t, who):
    _tensor(t, who)
    if t.dtype.kind not in "fc":
        raise TypeError(f"{who}: tensor must have a floating-point dtype, got {t.dtype}")
    return t


def _real(v, who, name):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{who}: {name} must be a real number, got {type(v).__name__} {v!r}")
    return float(v)


def _gen(generator, who):
    if generator is None:
        return random._global
    if not isinstance(generator, random.Generator):
        raise TypeError(
            f"{who}: generator must be an ember.random.Generator, got {type(generator).__name__}"
        )
    return generator


def _sample_dtype(t):
    # complex arrays get real samples (PyTorch fills real and imaginary parts; rarely used)
    return {"complex64": "float32", "complex128": "float64"}.get(t.dtype.name, t.dtype.name)


def _fill(t, values):
    with no_grad():
        detach(t)[...] = values
    return t


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for an activation: 1 for linear/conv/sigmoid, 5/3 for tanh, sqrt(2)
    for relu, sqrt(2 / (1 + slope^2)) for leaky_relu (slope = `param`, default 0.01), 3/4 for
    selu."""
    who = _I + "calculate_gain"
    linear_fns = {
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    }
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, bool) or not isinstance(param, numbers.Real):
            raise ValueError(f"{who}: negative_slope {param!r} is not a valid number")
        else:
            slope = float(param)
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"{who}: unsupported nonlinearity {nonlinearity!r}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fills with values from U(a, b)."""
    who = _I + "uniform_"
    _floating(tensor, who)
    a, b = _real(a, who, "a"), _real(b, who, "b")
    if tensor.size == 0:
        return tensor
    g = _gen(generator, who)
    return _fill(
        tensor, g.uniform(a, b, tensor.shape, dtype=_sample_dtype(tensor), device=tensor.device)
    )


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fills with values from N(mean, std^2)."""
    who = _I + "normal_"
    _floating(tensor, who)
    mean, std = _real(mean, who, "mean"), _real(std, who, "std")
    if std < 0:
        raise ValueError(f"{who}: std must be non-negative, got {std}")
    if tensor.size == 0:
        return tensor
    g = _gen(generator, who)
    return _fill(
        tensor, g.normal(mean, std, tensor.shape, dtype=_sample_dtype(tensor), device=tensor.device)
    )


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fills with values from N(mean, std^2) truncated to [a, b] (by rejection: out-of-range
    values are redrawn; far-tail intervals use a uniform proposal)."""
    who = _I + "trunc_normal_"
    _floating(tensor, who)
    mean, std = _real(mean, who, "mean"), _real(std, who, "std")
    a, b = _real(a, who, "a"), _real(b, who, "b")
    if std <= 0:
        raise ValueError(f"{who}: std must be positive, got {std}")
    if not a < b:
        raise ValueError(f"{who}: need a < b, got a={a}, b={b}")
    if tensor.size == 0:
        return tensor
    g = _gen(generator, who)
    dt, dev, shape = _sample_dtype(tensor), tensor.device, tensor.shape
    lo, hi = (a - mean) / std, (b - mean) / std  # the interval in standard units
    import statistics  # here: it costs ~4 ms of `import ember`

    nd = statistics.NormalDist()
    mass = nd.cdf(hi) - nd.cdf(lo)
    if mass >= 0.05:
        z = g.standard_normal(shape, dt, device=dev)
        for _ in range(200):
            out = (z < lo) | (z > hi)
            if not bool(out.any()):
                break
            z = _core.where(out, g.standard_normal(shape, dt, device=dev), z)
    else:
        # uniform proposal on [lo, hi], accepted with probability exp((m - z^2) / 2), where m
        # is the smallest z^2 on the interval
        m = 0.0 if lo <= 0 <= hi else min(lo * lo, hi * hi)
        z = g.uniform(lo, hi, shape, dtype=dt, device=dev)
        pending = _core.full(shape, True, dtype=_core.bool, device=dev)
        for _ in range(2000):
            u = g.random(shape, dt, device=dev)
            pending = pending & (u > _core.exp((m - z * z) * 0.5))  # accepted values stay
            if not bool(pending.any()):
                break
            z = _core.where(pending, g.uniform(lo, hi, shape, dtype=dt, device=dev), z)
    z = _core.clip(z * std + mean, a, b)
    return _fill(tensor, z)


def constant_(tensor, val):
    """Fills with `val`."""
    _tensor(tensor, _I + "constant_")
    return _fill(tensor, val)


def ones_(tensor):
    """Fills with ones."""
    return constant_(tensor, 1)


def zeros_(tensor):
    """Fills with zeros."""
    return constant_(tensor, 0)


def eye_(tensor):
    """Fills a 2-d array with the identity (ones on the main diagonal)."""
    who = _I + "eye_"
    _tensor(tensor, who)
    if tensor.ndim != 2:
        raise ValueError(f"{who}: only 2-d arrays are supported, got shape {tensor.shape}")
    n, m = tensor.shape
    return _fill(tensor, _core.eye(n, m, dtype=tensor.dtype, device=tensor.device))


def _calculate_fan_in_and_fan_out(tensor, who="ember.nn.init"):
    if tensor.ndim < 2:
        raise ValueError(
            f"{who}: fan in and fan out can not be computed for an array with fewer than 2 "
            f"dimensions (shape {tensor.shape})"
        )
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode, who):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{who}: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor, who)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot & Bengio, 2010)."""
    who = _I + "xavier_uniform_"
    _floating(tensor, who)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor, who)
    std = _real(gain, who, "gain") * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    who = _I + "xavier_normal_"
    _floating(tensor, who)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor, who)
    std = _real(gain, who, "gain") * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity, who):
    _floating(tensor, who)
    fan = _calculate_correct_fan(tensor, mode, who)
    gain = calculate_gain(nonlinearity, a)
    return gain / math.sqrt(fan) if fan else math.inf


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound) with ``bound = gain * sqrt(3 / fan)`` (He et al., 2015); `a` is the
    negative slope of a leaky_relu, `mode` picks fan_in (forward) or fan_out (backward)."""
    who = _I + "kaiming_uniform_"
    _floating(tensor, who)
    if tensor.size == 0:
        warnings.warn(f"{who}: initializing a zero-element array is a no-op", stacklevel=2)
        return tensor
    std = _kaiming_std(tensor, a, mode, nonlinearity, who)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2) with ``std = gain / sqrt(fan)`` (He et al., 2015)."""
    who = _I + "kaiming_normal_"
    _floating(tensor, who)
    if tensor.size == 0:
        warnings.warn(f"{who}: initializing a zero-element array is a no-op", stacklevel=2)
        return tensor
    std = _kaiming_std(tensor, a, mode, nonlinearity, who)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain=1.0, generator=None):
    """A (semi-)orthogonal matrix (Saxe et al., 2013): the array is seen as (shape[0], rest);
    Q of the QR factorization of a normal sample, with the signs fixed by R's diagonal."""
    who = _I + "orthogonal_"
    _floating(tensor, who)
    if tensor.ndim < 2:
        raise ValueError(f"{who}: only arrays with 2 or more dimensions are supported")
    if tensor.size == 0:
        return tensor
    gain = _real(gain, who, "gain")
    rows = tensor.shape[0]
    cols = tensor.size // rows
    g = _gen(generator, who)
    flat = g.standard_normal((rows, cols), _sample_dtype(tensor), device=tensor.device)
    if rows < cols:
        flat = flat.T.copy()
    q, r = linalg.qr(flat)
    d = _core.sign(linalg.diagonal(r))
    q = q * _core.where(d == 0, 1, d)
    if rows < cols:
        q = q.T
    return _fill(tensor, (q * gain).reshape(tensor.shape))


def dirac_(tensor, groups=1):
    """Fills a 3-, 4- or 5-d (convolution) weight with the Dirac delta: each of the first
    ``min(out_channels / groups, in_channels)`` output channels of each group passes its input
    channel through unchanged (the kernel's centre is 1, the rest 0)."""
    who = _I + "dirac_"
    _tensor(tensor, who)
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(f"{who}: only tensors with 3, 4, or 5 dimensions are supported")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise ValueError(f"{who}: groups must be a positive int, got {groups!r}")
    if tensor.shape[0] % groups:
        raise ValueError(f"{who}: dim 0 ({tensor.shape[0]}) must be divisible by groups ({groups})")
    per = tensor.shape[0] // groups
    centre = tuple(n // 2 for n in tensor.shape[2:])
    values = _core.zeros(tensor.shape, dtype=tensor.dtype, device="cpu")
    for g in range(groups):
        for d in range(min(per, tensor.shape[1])):
            values[(g * per + d, d) + centre] = 1
    return _fill(tensor, values.to(tensor.device))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fills a 2-d array with N(0, std^2) samples, then zeroes ``ceil(sparsity * rows)`` randomly
    chosen entries of each column (Martens, 2010)."""
    who = _I + "sparse_"
    _floating(tensor, who)
    if tensor.ndim != 2:
        raise ValueError(f"{who}: only tensors with 2 dimensions are supported")
    sparsity, std = _real(sparsity, who, "sparsity"), _real(std, who, "std")
    if not 0.0 <= sparsity <= 1.0:
        raise ValueError(f"{who}: sparsity must be in [0, 1], got {sparsity}")
    rows = tensor.shape[0]
    zeros = int(math.ceil(sparsity * rows))
    g = _gen(generator, who)
    sample = g.normal(0.0, std, tensor.shape, dtype=_sample_dtype(tensor), device=tensor.device)
    if zeros and tensor.size:
        u = g.random(tensor.shape, "float64", device=tensor.device)
        rank = u.argsort(axis=0).argsort(axis=0)  # a random permutation of the rows per column
        sample = _core.where(rank < zeros, 0.0, sample).astype(sample.dtype, copy=False)
    return _fill(tensor, sample)
