"""ember.fft: discrete Fourier transforms, the Python Array API (2024.12) fft extension with
NumPy 2's additions and semantics: ``fft``, ``ifft``, ``fftn``, ``ifftn``, ``rfft``, ``irfft``,
``rfftn``, ``irfftn``, ``hfft``, ``ihfft``, ``fft2``, ``ifft2``, ``rfft2``, ``irfft2``,
``fftfreq``, ``rfftfreq``, ``fftshift`` and ``ifftshift``.

Every transform is a sequence of ``_core._fft_last_axis`` calls (batched 1-D transforms along a
contiguous last axis, each scaled by its step's normalization factor: the backend's fft family,
cuFFT and a scaling pass on CUDA devices, NumPy's pocketfft on zero-copy host views of the rows on
the CPU, which gives NumPy's bits); moving the axis there, the n-d sequence of 1-D transforms, the
precision each step computes in and the factors are composed here, once for both devices, step
for step as ``numpy.fft`` does them. Result dtypes are NumPy's: float32, float16 and bfloat16
give complex64; float64, integers and bool complex128; complex dtypes are kept. The real results
of ``irfft`` and ``hfft`` have the input's real precision, and a real float16 (or bfloat16) input
keeps its dtype there, as in NumPy. Precision is NumPy's too: a step transforms complex64 input
(float32 for a real-to-complex step) in single precision, any other input (float32 real input to
the complex transforms, float16, integers) in double, rounding the result where NumPy does (on the
CPU, pocketfft then computes an unscaled single-precision step in double, as in NumPy).
"""

from __future__ import annotations

import itertools
import operator
import warnings

import numpy as _np

from . import _core
from ._array import asarray
from ._creation import empty_like
from ._dtypes import isdtype

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]

_NORMS = ("backward", "ortho", "forward")
_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}
_HALF = ("float16", "bfloat16")
# dtypes computed in single precision (complex64 / float32); every other one in double
_SINGLE = ("float16", "bfloat16", "float32", "complex64")

# ---------------------------------------------------------------------------------------------
# argument checks
# ---------------------------------------------------------------------------------------------


def _arr(x):
    return x if isinstance(x, _core.ndarray) else asarray(x)


def _norm(norm, who):
    if norm is None:
        return "backward"
    if isinstance(norm, str) and norm in _NORMS:
        return norm
    raise ValueError(
        f'{who}: invalid norm value {norm!r}; should be "backward", "ortho" or "forward"'
    )


def _int(v, what, who):
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{who}: {what} must be an integer, got {type(v).__name__}") from None


def _axis(axis, ndim, who):
    a = _int(axis, "axis", who)
    if not -ndim <= a < ndim:
        raise _core.AxisError(f"{who}: axis {a} is out of bounds for array of dimension {ndim}")
    return a % ndim


def _ints(v, what, who):
    """A sequence argument (s, axes) as a list; a single integer is taken as a 1-sequence."""
    if v is None:
        return None
    try:
        return [operator.index(v)]
    except TypeError:
        pass
    try:
        return list(v)
    except TypeError:
        raise TypeError(
            f"{who}: {what} must be a sequence of integers, got {type(v).__name__}"
        ) from None


def _real_input(x, who):
    if x.dtype.name.startswith("complex"):
        raise TypeError(f"{who}: x must be real-valued, got {x.dtype.name}")


def _cook(who, x, s, axes, invreal):
    """NumPy's (s, axes) of an n-d transform: axes normalized, -1 in s replaced by the axis's
    length; None entries of s stay (the 1-D transform's default, resolved by _plan)."""
    nd = x.ndim
    s = _ints(s, "s", who)
    ax = _ints(axes, "axes", who)
    if ax is None:
        if s is None:
            ax = list(range(nd))
        else:
            warnings.warn(
                f"{who}: `axes` should not be None if `s` is not None (deprecated in NumPy "
                "2.0); the last len(s) axes are transformed. Pass axes explicitly.",
                DeprecationWarning,
                stacklevel=4,
            )
            ax = list(range(-len(s), 0))
    ax = [_axis(a, nd, who) for a in ax]
    shapeless = s is None
    if shapeless:
        s = [x.shape[a] for a in ax]
    if len(s) != len(ax):
        raise ValueError(f"{who}: s and axes have different lengths ({len(s)} and {len(ax)})")
    if invreal and shapeless and ax:
        s[-1] = (x.shape[ax[-1]] - 1) * 2
    if any(v is None for v in s):
        warnings.warn(
            f"{who}: None in s is deprecated (NumPy 2.0); pass the length of the 1-D transform "
            "instead",
            DeprecationWarning,
            stacklevel=4,
        )
    out = []
    for v, a in zip(s, ax, strict=True):
        if v is not None:
            v = _int(v, "s", who)
            if v == -1:
                v = x.shape[a]
        out.append(v)
    return out, ax


def _plan(who, shape, steps):
    """The steps (kind, n, axis, inverse) with every n resolved against the shape it meets (None
    -> the 1-D transform's default) and checked, so that nothing runs before an error."""
    shape = list(shape)
    out = []
    for kind, n, axis, inverse in steps:
        m = shape[axis]
        if n is None:
            n = (m - 1) * 2 if kind == "c2r" else m
        n = _int(n, "n", who)
        if n < 1:
            raise ValueError(f"{who}: invalid number of FFT data points ({n}) specified")
        shape[axis] = n // 2 + 1 if kind == "r2c" else n
        out.append((kind, n, axis, inverse))
    return out


# ---------------------------------------------------------------------------------------------
# execution
# ---------------------------------------------------------------------------------------------


def _factor(norm, n, inverse, dtype):
    """A step's scale factor, as numpy.fft computes it: 1/n or 1/sqrt(n) in the real dtype of the
    step's input (float16 for float16, float32 for single precision, else float64), so that the
    host FFT recognizes NumPy's own factor and gets NumPy's bits, and the GPU scales by the same
    value. NumPy's float16 rounding is kept, but not the overflow of float16(n) to inf past
    65504, which makes NumPy scale by 0 (float32's factor is taken there)."""
    if norm != "ortho" and (norm == "backward") != inverse:
        return 1.0
    rd = _np.float16 if dtype == "float16" else _np.float32 if dtype in _SINGLE else _np.float64
    with _np.errstate(all="ignore"):
        f = _np.reciprocal(_np.sqrt(n, dtype=rd) if norm == "ortho" else rd(n), dtype=rd)
    if rd is _np.float16 and not 0.0 < f < _np.inf:
        return _factor(norm, n, inverse, "float32")
    return float(f)


def _dtypes(kind, t, cpu):
    """(the dtype a step computes in, the dtype of its result) for an input of dtype t. On the
    CPU as numpy.fft's ufunc loops resolve them, so results are NumPy's bits: single precision
    only for a complex64 input (a float32 one for r2c), which keeps it; every other input computes
    in double, and a float32 or 16-bit one's result is rounded to single precision (a c2r result
    to a 16-bit input's own dtype). On a GPU, as CuPy: every single- or half-precision input
    computes in single precision (cuFFT's C2C/R2C/C2R), twice as fast as double and what a GPU
    user of float32 data expects; the result dtypes are the same on both devices."""
    if cpu:
        single = t == "complex64" or (kind == "r2c" and t in ("float32", "bfloat16"))
    else:
        single = t in _SINGLE
    if kind == "r2c":
        compute = "float32" if single else "float64"
    else:
        compute = "complex64" if single else "complex128"
    if kind == "c2r":
        result = t if t in _HALF else "float32" if t in _SINGLE else "float64"
    else:
        result = "complex64" if t in _SINGLE else "complex128"
    return compute, result


def _compose(x, steps, norm, conj_in, conj_out):
    """The steps on any device: each moves its axis last, casts to the dtype the transform computes
    in and calls the backend's last-axis transform with the step's normalization factor, which
    the backend applies (inside NumPy's passes on the CPU, one scaling pass after cuFFT on a GPU),
    as numpy.fft scales each step."""
    if conj_in and x.dtype.name.startswith("complex"):
        x = _core.conj(x)
    cpu = x.device.type == "cpu"
    for kind, n, axis, inverse in steps:
        t = x.dtype.name
        compute, result = _dtypes(kind, t, cpu)
        last = x.ndim - 1
        if axis != last:
            x = _core.swapaxes(x, axis, last)
        if t != compute:
            x = _core.astype(x, getattr(_core, compute))
        x = _core._fft_last_axis(x, kind, n, inverse, _factor(norm, n, inverse, t))
        if x.dtype.name != result:
            x = _core.astype(x, getattr(_core, result))
        if axis != last:
            x = _core.swapaxes(x, axis, last)
    if conj_out:
        x = _core.conj(x)
    return x


def _run(x, steps, norm, conj_in=False, conj_out=False):
    if x.requires_grad and _core._is_grad_enabled():
        return _steps_function().apply(x, tuple(steps), norm, conj_in, conj_out)
    return _compose(x, steps, norm, conj_in, conj_out)


# ---- gradients: every transform is linear; its backward is the adjoint of its steps -----------

_STEPS_FN = []


def _steps_function():
    """The autograd Function of a step sequence (made on first use: ember.autograd imports this
    module's package)."""
    if not _STEPS_FN:
        from .autograd import Function

        class FFTSteps(Function):
            @staticmethod
            def forward(ctx, x, steps, norm, conj_in, conj_out):
                ctx.meta = (_trace_steps(x, steps, norm), conj_in, conj_out, x.dtype)
                with _no_grad():
                    return _compose(x, steps, norm, conj_in, conj_out)

            @staticmethod
            def backward(ctx, g):
                trace, conj_in, conj_out, dtype = ctx.meta
                return _adjoint(g, trace, conj_in, conj_out, dtype), None, None, None, None

        _STEPS_FN.append(FFTSteps)
    return _STEPS_FN[0]


def _trace_steps(x, steps, norm):
    """Per step: (kind, n, axis, inverse, input length, input dtype name, factor)."""
    shape, t = list(x.shape), x.dtype.name
    cpu = x.device.type == "cpu"
    out = []
    for kind, n, axis, inverse in steps:
        out.append((kind, n, axis, inverse, shape[axis], t, _factor(norm, n, inverse, t)))
        shape[axis] = n // 2 + 1 if kind == "r2c" else n
        t = _dtypes(kind, t, cpu)[1]
    return out


def _fit(g, m):
    """g's last axis cropped or zero-padded to m (the adjoint of the step's own pad or crop)."""
    n = g.shape[-1]
    if n == m:
        return g
    if n > m:
        return g[..., :m]
    from ._joining import concat

    pad = _core.zeros((*g.shape[:-1], m - n), dtype=g.dtype, device=g.device)
    return concat([g, pad], axis=-1)


def _half_weights(n, like, interior):
    """Weights of the n//2+1 bins of a real transform: `interior` inside, 1 at DC (and at the
    Nyquist bin for even n)."""
    w = _np.full(n // 2 + 1, interior)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return asarray(w, device=like.device).astype(
        "float32" if like.dtype.name in ("complex64", "float32") else "float64"
    )


def _adjoint(g, trace, conj_in, conj_out, dtype):
    """The gradient of a step sequence (PyTorch's convention for complex values: the adjoint,
    x_bar = A^H y_bar): the steps' adjoints in reverse, each with the forward step's factor; a
    c2c step's is the opposite-direction c2c, an r2c step's a c2r of the bins weighted
    (1 at DC and Nyquist, 1/2 inside), a c2r step's an r2c weighted (1, 2 inside)."""
    if conj_out:
        g = _core.conj(g)
    for kind, n, axis, inverse, m, t, factor in reversed(trace):
        last = g.ndim - 1
        if axis != last:
            g = _core.swapaxes(g, axis, last)
        single = t in _SINGLE or t == "complex64"
        ct = "complex64" if single else "complex128"
        if kind == "c2c":
            g = _core._fft_last_axis(g.astype(ct), "c2c", n, not inverse, factor)
            g = _fit(g, m)
            if not t.startswith("complex"):
                g = _core.real(g)
        elif kind == "r2c":
            gw = g.astype(ct) * _half_weights(n, g.astype(ct), 0.5)
            g = _fit(_core._fft_last_axis(gw, "c2r", n, True, factor), m)
        else:  # c2r: real n from complex n//2+1 (the input cropped or padded to it)
            rt = "float32" if single else "float64"
            h = _core._fft_last_axis(g.astype(rt), "r2c", n, False, factor)
            g = _fit(h * _half_weights(n, h, 2.0), m)
        g = g.astype(t if t in ("float32", "float64", "complex64", "complex128") else g.dtype)
        if axis != last:
            g = _core.swapaxes(g, axis, last)
    if conj_in:
        g = _core.conj(g)
    return g.astype(dtype) if g.dtype != dtype else g


class _no_grad:
    def __enter__(self):
        self._prev = _core._is_grad_enabled()
        _core._set_grad_enabled(False)

    def __exit__(self, *exc):
        _core._set_grad_enabled(self._prev)


def _one(who, x, n, axis, norm, kind, inverse, hermitian=False):
    x = _arr(x)
    norm = _norm(norm, who)
    if hermitian:
        norm = _SWAP[norm]
    ax = _axis(axis, x.ndim, who)
    if kind == "r2c":
        _real_input(x, who)
    steps = _plan(who, x.shape, [(kind, n, ax, inverse)])
    return _run(
        x, steps, norm, conj_in=hermitian and kind == "c2r", conj_out=hermitian and kind == "r2c"
    )


def _nd(who, x, s, axes, norm, kind):
    x = _arr(x)
    norm = _norm(norm, who)
    s, ax = _cook(who, x, s, axes, invreal=kind == "irfftn")
    if not ax:
        if kind in ("fftn", "ifftn"):
            return x  # no axis to transform (NumPy returns its input too)
        raise IndexError(f"{who}: axes must name at least one axis")
    if kind == "rfftn":
        _real_input(x, who)
    k = len(ax)
    if kind in ("fftn", "ifftn"):
        steps = [("c2c", s[i], ax[i], kind == "ifftn") for i in reversed(range(k))]
    elif kind == "rfftn":
        steps = [("r2c", s[-1], ax[-1], False)]
        steps += [("c2c", s[i], ax[i], False) for i in reversed(range(k - 1))]
    else:
        steps = [("c2c", s[i], ax[i], True) for i in range(k - 1)]
        steps.append(("c2r", s[-1], ax[-1], True))
    return _run(x, _plan(who, x.shape, steps), norm)


# ---------------------------------------------------------------------------------------------
# transforms
# ---------------------------------------------------------------------------------------------


def fft(x, /, n=None, axis=-1, norm="backward"):
    """The 1-D discrete Fourier transform along `axis`, the input cropped or zero-padded to `n`
    points. `norm` scales the forward transform by 1 ("backward"), 1/sqrt(n) ("ortho") or
    1/n ("forward")."""
    return _one("ember.fft.fft", x, n, axis, norm, "c2c", False)


def ifft(x, /, n=None, axis=-1, norm="backward"):
    """The inverse of `fft`: scaled by 1/n under "backward"."""
    return _one("ember.fft.ifft", x, n, axis, norm, "c2c", True)


def rfft(x, /, n=None, axis=-1, norm="backward"):
    """The 1-D transform of real input: the n//2+1 non-negative frequency terms."""
    return _one("ember.fft.rfft", x, n, axis, norm, "r2c", False)


def irfft(x, /, n=None, axis=-1, norm="backward"):
    """The inverse of `rfft`: `n` (default 2*(m-1)) real points from the m non-negative
    frequency terms of a Hermitian-symmetric spectrum."""
    return _one("ember.fft.irfft", x, n, axis, norm, "c2r", True)


def hfft(x, /, n=None, axis=-1, norm="backward"):
    """The transform of a Hermitian-symmetric signal given by its first half (a real spectrum
    of `n` points, default 2*(m-1)): ``irfft(conj(x), n)`` with the forward scaling."""
    return _one("ember.fft.hfft", x, n, axis, norm, "c2r", True, hermitian=True)


def ihfft(x, /, n=None, axis=-1, norm="backward"):
    """The inverse of `hfft` for real input: ``conj(rfft(x, n))`` with the inverse scaling."""
    return _one("ember.fft.ihfft", x, n, axis, norm, "r2c", False, hermitian=True)


def fftn(x, /, s=None, axes=None, norm="backward"):
    """The n-d transform over `axes` (default all; the last len(s) when only `s` is given),
    axis axes[i] cropped or zero-padded to s[i] points (-1: its length)."""
    return _nd("ember.fft.fftn", x, s, axes, norm, "fftn")


def ifftn(x, /, s=None, axes=None, norm="backward"):
    """The inverse of `fftn`."""
    return _nd("ember.fft.ifftn", x, s, axes, norm, "ifftn")


def rfftn(x, /, s=None, axes=None, norm="backward"):
    """The n-d transform of real input: `rfft` over the last of `axes`, `fft` over the others."""
    return _nd("ember.fft.rfftn", x, s, axes, norm, "rfftn")


def irfftn(x, /, s=None, axes=None, norm="backward"):
    """The inverse of `rfftn`: `ifft` over all of `axes` but the last, then `irfft` over it
    (default length 2*(m-1))."""
    return _nd("ember.fft.irfftn", x, s, axes, norm, "irfftn")


def fft2(x, /, s=None, axes=(-2, -1), norm="backward"):
    """`fftn` over the last two axes."""
    return _nd("ember.fft.fft2", x, s, axes, norm, "fftn")


def ifft2(x, /, s=None, axes=(-2, -1), norm="backward"):
    """`ifftn` over the last two axes."""
    return _nd("ember.fft.ifft2", x, s, axes, norm, "ifftn")


def rfft2(x, /, s=None, axes=(-2, -1), norm="backward"):
    """`rfftn` over the last two axes."""
    return _nd("ember.fft.rfft2", x, s, axes, norm, "rfftn")


def irfft2(x, /, s=None, axes=(-2, -1), norm="backward"):
    """`irfftn` over the last two axes."""
    return _nd("ember.fft.irfft2", x, s, axes, norm, "irfftn")


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _freq_args(who, n, dtype):
    if isinstance(n, bool) or not isinstance(n, (int, _np.integer)):
        raise ValueError(f"{who}: n should be an integer, got {type(n).__name__}")
    n = int(n)
    if n < 1:
        raise ValueError(f"{who}: n must be a positive integer, got {n}")
    if dtype is not None:
        if not isdtype(dtype, "real floating"):
            raise TypeError(f"{who}: dtype must be a real floating dtype, got {dtype}")
    return n


def fftfreq(n, /, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an `n`-point `fft` with sample spacing `d`:
    [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d*n), float64 unless `dtype` says otherwise."""
    who = "ember.fft.fftfreq"
    n = _freq_args(who, n, dtype)
    val = float(1.0 / (n * d))
    pos = (n - 1) // 2 + 1
    k = _core.empty((n,), dtype=_core.int64, device=device)
    k[:pos] = _core.arange(0, pos, dtype=_core.int64, device=device)
    if pos < n:
        k[pos:] = _core.arange(-(n // 2), 0, dtype=_core.int64, device=device)
    out = _core.multiply(k, val)
    return out if dtype is None else _core.astype(out, dtype)


def rfftfreq(n, /, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an `n`-point `rfft`: [0, 1, ..., n//2] / (d*n)."""
    who = "ember.fft.rfftfreq"
    n = _freq_args(who, n, dtype)
    val = float(1.0 / (n * d))
    out = _core.multiply(_core.arange(0, n // 2 + 1, dtype=_core.int64, device=device), val)
    return out if dtype is None else _core.astype(out, dtype)


def _shift(who, x, axes, sign):
    x = _arr(x)
    nd = x.ndim
    if axes is None:
        axes = list(range(nd))
    else:
        axes = _ints(axes, "axes", who)
    # np.roll adds up the shifts of a repeated axis
    shifts = {}
    for a in axes:
        a = _axis(a, nd, who)
        shifts[a] = shifts.get(a, 0) + sign * (x.shape[a] // 2)
    todo = [(a, k % x.shape[a]) for a, k in shifts.items() if x.shape[a] and k % x.shape[a]]
    if not todo:
        return _core.astype(x, x.dtype, copy=True)
    src = x
    # Each block of the result is one slice copy from the source: 2**j copies for j shifted
    # axes, taken three axes at a time so that many axes stay cheap.
    for g in range(0, len(todo), 3):
        group = todo[g : g + 3]
        out = empty_like(src)
        pieces = [
            ((slice(k, None), slice(None, src.shape[a] - k)), (slice(None, k), slice(-k, None)))
            for a, k in group
        ]
        for combo in itertools.product(*pieces):
            dst, sl = [slice(None)] * nd, [slice(None)] * nd
            for (a, _), (d, s_) in zip(group, combo, strict=True):
                dst[a], sl[a] = d, s_
            out[tuple(dst)] = src[tuple(sl)]
        src = out
    return src


def fftshift(x, /, axes=None):
    """Moves the zero-frequency term to the middle of `axes` (default all): ``roll`` by n//2."""
    return _shift("ember.fft.fftshift", x, axes, 1)


def ifftshift(x, /, axes=None):
    """The inverse of `fftshift` (they differ for odd lengths): ``roll`` by -(n//2)."""
    return _shift("ember.fft.ifftshift", x, axes, -1)
