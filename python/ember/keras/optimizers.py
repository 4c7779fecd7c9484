"""ember.keras.optimizers: Keras's optimizers with Keras's defaults and update rules.

SGD, Adam and AdamW run on ember.optim's fused multi-tensor steps (one launch per group):
Keras's Adam puts epsilon outside the bias correction of the second moment, which is PyTorch's
rule with ``eps_t = epsilon / sqrt(1 - beta_2**t)``, so that value is handed to the fused step
each iteration. Keras's SGD momentum (``v = m*v - lr*g; w += v``) equals PyTorch's for a fixed
learning rate. RMSprop and Adagrad add epsilon inside the square root, which PyTorch's do not,
so they are written here with in-place ember ops.
"""

from __future__ import annotations

import math

import ember as _e

from .. import optim as _optim
from ..nn._grad_mode import no_grad

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "get", "schedules"]


def _check_lr(lr, who):
    if callable(lr) and not isinstance(lr, (int, float)):
        return lr
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or lr < 0:
        raise ValueError(f"{who}: learning_rate must be a non-negative number, got {lr!r}")
    return float(lr)


class Optimizer:
    """Base class: ``apply_gradients(zip(grads, vars))`` / ``apply(grads, vars)``, the
    ``learning_rate`` property (settable; a schedule is called with ``iterations``),
    ``iterations``, and Keras's ``clipnorm`` / ``clipvalue`` / ``global_clipnorm``."""

    _defaults: dict = {}

    def __init__(
        self,
        learning_rate=0.001,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        loss_scale_factor=None,
        gradient_accumulation_steps=None,
        name=None,
        **kwargs,
    ):
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected keyword arguments {kwargs}")
        who = type(self).__name__
        if sum(v is not None for v in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError(
                f"{who}: only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set."
            )
        self._learning_rate = _check_lr(learning_rate, who)
        self.weight_decay = weight_decay
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        self.name = name or who.lower()
        self.iterations = 0
        self._impl = None
        self._vars = None
        self._state = {}

    # ---- learning rate ----

    @property
    def learning_rate(self):
        lr = self._learning_rate
        return float(lr(self.iterations)) if callable(lr) else lr

    @learning_rate.setter
    def learning_rate(self, value):
        self._learning_rate = _check_lr(value, type(self).__name__)

    lr = learning_rate

    # ---- applying ----

    @property
    def variables(self):
        return list(self._vars or [])

    def build(self, var_list):
        self._vars = list(var_list)

    def apply_gradients(self, grads_and_vars):
        grads, vars_ = [], []
        for g, v in grads_and_vars:
            grads.append(g)
            vars_.append(v)
        self.apply(grads, vars_)
        return self.iterations

    def apply(self, grads, trainable_variables=None):
        """Sets each variable's ``.grad`` to the given gradient and steps."""
        if trainable_variables is None:
            trainable_variables = self._vars
        for g, v in zip(grads, trainable_variables, strict=True):
            v.grad = None if g is None else g.detach()
        self.step(trainable_variables)

    def step(self, variables):
        """One update of `variables` from their ``.grad`` (the training loop's path)."""
        if (
            self._vars is None
            or len(self._vars) != len(variables)
            or any(a is not b for a, b in zip(self._vars, variables, strict=True))
        ):
            self.build(variables)
            self._impl = None
        params = [v for v in variables if v.grad is not None]
        if not params:
            return
        self._clip(params)
        with no_grad():
            self._update(params, self.learning_rate)
        self.iterations += 1
        for v in params:
            c = getattr(v, "_keras_constraint", None)
            if c is not None:
                v.assign(c(v.detach()))

    def _clip(self, params):
        if self.clipvalue is not None:
            for p in params:
                p.grad = _e.clip(p.grad, -self.clipvalue, self.clipvalue)
        if self.clipnorm is not None:
            for p in params:
                n = _e.sqrt(_e.sum(p.grad * p.grad))
                p.grad = p.grad * (self.clipnorm / _e.maximum(n, self.clipnorm))
        if self.global_clipnorm is not None:
            from ..nn.utils import clip_grad_norm_

            clip_grad_norm_(params, self.global_clipnorm)

    def _update(self, params, lr):
        raise NotImplementedError(f"{type(self).__name__} must implement _update")

    # ---- state (saved in .keras archives) ----

    def _slots(self, p):
        """The state arrays of one variable, by name."""
        if self._impl is not None:
            return {k: v for k, v in self._impl.state.get(p, {}).items() if k != "step"}
        st = self._state.get(id(p))
        return st if isinstance(st, dict) else ({} if st is None else {"accumulator": st})

    def state_arrays(self, variables):
        """``{"iterations": ..., "<i>/<slot>": array}`` for the i-th of `variables`."""
        out = {"iterations": _e.asarray(self.iterations, dtype=_e.int64)}
        for i, v in enumerate(variables):
            for name, a in self._slots(v).items():
                out[f"{i}/{name}"] = a
        return out

    def load_state_arrays(self, variables, arrays):
        """Restores what ``state_arrays`` saved, so training resumes where it stopped."""
        self.iterations = int(_e.asnumpy(arrays["iterations"]))
        self.build(variables)
        slots = {}
        for key, a in arrays.items():
            if key != "iterations":
                i, name = key.split("/", 1)
                slots.setdefault(int(i), {})[name] = a
        if not slots:
            return
        params = [variables[i] for i in sorted(slots)]
        self._restore(params, [slots[i] for i in sorted(slots)])

    def _restore(self, params, slots):
        for p, s in zip(params, slots, strict=True):
            self._state[id(p)] = s if len(s) > 1 or "accumulator" not in s else s["accumulator"]

    def get_config(self):
        lr = self._learning_rate
        return {
            "name": self.name,
            "learning_rate": lr if not callable(lr) else _ser_schedule(lr),
            "weight_decay": self.weight_decay,
            "clipnorm": self.clipnorm,
            "clipvalue": self.clipvalue,
            "global_clipnorm": self.global_clipnorm,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = schedules.deserialize(config["learning_rate"])
        return cls(**config)


def _ser_schedule(s):
    return {"class_name": type(s).__name__, "config": s.get_config()}


def _torch_impl(self, params, cls, **kw):
    """An ember.optim optimizer over `params` (rebuilt when the parameter list changes)."""
    if self._impl is None or self._impl_params != [id(p) for p in params]:
        self._impl = cls(params, **kw)
        self._impl_params = [id(p) for p in params]
    return self._impl


class SGD(Optimizer):
    """``w -= lr * g``; with momentum ``v = momentum * v - lr * g; w += v`` (Nesterov:
    ``w += momentum * v - lr * g``). Keras's defaults: learning_rate=0.01, momentum=0."""

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        if not isinstance(momentum, (int, float)) or not 0 <= momentum <= 1:
            raise ValueError(f"`momentum` must be a float between [0, 1]. Received: {momentum!r}")
        self.momentum, self.nesterov = float(momentum), bool(nesterov)

    def _update(self, params, lr):
        impl = self._update_impl(params)
        impl.param_groups[0]["lr"] = lr
        if self.weight_decay:
            for p in params:
                p *= 1.0 - lr * self.weight_decay
        impl.step()

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}

    def _restore(self, params, slots):
        self._update_impl(params)
        for p, s in zip(params, slots, strict=True):
            self._impl.state[p] = dict(s)

    def _update_impl(self, params):
        return _torch_impl(
            self,
            params,
            _optim.SGD,
            lr=self.learning_rate,
            momentum=self.momentum,
            nesterov=self.nesterov,
        )


class Adam(Optimizer):
    """Keras's Adam: ``alpha = lr * sqrt(1 - b2^t) / (1 - b1^t)``,
    ``w -= alpha * m / (sqrt(v) + epsilon)``; defaults lr=0.001, beta_1=0.9, beta_2=0.999,
    epsilon=1e-7."""

    _decoupled = False

    def __init__(
        self,
        learning_rate=0.001,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        amsgrad=False,
        **kwargs,
    ):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        self.amsgrad = bool(amsgrad)

    def _update_impl(self, params):
        cls = _optim.AdamW if self._decoupled else _optim.Adam
        wd = self.weight_decay or 0.0
        return _torch_impl(
            self,
            params,
            cls,
            lr=self.learning_rate,
            betas=(self.beta_1, self.beta_2),
            eps=self.epsilon,
            amsgrad=self.amsgrad,
            weight_decay=wd if self._decoupled else 0.0,
        )

    def _restore(self, params, slots):
        impl = self._update_impl(params)
        for p, s in zip(params, slots, strict=True):
            impl.state[p] = {"step": float(self.iterations), **s}

    def _update(self, params, lr):
        wd = self.weight_decay or 0.0
        impl = self._update_impl(params)
        if wd and not self._decoupled:
            for p in params:  # Keras applies weight_decay decoupled for every optimizer
                p *= 1.0 - lr * wd
        t = self.iterations + 1
        group = impl.param_groups[0]
        group["lr"] = lr
        group["eps"] = self.epsilon / math.sqrt(1.0 - self.beta_2**t)
        impl.step()

    def get_config(self):
        return {
            **super().get_config(),
            "beta_1": self.beta_1,
            "beta_2": self.beta_2,
            "epsilon": self.epsilon,
            "amsgrad": self.amsgrad,
        }


class AdamW(Adam):
    """Adam with decoupled weight decay ``w -= lr * weight_decay * w`` (Keras's default
    weight_decay=0.004)."""

    _decoupled = True

    def __init__(
        self,
        learning_rate=0.001,
        weight_decay=0.004,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        amsgrad=False,
        **kwargs,
    ):
        super().__init__(
            learning_rate=learning_rate,
            beta_1=beta_1,
            beta_2=beta_2,
            epsilon=epsilon,
            amsgrad=amsgrad,
            weight_decay=weight_decay,
            **kwargs,
        )


class RMSprop(Optimizer):
    """Keras's RMSprop: ``v = rho*v + (1-rho)*g^2``, ``w -= lr * g / sqrt(v + epsilon)``
    (centered: ``v - mg^2``; momentum: ``m = momentum*m + lr*g/...; w -= m``); defaults
    lr=0.001, rho=0.9, momentum=0, epsilon=1e-7."""

    def __init__(
        self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, **kwargs
    ):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.rho, self.momentum, self.epsilon = float(rho), float(momentum), float(epsilon)
        self.centered = bool(centered)

    def _update(self, params, lr):
        rho = self.rho
        for p in params:
            st = self._state.get(id(p))
            if st is None:
                st = self._state[id(p)] = {"v": _e.zeros_like(p.detach())}
                if self.momentum:
                    st["m"] = _e.zeros_like(p.detach())
                if self.centered:
                    st["mg"] = _e.zeros_like(p.detach())
            g = p.grad
            if self.weight_decay:
                p *= 1.0 - lr * self.weight_decay
            v = st["v"]
            v *= rho
            v += (1.0 - rho) * g * g
            denom = v
            if self.centered:
                mg = st["mg"]
                mg *= rho
                mg += (1.0 - rho) * g
                denom = v - mg * mg
            inc = lr * g / _e.sqrt(denom + self.epsilon)
            if self.momentum:
                m = st["m"]
                m *= self.momentum
                m += inc
                p -= m
            else:
                p -= inc

    def get_config(self):
        return {
            **super().get_config(),
            "rho": self.rho,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            "centered": self.centered,
        }


class Adagrad(Optimizer):
    """Keras's Adagrad: ``acc += g^2; w -= lr * g / sqrt(acc + epsilon)``; defaults
    lr=0.001, initial_accumulator_value=0.1, epsilon=1e-7."""

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.epsilon = float(epsilon)

    def _update(self, params, lr):
        for p in params:
            acc = self._state.get(id(p))
            if acc is None:
                acc = self._state[id(p)] = _e.full(
                    p.shape, self.initial_accumulator_value, dtype=p.dtype, device=p.device
                )
            g = p.grad
            if self.weight_decay:
                p *= 1.0 - lr * self.weight_decay
            acc += g * g
            p -= lr * g / _e.sqrt(acc + self.epsilon)

    def get_config(self):
        return {
            **super().get_config(),
            "initial_accumulator_value": self.initial_accumulator_value,
            "epsilon": self.epsilon,
        }


# ---- schedules ----------------------------------------------------------------------------------


class _Schedules:
    """``keras.optimizers.schedules``: learning rates as functions of the step."""

    class LearningRateSchedule:
        def __call__(self, step):
            raise NotImplementedError(f"{type(self).__name__} must implement __call__")

        def get_config(self):
            return {}

        @classmethod
        def from_config(cls, config):
            return cls(**config)

    class ExponentialDecay(LearningRateSchedule):
        def __init__(
            self,
            initial_learning_rate,
            decay_steps,
            decay_rate,
            staircase=False,
            name="ExponentialDecay",
        ):
            self.initial_learning_rate = initial_learning_rate
            self.decay_steps, self.decay_rate = decay_steps, decay_rate
            self.staircase, self.name = staircase, name

        def __call__(self, step):
            p = step / self.decay_steps
            if self.staircase:
                p = math.floor(p)
            return self.initial_learning_rate * self.decay_rate**p

        def get_config(self):
            return {
                "initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate,
                "staircase": self.staircase,
                "name": self.name,
            }

    class PiecewiseConstantDecay(LearningRateSchedule):
        def __init__(self, boundaries, values, name="PiecewiseConstant"):
            if len(values) != len(boundaries) + 1:
                raise ValueError(
                    "The length of boundaries should be 1 less than the length of values. "
                    f"Received: boundaries={boundaries}, values={values}"
                )
            self.boundaries, self.values, self.name = list(boundaries), list(values), name

        def __call__(self, step):
            for b, v in zip(self.boundaries, self.values, strict=False):
                if step <= b:
                    return v
            return self.values[-1]

        def get_config(self):
            return {"boundaries": self.boundaries, "values": self.values, "name": self.name}

    class CosineDecay(LearningRateSchedule):
        def __init__(
            self,
            initial_learning_rate,
            decay_steps,
            alpha=0.0,
            name="CosineDecay",
            warmup_target=None,
            warmup_steps=0,
        ):
            self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
            self.alpha, self.name = alpha, name
            self.warmup_target, self.warmup_steps = warmup_target, warmup_steps

        def __call__(self, step):
            if self.warmup_target is not None and step < self.warmup_steps:
                frac = step / max(1, self.warmup_steps)
                return self.initial_learning_rate + frac * (
                    self.warmup_target - self.initial_learning_rate
                )
            start = (
                self.warmup_target
                if self.warmup_target is not None
                else (self.initial_learning_rate)
            )
            s = min(step - self.warmup_steps, self.decay_steps)
            cos = 0.5 * (1 + math.cos(math.pi * s / self.decay_steps))
            return start * ((1 - self.alpha) * cos + self.alpha)

        def get_config(self):
            return {
                "initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps,
                "alpha": self.alpha,
                "name": self.name,
                "warmup_target": self.warmup_target,
                "warmup_steps": self.warmup_steps,
            }

    @classmethod
    def deserialize(cls, config):
        klass = getattr(cls, config["class_name"], None)
        if klass is None:
            raise ValueError(f"Unknown learning rate schedule: {config['class_name']!r}")
        return klass.from_config(config.get("config", {}))


schedules = _Schedules

_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop, "adagrad": Adagrad}
_BY_CLASS = {c.__name__: c for c in _BY_NAME.values()}


def get(identifier):
    """An optimizer from a name (``"adam"``), a config dict or an ``Optimizer``."""
    if isinstance(identifier, Optimizer) or hasattr(identifier, "scale_loss"):
        return identifier  # an Optimizer, or a LossScaleOptimizer around one
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier.lower()) or _BY_CLASS.get(identifier)
        if cls is None:
            raise ValueError(
                f"Could not interpret optimizer identifier: {identifier!r}; known optimizers: "
                f"{', '.join(sorted(_BY_NAME))}"
            )
        return cls()
    if isinstance(identifier, dict):
        return deserialize(identifier)
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")


def serialize(opt):
    return {"class_name": type(opt).__name__, "config": opt.get_config()}


def deserialize(config, custom_objects=None):
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or _BY_CLASS.get(name)
    if cls is None:
        from ._layer import registered

        cls = registered(name, custom_objects, "optimizers.deserialize")
    return cls.from_config(config.get("config", {}))
