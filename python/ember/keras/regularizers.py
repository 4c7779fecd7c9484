"""ember.keras.regularizers: L1, L2, L1L2 and OrthogonalRegularizer, as Keras defines them
(``l2(0.01)`` adds ``0.01 * sum(w**2)`` to the loss)."""

from __future__ import annotations

import ember as _e

__all__ = ["L1", "L1L2", "L2", "OrthogonalRegularizer", "Regularizer", "get", "l1", "l1_l2", "l2"]


class Regularizer:
    def __call__(self, x):
        return 0.0

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _factor(v, who):
    try:
        v = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{who}: the factor must be a number, got {v!r}") from None
    if v < 0:
        raise ValueError(f"{who}: the factor must be >= 0, got {v}")
    return v


class L1L2(Regularizer):
    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _factor(l1, "L1L2")
        self.l2 = _factor(l2, "L1L2")

    def __call__(self, x):
        out = 0.0
        if self.l1:
            out = out + self.l1 * _e.sum(_e.abs(x))
        if self.l2:
            out = out + self.l2 * _e.sum(x * x)
        return out

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(Regularizer):
    def __init__(self, l1=0.01):
        self.l1 = _factor(l1, "L1")

    def __call__(self, x):
        return self.l1 * _e.sum(_e.abs(x))

    def get_config(self):
        return {"l1": self.l1}


class L2(Regularizer):
    def __init__(self, l2=0.01):
        self.l2 = _factor(l2, "L2")

    def __call__(self, x):
        return self.l2 * _e.sum(x * x)

    def get_config(self):
        return {"l2": self.l2}


class OrthogonalRegularizer(Regularizer):
    """``factor * mean(|offdiag(W_n^T W_n)|)`` with the rows (mode='rows') or columns of W
    normalized (Keras's definition)."""

    def __init__(self, factor=0.01, mode="rows"):
        self.factor = _factor(factor, "OrthogonalRegularizer")
        if mode not in ("rows", "columns"):
            raise ValueError(
                f"OrthogonalRegularizer: mode must be 'rows' or 'columns', got {mode!r}"
            )
        self.mode = mode

    def __call__(self, x):
        if x.ndim != 2:
            raise ValueError(f"OrthogonalRegularizer: expected a 2-D weight, got shape {x.shape}")
        w = x if self.mode == "rows" else x.T
        w = w / _e.sqrt(_e.maximum(_e.sum(w * w, axis=1, keepdims=True), 1e-12))
        prod = w @ w.T
        n = prod.shape[0]
        off = prod * (1.0 - _e.eye(n, dtype=prod.dtype, device=prod.device))
        return self.factor * _e.sum(_e.abs(off)) / (n * (n - 1))

    def get_config(self):
        return {"factor": self.factor, "mode": self.mode}


l1 = L1
l2 = L2
l1_l2 = L1L2
_BY_NAME = {"l1": L1, "l2": L2, "l1_l2": L1L2, "orthogonal_regularizer": OrthogonalRegularizer}
_BY_CLASS = {c.__name__: c for c in (L1, L2, L1L2, OrthogonalRegularizer)}


def get(identifier):
    if identifier is None:
        return None
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier) or _BY_CLASS.get(identifier)
        if cls is None:
            raise ValueError(
                f"Could not interpret regularizer identifier: {identifier!r}; known "
                f"regularizers: {', '.join(sorted(_BY_NAME))}"
            )
        return cls()
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}")


def serialize(reg):
    if reg is None:
        return None
    if isinstance(reg, Regularizer):
        return {"class_name": type(reg).__name__, "config": reg.get_config()}
    raise ValueError(f"regularizers.serialize: cannot serialize {reg!r}")


def deserialize(config, custom_objects=None):
    if config is None:
        return None
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or _BY_CLASS.get(name)
    if cls is None:
        from ._layer import registered

        cls = registered(name, custom_objects, "regularizers.deserialize")
    return cls.from_config(config.get("config", {}))
