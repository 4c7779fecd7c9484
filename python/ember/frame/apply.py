"""apply: an elementwise function of ember arrays run on the column's device."""

from __future__ import annotations

import types
import weakref

import numpy as np

import ember as _em

from . import dtypes as _dt
from .column import Column

_VECTORIZED = weakref.WeakKeyDictionary()  # function -> its ember.vectorize ufunc


def apply_column(col: Column, func, args, kwargs, where, allow_reduce=False):
    """``func(values, *args, **kwargs)`` on the device values; nulls stay null.

    With ``allow_reduce`` a function returning one value (``ember.sum``) gives that value.
    ``func`` must be an ember ufunc (``ember.sqrt``) or a Python function built of ember/array
    operations that maps a 1-D array to an array of the same length. Arbitrary Python code per
    value (strings, dicts, ``if`` on a value) cannot run on the device: that raises TypeError
    naming the method instead of silently computing on the host.
    """
    if isinstance(func, (dict, str)) or not callable(func):
        raise TypeError(
            f"ember.frame.{where}: func must be a callable of ember arrays, "
            f"got {type(func).__name__}"
        )
    if col.kind not in ("num",):
        raise TypeError(
            f"ember.frame.{where}: only numeric columns can run an ember function "
            f"on the device (dtype {col.dtype})"
        )
    data = col.data
    try:
        with _em.errstate(all="ignore"):
            out = func(data, *args, **kwargs)
    except (TypeError, ValueError) as exc:
        out = _compiled(func, data, args, kwargs)  # per-value Python code, compiled
        if out is None:
            raise TypeError(
                f"ember.frame.{where}: {getattr(func, '__name__', func)!r} is neither an "
                f"elementwise function of ember arrays ({type(exc).__name__}: {exc}) nor a "
                "scalar function ember.vectorize compiles (a def of numbers: arithmetic, "
                "math, if/else); other per-value Python code does not run on the device"
            ) from exc
    if allow_reduce and (np.isscalar(out) or (isinstance(out, _em.ndarray) and out.ndim == 0)):
        return out.item() if hasattr(out, "item") else out  # a reduction: one value per column
    if np.isscalar(out):
        out = _em.full(len(col), out, device=col.device)
    if not isinstance(out, _em.ndarray) or out.shape != data.shape:
        raise TypeError(
            f"ember.frame.{where}: {getattr(func, '__name__', func)!r} must return an array of "
            f"shape {tuple(data.shape)}, got {type(out).__name__} "
            f"{getattr(out, 'shape', '')}"
        )
    dt = _dt.normalize(np.dtype(out.dtype))
    return Column(dt, out, col.mask)


def _compiled(func, data, args, kwargs):
    """``func`` of one number compiled to a kernel by ``ember.vectorize`` (cuDF compiles a
    Series.apply's Python function with Numba the same way) and run over `data` on its device;
    None when the function is not a plain def it can compile."""
    if args or kwargs or not isinstance(func, types.FunctionType):
        return None
    try:
        uf = _VECTORIZED.get(func)
        if uf is None:
            uf = _VECTORIZED[func] = _em.vectorize(func)
        with _em.errstate(all="ignore"):
            out = uf(data)
    except Exception:  # the compiler's TypingError and the like: the caller's TypeError
        return None
    return out if isinstance(out, _em.ndarray) else None
