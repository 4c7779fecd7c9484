"""Stochastic weight averaging (PyTorch's ``torch.optim.swa_utils``): ``AveragedModel`` (running
equal or EMA averages of a model's parameters, optionally its buffers), ``SWALR`` (anneals each
group's rate to its ``swa_lr``) and ``update_bn`` (recomputes BatchNorm statistics with the
averaged weights)."""

from __future__ import annotations

import copy
import itertools
import math

from .. import _core
from ..nn._grad_mode import no_grad
from .lr_scheduler import LRScheduler, _check_optimizer, _int, _per_group

__all__ = ["SWALR", "get_ema_avg_fn", "get_ema_multi_avg_fn", "update_bn"]


def get_ema_avg_fn(decay=0.999):
    """``avg_fn`` of an exponential moving average: ``decay * avg + (1 - decay) * param``."""

    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_ema_multi_avg_fn(decay=0.999):
    """``multi_avg_fn`` of an exponential moving average (in place, all parameters at once)."""

    def ema_update(ema_param_list, current_param_list, _):
        for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
            p_ema[...] = decay * p_ema + (1 - decay) * p_model

    return ema_update


def _module_base():
    from ..nn import Module

    return Module


def _make_averaged_model():
    Module = _module_base()

    class AveragedModel(Module):
        """A copy of `module` whose parameters (and buffers, with `use_buffers`) are averaged by
        ``update_parameters(model)``: the running mean by default, or `avg_fn(avg, param,
        n_averaged)` / `multi_avg_fn(avg_list, param_list, n_averaged)`. Calls run the copy."""

        def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
            super().__init__()
            if not isinstance(model, Module):
                raise TypeError(
                    f"AveragedModel: model must be an ember.nn.Module, got {type(model).__name__}"
                )
            self.module = copy.deepcopy(model)
            if device is not None:
                self.module = self.module.to(device)
            self.register_buffer("n_averaged", _core.zeros((), dtype="int64"))
            self.avg_fn = avg_fn
            self.multi_avg_fn = multi_avg_fn
            self.use_buffers = use_buffers

        def forward(self, *args, **kwargs):
            return self.module(*args, **kwargs)

        def update_parameters(self, model):
            own = (itertools.chain(self.module.parameters(), self.module.buffers())
                   if self.use_buffers else self.module.parameters())  # fmt: skip
            theirs = (itertools.chain(model.parameters(), model.buffers())
                      if self.use_buffers else model.parameters())  # fmt: skip
            own, theirs = list(own), list(theirs)
            n = int(self.n_averaged.item())
            with no_grad():
                if n == 0:
                    for a, p in zip(own, theirs, strict=True):
                        a[...] = p.detach().to(a.device)
                elif self.multi_avg_fn is not None:
                    self.multi_avg_fn(own, [p.detach().to(a.device) for a, p in
                                            zip(own, theirs, strict=True)], n)  # fmt: skip
                else:
                    for a, p in zip(own, theirs, strict=True):
                        p = p.detach().to(a.device)
                        if self.avg_fn is None:
                            if a.dtype.kind == "f":
                                a[...] = a + (p - a) / (n + 1)
                        else:
                            a[...] = self.avg_fn(a, p, n)
                if not self.use_buffers:
                    for b_avg, b in zip(self.module.buffers(), model.buffers(), strict=True):
                        b_avg[...] = b.detach().to(b_avg.device)
            self.n_averaged[...] = n + 1

    return AveragedModel


_cache = {}


def __getattr__(name):  # ``AveragedModel``, a Module subclass, is made on first use
    if name == "AveragedModel":  # built on first use: ember.nn imports after ember.optim
        if name not in _cache:
            _cache[name] = _make_averaged_model()
        return _cache[name]
    raise AttributeError(f"module 'ember.optim.swa_utils' has no attribute {name!r}")


class SWALR(LRScheduler):
    """Anneals each group's rate from its current value to `swa_lr` over `anneal_epochs`
    epochs (``"cos"`` or ``"linear"``), then holds it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        who = "SWALR"
        _check_optimizer(optimizer, who)
        for lr, group in zip(_per_group(optimizer, swa_lr, who, "swa_lr"),
                             optimizer.param_groups, strict=True):  # fmt: skip
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"{who}: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}"
            )
        self.anneal_strategy = anneal_strategy
        self.anneal_epochs = _int(anneal_epochs, who, "anneal_epochs", 0)
        super().__init__(optimizer, last_epoch)

    def _anneal(self, t):
        return t if self.anneal_strategy == "linear" else (1 - math.cos(math.pi * t)) / 2

    def get_lr(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self._anneal(prev_t)
        prev = []
        for g in self.optimizer.param_groups:
            prev.append(g["swa_lr"] if prev_alpha == 1 else
                        (g["lr"] - prev_alpha * g["swa_lr"]) / (1 - prev_alpha))  # fmt: skip
        alpha = self._anneal(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(self.optimizer.param_groups, prev, strict=True)]  # fmt: skip


def update_bn(loader, model, device=None):
    """One pass over `loader` (batches, or (input, ...) tuples) in training mode, with each
    BatchNorm's statistics reset and accumulated as an equal average (momentum None)."""
    momenta = {}
    for m in model.modules():
        if hasattr(m, "reset_running_stats") and getattr(m, "running_mean", None) is not None:
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    with no_grad():
        for x in loader:
            if isinstance(x, (list, tuple)):
                x = x[0]
            if device is not None:
                x = x.to(device)
            model(x)
    for m, mom in momenta.items():
        m.momentum = mom
    model.train(was_training)
