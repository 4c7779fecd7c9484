"""NAdam, RAdam and LBFGS (PyTorch's names, defaults and formulas), their updates written with
ember's array ops (on any device, in place on the parameters)."""

from __future__ import annotations

import math

from .. import _core
from ._optimizer import Optimizer
from ._optimizers import (
    _advance,
    _check_betas,
    _check_lr,
    _not_capturable,
    _number,
    _step_fn,
    _with_grads,
    _zero_state,
)

__all__ = ["LBFGS", "NAdam", "RAdam"]


def _decayed(p, g, group):
    g = -g if group.get("maximize") else g
    wd = group["weight_decay"]
    if wd and not group.get("decoupled_weight_decay"):
        g = g + wd * p
    elif wd:
        p *= 1 - group["lr"] * wd
    return g


class NAdam(Optimizer):
    """Adam with Nesterov momentum (Dozat), with PyTorch's momentum decay schedule
    ``mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))``."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):  # fmt: skip
        who = "ember.optim.NAdam"
        _check_lr(lr, who)
        _number(eps, "epsilon", who=who)
        _check_betas(betas, who)
        _number(weight_decay, "weight_decay", who=who)
        _number(momentum_decay, "momentum_decay", who=who)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, capturable=capturable))  # fmt: skip

    @_step_fn
    def step(self):
        _not_capturable(self)  # the bias corrections and momentum schedule are the host's
        for group in self.param_groups:
            params, grads = _with_grads(group)
            b1, b2 = group["betas"]
            lr, eps, md = group["lr"], group["eps"], group["momentum_decay"]
            for p, g in zip(params, grads, strict=True):
                st = _zero_state(self.state[p], p, ("exp_avg", "exp_avg_sq"))
                st.setdefault("mu_product", 1.0)
                t = _advance(st)
                g = _decayed(p, g, group)
                mu = b1 * (1.0 - 0.5 * 0.96 ** (t * md))
                mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * md))
                st["mu_product"] *= mu
                mu_prod = st["mu_product"]
                m, v = st["exp_avg"], st["exp_avg_sq"]
                m *= b1
                m += (1 - b1) * g
                v *= b2
                v += (1 - b2) * g * g
                denom = _core.sqrt(v / (1 - b2**t)) + eps
                p -= lr * (1 - mu) / (1 - mu_prod) * g / denom
                p -= lr * mu_next / (1 - mu_prod * mu_next) * m / denom


class RAdam(Optimizer):
    """Rectified Adam (Liu et al.): plain momentum SGD while the variance estimate is not yet
    tractable (rho_t <= 5), then Adam with the variance rectification term."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):  # fmt: skip
        who = "ember.optim.RAdam"
        _check_lr(lr, who)
        _number(eps, "epsilon", who=who)
        _check_betas(betas, who)
        _number(weight_decay, "weight_decay", who=who)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, capturable=capturable))  # fmt: skip

    @_step_fn
    def step(self):
        _not_capturable(self)  # the rectification of each step is the host's
        for group in self.param_groups:
            params, grads = _with_grads(group)
            b1, b2 = group["betas"]
            lr, eps = group["lr"], group["eps"]
            rho_inf = 2 / (1 - b2) - 1
            for p, g in zip(params, grads, strict=True):
                st = _zero_state(self.state[p], p, ("exp_avg", "exp_avg_sq"))
                t = _advance(st)
                g = _decayed(p, g, group)
                m, v = st["exp_avg"], st["exp_avg_sq"]
                m *= b1
                m += (1 - b1) * g
                v *= b2
                v += (1 - b2) * g * g
                m_hat = m / (1 - b1**t)
                rho_t = rho_inf - 2 * t * b2**t / (1 - b2**t)
                if rho_t > 5:
                    rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                                     / ((rho_inf - 4) * (rho_inf - 2) * rho_t))  # fmt: skip
                    adaptive = math.sqrt(1 - b2**t) / (_core.sqrt(v) + eps)
                    p -= lr * m_hat * rect * adaptive
                else:
                    p -= lr * m_hat


class LBFGS(Optimizer):
    """Limited-memory BFGS (PyTorch's: one parameter group; ``step(closure)`` re-evaluates the
    loss up to ``max_iter`` times; ``line_search_fn`` None (fixed step) or ``"strong_wolfe"``)."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):  # fmt: skip
        who = "ember.optim.LBFGS"
        _check_lr(lr, who)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(
                f"{who}: line_search_fn must be None or 'strong_wolfe', got {line_search_fn!r}"
            )
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size,
                                      line_search_fn=line_search_fn))  # fmt: skip
        if len(self.param_groups) != 1:
            raise ValueError(f"{who}: takes one parameter group")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self):
        from .._joining import concatenate

        parts = []
        for p in self._params:
            g = (
                p.grad
                if p.grad is not None
                else _core.zeros(p.shape, dtype=p.dtype, device=p.device)
            )
            parts.append(g.reshape((-1,)))
        return concatenate(parts)

    def _add(self, step, direction):
        at = 0
        for p in self._params:
            n = p.size
            p += step * direction[at : at + n].reshape(p.shape)
            at += n

    def _evaluate(self, closure):
        from ..nn._grad_mode import enable_grad

        with enable_grad():
            loss = float(closure())
        return loss, self._flat_grad()

    def step(self, closure):
        """One L-BFGS optimization: up to max_iter iterations, each evaluating `closure` (which
        must zero the gradients, compute the loss, call backward and return the loss)."""
        if closure is None:
            raise RuntimeError("ember.optim.LBFGS.step: needs a closure that returns the loss")
        _not_capturable(self)  # its line search reads the loss on the host
        from ..nn._grad_mode import no_grad

        group = self.param_groups[0]
        lr = group["lr"]
        st = self.state[self._params[0]]  # PyTorch keeps L-BFGS's state under the first one
        if "n_iter" not in st:
            st.update(old_dirs=[], old_stps=[], ro=[], n_iter=0, d=None, t=None,
                      prev_flat_grad=None, H_diag=1.0)  # fmt: skip
        loss, g = self._evaluate(closure)
        orig_loss = loss
        evals = 1
        if float(_core.max(_core.abs(g))) <= group["tolerance_grad"]:
            return orig_loss
        with no_grad():
            for it in range(group["max_iter"]):
                st["n_iter"] += 1
                if st["n_iter"] == 1:
                    d = -g
                    st["old_dirs"], st["old_stps"], st["ro"] = [], [], []
                    st["H_diag"] = 1.0
                else:
                    y = g - st["prev_flat_grad"]
                    s = st["d"] * st["t"]
                    ys = float(_core.sum(y * s))
                    if ys > 1e-10:
                        if len(st["old_dirs"]) == group["history_size"]:
                            for k in ("old_dirs", "old_stps", "ro"):
                                st[k].pop(0)
                        st["old_dirs"].append(y)
                        st["old_stps"].append(s)
                        st["ro"].append(1.0 / ys)
                        st["H_diag"] = ys / float(_core.sum(y * y))
                    q = -g
                    al = []
                    for y_i, s_i, ro_i in reversed(
                        list(zip(st["old_dirs"], st["old_stps"], st["ro"], strict=True))
                    ):
                        a = ro_i * float(_core.sum(s_i * q))
                        al.append(a)
                        q = q - a * y_i
                    d = q * st["H_diag"]
                    for (y_i, s_i, ro_i), a in zip(
                        zip(st["old_dirs"], st["old_stps"], st["ro"], strict=True),
                        reversed(al),
                        strict=True,
                    ):
                        b = ro_i * float(_core.sum(y_i * d))
                        d = d + s_i * (a - b)
                st["prev_flat_grad"] = g
                prev_loss = loss
                t = min(1.0, 1.0 / float(_core.sum(_core.abs(g)))) * lr if st["n_iter"] == 1 else lr
                gtd = float(_core.sum(g * d))
                if gtd > -group["tolerance_change"]:
                    break
                if group["line_search_fn"] == "strong_wolfe":
                    t, loss, g, n = self._backtrack(closure, d, t, loss, gtd)
                    evals += n
                else:
                    self._add(t, d)
                    if it != group["max_iter"] - 1:
                        loss, g = self._evaluate(closure)
                        evals += 1
                st["d"], st["t"] = d, t
                if evals >= group["max_eval"]:
                    break
                if float(_core.max(_core.abs(g))) <= group["tolerance_grad"]:
                    break
                if float(_core.max(_core.abs(d * t))) <= group["tolerance_change"]:
                    break
                if abs(loss - prev_loss) < group["tolerance_change"]:
                    break
        return orig_loss

    def _backtrack(self, closure, d, t, loss, gtd, c1=1e-4, c2=0.9, tries=25):
        """A line search for the strong Wolfe conditions by bisection/extension of the step."""
        lo, hi = 0.0, math.inf
        n = 0
        for _ in range(tries):
            self._add(t, d)
            new_loss, new_g = self._evaluate(closure)
            n += 1
            new_gtd = float(_core.sum(new_g * d))
            self._add(-t, d)
            if new_loss > loss + c1 * t * gtd:
                hi = t
            elif abs(new_gtd) > -c2 * gtd and new_gtd < 0:
                lo = t
            else:
                self._add(t, d)
                return t, new_loss, new_g, n
            t = (lo + hi) / 2 if hi < math.inf else 2 * t
        self._add(t, d)
        new_loss, new_g = self._evaluate(closure)
        return t, new_loss, new_g, n + 1
