"""The update rules of ember.optim's optimizers, one multi-tensor function each.

Each function updates a whole parameter group at once: it takes LISTS (parameters, their
gradients, their state arrays) plus the group's hyperparameters as Python numbers, and updates
parameters and state in place. The caller runs it under ``no_grad`` and has already advanced
each parameter's step count. The formulas (order of operations, bias corrections, where eps is
added) are PyTorch's, so trajectories agree to rounding.

Real parameters go through ``_core._optimizer_step`` (src/ops/optim.hpp: the same formulas in
one fused step per device, dtype and step count; on the GPU one kernel launch per 48 tensors);
complex ones through the composed ``_*_composed`` versions below (ember ops, one kernel each).
"""

from __future__ import annotations

import math

from .. import _core

__all__ = ["adagrad", "adam", "rmsprop", "sgd"]


def _partition(params, key):
    """Indices of `params` grouped by ``key(i)``; complex parameters get the key None."""
    groups = {}
    for i, p in enumerate(params):
        k = None if p.dtype in (_core.complex64, _core.complex128) else key(i)
        groups.setdefault(k, []).append(i)
    return groups


def _pick(xs, idx):
    return None if xs is None else [xs[i] for i in idx]


def sgd(
    params, grads, momentum_buffers, *, lr, weight_decay, momentum, dampening, nesterov, maximize
):
    """SGD with optional momentum (PyTorch's form: ``buf = momentum * buf + (1 - dampening) *
    g``, the first buffer being g itself), Nesterov momentum and L2 weight decay.
    `momentum_buffers` entries may be None (created here, in the list)."""
    groups = _partition(
        params, lambda i: (params[i].device, momentum != 0 and momentum_buffers[i] is None)
    )
    for key, idx in groups.items():
        ps, gs = _pick(params, idx), _pick(grads, idx)
        if key is None:
            bufs = _pick(momentum_buffers, idx)
            _sgd_composed(
                ps,
                gs,
                bufs,
                lr=lr,
                weight_decay=weight_decay,
                momentum=momentum,
                dampening=dampening,
                nesterov=nesterov,
                maximize=maximize,
            )
            for i, b in zip(idx, bufs, strict=True):
                momentum_buffers[i] = b
            continue
        first = key[1]
        bufs = None
        if momentum != 0:
            if first:
                for i in idx:
                    momentum_buffers[i] = _core.empty(
                        params[i].shape, dtype=params[i].dtype, device=params[i].device
                    )
            bufs = _pick(momentum_buffers, idx)
        _core._optimizer_step(
            "sgd",
            ps,
            gs,
            bufs,
            None,
            None,
            lr=lr,
            weight_decay=weight_decay,
            momentum=momentum,
            dampening=dampening,
            nesterov=nesterov,
            maximize=maximize,
            first=first,
        )


def adam(
    params,
    grads,
    exp_avgs,
    exp_avg_sqs,
    max_exp_avg_sqs,
    state_steps,
    *,
    amsgrad,
    beta1,
    beta2,
    lr,
    weight_decay,
    eps,
    maximize,
    decoupled_weight_decay=False,
):
    """Adam (Kingma & Ba) and, with `decoupled_weight_decay`, AdamW (Loshchilov & Hutter):
    ``m = lerp(m, g, 1 - beta1)``, ``v = beta2 v + (1 - beta2) g^2``, ``p -= lr / (1 - beta1^t)
    * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)``; AMSGrad uses the running maximum of v.
    `state_steps` are the step counts t after this step: numbers, or (capturable) 0-d float32
    arrays on the parameters' devices that the update reads where it runs."""
    on_device = bool(state_steps) and isinstance(state_steps[0], _core.ndarray)
    groups = _partition(params, lambda i: (params[i].device, None if on_device else state_steps[i]))
    for key, idx in groups.items():
        args = (
            _pick(params, idx),
            _pick(grads, idx),
            _pick(exp_avgs, idx),
            _pick(exp_avg_sqs, idx),
        )
        vmax = _pick(max_exp_avg_sqs, idx) if amsgrad else None
        if key is None:
            _adam_composed(
                *args,
                vmax,
                _pick(state_steps, idx),
                amsgrad=amsgrad,
                beta1=beta1,
                beta2=beta2,
                lr=lr,
                weight_decay=weight_decay,
                eps=eps,
                maximize=maximize,
                decoupled_weight_decay=decoupled_weight_decay,
            )
            continue
        step = key[1]
        _core._optimizer_step(
            "adam",
            *args,
            vmax,
            lr=lr,
            weight_decay=weight_decay,
            beta1=beta1,
            beta2=beta2,
            eps=eps,
            bias1=1.0 if on_device else 1 - beta1**step,
            bias2_sqrt=1.0 if on_device else math.sqrt(1 - beta2**step),
            maximize=maximize,
            amsgrad=amsgrad,
            decoupled=decoupled_weight_decay,
            steps=_pick(state_steps, idx) if on_device else None,
        )


def rmsprop(
    params,
    grads,
    square_avgs,
    grad_avgs,
    momentum_buffers,
    state_steps,
    *,
    lr,
    alpha,
    eps,
    weight_decay,
    momentum,
    centered,
    maximize,
):
    """RMSprop (Hinton): ``sq = alpha sq + (1 - alpha) g^2``; the denominator ``sqrt(sq) + eps``
    (centered: ``sqrt(sq - mean(g)^2) + eps``); optional momentum on ``g / denom``."""
    groups = _partition(params, lambda i: params[i].device)
    for key, idx in groups.items():
        ps, gs, sq = _pick(params, idx), _pick(grads, idx), _pick(square_avgs, idx)
        ga = _pick(grad_avgs, idx) if centered else None
        bufs = _pick(momentum_buffers, idx) if momentum > 0 else None
        if key is None:
            _rmsprop_composed(
                ps,
                gs,
                sq,
                ga,
                bufs,
                _pick(state_steps, idx),
                lr=lr,
                alpha=alpha,
                eps=eps,
                weight_decay=weight_decay,
                momentum=momentum,
                centered=centered,
                maximize=maximize,
            )
            continue
        _core._optimizer_step(
            "rmsprop",
            ps,
            gs,
            sq,
            ga,
            bufs,
            lr=lr,
            weight_decay=weight_decay,
            momentum=momentum if momentum > 0 else 0.0,
            beta2=alpha,
            eps=eps,
            maximize=maximize,
            centered=centered,
        )


def adagrad(params, grads, state_sums, state_steps, *, lr, weight_decay, lr_decay, eps, maximize):
    """Adagrad (Duchi et al.): ``sum += g^2``, ``p -= clr * g / (sqrt(sum) + eps)`` with
    ``clr = lr / (1 + (t - 1) lr_decay)``."""
    groups = _partition(params, lambda i: (params[i].device, state_steps[i]))
    for key, idx in groups.items():
        ps, gs, sums = _pick(params, idx), _pick(grads, idx), _pick(state_sums, idx)
        if key is None:
            _adagrad_composed(
                ps,
                gs,
                sums,
                _pick(state_steps, idx),
                lr=lr,
                weight_decay=weight_decay,
                lr_decay=lr_decay,
                eps=eps,
                maximize=maximize,
            )
            continue
        clr = lr / (1 + (key[1] - 1) * lr_decay)
        _core._optimizer_step(
            "adagrad",
            ps,
            gs,
            sums,
            None,
            None,
            lr=clr,
            weight_decay=weight_decay,
            eps=eps,
            maximize=maximize,
        )


def _sgd_composed(
    params,
    grads,
    momentum_buffers,
    *,
    lr,
    weight_decay,
    momentum,
    dampening,
    nesterov,
    maximize,
):
    """sgd() through composed ember ops (one kernel each), for complex parameters."""
    for i, p in enumerate(params):
        g = grads[i]
        if maximize:
            g = -g
        if weight_decay != 0:
            g = g + p * weight_decay
        if momentum != 0:
            buf = momentum_buffers[i]
            if buf is None:
                buf = g.copy()
                momentum_buffers[i] = buf
            else:
                buf *= momentum
                buf += g if dampening == 0 else g * (1 - dampening)
            g = g + buf * momentum if nesterov else buf
        p -= g * lr


def _adam_composed(
    params,
    grads,
    exp_avgs,
    exp_avg_sqs,
    max_exp_avg_sqs,
    state_steps,
    *,
    amsgrad,
    beta1,
    beta2,
    lr,
    weight_decay,
    eps,
    maximize,
    decoupled_weight_decay=False,
):
    """adam() through composed ember ops (one kernel each), for complex parameters."""
    for i, p in enumerate(params):
        g = grads[i]
        if maximize:
            g = -g
        if weight_decay != 0:
            if decoupled_weight_decay:
                p *= 1 - lr * weight_decay
            else:
                g = g + p * weight_decay
        m, v = exp_avgs[i], exp_avg_sqs[i]
        m += (g - m) * (1 - beta1)
        v *= beta2
        v += g * (1 - beta2) * g
        step = state_steps[i]
        step_size = lr / (1 - beta1**step)
        if isinstance(step, _core.ndarray):  # capturable: the count stays on the device
            bias_correction2_sqrt = _core.sqrt(1 - beta2**step)
        else:
            bias_correction2_sqrt = math.sqrt(1 - beta2**step)
        if amsgrad:
            vmax = max_exp_avg_sqs[i]
            vmax[...] = _core.maximum(vmax, v)
            denom = _core.sqrt(vmax) / bias_correction2_sqrt + eps
        else:
            denom = _core.sqrt(v) / bias_correction2_sqrt + eps
        p -= m / denom * step_size


def _rmsprop_composed(
    params,
    grads,
    square_avgs,
    grad_avgs,
    momentum_buffers,
    state_steps,
    *,
    lr,
    alpha,
    eps,
    weight_decay,
    momentum,
    centered,
    maximize,
):
    """rmsprop() through composed ember ops (one kernel each), for complex parameters."""
    for i, p in enumerate(params):
        g = grads[i]
        if maximize:
            g = -g
        if weight_decay != 0:
            g = g + p * weight_decay
        sq = square_avgs[i]
        sq *= alpha
        sq += g * (1 - alpha) * g
        if centered:
            ga = grad_avgs[i]
            ga += (g - ga) * (1 - alpha)
            avg = _core.sqrt(sq - ga * ga) + eps
        else:
            avg = _core.sqrt(sq) + eps
        if momentum > 0:
            buf = momentum_buffers[i]
            buf *= momentum
            buf += g / avg
            p -= buf * lr
        else:
            p -= g / avg * lr


def _adagrad_composed(
    params,
    grads,
    state_sums,
    state_steps,
    *,
    lr,
    weight_decay,
    lr_decay,
    eps,
    maximize,
):
    """adagrad() through composed ember ops (one kernel each), for complex parameters."""
    for i, p in enumerate(params):
        g = grads[i]
        if maximize:
            g = -g
        if weight_decay != 0:
            g = g + p * weight_decay
        clr = lr / (1 + (state_steps[i] - 1) * lr_decay)
        s = state_sums[i]
        s += g * g
        p -= g / (_core.sqrt(s) + eps) * clr
