"""Derivative filters of ember.ndimage: sobel, prewitt, laplace, gaussian_laplace, magnitudes.

Each is a composition of the separable 1-D passes in ``_filters`` with SciPy's order of
operations (intermediates stored in the output dtype), so integer outputs match SciPy exactly.
"""

from __future__ import annotations

import numpy as np

from . import _filters as F
from . import _util as U


def _sobel_like(func, input, axis, output, mode, cval, smooth):
    input = U.check_input(func, input)
    dtype, out_arr = U.resolve_output(func, output, input, complex_output=U.is_complex(input.dtype))
    axis = U.check_axis(func, axis, input.ndim)
    modes = U.normalize_sequence(func, "mode", mode, input.ndim)
    diff = np.array([-1.0, 0.0, 1.0])
    x = F.correlate1d_work(
        input.astype(U.work_dtype(input.dtype), copy=False),
        diff,
        axis,
        U.filter_mode(func, modes[axis]),
        cval,
        0,
    )
    x = U.cast_out(x, dtype)
    for ax in range(input.ndim):
        if ax == axis:
            continue
        x = F.correlate1d_work(
            x.astype(U.work_dtype(x.dtype), copy=False),
            smooth,
            ax,
            U.filter_mode(func, modes[ax]),
            cval,
            0,
        )
        x = U.cast_out(x, dtype)
    return U.finish(x, dtype, out_arr)


def sobel(input, axis=-1, output=None, mode="reflect", cval=0.0):
    """Sobel filter along ``axis`` (``scipy.ndimage.sobel``)."""
    return _sobel_like("sobel", input, axis, output, mode, cval, np.array([1.0, 2.0, 1.0]))


def prewitt(input, axis=-1, output=None, mode="reflect", cval=0.0):
    """Prewitt filter along ``axis`` (``scipy.ndimage.prewitt``)."""
    return _sobel_like("prewitt", input, axis, output, mode, cval, np.array([1.0, 1.0, 1.0]))


def generic_laplace(
    input,
    derivative2,
    output=None,
    mode="reflect",
    cval=0.0,
    extra_arguments=(),
    extra_keywords=None,
    *,
    axes=None,
):
    """N-D Laplace filter from a second-derivative function (``scipy.ndimage.generic_laplace``)."""
    func = "generic_laplace"
    extra_keywords = {} if extra_keywords is None else extra_keywords
    input = U.check_input(func, input)
    dtype, out_arr = U.resolve_output(func, output, input, complex_output=U.is_complex(input.dtype))
    axes = U.check_axes(func, axes, input.ndim)
    if len(axes) == 0:
        return U.finish(input, dtype, out_arr, src=input)
    modes = U.normalize_sequence(func, "mode", mode, len(axes))
    acc = None
    for i, ax in enumerate(axes):
        t = derivative2(input, ax, dtype, modes[i], cval, *extra_arguments, **extra_keywords)
        t = U.cast_out(t, dtype)
        acc = t if acc is None else U.cast_out(acc + t, dtype)
    return U.finish(acc, dtype, out_arr)


def laplace(input, output=None, mode="reflect", cval=0.0, *, axes=None):
    """N-D Laplace filter with second differences (``scipy.ndimage.laplace``)."""

    def d2(inp, axis, out, m, cv):
        return F.correlate1d(inp, [1.0, -2.0, 1.0], axis, out, m, cv, 0)

    return generic_laplace(input, d2, output, mode, cval, axes=axes)


def gaussian_laplace(input, sigma, output=None, mode="reflect", cval=0.0, *, axes=None, **kwargs):
    """Laplace filter with Gaussian second derivatives (``scipy.ndimage.gaussian_laplace``)."""
    func = "gaussian_laplace"
    input = U.check_input(func, input)
    axes = U.check_axes(func, axes, input.ndim)
    sigmas = U.normalize_sequence(func, "sigma", sigma, len(axes))

    def d2(inp, axis, out, m, cv):
        order = [2 if a == axis else 0 for a in axes]
        return F.gaussian_filter(inp, sigmas, order, out, m, cv, axes=axes, **kwargs)

    return generic_laplace(input, d2, output, mode, cval, axes=axes)


def generic_gradient_magnitude(
    input,
    derivative,
    output=None,
    mode="reflect",
    cval=0.0,
    extra_arguments=(),
    extra_keywords=None,
    *,
    axes=None,
):
    """Gradient magnitude from a first-derivative function (SciPy's same-named function)."""
    em = U.ember_mod()
    func = "generic_gradient_magnitude"
    extra_keywords = {} if extra_keywords is None else extra_keywords
    input = U.check_input(func, input)
    dtype, out_arr = U.resolve_output(func, output, input, complex_output=U.is_complex(input.dtype))
    axes = U.check_axes(func, axes, input.ndim)
    if len(axes) == 0:
        return U.finish(input, dtype, out_arr, src=input)
    modes = U.normalize_sequence(func, "mode", mode, len(axes))
    acc = None
    for i, ax in enumerate(axes):
        t = U.cast_out(
            derivative(input, ax, dtype, modes[i], cval, *extra_arguments, **extra_keywords), dtype
        )
        t = U.cast_out(t * t, dtype)
        acc = t if acc is None else U.cast_out(acc + t, dtype)
    acc = em.sqrt(acc)
    return U.finish(acc, dtype, out_arr)


def gaussian_gradient_magnitude(
    input, sigma, output=None, mode="reflect", cval=0.0, *, axes=None, **kwargs
):
    """Gradient magnitude of Gaussian derivatives (SciPy's ``gaussian_gradient_magnitude``)."""
    func = "gaussian_gradient_magnitude"
    input = U.check_input(func, input)
    axes = U.check_axes(func, axes, input.ndim)
    sigmas = U.normalize_sequence(func, "sigma", sigma, len(axes))

    def d1(inp, axis, out, m, cv):
        order = [1 if a == axis else 0 for a in axes]
        return F.gaussian_filter(inp, sigmas, order, out, m, cv, axes=axes, **kwargs)

    return generic_gradient_magnitude(input, d1, output, mode, cval, axes=axes)
