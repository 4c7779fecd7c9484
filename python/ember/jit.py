"""PyTorch's ``torch.jit`` spellings on ember's compiler: ``script`` and ``trace`` return
``ember.compile`` of the function or module (ember's lazy fusion runs the Python every call,
so control flow that TorchScript would script or a trace would freeze is always honoured);
``ignore``/``unused``/``export`` leave functions as they are; ``annotate`` returns its value;
``is_scripting``/``is_tracing`` are False. TorchScript archives (``jit.save``/``jit.load``) are
not a format ember has: save a module's ``state_dict`` with ``ember.save``."""

from __future__ import annotations

import functools

__all__ = [
    "annotate",
    "export",
    "ignore",
    "is_scripting",
    "is_tracing",
    "script",
    "trace",
    "trace_module",
    "unused",
]


def _compile(obj, who):
    from . import _compile as C
    from .nn import Module

    if not (callable(obj) or isinstance(obj, Module)):
        raise TypeError(f"ember.jit.{who}: expected a function or an nn.Module, got {obj!r}")
    return C.compile(obj)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``torch.jit.script``: ``ember.compile(obj)`` (a function, a method or an nn.Module)."""
    return _compile(obj, "script")


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, example_kwarg_inputs=None, **kwargs):  # fmt: skip
    """``torch.jit.trace``: ``ember.compile(func)``, run once on `example_inputs` (as a trace
    would) so its first real call finds its kernels compiled."""
    compiled = _compile(func, "trace")
    if example_inputs is not None or example_kwarg_inputs is not None:
        args = example_inputs if isinstance(example_inputs, tuple) else (
            () if example_inputs is None else (example_inputs,)
        )  # fmt: skip
        from .autograd import no_grad

        with no_grad():
            compiled(*args, **(example_kwarg_inputs or {}))
    return compiled


def trace_module(mod, inputs, **kwargs):
    """``torch.jit.trace_module``: the module compiled, each method in `inputs` warmed once."""
    compiled = _compile(mod, "trace_module")
    from .autograd import no_grad

    with no_grad():
        for name, args in inputs.items():
            args = args if isinstance(args, tuple) else (args,)
            (compiled if name == "forward" else getattr(mod, name))(*args)
    return compiled


def _identity_decorator(fn=None, **_):
    if fn is None:
        return lambda f: f
    return fn


ignore = functools.partial(_identity_decorator)
ignore.__doc__ = "``torch.jit.ignore``: the function as it is (ember compiles lazily)."
unused = functools.partial(_identity_decorator)
unused.__doc__ = "``torch.jit.unused``: the function as it is."


def export(fn):
    """``torch.jit.export``: the method as it is."""
    return fn


def annotate(the_type, the_value):
    """``torch.jit.annotate``: `the_value`."""
    return the_value


def is_scripting():
    """False: ember never runs code as TorchScript."""
    return False


def is_tracing():
    """False: ember's compile runs the Python on every call."""
    return False
