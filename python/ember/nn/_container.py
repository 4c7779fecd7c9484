"""Containers of modules: Sequential, ModuleList, ModuleDict."""

from __future__ import annotations

import numbers
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from ._module import Module, _addindent

__all__ = ["ModuleDict", "ModuleList", "Sequential"]


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
