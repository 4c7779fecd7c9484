"""Fourier-domain filters of ember.ndimage: fourier_gaussian, fourier_uniform, fourier_shift.

Each multiplies the (already transformed) input by a separable factor built per axis from the
sample frequencies (``fftfreq``, or ``k / n`` along the real-transformed ``axis`` when ``n > 0``):
a broadcast product of small 1-D ember arrays on the input's device.
"""

from __future__ import annotations

import math

import numpy as np

from . import _util as U


def _freqs(length, is_real_axis, n):
    if is_real_axis and n > 0:
        return np.arange(length, dtype=np.float64) / n
    k = np.arange(length, dtype=np.float64)
    return np.where(k < (length + 1) // 2, k, k - length) / max(length, 1)


def _output(func, output, input, complex_only):
    em = U.ember_mod()
    dt = input.dtype
    if complex_only:
        allowed = (em.complex64, em.complex128)
        default = dt if dt in allowed else em.complex128
    else:
        allowed = (em.complex64, em.complex128, em.float32, em.float64)
        default = dt if dt in (em.complex64, em.complex128, em.float32) else em.float64
    if output is None:
        return default, None
    if isinstance(output, em.ndarray):
        if tuple(output.shape) != tuple(input.shape):
            raise RuntimeError(f"{func}: output shape not correct")
        return output.dtype, output
    dtype, _ = U.resolve_output(func, output, input)
    if dtype not in allowed:
        raise RuntimeError(f"{func}: output type not supported: {output!r}")
    return dtype, None


def _apply(func, input, params, n, axis, output, factor_fn, complex_only):
    em = U.ember_mod()
    input = U.as_array(input)
    nd = input.ndim
    axis = U.check_axis(func, axis, nd) if nd else 0
    params = [float(p) for p in U.normalize_sequence(func, "parameter", params, nd)]
    dtype, out_arr = _output(func, output, input, complex_only)
    res = input.astype(dtype)
    for k in range(nd):
        f = _freqs(input.shape[k], k == axis, n)
        fac = factor_fn(f, params[k])
        shp = [1] * nd
        shp[k] = input.shape[k]
        fac_dt = dtype if U.is_complex(dtype) or not np.iscomplexobj(fac) else em.complex128
        res = res * em.asarray(fac.reshape(shp), dtype=fac_dt, device=input.device)
    return U.finish(res, dtype, out_arr, src=input)


def fourier_gaussian(input, sigma, n=-1, axis=-1, output=None):
    """Multidimensional Gaussian Fourier filter (``scipy.ndimage.fourier_gaussian``)."""

    def fac(f, s):
        return np.exp(-2.0 * math.pi * math.pi * s * s * f * f)

    return _apply("fourier_gaussian", input, sigma, n, axis, output, fac, False)


def fourier_uniform(input, size, n=-1, axis=-1, output=None):
    """Multidimensional uniform Fourier filter (``scipy.ndimage.fourier_uniform``)."""

    def fac(f, s):
        return np.sinc(s * f)

    return _apply("fourier_uniform", input, size, n, axis, output, fac, False)


def fourier_shift(input, shift, n=-1, axis=-1, output=None):
    """Multidimensional Fourier shift filter (``scipy.ndimage.fourier_shift``)."""

    def fac(f, s):
        return np.exp(-2j * math.pi * s * f)

    return _apply("fourier_shift", input, shift, n, axis, output, fac, True)
