"""ember.keras.mixed_precision: Keras 3's dtype policies. ``set_global_policy("mixed_float16")``
(or ``"mixed_bfloat16"``) makes layers created afterwards compute in the 16-bit dtype with
float32 weights: a layer's call casts its floating inputs to the compute dtype and reads its
trainable weights through differentiable casts (gradients reach the float32 weights in
float32); non-trainable state (BatchNormalization's moving statistics) stays float32 and losses
are computed in float32, as Keras does. ``LossScaleOptimizer`` scales the loss so that float16
gradients do not underflow (``compile`` wraps the optimizer in one under ``mixed_float16``)."""

from __future__ import annotations

import ember as _e

__all__ = [
    "DTypePolicy",
    "LossScaleOptimizer",
    "Policy",
    "dtype_policy",
    "global_policy",
    "set_dtype_policy",
    "set_global_policy",
]

_NAMES = {
    "float32": ("float32", "float32"),
    "float64": ("float64", "float64"),
    "float16": ("float16", "float16"),
    "bfloat16": ("bfloat16", "bfloat16"),
    "mixed_float16": ("float16", "float32"),
    "mixed_bfloat16": ("bfloat16", "float32"),
}


class DTypePolicy:
    """A layer's dtypes: ``compute_dtype`` (the math) and ``variable_dtype`` (the weights)."""

    def __init__(self, name=None):
        name = "float32" if name is None else name
        if isinstance(name, DTypePolicy):
            name = name.name
        if not isinstance(name, str) or name not in _NAMES:
            raise ValueError(
                f"Cannot convert {name!r} to a mixed precision DTypePolicy (`name`); expected "
                f"one of {sorted(_NAMES)}"
            )
        self._name = name

    @property
    def name(self):
        return self._name

    @property
    def compute_dtype(self):
        return _NAMES[self._name][0]

    @property
    def variable_dtype(self):
        return _NAMES[self._name][1]

    @property
    def is_mixed(self):
        return self.compute_dtype != self.variable_dtype

    def __eq__(self, other):
        return isinstance(other, DTypePolicy) and other.name == self.name

    def __hash__(self):
        return hash(self._name)

    def __repr__(self):
        return f'<DTypePolicy "{self._name}">'

    def get_config(self):
        return {"name": self._name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


Policy = DTypePolicy
_GLOBAL = [DTypePolicy("float32")]


def set_global_policy(policy):
    """Sets the policy of the layers created from now on (a name or a ``DTypePolicy``)."""
    _GLOBAL[0] = policy if isinstance(policy, DTypePolicy) else DTypePolicy(policy)


def global_policy():
    return _GLOBAL[0]


set_dtype_policy, dtype_policy = set_global_policy, global_policy


def resolve(dtype):
    """A layer's policy from its ``dtype`` argument: None -> the global policy; a policy name,
    a ``DTypePolicy`` or its config dict; else a plain dtype (compute = variable)."""
    if dtype is None:
        return _GLOBAL[0]
    if isinstance(dtype, DTypePolicy):
        return dtype
    if isinstance(dtype, dict):
        return DTypePolicy(dtype.get("config", dtype).get("name"))
    name = str(getattr(dtype, "name", dtype))
    if name in _NAMES:
        return DTypePolicy(name)
    return _PlainPolicy(name)


class _PlainPolicy(DTypePolicy):
    """The policy of a layer given a plain dtype (``dtype="int32"``): computes and keeps
    weights in it."""

    def __init__(self, name):
        self._name = name

    @property
    def compute_dtype(self):
        return self._name

    @property
    def variable_dtype(self):
        return self._name


class LossScaleOptimizer:
    """Dynamic loss scaling around `inner_optimizer` (Keras's): the loss is multiplied by
    ``scale`` before the backward pass; the step divides the gradients by it, skips the update
    (and halves the scale) when any gradient is inf or NaN, and doubles the scale after
    `dynamic_growth_steps` good steps. Other attributes are the inner optimizer's."""

    def __init__(self, inner_optimizer, initial_scale=2.0**15, dynamic_growth_steps=2000, **kw):
        from . import optimizers

        if kw:
            raise TypeError(f"LossScaleOptimizer: unexpected arguments {sorted(kw)}")
        if not isinstance(inner_optimizer, optimizers.Optimizer):
            raise ValueError(
                "LossScaleOptimizer: `inner_optimizer` must be a keras Optimizer. Received: "
                f"inner_optimizer={inner_optimizer!r}"
            )
        if not initial_scale > 0:
            raise ValueError(
                f"LossScaleOptimizer: `initial_scale` must be > 0. Received: {initial_scale!r}"
            )
        if isinstance(dynamic_growth_steps, bool) or int(dynamic_growth_steps) <= 0:
            raise ValueError(
                "LossScaleOptimizer: `dynamic_growth_steps` must be a positive int. Received: "
                f"{dynamic_growth_steps!r}"
            )
        self.__dict__["inner_optimizer"] = inner_optimizer
        self.__dict__["initial_scale"] = float(initial_scale)
        self.__dict__["dynamic_growth_steps"] = int(dynamic_growth_steps)
        self.__dict__["scale"] = float(initial_scale)
        self.__dict__["_good_steps"] = 0

    def __getattr__(self, name):
        return getattr(self.__dict__["inner_optimizer"], name)

    def __setattr__(self, name, value):
        if name in self.__dict__:
            self.__dict__[name] = value
        else:
            setattr(self.inner_optimizer, name, value)

    def scale_loss(self, loss):
        return loss * self.scale

    def step(self, variables):
        params = [v for v in variables if v.grad is not None]
        finite = True
        if params:
            flags = _e.stack([_e.all(_e.isfinite(p.grad)) for p in params])
            finite = bool(_e.all(flags))  # one device->host read per step
        if not finite:
            self.__dict__["scale"] = self.scale / 2.0
            self.__dict__["_good_steps"] = 0
            for v in params:
                v.grad = None
            return
        for p in params:
            p.grad = p.grad / self.scale
        self.inner_optimizer.step(variables)
        self.__dict__["_good_steps"] += 1
        if self._good_steps >= self.dynamic_growth_steps:
            self.__dict__["scale"] = self.scale * 2.0
            self.__dict__["_good_steps"] = 0

    def apply(self, grads, trainable_variables=None):
        if trainable_variables is None:
            trainable_variables = self.inner_optimizer._vars
        for g, v in zip(grads, trainable_variables, strict=True):
            v.grad = None if g is None else g.detach()
        self.step(trainable_variables)

    def apply_gradients(self, grads_and_vars):
        pairs = list(grads_and_vars)
        self.apply([g for g, _ in pairs], [v for _, v in pairs])
        return self.inner_optimizer.iterations

    def get_config(self):
        from . import optimizers

        return {
            "inner_optimizer": optimizers.serialize(self.inner_optimizer),
            "initial_scale": self.initial_scale,
            "dynamic_growth_steps": self.dynamic_growth_steps,
        }

    @classmethod
    def from_config(cls, config):
        from . import optimizers

        config = dict(config)
        inner = optimizers.deserialize(config.pop("inner_optimizer"))
        return cls(inner, **config)


def mixed_call(layer, inputs, rest, kwargs):
    """``layer.call`` under a mixed policy: floating inputs in the compute dtype and the
    trainable float32 weights of the layer and of its sublayers of the same policy read through
    differentiable casts (Keras's autocasting of variables), put back afterwards."""
    from ._layer import Variable, map_structure

    low = _e.dtype(layer._compute_dtype)

    def cast(t):
        if layer.autocast and isinstance(t, _e.ndarray) and t.dtype.kind == "f":
            return t.astype(low) if t.dtype != low else t
        return t

    inputs = map_structure(cast, inputs)
    swapped = []
    for sub in layer._flatten_layers():
        if sub._compute_dtype != layer._compute_dtype:
            continue  # a float32 sublayer keeps its weights
        table = sub._parameters
        for name, p in list(table.items()):
            if isinstance(p, Variable) and p.trainable and p.dtype == _e.float32:
                table[name] = p.astype(low)
                swapped.append((table, name, p))
    try:
        return layer.call(inputs, *rest, **kwargs)
    finally:
        for table, name, p in swapped:
            table[name] = p


def _register():
    from ._layer import register

    register(LossScaleOptimizer)
    register(DTypePolicy)


_register()
