"""PyTorch's tensor API on ember's one array type.

ember's array serves NumPy's users and PyTorch's. Where the two APIs differ, the call itself
says which is meant:

- ``dim=`` / ``keepdim=`` are PyTorch's names of ``axis=`` / ``keepdims=`` and work wherever
  those do; with ``dim=``, ``max``/``min``/``median``/``sort`` return PyTorch's
  ``(values, indices)`` and ``var``/``std`` PyTorch's unbiased estimate (``axis=``: NumPy's).
- ``x.size`` is NumPy's element count and is also callable: ``x.size()`` is the shape,
  ``x.size(0)`` one dimension.
- ``x.view(2, 3)`` / ``x.view((2, 3))`` reshape as a view (PyTorch); ``x.view(dtype)``
  reinterprets the bytes (NumPy).
- ``x.transpose(a, b)`` with two axes swaps them (PyTorch); other forms are NumPy's.
- ``x.repeat(2, 3)`` (two or more sizes) tiles (PyTorch); ``x.repeat(n[, axis])`` is NumPy's.
- ``x.flatten()`` is NumPy's copy; ``x.flatten(start_dim, end_dim)`` PyTorch's.
- ``ember.split(x, n, dim=d)`` splits into pieces of size n (PyTorch); without ``dim=`` into n
  sections (NumPy). ``x.split(n)`` (NumPy arrays have no such method) is PyTorch's.
- Default float dtype: PyTorch-only spellings (``tensor(1.5)``, ``randn``, ``rand``,
  ``zeros(2, 3)`` with the shape as separate arguments, ``size=``) give PyTorch's default float
  dtype (float32, :func:`set_default_dtype`); NumPy's spellings keep NumPy's float64.
"""

from __future__ import annotations

import builtins
import collections
import functools
import numbers

import numpy as np

from . import _core

__all__ = [
    "flatten",
    "get_float32_matmul_precision",
    "set_float32_matmul_precision",
    "rand_like",
    "randn_like",
    "randint_like",
    "addmm",
    "baddbmm",
    "bmm",
    "cat",
    "cdist",
    "chunk",
    "clamp",
    "dist",
    "from_numpy",
    "gather",
    "get_default_dtype",
    "index_select",
    "inference_mode",
    "kthvalue",
    "manual_seed",
    "masked_select",
    "norm",
    "rand",
    "randint",
    "randn",
    "randperm",
    "scatter",
    "scatter_add",
    "set_default_dtype",
    "tensor",
    "topk",
    "unbind",
    "narrow",
    "numel",
]

# The default float dtype of PyTorch's spellings, by name: no dtype object is held here (the
# functions of this module are reachable from ndarray's methods, which live until nanobind's
# teardown, and nanobind reports instances still alive then).
_default = ["float32"]

ValuesIndices = collections.namedtuple("ValuesIndices", ["values", "indices"])


def set_default_dtype(d):
    """PyTorch's ``set_default_dtype``: the float dtype of PyTorch-only spellings (``tensor(1.5)``,
    ``randn``, ``zeros(2, 3)``): float32 (the default), float64 or float16/bfloat16."""
    d = _core.dtype(d)
    if d.kind != "f" and d.name != "bfloat16":
        raise TypeError(f"ember.set_default_dtype: only floating dtypes, got {d}")
    _default[0] = d.name


def get_default_dtype():
    """The float dtype of PyTorch-only spellings (float32 unless set)."""
    return _core.dtype(_default[0])


def _arr(x, who, what="input"):
    """`x` as an ember array (array-likes converted), or TypeError naming the argument."""
    if isinstance(x, _core.ndarray):
        return x
    if x is None or isinstance(x, (str, bytes, dict, set)):
        raise TypeError(f"{who}(): argument '{what}' must be an array, not {type(x).__name__}")
    from ._array import asarray

    return asarray(x)


def _int(v, who, what):
    if isinstance(v, builtins.bool) or not isinstance(v, (numbers.Integral, np.integer)):
        raise TypeError(f"{who}(): argument '{what}' must be an int, not {type(v).__name__}")
    return builtins.int(v)


def _gen(generator, who):
    from . import random

    if generator is None:
        return random._global
    if not isinstance(generator, random.Generator):
        raise TypeError(
            f"{who}(): generator must be an ember.random.Generator, not {type(generator).__name__}"
        )
    return generator


def _complex_default():
    return "complex128" if _default[0] == "float64" else "complex64"


# ---- creation ------------------------------------------------------------------------------------


def _has_python_float(data):
    if isinstance(data, builtins.float):
        return True
    if isinstance(data, (list, tuple)):
        return builtins.any(_has_python_float(x) for x in data)
    return False


def _has_python_complex(data):
    if isinstance(data, builtins.complex):
        return True
    if isinstance(data, (list, tuple)):
        return builtins.any(_has_python_complex(x) for x in data)
    return False


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """PyTorch's ``tensor``: always a copy; Python floats give the default float dtype
    (float32), Python ints int64, bools bool; NumPy and ember data keep their dtype."""
    from ._array import asarray

    if dtype is None and not isinstance(data, (_core.ndarray, np.ndarray, np.generic)):
        if _has_python_complex(data):
            dtype = _complex_default()
        elif _has_python_float(data):
            dtype = _default[0]
    a = asarray(data, dtype=dtype, device=device, copy=True)
    if requires_grad:
        a.requires_grad_()
    return a


def from_numpy(a):
    """A CPU array sharing `a`'s memory (PyTorch's ``from_numpy``)."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"ember.from_numpy: expected np.ndarray (got {type(a).__name__})")
    from ._array import asarray

    return asarray(a, device="cpu")


def _size_args(size, who):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if isinstance(s, builtins.bool) or not isinstance(s, (numbers.Integral, np.integer)):
            raise TypeError(f"{who}(): size must be ints, got {s!r}")
    return tuple(builtins.int(s) for s in size)


def _finish(a, requires_grad):
    if requires_grad:
        a.requires_grad_()
    return a


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None):
    """PyTorch's ``randn``: standard normal samples, the default float dtype."""
    gen = _gen(generator, "ember.randn")
    shape = _size_args(size, "ember.randn")
    a = gen.standard_normal(shape, dtype or _default[0], device=device)
    return _finish(a, requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None):
    """PyTorch's ``rand``: uniform on [0, 1), the default float dtype."""
    gen = _gen(generator, "ember.rand")
    a = gen.random(_size_args(size, "ember.rand"), dtype or _default[0], device=device)
    return _finish(a, requires_grad)


def randint(*args, size=None, dtype=None, device=None, generator=None, requires_grad=False):
    """PyTorch's ``randint(high, size)`` / ``randint(low, high, size)``: int64 by default."""
    if size is None:
        if not args or not isinstance(args[-1], (tuple, list)):
            raise TypeError("ember.randint(): missing the size (a tuple): randint(low, high, size)")
        size, args = args[-1], args[:-1]
    if len(args) == 1:
        low, high = 0, args[0]
    elif len(args) == 2:
        low, high = args
    else:
        raise TypeError("ember.randint(): expected randint(high, size) or randint(low, high, size)")
    gen = _gen(generator, "ember.randint")
    return gen.integers(
        low, high, _size_args((size,), "ember.randint"), dtype or "int64", device=device
    )


def rand_like(input, dtype=None, device=None, requires_grad=False):  # noqa: A002
    """Uniform [0, 1) samples of `input`'s shape (its dtype when floating, else float32)."""
    input = _arr(input, "ember.rand_like")
    dt = dtype or (input.dtype if input.dtype.kind == "f" else _default[0])
    return _finish(rand(*input.shape, dtype=dt, device=device or input.device), requires_grad)


def randn_like(input, dtype=None, device=None, requires_grad=False):  # noqa: A002
    """Standard normal samples of `input`'s shape."""
    input = _arr(input, "ember.randn_like")
    dt = dtype or (input.dtype if input.dtype.kind == "f" else _default[0])
    return _finish(randn(*input.shape, dtype=dt, device=device or input.device), requires_grad)


def randint_like(input, low=0, high=None, dtype=None, device=None, requires_grad=False):  # noqa: A002
    """Random integers in [low, high) of `input`'s shape (``randint_like(x, high)`` too)."""
    input = _arr(input, "ember.randint_like")
    if high is None:
        low, high = 0, low
    dt = _core.dtype(dtype or input.dtype)
    r = randint(low, high, tuple(input.shape), device=device or input.device)
    # a floating (or bool) dtype: integer values in that dtype, as PyTorch's
    return r if dt == r.dtype else r.astype(dt)


def randperm(n, dtype=None, device=None, generator=None, requires_grad=False):
    """A random permutation of 0..n-1 (int64)."""
    gen = _gen(generator, "ember.randperm")
    p = gen.permutation(_int(n, "ember.randperm", "n"))
    if device is not None:
        p = p.to(device)
    return p.astype(dtype or "int64", copy=False)


def manual_seed(seed):
    """Seeds ember's global random generator (for every device), as ``torch.manual_seed``."""
    from . import _torch_extra, random

    # the global generator becomes a torch-style Generator (same stream as random.seed(seed)
    # for seeds in [0, 2**64)), so the returned object has initial_seed/get_state as PyTorch's
    g = _torch_extra.Generator()
    g.manual_seed(seed)
    random._global = g
    return g


class inference_mode:  # noqa: N801 (torch spelling)
    """PyTorch's ``inference_mode``: no gradients recorded inside (a context manager or a
    decorator); ``inference_mode(False)`` changes nothing."""

    def __init__(self, mode=True):
        self.mode = builtins.bool(mode)

    def __enter__(self):
        from .autograd import no_grad

        self._ctx = no_grad() if self.mode else None
        if self._ctx is not None:
            self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        if self._ctx is not None:
            self._ctx.__exit__(*exc)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*a, **k):
            with inference_mode(self.mode):
                return fn(*a, **k)

        return wrapped


# ---- joining, selecting, scattering --------------------------------------------------------------


def cat(tensors, dim=0, *, axis=None, out=None):
    """PyTorch's ``cat``: ``concatenate`` along `dim`."""
    from ._joining import concatenate

    return concatenate(tensors, axis=dim if axis is None else axis, out=out)


def chunk(input, chunks, dim=0):  # noqa: A002
    """At most `chunks` views of `input` along `dim`, each ceil(n / chunks) long."""
    input = _arr(input, "ember.chunk")
    chunks = _int(chunks, "ember.chunk", "chunks")
    n = input.shape[dim]
    if chunks <= 0:
        raise ValueError(f"ember.chunk: chunks must be positive, got {chunks}")
    step = -(-n // chunks) if n else 1
    return tuple(narrow(input, dim, s, builtins.min(step, n - s)) for s in range(0, n, step)) or (
        input,
    )


def split_sizes(input, size, dim=0):  # noqa: A002
    """PyTorch's ``split``: pieces of `size` (an int) or of the listed sizes along `dim`."""
    input = _arr(input, "ember.split", "input")
    dim = _int(dim, "ember.split", "dim")
    n = input.shape[dim]
    if isinstance(size, (numbers.Integral, np.integer)):
        size = builtins.int(size)
        if size <= 0:
            raise ValueError(f"ember.split: split_size must be positive, got {size}")
        sizes = [builtins.min(size, n - s) for s in range(0, n, size)] or [0]
    else:
        sizes = [builtins.int(s) for s in size]
        if builtins.sum(sizes) != n:
            raise ValueError(f"ember.split: sizes {sizes} do not add up to {n} along dim {dim}")
    out, at = [], 0
    for s in sizes:
        out.append(narrow(input, dim, at, s))
        at += s
    return tuple(out)


def narrow(input, dim, start, length):  # noqa: A002
    """The view of `length` elements of `input` from `start` along `dim`."""
    input = _arr(input, "ember.narrow")
    dim, start, length = (
        _int(v, "ember.narrow", n) for v, n in ((dim, "dim"), (start, "start"), (length, "length"))
    )
    dim = dim % input.ndim if input.ndim else 0
    n = input.shape[dim]
    if start < 0:
        start += n
    if not 0 <= start <= n or length < 0 or start + length > n:
        raise IndexError(f"ember.narrow: start {start} and length {length} exceed dim of size {n}")
    idx = [slice(None)] * input.ndim
    idx[dim] = slice(start, start + length)
    return input[tuple(idx)]


def unbind(input, dim=0):  # noqa: A002
    """The slices of `input` along `dim`, as a tuple."""
    input = _arr(input, "ember.unbind")
    dim = _int(dim, "ember.unbind", "dim")
    if input.ndim == 0:
        raise ValueError("ember.unbind: a 0-d array has no dimension to unbind")
    dim = dim % input.ndim
    idx = [slice(None)] * input.ndim
    out = []
    for i in range(input.shape[dim]):
        idx[dim] = i
        out.append(input[tuple(idx)])
    return tuple(out)


def t(input):  # noqa: A002
    """The transpose of a 2-d array (0-d and 1-d arrays as they are), as PyTorch's ``t``."""
    input = _arr(input, "ember.t")
    if input.ndim > 2:
        raise ValueError(f"ember.t: expects an array of at most 2 dimensions, got {input.ndim}")
    return input.swapaxes(0, 1) if input.ndim == 2 else input


def set_float32_matmul_precision(precision):
    """PyTorch's switch: "highest" keeps float32 products in GPU matmuls; "high" and "medium"
    let cuBLAS use TF32 tensor cores (ember.set_matmul_precision)."""
    from . import _linalg

    if precision not in ("highest", "high", "medium"):
        raise ValueError(
            "ember.set_float32_matmul_precision: precision must be 'highest', 'high' or "
            f"'medium', got {precision!r}"
        )
    _linalg.set_matmul_precision("highest" if precision == "highest" else "high")


def get_float32_matmul_precision():
    from . import _linalg

    return _linalg.get_matmul_precision()


def flatten(input, start_dim=0, end_dim=-1):  # noqa: A002
    """PyTorch's ``flatten``: dimensions `start_dim` .. `end_dim` merged into one (a view when
    the strides allow)."""
    input = _arr(input, "ember.flatten")
    return input.flatten(start_dim, end_dim) if input.ndim else input.reshape((1,))


def numel(input):  # noqa: A002
    """The number of elements of `input`."""
    input = _arr(input, "ember.numel")
    return builtins.int(np.prod(input.shape, dtype=np.int64))


def index_select(input, dim, index):  # noqa: A002
    """The elements of `input` at `index` (1-d integers) along `dim`."""
    input = _arr(input, "ember.index_select", "input")
    index = _arr(index, "ember.index_select", "index")
    dim = _int(dim, "ember.index_select", "dim")
    from ._core import take

    return take(input, index, axis=dim)


def masked_select(input, mask):  # noqa: A002
    """The elements of `input` where `mask` (broadcast) is true, as a 1-d array."""
    input = _arr(input, "ember.masked_select", "input")
    mask = _arr(mask, "ember.masked_select", "mask")
    b = _core.broadcast_to(input, np.broadcast_shapes(input.shape, mask.shape))
    return b[_core.broadcast_to(mask, b.shape)]


def _linear(input, dim, index):
    """Flat indices into C-contiguous `input` of index[..] along `dim` at index's positions."""
    arange = _core.arange
    nd = input.ndim
    dim %= nd
    strides = [builtins.int(np.prod(input.shape[k + 1 :], dtype=np.int64)) for k in range(nd)]
    lin = index.astype("int64") * strides[dim]
    for k in range(nd):
        if k == dim:
            continue
        shape = [1] * nd
        shape[k] = index.shape[k]
        lin = (
            lin
            + arange(index.shape[k], dtype="int64", device=index.device).reshape(shape) * strides[k]
        )
    return lin


def gather(input, dim, index, *, sparse_grad=False, out=None):  # noqa: A002
    """PyTorch's ``gather``: ``out[i][j] = input[index[i][j]][j]`` (dim 0), and so on."""
    input = _arr(input, "ember.gather", "input")
    index = _arr(index, "ember.gather", "index")
    dim = _int(dim, "ember.gather", "dim")
    from ._core import take

    src = input if input.flags.c_contiguous else input.copy()
    return take(src.reshape((-1,)), _linear(src, dim, index).reshape((-1,))).reshape(index.shape)


def scatter(input, dim, index, src=None, value=None, *, reduce=None):  # noqa: A002
    """PyTorch's out-of-place ``scatter``: a copy of `input` with
    ``out[index[i][j]][j] = src[i][j]`` (dim 0); `src` may be a number (``value``)."""
    input = _arr(input, "ember.scatter", "input")
    index = _arr(index, "ember.scatter", "index")
    dim = _int(dim, "ember.scatter", "dim")
    out = input.copy()
    return _scatter_into(out, dim, index, src if src is not None else value, reduce)


def scatter_add(input, dim, index, src):  # noqa: A002
    """Out-of-place ``scatter_add``: repeated indices accumulate."""
    input = _arr(input, "ember.scatter_add", "input")
    index = _arr(index, "ember.scatter_add", "index")
    dim = _int(dim, "ember.scatter_add", "dim")
    out = input.copy()
    return _scatter_into(out, dim, index, src, "add")


def _scatter_into(x, dim, index, src, reduce=None):
    from ._indexing import put

    target = x if x.flags.c_contiguous else x.copy()
    lin = _linear(target, dim, index).reshape((-1,))
    if isinstance(src, _core.ndarray):
        sl = tuple(slice(0, s) for s in index.shape)
        vals = src[sl].reshape((-1,))
    else:
        vals = src
    flat = target.reshape((-1,))
    if reduce in ("add", "sum"):
        _core._add_at(flat, lin, vals)
    elif reduce is None:
        put(flat, lin, vals)
    else:
        raise ValueError(f"ember.scatter: reduce must be None or 'add', got {reduce!r}")
    if target is not x:
        x[...] = target
    return x


# ---- ordering ------------------------------------------------------------------------------------


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):  # noqa: A002
    """The `k` largest (or smallest) elements along `dim` and their indices."""
    input = _arr(input, "ember.topk", "input")
    dim = _int(dim, "ember.topk", "dim")
    k = _int(k, "ember.topk", "k")
    from ._indexing import take_along_axis
    from ._manipulation import moveaxis
    from ._sorting import argsort
    from ._topk_gpu import topk_indices, usable

    if input.ndim and usable(input, k, input.shape[dim]):
        # small k on the GPU: a selection kernel, not a sort (ties: lower index first)
        idx = moveaxis(topk_indices(moveaxis(input, dim, -1), k, largest), -1, dim)
        return ValuesIndices(take_along_axis(input, idx, axis=dim), idx)
    order = argsort(input, axis=dim, descending=builtins.bool(largest))
    # a copy, not a view: a view would keep the whole argsort result alive (n x 8 bytes a row)
    idx = narrow(order, dim, 0, k).copy()
    del order

    return ValuesIndices(take_along_axis(input, idx, axis=dim), idx)


def kthvalue(input, k, dim=-1, keepdim=False):  # noqa: A002
    """The k-th smallest element (1-based) along `dim` and its index."""
    input = _arr(input, "ember.kthvalue", "input")
    dim = _int(dim, "ember.kthvalue", "dim")
    k = _int(k, "ember.kthvalue", "k")
    from ._indexing import take_along_axis
    from ._sorting import argsort

    order = argsort(input, axis=dim, kind="stable")
    idx = narrow(order, dim, k - 1, 1).copy()  # not a view that keeps `order` alive
    vals = take_along_axis(input, idx, axis=dim)
    if not keepdim:
        vals, idx = vals.squeeze(dim), idx.squeeze(dim)
    return ValuesIndices(vals, idx)


# ---- products and norms --------------------------------------------------------------------------


def bmm(input, mat2, *, out=None):  # noqa: A002
    """Batched matrix product of two 3-d arrays."""
    input = _arr(input, "ember.bmm", "input")
    mat2 = _arr(mat2, "ember.bmm", "mat2")
    if input.ndim != 3 or mat2.ndim != 3:
        raise ValueError(
            f"ember.bmm: batch1 and batch2 must be 3-d, got {input.ndim}-d and {mat2.ndim}-d"
        )
    return _core.matmul(input, mat2, out=out) if out is not None else _core.matmul(input, mat2)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):  # noqa: A002
    """``beta * input + alpha * (batch1 @ batch2)``."""
    return beta * input + alpha * bmm(batch1, batch2)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):  # noqa: A002
    """``beta * input + alpha * (mat1 @ mat2)``."""
    return beta * input + alpha * _core.matmul(mat1, mat2)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):  # noqa: A002
    """PyTorch's ``norm``: the vector p-norm of all elements (dim None) or along `dim`."""
    input = _arr(input, "ember.norm", "input")
    from . import linalg

    x = input if dtype is None else input.astype(dtype)
    if p == "fro":
        p = 2
    if p == "nuc":
        return linalg.matrix_norm(x, ord="nuc", keepdims=keepdim)
    return linalg.vector_norm(x, ord=p, axis=dim, keepdims=keepdim)


def dist(input, other, p=2):  # noqa: A002
    """The p-norm of ``input - other``."""
    input = _arr(input, "ember.dist", "input")
    other = _arr(other, "ember.dist", "other")
    return norm(input - other, p)


def cdist(x1, x2, p=2.0, compute_mode=None):
    """Pairwise p-norm distances between the rows of `x1` (..., P, M) and `x2` (..., R, M)."""
    x1 = _arr(x1, "ember.cdist", "x1")
    x2 = _arr(x2, "ember.cdist", "x2")
    d = x1[..., :, None, :] - x2[..., None, :, :]
    from . import linalg

    return linalg.vector_norm(d, ord=p, axis=-1)


def clamp(input, min=None, max=None, *, out=None):  # noqa: A002
    """PyTorch's ``clamp``: ``clip`` with keyword bounds."""
    from ._math import clip

    return clip(input, min, max, out=out)


# ---- torch-spelled reductions (reached with dim=) ------------------------------------------------


def values_indices(kind, x, dim, keepdim):
    """max/min/median with dim=: PyTorch's (values, indices)."""
    from ._indexing import take_along_axis

    if kind in ("max", "min"):
        arg = _core.argmax if kind == "max" else _core.argmin
        idx = arg(x, axis=dim, keepdims=True)
    else:  # median: the lower of the two middle values, as PyTorch's
        from ._sorting import argsort

        n = x.shape[dim]
        order = argsort(x, axis=dim, kind="stable")
        idx = narrow(order, dim, (n - 1) // 2, 1).copy()
    vals = take_along_axis(x, idx, axis=dim)
    if not keepdim:
        vals, idx = vals.squeeze(dim), idx.squeeze(dim)
    return ValuesIndices(vals, idx)


def torch_reduction(w, name, is_method, args, kwargs):
    """A reduction called PyTorch's way: max/min with dim= return (values, indices); var/std
    with dim=, unbiased= or correction= use PyTorch's unbiased default (ddof 1)."""
    kw = dict(kwargs)
    x = args[0]
    rest = args[1:]
    dim = kw.pop("dim", None)
    keepdim = kw.pop("keepdim", False)
    if name in ("max", "min"):
        if rest or kw:
            raise TypeError(f"ember.{name}(): with dim=, only keepdim= may follow")
        if dim is None:
            return w(x)
        return values_indices(name, x, dim, keepdim)
    unbiased = kw.pop("unbiased", True)
    correction = kw.pop("correction", None)
    ddof = correction if correction is not None else (1 if unbiased else 0)
    if "axis" in kw:
        dim = kw.pop("axis")
    return w(x, *rest, axis=dim, ddof=ddof, keepdims=keepdim, **kw)
