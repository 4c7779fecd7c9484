"""``ember.nn.SyncBatchNorm``: batch normalization whose training statistics are those of the
whole batch across the processes of an ``ember.distributed`` group.

In one process (no process group initialized, a group of size 1, or eval mode) it is
BatchNorm1d/2d/3d chosen by the input's rank. With a group of world size > 1 in training, the
per-channel sum and count, then the sum of squared deviations from the global mean, are
all-reduced (two-pass: the variance is not the difference of two large sums), and the backward
all-reduces the two per-channel sums it needs (sum g and sum g * x_hat), as PyTorch's
``SyncBatchNorm`` does; the weight and bias gradients stay local (DistributedDataParallel
averages them). Unlike PyTorch, CPU arrays sync too (through the "mpi" backend)."""

from __future__ import annotations

from .. import _core
from .._joining import concat as _concat
from ..autograd import Function
from ._grad_mode import no_grad
from ._layers import BatchNorm1d


def _all_reduce(t, group):
    from .. import distributed

    distributed.all_reduce(t, group=group)
    return t


def _channel_shape(x):
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


class _SyncBatchNormFn(Function):
    """y = (x - mean) / sqrt(var + eps) * weight + bias with the group's batch statistics."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps, group, stats_out):
        axes = (0, *range(2, x.ndim))
        shape = _channel_shape(x)
        c = x.shape[1]
        local_n = x.size // c if c else 0
        packed = _concat(
            [
                _core.sum(x, axis=axes),
                _core.full((1,), float(local_n), dtype=x.dtype, device=x.device),
            ]
        )
        packed = _all_reduce(packed, group)
        n = packed[c:]
        mean = packed[:c] / n
        centered = x - _core.reshape(mean, shape)
        var = _all_reduce(_core.sum(centered * centered, axis=axes), group) / n
        invstd = 1.0 / _core.sqrt(var + eps)
        xhat = centered * _core.reshape(invstd, shape)
        y = xhat
        if weight is not None:
            y = y * _core.reshape(weight, shape)
        if bias is not None:
            y = y + _core.reshape(bias, shape)
        stats_out.extend([mean, var, n])
        ctx.group, ctx.shape, ctx.axes = group, shape, axes
        ctx.has_w, ctx.has_b = weight is not None, bias is not None
        ctx.save_for_backward(xhat, invstd, n, weight if weight is not None else invstd)
        return y

    @staticmethod
    def backward(ctx, g):
        xhat, invstd, n, weight = ctx.saved_tensors
        shape, axes = ctx.shape, ctx.axes
        c = xhat.shape[1]
        sum_g = _core.sum(g, axis=axes)
        sum_gx = _core.sum(g * xhat, axis=axes)
        gw = sum_gx if ctx.has_w else None
        gb = sum_g if ctx.has_b else None
        both = _all_reduce(_concat([sum_g, sum_gx]), ctx.group) / n
        mean_g, mean_gx = both[:c], both[c:]
        scale = invstd * weight if ctx.has_w else invstd
        gx = (g - _core.reshape(mean_g, shape) - xhat * _core.reshape(mean_gx, shape)) * (
            _core.reshape(scale, shape)
        )
        return gx, gw, gb, None, None, None


class SyncBatchNorm(BatchNorm1d):
    """Batch normalization over (N, C, *) inputs with the statistics of the whole distributed
    batch (see the module's docstring); ``process_group`` None: the default group."""

    _ndims = tuple(range(2, 65))  # any (N, C, *) input

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        process_group=None,
        device=None,
        dtype=None,
    ):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _group_size(self):
        from .. import distributed

        if not distributed.is_initialized():
            return 1
        return distributed.get_world_size(self.process_group)

    def forward(self, input):
        name = f"SyncBatchNorm({self.num_features})"
        if not isinstance(input, _core.ndarray):
            raise TypeError(f"{name}: input must be an ember array, got {type(input).__name__}")
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        if not (use_batch and self.training) or self._group_size() <= 1:
            return super().forward(input)
        if input.shape[1] != self.num_features:
            raise ValueError(
                f"{name}: input has {input.shape[1]} channels in dimension 1, expected "
                f"{self.num_features} (input shape {input.shape})"
            )
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked += 1
            if self.momentum is None:
                factor = 1.0 / float(int(self.num_batches_tracked))
        stats = []
        y = _SyncBatchNormFn.apply(
            input, self.weight, self.bias, float(self.eps), self.process_group, stats
        )
        mean, var, n = stats
        if int(n[0]) <= 1:
            raise ValueError(
                f"{name}: expected more than 1 value per channel when training, got input "
                f"shape {input.shape} over the group"
            )
        if self.track_running_stats and self.running_mean is not None:
            with no_grad():
                unbiased = var * (n / (n - 1))
                rm, rv = self.running_mean, self.running_var
                rm[...] = (1 - factor) * rm + factor * mean.astype(rm.dtype)
                rv[...] = (1 - factor) * rv + factor * unbiased.astype(rv.dtype)
        return y

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm1d/2d/3d in it replaced by a SyncBatchNorm sharing its
        parameters, buffers and training mode (the module itself when it is one)."""
        out = module
        if isinstance(module, BatchNorm1d) and not isinstance(module, SyncBatchNorm):
            out = cls(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
            )
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
