"""The concrete optimizers: SGD, Adam, AdamW, RMSprop, Adagrad (PyTorch's names, defaults and
formulas). Each ``step()`` gathers a param group's parameters with gradients and their state
into lists and calls the group's multi-tensor update in ``_functional``."""

from __future__ import annotations

import functools
import numbers

from .. import _core
from .. import cuda as _cuda
from ..nn._grad_mode import enable_grad, no_grad
from . import _functional
from ._optimizer import Optimizer

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "RMSprop"]


def _number(v, name, minimum=0.0, who=""):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{who}: {name} must be a real number, got {type(v).__name__} {v!r}")
    if not v >= minimum:
        raise ValueError(f"Invalid {name} value: {v}")
    return v


def _check_lr(lr, who):
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real):
        raise TypeError(f"{who}: lr must be a real number, got {type(lr).__name__} {lr!r}")
    if not lr >= 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_betas(betas, who):
    try:
        b1, b2 = betas
    except (TypeError, ValueError):
        raise TypeError(f"{who}: betas must be a pair of numbers, got {betas!r}") from None
    for i, b in enumerate((b1, b2)):
        if isinstance(b, bool) or not isinstance(b, numbers.Real):
            raise TypeError(f"{who}: betas must be a pair of numbers, got {betas!r}")
        if not 0.0 <= b < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {b}")


def _hyperparameters(opt):
    return [[(k, v) for k, v in g.items() if k != "params"] for g in opt.param_groups]


def _step_fn(step):
    """Wraps step(): no_grad around the update, enable_grad around the closure."""

    @functools.wraps(step)
    def wrapper(self, closure=None):
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            step(self)
        if _cuda.is_current_stream_capturing():  # replays are valid while these stay the same
            _cuda._capture_guard(functools.partial(_hyperparameters, self))
        return loss

    return wrapper


def _with_grads(group):
    """The group's parameters that have a gradient, and those gradients."""
    params, grads = [], []
    for p in group["params"]:
        g = getattr(p, "grad", None)
        if g is not None:
            params.append(p)
            grads.append(g)
    return params, grads


def _zero_state(state, p, names):
    """`state` with a step count and, for each of `names` it lacks, zeros like `p`."""
    state.setdefault("step", 0.0)
    for n in names:
        if n not in state:
            state[n] = _core.zeros(p.shape, dtype=p.dtype, device=p.device)
    return state


def _advance(state):
    step = state.get("step", 0.0)
    state["step"] = float(step) + 1.0  # a loaded state may hold a 0-d array
    return state["step"]


def _advance_on_device(state, p):
    """capturable=True: the step count is a 0-d float32 array on p's device, incremented there
    (a CUDA graph's replay advances it; no host read)."""
    t = state.get("step", 0.0)
    if not (
        isinstance(t, _core.ndarray) and t.dtype == _core.float32 and t.device == p.device
        and t.ndim == 0
    ):  # fmt: skip
        t = _core.full((), float(t), dtype=_core.float32, device=p.device)
        state["step"] = t
    t += 1.0
    return t


def _first_step_not_capturable(opt):
    """A first momentum step initialises the buffers (a different update from the later steps):
    capturing it in a CUDA graph would replay the initialisation at every step."""
    if _cuda.is_current_stream_capturing():
        raise RuntimeError(
            f"ember.optim.{type(opt).__name__}.step: the first step with momentum creates the "
            "momentum buffers and cannot be captured in a CUDA graph; run one step before the "
            "capture (a warm-up)"
        )


def _not_capturable(opt):
    """PyTorch's error for a step captured in a CUDA graph without capturable=True (its bias
    corrections would be fixed at the values of the capture)."""
    if _cuda.is_current_stream_capturing():
        name = type(opt).__name__
        if any(g.get("capturable") for g in opt.param_groups) and name not in ("Adam", "AdamW"):
            raise RuntimeError(
                f"ember.optim.{name}.step cannot be captured in a CUDA graph: its update uses "
                "host-side state of each step (capturable=True is supported by Adam and AdamW)"
            )
        raise RuntimeError(
            f"Attempting CUDA graph capture of step() for an instance of {name} but "
            "param_groups' capturable is False: construct it with capturable=True"
            + ("" if name in ("Adam", "AdamW") else " (Adam and AdamW support it)")
        )


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum (``dampening``, ``nesterov``),
    L2 ``weight_decay`` and ``maximize``. PyTorch's defaults (lr=1e-3)."""

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        *,
        maximize=False,
        foreach=None,
        differentiable=False,
        fused=None,
    ):
        who = "ember.optim.SGD"
        _check_lr(lr, who)
        _number(momentum, "momentum", who=who)
        _number(weight_decay, "weight_decay", who=who)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            foreach=foreach,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)

    @_step_fn
    def step(self):
        for group in self.param_groups:
            params, grads = _with_grads(group)
            if not params:
                continue
            bufs = [self.state[p].get("momentum_buffer") for p in params]
            if group["momentum"] != 0 and any(b is None for b in bufs):
                _first_step_not_capturable(self)
            _functional.sgd(
                params,
                grads,
                bufs,
                lr=group["lr"],
                weight_decay=group["weight_decay"],
                momentum=group["momentum"],
                dampening=group["dampening"],
                nesterov=group["nesterov"],
                maximize=group["maximize"],
            )
            if group["momentum"] != 0:
                for p, b in zip(params, bufs, strict=True):
                    self.state[p]["momentum_buffer"] = b


class Adam(Optimizer):
    """Adam (with ``amsgrad``, L2 ``weight_decay``, ``maximize``); PyTorch's defaults
    (lr=1e-3, betas=(0.9, 0.999), eps=1e-8)."""

    _decoupled = False

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        amsgrad=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
        fused=None,
    ):
        who = f"ember.optim.{type(self).__name__}"
        _check_lr(lr, who)
        _number(eps, "epsilon", who=who)
        _check_betas(betas, who)
        _number(weight_decay, "weight_decay", who=who)
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)

    @_step_fn
    def step(self):
        for group in self.param_groups:
            params, grads = _with_grads(group)
            if not params:
                continue
            amsgrad = group["amsgrad"]
            capturable = group.get("capturable", False)
            if not capturable:
                _not_capturable(self)
            exp_avgs, exp_avg_sqs, max_sqs, steps = [], [], [], []
            for p in params:
                names = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if amsgrad else ())
                st = _zero_state(self.state[p], p, names)
                exp_avgs.append(st["exp_avg"])
                exp_avg_sqs.append(st["exp_avg_sq"])
                max_sqs.append(st.get("max_exp_avg_sq"))
                steps.append(_advance_on_device(st, p) if capturable else _advance(st))
            beta1, beta2 = group["betas"]
            _functional.adam(
                params,
                grads,
                exp_avgs,
                exp_avg_sqs,
                max_sqs,
                steps,
                amsgrad=amsgrad,
                beta1=beta1,
                beta2=beta2,
                lr=group["lr"],
                weight_decay=group["weight_decay"],
                eps=group["eps"],
                maximize=group["maximize"],
                decoupled_weight_decay=self._decoupled,
            )


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay`` before the update);
    PyTorch's defaults (lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2)."""

    _decoupled = True

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=1e-2,
        amsgrad=False,
        *,
        maximize=False,
        foreach=None,
        capturable=False,
        differentiable=False,
        fused=None,
    ):
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
        )


class RMSprop(Optimizer):
    """RMSprop (``alpha``, ``eps``, L2 ``weight_decay``, ``momentum``, ``centered``,
    ``maximize``); PyTorch's defaults (lr=1e-2, alpha=0.99, eps=1e-8)."""

    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0,
        momentum=0,
        centered=False,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        who = "ember.optim.RMSprop"
        _check_lr(lr, who)
        _number(eps, "epsilon", who=who)
        _number(momentum, "momentum", who=who)
        _number(weight_decay, "weight_decay", who=who)
        _number(alpha, "alpha", who=who)
        defaults = dict(
            lr=lr,
            momentum=momentum,
            alpha=alpha,
            eps=eps,
            centered=centered,
            weight_decay=weight_decay,
            capturable=capturable,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    @_step_fn
    def step(self):
        for group in self.param_groups:
            params, grads = _with_grads(group)
            if not params:
                continue
            momentum, centered = group["momentum"], group["centered"]
            sq, ga, bufs, steps = [], [], [], []
            for p in params:
                names = ("square_avg",) + (("momentum_buffer",) if momentum > 0 else ())
                st = _zero_state(self.state[p], p, names + (("grad_avg",) if centered else ()))
                sq.append(st["square_avg"])
                ga.append(st.get("grad_avg"))
                bufs.append(st.get("momentum_buffer"))
                steps.append(_advance(st))
            _functional.rmsprop(
                params,
                grads,
                sq,
                ga,
                bufs,
                steps,
                lr=group["lr"],
                alpha=group["alpha"],
                eps=group["eps"],
                weight_decay=group["weight_decay"],
                momentum=momentum,
                centered=centered,
                maximize=group["maximize"],
            )


class Adagrad(Optimizer):
    """Adagrad (``lr_decay``, L2 ``weight_decay``, ``initial_accumulator_value``, ``eps``,
    ``maximize``); PyTorch's defaults (lr=1e-2, eps=1e-10). The accumulators are created
    when the optimizer is (as PyTorch)."""

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0,
        weight_decay=0,
        initial_accumulator_value=0,
        eps=1e-10,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        fused=None,
    ):
        who = "ember.optim.Adagrad"
        _check_lr(lr, who)
        _number(lr_decay, "lr_decay", who=who)
        _number(weight_decay, "weight_decay", who=who)
        _number(initial_accumulator_value, "initial_accumulator_value", who=who)
        _number(eps, "epsilon", who=who)
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p, group):
        st = self.state[p]
        if "sum" not in st:
            st["step"] = 0.0
            st["sum"] = _core.full(
                p.shape, group["initial_accumulator_value"], dtype=p.dtype, device=p.device
            )

    @_step_fn
    def step(self):
        for group in self.param_groups:
            params, grads = _with_grads(group)
            if not params:
                continue
            if group["lr_decay"] != 0:
                _not_capturable(self)  # the decayed rate of each step is the host's
            sums, steps = [], []
            for p in params:
                self._init_state(p, group)  # parameters added with add_param_group
                st = self.state[p]
                sums.append(st["sum"])
                steps.append(_advance(st))
            _functional.adagrad(
                params,
                grads,
                sums,
                steps,
                lr=group["lr"],
                weight_decay=group["weight_decay"],
                lr_decay=group["lr_decay"],
                eps=group["eps"],
                maximize=group["maximize"],
            )
