"""B-spline prefilter and interpolation weights of ember.ndimage.

SciPy's spline prefilter runs, per pole ``z`` of the B-spline's inverse, a causal and an
anti-causal first-order recursion with boundary-specific initial values. On a signal extended by
the matching symmetry (whole-sample mirror, half-sample reflect or periodic) that recursion pair
is exactly the convolution with the two-sided kernel ``g * (-z / (1 - z**2)) * z**|k|``
(``g = (1 - z) * (1 - 1/z)``). Because ``|z| < 0.44`` for every order, the kernel falls below
double rounding within ~45 taps, so the prefilter is computed as a symmetric FIR correlation
(``_filters.correlate1d_work``) over the mode-extended array: one data-parallel pass per axis on
the array's device instead of a per-line sequential scan.
"""

from __future__ import annotations

import math

import numpy as np

from . import _filters as F
from . import _util as U


def poles(order):
    if order == 2:
        return [math.sqrt(8.0) - 3.0]
    if order == 3:
        return [math.sqrt(3.0) - 2.0]
    if order == 4:
        return [
            math.sqrt(664.0 - math.sqrt(438976.0)) + math.sqrt(304.0) - 19.0,
            math.sqrt(664.0 + math.sqrt(438976.0)) - math.sqrt(304.0) - 19.0,
        ]
    if order == 5:
        return [
            math.sqrt(67.5 - math.sqrt(4436.25)) + math.sqrt(26.25) - 6.5,
            math.sqrt(67.5 + math.sqrt(4436.25)) - math.sqrt(26.25) - 6.5,
        ]
    return []


_KERNELS: dict = {}


def prefilter_kernel(order):
    """The truncated two-sided impulse response of the order-``order`` spline prefilter."""
    if order in _KERNELS:
        return _KERNELS[order]
    k = np.array([1.0])
    for z in poles(order):
        r = int(math.ceil(math.log(1e-18) / math.log(abs(z))))
        j = np.arange(-r, r + 1)
        g = (1.0 - z) * (1.0 - 1.0 / z)
        h = g * (-z / (1.0 - z * z)) * np.abs(z) ** np.abs(j) * np.sign(z) ** np.abs(j)
        k = np.convolve(k, h)
    _KERNELS[order] = k
    return k


def _prefilter_mode(mode):
    """The symmetry SciPy's recursion initialisation assumes for each boundary mode."""
    if mode in ("grid-wrap",):
        return "wrap"
    if mode in ("nearest", "reflect", "grid-mirror"):
        return "reflect"
    return "mirror"  # constant, grid-constant, mirror, wrap


def spline_filter1d_work(x, order, axis, mode):
    if order < 2 or x.shape[axis] <= 1:
        return x
    k = prefilter_kernel(order)
    return F.correlate1d_work(x, k, axis, _prefilter_mode(mode), 0.0, 0)


def _check_order(func, order):
    import operator

    order = operator.index(order)
    if order < 0 or order > 5:
        raise RuntimeError(f"{func}: spline order not supported: order={order}")
    return order


def spline_filter1d(input, order=3, axis=-1, output=np.float64, mode="mirror"):
    """1-D spline prefilter along ``axis`` (``scipy.ndimage.spline_filter1d``)."""
    func = "spline_filter1d"
    order = _check_order(func, order)
    input = U.check_input(func, input)
    U.interp_mode(func, mode)
    cplx = U.is_complex(input.dtype)
    dtype, out_arr = U.resolve_output(func, output, input, complex_output=cplx)
    axis = U.check_axis(func, axis, input.ndim)
    x = input.astype(_work_for(input, dtype), copy=False)
    if order > 1:
        x = spline_filter1d_work(x, order, axis, mode)
    return U.finish(x, dtype, out_arr, src=input)


def _work_for(input, dtype):
    em = U.ember_mod()
    if U.is_complex(input.dtype) or U.is_complex(dtype):
        return em.complex128
    if input.dtype == em.float32 and dtype == em.float32:
        return em.float32
    return em.float64


def spline_filter(input, order=3, output=np.float64, mode="mirror"):
    """Multidimensional spline prefilter (``scipy.ndimage.spline_filter``)."""
    func = "spline_filter"
    order = _check_order(func, order)
    if order < 2:
        raise RuntimeError(f"{func}: spline order not supported: order={order}")
    input = U.check_input(func, input)
    U.interp_mode(func, mode)
    cplx = U.is_complex(input.dtype)
    dtype, out_arr = U.resolve_output(func, output, input, complex_output=cplx)
    x = input.astype(_work_for(input, dtype), copy=False)
    for ax in range(input.ndim):
        x = spline_filter1d_work(x, order, ax, mode)
    return U.finish(x, dtype, out_arr, src=input)


def spline_weights(t, order):
    """B-spline weights of the ``order + 1`` taps for fractional offsets ``t``.

    ``t`` is ``cc - start`` (an ember float64 array); tap ``j`` sits at distance ``|t - j|``.
    """
    em = U.ember_mod()
    ws = []
    for j in range(order + 1):
        y = em.abs(t - float(j))
        if order == 1:
            w = em.maximum(1.0 - y, 0.0)
        elif order == 3:
            inner = (y * y * (y - 2.0) * 3.0 + 4.0) / 6.0
            o = em.maximum(2.0 - y, 0.0)
            w = em.where(y < 1.0, inner, o * o * o / 6.0)
        else:
            # the general centred B-spline: sum_k (-1)^k C(n+1, k) (y + (n+1)/2 - k)_+^n / n!
            w = None
            half = (order + 1) / 2.0
            for k in range(order + 2):
                term = em.maximum(y + (half - k), 0.0) ** order
                term = term * ((-1) ** k * math.comb(order + 1, k) / math.factorial(order))
                w = term if w is None else w + term
            w = em.where(y < half, w, 0.0)
        ws.append(w)
    return ws
