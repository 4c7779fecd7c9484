"""PyTorch's tensor functions that first-contact code reached after ember/_torch_more.py (the
rule of which API a call means is in ember/_torch.py).

Functions: ``bucketize``, ``histc``, ``cummax``/``cummin`` (values and indices), ``block_diag``,
``cartesian_prod``, ``combinations``, ``unique_consecutive``, ``std_mean``/``var_mean``,
``aminmax``, ``movedim``, ``index_add``/``index_fill``/``index_copy``, ``scatter_reduce`` and
``Generator`` (PyTorch's: ``manual_seed`` returns it, ``initial_seed``, ``get_state``). Methods:
the same as methods, their in-place forms (``index_add_``, ...), ``amax``/``amin``,
``x.where(cond, y)``, ``x.allclose``, and ``squeeze(dim=)`` leaving a dimension that is not 1
(PyTorch's rule; NumPy's positional ``squeeze(0)`` still raises).

Scans (``cummax``, the segmented reductions of ``scatter_reduce``) are Hillis-Steele: log2(n)
passes of one elementwise op over shifted views, on either device."""

from __future__ import annotations

import builtins
import functools
import itertools
import math

import numpy as np

from . import _core
from ._creation import meshgrid as _meshgrid
from ._joining import concatenate as _concatenate
from ._joining import stack as _stack
from ._manipulation import moveaxis as _moveaxis
from ._scan import cumsum as _cumsum
from ._scan import nonzero as _nonzero
from ._sorting import argsort as _argsort
from ._torch import ValuesIndices, _arr, _int, _linear
from ._torch import get_default_dtype as _get_default_dtype

__all__ = [
    "Generator",
    "aminmax",
    "block_diag",
    "bucketize",
    "cartesian_prod",
    "combinations",
    "cummax",
    "cummin",
    "histc",
    "index_add",
    "index_copy",
    "index_fill",
    "movedim",
    "scatter_reduce",
    "std_mean",
    "unique_consecutive",
    "var_mean",
]


# ---- searching and counting ---------------------------------------------------------------------


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):  # noqa: A002
    """Index of the bucket of each element: ``boundaries[i-1] < x <= boundaries[i]`` (``right``
    False), ``boundaries[i-1] <= x < boundaries[i]`` (``right`` True)."""
    who = "ember.bucketize"
    boundaries = _arr(boundaries, who, "boundaries")
    if boundaries.ndim != 1:
        raise ValueError(f"{who}(): boundaries must be 1-d, got shape {tuple(boundaries.shape)}")
    scalar = not isinstance(input, _core.ndarray)
    x = _arr(input, who, "input")
    if x.device != boundaries.device:
        x = x.to(boundaries.device)
    r = _core._searchsorted(boundaries, x.reshape(-1), builtins.bool(right)).reshape(x.shape)
    r = r.astype("int32" if out_int32 else "int64")
    if out is not None:
        out[...] = r
        return out
    return r[()] if scalar and r.ndim == 0 else r


def histc(input, bins=100, min=0, max=0, *, out=None):  # noqa: A002
    """Histogram of ``bins`` equal bins over [min, max] (the data's range when both are 0);
    elements outside are ignored; the input's float dtype."""
    who = "ember.histc"
    x = _arr(input, who, "input")
    if x.dtype.kind != "f":
        raise TypeError(f"{who}(): input must be a floating array, got {x.dtype}")
    bins = _int(bins, who, "bins")
    if bins <= 0:
        raise ValueError(f"{who}(): bins must be > 0, got {bins}")
    lo, hi = builtins.float(min), builtins.float(max)
    if lo > hi:
        raise ValueError(f"{who}(): max must be larger than min, got min={lo}, max={hi}")
    flat = x.reshape(-1)
    if lo == hi and flat.shape[0]:
        lo, hi = builtins.float(_core.min(flat).item()), builtins.float(_core.max(flat).item())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"{who}(): range of [{lo}, {hi}] is not finite")
    inside = (flat >= lo) & (flat <= hi)
    v = flat[inside].astype("float64")
    idx = ((v - lo) * (bins / (hi - lo))).astype("int64")
    idx = _core.minimum(idx, bins - 1)
    counts = _core.zeros(bins, dtype=x.dtype, device=x.device)
    _core._add_at(counts, idx, _core.ones(idx.shape, dtype=x.dtype, device=x.device))
    if out is not None:
        out[...] = counts
        return out
    return counts


# ---- scans ----------------------------------------------------------------------------------


def _scan(x, axis, op):
    """Inclusive scan of ``op`` along ``axis`` (Hillis-Steele: log2(n) shifted passes)."""
    n = x.shape[axis]
    r = x.copy()
    step = 1
    while step < n:
        hi = [slice(None)] * x.ndim
        lo = [slice(None)] * x.ndim
        hi[axis] = slice(step, None)
        lo[axis] = slice(0, n - step)
        r[tuple(hi)] = op(r[tuple(hi)], r[tuple(lo)].copy())
        step *= 2
    return r


def _cumext(name, input, dim, greater):  # noqa: A002
    who = f"ember.{name}"
    x = _arr(input, who, "input")
    dim = _int(dim, who, "dim")
    nd = builtins.max(x.ndim, 1)
    if not -nd <= dim < nd:
        raise IndexError(f"{who}(): dim {dim} is out of range for an array of {x.ndim} dimensions")
    if x.ndim == 0:
        return ValuesIndices(x.copy(), _core.zeros((), dtype="int64", device=x.device))
    dim %= x.ndim
    if x.shape[dim] == 0:
        return ValuesIndices(x.copy(), _core.zeros(x.shape, dtype="int64", device=x.device))
    xd = x.detach()
    pick = _core.maximum if greater else _core.minimum
    if x.dtype.kind == "b":
        pick = _core.logical_or if greater else _core.logical_and
    vals = _scan(xd, dim, pick)
    # the index of the running extreme: the last position that reached it (PyTorch's ties)
    shape = [1] * x.ndim
    shape[dim] = x.shape[dim]
    pos = _core.arange(x.shape[dim], dtype="int64", device=x.device).reshape(shape)
    reached = xd == vals
    if x.dtype.kind in "fc":
        reached = reached | _core.isnan(xd)
    idx = _scan(_core.where(reached, pos, -1), dim, _core.maximum)
    from ._indexing import take_along_axis

    values = take_along_axis(x, idx, axis=dim) if x.requires_grad else vals
    return ValuesIndices(values, idx)


def cummax(input, dim):  # noqa: A002
    """Running maximum along ``dim`` and the index where each was reached."""
    return _cumext("cummax", input, dim, True)


def cummin(input, dim):  # noqa: A002
    """Running minimum along ``dim`` and the index where each was reached."""
    return _cumext("cummin", input, dim, False)


# ---- construction ---------------------------------------------------------------------------


def block_diag(*tensors):
    """A block-diagonal matrix of the given 0-d, 1-d (one row) or 2-d arrays."""
    who = "ember.block_diag"
    mats = []
    for i, t in enumerate(tensors):
        t = _arr(t, who, f"tensors[{i}]")
        if t.ndim > 2:
            raise ValueError(f"{who}(): tensors[{i}] has {t.ndim} dimensions; at most 2 allowed")
        mats.append(t.reshape((1, -1)) if t.ndim < 2 else t)
    if not mats:
        return _core.zeros((1, 0), dtype=_get_default_dtype())
    dtype = _core._result_type(*mats)
    rows = builtins.sum(m.shape[0] for m in mats)
    cols = builtins.sum(m.shape[1] for m in mats)
    out = _core.zeros((rows, cols), dtype=dtype, device=mats[0].device)
    r = c = 0
    for m in mats:
        out[r : r + m.shape[0], c : c + m.shape[1]] = m
        r, c = r + m.shape[0], c + m.shape[1]
    return out


def cartesian_prod(*tensors):
    """Cartesian product of 1-d arrays: (N, len(tensors)) rows, the last varying fastest."""
    who = "ember.cartesian_prod"
    ts = [_arr(t, who, f"tensors[{i}]") for i, t in enumerate(tensors)]
    for i, t in enumerate(ts):
        if t.ndim != 1:
            raise ValueError(f"{who}(): tensors[{i}] must be 1-d, got shape {tuple(t.shape)}")
    if len(ts) == 1:
        return ts[0]
    grids = _meshgrid(*ts, indexing="ij")
    return _stack([g.reshape(-1) for g in grids], axis=1)


def combinations(input, r=2, with_replacement=False):  # noqa: A002
    """The length-``r`` combinations of a 1-d array's elements (itertools' order)."""
    who = "ember.combinations"
    x = _arr(input, who, "input")
    if x.ndim != 1:
        raise ValueError(f"{who}(): input must be 1-d, got shape {tuple(x.shape)}")
    r = _int(r, who, "r")
    if r < 0:
        raise ValueError(f"{who}(): r must be non-negative, got {r}")
    if r == 0:
        return _core.empty((0,), dtype=x.dtype, device=x.device)
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(gen(range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return x[_dev(idx, x.device)]


def _dev(a, device):
    from ._array import asarray

    return asarray(a, device=device)


def unique_consecutive(
    input,  # noqa: A002
    return_inverse=False,
    return_counts=False,
    dim=None,
):
    """Collapses runs of equal consecutive elements (of the flattened input, or of slices along
    ``dim``); optionally the run each element belongs to and each run's length."""
    who = "ember.unique_consecutive"
    x = _arr(input, who, "input")
    if dim is None:
        flat = x.reshape(-1)
        n = flat.shape[0]
        change = flat[1:] != flat[:-1]
        shape_inv = x.shape
    else:
        dim = _int(dim, who, "dim")
        if not -x.ndim <= dim < x.ndim:
            raise IndexError(f"{who}(): dim {dim} is out of range for {x.ndim} dimensions")
        dim %= x.ndim
        flat = _moveaxis(x, dim, 0)
        n = flat.shape[0]
        rows = flat.reshape((n, -1))
        change = _core.any(rows[1:] != rows[:-1], axis=1) if n else rows[:0, 0] != 0
        shape_inv = (n,)
    starts = _concatenate([_core.ones(builtins.min(n, 1), dtype="bool", device=x.device), change])
    (first,) = _nonzero(starts)
    out = [flat[first]]
    if return_inverse:
        out.append((_cumsum(starts.astype("int64")) - 1).reshape(shape_inv))
    if return_counts:
        ends = _concatenate([first[1:], _core.full((1,), n, dtype="int64", device=x.device)])
        out.append(ends - first if n else first)
    if dim is not None:
        out[0] = _moveaxis(out[0], 0, dim)
    return out[0] if len(out) == 1 else tuple(out)


# ---- statistics -----------------------------------------------------------------------------


def _moments(name, f, input, dim=None, *, unbiased=None, correction=None, keepdim=False):  # noqa: A002
    x = _arr(input, f"ember.{name}", "input")
    if unbiased is not None and correction is not None:
        raise TypeError(f"ember.{name}(): give only one of unbiased and correction")
    ddof = 1 if correction is None and unbiased is None else (
        builtins.int(builtins.bool(unbiased)) if correction is None else correction
    )  # fmt: skip
    axis = tuple(dim) if isinstance(dim, list) else dim
    v = f(x, axis=axis, ddof=ddof, keepdims=keepdim)
    return v, _core.mean(x, axis=axis, keepdims=keepdim)


def std_mean(input, dim=None, *, unbiased=None, correction=None, keepdim=False):  # noqa: A002
    """(std, mean) with PyTorch's Bessel correction by default."""
    return _moments("std_mean", _core.std, input, dim, unbiased=unbiased,
                    correction=correction, keepdim=keepdim)  # fmt: skip


def var_mean(input, dim=None, *, unbiased=None, correction=None, keepdim=False):  # noqa: A002
    """(var, mean) with PyTorch's Bessel correction by default."""
    return _moments("var_mean", _core.var, input, dim, unbiased=unbiased,
                    correction=correction, keepdim=keepdim)  # fmt: skip


class _MinMax(tuple):
    @property
    def min(self):
        return self[0]

    @property
    def max(self):
        return self[1]


def aminmax(input, *, dim=None, keepdim=False):  # noqa: A002
    """(min, max) over ``dim`` (all elements when None), as a named pair."""
    x = _arr(input, "ember.aminmax", "input")
    if x.size == 0 and dim is None:
        raise RuntimeError("ember.aminmax(): cannot compute aminmax over an empty array")
    return _MinMax(
        (_core.min(x, axis=dim, keepdims=keepdim), _core.max(x, axis=dim, keepdims=keepdim))
    )


def movedim(input, source, destination):  # noqa: A002
    """PyTorch's ``movedim``: NumPy's ``moveaxis``."""
    return _moveaxis(_arr(input, "ember.movedim", "input"), source, destination)


# ---- indexed writes -------------------------------------------------------------------------


def _index_key(x, dim, index, who):
    dim = _int(dim, who, "dim")
    nd = builtins.max(x.ndim, 1)
    if not -nd <= dim < nd:
        raise IndexError(f"{who}(): dim {dim} is out of range for {x.ndim} dimensions")
    index = _arr(index, who, "index")
    if index.dtype.kind not in "iu":
        raise TypeError(f"{who}(): index must be an integer array, got {index.dtype}")
    if index.ndim > 1:
        raise ValueError(f"{who}(): index must be 0-d or 1-d, got shape {tuple(index.shape)}")
    dim = dim % nd if x.ndim else 0
    return dim, index.reshape(-1)


def index_add_(self, dim, index, source, *, alpha=1):
    """In place: ``self[..., index[i], ...] += alpha * source[..., i, ...]`` along ``dim``;
    repeated indices accumulate."""
    who = "ember.index_add_"
    dim, index = _index_key(self, dim, index, who)
    src = _arr(source, who, "source")
    if alpha != 1:
        src = src * alpha
    if self.ndim == 0:
        _core._add_at(self.reshape(1), index, src.reshape(-1))
        return self
    _core._add_at(self, index, src.astype(self.dtype), dim)
    return self


def index_fill_(self, dim, index, value):
    """In place: the slices ``index`` along ``dim`` set to ``value``."""
    dim, index = _index_key(self, dim, index, "ember.index_fill_")
    key = (slice(None),) * dim + (index,)
    self[key] = value
    return self


def index_copy_(self, dim, index, source):
    """In place: ``self[..., index[i], ...] = source[..., i, ...]`` along ``dim``."""
    dim, index = _index_key(self, dim, index, "ember.index_copy_")
    key = (slice(None),) * dim + (index,)
    self[key] = source
    return self


def index_add(input, dim, index, source, *, alpha=1):  # noqa: A002
    return index_add_(_arr(input, "ember.index_add", "input").copy(), dim, index, source,
                      alpha=alpha)  # fmt: skip


def index_fill(input, dim, index, value):  # noqa: A002
    return index_fill_(_arr(input, "ember.index_fill", "input").copy(), dim, index, value)


def index_copy(input, dim, index, source):  # noqa: A002
    return index_copy_(_arr(input, "ember.index_copy", "input").copy(), dim, index, source)


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _segmented(vals, seg, op):
    """Inclusive scan of ``op`` over runs of equal ``seg`` (sorted), Hillis-Steele."""
    n = vals.shape[0]
    r = vals.copy()
    step = 1
    while step < n:
        same = seg[step:] == seg[: n - step]
        r[step:] = _core.where(same, op(r[step:], r[: n - step].copy()), r[step:])
        step *= 2
    return r


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """In place: PyTorch's ``scatter_reduce_``: each ``src`` element reduced (``sum``, ``prod``,
    ``mean``, ``amax``, ``amin``) into the position ``index`` gives along ``dim``."""
    who = "ember.scatter_reduce_"
    if not isinstance(reduce, str):
        raise TypeError(f"{who}(): reduce must be a string, got {type(reduce).__name__}")
    if reduce not in _REDUCES:
        raise ValueError(f"{who}(): reduce argument must be one of {_REDUCES}, got {reduce!r}")
    index = _arr(index, who, "index")
    src = _arr(src, who, "src")
    dim = _int(dim, who, "dim")
    if index.ndim != self.ndim or src.ndim != self.ndim:
        raise RuntimeError(
            f"{who}(): index and src must have as many dimensions as self ({self.ndim})"
        )
    target = self if self.flags.c_contiguous else self.copy()
    flat = target.reshape(-1)
    lin = _linear(target, dim, index).reshape(-1)
    sl = tuple(slice(0, s) for s in index.shape)
    vals = src[sl].reshape(-1).astype(self.dtype)
    if lin.shape[0]:
        order = _argsort(lin, stable=True)
        lin_s, vals_s = lin[order], vals[order]
        ops = {"sum": _core.add, "mean": _core.add, "prod": _core.multiply,
               "amax": _core.maximum, "amin": _core.minimum}  # fmt: skip
        acc = _segmented(vals_s, lin_s, ops[reduce])
        last = _concatenate(
            [lin_s[1:] != lin_s[:-1], _core.ones(1, dtype="bool", device=lin.device)]
        )
        pos, total = lin_s[last], acc[last]
        if reduce == "mean":
            ones = _core.ones(lin_s.shape, dtype="int64", device=lin.device)
            count = _segmented(ones, lin_s, _core.add)[last]
            if include_self:
                total = total + flat[pos]
                count = count + 1
            res = total / count
            res = res if self.dtype.kind in "fc" else _core.floor_divide(total, count)
            flat[pos] = res.astype(self.dtype)
        else:
            if include_self:
                total = ops[reduce](total, flat[pos])
            flat[pos] = total
    if target is not self:
        self[...] = target
    return self


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):  # noqa: A002
    return scatter_reduce_(_arr(input, "ember.scatter_reduce", "input").copy(), dim, index, src,
                           reduce, include_self=include_self)  # fmt: skip


# ---- Generator ------------------------------------------------------------------------------

_DEFAULT_SEED = 67280421310721  # PyTorch's default seed of a new Generator


def _generator_class():
    from . import random

    class Generator(random.Generator):
        """PyTorch's ``torch.Generator(device='cpu')``: an ember random generator that
        ``generator=`` arguments accept; ``manual_seed`` returns the generator itself."""

        def __init__(self, device="cpu"):
            super().__init__(_DEFAULT_SEED)
            self._initial = _DEFAULT_SEED
            from ._array import asarray

            self.device = asarray(0, device=device).device if device is not None else None

        def manual_seed(self, seed):
            seed = _int(seed, "ember.Generator.manual_seed", "seed")
            random.Generator.__init__(self, seed & (2**64 - 1))
            self._initial = seed
            return self

        def seed(self):
            import os

            s = builtins.int.from_bytes(os.urandom(8), "little") >> 1
            self.manual_seed(s)
            return s

        def initial_seed(self):
            return self._initial

        def get_state(self):
            """The state as a uint8 array (key and position, 16 bytes)."""
            st = self.state
            b = np.array([st["key"], st["position"]], dtype=np.uint64).view(np.uint8)
            return _dev(b, "cpu")

        def set_state(self, new_state):
            from ._array import asnumpy

            a = np.asarray(asnumpy(new_state), dtype=np.uint8)
            if a.shape != (16,):
                raise RuntimeError("ember.Generator.set_state(): expected a state of 16 bytes")
            key, pos = a.view(np.uint64).tolist()
            self.state = {"key": key, "position": pos}
            return self

    return Generator


Generator = None  # set by install()


# ---- methods --------------------------------------------------------------------------------


def _squeeze(core_squeeze):
    @functools.wraps(core_squeeze)
    def squeeze(self, *args, **kw):
        if "dim" in kw and not args:
            dim = kw.pop("dim")
            dims = dim if isinstance(dim, (tuple, list)) else (dim,)
            nd = builtins.max(self.ndim, 1)
            keep = []
            for d in dims:
                d = _int(d, "ember.squeeze", "dim")
                if not -nd <= d < nd:
                    raise IndexError(
                        f"ember.squeeze(): dim {d} is out of range for {self.ndim} dimensions"
                    )
                if self.ndim and self.shape[d % self.ndim] == 1:
                    keep.append(d % self.ndim)
            return core_squeeze(self, axis=tuple(keep), **kw) if keep else self.view(self.shape)
        return core_squeeze(self, *args, **kw)

    return squeeze


def _where_method(core_where):
    def where(self, condition, y=None):
        if y is None:
            raise TypeError("ember.ndarray.where(): expected (condition, other)")
        return core_where(condition, self, y)

    return where


def _unique_method(self, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """PyTorch's ``x.unique(sorted, return_inverse, return_counts, dim)`` (sorted output; the
    inverse has the input's shape, or one entry per slice along ``dim``)."""
    from ._sets import unique

    out = unique(self, return_inverse=return_inverse, return_counts=return_counts, axis=dim)
    if return_inverse and dim is None and isinstance(out, tuple):
        out = (out[0], out[1].reshape(self.shape), *out[2:])
    return out


def install(ns):
    """Adds the functions above to ember's namespace `ns`, and the methods to ndarray."""
    global Generator
    Generator = _generator_class()
    for name in __all__:
        if name not in ns:
            ns[name] = globals()[name]
            ns["__all__"].append(name)
    nd = _core.ndarray
    methods = {
        "index_add_": index_add_,
        "index_fill_": index_fill_,
        "index_copy_": index_copy_,
        "index_add": lambda self, dim, index, source, *, alpha=1: index_add(
            self, dim, index, source, alpha=alpha
        ),
        "index_fill": lambda self, dim, index, value: index_fill(self, dim, index, value),
        "index_copy": lambda self, dim, index, source: index_copy(self, dim, index, source),
        "scatter_reduce_": scatter_reduce_,
        "unique": _unique_method,
        "scatter_reduce": lambda self, dim, index, src, reduce, *, include_self=True: (
            scatter_reduce(self, dim, index, src, reduce, include_self=include_self)
        ),
        "cummax": lambda self, dim: cummax(self, dim),
        "cummin": lambda self, dim: cummin(self, dim),
        "bucketize": lambda self, boundaries, *, out_int32=False, right=False: bucketize(
            self, boundaries, out_int32=out_int32, right=right
        ),
        "histc": lambda self, bins=100, min=0, max=0: histc(self, bins, min, max),  # noqa: A002
        "aminmax": lambda self, *, dim=None, keepdim=False: aminmax(self, dim=dim, keepdim=keepdim),
        "movedim": lambda self, source, destination: movedim(self, source, destination),
        "moveaxis": lambda self, source, destination: movedim(self, source, destination),
        "amax": lambda self, dim=(), keepdim=False: _core.max(
            self, axis=None if dim == () else dim, keepdims=keepdim
        ),
        "amin": lambda self, dim=(), keepdim=False: _core.min(
            self, axis=None if dim == () else dim, keepdims=keepdim
        ),
        "allclose": lambda self, other, rtol=1e-05, atol=1e-08, equal_nan=False: ns["allclose"](
            self, other, rtol=rtol, atol=atol, equal_nan=equal_nan
        ),
        "unique_consecutive": lambda self, return_inverse=False, return_counts=False, dim=None: (
            unique_consecutive(self, return_inverse, return_counts, dim)
        ),
        "where": _where_method(ns["where"]),
        "squeeze": _squeeze(nd.squeeze),
    }
    from ._torch_methods import attach

    attach(nd, methods)
    ns["roll"] = _dims_alias(ns["roll"], {"dims": "axis", "shifts": "shift"})
    ns["flip"] = _dims_alias(ns["flip"], {"dims": "axis"})
    ns["squeeze"] = _squeeze(ns["squeeze"])


def _dims_alias(f, names):
    @functools.wraps(f)
    def wrapped(*args, **kw):
        for k, v in names.items():
            if k in kw:
                kw[v] = kw.pop(k)
        return f(*args, **kw)

    return wrapped
