"""More of PyTorch's everyday tensor API on ember's array (ember/_torch.py states the rule: the
call itself says which library's meaning is wanted; NumPy's spellings keep NumPy's meaning).

Functions: ``Tensor`` (``isinstance(x, torch.Tensor)`` and ``torch.Tensor([1, 2])``) and the
typed constructors (``FloatTensor``, ``LongTensor``, ...), ``as_tensor``, ``is_tensor``,
``is_floating_point``, ``is_complex``, ``repeat_interleave``, ``multinomial``, ``bernoulli``,
``logsumexp``, ``lerp``, ``addcmul``, ``addcdiv``, ``det``, ``logdet``, ``inverse``;
``nonzero(x, as_tuple=...)`` (PyTorch's keyword: False gives the (n, ndim) index matrix) and
``triu``/``tril`` with ``diagonal=``. Methods: ``to(dtype)`` / ``to(device, dtype)`` /
``to(other)``, ``type()``, the in-place unary ops (``abs_``, ``exp_``, ``sqrt_``, ...) and
random fills (``normal_``, ``uniform_``, ``bernoulli_``, ``exponential_``, ``random_``), and
the functions above as methods.
"""

from __future__ import annotations

import builtins
import numbers

import numpy as np

from . import _core

__all__ = [
    "BFloat16Tensor",
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "ShortTensor",
    "Tensor",
    "addcdiv",
    "addcmul",
    "as_tensor",
    "bernoulli",
    "det",
    "inverse",
    "is_complex",
    "is_floating_point",
    "is_tensor",
    "lerp",
    "logdet",
    "logsumexp",
    "multinomial",
    "repeat_interleave",
]


# ---- Tensor: the array type, and PyTorch's legacy constructors ------------------------------


class _TensorType(type):
    """``isinstance(x, Tensor)`` is ``isinstance(x, ember.ndarray)``; calling builds an array
    of the class's dtype from data (``Tensor([1, 2])``) or a shape (``Tensor(2, 3)``)."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, _core.ndarray)

    def __subclasscheck__(cls, sub):
        return isinstance(sub, type) and issubclass(sub, _core.ndarray)

    def __call__(cls, *args, device=None):
        who = f"ember.{cls.__name__}"
        dtype = cls._dtype or _default_float()
        if len(args) == 1 and not isinstance(args[0], (numbers.Integral, np.integer)):
            from ._array import asarray

            return asarray(args[0], dtype=dtype, device=device, copy=True)
        for a in args:
            if isinstance(a, builtins.bool) or not isinstance(a, (numbers.Integral, np.integer)):
                raise TypeError(f"{who}(): expected data or sizes (ints), got {a!r}")
        return _core.empty(tuple(builtins.int(a) for a in args), dtype=dtype, device=device)


def _default_float():
    from . import _torch

    return _torch._default[0]


def _tensor_class(name, dtype, doc):
    return _TensorType(name, (), {"_dtype": dtype, "__doc__": doc, "__module__": "ember"})


Tensor = _tensor_class(
    "Tensor", None, "PyTorch's ``torch.Tensor``: the array type for isinstance checks; called, "
    "an array of the default float dtype from data or sizes."
)  # fmt: skip
FloatTensor = _tensor_class("FloatTensor", "float32", "float32 arrays (data or sizes).")
DoubleTensor = _tensor_class("DoubleTensor", "float64", "float64 arrays (data or sizes).")
HalfTensor = _tensor_class("HalfTensor", "float16", "float16 arrays (data or sizes).")
BFloat16Tensor = _tensor_class("BFloat16Tensor", "bfloat16", "bfloat16 arrays.")
LongTensor = _tensor_class("LongTensor", "int64", "int64 arrays (data or sizes).")
IntTensor = _tensor_class("IntTensor", "int32", "int32 arrays (data or sizes).")
ShortTensor = _tensor_class("ShortTensor", "int16", "int16 arrays (data or sizes).")
CharTensor = _tensor_class("CharTensor", "int8", "int8 arrays (data or sizes).")
ByteTensor = _tensor_class("ByteTensor", "uint8", "uint8 arrays (data or sizes).")
BoolTensor = _tensor_class("BoolTensor", "bool", "bool arrays (data or sizes).")
_TYPE_NAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
    "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
}  # fmt: skip


def as_tensor(data, dtype=None, device=None):
    """PyTorch's ``as_tensor``: shares `data`'s memory where it can (NumPy arrays on the CPU,
    ember arrays of that dtype and device), else converts."""
    from ._array import asarray

    return asarray(data, dtype=dtype, device=device)


def is_tensor(obj):
    return isinstance(obj, _core.ndarray)


def _arr(x, who, name="input"):
    if not isinstance(x, _core.ndarray):
        raise TypeError(
            f"{who}(): argument '{name}' must be an ember array, not {type(x).__name__}"
        )
    return x


def is_floating_point(input):  # noqa: A002
    return str(_arr(input, "ember.is_floating_point").dtype) in (
        "float16", "bfloat16", "float32", "float64",
    )  # fmt: skip


def is_complex(input):  # noqa: A002
    return str(_arr(input, "ember.is_complex").dtype).startswith("complex")


# ---- functions -------------------------------------------------------------------------------


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):  # noqa: A002
    """Repeats elements (along `dim`, or of the flattened array): NumPy's ``repeat``;
    ``repeat_interleave(r)`` alone repeats ``arange(len(r))`` by the counts `r`."""
    from ._manipulation import repeat

    if repeats is None:
        r = _arr(input, "ember.repeat_interleave")
        return repeat(_core.arange(r.shape[0], dtype="int64", device=r.device), r)
    return repeat(_arr(input, "ember.repeat_interleave"), repeats, axis=dim)


def _gen(generator, who):
    from ._torch import _gen

    return _gen(generator, who)


def multinomial(input, num_samples, replacement=False, *, generator=None):  # noqa: A002
    """`num_samples` category indices per row of the non-negative weights `input` (1-d or 2-d;
    need not sum to 1), with or without replacement (int64)."""
    who = "ember.multinomial"
    w = _arr(input, who)
    if w.ndim not in (1, 2):
        raise RuntimeError(f"{who}: prob_dist must be 1 or 2 dim, got {w.ndim}-d")
    if isinstance(num_samples, builtins.bool) or not isinstance(num_samples, numbers.Integral):
        raise TypeError(f"{who}(): num_samples must be an int, got {num_samples!r}")
    if num_samples <= 0:
        raise RuntimeError(f"{who}: cannot sample n_sample <= 0 samples, got {num_samples}")
    rows = w[None] if w.ndim == 1 else w
    k = rows.shape[-1]
    if not replacement and num_samples > k:
        raise RuntimeError(
            f"{who}: cannot sample n_sample > prob_dist.size(-1) samples without replacement "
            f"({num_samples} > {k})"
        )
    w64 = rows.astype("float64")
    total = w64.sum(axis=-1)
    positive = (w64 > 0).sum(axis=-1)
    bad = _core.any(~_core.isfinite(w64)) | _core.any(w64 < 0) | _core.any(total <= 0)
    if not replacement:
        bad = bad | _core.any(positive < num_samples)
    if bool(bad):  # one host read for every check
        raise RuntimeError(
            f"{who}: invalid probability distribution: weights must be finite and >= 0 with a "
            "positive sum per row" + ("" if replacement else " and enough non-zero categories")
        )
    gen = _gen(generator, who)
    u = gen.random((rows.shape[0], num_samples if replacement else k), "float64", device=w.device)
    if replacement:  # inverse CDF: row r's normalized CDF shifted to (r, r + 1], one search
        n_rows = rows.shape[0]
        r = _core.arange(n_rows, dtype="float64", device=w.device)[:, None]
        from ._scan import cumsum
        from ._sorting import searchsorted

        cdf = (cumsum(w64, axis=-1) / total[:, None] + r).reshape(-1)
        pos = searchsorted(cdf, (u + r).reshape(-1), side="right")
        idx = pos.reshape(n_rows, num_samples) - (r * k).astype("int64")
        out = _core.minimum(idx, k - 1).astype("int64")
    else:  # Efraimidis-Spirakis: the k largest log(u) / w, zero weights never chosen
        keys = _core.where(w64 > 0, _core.log(u) / _core.where(w64 > 0, w64, 1.0), -float("inf"))
        from ._torch import topk

        out = topk(keys, num_samples, dim=-1)[1].astype("int64")
    return out[0] if w.ndim == 1 else out


def bernoulli(input, p=None, *, generator=None):  # noqa: A002
    """0/1 draws with probability `p` (default: the values of `input`), in `input`'s dtype."""
    x = _arr(input, "ember.bernoulli")
    prob = x if p is None else p
    u = _gen(generator, "ember.bernoulli").random(x.shape, "float32", device=x.device)
    return (u < prob).astype(x.dtype)


def logsumexp(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A002
    """``log(sum(exp(input), dim))`` computed stably (differentiable). PyTorch's ``dim`` /
    ``keepdim`` or SciPy's ``axis`` / ``keepdims``; no dimension: all elements. A slice of
    -inf gives -inf quietly (as PyTorch and SciPy)."""
    from ._errstate import errstate

    x = _arr(input, "ember.logsumexp")
    if axis is not None:
        if dim is not None:
            raise TypeError("ember.logsumexp: give dim or axis, not both")
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    if isinstance(dim, list):
        dim = tuple(dim)
    m = _core.max(x, axis=dim, keepdims=True)
    m = _core.where(_core.isfinite(m), m, 0.0).detach()
    with errstate(divide="ignore"):
        out = _core.log(_core.sum(_core.exp(x - m), axis=dim, keepdims=True)) + m
    if not keepdim:
        out = _core.squeeze(out, axis=dim if dim is not None else None)
    return out


def lerp(input, end, weight):  # noqa: A002
    """``input + weight * (end - input)``."""
    return input + weight * (end - input)


def addcmul(input, tensor1, tensor2, *, value=1):  # noqa: A002
    return input + value * tensor1 * tensor2


def addcdiv(input, tensor1, tensor2, *, value=1):  # noqa: A002
    return input + value * tensor1 / tensor2


def det(A):  # noqa: N803
    from . import linalg

    return linalg.det(A)


def inverse(A):  # noqa: N803
    from . import linalg

    return linalg.inv(A)


def logdet(A):  # noqa: N803
    """``log(det(A))``: NaN where the determinant is negative, -inf where it is 0."""
    from . import linalg

    sign, logabs = linalg.slogdet(A)
    return _core.where(sign < 0, float("nan"), _core.where(sign == 0, -float("inf"), logabs))


def _nonzero(f):
    def nonzero(x, /, *, as_tuple=None, out=None):
        """NumPy's ``nonzero`` (a tuple of index arrays); with PyTorch's ``as_tuple=False`` the
        (n, ndim) matrix of indices, with ``as_tuple=True`` the tuple."""
        idx = f(x)
        if as_tuple is None or as_tuple:
            return idx
        from ._joining import stack

        r = stack(list(idx), axis=1) if idx else _core.zeros((0, 0), dtype="int64")
        if out is not None:
            out[...] = r
            return out
        return r

    nonzero.__wrapped__ = f
    return nonzero


def _diagonal_kw(f):
    def g(x, /, k=0, *, diagonal=None):
        return f(x, k=k if diagonal is None else diagonal)

    g.__name__, g.__qualname__, g.__doc__ = f.__name__, f.__qualname__, f.__doc__
    g.__wrapped__ = f
    return g


# ---- methods --------------------------------------------------------------------------------


def _to(self, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None):
    """PyTorch's and ember's ``x.to(...)``: ``to(device)``, ``to(dtype)``, ``to(device, dtype)``,
    ``to(other)`` (its device and dtype), keywords too; returns `x` itself when nothing changes
    (unless ``copy=True``)."""
    from ._torch_methods import _is_dtype_like

    for a in args:
        if isinstance(a, _core.ndarray):
            device, dtype = a.device, a.dtype
        elif _is_dtype_like(a) and not (isinstance(a, str) and not _is_dtype_name(a)):
            dtype = a
        else:
            device = a
    out = self
    if device is not None and not (
        isinstance(device, (str, _core.Device)) and _same_device(device, self.device)
    ):
        out = _core_to(out, device, non_blocking=non_blocking)
    if dtype is not None and _core.dtype(dtype) != out.dtype:
        out = out.astype(dtype, copy=False)
    if memory_format is not None:
        out = out.contiguous(memory_format=memory_format)
    if copy and out is self:
        out = self.copy()
    return out


def _same_device(d, current):
    try:
        return _core.Device(d) == current
    except (TypeError, ValueError):
        return False  # the move reports the bad device


def _is_dtype_name(s):
    """A string that names a dtype (``"float16"``) rather than a device (``"cuda:0"``)."""
    try:
        _core.dtype(s)
    except (TypeError, ValueError):
        return False
    return True


def _type(self, dtype=None, non_blocking=False):
    """``x.type()``: PyTorch's type name (``"ember.FloatTensor"``, ``"ember.cuda.FloatTensor"``);
    ``x.type(dtype)``: the array in `dtype`."""
    if dtype is None:
        name = _TYPE_NAMES.get(str(self.dtype), f"{self.dtype}Tensor")
        return f"ember.cuda.{name}" if self.device.type == "cuda" else f"ember.{name}"
    if isinstance(dtype, _TensorType):
        dtype = dtype._dtype or _default_float()
    return self.astype(dtype, copy=False)


def _inplace_unary(fn):
    def f(self, *args, **kwargs):
        self[...] = fn(self, *args, **kwargs)
        return self

    return f


def _normal_(self, mean=0.0, std=1.0, *, generator=None):
    g = _gen(generator, "ember.ndarray.normal_")
    self[...] = g.normal(mean, std, self.shape, dtype=_float_of(self), device=self.device)
    return self


def _uniform_(self, a=0.0, b=1.0, *, generator=None):
    g = _gen(generator, "ember.ndarray.uniform_")
    self[...] = g.uniform(a, b, self.shape, dtype=_float_of(self), device=self.device)
    return self


def _exponential_(self, lambd=1.0, *, generator=None):
    g = _gen(generator, "ember.ndarray.exponential_")
    e = g.standard_exponential(self.shape, dtype=_float_of(self), device=self.device)
    self[...] = e / lambd
    return self


def _bernoulli_(self, p=0.5, *, generator=None):
    self[...] = bernoulli(self, p, generator=generator)
    return self


def _random_(self, from_=0, to=None, *, generator=None):
    """Integers in [from, to) (``random_(to)``: [0, to)); without `to`, [0, 2**mantissa]
    for floats and the dtype's range for integers, as PyTorch."""
    if to is None and from_ != 0:
        from_, to = 0, from_
    if to is None:
        dt = str(self.dtype)
        if dt.startswith("float") or dt == "bfloat16":
            to = 2 ** {"float16": 11, "bfloat16": 8, "float32": 24}.get(dt, 53) + 1
        elif dt == "bool":
            to = 2
        else:
            to = builtins.int(np.iinfo(dt).max) + 1
    g = _gen(generator, "ember.ndarray.random_")
    self[...] = g.integers(from_, to, self.shape, "int64", device=self.device)
    return self


def _float_of(x):
    dt = str(x.dtype)
    return dt if dt in ("float16", "bfloat16", "float32", "float64") else "float32"


_core_to = None
_UNARY_INPLACE = (
    "abs", "neg", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sin",
    "cos", "tan", "tanh", "sigmoid", "relu", "floor", "ceil", "round", "trunc", "sign",
    "reciprocal", "square", "erf", "asin", "acos", "atan", "sinh", "cosh", "frac", "logit",
)  # fmt: skip


def install(ns):
    """Adds the functions above to ember's namespace `ns`, and the methods to ndarray."""
    global _core_to
    nd = _core.ndarray
    for name in __all__:
        if name not in ns:
            ns[name] = globals()[name]
            ns["__all__"].append(name)
    ns["nonzero"] = _nonzero(ns["nonzero"])
    for name in ("triu", "tril"):
        ns[name] = _diagonal_kw(ns[name])
    _core_to = nd.to
    methods = {
        "to": _to,
        "type": _type,
        "normal_": _normal_,
        "uniform_": _uniform_,
        "exponential_": _exponential_,
        "bernoulli_": _bernoulli_,
        "random_": _random_,
        "bernoulli": lambda self, p=None, *, generator=None: bernoulli(
            self, p, generator=generator
        ),
        "multinomial": lambda self, num_samples, replacement=False, *, generator=None: multinomial(
            self, num_samples, replacement, generator=generator
        ),
        "repeat_interleave": lambda self, repeats=None, dim=None, *, output_size=None: (
            repeat_interleave(self, repeats, dim)
            if repeats is not None
            else repeat_interleave(self)
        ),
        "logsumexp": lambda self, dim, keepdim=False: logsumexp(self, dim, keepdim),
        "lerp": lambda self, end, weight: lerp(self, end, weight),
        "lerp_": _inplace_unary(lambda self, end, weight: lerp(self, end, weight)),
        "addcmul": lambda self, t1, t2, *, value=1: addcmul(self, t1, t2, value=value),
        "addcmul_": _inplace_unary(
            lambda self, t1, t2, *, value=1: addcmul(self, t1, t2, value=value)
        ),
        "addcdiv": lambda self, t1, t2, *, value=1: addcdiv(self, t1, t2, value=value),
        "addcdiv_": _inplace_unary(
            lambda self, t1, t2, *, value=1: addcdiv(self, t1, t2, value=value)
        ),
        "pow_": _inplace_unary(lambda self, e: self**e),
        "clamp_min_": _inplace_unary(lambda self, m: _core.maximum(self, m)),
        "clamp_max_": _inplace_unary(lambda self, m: _core.minimum(self, m)),
        "det": lambda self: det(self),
        "inverse": lambda self: inverse(self),
        "logdet": lambda self: logdet(self),
        "is_floating_point": lambda self: is_floating_point(self),
        "is_complex": lambda self: is_complex(self),
        "nonzero": lambda self, *, as_tuple=None: ns["nonzero"](self, as_tuple=as_tuple),
    }
    for name in _UNARY_INPLACE:
        if hasattr(nd, f"{name}_"):
            continue
        fn = getattr(nd, name, None) or ns.get(name)
        if fn is None and name in ("sigmoid", "relu", "logit"):
            from .nn import functional as F

            fn = getattr(F, name, None)
        if fn is None and name == "rsqrt":
            fn = lambda x: 1.0 / _core.sqrt(x)  # noqa: E731
        if fn is None and name == "frac":
            fn = lambda x: x - _core.trunc(x)  # noqa: E731
        if fn is not None:
            methods[f"{name}_"] = _inplace_unary(fn)
    from ._torch_methods import attach

    attach(nd, methods)
