"""``CyclicLR`` (Smith, 2017), PyTorch's semantics; exposed as
``ember.optim.lr_scheduler.CyclicLR``."""

from __future__ import annotations

import math

from .lr_scheduler import LRScheduler, _check_optimizer, _int, _per_group, _real

__all__ = ["CyclicLR"]


class CyclicLR(LRScheduler):
    """The rate cycles between `base_lr` and `max_lr`: up over `step_size_up` steps, down over
    `step_size_down` (default the same), stepped once per batch. `mode` ``"triangular"`` keeps
    the amplitude, ``"triangular2"`` halves it each cycle, ``"exp_range"`` scales it by
    ``gamma**step``; a custom `scale_fn` with `scale_mode` ``"cycle"`` or ``"iterations"``
    replaces the mode. With `cycle_momentum` the momentum (``group["momentum"]``, or
    ``betas[0]`` for Adam-like optimizers) moves inversely between `max_momentum` and
    `base_momentum`."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9,
                 last_epoch=-1):  # fmt: skip
        who = "CyclicLR"
        _check_optimizer(optimizer, who)
        base_lrs = _per_group(optimizer, base_lr, who, "base_lr")
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                group["lr"] = lr
        self.max_lrs = _per_group(optimizer, max_lr, who, "max_lr")
        up = float(_int(step_size_up, who, "step_size_up", 1))
        down = float(_int(step_size_down, who, "step_size_down", 1)) if step_size_down else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(f"{who}: mode is invalid and scale_fn is None, got mode={mode!r}")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(
                f"{who}: scale_mode must be 'cycle' or 'iterations', got {scale_mode!r}"
            )
        self.mode = mode
        self.gamma = _real(gamma, who, "gamma")
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else (
            "iterations" if mode == "exp_range" else "cycle"
        )  # fmt: skip
        self.cycle_momentum = bool(cycle_momentum)
        if self.cycle_momentum:
            d = getattr(optimizer, "defaults", {})
            if "momentum" not in d and "betas" not in d:
                raise ValueError(
                    f"{who}: optimizer must support momentum or beta1 with cycle_momentum enabled"
                )
            self.use_beta1 = "betas" in d
            self.base_momentums = _per_group(optimizer, base_momentum, who, "base_momentum")
            self.max_momentums = _per_group(optimizer, max_momentum, who, "max_momentum")
            if last_epoch == -1:
                for m, group in zip(self.max_momentums, optimizer.param_groups, strict=True):
                    self._set_momentum(group, m)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _set_momentum(self, group, m):
        if self.use_beta1:
            group["betas"] = (m, *group["betas"][1:])
        else:
            group["momentum"] = m

    def scale_fn(self, x):
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        s = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [
            b + (m - b) * scale_factor * s for b, m in zip(self.base_lrs, self.max_lrs, strict=True)
        ]
        if self.cycle_momentum:
            pairs = zip(self.base_momentums, self.max_momentums, strict=True)
            moms = [mx - (mx - b) * scale_factor * s for b, mx in pairs]
            for group, m in zip(self.optimizer.param_groups, moms, strict=True):
                self._set_momentum(group, m)
        return lrs

    def state_dict(self):
        d = super().state_dict()
        d.pop("_scale_fn_custom", None)  # functions do not pickle (PyTorch drops them too)
        return d
