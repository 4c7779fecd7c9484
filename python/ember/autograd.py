"""Reverse-mode automatic differentiation (the engine is C++: DESIGN.md section 8).

Arrays of floating or complex dtype may require gradients (``x.requires_grad = True``, or
``requires_grad=True`` in the creation functions); ops on them record a graph that
``y.backward()`` or :func:`grad` walks backwards. Gradients accumulate in the leaves' ``.grad``
as in PyTorch. Grad mode is per thread: :class:`no_grad`, :class:`enable_grad`,
:class:`set_grad_enabled`. :class:`Function` defines an op with a custom backward.
"""

from __future__ import annotations

import atexit
import functools
import traceback

from . import _core
from ._core import ndarray

__all__ = [
    "Function",
    "Node",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "grad",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "no_grad",
    "set_detect_anomaly",
    "set_grad_enabled",
]

#: The type of ``x.grad_fn``: ``name()`` and ``next_functions``.
Node = _core._Node


def is_grad_enabled():
    """Whether ops record the autograd graph in this thread."""
    return _core._is_grad_enabled()


class _GradMode:
    """A context manager and decorator that sets grad mode and restores it on exit."""

    _mode = True

    def __enter__(self):
        self._prev = _core._is_grad_enabled()
        _core._set_grad_enabled(self._mode)
        return None

    def __exit__(self, *exc):
        _core._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):
    """Disables gradient recording: ``with ember.no_grad(): ...`` or ``@ember.no_grad()``."""

    _mode = False


class enable_grad(_GradMode):
    """Enables gradient recording (inside a ``no_grad`` block, for example)."""

    _mode = True


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(mode)`` sets grad mode at once (a function call); used with ``with``,
    the previous mode comes back at the end of the block. Also a decorator."""

    def __init__(self, mode):
        self._prev = _core._is_grad_enabled()
        self._mode = bool(mode)
        _core._set_grad_enabled(self._mode)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _core._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        mode = self._mode
        _core._set_grad_enabled(self._prev)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper


def _seq(x):
    if x is None:
        return None
    if isinstance(x, ndarray):
        return [x]
    return list(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates the gradients of ``tensors`` (weighted by ``grad_tensors``; omitted for
    one-element outputs) into the ``.grad`` of the leaves, or of ``inputs`` only."""
    _core._backward(
        _seq(tensors), _seq(grad_tensors), retain_graph, bool(create_graph), _seq(inputs)
    )


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    allow_unused=False,
):
    """The gradients of ``outputs`` with respect to ``inputs`` (a tuple, one per input),
    without touching any ``.grad``. With ``create_graph`` they are differentiable again (for
    higher-order derivatives); with ``allow_unused`` an unused input gets None."""
    return _core._grad(
        _seq(outputs),
        _seq(inputs),
        _seq(grad_outputs),
        retain_graph,
        bool(create_graph),
        bool(allow_unused),
    )


def _stack():
    return "".join(traceback.format_stack()[:-1])


def is_anomaly_enabled():
    return _core._is_anomaly_enabled()


class set_detect_anomaly:
    """Turns anomaly mode on or off (a function call, or a ``with`` block)."""

    def __init__(self, mode, check_nan=True):
        self._prev = _core._is_anomaly_enabled()
        _core._set_anomaly_context(_stack)
        _core._set_anomaly_enabled(bool(mode) and bool(check_nan))

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _core._set_anomaly_enabled(self._prev)
        return False


class detect_anomaly:
    """Anomaly mode for a block (or a decorated function): each recorded op's forward output
    and each backward result is checked for NaN and inf, and the error names the op that made
    them (a RuntimeError, with the Python stack where the op was recorded). Slow: every op
    reads a flag back from its device."""

    def __init__(self, check_nan=True):
        self._check = bool(check_nan)

    def __enter__(self):
        self._prev = _core._is_anomaly_enabled()
        _core._set_anomaly_context(_stack)
        _core._set_anomaly_enabled(self._check)
        return None

    def __exit__(self, *exc):
        _core._set_anomaly_enabled(self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self._check):
                return fn(*args, **kwargs)

        return wrapper


class FunctionCtx:
    """The ``ctx`` of a :class:`Function`: what forward leaves for backward."""

    def __init__(self):
        self._saved = ()
        self.needs_input_grad = ()
        self.materialize_grads = True
        self._name = "Function"

    def save_for_backward(self, *arrays):
        """Saves arrays (with their versions: modifying one in place before backward raises)."""
        self._saved = tuple((a, a._version if isinstance(a, ndarray) else None) for a in arrays)

    @property
    def saved_tensors(self):
        if self._saved is None:
            raise RuntimeError(
                "ember.autograd.Function: the saved arrays were freed by a previous backward; "
                "pass retain_graph=True to it to backward through the graph a second time"
            )
        out = []
        for a, v in self._saved:
            if isinstance(a, ndarray) and a._version != v:
                raise RuntimeError(
                    "ember.autograd: one of the arrays needed for gradient computation has been "
                    f"modified by an in-place operation: the {a.dtype} array of shape "
                    f"{tuple(a.shape)} saved by {self._name} is at version "
                    f"{a._version}; expected version {v}"
                )
            out.append(a)
        return tuple(out)

    saved_arrays = saved_tensors

    def set_materialize_grads(self, value):
        """Whether backward gets zeros (True, the default) or None for outputs without a
        gradient."""
        self.materialize_grads = bool(value)

    def mark_non_differentiable(self, *arrays):
        self._non_diff = {id(a) for a in arrays}

    def _release(self):
        had = bool(self._saved)
        self._saved = None
        return had


class Function:
    """An op with a custom backward, as ``torch.autograd.Function``::

        class Exp(ember.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = ember.exp(x)
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, g):
                (y,) = ctx.saved_tensors
                return g * y

        y = Exp.apply(x)

    ``forward`` runs without recording; ``backward`` gets one gradient per output and returns
    one per ``forward`` argument (None for arguments that are not arrays or need none)."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("ember.autograd.Function subclasses must define forward")

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("ember.autograd.Function subclasses must define backward")

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        ctx._name = cls.__name__ + "Backward"
        ctx.needs_input_grad = tuple(isinstance(a, ndarray) and a.requires_grad for a in args)
        with no_grad():
            out = cls.forward(ctx, *args, **kwargs)
        positions = [i for i, a in enumerate(args) if isinstance(a, ndarray)]
        if not (is_grad_enabled() and any(ctx.needs_input_grad)):
            return out
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        arr = [i for i, o in enumerate(outs) if isinstance(o, ndarray)]
        non_diff = getattr(ctx, "_non_diff", set())
        diff = [i for i in arr if id(outs[i]) not in non_diff]
        nargs = len(args)

        def _backward(*grads):
            full = [None] * len(outs)
            for i, g in zip(diff, grads, strict=True):
                full[i] = g
            r = cls.backward(ctx, *full)
            r = r if isinstance(r, tuple) else (r,)
            if len(r) != nargs:
                raise RuntimeError(
                    f"ember.autograd: {cls.__name__}.backward returned {len(r)} gradients; "
                    f"expected {nargs} (one per forward argument)"
                )
            return tuple(r[i] for i in positions)

        inputs = [args[i] for i in positions]
        new = _core._record_function(
            cls.__name__ + "Backward",
            _backward,
            ctx,
            inputs,
            [outs[i] for i in diff],
            ctx.materialize_grads,
        )
        result = list(outs)
        for i, a in zip(diff, new, strict=True):
            result[i] = a
        return result[0] if single else tuple(result)


# Outputs of a Function kept in module globals form cycles through the C++ graph that Python's
# collector cannot see (src/python/autograd.cpp, release_function_nodes): broken at exit, after
# the atexit hooks registered later (which may still run backward passes).
atexit.register(_core._release_function_nodes)
from . import _autograd_functional as functional  # noqa: E402, F401 (torch.autograd.functional)
