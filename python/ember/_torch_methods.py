"""PyTorch's methods on ember's array and the installation of PyTorch's spellings (the rule of
which API a call means is in ember/_torch.py)."""

from __future__ import annotations

import builtins
import functools
import inspect
import numbers

import numpy as np

from . import _core, _memory_format
from ._torch import (
    ValuesIndices,
    _arr,
    _default,
    _finish,
    _scatter_into,
    _size_args,
    bmm,
    chunk,
    clamp,
    gather,
    index_select,
    kthvalue,
    masked_select,
    narrow,
    norm,
    scatter,
    scatter_add,
    split_sizes,
    tensor,
    topk,
    unbind,
    values_indices,
)

# ---- array methods -------------------------------------------------------------------------------


class Size(tuple):
    """PyTorch's ``torch.Size``: a tuple of ints (``x.size()``)."""

    def numel(self):
        return builtins.int(np.prod(self, dtype=np.int64))

    def __repr__(self):
        return f"ember.Size({list(self)})"


class _SizeInt(builtins.int):
    """``x.size``: NumPy's element count, which PyTorch's users call: ``x.size()`` is the shape
    (a Size), ``x.size(d)`` one dimension."""

    def __call__(self, dim=None):
        if dim is None:
            return Size(self._shape)
        return self._shape[dim]


def _size_get(self):
    s = _SizeInt(self._numel)
    s._shape = self.shape
    return s


def _to_dtype(name):
    def f(self, memory_format=None):
        return self.astype(name, copy=False)

    f.__name__ = name
    f.__doc__ = f"The array as {name} (itself when it already is), as PyTorch's ``x.{name}()``."
    return f


def _numpy(self, *, force=False):
    """PyTorch's ``x.numpy()``: the NumPy array sharing a CPU array's memory; a GPU array raises
    (copy it with ``x.cpu()`` first, or pass ``force=True``)."""
    from ._array import asnumpy

    if self.device.type != "cpu":
        if not force:
            raise TypeError(
                f"ember.ndarray.numpy: the array is on {self.device}; use x.cpu().numpy() "
                "(or ember.asnumpy(x)) to copy it to the host"
            )
        return asnumpy(self)
    return asnumpy(self)


def _view(self, *shape, dtype=None, type=None):  # noqa: A002
    if dtype is not None or (len(shape) == 1 and _is_dtype_like(shape[0])):
        return _core_view(self, dtype if dtype is not None else shape[0], type)
    if not shape:
        return _core_view(self, None, type)
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if not self.flags.c_contiguous and self.size:
        r = self.reshape(shape)
        from ._misc import shares_memory

        if not shares_memory(r, self):
            raise RuntimeError(
                "ember.ndarray.view: the array's strides do not allow this shape without a copy; "
                "use reshape()"
            )
        return r
    return self.reshape(shape)


def _is_dtype_like(v):
    if isinstance(v, (str, np.dtype, _core.dtype)):
        return True
    return isinstance(v, type) and issubclass(
        v, (np.generic, builtins.float, builtins.int, builtins.bool, builtins.complex)
    )


def _transpose(self, *axes):
    if len(axes) == 2 and all(
        isinstance(a, (numbers.Integral, np.integer)) and not isinstance(a, builtins.bool)
        for a in axes
    ):
        return self.swapaxes(builtins.int(axes[0]), builtins.int(axes[1]))
    return _core_transpose(self, *axes)


def _repeat(self, *sizes, axis=None):
    if axis is None and (
        len(sizes) >= 2
        or (len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) and len(sizes[0]) >= 2)
    ):
        if len(sizes) == 1:
            sizes = tuple(sizes[0])
        if len(sizes) < self.ndim:
            raise RuntimeError(
                f"ember.ndarray.repeat: {len(sizes)} sizes for a {self.ndim}-d array (PyTorch's "
                "repeat needs at least one per dimension)"
            )
        from ._manipulation import tile

        return tile(self, sizes)
    return _core_repeat(self, *sizes, axis=axis) if axis is not None else _core_repeat(self, *sizes)


def _numpy_repeat(self, repeats, axis=None):
    """NumPy's ``x.repeat(repeats, axis=None)``."""
    from ._manipulation import repeat

    return repeat(self, repeats, axis=axis)


def _flatten(self, *args, **kw):
    # PyTorch's flatten(start_dim, end_dim) takes ints; NumPy's flatten(order) a letter.
    torch = (
        "start_dim" in kw
        or "end_dim" in kw
        or (args and isinstance(args[0], (numbers.Integral, np.integer)))
    )
    if not torch:
        return _core_flatten(self, *args, **kw)
    start_dim = kw.get("start_dim", args[0] if args else 0)
    end_dim = kw.get("end_dim", args[1] if len(args) > 1 else -1)
    nd = self.ndim
    if nd == 0:
        return self.reshape((1,))
    s, e = start_dim % nd, end_dim % nd
    inner = builtins.int(np.prod(self.shape[s : e + 1], dtype=np.int64))
    return self.reshape(self.shape[:s] + (inner,) + self.shape[e + 1 :])


def _expand(self, *sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    lead = len(sizes) - self.ndim
    if lead < 0:
        raise RuntimeError(f"ember.ndarray.expand: {len(sizes)} sizes for a {self.ndim}-d array")
    shape = tuple(
        (self.shape[i - lead] if s == -1 else s) if i >= lead else s for i, s in enumerate(sizes)
    )
    return _core.broadcast_to(self, shape)


def _new(fill):
    def f(self, *size, dtype=None, device=None, requires_grad=False):
        shape = _size_args(size, f"ember.ndarray.new_{fill}")
        dt = dtype or self.dtype
        dev = device or self.device
        if fill == "zeros":
            a = _core.zeros(shape, dtype=dt, device=dev)
        elif fill == "ones":
            a = _core.ones(shape, dtype=dt, device=dev)
        else:
            a = _core.empty(shape, dtype=dt, device=dev)
        return _finish(a, requires_grad)

    f.__name__ = f"new_{fill}"
    return f


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return _finish(
        _core.full(
            tuple(size), fill_value, dtype=dtype or self.dtype, device=device or self.device
        ),
        requires_grad,
    )


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    return tensor(
        data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


def _inplace(op):
    def f(self, other, *, alpha=None):
        v = other if alpha is None else other * alpha
        self[...] = op(self, v)
        return self

    return f


def _fill_(self, value):
    self[...] = value
    return self


def _zero_(self):
    self[...] = 0
    return self


def _copy_(self, src, non_blocking=False):
    from ._array import asarray

    self[...] = (
        src
        if isinstance(src, _core.ndarray) and src.device == self.device
        else asarray(src, device=self.device)
    )
    return self


def _clamp_(self, min=None, max=None):  # noqa: A002
    self[...] = clamp(self, min, max)
    return self


def _tri(self, diagonal, lower):
    from ._matrices import tril, triu

    return (tril if lower else triu)(self, k=diagonal)


def _tri_(self, diagonal, lower):
    self[...] = _tri(self, diagonal, lower)
    return self


def _masked_fill(self, mask, value):
    return _core.where(mask, value, self).astype(self.dtype, copy=False)


def _masked_fill_(self, mask, value):
    self[...] = _masked_fill(self, mask, value)
    return self


def _scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    index = _arr(index, "ember.ndarray.scatter_", "index")
    return _scatter_into(self, dim, index, src if src is not None else value, reduce)


def _scatter_add_(self, dim, index, src):
    index = _arr(index, "ember.ndarray.scatter_add_", "index")
    src = _arr(src, "ember.ndarray.scatter_add_", "src")
    return _scatter_into(self, dim, index, src, "add")


def _other(x, name):
    if not isinstance(x, _core.ndarray):
        raise TypeError(
            f"ember.ndarray.{name}(): argument 'other' must be an array, not {type(x).__name__}"
        )
    return x


class RemovableHandle:
    """What ``register_hook`` returns: ``remove()`` stops the hook."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, grad):
        return None if self.fn is None else self.fn(grad)

    def remove(self):
        self.fn = None


def _register_hook(self, hook):
    """PyTorch's ``register_hook``: ``hook(grad)`` runs when this array's gradient is computed,
    before it flows on (a leaf: before it accumulates in ``.grad``); an array it returns
    replaces the gradient. Returns a handle whose ``remove()`` stops it."""
    if not callable(hook):
        raise TypeError(f"ember.ndarray.register_hook: hook must be callable, got {hook!r}")
    h = RemovableHandle(hook)
    self._register_hook(h)
    return h


def _unary_method(f):
    return lambda self: f(self)


def _binary_method(f):
    def method(self, other, *, alpha=None):
        return f(self, other if alpha is None else other * alpha)

    return method


def _permute(self, *dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    return _core_transpose(self, tuple(dims))


def _format(self, spec):
    """format(x, spec): a 0-d array formats as its value (NumPy's rule); others only with ''."""
    if self.ndim == 0:
        return format(self.item(), spec)
    if spec:
        raise TypeError(f"unsupported format string passed to ember.ndarray.__format__: {spec!r}")
    return str(self)


def attach(nd, methods):
    """Sets `methods` (name -> function) on ndarray `nd`, named as methods: lambdas and
    closures made by factories take the method's name (help and tracebacks show it)."""
    for name, fn in methods.items():
        if getattr(fn, "__name__", "<lambda>") == "<lambda>" or "<locals>" in fn.__qualname__:
            fn.__name__ = name
        fn.__qualname__ = f"ndarray.{name}"
        setattr(nd, name, fn)


def _install_methods():
    nd = _core.ndarray
    global _core_view, _core_transpose, _core_repeat, _core_flatten
    _core_view = nd.view
    _core_transpose = nd.transpose
    _core_repeat = getattr(nd, "repeat", None) or _numpy_repeat
    _core_flatten = nd.flatten
    methods = {
        "view": _view,
        "transpose": _transpose,
        "repeat": _repeat,
        "flatten": _flatten,
        "numpy": _numpy,
        "__format__": _format,
        "clone": _memory_format.clone,
        "contiguous": _memory_format.contiguous,
        "is_contiguous": _memory_format.is_contiguous,
        "unsqueeze": lambda self, dim: _core.expand_dims(self, dim),
        "permute": _permute,
        "expand": _expand,
        "expand_as": lambda self, other: _core.broadcast_to(self, _other(other, "expand_as").shape),
        "view_as": lambda self, other: _view(self, _other(other, "view_as").shape),
        "reshape_as": lambda self, other: self.reshape(_other(other, "reshape_as").shape),
        "type_as": lambda self, other: self.astype(_other(other, "type_as").dtype, copy=False),
        "new_zeros": _new("zeros"),
        "new_ones": _new("ones"),
        "new_empty": _new("empty"),
        "new_full": _new_full,
        "new_tensor": _new_tensor,
        "fill_": _fill_,
        "zero_": _zero_,
        "copy_": _copy_,
        "add_": _inplace(lambda a, b: a + b),
        "sub_": _inplace(lambda a, b: a - b),
        "mul_": _inplace(lambda a, b: a * b),
        "div_": _inplace(lambda a, b: a / b),
        "clamp": lambda self, min=None, max=None: clamp(self, min, max),  # noqa: A002
        "clamp_": _clamp_,
        "masked_fill": _masked_fill,
        "masked_fill_": _masked_fill_,
        "tril": lambda self, diagonal=0: _tri(self, diagonal, True),
        "triu": lambda self, diagonal=0: _tri(self, diagonal, False),
        "tril_": lambda self, diagonal=0: _tri_(self, diagonal, True),
        "triu_": lambda self, diagonal=0: _tri_(self, diagonal, False),
        "index_select": lambda self, dim, index: index_select(self, dim, index),
        "gather": lambda self, dim, index: gather(self, dim, index),
        "scatter": lambda self, dim, index, src=None, value=None, reduce=None: scatter(
            self, dim, index, src, value, reduce=reduce
        ),
        "scatter_": _scatter_,
        "scatter_add": lambda self, dim, index, src: scatter_add(self, dim, index, src),
        "scatter_add_": _scatter_add_,
        "chunk": lambda self, chunks, dim=0: chunk(self, chunks, dim),
        "split": lambda self, split_size, dim=0: split_sizes(self, split_size, dim),
        "unbind": lambda self, dim=0: unbind(self, dim),
        "narrow": lambda self, dim, start, length: narrow(self, dim, start, length),
        "register_hook": _register_hook,
        "numel": lambda self: builtins.int(self._numel),
        "nelement": lambda self: builtins.int(self._numel),
        "dim": lambda self: self.ndim,
        "ndimension": lambda self: self.ndim,
        "element_size": lambda self: self.itemsize,
        "topk": lambda self, k, dim=-1, largest=True, sorted=True: topk(
            self, k, dim, largest, sorted
        ),
        "kthvalue": lambda self, k, dim=-1, keepdim=False: kthvalue(self, k, dim, keepdim),
        "norm": lambda self, p="fro", dim=None, keepdim=False, dtype=None: norm(
            self, p, dim, keepdim, dtype
        ),
        "bmm": lambda self, other: bmm(self, other),
        "masked_select": lambda self, mask: masked_select(self, mask),
    }
    for name in ("float", "double", "half", "bfloat16", "long", "int", "bool", "short"):
        target = {
            "float": "float32",
            "double": "float64",
            "half": "float16",
            "long": "int64",
            "int": "int32",
            "short": "int16",
        }.get(name, name)
        methods[name] = _to_dtype(target)
    # Elementwise ops and a few more as methods, as PyTorch's tensors have them.
    from . import nn as _nn
    from ._core import elementwise_ops

    ns = _core
    for op, _ in elementwise_ops():
        if not hasattr(nd, op) and op not in methods:
            methods[op] = (
                _unary_method(getattr(ns, op)) if _ == 1 else _binary_method(getattr(ns, op))
            )
    aliases = {
        "pow": "pow", "neg": "negative", "add": "add", "sub": "subtract", "mul": "multiply",
        "div": "divide", "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
        "gt": "greater", "ge": "greater_equal", "arctan2": "atan2", "absolute": "abs",
    }  # fmt: skip
    for alias, op in aliases.items():
        if not hasattr(nd, alias):
            methods[alias] = (
                _binary_method(getattr(ns, op))
                if alias not in ("neg", "absolute")
                else _unary_method(getattr(ns, op))
            )
    methods.setdefault("mm", lambda self, other: _core.matmul(self, other))
    methods.setdefault("matmul", lambda self, other: _core.matmul(self, other))
    methods.setdefault("t", lambda self: self.swapaxes(0, 1) if self.ndim == 2 else self)
    methods.setdefault("sigmoid", lambda self: _nn.functional.sigmoid(self))
    methods.setdefault("relu", lambda self: _nn.functional.relu(self))
    methods.setdefault("softmax", lambda self, dim: _nn.functional.softmax(self, dim))
    methods.setdefault("log_softmax", lambda self, dim: _nn.functional.log_softmax(self, dim))
    attach(nd, methods)
    nd._numel = nd.size
    nd.size = property(
        _size_get, doc="NumPy's element count; callable as PyTorch's x.size() / x.size(dim)."
    )
    nd.is_cuda = property(
        lambda self: self.device.type == "cuda", doc="Whether the array is on a CUDA device."
    )
    nd.data = property(
        lambda self: self.detach(),
        doc="PyTorch's .data: the array without its gradient history (shares memory).",
    )


_core_view = _core_transpose = _core_repeat = _core_flatten = None


# ---- installation --------------------------------------------------------------------------------

_TORCH_SORT_KEYS = ("dim",)  # descending= and stable= are ember's and NumPy 2's too


def _dim_alias(f):
    """`f` also taking PyTorch's dim= and keepdim=."""

    @functools.wraps(f)
    def wrapped(*args, **kw):
        if "dim" in kw:
            kw["axis"] = kw.pop("dim")
        if "keepdim" in kw:
            kw["keepdims"] = kw.pop("keepdim")
        return f(*args, **kw)

    return wrapped


def _torch_sort(f_sort, f_argsort):
    @functools.wraps(f_sort)
    def sort(x, *args, **kw):
        if not builtins.any(k in kw for k in _TORCH_SORT_KEYS):
            return f_sort(x, *args, **kw)
        dim = kw.pop("dim", -1 if not args else args[0])
        descending = kw.pop("descending", False)
        kw.pop("stable", None)
        kw.pop("kind", None)
        from ._indexing import take_along_axis

        idx = f_argsort(x, axis=dim, descending=descending)
        return ValuesIndices(take_along_axis(x, idx, axis=dim), idx)

    return sort


def _torch_median(f):
    @functools.wraps(f)
    def median(x, *args, **kw):
        if "dim" not in kw:
            return f(x, *args, **kw)
        return values_indices("median", x, kw.pop("dim"), kw.pop("keepdim", False))

    return median


def _torch_split(f):
    @functools.wraps(f)
    def split(x, indices_or_sections, *args, **kw):
        if "dim" in kw:
            return split_sizes(x, indices_or_sections, kw.pop("dim"))
        return f(x, indices_or_sections, *args, **kw)

    return split


def _creation(f, who):
    """zeros/ones/empty also taking PyTorch's forms: zeros(2, 3) and zeros(size=(2, 3)), which
    give the default float dtype (float32) unless dtype= says otherwise."""

    @functools.wraps(f)
    def make(*args, **kw):
        if "size" in kw or (
            len(args) >= 2 and builtins.all(
                isinstance(a, (numbers.Integral, np.integer)) and not isinstance(a, builtins.bool)
                for a in args
            )
        ):  # fmt: skip
            shape = _size_args(args or (kw.pop("size"),), who)
            kw.setdefault("dtype", _default[0])
            rg = kw.pop("requires_grad", False)
            kw.pop("pin_memory", None)
            kw.pop("layout", None)
            return _finish(f(shape, **kw), rg)
        return f(*args, **kw)

    return make


def install(ns):
    """Adds PyTorch's spellings to ember's namespace `ns` and to ndarray's methods."""
    import types

    _install_methods()
    for name in list(ns["__all__"]):
        f = ns.get(name)
        if type(f) is not types.FunctionType:
            continue
        try:
            params = inspect.signature(f).parameters
        except (TypeError, ValueError):
            continue
        if ("axis" in params or "keepdims" in params) and "dim" not in params:
            ns[name] = _dim_alias(f)
    ns["sort"] = _torch_sort(ns["sort"], ns["argsort"])
    ns["median"] = _torch_median(ns["median"])
    ns["split"] = _torch_split(ns["split"])
    for name in ("zeros", "ones", "empty"):
        ns[name] = _creation(ns[name], f"ember.{name}")
    # PyTorch's names of NumPy's functions (where NumPy has none of that name)
    from . import nn as _nn

    torch_names = {
        "mul": "multiply", "sub": "subtract", "div": "divide", "neg": "negative",
        "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
        "ge": "greater_equal", "mm": "matmul",
    }  # fmt: skip
    from ._calls import alias

    for torch_name, name in torch_names.items():
        if torch_name not in ns:
            f = ns[name]
            ns[torch_name] = (
                alias(f, torch_name)
                if hasattr(f, "__wrapped__") and isinstance(f, _core.builtin_function)
                else f
            )
            ns["__all__"].append(torch_name)
    for name in ("sigmoid", "relu", "softmax", "log_softmax"):
        if name not in ns:
            ns[name] = getattr(_nn.functional, name)
            ns["__all__"].append(name)
    if "t" not in ns:
        from ._torch import t

        ns["t"] = t
        ns["__all__"].append("t")
    nd = _core.ndarray
    for name, v in list(vars(nd).items()):
        if type(v) is types.FunctionType and not name.startswith("_"):
            try:
                params = inspect.signature(v).parameters
            except (TypeError, ValueError):
                continue
            if ("axis" in params or "keepdims" in params) and "dim" not in params:
                setattr(nd, name, _dim_alias(v))
    nd.sort = _torch_sort(nd.sort, ns["argsort"])
