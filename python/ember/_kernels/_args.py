"""The parameters and arguments of generated user kernels (ElementwiseKernel, ReductionKernel):
parsing CuPy's parameter lists, checking a call's arguments and resolving its type placeholders
(once, for both kernel kinds), and packing the values the generated kernel takes."""

import re

import numpy as np

from .. import _core

_k = _core._kernels
_c = _core._cuda


def _require_cuda(who):
    if not _c.is_available():
        raise ValueError(
            f"{who}: custom CUDA kernels need a CUDA device, and CUDA is not available: "
            f"{_c.unavailable_reason()}"
        )


def _options(options, who):
    if isinstance(options, str):
        options = (options,)
    if not isinstance(options, (tuple, list)) or not all(isinstance(o, str) for o in options):
        raise TypeError(f"{who}: options must be a tuple of strings, got {options!r}")
    return tuple(options)


# C types of the dtypes, as CuPy names them.
_CTYPES = {
    "bool": "bool",
    "int8": "signed char",
    "uint8": "unsigned char",
    "int16": "short",
    "uint16": "unsigned short",
    "int32": "int",
    "uint32": "unsigned int",
    "int64": "long long",
    "uint64": "unsigned long long",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "float32": "float",
    "float64": "double",
    "complex64": "complex<float>",
    "complex128": "complex<double>",
}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _dtype_name(t):
    """The ember dtype name of a dtype spec (ember dtype, NumPy dtype or type, or str)."""
    try:
        return _core.dtype(t).name
    except (TypeError, ValueError):
        return None


def _scalar_dtype_name(x):
    if isinstance(x, (bool, np.bool_)):
        return "bool"
    if isinstance(x, np.generic):
        return _dtype_name(x.dtype)
    if isinstance(x, int):
        return "int64"
    if isinstance(x, float):
        return "float64"
    if isinstance(x, complex):
        return "complex128"
    return None


def _numpy_scalar(value, dtype_name, who, pname):
    """`value` as a NumPy scalar of dtype_name (bfloat16 as its uint16 bits)."""
    try:
        if dtype_name == "bfloat16":
            import ml_dtypes

            return np.array(value, dtype=ml_dtypes.bfloat16).view(np.uint16)[()]
        return np.dtype(dtype_name).type(value)
    except (TypeError, ValueError, OverflowError) as e:
        raise TypeError(
            f"{who}: argument {pname!r} ({value!r}) cannot be a {dtype_name}: {e}"
        ) from None


class _Param:
    __slots__ = ("name", "ctype", "dtype", "raw", "placeholder")

    def __init__(self, text, who):
        words = text.split()
        if len(words) < 2:
            raise ValueError(f"{who}: bad parameter {text!r} (expected '[raw] TYPE NAME')")
        t, self.name = words[-2], words[-1]
        self.raw = False
        for w in words[:-2]:
            if w == "raw":
                self.raw = True
            else:
                raise ValueError(f"{who}: unknown keyword {w!r} in parameter {text!r}")
        if not _IDENT.match(self.name) or not _IDENT.match(t):
            raise ValueError(f"{who}: bad parameter {text!r}")
        if len(t) == 1:  # a type placeholder, as in CuPy
            self.placeholder, self.dtype, self.ctype = t, None, t
        else:
            if t not in _CTYPES:
                raise ValueError(f"{who}: unknown type {t!r} in parameter {text!r}")
            self.placeholder, self.dtype, self.ctype = None, t, _CTYPES[t]


def _parse_params(text, who):
    if not isinstance(text, str):
        raise TypeError(f"{who}: parameters must be a str, got {type(text).__name__}")
    params = [_Param(p, who) for p in text.split(",") if p.strip()]
    return params


def _check_names(ins, outs, who):
    seen = set()
    for p in ins + outs:
        if p.name in seen:
            raise ValueError(f"{who}: parameter name {p.name!r} is used twice")
        seen.add(p.name)


def _check_texts(kind, name, **texts):
    """The error prefix of a kernel `kind` named `name`, after checking that the name is a C
    identifier and every code fragment a str."""
    if not isinstance(name, str) or not _IDENT.match(name):
        raise ValueError(f"{kind}: name must be a C identifier, got {name!r}")
    who = f"{kind} {name!r}"
    for what, v in texts.items():
        if not isinstance(v, str):
            raise TypeError(f"{who}: {what} must be a str, got {type(v).__name__}")
    return who


def _is_array(x):
    return isinstance(x, _core.ndarray)


def _resolve_types(params, args, who):
    """Placeholder -> dtype name, from the arrays first, then NumPy scalars, then Python scalars."""
    types = {}
    for rank in (0, 1, 2):
        for p, a in zip(params, args, strict=True):
            if p.placeholder is None or a is None:
                continue
            if rank == 0 and _is_array(a):
                t = a.dtype.name
            elif rank == 1 and isinstance(a, np.generic) and not _is_array(a):
                t = _scalar_dtype_name(a)
            elif rank == 2 and not _is_array(a) and not isinstance(a, np.generic):
                t = _scalar_dtype_name(a)
            else:
                continue
            if t is None:
                continue
            prev = types.get(p.placeholder)
            if prev is None:
                types[p.placeholder] = t
            elif prev != t and rank == 0:
                raise TypeError(
                    f"{who}: type placeholder {p.placeholder} is {prev} from an earlier argument "
                    f"but argument {p.name!r} is {t}"
                )
    return types


def _check_arg_kinds(params, args, nin, who):
    for k, (p, a) in enumerate(zip(params, args, strict=True)):
        if a is None or _is_array(a):
            continue
        if isinstance(a, np.ndarray):
            raise TypeError(
                f"{who}: argument {p.name!r} is a NumPy array; pass an ember array "
                "(ember.asarray(x, device='cuda'))"
            )
        if p.raw or k >= nin:
            raise TypeError(
                f"{who}: argument {p.name!r} must be an ember array, got {type(a).__name__}"
            )
        if _scalar_dtype_name(a) is None:
            raise TypeError(
                f"{who}: argument {p.name!r} has the unsupported type {type(a).__name__} "
                "(expected an ember array or a scalar)"
            )


def _checked_args(kernel, args):
    """(params, given arguments padded with None for missing outputs, placeholder types) of a
    call of `kernel` (an ElementwiseKernel or a ReductionKernel), after checking the argument
    count and kinds."""
    who, nin, nargs = kernel._who, kernel.nin, kernel.nargs
    if len(args) not in (nin, nargs):
        raise TypeError(
            f"{who}: takes {nin} argument{'s' if nin != 1 else ''}"
            + (f" (or {nargs} with the outputs)" if kernel.nout else "")
            + f", got {len(args)}"
        )
    params = kernel.in_params + kernel.out_params
    given = list(args) + [None] * (nargs - len(args))
    _check_arg_kinds(params, given, nin, who)
    types = _resolve_types(params, given, who)
    for p in params:
        if p.placeholder is not None and p.placeholder not in types:
            raise TypeError(f"{who}: cannot determine the type {p.placeholder} of {p.name!r}")
    return params, given, types


def _device_of(arrays, who):
    dev = None
    for a in arrays:
        d = a.device
        if dev is None:
            dev = d
        elif d != dev:
            raise ValueError(f"{who}: arrays on different devices: {dev} and {d}")
    if dev is not None and dev.type != "cuda":
        raise ValueError(
            f"{who}: custom CUDA kernels need CUDA arrays, got an array on {dev}"
            + ("" if _c.is_available() else f" (CUDA is not available: {_c.unavailable_reason()})")
        )
    return dev


def _elem_strides(a, shape):
    """Strides in elements of `a` broadcast to `shape`."""
    b = a if tuple(a.shape) == tuple(shape) else _core.broadcast_to(a, shape)
    return [s // b.itemsize for s in b.strides]


def _void(values, dtype=np.int64):
    """A NumPy structured scalar holding `values` as 64-bit (or `dtype`) integers (a by-value
    struct)."""
    buf = np.array(values, dtype=dtype)
    return buf.view(np.dtype((np.void, buf.nbytes)))[0]


def _add_param(p, a, is_out, types, who, with_values, sig, kargs, names):
    """Appends parameter p's entry of the kernel signature, its argument (for a launch: None when
    only the source is wanted) and the dtype name it brings to the header. Returns the C type of
    an array parameter's elements, which the caller loads and stores; None for raw arrays and
    scalars, which the kernel takes as they are."""
    vt = p.ctype
    if not _is_array(a):
        t = p.dtype or types[p.placeholder]
        names.append(t)
        sig.append(f"const {vt} {p.name}")
        kargs.append(_numpy_scalar(a, t, who, p.name) if with_values else None)
        return None
    st = _CTYPES[a.dtype.name]
    names.append(a.dtype.name)
    if p.raw:
        rnd, value = _raw_struct(a) if with_values else (max(a.ndim, 1), None)
        sig.append(f"const _ember_raw<{st}, {rnd}> {p.name}")
        kargs.append(value)
        return None
    sig.append(f"{'' if is_out else 'const '}{st}* _p_{p.name}")
    kargs.append(a)
    return st


def _raw_struct(a):
    nd = max(a.ndim, 1)
    shape = list(a.shape) if a.ndim else [1]
    strides = [s // a.itemsize for s in a.strides] if a.ndim else [0]
    # C-contiguous: the linear index is the element offset.
    expect, contiguous = 1, 1
    for n, s in zip(reversed(shape), reversed(strides), strict=True):
        if n != 1 and s != expect:
            contiguous = 0
        expect *= n
    return nd, _void([_k.data_ptr(a), a.size, contiguous, *shape, *strides])
