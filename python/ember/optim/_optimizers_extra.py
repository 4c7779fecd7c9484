"""Adamax and Adadelta (PyTorch's names, defaults and update rules), written with ember's array
ops (on any device, in place on the parameters)."""

from __future__ import annotations

from .. import _core
from ._optimizer import Optimizer
from ._optimizers import (
    _advance,
    _check_betas,
    _check_lr,
    _number,
    _step_fn,
    _with_grads,
    _zero_state,
)

__all__ = ["Adadelta", "Adamax", "SparseAdam"]


def _adam_like(opt, names):
    """(group, param, grad, state, step) for each parameter with a gradient, its state
    holding zeros for each of ``names`` and its step count advanced."""
    for group in opt.param_groups:
        params, grads = _with_grads(group)
        for p, g in zip(params, grads, strict=True):
            st = _zero_state(opt.state[p], p, names)
            yield group, p, g, st, _advance(st)


def _grad(p, g, group):
    g = -g if group.get("maximize") else g
    wd = group["weight_decay"]
    return g + wd * p if wd else g


class Adamax(Optimizer):
    """Adam with the infinity norm: ``u = max(beta2 * u, |g| + eps)``,
    ``p -= lr / (1 - beta1**t) * m / u``."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False,
                 capturable=False):  # fmt: skip
        who = "ember.optim.Adamax"
        _check_lr(lr, who)
        _number(eps, "epsilon", who=who)
        _check_betas(betas, who)
        _number(weight_decay, "weight_decay", who=who)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable,
                                      capturable=capturable))  # fmt: skip

    @_step_fn
    def step(self):
        for group, p, g, st, t in _adam_like(self, ("exp_avg", "exp_inf")):
            b1, b2 = group["betas"]
            lr, eps = group["lr"], group["eps"]
            g = _grad(p, g, group)
            m, u = st["exp_avg"], st["exp_inf"]
            m *= b1
            m += (1 - b1) * g
            u[...] = _core.maximum(u * b2, _core.abs(g) + eps)
            p -= (lr / (1 - b1**t)) * m / u


class Adadelta(Optimizer):
    """Zeiler's Adadelta: ``v = rho v + (1-rho) g^2``,
    ``d = sqrt(a + eps) / sqrt(v + eps) * g``, ``a = rho a + (1-rho) d^2``, ``p -= lr d``."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):  # fmt: skip
        who = "ember.optim.Adadelta"
        _check_lr(lr, who)
        _number(eps, "epsilon", who=who)
        _number(weight_decay, "weight_decay", who=who)
        rho = _number(rho, "rho", who=who)
        if not 0.0 <= float(rho) <= 1.0:
            raise ValueError(f"{who}: Invalid rho value: {rho}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, capturable=capturable,
                                      differentiable=differentiable))  # fmt: skip

    @_step_fn
    def step(self):
        for group in self.param_groups:
            params, grads = _with_grads(group)
            lr, rho, eps = group["lr"], group["rho"], group["eps"]
            for p, g in zip(params, grads, strict=True):
                st = _zero_state(self.state[p], p, ("square_avg", "acc_delta"))
                _advance(st)
                g = _grad(p, g, group)
                v, a = st["square_avg"], st["acc_delta"]
                v *= rho
                v += (1 - rho) * g * g
                delta = _core.sqrt(a + eps) / _core.sqrt(v + eps) * g
                a *= rho
                a += (1 - rho) * delta * delta
                p -= lr * delta


class SparseAdam(Optimizer):
    """PyTorch's ``SparseAdam``: the lazy Adam of embedding tables, which updates the moments and
    the parameter only where the gradient has entries. ember has no sparse arrays (an
    ``Embedding(sparse=True)`` gives a dense gradient), so the entries are the rows of the
    gradient that are not all zero (elements, for 1-d parameters): the rows an embedding lookup
    touched, unless a touched row's gradient is exactly zero. PyTorch's update on those rows:
    ``m += (1 - b1) (g - m)``, ``v += (1 - b2) (g^2 - v)``,
    ``p -= lr sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps)``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        who = "ember.optim.SparseAdam"
        _check_lr(lr, who)
        _number(eps, "epsilon", who=who)
        _check_betas(betas, who)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize))

    @_step_fn
    def step(self):
        for group, p, g, st, t in _adam_like(self, ("exp_avg", "exp_avg_sq")):
            b1, b2 = group["betas"]
            lr, eps = group["lr"], group["eps"]
            g = -g if group["maximize"] else g
            nz = g != 0
            present = nz.reshape(g.shape[0], -1).any(axis=1) if g.ndim > 1 else nz
            mask = present.reshape((-1,) + (1,) * (g.ndim - 1)) if g.ndim > 1 else present
            m, v = st["exp_avg"], st["exp_avg_sq"]
            m[...] = _core.where(mask, m + (1 - b1) * (g - m), m)
            v[...] = _core.where(mask, v + (1 - b2) * (g * g - v), v)
            step_size = lr * (1 - b2**t) ** 0.5 / (1 - b1**t)
            p -= _core.where(mask, step_size * m / (_core.sqrt(v) + eps), 0)
