"""PyTorch's tensor functions and methods that first-contact code reached after
ember/_torch_extra.py (the rule of which API a call means is in ember/_torch.py).

Functions: ``clone``, ``diag_embed``, ``pinverse``, ``tensordot(dims=)``, ``take_along_dim``,
``xlogy``/``erfinv``/``polygamma``/``lgamma``/``digamma`` (ember.special's), ``msort``,
``renorm``, ``tensor_split``, ``clamp_min``/``clamp_max``, ``cumulative_trapezoid``, ``normal``
(PyTorch's four forms), ``poisson``, the deterministic-algorithms flag and the host thread count.
Methods: ``log_normal_``/``geometric_``/``cauchy_`` (ember's RNG), ``index_put(_)``,
``masked_scatter(_)``, ``sum_to_size``, ``pin_memory``, ``share_memory_``/``is_shared``,
``data_ptr``, ``untyped_storage``/``storage`` and ``x.H``/``x.mH``.

Everything is written with ember's array ops, so it runs on either device and is differentiable
where the ops it uses are (``diag_embed`` is a matmul with a 0/1 selection matrix, ``renorm`` and
``cumulative_trapezoid`` are elementwise ops and sums, ``tensor_split`` returns slices)."""

from __future__ import annotations

import builtins
import math
import os

import numpy as np

from . import _core
from ._array import asarray as _asarray
from ._indexing import take_along_axis as _take_along_axis
from ._manipulation import broadcast_shapes as _broadcast_shapes
from ._manipulation import moveaxis as _moveaxis
from ._scan import cumsum as _cumsum
from ._sorting import sort as _sort
from ._torch import _arr, _gen, _int

__all__ = [
    "are_deterministic_algorithms_enabled",
    "clamp_max",
    "clamp_min",
    "clone",
    "cumulative_trapezoid",
    "diag_embed",
    "digamma",
    "erfinv",
    "get_num_threads",
    "is_deterministic_algorithms_warn_only_enabled",
    "lgamma",
    "msort",
    "normal",
    "pinverse",
    "poisson",
    "polygamma",
    "renorm",
    "set_num_threads",
    "take_along_dim",
    "tensor_split",
    "use_deterministic_algorithms",
    "xlogy",
]


def _dim(d, nd, who, what="dim"):
    d = _int(d, who, what)
    n = builtins.max(nd, 1)
    if not -n <= d < n:
        raise IndexError(f"{who}(): {what} {d} is out of range for {nd} dimensions")
    return d % n


def _nonzero_tuple(mask):
    from ._scan import nonzero

    return nonzero(mask)


def _float_dtype(x):
    dt = str(x.dtype)
    return dt if dt in ("float16", "bfloat16", "float32", "float64") else "float32"


# ---- shapes and linear algebra ------------------------------------------------------------------


def clone(input, *, memory_format=None):  # noqa: A002
    """A copy of `input` (differentiable: the gradient flows back to `input`)."""
    return _arr(input, "ember.clone").clone()


def diag_embed(input, offset=0, dim1=-2, dim2=-1):  # noqa: A002
    """Arrays whose (dim1, dim2) diagonals at `offset` are the last dimension of `input`, zeros
    elsewhere (PyTorch's ``diag_embed``)."""
    who = "ember.diag_embed"
    x = _arr(input, who)
    offset = _int(offset, who, "offset")
    if x.ndim == 0:
        raise ValueError(f"{who}(): input must have at least 1 dimension")
    nd = x.ndim + 1
    d1, d2 = _dim(dim1, nd, who, "dim1"), _dim(dim2, nd, who, "dim2")
    if d1 == d2:
        raise ValueError(f"{who}(): diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = x.shape[-1]
    m = n + builtins.abs(offset)
    sel = np.zeros((m, m, n), dtype=np.float64)
    k = np.arange(n)
    rows, cols = (k, k + offset) if offset >= 0 else (k - offset, k)
    sel[rows, cols, k] = 1
    s = _asarray(sel.reshape(m * m, n).T.copy(), dtype=x.dtype, device=x.device)
    out = (x.reshape(-1, n) @ s).reshape(tuple(x.shape[:-1]) + (m, m))
    return _moveaxis(out, (-2, -1), (d1, d2))


def pinverse(input, rcond=1e-15):  # noqa: A002
    """The Moore-Penrose pseudo-inverse (of the last two dimensions), singular values below
    ``rcond`` times the largest dropped."""
    from .linalg import pinv

    return pinv(_arr(input, "ember.pinverse"), rcond=rcond)


def _tensordot(core_tensordot):
    def tensordot(a, b, axes=2, *, dims=None, out=None):
        """NumPy's ``tensordot`` and PyTorch's: `axes` (PyTorch's `dims`, by keyword) an int
        (the last ones of `a` with the first of `b`), a pair of lists of dimensions, or a
        (2, k) array."""
        who = "ember.tensordot"
        if dims is not None:
            axes = dims
        if isinstance(axes, _core.ndarray):
            axes = axes.tolist()
        if isinstance(axes, (list, tuple)):
            if len(axes) != 2:
                raise ValueError(f"{who}(): dims must be an int or a pair of lists, got {axes!r}")
            axes = tuple(
                [_int(v, who, "dims") for v in (a_ if isinstance(a_, (list, tuple)) else [a_])]
                for a_ in axes
            )
        else:
            axes = _int(axes, who, "dims")
            if axes < 0:
                raise ValueError(f"{who}(): dims must be >= 0, got {axes}")
        r = core_tensordot(_arr(a, who, "a"), _arr(b, who, "b"), axes=axes)
        if out is not None:
            out[...] = r
            return out
        return r

    return tensordot


def take_along_dim(input, indices, dim=None, *, out=None):  # noqa: A002
    """Elements of `input` at `indices` along `dim` (both flattened when `dim` is None)."""
    who = "ember.take_along_dim"
    x, idx = _arr(input, who), _arr(indices, who, "indices")
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{who}(): indices must be an integer array, got {idx.dtype}")
    if dim is None:
        r = _take_along_axis(x.reshape(-1), idx.reshape(-1), axis=0)
    else:
        d = _dim(dim, x.ndim, who)
        if idx.ndim != x.ndim:
            raise ValueError(
                f"{who}(): input and indices should have the same number of dimensions, got "
                f"{x.ndim} and {idx.ndim}"
            )
        shp_x = list(x.shape)
        shp_i = list(idx.shape)
        shp_x[d] = x.shape[d]
        shp_i[d] = idx.shape[d]
        common = [builtins.max(a, b) for a, b in zip(x.shape, idx.shape, strict=True)]
        bx, bi = list(common), list(common)
        bx[d], bi[d] = x.shape[d], idx.shape[d]
        try:
            x2 = _core.broadcast_to(x, tuple(bx))
            i2 = _core.broadcast_to(idx, tuple(bi))
        except ValueError as e:
            raise ValueError(f"{who}(): input and indices do not broadcast: {e}") from None
        r = _take_along_axis(x2, i2, axis=d)
    if out is not None:
        out[...] = r
        return out
    return r


def msort(input, *, out=None):  # noqa: A002
    """`input` sorted along its first dimension (the values)."""
    x = _arr(input, "ember.msort")
    r = _sort(x, axis=0) if x.ndim else x.clone()
    if out is not None:
        out[...] = r
        return out
    return r


def renorm(input, p, dim, maxnorm):  # noqa: A002
    """Each sub-array along `dim` whose p-norm exceeds `maxnorm` scaled to norm `maxnorm`
    (PyTorch's factor ``maxnorm / (norm + 1e-7)``)."""
    who = "ember.renorm"
    x = _arr(input, who)
    if x.dtype.kind not in "fc":
        raise TypeError(f"{who}(): input must be a floating array, got {x.dtype}")
    p, maxnorm = builtins.float(p), builtins.float(maxnorm)
    if p <= 0:
        raise ValueError(f"{who}(): non-positive norm not supported, got p={p}")
    if maxnorm < 0:
        raise ValueError(f"{who}(): maxnorm must be >= 0, got {maxnorm}")
    if x.ndim <= 1:
        raise ValueError(f"{who}(): input needs at least 2 dimensions, got {x.ndim}")
    d = _dim(dim, x.ndim, who)
    others = tuple(i for i in range(x.ndim) if i != d)
    a = _core.abs(x)
    norms = _core.max(a, axis=others, keepdims=True) if math.isinf(p) else (
        _core.sum(a**p, axis=others, keepdims=True) ** (1.0 / p)
    )  # fmt: skip
    factor = _core.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return x * factor.astype(x.dtype)


def tensor_split(input, indices_or_sections, dim=0):  # noqa: A002
    """Views of `input` split along `dim`: into `sections` nearly equal parts (the first
    ``n % sections`` one longer), or at the given indices."""
    who = "ember.tensor_split"
    x = _arr(input, who)
    if x.ndim == 0:
        raise ValueError(f"{who}(): input must have at least one dimension")
    d = _dim(dim, x.ndim, who)
    n = x.shape[d]
    ios = indices_or_sections
    if isinstance(ios, _core.ndarray):
        if ios.dtype.kind not in "iu" or ios.ndim > 1:
            raise TypeError(f"{who}(): indices_or_sections must be a 0-d or 1-d integer array")
        ios = ios.tolist()
    if isinstance(ios, (list, tuple)):
        bounds = [_int(i, who, "indices") for i in ios]
        bounds = [0] + [builtins.min(builtins.max(b + n if b < 0 else b, 0), n) for b in bounds]
        bounds.append(n)
    else:
        k = _int(ios, who, "sections")
        if k <= 0:
            raise ValueError(f"{who}(): number of sections must be larger than 0, got {k}")
        q, r = divmod(n, k)
        bounds = [0]
        for i in range(k):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    pre = (slice(None),) * d
    return tuple(
        x[pre + (slice(a, builtins.max(a, b)),)] for a, b in zip(bounds, bounds[1:], strict=False)
    )


def clamp_min(input, min):  # noqa: A002
    """``max(input, min)`` elementwise."""
    return _core.maximum(_arr(input, "ember.clamp_min"), min)


def clamp_max(input, max):  # noqa: A002
    """``min(input, max)`` elementwise."""
    return _core.minimum(_arr(input, "ember.clamp_max"), max)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid-rule integral of `y` along `dim` (one element shorter), spacing `x`
    (sample points) or `dx` (a constant, default 1)."""
    who = "ember.cumulative_trapezoid"
    y = _arr(y, who, "y")
    if y.ndim == 0:
        raise ValueError(f"{who}(): y must have at least one dimension")
    d = _dim(dim, y.ndim, who)
    if x is not None and dx is not None:
        raise TypeError(f"{who}(): pass x or dx, not both")
    pre = (slice(None),) * d
    lo, hi = y[pre + (slice(None, -1),)], y[pre + (slice(1, None),)]
    mid = (lo + hi) / 2
    if x is not None:
        xs = _arr(x, who, "x")
        if xs.ndim == 1:
            if xs.shape[0] != y.shape[d]:
                raise ValueError(
                    f"{who}(): x has {xs.shape[0]} samples, y has {y.shape[d]} along dim {dim}"
                )
            h = (xs[1:] - xs[:-1]).reshape((-1,) + (1,) * (y.ndim - d - 1))
        else:
            h = xs[pre + (slice(1, None),)] - xs[pre + (slice(None, -1),)]
        mid = mid * h
    elif dx is not None:
        mid = mid * dx
    return _cumsum(mid, axis=d)


# ---- special functions (ember.special's) -------------------------------------------------------


def _real_args(who, *args):
    for a in args:
        if isinstance(a, complex) or (isinstance(a, _core.ndarray) and a.dtype.kind == "c"):
            raise TypeError(f"{who}(): not implemented for complex inputs")


def xlogy(input, other, *, out=None):  # noqa: A002
    """``input * log(other)``, 0 where `input` is 0 (and `other` is not NaN)."""
    from . import special

    _real_args("ember.xlogy", input, other)
    return special.xlogy(input, other, out=out)


def erfinv(input, *, out=None):  # noqa: A002
    """The inverse error function."""
    from . import special

    _real_args("ember.erfinv", input)
    return special.erfinv(input, out=out)


def polygamma(n, input, *, out=None):  # noqa: A002
    """The `n`-th derivative of the digamma function."""
    from . import special

    _real_args("ember.polygamma", input)
    return special.polygamma(n, input, out=out)


def lgamma(input, *, out=None):  # noqa: A002
    """``log|Gamma(input)|``."""
    from . import special

    _real_args("ember.lgamma", input)
    return special.gammaln(input, out=out)


def digamma(input, *, out=None):  # noqa: A002
    """The logarithmic derivative of Gamma."""
    from . import special

    _real_args("ember.digamma", input)
    return special.digamma(input, out=out)


# ---- random -----------------------------------------------------------------------------------


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, device=None,
           requires_grad=False):  # fmt: skip
    """Normal samples, PyTorch's forms: ``normal(mean_array, std_array)`` (broadcast),
    ``normal(mean_array, std=1.0)``, ``normal(mean, std_array)`` and ``normal(mean, std, size)``
    (floats). Samples are not differentiable in `mean`/`std` (ember's rule for random ops)."""
    who = "ember.normal"
    g = _gen(generator, who)
    tensors = [v for v in (mean, std) if isinstance(v, _core.ndarray)]
    if not tensors:
        if size is None:
            raise TypeError(f"{who}(): with float mean and std, size is required")
        from ._torch import _size_args

        shape = _size_args((size,), who)
        s = builtins.float(std)
        if s < 0:
            raise ValueError(f"{who}(): std must be >= 0, got {s}")
        from ._torch import get_default_dtype

        dt = dtype or get_default_dtype()
        r = g.normal(builtins.float(mean), s, shape, dtype=dt, device=device)
    else:
        if size is not None:
            raise TypeError(f"{who}(): size is only accepted with float mean and std")
        ref = tensors[0]
        if ref.dtype.kind != "f":
            raise TypeError(f"{who}(): mean/std must be floating arrays, got {ref.dtype}")
        m = mean.detach() if isinstance(mean, _core.ndarray) else builtins.float(mean)
        s = std.detach() if isinstance(std, _core.ndarray) else builtins.float(std)
        if isinstance(s, builtins.float) and s < 0:
            raise ValueError(f"{who}(): std must be >= 0, got {s}")
        if isinstance(s, _core.ndarray) and builtins.bool((s < 0).any()):
            raise ValueError(f"{who}(): std must be >= 0")
        shape = _broadcast_shapes(*[tuple(v.shape) for v in (m, s) if isinstance(v, _core.ndarray)])
        z = g.standard_normal(shape, dtype=str(ref.dtype), device=ref.device)
        r = m + s * z
    if out is not None:
        out[...] = r
        return out
    if requires_grad:
        r.requires_grad_(True)
    return r


def poisson(input, generator=None):  # noqa: A002
    """Poisson samples with rates `input` (>= 0), in `input`'s dtype and device: exact (Knuth's
    product of uniforms) for rates up to 30, the rounded normal approximation above."""
    who = "ember.poisson"
    lam = _arr(input, who)
    if lam.dtype.kind != "f":
        raise TypeError(f"{who}(): input must be a floating array, got {lam.dtype}")
    if builtins.bool((lam < 0).any()):
        raise ValueError(f"{who}(): rates must be >= 0")
    g = _gen(generator, who)
    lam = lam.detach().astype("float64")
    small = lam <= 30
    lam_s = _core.where(small, lam, 0.0)
    limit = _core.exp(-lam_s)
    k = _core.zeros(lam.shape, dtype="float64", device=lam.device)
    p = g.random(lam.shape, dtype="float64", device=lam.device)
    while builtins.bool((p > limit).any()):  # Knuth: count uniforms until their product < e^-lam
        k = k + (p > limit)
        p = p * g.random(lam.shape, dtype="float64", device=lam.device)
    big = g.standard_normal(lam.shape, dtype="float64", device=lam.device)
    big = _core.maximum(_core.floor(lam + _core.sqrt(lam) * big + 0.5), 0.0)
    return _core.where(small, k, big).astype(input.dtype)


# ---- global settings --------------------------------------------------------------------------

_deterministic = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Records PyTorch's determinism flag. In ember it changes nothing yet: its kernels are
    deterministic except the atomics of scatter-adds (``index_add``, ``index_put_(accumulate=)``,
    embedding gradients) on the GPU, whose float sums may differ in the last bits from run to
    run; code that reads ``are_deterministic_algorithms_enabled()`` sees the value set."""
    if not isinstance(mode, (builtins.bool, np.bool_)):
        raise TypeError(f"ember.use_deterministic_algorithms(): mode must be a bool, not {mode!r}")
    _deterministic["mode"] = builtins.bool(mode)
    _deterministic["warn_only"] = builtins.bool(warn_only)


def are_deterministic_algorithms_enabled():
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic["warn_only"]


_threads = {"n": None}


def get_num_threads():
    """The threads of ember's host pool: ``EMBER_NUM_THREADS`` (read when the pool starts), else
    the CPU count; a value given to ``set_num_threads`` is reported back."""
    if _threads["n"] is not None:
        return _threads["n"]
    env = os.environ.get("EMBER_NUM_THREADS", "")
    return builtins.int(env) if env.isdigit() and builtins.int(env) > 0 else (os.cpu_count() or 1)


def set_num_threads(num):
    """Records `num` for ``get_num_threads``. ember's host pool is sized once, at start, from
    ``EMBER_NUM_THREADS``: set that variable before ``import ember`` to resize it."""
    num = _int(num, "ember.set_num_threads", "num")
    if num <= 0:
        raise ValueError(f"ember.set_num_threads(): num must be positive, got {num}")
    _threads["n"] = num


# ---- methods ----------------------------------------------------------------------------------


def _uniform01(self, who, generator):
    g = _gen(generator, who)
    return g.random(self.shape, dtype=_float_dtype(self), device=self.device)


def _log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fills with ``exp(N(mean, std))``."""
    if builtins.float(std) <= 0:
        raise ValueError(f"ember.ndarray.log_normal_(): std must be > 0, got {std}")
    g = _gen(generator, "ember.ndarray.log_normal_")
    z = g.normal(builtins.float(mean), builtins.float(std), self.shape, dtype=_float_dtype(self),
                 device=self.device)  # fmt: skip
    self[...] = _core.exp(z)
    return self


def _geometric_(self, p, *, generator=None):
    """Fills with the number of Bernoulli(p) trials to the first success (1, 2, ...)."""
    p = builtins.float(p)
    if not 0 < p < 1:
        raise ValueError(f"ember.ndarray.geometric_(): p must be in (0, 1), got {p}")
    u = 1.0 - _uniform01(self, "ember.ndarray.geometric_", generator)  # (0, 1]
    self[...] = _core.floor(_core.log(u) / math.log1p(-p)) + 1
    return self


def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fills with Cauchy samples ``median + sigma * tan(pi * (U - 1/2))``."""
    if builtins.float(sigma) <= 0:
        raise ValueError(f"ember.ndarray.cauchy_(): sigma must be > 0, got {sigma}")
    u = _uniform01(self, "ember.ndarray.cauchy_", generator)
    self[...] = builtins.float(median) + builtins.float(sigma) * _core.tan(math.pi * (u - 0.5))
    return self


def _index_put_(self, indices, values, accumulate=False):
    """``self[indices] = values`` (or ``+=`` with `accumulate`, repeated indices adding up)."""
    who = "ember.ndarray.index_put_"
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{who}(): indices must be a tuple of arrays, not {type(indices).__name__}")
    idx = []
    for i in indices:
        i = _arr(i, who, "indices")
        if i.dtype.kind == "b":
            idx.extend(_nonzero_tuple(i))
        elif i.dtype.kind in "iu":
            idx.append(i)
        else:
            raise IndexError(
                f"{who}(): tensors used as indices must be long or bool, got {i.dtype}"
            )
    if len(idx) > self.ndim:
        raise IndexError(f"{who}(): too many indices ({len(idx)}) for {self.ndim} dimensions")
    values = _arr(values, who, "values")
    if not accumulate:
        self[tuple(idx)] = values
        return self
    k = len(idx)
    shp = tuple(self.shape)
    lin = None
    for ax, i in enumerate(idx):
        n = shp[ax]
        if builtins.bool(((i < -n) | (i >= n)).any()):
            raise IndexError(f"{who}(): index out of range for dimension {ax} of size {n}")
        i = (i % n).astype("int64") if n else i.astype("int64")
        lin = i if lin is None else lin * n + i
    inner = math.prod(shp[k:])
    flat = self.reshape(-1)
    v = _core.broadcast_to(values.astype(self.dtype), tuple(lin.shape) + shp[k:])
    pos = lin.reshape(-1, 1) * inner + _core.arange(inner, device=self.device).reshape(1, -1)
    _core._add_at(flat, pos.reshape(-1), v.reshape(-1))
    self[...] = flat.reshape(shp)  # a no-op copy when reshape gave a view
    return self


def _masked_scatter_(self, mask, source):
    """Copies `source`'s elements, in order, to the positions where `mask` (broadcast) is True."""
    who = "ember.ndarray.masked_scatter_"
    mask = _arr(mask, who, "mask")
    if mask.dtype.kind != "b":
        raise TypeError(f"{who}(): mask must be a bool array, got {mask.dtype}")
    source = _arr(source, who, "source")
    try:
        m = _core.broadcast_to(mask, tuple(self.shape))
    except ValueError as e:
        raise ValueError(f"{who}(): mask does not broadcast to {tuple(self.shape)}: {e}") from None
    count = builtins.int(m.sum().item())
    if count > source.size:
        raise ValueError(
            f"{who}(): number of elements of source ({source.size}) < number of ones in mask "
            f"({count})"
        )
    if count:
        self[m] = source.reshape(-1)[:count].astype(self.dtype)
    return self


def _sum_to_size(self, *size):
    """`self` summed down to `size` (a shape `self` broadcasts from)."""
    who = "ember.ndarray.sum_to_size"
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    size = tuple(_int(s, who, "size") for s in size)
    shp = tuple(self.shape)
    if len(size) > len(shp):
        raise ValueError(f"{who}(): size {list(size)} is not expandable to {list(shp)}")
    lead = len(shp) - len(size)
    for s, t in zip(size, shp[lead:], strict=True):
        if s != t and s != 1:
            raise ValueError(f"{who}(): size {list(size)} is not expandable to {list(shp)}")
    r = self
    if lead:
        r = _core.sum(r, axis=tuple(range(lead)))
    keep = tuple(i for i, (s, t) in enumerate(zip(size, shp[lead:], strict=True)) if s == 1 != t)
    if keep:
        r = _core.sum(r, axis=keep, keepdims=True)
    return r


def _pin_memory(self, device=None):
    """A copy in pinned (page-locked) host memory, for fast non-blocking copies to the GPU.
    Without a CUDA driver ember has no pinned memory: the array itself is returned."""
    if _is_cuda(self):
        raise ValueError("ember.ndarray.pin_memory(): only CPU arrays can be pinned")
    from . import cuda

    if not cuda.is_available():
        return self
    if cuda.is_pinned(self):
        return self
    p = cuda.pinned_empty(tuple(self.shape), dtype=self.dtype)
    p[...] = self
    return p


def _share_memory_(self):
    """PyTorch moves a CPU tensor to shared memory for torch.multiprocessing; ember's arrays
    are passed to worker processes by ember's own data loader, so this returns `self`."""
    return self


def _is_shared(self):
    """False for CPU arrays (see ``share_memory_``); True for CUDA arrays, as in PyTorch."""
    return _is_cuda(self)


def _is_cuda(x):
    return str(x.device).startswith("cuda")


def _data_ptr(self):
    """The address of the first element (device memory for CUDA arrays)."""
    if _is_cuda(self):
        return builtins.int(self.__cuda_array_interface__["data"][0])
    if self.size == 0:
        return 0
    return builtins.int(np.from_dlpack(self.detach()).ctypes.data)


class UntypedStorage:
    """A read-only description of an array's memory: ``data_ptr()``, ``nbytes()``, ``size()``
    (bytes), ``element_size()`` and ``device``. It covers the array's own elements (ember does
    not expose the buffer a view was taken from)."""

    def __init__(self, array, typed=False):
        self._ptr = _data_ptr(array)
        self._nbytes = builtins.int(array.nbytes)
        self._itemsize = builtins.int(array.itemsize)
        self._typed = typed
        self.device = array.device
        self.dtype = array.dtype

    def data_ptr(self):
        return self._ptr

    def nbytes(self):
        return self._nbytes

    def element_size(self):
        return self._itemsize if self._typed else 1

    def size(self):
        return self._nbytes // self._itemsize if self._typed else self._nbytes

    def __len__(self):
        return self.size()

    def __repr__(self):
        kind = "TypedStorage" if self._typed else "UntypedStorage"
        return f"ember.{kind}(data_ptr={self._ptr:#x}, nbytes={self._nbytes}, device={self.device})"


def _matrix_h(self):
    if self.ndim != 2:
        raise ValueError(
            f"ember.ndarray.H is only supported on matrices (2-D arrays), got {self.ndim}-D"
        )
    return _core.swapaxes(self, 0, 1).conj()


def _matrix_mh(self):
    if self.ndim < 2:
        raise ValueError(
            f"ember.ndarray.mH is only supported on arrays with >= 2 dims, got {self.ndim}"
        )
    return _core.swapaxes(self, -2, -1).conj()


def install(ns):
    """Adds the functions above to ember's namespace `ns`, and the methods to ndarray."""
    for name in __all__:
        if name not in ns:
            ns[name] = globals()[name]
            ns["__all__"].append(name)
    ns["tensordot"] = _tensordot(ns["tensordot"])
    nd = _core.ndarray
    methods = {
        "log_normal_": _log_normal_,
        "geometric_": _geometric_,
        "cauchy_": _cauchy_,
        "index_put_": _index_put_,
        "index_put": lambda self, indices, values, accumulate=False: _index_put_(
            self.clone(), indices, values, accumulate
        ),
        "masked_scatter_": _masked_scatter_,
        "masked_scatter": lambda self, mask, source: _masked_scatter_(self.clone(), mask, source),
        "sum_to_size": _sum_to_size,
        "pin_memory": _pin_memory,
        "share_memory_": _share_memory_,
        "is_shared": _is_shared,
        "data_ptr": _data_ptr,
        "untyped_storage": lambda self: UntypedStorage(self),
        "storage": lambda self: UntypedStorage(self, typed=True),
        "clamp_min": lambda self, min: clamp_min(self, min),  # noqa: A002
        "clamp_max": lambda self, max: clamp_max(self, max),  # noqa: A002
        "diag_embed": lambda self, offset=0, dim1=-2, dim2=-1: diag_embed(self, offset, dim1, dim2),
        "pinverse": lambda self, rcond=1e-15: pinverse(self, rcond),
        "take_along_dim": lambda self, indices, dim=None: take_along_dim(self, indices, dim),
        "xlogy": lambda self, other: xlogy(self, other),
        "erfinv": lambda self: erfinv(self),
        "lgamma": lambda self: lgamma(self),
        "digamma": lambda self: digamma(self),
        "polygamma": lambda self, n: polygamma(n, self),
        "msort": lambda self: msort(self),
        "renorm": lambda self, p, dim, maxnorm: renorm(self, p, dim, maxnorm),
        "tensor_split": lambda self, indices_or_sections, dim=0: tensor_split(
            self, indices_or_sections, dim
        ),
    }
    methods = {k: v for k, v in methods.items() if not hasattr(nd, k)}
    from ._torch_methods import attach

    attach(nd, methods)
    if not hasattr(nd, "H"):
        nd.H = property(_matrix_h, doc="The conjugate transpose of a matrix (PyTorch's x.H).")
    if not hasattr(nd, "mH"):
        nd.mH = property(_matrix_mh, doc="The conjugate transpose of the last two dimensions.")
