"""Shared helpers of ember.ndimage: argument normalization, output dtypes, boundary padding.

Everything here composes ember array operations, so the same code runs on the CPU and the GPU.
Only small index tables (one entry per padded position along one axis) are built with NumPy on
the host and then moved to the array's device.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Iterable

import numpy as np

import ember as _ember  # a lazy subpackage: loaded after ember itself

# Modes accepted by the filters; the grid-* spellings are SciPy's synonyms there.
FILTER_MODES = {
    "reflect": "reflect",
    "grid-mirror": "reflect",
    "constant": "constant",
    "grid-constant": "constant",
    "nearest": "nearest",
    "mirror": "mirror",
    "wrap": "wrap",
    "grid-wrap": "wrap",
}
INTERP_MODES = (
    "constant",
    "grid-constant",
    "nearest",
    "reflect",
    "grid-mirror",
    "mirror",
    "wrap",
    "grid-wrap",
)


def ember_mod():
    """The ember namespace (array creation, elementwise ops, gathers, sorts)."""
    return _ember


def as_array(x, like=None):
    """``x`` as an ember array (on ``like``'s device when ``x`` is not one already)."""
    em = ember_mod()
    if isinstance(x, em.ndarray):
        return x
    if like is not None:
        return em.asarray(x, device=like.device)
    return em.asarray(x)


def check_input(func, input):
    em = ember_mod()
    if not isinstance(input, em.ndarray):
        input = em.asarray(input)
    if input.dtype == em.float16 or input.dtype == em.bfloat16:
        raise RuntimeError(f"{func}: input dtype {input.dtype} is not supported (array type)")
    return input


def filter_mode(func, mode):
    try:
        return FILTER_MODES[mode]
    except (KeyError, TypeError):
        raise RuntimeError(
            f"{func}: boundary mode not supported: mode={mode!r}; expected one of "
            f"{sorted(FILTER_MODES)}"
        ) from None


def interp_mode(func, mode):
    if mode not in INTERP_MODES:
        raise RuntimeError(
            f"{func}: boundary mode not supported: mode={mode!r}; expected one of "
            f"{list(INTERP_MODES)}"
        )
    return mode


def normalize_sequence(func, name, value, rank):
    """A scalar repeated ``rank`` times, or a sequence checked to have ``rank`` entries."""
    if not isinstance(value, str) and isinstance(value, Iterable):
        out = list(value)
        if len(out) != rank:
            raise RuntimeError(
                f"{func}: sequence argument {name}={value!r} must have length equal to input "
                f"rank {rank}"
            )
        return out
    return [value] * rank


def check_axes(func, axes, ndim):
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, numbers.Integral) or np.isscalar(axes):
        axes = (operator.index(axes),)
    elif isinstance(axes, Iterable):
        axes = tuple(operator.index(a) for a in axes)
    else:
        raise ValueError(f"{func}: axes must be an integer, iterable of integers, or None")
    for a in axes:
        if a < -ndim or a > ndim - 1:
            raise ValueError(f"{func}: specified axis: {a} is out of range for ndim={ndim}")
    axes = tuple(a % ndim for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{func}: axes must be unique, got {axes}")
    return axes


def check_axis(func, axis, ndim):
    """One axis, normalized; out of range raises ``AxisError`` as NumPy/SciPy do."""
    axis = operator.index(axis)
    if axis < -ndim or axis >= ndim:
        raise _ember.AxisError(
            f"{func}: axis {axis} is out of bounds for array of dimension {ndim}"
        )
    return axis % ndim


def work_dtype(dtype):
    """The dtype a linear filter accumulates in (SciPy accumulates in double)."""
    em = ember_mod()
    if dtype == em.float32:
        return em.float32
    if dtype == em.complex64:
        return em.complex64
    if dtype == em.complex128:
        return em.complex128
    return em.float64


def resolve_output(func, output, input, shape=None, complex_output=False):
    """(dtype, array or None) for SciPy's ``output=`` argument (None, a dtype, or an array)."""
    em = ember_mod()
    if shape is None:
        shape = tuple(input.shape)
    shape = tuple(shape)
    if output is None:
        dt = input.dtype
        if complex_output and not is_complex(dt):
            dt = em.complex128 if dt == em.float64 else em.complex64
        return dt, None
    if isinstance(output, em.ndarray) or isinstance(output, np.ndarray):
        if tuple(output.shape) != shape:
            raise RuntimeError(
                f"{func}: output shape not correct: got {tuple(output.shape)}, expected {shape}"
            )
        if complex_output and not is_complex(output.dtype):
            raise RuntimeError(f"{func}: output must have complex dtype")
        if isinstance(output, np.ndarray):
            raise TypeError(f"{func}: output must be an ember array, not a NumPy array")
        return output.dtype, output
    try:
        npdt = np.dtype(getattr(output, "name", output) if not isinstance(output, type) else output)
    except TypeError:
        raise TypeError(f"{func}: output={output!r} is not an array or a dtype") from None
    if npdt.kind not in "biufc":
        raise RuntimeError(f"{func}: output must have numeric dtype, got {output!r}")
    if complex_output and npdt.kind != "c":
        raise RuntimeError(f"{func}: output must have complex dtype")
    return em.dtype(npdt.name), None


def is_complex(dt):
    em = ember_mod()
    return dt == em.complex64 or dt == em.complex128


def is_integer(dt):
    return np.dtype(str(dt)).kind in "iu"


def cast_out(x, dtype):
    """Cast a work array to ``dtype`` the way SciPy's filters store results (a C cast)."""
    em = ember_mod()
    if x.dtype == dtype:
        return x
    if dtype == em.bool:
        return x != 0
    return x.astype(dtype)


def round_out(x, dtype):
    """Cast the way SciPy's interpolation stores results: integers round half away from 0."""
    em = ember_mod()
    if x.dtype == dtype:
        return x
    kind = np.dtype(str(dtype)).kind
    if kind == "u":
        x = em.where(x > 0, x + 0.5, 0.0)
    elif kind == "i":
        x = em.where(x > 0, x + 0.5, x - 0.5)
    return cast_out(x, dtype)


def finish(result, dtype, out_arr, src=None):
    """Cast to the output dtype and store into ``out_arr`` when given.

    ``src`` is the caller's input: a result that is still (a view of) it, as when a filter made
    no pass at all, is copied so that the caller never gets its own array back.
    """
    result = cast_out(result, dtype)
    if out_arr is None and src is not None and _ember.may_share_memory(result, src):
        result = result.copy()
    if out_arr is not None:
        out_arr[...] = result
        return out_arr
    return result


# ----------------------------------------------------------------------------------------------
# boundary index tables


def boundary_index(pos, n, mode):
    """Map integer positions ``pos`` (NumPy int64) onto ``range(n)`` under a filter mode."""
    if mode == "nearest":
        return np.clip(pos, 0, n - 1)
    if mode == "wrap":
        return np.mod(pos, n)
    if mode == "reflect":
        m = np.mod(pos, 2 * n)
        return np.where(m < n, m, 2 * n - 1 - m)
    if mode == "mirror":
        if n == 1:
            return np.zeros_like(pos)
        m = np.mod(pos, 2 * n - 2)
        return np.where(m < n, m, 2 * n - 2 - m)
    if mode == "constant":
        return np.clip(pos, 0, n - 1)
    raise AssertionError(mode)


def pad_axis(x, axis, left, right, mode, cval=0.0):
    """``x`` extended by ``left``/``right`` elements along ``axis`` under a filter mode."""
    em = ember_mod()
    if left == 0 and right == 0:
        return x
    n = x.shape[axis]
    if n == 0 or mode == "constant":
        parts = []
        if left > 0:
            shp = list(x.shape)
            shp[axis] = left
            parts.append(em.full(tuple(shp), cval, dtype=x.dtype, device=x.device))
        if n:
            parts.append(x)
        if right > 0:
            shp = list(x.shape)
            shp[axis] = right
            parts.append(em.full(tuple(shp), cval, dtype=x.dtype, device=x.device))
        return em.concatenate(parts, axis=axis)
    pos = np.arange(-left, n + right, dtype=np.int64)
    idx = boundary_index(pos, n, mode)
    return em.take(x, idx, axis=axis)  # host indices: checked on the host, no GPU sync


def pad_all(x, pads, modes, cval=0.0):
    for ax, ((lo, hi), mode) in enumerate(zip(pads, modes, strict=True)):
        x = pad_axis(x, ax, lo, hi, mode, cval)
    return x


def axis_slice(ndim, axis, start, stop):
    sl = [slice(None)] * ndim
    sl[axis] = slice(start, stop)
    return tuple(sl)


def check_origin(func, origin, size):
    origin = operator.index(origin)
    if origin < -(size // 2) or origin > (size - 1) // 2:
        raise ValueError(
            f"{func}: invalid origin={origin}; origin must satisfy "
            f"-({size} // 2) <= origin <= ({size} - 1) // 2"
        )
    return origin


def host_array(func, name, value, dtype=np.float64):
    """A small host-side parameter (kernel weights, footprints, matrices) as a NumPy array."""
    em = ember_mod()
    if isinstance(value, em.ndarray):
        # small parameter arrays only (weights, structures): one explicit transfer
        value = em.asnumpy(value)
    try:
        return np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{func}: {name} could not be read as an array: {exc}") from None
