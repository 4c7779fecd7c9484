"""More NumPy functions composed from ember ops (any device; differentiable through their
primitives): deg2rad/radians, rad2deg/degrees, fix, sinc, heaviside, float_power, divmod, frexp,
ldexp, ascontiguousarray, copyto, convolve and correlate. Integer inputs of the float-only
functions take the float type NumPy's loops would (int8 -> float16, int16 -> float32, ...)."""

from __future__ import annotations

import builtins
import math

from . import _core
from ._manipulation import _asarray

__all__ = [
    "ascontiguousarray",
    "asfortranarray",
    "convolve",
    "copyto",
    "correlate",
    "deg2rad",
    "degrees",
    "divmod",
    "fix",
    "float_power",
    "frexp",
    "heaviside",
    "ldexp",
    "rad2deg",
    "radians",
    "sinc",
]


def _ember():
    import ember

    return ember


# The float loop NumPy picks for an integer (or bool) input of a float-only ufunc.
_FLOAT_OF = {
    "bool": "float16",
    "int8": "float16",
    "uint8": "float16",
    "int16": "float32",
    "uint16": "float32",
}


def _inexact(x):
    """x itself when floating or complex, else converted to NumPy's float loop type for it."""
    if x.dtype.kind in "fc":
        return x
    return x.astype(getattr(_ember(), _FLOAT_OF.get(str(x.dtype), "float64")))


def _real_float(x, who):
    x = _inexact(_asarray(x))
    if x.dtype.kind == "c":
        raise TypeError(f"{who}: complex input is not supported, got dtype {x.dtype}")
    return x


def deg2rad(x, /):
    """Angles in degrees to radians."""
    return _real_float(x, "ember.deg2rad") * (math.pi / 180.0)


def rad2deg(x, /):
    """Angles in radians to degrees."""
    return _real_float(x, "ember.rad2deg") * (180.0 / math.pi)


radians = deg2rad
degrees = rad2deg


def fix(x, /):
    """Rounds towards zero (NumPy's fix: integers stay integers)."""
    x = _asarray(x)
    if x.dtype.kind == "c":
        raise TypeError(f"ember.fix: complex input is not supported, got dtype {x.dtype}")
    return _ember().trunc(x)


def sinc(x, /):
    """sin(pi x) / (pi x), 1 at 0 (NumPy's normalized sinc)."""
    em = _ember()
    x = _asarray(x)
    x = x if x.dtype.kind in "fc" else x.astype(em.float64)  # not a ufunc in NumPy: float64
    zero = x == 0
    y = em.where(zero, 1.0, x) * math.pi
    return em.where(zero, 1.0, em.sin(y) / y)


def heaviside(x1, x2, /):
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0 (NaN where x1 is NaN)."""
    em = _ember()
    weak = isinstance(x2, bool | int | float)  # a Python number keeps x1's precision
    x1, x2 = _asarray(x1), (x2 if weak else _asarray(x2))
    if x1.dtype.kind == "c" or (not weak and x2.dtype.kind == "c"):
        raise TypeError("ember.heaviside: complex input is not supported")
    t = x1.dtype if weak else em.result_type(x1, x2)
    if t.kind not in "f":
        t = getattr(em, _FLOAT_OF.get(str(t), "float64"))
    x1 = x1.astype(t)
    x2 = em.full_like(x1, x2) if weak else x2.astype(t)
    out = em.where(x1 > 0, em.ones_like(x1), em.where(x1 == 0, x2, em.zeros_like(x1)))
    return em.where(em.isnan(x1), x1, out)


def float_power(x1, x2, /):
    """x1 ** x2 computed in float64 (complex128 when an input is complex)."""
    em = _ember()
    x1, x2 = _asarray(x1), _asarray(x2)
    complex_ = x1.dtype.kind == "c" or x2.dtype.kind == "c"
    t = em.complex128 if complex_ else em.float64
    return em.pow(x1.astype(t), x2.astype(t))


def divmod(x1, x2, /):  # noqa: A001 (NumPy's name)
    """(x1 // x2, x1 % x2), as Python's divmod elementwise."""
    em = _ember()
    return em.floor_divide(x1, x2), em.remainder(x1, x2)


def _pow2(k):
    """2.0**k (float64) for integer k in [-1022, 1023], built from its bits: exact on every
    device (a library pow need not be)."""
    em = _ember()
    return em.bitwise_left_shift(k.astype(em.int64) + 1023, 52).view(em.float64)


def frexp(x, /):
    """Mantissa in [0.5, 1) (with x's sign) and int32 exponent such that x = m * 2**e; zero,
    infinities and NaN give themselves and exponent 0."""
    em = _ember()
    x = _real_float(x, "ember.frexp")
    a = em.abs(x)
    special = (a == 0) | ~em.isfinite(x)
    # In float64: float16's own range cannot hold 2**-24's log and its corrections.
    a64 = em.where(special, em.ones_like(a), a).astype(em.float64)
    e = (em.floor(em.log2(a64)) + 1.0).astype(em.int64)
    h = em.floor_divide(e, 2)
    m = a64 * _pow2(-h) * _pow2(h - e)  # powers of two in two halves: exact
    # log2 rounds near powers of two: put the mantissa back in [0.5, 1).
    up = m >= 1.0
    e, m = em.where(up, e + 1, e), em.where(up, m * 0.5, m)
    down = m < 0.5
    e, m = em.where(down, e - 1, e), em.where(down, m * 2.0, m)
    m = em.copysign(m.astype(x.dtype), x)
    return em.where(special, x, m), em.where(special, 0, e).astype(em.int32)


def ldexp(x1, x2, /):
    """x1 * 2**x2 for integer x2, rounded once (as C's ldexp): x1's mantissa times two exact
    powers of two, of which only the last can leave the normal range."""
    em = _ember()
    x1, x2 = _real_float(x1, "ember.ldexp"), _asarray(x2)
    if x2.dtype.kind not in "iub":
        raise TypeError(f"ember.ldexp: the exponent must be an integer, got dtype {x2.dtype}")
    m, ex = frexp(x1)
    k = em.clip(ex.astype(em.int64) + x2.astype(em.int64), -1200, 1200)
    k1 = em.where(k > 1023, 1023, em.where(k < -1022, k + 600, k))
    r = m.astype(em.float64) * _pow2(k1) * _pow2(k - k1)
    return r.astype(x1.dtype)


def ascontiguousarray(a, dtype=None):
    """A C-contiguous array with the data of `a` (at least 1-D), copying only when needed."""
    em = _ember()
    same_dtype = dtype is None or (isinstance(a, _core.ndarray) and a.dtype == dtype)
    x = a if isinstance(a, _core.ndarray) and same_dtype else em.asarray(a, dtype=dtype)
    if x.ndim == 0:
        x = x.reshape((1,))
    return x if _is_c_contiguous(x) else x.copy()


def asfortranarray(a, dtype=None):
    """An F-contiguous (column-major) array with the data of `a` (at least 1-D), copying only
    when needed. ember's ops accept any layout; this one is for code that hands memory on."""
    em = _ember()
    same_dtype = dtype is None or (isinstance(a, _core.ndarray) and a.dtype == dtype)
    x = a if isinstance(a, _core.ndarray) and same_dtype else em.asarray(a, dtype=dtype)
    if x.ndim == 0:
        x = x.reshape((1,))
    if _is_f_contiguous(x):
        return x
    axes = tuple(reversed(range(x.ndim)))
    return em.permute_dims(em.permute_dims(x, axes).copy(), axes)


def _is_f_contiguous(x):
    if x.size == 0:
        return True  # NumPy counts empty arrays as contiguous either way
    expected = x.itemsize
    for n, s in zip(x.shape, x.strides, strict=True):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def _is_c_contiguous(x):
    expected = x.itemsize  # strides are in bytes, as NumPy's
    for n, s in zip(reversed(x.shape), reversed(x.strides), strict=True):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def copyto(dst, src, casting="same_kind", where=True):
    """Copies `src` into `dst` (broadcast) where `where` is true, with NumPy's casting rule."""
    em = _ember()
    who = "ember.copyto"
    if not isinstance(dst, _core.ndarray):
        raise TypeError(f"{who}: dst must be an ember array, got {type(dst).__name__}")
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError(
            f"{who}: casting must be one of 'no', 'equiv', 'safe', 'same_kind', "
            f"'unsafe', got {casting!r}"
        )
    python_scalar = isinstance(src, bool | int | float | complex)
    src = src if python_scalar else _asarray(src)
    if not python_scalar and not em.can_cast(src.dtype, dst.dtype, casting=casting):
        raise TypeError(
            f"{who}: cannot cast from {src.dtype} to {dst.dtype} with casting rule {casting!r}"
        )
    if where is True:
        dst[...] = src
        return
    mask = _asarray(where)
    if mask.dtype != em.bool:
        raise TypeError(f"{who}: where must be a boolean array, got dtype {mask.dtype}")
    value = src if python_scalar else src.astype(dst.dtype)
    dst[...] = em.where(mask, value, dst)


_MODES = ("full", "same", "valid")
_WINDOW_ELEMENTS = 1 << 22  # the windows of one chunk of outputs (see _convolve_1d)


def _convolve_1d(a, v, mode, who):
    em = _ember()
    if mode not in _MODES:
        raise ValueError(f"{who}: mode must be one of {_MODES}, got {mode!r}")
    a, v = _asarray(a), _asarray(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{who}: expected 1-D inputs, got shapes {a.shape} and {v.shape}")
    if a.size == 0 or v.size == 0:
        raise ValueError(f"{who}: inputs cannot be empty")
    if v.size > a.size:
        a, v = v, a
    t = em.result_type(a, v)
    a, v = a.astype(t), v.astype(t)
    n, m = a.size, v.size
    # Output k of the full convolution is sum_j a_padded[k + j] * v[m - 1 - j].
    if mode == "full":
        lo, count = 0, n + m - 1
    elif mode == "same":
        lo, count = (m - 1) // 2, n
    else:
        lo, count = m - 1, n - m + 1
    pad = em.zeros(m - 1, dtype=t, device=a.device)
    ap = em.concat([pad, a, pad])
    w = em.flip(v)
    taps = em.arange(m, device=a.device)
    step = builtins.max(1, _WINDOW_ELEMENTS // m)
    parts = []
    for start in range(lo, lo + count, step):
        rows = em.arange(start, builtins.min(start + step, lo + count), device=a.device)
        windows = em.take(ap, rows[:, None] + taps[None, :])
        parts.append(em.sum(windows * w, axis=1, dtype=t))
    return parts[0] if len(parts) == 1 else em.concat(parts)


def convolve(a, v, mode="full"):
    """The discrete linear convolution of two 1-D arrays ('full', 'same' or 'valid')."""
    return _convolve_1d(a, v, mode, "ember.convolve")


def correlate(a, v, mode="valid"):
    """The cross-correlation of two 1-D arrays: sum_n a[n + k] * conj(v[n])."""
    em = _ember()
    v = _asarray(v)
    if v.ndim == 1 and v.dtype.kind == "c":
        v = em.conj(v)
    return _convolve_1d(a, em.flip(v) if v.ndim == 1 else v, mode, "ember.correlate")
