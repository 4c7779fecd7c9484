"""The modules of ``_functional_extra.py``: ELU, SELU, CELU, PReLU, Hardswish, Hardsigmoid,
Hardtanh, ReLU6, Mish, Softmin, LogSigmoid, Threshold, CosineSimilarity, PairwiseDistance and the
losses CosineEmbeddingLoss, MarginRankingLoss, TripletMarginLoss, PoissonNLLLoss,
GaussianNLLLoss, CTCLoss (PyTorch's names, arguments and defaults)."""

from __future__ import annotations

from .. import _core
from . import _functional_activation as FA  # noqa: N812
from . import _functional_extra as FX  # noqa: N812
from ._loss import _Loss
from ._module import Module
from ._parameter import Parameter


def _simple(name, fn, doc, **defaults):
    """A module whose forward is fn(input, **its arguments)."""

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        names = list(defaults)
        if len(args) > len(names):
            raise TypeError(f"ember.nn.{name}: takes at most {len(names)} arguments")
        values = dict(defaults)
        values.update(zip(names, args, strict=False))
        for k, v in kwargs.items():
            if k not in values:
                raise TypeError(f"ember.nn.{name}: unexpected argument {k!r}")
            values[k] = v
        for k, v in values.items():
            setattr(self, k, v)

    def forward(self, input):
        return fn(input, **{k: getattr(self, k) for k in defaults if k != "inplace"})

    def extra_repr(self):
        return ", ".join(f"{k}={getattr(self, k)}" for k in defaults if k != "inplace")

    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "extra_repr": extra_repr, "__doc__": doc})  # fmt: skip


ELU = _simple(
    "ELU", FX.elu, "``x`` for x > 0, else ``alpha * (exp(x) - 1)``.", alpha=1.0, inplace=False
)
SELU = _simple("SELU", FX.selu, "Scaled ELU with the self-normalizing constants.", inplace=False)
CELU = _simple("CELU", FX.celu, "Continuously differentiable ELU.", alpha=1.0, inplace=False)
Hardswish = _simple("Hardswish", FX.hardswish, "``x * hardsigmoid(x)``.", inplace=False)
Hardsigmoid = _simple(
    "Hardsigmoid", FX.hardsigmoid, "``clip(x / 6 + 1 / 2, 0, 1)``.", inplace=False
)
Hardtanh = _simple("Hardtanh", FX.hardtanh, "``clip(x, min_val, max_val)``.", min_val=-1.0,
                   max_val=1.0, inplace=False)  # fmt: skip
ReLU6 = _simple("ReLU6", FX.relu6, "``clip(x, 0, 6)``.", inplace=False)
Mish = _simple("Mish", FX.mish, "``x * tanh(softplus(x))``.", inplace=False)
Softmin = _simple("Softmin", FX.softmin, "``softmax(-x)`` along `dim`.", dim=None)
LogSigmoid = _simple("LogSigmoid", FA.logsigmoid, "``log(sigmoid(x))``, computed stably.")
Threshold = _simple("Threshold", FX.threshold, "``x`` where x > threshold, else `value`.",
                    threshold=0.0, value=0.0, inplace=False)  # fmt: skip


class PReLU(Module):
    """``x`` for x >= 0, else ``weight * x``, with a learned weight (one, or one per channel)."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Parameter(_core.full((num_parameters,), init, dtype=dtype or "float32",
                                           device=device))  # fmt: skip

    def forward(self, input):
        return FX.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class CosineSimilarity(Module):
    """Cosine similarity of two inputs along `dim`."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return FX.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """The p-norm distance between the rows of two inputs."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return FX.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineEmbeddingLoss(_Loss):
    """``1 - cos`` for similar pairs (target 1), ``max(0, cos - margin)`` for dissimilar (-1)."""

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return FX.cosine_embedding_loss(
            input1, input2, target, self.margin, reduction=self.reduction
        )


class MarginRankingLoss(_Loss):
    """``max(0, -target * (x1 - x2) + margin)``."""

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return FX.margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """``max(d(a, p) - d(a, n) + margin, 0)``."""

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None, reduce=None,
                 reduction="mean"):  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return FX.triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps,
                                      self.swap, reduction=self.reduction)  # fmt: skip


class PoissonNLLLoss(_Loss):
    """Poisson negative log likelihood."""

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return FX.poisson_nll_loss(log_input, target, self.log_input, self.full, eps=self.eps,
                                   reduction=self.reduction)  # fmt: skip


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood with a predicted variance."""

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return FX.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


class CTCLoss(_Loss):
    """Connectionist temporal classification loss (see ``F.ctc_loss``)."""

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(None, None, reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return FX.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                           self.reduction, self.zero_infinity)  # fmt: skip


class EmbeddingBag(Module):
    """Sums, means or maxes of bags of embeddings without the intermediate (PyTorch's): input
    2-d (each row a bag) or 1-d with `offsets` (bag starts); `per_sample_weights` scale the rows
    (mode "sum"); `padding_idx` entries are left out of their bag."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):  # fmt: skip
        super().__init__()
        who = "ember.nn.EmbeddingBag"
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"{who}: mode must be 'sum', 'mean' or 'max', got {mode!r}")
        self.num_embeddings, self.embedding_dim, self.mode = num_embeddings, embedding_dim, mode
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
        if _weight is not None:
            self.weight = Parameter(_weight)
        else:
            from .. import random

            w = random._global.standard_normal(
                (num_embeddings, embedding_dim), dtype or "float32", device=device
            )
            self.weight = Parameter(w)
            if padding_idx is not None:
                from ._grad_mode import no_grad

                with no_grad():
                    self.weight[padding_idx] = 0

    def forward(self, input, offsets=None, per_sample_weights=None):
        from .._array import asnumpy
        from .._joining import stack

        who = "ember.nn.EmbeddingBag"
        if not isinstance(input, _core.ndarray) or input.dtype.kind not in "iu":
            raise TypeError(f"{who}: input must be an integer array")
        if per_sample_weights is not None and self.mode != "sum":
            raise ValueError(f"{who}: per_sample_weights need mode='sum'")
        if input.ndim == 2:
            if offsets is not None:
                raise ValueError(f"{who}: offsets are for 1-d input")
            b, n = input.shape
            bounds = [(i * n, (i + 1) * n) for i in range(b)]
            flat = input.reshape((-1,))
            psw = None if per_sample_weights is None else per_sample_weights.reshape((-1,))
        elif input.ndim == 1:
            if offsets is None:
                raise ValueError(f"{who}: 1-d input needs offsets")
            o = [int(v) for v in asnumpy(offsets).tolist()]
            ends = o[1:] + ([] if self.include_last_offset else [input.shape[0]])
            bounds = list(zip(o[: len(ends)], ends, strict=True))
            flat, psw = input, per_sample_weights
        else:
            raise ValueError(f"{who}: input must be 1-d or 2-d, got {input.ndim}-d")
        rows = self.weight[flat]
        if psw is not None:
            rows = rows * psw.reshape((-1, 1))
        keep = None
        if self.padding_idx is not None:
            keep = (flat != self.padding_idx).astype(rows.dtype).reshape((-1, 1))
            rows = rows * keep
        out = []
        for s, e in bounds:
            seg = rows[s:e]
            if e <= s:
                out.append(_core.zeros((self.embedding_dim,), dtype=rows.dtype, device=rows.device))
            elif self.mode == "sum":
                out.append(seg.sum(axis=0))
            elif self.mode == "mean":
                cnt = keep[s:e].sum() if keep is not None else float(e - s)
                out.append(seg.sum(axis=0) / _core.maximum(cnt, 1.0))
            else:
                out.append(seg.max(axis=0))
        return stack(out)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}"
