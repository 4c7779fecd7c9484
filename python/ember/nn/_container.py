"""Containers of modules: Sequential, ModuleList, ModuleDict; of parameters: ParameterList,
ParameterDict."""

from __future__ import annotations

import numbers
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from ._module import Module, _addindent

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]


def _index(idx, n, who):
    if isinstance(idx, bool) or not isinstance(idx, numbers.Integral):
        raise TypeError(f"{who} indices must be integers or slices, not {type(idx).__name__}")
    idx = int(idx)
    if not -n <= idx < n:
        raise IndexError(f"{who}: index {idx} is out of range for length {n}")
    return idx % n


class Sequential(Module):
    """Modules applied in order: ``Sequential(m1, m2, ...)`` or ``Sequential(OrderedDict(name=m,
    ...))``; calling it feeds each module's output to the next. Supports indexing (a slice is a
    new Sequential), ``len``, iteration, ``append``, ``insert``, ``extend`` and ``pop``."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, m in args[0].items():
                self.add_module(key, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def _renumber(self):
        self.__dict__["_modules"] = OrderedDict(
            (str(i), m) for i, m in enumerate(self._modules.values())
        )

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        i = _index(idx, len(self), "Sequential")
        return list(self._modules.values())[i]

    def __setitem__(self, idx, module):
        i = _index(idx, len(self), "Sequential")
        key = list(self._modules)[i]
        self.add_module(key, module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for key in list(self._modules)[idx]:
                del self._modules[key]
        else:
            del self._modules[list(self._modules)[_index(idx, len(self), "Sequential")]]
        self._renumber()

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other):
        if not isinstance(other, Sequential):
            return NotImplemented
        return Sequential(*self, *other)

    def append(self, module):
        """Adds `module` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        """Inserts `module` before position `index`; returns self."""
        if not isinstance(module, Module):
            raise TypeError(f"Sequential.insert: expected a Module, got {type(module).__name__}")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Sequential.insert: index {index} is out of range for length {n}")
        index = index % (n + 1) if index < 0 else index
        items = list(self._modules.values())
        items.insert(index, module)
        self.__dict__["_modules"] = OrderedDict((str(i), m) for i, m in enumerate(items))
        return self

    def extend(self, sequential):
        """Appends every module of `sequential`; returns self."""
        for m in sequential:
            self.append(m)
        return self

    def pop(self, index=-1):
        """Removes and returns the module at `index`."""
        m = self[index]
        del self[index]
        return m

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input


class ModuleList(Module):
    """A list of modules, registered as submodules "0", "1", ... (no forward of its own)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx, module):
        self.add_module(str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                del self._modules[str(k)]
        else:
            del self._modules[str(_index(idx, len(self), "ModuleList"))]
        self.__dict__["_modules"] = OrderedDict(
            (str(i), m) for i, m in enumerate(self._modules.values())
        )

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        if not isinstance(other, ModuleList):
            return NotImplemented
        return ModuleList([*self, *other])

    def append(self, module):
        """Adds `module` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        """Appends every module of the iterable `modules`; returns self."""
        if (
            not isinstance(modules, Iterable)
            or isinstance(modules, Module)
            and not isinstance(modules, (ModuleList, Sequential))
        ):
            raise TypeError(
                "ModuleList.extend should be called with an iterable, but got "
                + type(modules).__name__
            )
        for m in list(modules):
            self.append(m)
        return self

    def insert(self, index, module):
        """Inserts `module` before position `index`."""
        items = list(self._modules.values())
        items.insert(index, module)
        self.__dict__["_modules"] = OrderedDict()
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def pop(self, index=-1):
        """Removes and returns the module at `index`."""
        m = self[index]
        del self[index]
        return m

    def __repr__(self):
        # runs of identical modules print once, as "(0-2): 3 x Linear(...)" (as PyTorch)
        if not self._modules:
            return "ModuleList()"
        reprs = [repr(m) for m in self._modules.values()]
        lines, start = [], 0
        for i in range(1, len(reprs) + 1):
            if i == len(reprs) or reprs[i] != reprs[start]:
                body = _addindent(reprs[start], 2)
                n = i - start
                lines.append(f"({start}): {body}" if n == 1 else f"({start}-{i - 1}): {n} x {body}")
                start = i
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """An ordered dict of modules by name (no forward of its own)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        """Removes every module."""
        self._modules.clear()

    def pop(self, key):
        """Removes and returns the module `key`."""
        m = self[key]
        del self[key]
        return m

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        """Adds the (name, module) pairs of a mapping or an iterable of pairs."""
        if isinstance(modules, (Mapping, ModuleDict)):
            for key, m in modules.items():
                self[key] = m
            return
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleDict.update should be called with an iterable of key/value pairs, but got "
                + type(modules).__name__
            )
        for j, pair in enumerate(modules):
            if not isinstance(pair, Iterable) or isinstance(pair, (str, Module)):
                raise TypeError(
                    f"ModuleDict update sequence element #{j} should be Iterable; is "
                    + type(pair).__name__
                )
            pair = list(pair)
            if len(pair) != 2:
                raise ValueError(
                    f"ModuleDict update sequence element #{j} has length {len(pair)}; 2 is required"
                )
            self[pair[0]] = pair[1]


def _as_parameter(value):
    """PyTorch's rule for parameter containers: arrays become Parameters; Parameters and other
    values are kept."""
    from ._parameter import Parameter

    try:
        from .._core import ndarray
    except ImportError:  # pragma: no cover
        return value
    if isinstance(value, ndarray) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """A list of parameters, registered as "0", "1", ... (arrays given become Parameters)."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_index(idx, len(self), "ParameterList")))

    def __setitem__(self, idx, param):
        setattr(self, str(_index(idx, len(self), "ParameterList")), _as_parameter(param))

    def __len__(self):
        return self._size

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __iadd__(self, params):
        return self.extend(params)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value):
        """Adds `value` at the end; returns self."""
        n = len(self)
        self._size = n + 1
        setattr(self, str(n), _as_parameter(value))
        return self

    def extend(self, values):
        """Appends every value of the iterable `values`; returns self."""
        if not isinstance(values, Iterable) or isinstance(values, (str, bytes)):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                + type(values).__name__
            )
        for v in list(values):
            self.append(v)
        return self

    def extra_repr(self):
        lines = []
        for i, p in enumerate(self):
            if hasattr(p, "shape"):
                lines.append(
                    f"({i}): Parameter containing: [{type(p).__name__} of size "
                    f"{'x'.join(str(s) for s in p.shape)}]"
                )
            else:
                lines.append(f"({i}): Object of type: {type(p).__name__}")
        return "\n".join(lines)


class ParameterDict(Module):
    """An ordered dict of parameters by name (arrays given become Parameters)."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys must be strings, got {type(key).__name__}")
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def __or__(self, other):
        out = ParameterDict(self.items())
        out.update(other)
        return out

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def clear(self):
        for k in list(self._keys):
            del self[k]

    def copy(self):
        return ParameterDict(self.items())

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, values):
        """Adds the (name, value) pairs of a mapping or an iterable of pairs."""
        if isinstance(values, (Mapping, ParameterDict)):
            items = values.items()
        elif isinstance(values, Iterable):
            items = []
            for j, pair in enumerate(values):
                pair = list(pair)
                if len(pair) != 2:
                    raise ValueError(
                        f"ParameterDict update sequence element #{j} has length {len(pair)}; "
                        "2 is required"
                    )
                items.append(pair)
        else:
            raise TypeError(
                "ParameterDict.update should be called with an iterable of key/value pairs, "
                "but got " + type(values).__name__
            )
        for k, v in items:
            self[k] = v

    def extra_repr(self):
        return "\n".join(
            f"({k}): Parameter containing: [{type(v).__name__} of size "
            f"{'x'.join(str(s) for s in v.shape)}]"
            for k, v in self.items()
        )
