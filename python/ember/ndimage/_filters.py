"""Linear filters of ember.ndimage: correlate/convolve (1-D and n-D), Gaussian and uniform filters.

A filter is computed as a sum over kernel taps of weighted shifted slices of the input, after
the input has been extended by the boundary mode (``_util.pad_axis``: an ``ember.take`` with a
host-computed index table, or a concatenation of ``cval`` slabs). Separable filters are applied
as 1-D passes. Integer, float32 and float64 inputs keep SciPy's rules: float32 accumulates in
float32, everything else in float64, and the result is cast to the output dtype (a C cast,
truncating toward zero), after every pass for multi-pass filters as SciPy does.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import _util as U


def _weights_1d(func, weights):
    w = np.asarray(U.host_array(func, "weights", weights, dtype=None))
    if w.dtype.kind not in "biufc":
        raise TypeError(f"{func}: weights must be numeric, got dtype {w.dtype}")
    w = w.astype(np.complex128 if w.dtype.kind == "c" else np.float64)
    if w.ndim != 1:
        raise RuntimeError(f"{func}: no filter weights given (weights must be 1-D, got {w.shape})")
    if w.shape[0] < 1:
        raise RuntimeError(f"{func}: no filter weights given")
    return w


def _scalar(v):
    return complex(v) if isinstance(v, (complex, np.complexfloating)) else float(v)


class _Accumulator:
    """``acc += w * term`` with ``out=`` ufuncs: one result buffer and one scratch buffer.

    Writing into preallocated buffers avoids a fresh full-size allocation per tap, which on the
    CPU costs more than the arithmetic itself.
    """

    def __init__(self):
        self.acc = None
        self.tmp = None

    def add(self, term, w=1.0):
        em = U.ember_mod()
        w = _scalar(w)
        if self.acc is None:
            self.acc = em.multiply(term, w) if w != 1 else term.copy()
        elif w == 1:
            em.add(self.acc, term, out=self.acc)
        else:
            if self.tmp is None:
                self.tmp = em.multiply(term, w)
            else:
                em.multiply(term, w, out=self.tmp)
            em.add(self.acc, self.tmp, out=self.acc)

    def add_pair(self, a, b, w, anti):
        """``acc += w * (a + b)`` (``a - b`` when ``anti``)."""
        em = U.ember_mod()
        op = em.subtract if anti else em.add
        w = _scalar(w)
        if self.acc is None:
            self.acc = op(a, b)
            if w != 1:
                em.multiply(self.acc, w, out=self.acc)
            return
        if self.tmp is None:
            self.tmp = op(a, b)
        else:
            op(a, b, out=self.tmp)
        if w != 1:
            em.multiply(self.tmp, w, out=self.tmp)
        em.add(self.acc, self.tmp, out=self.acc)

    def result(self, shape, like):
        if self.acc is None:
            return U.ember_mod().zeros(shape, dtype=like.dtype, device=like.device)
        return self.acc


def _tap_sum(padded, taps, out_shape):
    """sum(w * padded[slices]) over ``taps`` = [(weight, slices)], skipping zero weights."""
    terms = [("s", w, padded[sl], None) for w, sl in taps if w != 0]
    fused = _fused_terms(terms, padded)
    if fused is not None:
        return fused
    acc = _Accumulator()
    for _, w, a, _ in terms:
        acc.add(a, w)
    return acc.result(out_shape, padded)


# GPU filters sum their taps in one generated kernel (ember.fuse) instead of one pass per tap;
# the fused function does the accumulator's operations in its order, so the results are the
# same bits. On the CPU the per-tap passes stay (no host compile per new kernel shape) unless
# FUSE_ON_CPU is set (the tests do, to compare both paths).
FUSE_ON_CPU = False
_FUSED: dict = {}


def _tap_function(struct):
    def taps(*args):
        it = iter(args)
        acc = None
        for kind, one, anti in struct:
            if kind == "s":
                term = next(it)
            else:
                a, b = next(it), next(it)
                term = a - b if anti else a + b
            if not one:
                term = term * next(it)
            acc = term if acc is None else acc + term
        return acc

    return taps


def _fused_terms(terms, like):
    """The sum of ``terms`` [(kind "s" or "p"/"m" (a+b / a-b), w, a, b)] in one fused kernel, or
    None where the per-tap path runs (CPU, complex, fewer than two terms)."""
    if len(terms) < 2 or (like.device.type != "cuda" and not FUSE_ON_CPU):
        return None
    if like.dtype.kind not in "f" or any(isinstance(_scalar(w), complex) for _, w, _, _ in terms):
        return None
    struct, args = [], []
    for kind, w, a, b in terms:
        w = _scalar(w)
        struct.append(("s" if kind == "s" else "p", w == 1, kind == "m"))
        args += [a] if kind == "s" else [a, b]
        if w != 1:
            args.append(w)
    struct = tuple(struct)
    fn = _FUSED.get(struct)
    if fn is None:
        fn = _FUSED[struct] = U.ember_mod().fuse(kernel_name="ndimage_taps")(_tap_function(struct))
    return fn(*args)


def correlate1d_work(x, w, axis, mode, cval, origin):
    """1-D correlation of a work-dtype array ``x`` with host weights ``w`` (no casting)."""
    L = w.shape[0]
    n = x.shape[axis]
    left = L // 2 + origin
    right = L - 1 - left
    padded = U.pad_axis(x, axis, left, right, mode, cval)
    nd = x.ndim
    # pair symmetric / antisymmetric taps: one multiply per pair
    sym = L > 1 and np.array_equal(w, w[::-1])
    anti = L > 1 and np.array_equal(w, -w[::-1])
    if sym or anti:
        terms = []
        for j in range(L // 2):
            if w[j] == 0:
                continue
            a = padded[U.axis_slice(nd, axis, j, j + n)]
            b = padded[U.axis_slice(nd, axis, L - 1 - j, L - 1 - j + n)]
            terms.append(("m" if anti else "p", w[j], a, b))
        if L % 2 == 1 and w[L // 2] != 0:
            c = L // 2
            terms.append(("s", w[c], padded[U.axis_slice(nd, axis, c, c + n)], None))
        fused = _fused_terms(terms, padded)
        if fused is not None:
            return fused
        acc = _Accumulator()
        for kind, wj, a, b in terms:
            if kind == "s":
                acc.add(a, wj)
            else:
                acc.add_pair(a, b, wj, kind == "m")
        return acc.result(tuple(x.shape), padded)
    taps = [(w[j], U.axis_slice(nd, axis, j, j + n)) for j in range(L)]
    return _tap_sum(padded, taps, tuple(x.shape))


def _prep(func, input, weights_complex, output, mode):
    input = U.check_input(func, input)
    complex_out = U.is_complex(input.dtype) or weights_complex
    dtype, out_arr = U.resolve_output(func, output, input, complex_output=complex_out)
    wdt = U.work_dtype(input.dtype)
    if weights_complex and not U.is_complex(wdt):
        em = U.ember_mod()
        wdt = em.complex64 if wdt == em.float32 else em.complex128
    return input, dtype, out_arr, wdt


def correlate1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """Calculate a 1-D correlation along the given axis (``scipy.ndimage.correlate1d``)."""
    w = _weights_1d("correlate1d", weights)
    # as np.correlate: complex weights are conjugated
    return _correlate1d("correlate1d", input, w.conj(), axis, output, mode, cval, origin)


def _correlate1d(func, input, w, axis, output, mode, cval, origin):
    input, dtype, out_arr, wdt = _prep(func, input, w.dtype.kind == "c", output, mode)
    m = U.filter_mode(func, mode)
    axis = U.check_axis(func, axis, input.ndim)
    origin = U.check_origin(func, origin, w.shape[0])
    res = correlate1d_work(input.astype(wdt, copy=False), w, axis, m, cval, origin)
    return U.finish(res, dtype, out_arr)


def convolve1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """Calculate a 1-D convolution along the given axis (``scipy.ndimage.convolve1d``)."""
    w = _weights_1d("convolve1d", weights)[::-1]
    origin = -operator_index(origin)
    if w.shape[0] % 2 == 0:
        origin -= 1
    return _correlate1d("convolve1d", input, w, axis, output, mode, cval, origin)


def operator_index(v):
    import operator

    return operator.index(v)


def _correlate_nd(func, input, weights, output, mode, cval, origin, axes, convolution):
    input = U.check_input(func, input)
    w = np.asarray(U.host_array(func, "weights", weights, dtype=None))
    if w.dtype.kind not in "biufc":
        raise TypeError(f"{func}: weights must be numeric, got dtype {w.dtype}")
    w = w.astype(np.complex128 if w.dtype.kind == "c" else np.float64)
    axes = U.check_axes(func, axes, input.ndim)
    if w.ndim != len(axes):
        raise RuntimeError(
            f"{func}: filter weights array has incorrect shape {w.shape} for {len(axes)} axes"
        )
    if w.size == 0:
        raise RuntimeError(f"{func}: no filter weights given")
    origins = [operator_index(o) for o in U.normalize_sequence(func, "origin", origin, len(axes))]
    # expand weights/origins to every axis of the input; as in SciPy the weights' dimensions
    # follow the sorted axes while origins follow ``axes`` in the order given
    full_shape = [1] * input.ndim
    full_origin = [0] * input.ndim
    for i, a in enumerate(sorted(axes)):
        full_shape[a] = w.shape[i]
    for i, a in enumerate(axes):
        full_origin[a] = origins[i]
    w = w.reshape(full_shape)
    if convolution:
        w = w[(slice(None, None, -1),) * w.ndim]
        full_origin = [-o - (1 if full_shape[i] % 2 == 0 else 0) for i, o in enumerate(full_origin)]
    elif w.dtype.kind == "c":
        w = w.conj()  # as np.correlate: conjugate the weights, not the input
    for a in range(input.ndim):
        U.check_origin(func, full_origin[a], full_shape[a])
    m = U.filter_mode(func, mode)
    dtype, out_arr = U.resolve_output(
        func, output, input, complex_output=U.is_complex(input.dtype) or w.dtype.kind == "c"
    )
    wdt = U.work_dtype(input.dtype)
    if w.dtype.kind == "c" and not U.is_complex(wdt):
        em = U.ember_mod()
        wdt = em.complex64 if wdt == em.float32 else em.complex128
    x = input.astype(wdt, copy=False)
    nonunit = [a for a in range(input.ndim) if full_shape[a] > 1]
    if len(nonunit) <= 1:
        ax = nonunit[0] if nonunit else 0
        res = correlate1d_work(x, w.reshape(-1), ax, m, cval, full_origin[ax])
        return U.finish(res, dtype, out_arr)
    pads = []
    for a in range(input.ndim):
        lo = full_shape[a] // 2 + full_origin[a]
        pads.append((lo, full_shape[a] - 1 - lo))
    padded = U.pad_all(x, pads, [m] * input.ndim, cval)
    shp = tuple(input.shape)
    taps = []
    for idx in np.ndindex(*w.shape):
        sl = tuple(slice(i, i + n) for i, n in zip(idx, shp, strict=True))
        taps.append((w[idx], sl))
    res = _tap_sum(padded, taps, shp)
    return U.finish(res, dtype, out_arr)


def correlate(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """Multidimensional correlation (``scipy.ndimage.correlate``)."""
    return _correlate_nd("correlate", input, weights, output, mode, cval, origin, axes, False)


def convolve(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """Multidimensional convolution (``scipy.ndimage.convolve``)."""
    return _correlate_nd("convolve", input, weights, output, mode, cval, origin, axes, True)


# ----------------------------------------------------------------------------------------------
# Gaussian


def gaussian_kernel1d(sigma, order, radius):
    """The sampled (derivative of a) Gaussian, taps -radius..radius, normalized to sum 1."""
    if order < 0:
        raise ValueError("order must be non-negative")
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    s2 = sigma * sigma
    phi = np.exp(-0.5 / s2 * x * x)
    phi /= phi.sum()
    if order == 0:
        return phi
    # d^k/dx^k phi = p_k(x) phi with p_0 = 1, p_{k+1} = p_k' - x p_k / sigma^2
    p = np.zeros(order + 1)
    p[0] = 1.0
    for _ in range(order):
        deriv = np.zeros_like(p)
        deriv[:-1] = p[1:] * np.arange(1, order + 1)
        shifted = np.zeros_like(p)
        shifted[1:] = p[:-1]
        p = deriv - shifted / s2
    poly = np.zeros_like(x)
    for k in range(order, -1, -1):
        poly = poly * x + p[k]
    return poly * phi


def _gauss_weights(func, sigma, order, truncate, radius):
    sigma = float(sigma)
    order = operator_index(order)
    if order < 0:
        raise ValueError(f"{func}: order must be non-negative, got order={order}")
    sd = sigma
    r = int(truncate * sd + 0.5) if radius is None else radius
    if not isinstance(r, numbers.Integral) or r < 0:
        raise ValueError(f"{func}: radius must be a nonnegative integer, got radius={radius!r}")
    return gaussian_kernel1d(sigma, order, int(r))[::-1].copy()


def gaussian_filter1d(
    input,
    sigma,
    axis=-1,
    order=0,
    output=None,
    mode="reflect",
    cval=0.0,
    truncate=4.0,
    *,
    radius=None,
):
    """1-D Gaussian filter (``scipy.ndimage.gaussian_filter1d``)."""
    func = "gaussian_filter1d"
    w = _gauss_weights(func, sigma, order, truncate, radius)
    return correlate1d(input, w, axis, output, mode, cval, 0)


def gaussian_filter(
    input,
    sigma,
    order=0,
    output=None,
    mode="reflect",
    cval=0.0,
    truncate=4.0,
    *,
    radius=None,
    axes=None,
):
    """Multidimensional Gaussian filter (``scipy.ndimage.gaussian_filter``)."""
    func = "gaussian_filter"
    input = U.check_input(func, input)
    dtype, out_arr = U.resolve_output(func, output, input, complex_output=U.is_complex(input.dtype))
    axes = U.check_axes(func, axes, input.ndim)
    k = len(axes)
    orders = U.normalize_sequence(func, "order", order, k)
    sigmas = U.normalize_sequence(func, "sigma", sigma, k)
    modes = U.normalize_sequence(func, "mode", mode, k)
    radii = U.normalize_sequence(func, "radius", radius, k)
    passes = [
        (axes[i], sigmas[i], orders[i], modes[i], radii[i])
        for i in range(k)
        if float(sigmas[i]) > 1e-15
    ]
    x = input
    for ax, s, o, m, r in passes:
        w = _gauss_weights(func, s, o, truncate, r)
        mm = U.filter_mode(func, m)
        x = correlate1d_work(x.astype(U.work_dtype(x.dtype), copy=False), w, ax, mm, cval, 0)
        x = U.cast_out(x, dtype)
    return U.finish(x, dtype, out_arr, src=input)


# ----------------------------------------------------------------------------------------------
# uniform


def _check_size(func, size):
    size = operator_index(size) if not isinstance(size, float) else size
    if isinstance(size, float):
        if size != int(size):
            raise TypeError(f"{func}: size must be an integer, got size={size!r}")
        size = int(size)
    if size < 1:
        raise RuntimeError(f"{func}: incorrect filter size: size={size}")
    return size


def uniform1d_work(x, size, axis, mode, cval, origin):
    """Box mean: a sum of ``size`` shifted slices divided by ``size`` (SciPy's order of ops)."""
    n = x.shape[axis]
    left = size // 2 + origin
    right = size - 1 - left
    padded = U.pad_axis(x, axis, left, right, mode, cval)
    nd = x.ndim
    em = U.ember_mod()
    if size > 8 and x.dtype == em.float64:
        # a running sum: a cumulative sum and one difference, independent of ``size``
        cs = em.cumsum(padded, axis=axis)
        hi = cs[U.axis_slice(nd, axis, size - 1, size - 1 + n)]
        lo = cs[U.axis_slice(nd, axis, 0, n - 1)] if n > 1 else None
        first = hi[U.axis_slice(nd, axis, 0, 1)]
        if lo is None:
            acc = first
        else:
            acc = em.concatenate([first, hi[U.axis_slice(nd, axis, 1, n)] - lo], axis=axis)
    else:
        summed = _Accumulator()
        for j in range(size):
            summed.add(padded[U.axis_slice(nd, axis, j, j + n)])
        acc = summed.result(tuple(x.shape), padded)
    return em.divide(acc, size, out=acc) if acc.dtype == x.dtype else acc / size


def uniform_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """1-D uniform (box) filter (``scipy.ndimage.uniform_filter1d``)."""
    func = "uniform_filter1d"
    input = U.check_input(func, input)
    size = _check_size(func, size)
    axis = U.check_axis(func, axis, input.ndim)
    origin = U.check_origin(func, origin, size)
    m = U.filter_mode(func, mode)
    dtype, out_arr = U.resolve_output(func, output, input, complex_output=U.is_complex(input.dtype))
    res = uniform1d_work(
        input.astype(U.work_dtype(input.dtype), copy=False), size, axis, m, cval, origin
    )
    return U.finish(res, dtype, out_arr)


def uniform_filter(input, size=3, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """Multidimensional uniform filter (``scipy.ndimage.uniform_filter``)."""
    func = "uniform_filter"
    input = U.check_input(func, input)
    dtype, out_arr = U.resolve_output(func, output, input, complex_output=U.is_complex(input.dtype))
    axes = U.check_axes(func, axes, input.ndim)
    k = len(axes)
    sizes = [_check_size(func, s) for s in U.normalize_sequence(func, "size", size, k)]
    origins = U.normalize_sequence(func, "origin", origin, k)
    modes = U.normalize_sequence(func, "mode", mode, k)
    x = input
    for i in range(k):
        if sizes[i] <= 1:
            continue
        o = U.check_origin(func, origins[i], sizes[i])
        mm = U.filter_mode(func, modes[i])
        x = uniform1d_work(
            x.astype(U.work_dtype(x.dtype), copy=False), sizes[i], axes[i], mm, cval, o
        )
        x = U.cast_out(x, dtype)
    return U.finish(x, dtype, out_arr, src=input)
