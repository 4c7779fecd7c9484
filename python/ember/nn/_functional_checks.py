"""Argument checks and small helpers shared by the ember.nn.functional modules: each raises the
exception a PyTorch user expects, naming the function and the offending value."""

from __future__ import annotations

import numbers
import warnings

from .. import _core
from .._array import asnumpy
from .._core import ndarray

_F = "ember.nn.functional."


def _array(x, who, name="input"):
    if not isinstance(x, ndarray):
        raise TypeError(f"{who}: {name} must be an ember.ndarray, got {type(x).__name__}")
    return x


def _opt_array(x, who, name):
    return None if x is None else _array(x, who, name)


def _is_float(x):
    return x.dtype.kind in "fc"


def _float_input(x, who, name="input"):
    _array(x, who, name)
    if x.dtype.kind not in "fc":
        raise TypeError(f"{who}: {name} must have a floating-point dtype, got {x.dtype}")
    return x


def _real(v, who, name):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{who}: {name} must be a real number, got {type(v).__name__} {v!r}")
    return float(v)


def _dim(dim, ndim, who, name="dim"):
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"{who}: {name} must be an int, got {type(dim).__name__} {dim!r}")
    dim = int(dim)
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"{who}: {name} {dim} is out of range for a {ndim}-d input (expected to be in "
            f"range [{-n}, {n - 1}])"
        )
    return dim % n


_REDUCTIONS = ("none", "mean", "sum")


def _reduction(reduction, who, allowed=_REDUCTIONS):
    if reduction not in allowed:
        raise ValueError(
            f"{who}: reduction must be one of {', '.join(repr(r) for r in allowed)}, got "
            f"{reduction!r}"
        )
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _same_shape(input, target, who):
    if input.shape != target.shape:
        raise ValueError(
            f"{who}: target shape {target.shape} differs from input shape {input.shape}; they "
            "must be the same"
        )


def _broadcast_target(input, target, who):
    # PyTorch broadcasts a differently-sized target with a warning (usually a bug)
    if input.shape != target.shape:
        warnings.warn(
            f"{who}: using a target shape {target.shape} that differs from the input shape "
            f"{input.shape}; they are broadcast, which is likely not what you want",
            UserWarning,
            stacklevel=3,
        )


def _half(x):
    """float16/bfloat16 inputs are computed in float32 (PyTorch's accumulation type)."""
    return x.dtype in (_core.float16, _core.bfloat16)


def _shape_tuple(s, who, name):
    if isinstance(s, numbers.Integral) and not isinstance(s, bool):
        return (int(s),)
    try:
        t = tuple(s)
    except TypeError:
        raise TypeError(f"{who}: {name} must be an int or a sequence of ints, got {s!r}") from None
    for v in t:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{who}: {name} must be an int or a sequence of ints, got {s!r}")
    return tuple(int(v) for v in t)


def _fused_ok(x):
    # the fused row kernels take real floating arrays; anything else is composed below
    return x.dtype in (_core.float16, _core.bfloat16, _core.float32, _core.float64)


def _host_out_of_range(idx, n, ignore):
    """The first index outside [0, n) (other than `ignore`) of a CPU array, or None."""
    a = asnumpy(idx)
    if a.min() >= 0 and a.max() < n:
        return None
    bad = (a < 0) | (a >= n)
    if ignore is not None:
        bad &= a != ignore
    return int(a[bad].reshape(-1)[0]) if bad.any() else None
