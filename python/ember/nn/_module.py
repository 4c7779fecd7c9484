"""ember.nn.Module: the base class of layers and models (registration of parameters, buffers and
submodules through attribute assignment; traversal; train/eval; to(); state dicts; repr)."""

from __future__ import annotations

import copy
import itertools
import numbers
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from .. import _core, _memory_format
from .._core import ndarray
from ._grad_mode import detach, no_grad
from ._parameter import Parameter

__all__ = ["Module"]


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys the module expected and did not get, and the
    keys it got and did not expect."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class RemovableHandle:
    """Returned by the ``register_*_hook`` methods; ``remove()`` unregisters the hook."""

    _next_id = itertools.count()

    def __init__(self, hooks):
        self._hooks = hooks
        self.id = next(RemovableHandle._next_id)

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    pad = " " * spaces
    return lines[0] + "\n" + "\n".join(pad + line for line in lines[1:])


def _check_name(owner, name, kind):
    if not isinstance(name, str):
        raise TypeError(f"{owner}: {kind} name must be a string, got {type(name).__name__}")
    if not name:
        raise KeyError(f'{owner}: {kind} name can\'t be empty string ""')
    if "." in name:
        raise KeyError(f'{owner}: {kind} name can\'t contain ".", got {name!r}')


def _dtype_or_none(v):
    """An ember dtype for dtype-like `v` (an ember dtype, or a dtype name), else None."""
    if isinstance(v, _core.dtype):
        return v
    if isinstance(v, str):
        try:
            return _core.dtype(v)
        except (TypeError, ValueError):
            return None
    return None


def _parse_to(args, kwargs):
    """(device, dtype) from Module.to's forms: to(device), to(dtype), to(device, dtype),
    to(array) and the keywords device=, dtype= (non_blocking= is accepted and ignored)."""
    who = "ember.nn.Module.to"
    kwargs = dict(kwargs)
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    fmt = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"{who}: unexpected keyword argument {next(iter(kwargs))!r}")
    args = list(args)
    if len(args) > 3:
        raise TypeError(f"{who}: expected at most 3 positional arguments, got {len(args)}")
    if args and isinstance(args[-1], bool):  # the non_blocking flag
        args.pop()
    for a in args:
        if isinstance(a, ndarray):
            device, dtype = a.device, a.dtype
        elif isinstance(a, _core.Device):
            device = a
        elif _dtype_or_none(a) is not None:
            dtype = _dtype_or_none(a)
        elif isinstance(a, str):
            device = a
        else:
            raise TypeError(
                f"{who}: expected a device, a dtype or an array, got {type(a).__name__} {a!r}"
            )
    if device is not None:
        device = _core.Device(device) if not isinstance(device, _core.Device) else device
    if dtype is not None:
        dt = _dtype_or_none(dtype)
        if dt is None:
            raise TypeError(f"{who}: dtype must be an ember dtype, got {dtype!r}")
        if dt.kind not in "fc":
            raise TypeError(
                f"{who}: only floating-point or complex dtypes are accepted, got dtype={dt}"
            )
        dtype = dt
    if fmt is not None:
        from .._memory_format import _check

        fmt = _check(fmt, who)
    return device, dtype, fmt


class Module:
    """Base class of every layer and model.

    Assigning a ``Parameter`` to an attribute registers it as a parameter, a ``Module`` as a
    submodule; ``register_buffer`` adds state that is not a parameter (running statistics).
    Subclasses call ``super().__init__()`` first and implement ``forward``; calling the module
    runs ``forward`` (with any registered hooks).
    """

    training: bool

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got unexpected arguments (Module.__init__ "
                "takes none)"
            )
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_hooks_with_kwargs"] = set()
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()

    # ---- calling ------------------------------------------------------------------------------

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        bwd, bpre = d.get("_backward_hooks"), d.get("_backward_pre_hooks")
        if not self._forward_pre_hooks and not self._forward_hooks and not bwd and not bpre:
            return self.forward(*args, **kwargs)
        with_kw = d.get("_hooks_with_kwargs", ())
        for hid, hook in list(self._forward_pre_hooks.items()):
            if hid in with_kw:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(
                            "ember.nn.Module: a forward pre-hook registered with_kwargs=True "
                            f"must return None or an (args, kwargs) pair, got {result!r:.80}"
                        )
                    args, kwargs = result
                    args = args if isinstance(args, tuple) else (args,)
                continue
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        call = None
        if bwd or bpre:
            from ._backward_hooks import BackwardHookCall

            call = BackwardHookCall(self, bwd, bpre)
            args = call.inputs(args)
        out = self.forward(*args, **kwargs)
        for hid, hook in list(self._forward_hooks.items()):
            result = hook(self, args, kwargs, out) if hid in with_kw else hook(self, args, out)
            if result is not None:
                out = result
        return out if call is None else call.outputs(out)

    def _add_hook(self, table, hook, prepend, with_kwargs=False):
        h = RemovableHandle(table)
        table[h.id] = hook
        if prepend:
            table.move_to_end(h.id, last=False)
        if with_kwargs:
            self.__dict__.setdefault("_hooks_with_kwargs", set()).add(h.id)
        return h

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` runs before ``forward``; a non-None result replaces args.
        ``with_kwargs=True``: ``hook(module, args, kwargs)`` returning None or (args, kwargs).
        ``prepend=True`` runs it before the hooks already registered."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend, with_kwargs)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args, output)`` (``with_kwargs=True``: ``hook(module, args, kwargs,
        output)``) runs after ``forward``; a non-None result replaces the output."""
        return self._add_hook(self._forward_hooks, hook, prepend, with_kwargs)

    def register_full_backward_pre_hook(self, hook, *, prepend=False):
        """``hook(module, grad_output)`` runs when the gradients with respect to the module's
        outputs are computed; a non-None result (a tuple) replaces them."""
        return self._add_hook(self.__dict__.setdefault("_backward_pre_hooks", OrderedDict()),
                              hook, prepend)  # fmt: skip

    def register_full_backward_hook(self, hook, *, prepend=False):
        """``hook(module, grad_input, grad_output)`` runs when the gradients with respect to
        the module's positional inputs are computed (None for inputs that need none); a
        non-None result (a tuple, one per positional input) replaces ``grad_input``."""
        return self._add_hook(self.__dict__.setdefault("_backward_hooks", OrderedDict()),
                              hook, prepend)  # fmt: skip

    def register_backward_hook(self, hook):
        """PyTorch's deprecated form; here the same as :meth:`register_full_backward_hook`."""
        return self.register_full_backward_hook(hook)

    # ---- registration -------------------------------------------------------------------------

    def _owner(self):
        return f"{type(self).__name__}"

    def register_parameter(self, name, param):
        """Adds a parameter (a ``Parameter``, or None for an absent optional one)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self._owner(), name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"{self._owner()}: attribute {name!r} already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"{self._owner()}: cannot assign {type(param).__module__}.{type(param).__name__} "
                f"object to parameter {name!r} (ember.nn.Parameter or None required)"
            )
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Adds a buffer: an array that is part of the module's state but not a parameter.
        Persistent buffers appear in ``state_dict``. `tensor` may be None."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self._owner(), name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"{self._owner()}: attribute {name!r} already exists")
        if tensor is not None and not isinstance(tensor, ndarray):
            raise TypeError(
                f"{self._owner()}: cannot assign {type(tensor).__name__} object to buffer "
                f"{name!r} (an ember.ndarray or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Adds a submodule (or None), reachable as the attribute `name`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name(self._owner(), name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"{self._owner()}: attribute {name!r} already exists")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")

        def remove_from(*dicts):
            for dd in dicts:
                if name in dd:
                    if isinstance(dd, set):
                        dd.discard(name)
                    else:
                        del dd[name]

        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"{self._owner()}: cannot assign {type(value).__name__} as parameter "
                    f"{name!r} (ember.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(
                        f"{self._owner()}: cannot assign {type(value).__name__} as child module "
                        f"{name!r} (ember.nn.Module or None expected)"
                    )
                modules[name] = value
            else:
                buffers = d.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, ndarray):
                        raise TypeError(
                            f"{self._owner()}: cannot assign {type(value).__name__} as buffer "
                            f"{name!r} (an ember.ndarray or None expected)"
                        )
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            table = d.get(key)
            if table is not None and name in table:
                return table[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for key in ("_parameters", "_buffers", "_modules"):
            table = self.__dict__.get(key)
            if table is not None and name in table:
                del table[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(super().__dir__())
        keys += list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # ---- traversal ----------------------------------------------------------------------------

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k), v

    def parameters(self, recurse=True):
        """The parameters of this module (and of its submodules when `recurse`), each once."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, parameter) pairs."""
        yield from self._named_members(
            lambda m: m._parameters.items(), prefix, recurse, remove_duplicate
        )

    def buffers(self, recurse=True):
        """The buffers of this module (and of its submodules when `recurse`)."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, buffer) pairs."""
        yield from self._named_members(
            lambda m: m._buffers.items(), prefix, recurse, remove_duplicate
        )

    def children(self):
        """The direct submodules."""
        for _, m in self.named_children():
            yield m

    def named_children(self):
        """(name, direct submodule) pairs, each submodule once."""
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def modules(self):
        """This module and all its submodules, depth first, each once."""
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(dotted name, module) pairs for this module ("") and all submodules."""
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(
                memo, prefix + ("." if prefix else "") + name, remove_duplicate
            )

    def get_submodule(self, target):
        """The submodule at the dotted path `target` ("" is this module)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            sub = mod._modules.get(item) if isinstance(mod, Module) else None
            if sub is None:
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = sub
        return mod

    def get_parameter(self, target):
        """The parameter at the dotted path `target`."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._parameters:
            raise AttributeError(f"{mod._get_name()} has no parameter `{name}`")
        return mod._parameters[name]

    def apply(self, fn):
        """Calls ``fn(module)`` on every submodule, then on this module; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- modes and gradients ------------------------------------------------------------------

    def train(self, mode=True):
        """Sets training mode (dropout active, batch norm uses batch statistics) recursively."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        """Sets evaluation mode: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Sets ``requires_grad`` of every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Clears the parameters' gradients: sets them to None, or zeros them in place."""
        for p in self.parameters():
            g = p.grad
            if g is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                with no_grad():
                    g[...] = 0

    # ---- moving -------------------------------------------------------------------------------

    def _apply(self, fn):
        """Replaces each parameter's data, gradient and each buffer by ``fn(array)``
        (recursively). Parameters keep their identity (their data is swapped, as PyTorch's
        ``param.data = ...``), so optimizers built before ``to()`` still hold them."""
        for m in self.children():
            m._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                new = fn(p)
                grad = p.grad
                new_grad = None if grad is None else fn(grad)
                if new is p:
                    if new_grad is not grad:
                        p.grad = new_grad
                    continue
                p.grad = None
                _core._set_data(p, new)
                if new_grad is not None:
                    p.grad = new_grad
            for key, b in self._buffers.items():
                if b is not None:
                    self._buffers[key] = fn(b)
        return self

    def to(self, *args, **kwargs):
        """Moves and/or casts the parameters and buffers: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(array)`` (its device and dtype), keywords ``device=`` and
        ``dtype=``, ``memory_format=`` (``ember.channels_last`` lays out the 4-d parameters and
        buffers as (N, H, W, C) in memory, as PyTorch's). A dtype applies to floating-point (and
        complex) arrays only. Returns self.

        Parameters keep their identity: an optimizer built before ``to`` updates the moved ones.
        """
        device, dtype, fmt = _parse_to(args, kwargs)

        def convert(t):
            out = t
            if dtype is not None and t.dtype.kind in "fc" and t.dtype != dtype:
                out = out.astype(dtype)
            if device is not None and out.device != device:
                out = out.to(device)
            if fmt is not None and out.ndim == _memory_format._RANK.get(fmt, out.ndim):
                out = _memory_format.to_format(out, fmt, "ember.nn.Module.to")
            return out

        return self._apply(convert)

    def cuda(self, device=None):
        """``to("cuda")`` (or ``"cuda:N"`` for an int `device`)."""
        if device is None:
            return self.to("cuda")
        if isinstance(device, numbers.Integral):
            return self.to(f"cuda:{int(device)}")
        return self.to(device)

    def cpu(self):
        """``to("cpu")``."""
        return self.to("cpu")

    def float(self):
        """Casts floating-point parameters and buffers to float32."""
        return self.to(_core.float32)

    def double(self):
        """Casts floating-point parameters and buffers to float64."""
        return self.to(_core.float64)

    def half(self):
        """Casts floating-point parameters and buffers to float16."""
        return self.to(_core.float16)

    def bfloat16(self):
        """Casts floating-point parameters and buffers to bfloat16."""
        return self.to(_core.bfloat16)

    # ---- state dicts --------------------------------------------------------------------------

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else detach(p)
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else detach(b)

    def state_dict(self, *, destination=None, prefix="", keep_vars=False):
        """An ordered dict of every parameter and persistent buffer by dotted name. The arrays
        share memory with the module's (without autograd history unless `keep_vars`); save
        it with ``ember.save``."""
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        return destination

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        persistent_buffers = {
            k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set
        }
        local = {
            k: v for k, v in itertools.chain(self._parameters.items(), persistent_buffers.items())
        }
        local = {k: v for k, v in local.items() if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, current in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, ndarray):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected an ember.ndarray from '
                    f"the checkpoint but received {type(value).__name__}"
                )
                continue
            if tuple(value.shape) != tuple(current.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from "
                    f"checkpoint, the shape in current model is {current.shape}."
                )
                continue
            try:
                with no_grad():
                    if value.device != current.device:
                        value = value.to(current.device)
                    if assign:
                        if name in self._parameters:
                            self._parameters[name] = Parameter(value, current.requires_grad)
                        else:
                            self._buffers[name] = value
                    else:
                        detach(current)[...] = value
            except Exception as e:  # dtype or device trouble: reported with the key
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {current.shape} and whose dimensions in the checkpoint are "
                    f"{value.shape}, an exception occurred: {e}"
                )
        if strict:
            for key in state_dict:
                if not key.startswith(prefix):
                    continue
                head, dot, _ = key[len(prefix) :].partition(".")
                if dot:
                    if head not in self._modules:
                        unexpected_keys.append(key)
                elif head not in local:
                    unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copies the arrays of `state_dict` into this module's parameters and buffers (in
        place, casting to their dtype and moving to their device; with `assign`, the module
        takes the loaded arrays instead). Returns ``(missing_keys, unexpected_keys)``; with
        `strict` (the default) either being non-empty raises RuntimeError, as do shape
        mismatches in any case."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(
                f"Expected state_dict to be dict-like, got {type(state_dict).__name__}."
            )
        missing, unexpected, errors = [], [], []
        state_dict = OrderedDict(state_dict)
        meta = {"assign_to_params_buffers": bool(assign)}

        def load(module, local_state, prefix=""):
            module._load_from_state_dict(
                local_state, prefix, meta, True, missing, unexpected, errors
            )
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {
                        k: v for k, v in local_state.items() if k.startswith(child_prefix)
                    }
                    load(child, child_state, child_prefix)

        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(
                    0,
                    "Unexpected key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in unexpected)
                    ),
                )
            if missing:
                errors.insert(
                    0,
                    "Missing key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in missing)
                    ),
                )
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    type(self).__name__, "\n\t".join(errors)
                )
            )
        return _IncompatibleKeys(missing, unexpected)

    # ---- copying and printing -----------------------------------------------------------------

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            if k == "_buffers":
                nb = OrderedDict()
                for bk, bv in v.items():
                    if bv is None:
                        nb[bk] = None
                    elif id(bv) in memo:
                        nb[bk] = memo[id(bv)]
                    else:
                        nb[bk] = memo[id(bv)] = detach(bv).copy()
                new.__dict__[k] = nb
            else:
                new.__dict__[k] = copy.deepcopy(v, memo)
        return new

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The text inside this module's parentheses in ``repr`` (subclasses override it)."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(m), 2) for key, m in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"
