"""PyTorch's ``torch.nn.utils.parametrize``: a module's parameter computed by a module of its
own each time it is read. ``register_parametrization(module, "weight", P())`` moves the
parameter to ``module.parametrizations.weight.original`` (or ``original0``, ``original1``...
when ``P.right_inverse`` returns several arrays) and makes ``module.weight`` a property that
runs the parametrizations, as PyTorch does (the module's class is swapped for a subclass
holding the property)."""

from __future__ import annotations

import contextlib

from ... import _core
from .._container import ModuleDict
from .._module import Module
from .._parameter import Parameter

__all__ = [
    "ParametrizationList",
    "cached",
    "is_parametrized",
    "register_parametrization",
    "remove_parametrizations",
    "type_before_parametrizations",
]

_CACHE = {"on": False, "values": {}}


class ParametrizationList(Module):
    """The parametrizations of one tensor, applied in order to its original(s)."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__()
        self._plist = list(modules)
        for i, m in enumerate(self._plist):
            self.add_module(str(i), m)
        self.unsafe = unsafe
        first = self._plist[0]
        if hasattr(first, "right_inverse"):
            from .._grad_mode import no_grad

            with no_grad():
                new = first.right_inverse(original)
        else:
            new = original
        if isinstance(new, (tuple, list)):
            self.is_tensor = False
            self.ntensors = len(new)
            for i, t in enumerate(new):
                self.register_parameter(f"original{i}", _as_param(t, original))
        else:
            self.is_tensor = True
            self.ntensors = 1
            self.register_parameter("original", _as_param(new, original))

    def __len__(self):
        return len(self._plist)

    def __getitem__(self, i):
        return self._plist[i]

    def append(self, module):
        self._plist.append(module)
        self.add_module(str(len(self._plist) - 1), module)

    def right_inverse(self, value):
        """Sets the originals so that the parametrized tensor becomes `value`."""
        from .._grad_mode import no_grad

        with no_grad():
            for m in reversed(self._plist[1:]):
                if hasattr(m, "right_inverse"):
                    value = m.right_inverse(value)
            first = self._plist[0]
            value = first.right_inverse(value) if hasattr(first, "right_inverse") else value
            if self.is_tensor:
                self.original[...] = value
            else:
                for i, t in enumerate(value):
                    getattr(self, f"original{i}")[...] = t

    def forward(self):
        if self.is_tensor:
            x = self._plist[0](self.original)
        else:
            x = self._plist[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for m in self._plist[1:]:
            x = m(x)
        return x


def _as_param(t, like):
    p = Parameter(t.detach() if isinstance(t, _core.ndarray) else t)
    p.requires_grad_(bool(getattr(like, "requires_grad", True)))
    return p


def _getter(name):
    def get(self):
        if _CACHE["on"]:
            key = (id(self), name)
            if key not in _CACHE["values"]:
                _CACHE["values"][key] = self.parametrizations[name]()
            return _CACHE["values"][key]
        return self.parametrizations[name]()

    def set_(self, value):
        self.parametrizations[name].right_inverse(value)

    return property(get, set_)


def is_parametrized(module, tensor_name=None):
    """Whether `module` (or its tensor `tensor_name`) has parametrizations."""
    p = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(p, ModuleDict):
        return False
    return len(p) > 0 if tensor_name is None else tensor_name in p


def type_before_parametrizations(module):
    """The module's class before its class was swapped."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Parametrizes ``module.<tensor_name>`` by the module `parametrization` (see above)."""
    who = "ember.nn.utils.parametrize.register_parametrization"
    if not isinstance(parametrization, Module):
        raise TypeError(f"{who}: parametrization must be an nn.Module, got {parametrization!r}")
    if is_parametrized(module, tensor_name):
        module.parametrizations[tensor_name].append(parametrization)
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(
            f"{who}: module {type(module).__name__} has no parameter or buffer {tensor_name!r}"
        )
    original = getattr(module, tensor_name)
    if not is_parametrized(module):
        cls = type(module)
        module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {})
        module.parametrizations = ModuleDict()
    plist = ParametrizationList([parametrization], original, unsafe)
    module._parameters.pop(tensor_name, None)
    module._buffers.pop(tensor_name, None)
    module.parametrizations[tensor_name] = plist
    setattr(type(module), tensor_name, _getter(tensor_name))
    return module


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Removes the parametrizations of ``module.<tensor_name>``: the tensor becomes a plain
    parameter again, holding the parametrized value (or the original one)."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    from .._grad_mode import no_grad

    with no_grad():
        if leave_parametrized:
            value = plist()
        elif plist.is_tensor:
            value = plist.original
        else:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                "parametrized in terms of a sequence of tensors."
            )
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    module.register_parameter(tensor_name, Parameter(value.detach()))
    if not len(module.parametrizations):
        del module._modules["parametrizations"]
        module.__class__ = type(module).__bases__[0]
    return module


@contextlib.contextmanager
def cached():
    """Inside, each parametrized tensor is computed once and reused (PyTorch's ``cached``)."""
    outer = _CACHE["on"]
    _CACHE["on"] = True
    try:
        yield
    finally:
        _CACHE["on"] = outer
        if not outer:
            _CACHE["values"].clear()
