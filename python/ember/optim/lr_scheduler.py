"""ember.optim.lr_scheduler: learning-rate schedules with PyTorch's names and semantics.

A scheduler edits ``group["lr"]`` of its optimizer's param groups. It records
``group["initial_lr"]`` (the base learning rates, ``scheduler.base_lrs``) and counts
``last_epoch``; the constructor takes the first step (epoch 0), so call ``step()`` after each
epoch's (or batch's) ``optimizer.step()``. ``get_last_lr()`` gives the rates last set,
``state_dict()``/``load_state_dict()`` save and restore everything but the optimizer.
``ReduceLROnPlateau`` instead steps on a metric: ``scheduler.step(val_loss)``.
"""

from __future__ import annotations

import math
import numbers
import types
import warnings
from bisect import bisect_right
from collections import Counter

from ._optimizer import Optimizer

__all__ = [
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
]


def _check_optimizer(optimizer, who):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(
            f"{who}: optimizer must be an ember.optim.Optimizer, got {type(optimizer).__name__}"
        )
    for i, g in enumerate(optimizer.param_groups):
        if "lr" not in g:
            raise KeyError(f"{who}: param_groups[{i}] has no 'lr'")


def _int(v, who, name, minimum):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{who}: {name} must be an int, got {type(v).__name__} {v!r}")
    if v < minimum:
        raise ValueError(f"{who}: {name} must be >= {minimum}, got {v}")
    return int(v)


def _real(v, who, name):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{who}: {name} must be a real number, got {type(v).__name__} {v!r}")
    v = float(v)
    if not math.isfinite(v):
        raise ValueError(f"{who}: {name} must be finite, got {v}")
    return v


def _per_group(optimizer, value, who, name):
    """One value per param group: a list/tuple of that length, or one value for all."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{who}: expected {n} values for {name}, got {len(value)}")
        return [_real(v, who, name) for v in value]
    return [_real(value, who, name)] * n


class LRScheduler:
    """Base class: subclasses implement ``get_lr()`` (the new rates from the group's current
    ones, recursively, as PyTorch does) and may implement ``_get_closed_form_lr()`` (the rates
    as a function of ``last_epoch`` alone, used by the deprecated ``step(epoch)``)."""

    def __init__(self, optimizer, last_epoch=-1):
        who = type(self).__name__
        _check_optimizer(optimizer, who)
        last_epoch = _int(last_epoch, who, "last_epoch", -1)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"{who}: param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming an optimizer (last_epoch != -1)"
                    )
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self.step()

    def get_lr(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement get_lr()")

    def get_last_lr(self):
        """The learning rates of the groups as last set by this scheduler."""
        return self._last_lr

    def step(self, epoch=None):
        """Advances one epoch and sets the groups' ``"lr"``."""
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            warnings.warn(
                f"{type(self).__name__}.step(epoch) is deprecated (as in PyTorch): call step() "
                "once per epoch",
                UserWarning,
                stacklevel=2,
            )
            self._step_to(_int(epoch, type(self).__name__, "epoch", 0))
            return
        self._set(values)

    def _step_to(self, epoch):
        """Sets the rates of `epoch` (the closed form where the schedule has one)."""
        self.last_epoch = epoch
        closed = getattr(self, "_get_closed_form_lr", None)
        self._set(closed() if closed is not None else self.get_lr())

    def _set(self, values):
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self):
        """Everything but the optimizer, as a dict."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restores a ``state_dict()``."""
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """``lr = base_lr * lr_lambda(epoch)``; `lr_lambda` is one function or one per group.

    ``state_dict`` stores None for plain functions and the attributes of callable objects."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        who = "LambdaLR"
        _check_optimizer(optimizer, who)
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"{who}: expected {n} lr_lambdas, got {len(lr_lambda)}")
            fns = list(lr_lambda)
        else:
            fns = [lr_lambda] * n
        for f in fns:
            if not callable(f):
                raise TypeError(f"{who}: lr_lambda must be callable, got {f!r}")
        self.optimizer = optimizer
        self.lr_lambdas = fns
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [
            None if _is_function(f) else dict(vars(f)) if hasattr(f, "__dict__") else None
            for f in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        lambdas = state.pop("lr_lambdas", None)
        self.__dict__.update(state)
        if lambdas is not None:
            for f, saved in zip(self.lr_lambdas, lambdas, strict=False):
                if saved is not None:
                    vars(f).update(saved)

    def get_lr(self):
        return [
            base * f(self.last_epoch)
            for f, base in zip(self.lr_lambdas, self.base_lrs, strict=True)
        ]


def _is_function(f):
    return isinstance(f, (types.FunctionType, types.BuiltinFunctionType, types.MethodType))


class StepLR(LRScheduler):
    """Multiplies the rates by `gamma` every `step_size` epochs:
    ``lr = base_lr * gamma ** (epoch // step_size)``."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = _int(step_size, "StepLR", "step_size", 1)
        self.gamma = _real(gamma, "StepLR", "gamma")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [g["lr"] for g in self.optimizer.param_groups]
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        k = self.last_epoch // self.step_size
        return [base * self.gamma**k for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiplies the rates by `gamma` at each epoch in `milestones` (a milestone listed twice
    counts twice): ``lr = base_lr * gamma ** (number of milestones <= epoch)``."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        try:
            ms = list(milestones)
        except TypeError:
            raise TypeError(
                f"MultiStepLR: milestones must be a list of ints, got {milestones!r}"
            ) from None
        self.milestones = Counter(_int(m, "MultiStepLR", "milestones", 0) for m in ms)
        self.gamma = _real(gamma, "MultiStepLR", "gamma")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return [g["lr"] for g in self.optimizer.param_groups]
        f = self.gamma ** self.milestones[self.last_epoch]
        return [g["lr"] * f for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        ms = sorted(self.milestones.elements())
        k = bisect_right(ms, self.last_epoch)
        return [base * self.gamma**k for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiplies the rates by `gamma` every epoch: ``lr = base_lr * gamma ** epoch``."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = _real(gamma, "ExponentialLR", "gamma")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [g["lr"] for g in self.optimizer.param_groups]
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the base rate to `eta_min` over `T_max` epochs (and back up over
    the next `T_max`, periodically): ``lr = eta_min + (base_lr - eta_min) * (1 + cos(pi *
    epoch / T_max)) / 2``, computed recursively from the current rate as PyTorch does (so a
    rate changed by hand is followed)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = _int(T_max, "CosineAnnealingLR", "T_max", 1)
        self.eta_min = _real(eta_min, "CosineAnnealingLR", "eta_min")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e, t, lo = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if e == 0:
            return [g["lr"] for g in groups]
        if self._step_count == 1 and e > 0:
            return [lo + (b - lo) * (1 + math.cos(e * math.pi / t)) / 2 for b in self.base_lrs]
        if (e - 1 - t) % (2 * t) == 0:
            return [
                g["lr"] + (b - lo) * (1 - math.cos(math.pi / t)) / 2
                for b, g in zip(self.base_lrs, groups, strict=True)
            ]
        ratio = (1 + math.cos(math.pi * e / t)) / (1 + math.cos(math.pi * (e - 1) / t))
        return [ratio * (g["lr"] - lo) + lo for g in groups]

    def _get_closed_form_lr(self):
        e, t, lo = self.last_epoch, self.T_max, self.eta_min
        return [lo + (b - lo) * (1 + math.cos(math.pi * e / t)) / 2 for b in self.base_lrs]


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin, 2017), stepped once per batch.

    The rate rises from ``max_lr / div_factor`` to `max_lr` over the first `pct_start` of
    `total_steps` (or ``epochs * steps_per_epoch``), then falls to ``initial_lr /
    final_div_factor``; with `three_phase` it falls back to the initial rate symmetrically first
    and only then to the minimum. `anneal_strategy` is ``"cos"`` or ``"linear"``. With
    `cycle_momentum` the momentum moves inversely between `max_momentum` and `base_momentum`:
    ``group["momentum"]``, or ``group["betas"][0]`` for optimizers whose defaults have
    ``"betas"`` (Adam-like). Stepping past `total_steps` raises ValueError.
    """

    def __init__(
        self,
        optimizer,
        max_lr,
        total_steps=None,
        epochs=None,
        steps_per_epoch=None,
        pct_start=0.3,
        anneal_strategy="cos",
        cycle_momentum=True,
        base_momentum=0.85,
        max_momentum=0.95,
        div_factor=25.0,
        final_div_factor=1e4,
        three_phase=False,
        last_epoch=-1,
    ):
        who = "OneCycleLR"
        _check_optimizer(optimizer, who)
        if total_steps is not None:
            self.total_steps = _int(total_steps, who, "total_steps", 1)
        elif epochs is not None and steps_per_epoch is not None:
            e = _int(epochs, who, "epochs", 1)
            s = _int(steps_per_epoch, who, "steps_per_epoch", 1)
            self.total_steps = e * s
        else:
            raise ValueError(f"{who}: define either total_steps or (epochs and steps_per_epoch)")
        pct_start = _real(pct_start, who, "pct_start")
        if not 0.0 <= pct_start <= 1.0:
            raise ValueError(f"{who}: pct_start must be in [0, 1], got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"{who}: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}"
            )
        div_factor = _real(div_factor, who, "div_factor")
        final_div_factor = _real(final_div_factor, who, "final_div_factor")
        if div_factor <= 0 or final_div_factor <= 0:
            raise ValueError(f"{who}: div_factor and final_div_factor must be positive")
        self.anneal_strategy = anneal_strategy
        self.three_phase = bool(three_phase)
        n = self.total_steps
        if self.three_phase:
            self._schedule_phases = [
                {
                    "end_step": float(pct_start * n) - 1,
                    "start_lr": "initial_lr",
                    "end_lr": "max_lr",
                    "start_momentum": "max_momentum",
                    "end_momentum": "base_momentum",
                },
                {
                    "end_step": float(2 * pct_start * n) - 2,
                    "start_lr": "max_lr",
                    "end_lr": "initial_lr",
                    "start_momentum": "base_momentum",
                    "end_momentum": "max_momentum",
                },
                {
                    "end_step": n - 1,
                    "start_lr": "initial_lr",
                    "end_lr": "min_lr",
                    "start_momentum": "max_momentum",
                    "end_momentum": "max_momentum",
                },
            ]
        else:
            self._schedule_phases = [
                {
                    "end_step": float(pct_start * n) - 1,
                    "start_lr": "initial_lr",
                    "end_lr": "max_lr",
                    "start_momentum": "max_momentum",
                    "end_momentum": "base_momentum",
                },
                {
                    "end_step": n - 1,
                    "start_lr": "max_lr",
                    "end_lr": "min_lr",
                    "start_momentum": "base_momentum",
                    "end_momentum": "max_momentum",
                },
            ]
        max_lrs = _per_group(optimizer, max_lr, who, "max_lr")
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups, strict=True):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = bool(cycle_momentum)
        if self.cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    f"{who}: cycle_momentum needs an optimizer with 'momentum' or 'betas' in "
                    "its defaults (pass cycle_momentum=False)"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            maxes = _per_group(optimizer, max_momentum, who, "max_momentum")
            bases = _per_group(optimizer, base_momentum, who, "base_momentum")
            if last_epoch == -1:
                for hi, lo, group in zip(maxes, bases, optimizer.param_groups, strict=True):
                    if self.use_beta1:
                        group["betas"] = (hi, *group["betas"][1:])
                    else:
                        group["momentum"] = hi
                    group["max_momentum"] = hi
                    group["base_momentum"] = lo
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, pct):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"OneCycleLR: tried to step {step} times; the specified number of total steps "
                f"is {self.total_steps}"
            )
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step <= end_step or i == last:
                    pct = (step - start_step) / (end_step - start_step)
                    lr = self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        mom = self._anneal(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                        )
                    break
                start_step = end_step
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (mom, *group["betas"][1:])
                else:
                    group["momentum"] = mom
        return lrs


class ReduceLROnPlateau(LRScheduler):
    """Multiplies the rates by `factor` when a metric stops improving: ``step(metric)`` after
    each evaluation.

    `mode` ``"min"`` (lower is better) or ``"max"``. An epoch improves on the best so far when
    the metric beats it by more than `threshold`: relatively (``threshold_mode="rel"``: below
    ``best * (1 - threshold)`` in min mode, above ``best * (1 + threshold)`` in max mode) or
    absolutely (``"abs"``: ``best -/+ threshold``). After more than `patience` epochs without
    improvement the rates drop (never below `min_lr`, one value or one per group; changes
    smaller than `eps` are skipped), then `cooldown` epochs pass before counting again.
    """

    def __init__(
        self,
        optimizer,
        mode="min",
        factor=0.1,
        patience=10,
        threshold=1e-4,
        threshold_mode="rel",
        cooldown=0,
        min_lr=0,
        eps=1e-8,
    ):
        who = "ReduceLROnPlateau"
        _check_optimizer(optimizer, who)
        factor = _real(factor, who, "factor")
        if factor >= 1.0:
            raise ValueError(f"{who}: factor should be < 1.0, got {factor}")
        if factor < 0.0:
            raise ValueError(f"{who}: factor must not be negative, got {factor}")
        self.factor = factor
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            self.default_min_lr = None
            self.min_lrs = _per_group(optimizer, list(min_lr), who, "min_lr")
        else:
            self.default_min_lr = _real(min_lr, who, "min_lr")
            self.min_lrs = [self.default_min_lr] * len(optimizer.param_groups)
        self.patience = _int(patience, who, "patience", 0)
        self.cooldown = _int(cooldown, who, "cooldown", 0)
        self.threshold = _real(threshold, who, "threshold")
        self.eps = _real(eps, who, "eps")
        self.cooldown_counter = 0
        self.mode = mode
        self.threshold_mode = threshold_mode
        self.best = None
        self.num_bad_epochs = None
        self.mode_worse = None
        self.last_epoch = 0
        self._last_lr = [g["lr"] for g in optimizer.param_groups]
        self._init_is_better(mode, threshold_mode)
        self._reset()

    def _init_is_better(self, mode, threshold_mode):
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(
                f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}"
            )
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode, self.threshold_mode = mode, threshold_mode

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def is_better(self, a, best):
        t = self.threshold
        if self.mode == "min":
            return a < (best * (1.0 - t) if self.threshold_mode == "rel" else best - t)
        return a > (best * (t + 1.0) if self.threshold_mode == "rel" else best + t)

    def step(self, metrics, epoch=None):
        """Records `metrics` (a number or a 0-d array) for this epoch and reduces the rates
        when it has not improved for more than `patience` epochs."""
        try:
            current = float(metrics)
        except (TypeError, ValueError):
            raise TypeError(
                f"ReduceLROnPlateau.step: metrics must be a number, got {metrics!r}"
            ) from None
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(
                "ReduceLROnPlateau.step(metrics, epoch) is deprecated (as in PyTorch)",
                UserWarning,
                stacklevel=2,
            )
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def _reduce_lr(self):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    "ReduceLROnPlateau: the optimizer's number of param groups changed and "
                    "min_lr was given per group"
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for i, g in enumerate(groups):
            old = float(g["lr"])
            new = max(old * self.factor, self.min_lrs[i])
            if old - new > self.eps:
                g["lr"] = new

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold_mode)


def _fraction(v, who, name, lo, hi, lo_open=False):
    v = _real(v, who, name)
    if not (lo < v if lo_open else lo <= v) or v > hi:
        raise ValueError(f"{who}: {name} must be in {'(' if lo_open else '['}{lo}, {hi}], got {v}")
    return v


class LinearLR(LRScheduler):
    """Scales the rates linearly from ``start_factor`` to ``end_factor`` over `total_iters`
    epochs, then keeps them (PyTorch's warm-up schedule)."""

    def __init__(
        self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1
    ):
        who = "LinearLR"
        self.start_factor = _fraction(start_factor, who, "start_factor", 0, 1, lo_open=True)
        self.end_factor = _fraction(end_factor, who, "end_factor", 0, 1)
        self.total_iters = _int(total_iters, who, "total_iters", 0)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e, a, b, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        if e == 0:
            return [lr * a for lr in lrs]
        if e > n:
            return lrs
        return [lr * (1 + (b - a) / (n * a + (e - 1) * (b - a))) for lr in lrs]

    def _get_closed_form_lr(self):
        e, a, b, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
        f = a + (b - a) * min(n, e) / n if n else b
        return [base * f for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """Multiplies the rates by `factor` for the first `total_iters` epochs."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        self.factor = _fraction(factor, "ConstantLR", "factor", 0, 1)
        self.total_iters = _int(total_iters, "ConstantLR", "total_iters", 0)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        if self.last_epoch == 0:
            return [lr * self.factor for lr in lrs]
        if self.last_epoch != self.total_iters:
            return lrs
        return [lr / self.factor for lr in lrs]

    def _get_closed_form_lr(self):
        f = self.factor if self.last_epoch < self.total_iters else 1.0
        return [base * f for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """``lr = base_lr * (1 - min(epoch, total_iters) / total_iters) ** power``."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = _int(total_iters, "PolynomialLR", "total_iters", 1)
        self.power = _real(power, "PolynomialLR", "power")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e, n = self.last_epoch, self.total_iters
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        if e == 0 or e > n:
            return lrs
        decay = ((1.0 - e / n) / (1.0 - (e - 1) / n)) ** self.power
        return [lr * decay for lr in lrs]

    def _get_closed_form_lr(self):
        f = (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
        return [base * f for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the base rates to `eta_min` over `T_0` epochs, restarting; each
    period `T_mult` times the last. ``step(epoch)`` takes fractional epochs (batch steps)."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):  # noqa: N803
        who = "CosineAnnealingWarmRestarts"
        self.T_0 = self.T_i = _int(T_0, who, "T_0", 1)
        self.T_mult = _int(T_mult, who, "T_mult", 1)
        self.eta_min = _real(eta_min, who, "eta_min")
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        c = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (base - self.eta_min) * c for base in self.base_lrs]

    def step(self, epoch=None):
        """One epoch on, or to `epoch` (a float: a fraction of an epoch)."""
        self._step_count += 1
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        else:
            epoch = _real(epoch, "CosineAnnealingWarmRestarts", "epoch")
            if epoch < 0:
                raise ValueError(f"CosineAnnealingWarmRestarts: epoch must be >= 0, got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    k = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**k - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**k
            else:
                self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        self._set(self.get_lr())


class SequentialLR(LRScheduler):
    """Runs `schedulers` one after another, switching at the epochs in `milestones` (each new
    one starts from its epoch 0)."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        who = "SequentialLR"
        _check_optimizer(optimizer, who)
        schedulers = list(schedulers)
        if not schedulers:
            raise ValueError(f"{who}: expects at least one scheduler")
        for i, s in enumerate(schedulers):
            if not isinstance(s, LRScheduler) or isinstance(s, ReduceLROnPlateau):
                raise TypeError(f"{who}: schedulers[{i}] is not an epoch-based LRScheduler")
            if s.optimizer is not optimizer:
                raise ValueError(
                    f"{who}: schedulers[{i}] belongs to another optimizer than the one given"
                )
        milestones = [_int(m, who, "milestones", 1) for m in milestones]
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                f"{who}: expects {len(schedulers) - 1} milestones for {len(schedulers)} "
                f"schedulers, got {len(milestones)}"
            )
        self.optimizer = optimizer
        self._schedulers, self._milestones = schedulers, milestones
        self.last_epoch = _int(last_epoch, who, "last_epoch", -1) + 1
        self._step_count = 1
        for group in optimizer.param_groups:  # undo the constructors' first steps
            group["lr"] = group["initial_lr"]
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        schedulers[0]._step_to(0)
        self._last_lr = schedulers[0].get_last_lr()

    def step(self, epoch=None):
        self._step_count += 1
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        s = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            s._step_to(0)
        else:
            s.step()
        self._last_lr = s.get_last_lr()

    def state_dict(self):
        d = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        d["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return d

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        for s, sd in zip(self._schedulers, state_dict.pop("_schedulers"), strict=True):
            s.load_state_dict(sd)
        self.__dict__.update(state_dict)


class ChainedScheduler(LRScheduler):
    """Steps every scheduler of `schedulers` at each ``step()`` (their effects compose)."""

    def __init__(self, schedulers, optimizer=None):
        schedulers = list(schedulers)
        if not schedulers:
            raise ValueError("ChainedScheduler: expects at least one scheduler")
        self.optimizer = optimizer if optimizer is not None else schedulers[0].optimizer
        for i, s in enumerate(schedulers):
            if s.optimizer is not self.optimizer:
                raise ValueError(f"ChainedScheduler: schedulers[{i}] belongs to another optimizer")
        self._schedulers = schedulers
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def step(self, epoch=None):
        for s in self._schedulers:
            s.step()
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def state_dict(self):
        return {"_schedulers": [s.state_dict() for s in self._schedulers]}

    def load_state_dict(self, state_dict):
        for s, sd in zip(self._schedulers, state_dict["_schedulers"], strict=True):
            s.load_state_dict(sd)
