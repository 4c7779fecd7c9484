"""PyTorch's tensor functions and methods that a sixth probe of PyTorch code reached (the rule of
which API a call means is in ember/_torch.py).

Functions: ``mode``, ``logit``, ``unflatten``, ``empty_strided``, ``sgn``, ``frac``,
``cholesky_solve`` / ``cholesky_inverse`` (ember/_torch_linalg.py), PyTorch's ``searchsorted``
keywords (``right=``, ``out_int32=``, ``side=None``, an N-d sorted sequence) and ``bucketize``
promoting the two operands to their common dtype, and the window functions
``hann_window`` / ``hamming_window`` / ``blackman_window`` / ``bartlett_window`` /
``kaiser_window``. Methods: ``sgn``, ``frac``, ``unflatten``, ``mode``, ``logit``, ``apply_`` /
``map_`` (a Python callable per element: CPU arrays only, as PyTorch's).

Everything is ember ops on the input's device (``mode`` is a stable sort and a scan of run
lengths); ``apply_`` / ``map_`` are the exception, by definition: they call Python per
element."""

from __future__ import annotations

import builtins
import math
import numbers

import numpy as np

from . import _core
from ._array import asarray as _asarray
from ._dtypes import result_type as _result_type
from ._indexing import take_along_axis as _take_along_axis
from ._joining import concat as _concat
from ._manipulation import moveaxis as _moveaxis
from ._math import i0 as _i0
from ._sorting import argsort as _argsort
from ._torch import ValuesIndices, _arr, _default, _int
from ._torch_errors import TorchArgumentError as _ArgErr
from ._torch_extra import cummax as _cummax
from ._torch_linalg import cholesky_inverse, cholesky_solve
from ._torch_signal import istft, stft

__all__ = [
    "bartlett_window",
    "blackman_window",
    "bucketize",
    "cholesky_inverse",
    "cholesky_solve",
    "empty_strided",
    "frac",
    "hamming_window",
    "hann_window",
    "istft",
    "kaiser_window",
    "logit",
    "mode",
    "sgn",
    "stft",
    "unflatten",
]


def _dim(d, nd, who):
    d = _int(d, who, "dim")
    n = builtins.max(nd, 1)
    if not -n <= d < n:
        raise IndexError(
            f"{who}(): Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
            f"but got {d})"
        )
    return d % n


# ---- mode ----------------------------------------------------------------------------------------


def mode(input, dim=-1, keepdim=False, *, out=None):  # noqa: A002
    """(values, indices): the most frequent value along ``dim`` (the smallest of the most
    frequent ones on ties) and the index of its last occurrence (PyTorch's CPU result)."""
    who = "ember.mode"
    x = _arr(input, who)
    d = _dim(dim, x.ndim, who)
    if x.ndim == 0:
        v, i = x.copy(), _core.zeros((), dtype=_core.int64, device=x.device)
        return ValuesIndices(v, i)
    if x.shape[d] == 0:
        raise IndexError(f"{who}(): Expected reduction dim {dim} to have non-zero size.")
    a = _moveaxis(x, d, -1)
    n = a.shape[-1]
    order = _argsort(a, axis=-1)  # stable: equal values keep their input order
    s = _take_along_axis(a, order, axis=-1)
    pos = _core.arange(n, dtype=_core.int64, device=x.device)
    if n > 1:
        new = _core.not_equal(s[..., 1:], s[..., :-1])
        first = _concat(
            [_core.ones((*s.shape[:-1], 1), dtype="bool", device=x.device), new], axis=-1
        )
    else:
        first = _core.ones(s.shape, dtype="bool", device=x.device)
    start = _cummax(_core.where(first, pos, 0), -1)[0]  # where each element's run starts
    count = pos - start + 1  # run length so far: the run's length at its last element
    best = _core.max(count, axis=-1, keepdims=True)
    at = _core.argmax(_core.equal(count, best), axis=-1, keepdims=True)  # smallest such value
    values = _take_along_axis(s, at, axis=-1)
    indices = _take_along_axis(order, at, axis=-1)  # the run's last element: last occurrence
    if keepdim:
        values, indices = _moveaxis(values, -1, d), _moveaxis(indices, -1, d)
    else:
        values, indices = values[..., 0], indices[..., 0]
    if out is not None:
        if not (
            isinstance(out, (tuple, list))
            and len(out) == 2
            and all(isinstance(o, _core.ndarray) for o in out)
        ):
            raise TypeError(f"{who}: out must be a tuple of two arrays, got {type(out).__name__}")
        out[0][...], out[1][...] = values, indices
        return ValuesIndices(out[0], out[1])
    return ValuesIndices(values, indices)


# ---- elementwise ---------------------------------------------------------------------------------


def _float(x):
    return x if x.dtype.kind in "fc" else x.astype(_default[0])


def logit(input, eps=None, *, out=None):  # noqa: A002
    """log(p / (1 - p)); with ``eps``, p is first clamped to [eps, 1 - eps]. Integer input gives
    the default float dtype."""
    a = _float(_arr(input, "ember.logit"))
    if eps is not None:
        a = _core.clip(a, builtins.float(eps), 1 - builtins.float(eps))
    r = _core.log(a / (1 - a))
    if out is not None:
        out[...] = r
        return out
    return r


def sgn(input, *, out=None):  # noqa: A002
    """x / |x| for complex x (0 where x is 0), the sign of real x."""
    a = _arr(input, "ember.sgn")
    if a.dtype.kind == "c":
        m = _core.abs(a)
        zero = _core.equal(m, 0)
        r = _core.where(zero, 0, a / _core.where(zero, 1, m).astype(a.dtype))
    else:
        r = _core.sign(a)
    if out is not None:
        out[...] = r
        return out
    return r


def frac(input, *, out=None):  # noqa: A002
    """x - trunc(x), the fractional part with x's sign (floating input only, as PyTorch's)."""
    a = _arr(input, "ember.frac")
    if a.dtype.kind not in "f":
        raise _ArgErr(f"ember.frac: \"frac_cpu\" not implemented for '{a.dtype.name}'")
    r = a - _core.trunc(a)
    if out is not None:
        out[...] = r
        return out
    return r


# ---- shapes and memory ---------------------------------------------------------------------------


def unflatten(input, dim, sizes):  # noqa: A002
    """``dim`` of ``input`` split into ``sizes`` (one of them may be -1)."""
    who = "ember.unflatten"
    x = _arr(input, who)
    d = _dim(dim, x.ndim, who)
    if isinstance(sizes, numbers.Integral) or not hasattr(sizes, "__len__"):
        raise TypeError(f"{who}(): argument 'sizes' must be a tuple of ints, not {sizes!r}")
    sizes = [_int(s, who, "sizes") for s in sizes]
    if not sizes:
        raise _ArgErr(f"{who}: sizes must be non-empty")
    if sizes.count(-1) > 1:
        raise _ArgErr(f"{who}: only one dimension can be inferred")
    known = math.prod(s for s in sizes if s != -1)
    if -1 in sizes:
        if known == 0 or x.shape[d] % known:
            raise _ArgErr(
                f"{who}: shape {sizes} is invalid for input of size {x.shape[d]} at dim {d}"
            )
        sizes[sizes.index(-1)] = x.shape[d] // known
    elif known != x.shape[d]:
        raise _ArgErr(
            f"{who}: Provided sizes {sizes} don't multiply up to the size of dim {dim} "
            f"({x.shape[d]}) in the input tensor"
        )
    return x.reshape((*x.shape[:d], *sizes, *x.shape[d + 1 :]))


def empty_strided(
    size,
    stride,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
):
    """An uninitialized array of shape ``size`` and element strides ``stride`` (a view of a
    buffer just large enough); the default float dtype when ``dtype`` is None."""
    who = "ember.empty_strided"
    from ._strided import as_strided

    size = [_int(s, who, "size") for s in size]
    stride = [_int(s, who, "stride") for s in stride]
    if len(size) != len(stride):
        raise _ArgErr(
            f"{who}: mismatch in length of strides and shape ({len(size)} and {len(stride)})"
        )
    if any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise _ArgErr(f"{who}: sizes and strides must be non-negative, got {size}, {stride}")
    extent = (
        0 if 0 in size else 1 + builtins.sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    )
    dt = _default[0] if dtype is None else dtype
    kw = {} if device is None else {"device": device}
    buf = _core.empty((extent,), dtype=dt, **kw)
    r = as_strided(buf, size, stride, 0)
    if requires_grad:
        r.requires_grad_(True)
    return r


# ---- searching -----------------------------------------------------------------------------------


def _common(seq, v, who):
    if seq.device != v.device:
        raise _ArgErr(
            f"{who}(): Expected all tensors to be on the same device, but found {seq.device} and "
            f"{v.device}"
        )
    t = _result_type(seq, v)
    return (seq if seq.dtype == t else seq.astype(t)), (v if v.dtype == t else v.astype(t))


def _search(seq, v, right):
    """Positions of v (...) in the sorted last axis of seq (1-D, or v's leading dims)."""
    if seq.ndim == 1:
        return _core._searchsorted(seq, v.reshape(-1), builtins.bool(right)).reshape(v.shape)
    # Batched: count the elements before each value (NaN sorts last, as in NumPy / PyTorch).
    s = _core.expand_dims(seq, -2)
    w = _core.expand_dims(v, -1)
    before = _core.less_equal(s, w) if right else _core.less(s, w)
    count = _core.sum(before.astype(_core.int64), axis=-1)
    nan = _core.isnan(v) if v.dtype.kind in "fc" else None
    if nan is not None:
        last = seq.shape[-1] if right else _core.sum((~_core.isnan(seq)).astype(_core.int64), -1)
        count = _core.where(nan, _core.expand_dims(last, -1) if not right else last, count)
    return count


def _torch_searchsorted(seq, values, side, sorter, right, out_int32, out, who):
    seq = _arr(seq, who, "sorted_sequence")
    scalar = not isinstance(values, _core.ndarray)
    v = _arr(values, who, "input") if not scalar else _core.full((), values, device=seq.device)
    if side is not None:
        if side not in ("left", "right"):
            raise _ArgErr(f"{who}(): side can only be 'left' or 'right' but got {side!r}")
        if right and side == "left":
            raise _ArgErr(
                f"{who}(): side and right can't be set to opposites, got side of left while "
                "right was True"
            )
        right = side == "right"
    if seq.ndim == 0:
        raise _ArgErr(f"{who}(): boundaries tensor should have positive dimension")
    if sorter is not None:
        sorter = _arr(sorter, who, "sorter")
        if sorter.dtype.kind not in "iu" or tuple(sorter.shape) != tuple(seq.shape):
            raise _ArgErr(
                f"{who}(): sorter must be an integer tensor of the sorted_sequence's shape "
                f"{tuple(seq.shape)}, got {sorter.dtype.name} {tuple(sorter.shape)}"
            )
        seq = _take_along_axis(seq, sorter.astype(_core.int64), axis=-1)
    if seq.ndim > 1 and (v.ndim != seq.ndim or tuple(v.shape[:-1]) != tuple(seq.shape[:-1])):
        raise _ArgErr(
            f"{who}(): boundaries tensor should be 1 dimension or the first N-1 dimensions of "
            f"boundaries tensor and input value tensor must match, but we got boundaries tensor "
            f"{list(seq.shape)} and input value tensor {list(v.shape)}"
        )
    seq, v = _common(seq, v, who)
    r = _search(seq, v, right).astype(_core.int32 if out_int32 else _core.int64)
    if out is not None:
        out[...] = r
        return out
    return r


_UNSET = object()


def _batched_values(seq, v):
    """Whether ``v`` matches the leading dims of the N-d ``seq`` (PyTorch's batched search; NumPy
    refuses an N-d sequence, and keeps doing so for values of another shape)."""
    return (
        isinstance(v, _core.ndarray)
        and v.ndim == seq.ndim
        and tuple(v.shape[:-1]) == tuple(seq.shape[:-1])
    )


def _searchsorted(numpy_searchsorted):
    def searchsorted(x1, x2, /, side=_UNSET, sorter=None, *, right=None, out_int32=False, out=None):
        """NumPy's ``searchsorted(a, v, side='left', sorter=None)``; PyTorch's keywords
        (``right=``, ``out_int32=``, ``out=``), ``side=None`` or an N-d sorted sequence with
        values of the same leading dims (a search along its last axis per leading index) mean
        PyTorch's, which promotes the two
        operands to their common dtype and returns int64 (int32 with ``out_int32``)."""
        seq = x1 if isinstance(x1, _core.ndarray) else None
        torch_form = (
            right is not None
            or out_int32
            or out is not None
            or side is None
            or (seq is not None and seq.ndim > 1 and _batched_values(seq, x2))
        )
        if not torch_form:
            return numpy_searchsorted(x1, x2, "left" if side is _UNSET else side, sorter)
        side = None if side is _UNSET else side
        return _torch_searchsorted(
            x1, x2, side, sorter, builtins.bool(right), out_int32, out, "ember.searchsorted"
        )

    return searchsorted


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):  # noqa: A002
    """Index of the bucket of each element: ``boundaries[i-1] < x <= boundaries[i]`` (``right``
    False), ``boundaries[i-1] <= x < boundaries[i]`` (``right`` True); the two operands are
    promoted to their common dtype."""
    who = "ember.bucketize"
    b = _arr(boundaries, who, "boundaries")
    if b.ndim != 1:
        raise _ArgErr(f"{who}(): boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    scalar = not isinstance(input, _core.ndarray)
    x = _arr(input, who, "input") if not scalar else _core.full((), input, device=b.device)
    if x.device != b.device:
        x = x.to(b.device)
    r = _torch_searchsorted(b, x, None, None, right, out_int32, out, who)
    return r


# ---- per-element Python callables (CPU only) -----------------------------------------------------


def _cpu_only(self, name):
    if self.device != "cpu":
        raise TypeError(f"ember.ndarray.{name}: {name} is only implemented on CPU tensors")


def _apply_(self, callable):  # noqa: A002
    """Replaces each element x by ``callable(x)`` (a Python call per element; CPU only)."""
    _cpu_only(self, "apply_")
    host = np.asarray(self)
    flat = [callable(v) for v in host.reshape(-1).tolist()]
    self[...] = _asarray(np.asarray(flat, dtype=host.dtype).reshape(host.shape))
    return self


def _map_(self, other, callable):  # noqa: A002
    """Replaces each element x by ``callable(x, y)``, y the matching element of ``other``
    (broadcast to self's shape; a Python call per element; CPU only)."""
    _cpu_only(self, "map_")
    o = other if isinstance(other, _core.ndarray) else _asarray(other)
    _cpu_only(o, "map_")
    host = np.asarray(self)
    oh = np.broadcast_to(np.asarray(o), host.shape)
    flat = [
        callable(a, b)
        for a, b in zip(host.reshape(-1).tolist(), oh.reshape(-1).tolist(), strict=True)
    ]
    self[...] = _asarray(np.asarray(flat, dtype=host.dtype).reshape(host.shape))
    return self


# ---- window functions ----------------------------------------------------------------------------


def _window(name, length, periodic, dtype, device, requires_grad, f):
    who = f"ember.{name}"
    length = _int(length, who, "window_length")
    if length < 0:
        raise _ArgErr(f"{name} requires non-negative window_length, got window_length={length}")
    dt = _core.dtype(_default[0] if dtype is None else dtype)
    if dt.kind != "f":
        raise _ArgErr(f"{name} expects floating point dtypes, got: {dt.name}")
    kw = {} if device is None else {"device": device}
    if length <= 1:
        r = _core.ones((length,), dtype=dt, **kw)
    else:
        n = length + 1 if periodic else length
        k = _core.arange(n, dtype=_core.float64, **kw)
        r = f(k, n)
        if periodic:
            r = r[:-1]
        r = r.astype(dt)
    if requires_grad:
        r.requires_grad_(True)
    return r


def _cos(k, n, m):
    return _core.cos((2.0 * math.pi * m / (n - 1)) * k)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):  # fmt: skip
    """0.5 - 0.5 cos(2 pi n / (N - 1)); ``periodic``: the N + 1 window without its last point."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 0.5 - 0.5 * _cos(k, n, 1))  # fmt: skip


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False):  # fmt: skip
    """alpha - beta cos(2 pi n / (N - 1))."""
    a, b = builtins.float(alpha), builtins.float(beta)
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: a - b * _cos(k, n, 1))  # fmt: skip


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):  # fmt: skip
    """0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 0.42 - 0.5 * _cos(k, n, 1) + 0.08 * _cos(k, n, 2))  # fmt: skip


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):  # fmt: skip
    """1 - |2n / (N - 1) - 1| (a triangle)."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 1.0 - _core.abs(k * (2.0 / (n - 1)) - 1.0))  # fmt: skip


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):  # fmt: skip
    """I0(beta sqrt(1 - (2n / (N - 1) - 1)^2)) / I0(beta)."""
    b = builtins.float(beta)

    def f(k, n):
        r = k * (2.0 / (n - 1)) - 1.0
        return _i0(b * _core.sqrt(_core.maximum(1.0 - r * r, 0.0))) / _i0(_core.full((), b,
                   dtype=_core.float64, device=k.device))  # fmt: skip

    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, f)


# ---- installation --------------------------------------------------------------------------------


def install(ns):
    """Adds the functions above to ember's namespace `ns`, and the methods to ndarray."""
    for name in __all__:
        if name not in ns:
            ns[name] = globals()[name]
            ns["__all__"].append(name)
    ns["bucketize"] = bucketize
    ns["searchsorted"] = _searchsorted(ns["searchsorted"])
    nd = _core.ndarray
    methods = {
        "sgn": lambda self: sgn(self),
        "sgn_": lambda self: self.__setitem__(Ellipsis, sgn(self)) or self,
        "frac": lambda self: frac(self),
        "unflatten": lambda self, dim, sizes: unflatten(self, dim, sizes),
        "mode": lambda self, dim=-1, keepdim=False: mode(self, dim, keepdim),
        "logit": lambda self, eps=None: logit(self, eps),
        "stft": lambda self, *args, **kwargs: stft(self, *args, **kwargs),
        "istft": lambda self, *args, **kwargs: istft(self, *args, **kwargs),
        "apply_": _apply_,
        "map_": _map_,
        "cholesky_solve": lambda self, input2, upper=False: cholesky_solve(self, input2, upper),
        "cholesky_inverse": lambda self, upper=False: cholesky_inverse(self, upper),
    }
    methods = {k: v for k, v in methods.items() if not hasattr(nd, k)}
    methods["bucketize"] = lambda self, boundaries, *, out_int32=False, right=False: bucketize(
        self, boundaries, out_int32=out_int32, right=right
    )
    from ._torch_methods import attach

    attach(nd, methods)
