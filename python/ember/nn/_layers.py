"""The layers of ember.nn: linear maps, activations, dropout, embedding, normalization, shape."""

from __future__ import annotations

import math
import numbers

from .. import _core
from .._core import ndarray
from . import functional as F
from . import init
from ._grad_mode import detach, no_grad
from ._module import Module
from ._parameter import Parameter

__all__ = [
    "GELU",
    "BatchNorm1d",
    "Bilinear",
    "Dropout",
    "Embedding",
    "Flatten",
    "Identity",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "RMSNorm",
    "ReLU",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "Tanh",
    "Unflatten",
]


def _float_dtype(dtype):
    dt = _core.float32 if dtype is None else _core.dtype(dtype)
    if dt.kind not in "fc":
        raise TypeError(f"ember.nn: parameters need a floating-point dtype, got {dt}")
    return dt


def _empty(shape, dtype, device):
    return _core.empty(shape, dtype=_float_dtype(dtype), device=device)


def _size(v, who, name, minimum=0):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{who}: {name} must be an int, got {type(v).__name__} {v!r}")
    if v < minimum:
        raise ValueError(f"{who}: {name} must be >= {minimum}, got {v}")
    return int(v)


def _check_array(layer, input):
    if not isinstance(input, ndarray):
        raise TypeError(f"{layer}: input must be an ember.ndarray, got {type(input).__name__}")


# ---------------------------------------------------------------------------------------------
# linear maps
# ---------------------------------------------------------------------------------------------


class Identity(Module):
    """Returns its input (arguments to the constructor are accepted and ignored)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``: weight (out_features, in_features) from
    ``kaiming_uniform_(a=sqrt(5))``, bias (out_features,) from U(-1/sqrt(in), 1/sqrt(in)), as
    PyTorch. Input (*, in_features), output (*, out_features). Parameters are float32 unless
    `dtype` says otherwise."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        who = "ember.nn.Linear"
        self.in_features = _size(in_features, who, "in_features")
        self.out_features = _size(out_features, who, "out_features")
        self.weight = Parameter(_empty((self.out_features, self.in_features), dtype, device))
        if bias:
            self.bias = Parameter(_empty((self.out_features,), dtype, device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def _name(self):
        return f"Linear({self.in_features}, {self.out_features})"

    def forward(self, input):
        _check_array(self._name(), input)
        shape = input.shape
        if not shape:
            raise ValueError(
                f"{self._name()}: input is 0-d; expected shape (*, {self.in_features})"
            )
        if shape[-1] != self.in_features:
            raise ValueError(
                f"{self._name()}: input has {shape[-1]} features in its last dimension, "
                f"expected {self.in_features} (input shape {shape})"
            )
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Bilinear(Module):
    """``y = x1^T A x2 + b``: weight (out, in1, in2) and bias (out,) from U(-1/sqrt(in1),
    1/sqrt(in1)), as PyTorch. Inputs (*, in1_features) and (*, in2_features)."""

    def __init__(
        self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None
    ):
        super().__init__()
        who = "ember.nn.Bilinear"
        self.in1_features = _size(in1_features, who, "in1_features")
        self.in2_features = _size(in2_features, who, "in2_features")
        self.out_features = _size(out_features, who, "out_features")
        shape = (self.out_features, self.in1_features, self.in2_features)
        self.weight = Parameter(_empty(shape, dtype, device))
        if bias:
            self.bias = Parameter(_empty((self.out_features,), dtype, device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.in1_features) if self.in1_features else 0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        name = f"Bilinear({self.in1_features}, {self.in2_features}, {self.out_features})"
        _check_array(name, input1)
        _check_array(name, input2)
        s1, s2 = input1.shape, input2.shape
        if not s1 or s1[-1] != self.in1_features or not s2 or s2[-1] != self.in2_features:
            raise ValueError(
                f"{name}: inputs have shapes {s1} and {s2}, expected (*, {self.in1_features}) "
                f"and (*, {self.in2_features})"
            )
        if s1[:-1] != s2[:-1]:
            raise ValueError(f"{name}: the inputs' leading dimensions differ: {s1} and {s2}")
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


# ---------------------------------------------------------------------------------------------
# shape
# ---------------------------------------------------------------------------------------------


class Flatten(Module):
    """Merges dimensions `start_dim` .. `end_dim` (inclusive) into one."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = int(start_dim)
        self.end_dim = int(end_dim)

    def forward(self, input):
        name = f"Flatten(start_dim={self.start_dim}, end_dim={self.end_dim})"
        _check_array(name, input)
        shape = input.shape
        n = max(len(shape), 1)
        s, e = self.start_dim, self.end_dim
        if not (-n <= s < n and -n <= e < n):
            raise IndexError(f"{name}: dimensions out of range for input shape {shape}")
        s, e = s % n, e % n
        if not shape:
            return input.reshape(1)
        if s > e:
            raise ValueError(f"{name}: start_dim comes after end_dim for input shape {shape}")
        return input.reshape(shape[:s] + (math.prod(shape[s : e + 1]),) + shape[e + 1 :])

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dimension `dim` into `unflattened_size` (one entry may be -1)."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim = int(dim)
        sizes = tuple(int(v) for v in unflattened_size)
        if sum(1 for v in sizes if v == -1) > 1 or any(v < -1 for v in sizes):
            raise ValueError(f"ember.nn.Unflatten: invalid unflattened_size {sizes}")
        self.unflattened_size = sizes

    def forward(self, input):
        name = f"Unflatten(dim={self.dim}, unflattened_size={self.unflattened_size})"
        _check_array(name, input)
        shape = input.shape
        n = len(shape)
        if not -n <= self.dim < n:
            raise IndexError(f"{name}: dim {self.dim} is out of range for input shape {shape}")
        d = self.dim % n
        sizes = list(self.unflattened_size)
        known = math.prod(v for v in sizes if v != -1)
        if -1 in sizes:
            if known == 0 or shape[d] % known:
                raise ValueError(
                    f"{name}: cannot split dimension {d} of size {shape[d]} into {tuple(sizes)} "
                    f"(input shape {shape})"
                )
            sizes[sizes.index(-1)] = shape[d] // known
        elif known != shape[d]:
            raise ValueError(
                f"{name}: unflattened_size {tuple(sizes)} has {known} elements, dimension {d} "
                f"of the input has {shape[d]} (input shape {shape})"
            )
        return input.reshape(shape[:d] + tuple(sizes) + shape[d + 1 :])

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


# ---------------------------------------------------------------------------------------------
# activations
# ---------------------------------------------------------------------------------------------


class ReLU(Module):
    """``max(x, 0)``."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """``x`` where positive, ``negative_slope * x`` elsewhere."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    """``x * Phi(x)`` (``approximate="none"``) or its tanh approximation (``"tanh"``)."""

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(
                f"ember.nn.GELU: approximate must be 'none' or 'tanh', got {approximate!r}"
            )
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)``."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``."""

    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    """``tanh(x)``."""

    def forward(self, input):
        return F.tanh(input)


class Softplus(Module):
    """``log(1 + exp(beta x)) / beta`` (``x`` where ``beta x > threshold``)."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmax(Module):
    """Softmax along `dim`."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """Log-softmax along `dim`."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Dropout(Module):
    """Zeroes elements with probability `p` while training (scaling the rest by 1/(1-p));
    the identity in eval mode."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


# ---------------------------------------------------------------------------------------------
# embedding
# ---------------------------------------------------------------------------------------------


class Embedding(Module):
    """A lookup table of `num_embeddings` vectors of size `embedding_dim`, initialized from
    N(0, 1) (the `padding_idx` row zeroed; it gets no gradient). Input: integer indices of any
    shape; output: ``input.shape + (embedding_dim,)``."""

    def __init__(
        self,
        num_embeddings,
        embedding_dim,
        padding_idx=None,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        sparse=False,
        _weight=None,
        _freeze=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        who = "ember.nn.Embedding"
        self.num_embeddings = _size(num_embeddings, who, "num_embeddings")
        self.embedding_dim = _size(embedding_dim, who, "embedding_dim")
        if padding_idx is not None:
            padding_idx = int(padding_idx)
            if not -self.num_embeddings <= padding_idx < self.num_embeddings:
                raise ValueError(
                    f"{who}: padding_idx {padding_idx} must be within num_embeddings "
                    f"({self.num_embeddings})"
                )
            if padding_idx < 0:
                padding_idx += self.num_embeddings
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(
                _empty((self.num_embeddings, self.embedding_dim), dtype, device),
                requires_grad=not _freeze,
            )
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (self.num_embeddings, self.embedding_dim):
                raise ValueError(
                    f"{who}: _weight shape {_weight.shape} does not match "
                    f"({self.num_embeddings}, {self.embedding_dim})"
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with no_grad():
                detach(self.weight)[self.padding_idx] = 0

    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze=True,
        padding_idx=None,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        sparse=False,
    ):
        """An Embedding whose weight is the 2-d array `embeddings` (frozen by default)."""
        if not isinstance(embeddings, ndarray) or embeddings.ndim != 2:
            raise ValueError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(
            rows,
            cols,
            padding_idx,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            sparse,
            _weight=embeddings,
            _freeze=freeze,
        )

    def forward(self, input):
        name = f"Embedding({self.num_embeddings}, {self.embedding_dim})"
        _check_array(name, input)
        if input.dtype.kind not in "iu":
            raise TypeError(f"{name}: input must have an integer dtype, got {input.dtype}")
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        return s


# ---------------------------------------------------------------------------------------------
# normalization
# ---------------------------------------------------------------------------------------------


def _normalized_shape(s, who):
    if isinstance(s, numbers.Integral) and not isinstance(s, bool):
        return (int(s),)
    t = tuple(int(v) for v in s)
    if not t:
        raise ValueError(f"{who}: normalized_shape must have at least one dimension")
    return t


def _check_trailing(name, input, ns):
    _check_array(name, input)
    if input.ndim < len(ns) or tuple(input.shape[input.ndim - len(ns) :]) != ns:
        raise ValueError(
            f"{name}: input shape {input.shape} does not end with the normalized shape {ns}"
        )


class LayerNorm(Module):
    """Normalizes over the trailing `normalized_shape` dimensions, then scales by `weight`
    (ones) and shifts by `bias` (zeros) when `elementwise_affine`."""

    def __init__(
        self,
        normalized_shape,
        eps=1e-5,
        elementwise_affine=True,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.normalized_shape = _normalized_shape(normalized_shape, "ember.nn.LayerNorm")
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_empty(self.normalized_shape, dtype, device))
            if bias:
                self.bias = Parameter(_empty(self.normalized_shape, dtype, device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):
        _check_trailing(f"LayerNorm({self.normalized_shape})", input, self.normalized_shape)
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class RMSNorm(Module):
    """``x / sqrt(mean(x^2) + eps) * weight`` over the trailing `normalized_shape`
    dimensions (`eps` None: the dtype's machine epsilon)."""

    def __init__(
        self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None
    ):
        super().__init__()
        self.normalized_shape = _normalized_shape(normalized_shape, "ember.nn.RMSNorm")
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_empty(self.normalized_shape, dtype, device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):
        _check_trailing(f"RMSNorm({self.normalized_shape})", input, self.normalized_shape)
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class BatchNorm1d(Module):
    """Batch normalization over (N, C) or (N, C, L) inputs: in training, each channel is
    normalized with the batch's statistics and the running statistics (buffers
    ``running_mean``, ``running_var``, ``num_batches_tracked``) are updated with `momentum`
    (None: a cumulative average); in eval mode the running statistics are used. `affine`
    adds a per-channel scale (ones) and shift (zeros)."""

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.num_features = _size(num_features, "ember.nn.BatchNorm1d", "num_features")
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        dt = _float_dtype(dtype)
        if affine:
            self.weight = Parameter(_empty((self.num_features,), dt, device))
            self.bias = Parameter(_empty((self.num_features,), dt, device))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer(
                "running_mean", _core.zeros((self.num_features,), dtype=dt, device=device)
            )
            self.register_buffer(
                "running_var", _core.ones((self.num_features,), dtype=dt, device=device)
            )
            self.register_buffer(
                "num_batches_tracked", _core.zeros((), dtype=_core.int64, device=device)
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            with no_grad():
                self.running_mean[...] = 0
                self.running_var[...] = 1
                self.num_batches_tracked[...] = 0

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    _ndims = (2, 3)  # the input ranks it takes (BatchNorm2d/3d: 4 and 5)

    def forward(self, input):
        name = f"{type(self).__name__}({self.num_features})"
        _check_array(name, input)
        if input.ndim not in self._ndims:
            want = " or ".join(f"{n}D" for n in self._ndims)
            raise ValueError(f"{name}: expected {want} input (got {input.ndim}D input)")
        if input.shape[1] != self.num_features:
            raise ValueError(
                f"{name}: input has {input.shape[1]} channels in dimension 1, expected "
                f"{self.num_features} (input shape {input.shape})"
            )
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked += 1
            if self.momentum is None:
                factor = 1.0 / float(int(self.num_batches_tracked))
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        if use_batch:
            n = input.size // self.num_features if self.num_features else 0
            if n <= 1:
                raise ValueError(
                    f"{name}: expected more than 1 value per channel when training, got input "
                    f"shape {input.shape}"
                )
        return F.batch_norm(
            input,
            self.running_mean if track else None,
            self.running_var if track else None,
            self.weight,
            self.bias,
            use_batch,
            factor,
            self.eps,
        )

    def extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, track_running_stats={self.track_running_stats}"
        )
