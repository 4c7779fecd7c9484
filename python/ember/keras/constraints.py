"""ember.keras.constraints: projections applied to a weight after each optimizer step
(``Dense(..., kernel_constraint=keras.constraints.MaxNorm(2))``), as Keras defines them."""

from __future__ import annotations

import ember as _e

__all__ = ["Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "UnitNorm", "get"]


def _norms(w, axis):
    return _e.sqrt(_e.sum(w * w, axis=axis, keepdims=True))


class Constraint:
    def __call__(self, w):
        return w

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class MaxNorm(Constraint):
    """Rescales the slices along `axis` whose L2 norm exceeds `max_value` (default axis 0: each
    output unit's incoming weights of a Dense kernel)."""

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        n = _norms(w, self.axis)
        desired = _e.clip(n, 0, self.max_value)
        return w * (desired / (1e-7 + n))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """Negative weights become zero."""

    def __call__(self, w):
        return w * (w >= 0).astype(w.dtype)


class UnitNorm(Constraint):
    """Slices along `axis` scaled to unit L2 norm."""

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        return w / (1e-7 + _norms(w, self.axis))

    def get_config(self):
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """Slice norms moved ``rate`` of the way into [min_value, max_value]."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        n = _norms(w, self.axis)
        desired = self.rate * _e.clip(n, self.min_value, self.max_value) + (1 - self.rate) * n
        return w * (desired / (1e-7 + n))

    def get_config(self):
        return {
            "min_value": self.min_value,
            "max_value": self.max_value,
            "rate": self.rate,
            "axis": self.axis,
        }


max_norm, non_neg, unit_norm, min_max_norm = MaxNorm, NonNeg, UnitNorm, MinMaxNorm
_BY_NAME = {
    "max_norm": MaxNorm,
    "non_neg": NonNeg,
    "unit_norm": UnitNorm,
    "min_max_norm": MinMaxNorm,
}
_BY_CLASS = {c.__name__: c for c in _BY_NAME.values()}


def get(identifier):
    if identifier is None:
        return None
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier) or _BY_CLASS.get(identifier)
        if cls is None:
            raise ValueError(
                f"Could not interpret constraint identifier: {identifier!r}; known constraints: "
                f"{', '.join(sorted(_BY_NAME))}"
            )
        return cls()
    if isinstance(identifier, dict):
        return _BY_CLASS[identifier["class_name"]].from_config(identifier.get("config", {}))
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret constraint identifier: {identifier!r}")
