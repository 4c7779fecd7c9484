"""The Optimizer base class: parameter groups, per-parameter state, zero_grad and state dicts in
PyTorch's layout. Concrete optimizers subclass it and implement ``step()`` only."""

from __future__ import annotations

import copy
import numbers
import warnings
from collections.abc import Iterable, Mapping, MutableMapping

from .._core import ndarray

__all__ = ["Optimizer", "required"]


class _Required:
    """Marks a hyperparameter without a default: every param group must give it."""

    def __repr__(self):
        return "<required parameter>"

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self

    def __reduce__(self):
        return "required"


#: default value of a hyperparameter that every param group must set
required = _Required()


class _ParamState(MutableMapping):
    """Optimizer state keyed by parameter identity (arrays are not hashable); ``state[p]`` is a
    dict, created empty on first access, as with PyTorch's ``defaultdict(dict)``."""

    def __init__(self):
        self._d = {}  # id(param) -> (param, state dict)

    def __getitem__(self, p):
        entry = self._d.get(id(p))
        if entry is None:
            entry = self._d[id(p)] = (p, {})
        return entry[1]

    def __setitem__(self, p, value):
        self._d[id(p)] = (p, value)

    def __delitem__(self, p):
        del self._d[id(p)]

    def __contains__(self, p):
        return id(p) in self._d

    def get(self, p, default=None):
        entry = self._d.get(id(p))
        return default if entry is None else entry[1]

    def __iter__(self):
        return (p for p, _ in list(self._d.values()))

    def __len__(self):
        return len(self._d)

    def items(self):
        return [(p, s) for p, s in self._d.values()]

    def values(self):
        return [s for _, s in self._d.values()]

    def __repr__(self):
        return f"<optimizer state for {len(self)} parameters>"


def _is_param_like(p):
    # anything but containers: ember arrays, or stand-ins with a ``grad`` attribute
    return not isinstance(p, (Mapping, str, bytes, numbers.Number)) and not (
        isinstance(p, Iterable) and not hasattr(p, "shape")
    )


class Optimizer:
    """Base class of optimizers.

    ``Optimizer(params, defaults)``: `params` is an iterable of parameters (ember arrays), or of
    dicts each with a ``"params"`` entry and hyperparameters overriding `defaults` for that
    group. ``param_groups`` is the list of group dicts (each with every key of `defaults`),
    ``state`` maps a parameter to its dict of per-parameter state (created on first use).

    A subclass calls ``super().__init__(params, defaults)`` and implements ``step(closure=None)``
    reading ``group[...]`` hyperparameters, ``p.grad`` and ``self.state[p]``. ``zero_grad``,
    ``add_param_group``, ``state_dict`` and ``load_state_dict`` come from here; state dicts
    follow PyTorch's layout (``{"state": {index: {...}}, "param_groups": [{..., "params":
    [indices]}]}``, indices counting parameters across groups in order).
    """

    def __init__(self, params, defaults):
        name = type(self).__name__
        if not isinstance(defaults, Mapping):
            raise TypeError(f"{name}: defaults must be a dict, got {type(defaults).__name__}")
        self.defaults = dict(defaults)
        self.state = _ParamState()
        self.param_groups = []
        if _is_param_like(params) or isinstance(params, Mapping):
            raise TypeError(
                f"{name}: params must be an iterable of arrays or of dicts, got "
                f"{type(params).__name__}"
            )
        if isinstance(params, (set, frozenset)):
            raise TypeError(
                f"{name}: params must be an ordered collection; a set's order changes between "
                "runs (use a list)"
            )
        try:
            groups = list(params)
        except TypeError:
            raise TypeError(
                f"{name}: params must be an iterable of arrays or of dicts, got "
                f"{type(params).__name__}"
            ) from None
        if not groups:
            raise ValueError(f"{name}: got an empty parameter list")
        if not isinstance(groups[0], Mapping):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        """Adds a group: a dict with ``"params"`` (a parameter or an iterable of them) and
        optional hyperparameters; missing ones take the optimizer's defaults."""
        name = f"{type(self).__name__}.add_param_group"
        if not isinstance(param_group, Mapping):
            raise TypeError(f"{name}: param_group must be a dict, got {param_group!r}")
        if "params" not in param_group:
            raise ValueError(f"{name}: param_group must have a 'params' entry")
        group = dict(param_group)
        params = group["params"]
        if isinstance(params, (set, frozenset)):
            raise TypeError(
                f"{name}: params must be an ordered collection; a set's order changes between "
                "runs (use a list)"
            )
        params = [params] if _is_param_like(params) else list(params)
        for p in params:
            if not _is_param_like(p):
                raise TypeError(f"{name}: params must be arrays, got {type(p).__name__} {p!r}")
        if len({id(p) for p in params}) != len(params):
            warnings.warn(
                f"{name}: a parameter appears more than once in the group; this will be an "
                "error in a future version",
                stacklevel=2,
            )
        group["params"] = params
        for key, default in self.defaults.items():
            if default is required and key not in group:
                raise ValueError(
                    f"{name}: parameter group didn't specify a value of required "
                    f"hyperparameter {key!r}"
                )
            group.setdefault(key, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError(f"{name}: some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Clears the gradients of all parameters: sets ``p.grad`` to None (default), or fills
        it with zeros in place when `set_to_none` is False. Parameters without a ``grad``
        attribute (or whose ``grad`` is None) are skipped."""
        for group in self.param_groups:
            for p in group["params"]:
                g = getattr(p, "grad", None)
                if g is None:
                    continue
                if set_to_none:
                    try:
                        p.grad = None
                    except AttributeError:
                        pass
                else:
                    g[...] = 0

    def step(self, closure=None):
        """Performs one optimization step (subclasses implement it)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    def state_dict(self):
        """The optimizer's state as a dict in PyTorch's layout: ``"state"`` maps parameter
        indices to their state dicts (the arrays are referenced, not copied) and
        ``"param_groups"`` lists the groups' hyperparameters with ``"params"`` as index lists."""
        index, groups = {}, []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            packed["params"] = ids
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restores a state from ``state_dict()``: the groups must match in number and sizes.
        Hyperparameters come from the saved groups; array state moves to its parameter's device
        (floating-point arrays other than ``"step"`` also take the parameter's dtype)."""
        name = f"{type(self).__name__}.load_state_dict"
        if not isinstance(state_dict, Mapping) or not {"state", "param_groups"} <= set(state_dict):
            raise ValueError(f"{name}: expected a dict with 'state' and 'param_groups'")
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"{name}: the loaded state dict has {len(saved_groups)} parameter groups, the "
                f"optimizer has {len(self.param_groups)}"
            )
        for i, (g, sg) in enumerate(zip(self.param_groups, saved_groups, strict=True)):
            if len(g["params"]) != len(sg["params"]):
                raise ValueError(
                    f"{name}: parameter group {i} has {len(g['params'])} parameters, the loaded "
                    f"state dict's has {len(sg['params'])}"
                )
        id_map = {}
        for g, sg in zip(self.param_groups, saved_groups, strict=True):
            for p, i in zip(g["params"], sg["params"], strict=True):
                id_map[i] = p
        state = _ParamState()
        for k, v in state_dict["state"].items():
            if k in id_map:
                p = id_map[k]
                state[p] = {key: _cast(p, key, _clone(val)) for key, val in v.items()}
        groups = []
        for g, sg in zip(self.param_groups, saved_groups, strict=True):
            ng = {k: _clone(v) for k, v in sg.items() if k != "params"}
            ng["params"] = g["params"]
            groups.append(ng)
        self.state = state
        self.param_groups = groups

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(g):
                if k != "params":
                    lines.append(f"    {k}: {g[k]}")
        lines.append(")")
        return "\n".join(lines)


def _clone(value):
    """A deep copy that copies ember arrays too (they do not pickle)."""
    if isinstance(value, ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clone(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_clone(v) for v in value)
    return copy.deepcopy(value)


def _cast(p, key, value):
    if not isinstance(value, ndarray) or not isinstance(p, ndarray):
        return value
    if key != "step" and value.dtype.kind in "fc" and p.dtype.kind in "fc":
        value = value.astype(p.dtype)
    return value if value.device == p.device else value.to(p.device)
