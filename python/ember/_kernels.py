"""Custom CUDA kernels written as CUDA C++ strings, with CuPy's API: RawKernel, RawModule,
ElementwiseKernel and ReductionKernel.

The source is compiled by NVRTC for the device's architecture and cached like ember's own
kernels (in memory and in the on-disk cache). Without a CUDA device the objects can be built,
but compiling or launching raises a ValueError saying a CUDA device is required.
"""

import math
import operator
import re

import numpy as np

from . import _core

_k = _core._kernels
_c = _core._cuda

__all__ = ["ElementwiseKernel", "RawKernel", "RawModule", "ReductionKernel"]

# cuFuncGetAttribute's CU_FUNC_ATTRIBUTE_* values, under CuPy's names.
_ATTRIBUTES = {
    "max_threads_per_block": 0,
    "shared_size_bytes": 1,
    "const_size_bytes": 2,
    "local_size_bytes": 3,
    "num_regs": 4,
    "ptx_version": 5,
    "binary_version": 6,
    "cache_mode_ca": 7,
    "max_dynamic_shared_size_bytes": 8,
    "preferred_shared_memory_carveout": 9,
}


def _require_cuda(who):
    if not _c.is_available():
        raise ValueError(
            f"{who}: custom CUDA kernels need a CUDA device, and CUDA is not available: "
            f"{_c.unavailable_reason()}"
        )


_CUDA = []


def _cuda_available():
    """Whether CUDA is usable (fixed for the process, so asked once)."""
    if not _CUDA:
        _CUDA.append(_c.is_available())
    return _CUDA[0]


_current = _c.current_device


def _current_device(who):
    _require_cuda(who)
    return _c.current_device()


def _options(options, who):
    if isinstance(options, str):
        options = (options,)
    if not isinstance(options, (tuple, list)) or not all(isinstance(o, str) for o in options):
        raise TypeError(f"{who}: options must be a tuple of strings, got {options!r}")
    return tuple(options)


def _check_backend(backend, jitify, who, translate_cucomplex=False, cooperative=False):
    if translate_cucomplex:
        raise ValueError(f"{who}: translate_cucomplex=True is not supported")
    if cooperative:
        raise ValueError(f"{who}: enable_cooperative_groups=True is not supported")
    if backend != "nvrtc":
        raise ValueError(f"{who}: backend {backend!r} is not supported (only 'nvrtc')")
    if jitify:
        raise ValueError(f"{who}: jitify=True is not supported; compile with jitify=False")


class RawModule:
    """A CUDA module from source (compiled by NVRTC) or from a cubin/PTX/fatbin file.

    ``RawModule(code=src, options=(...), name_expressions=["f<float>", ...])`` compiles `src`;
    ``get_function(name)`` returns a kernel launched like a RawKernel. Templated kernels are found
    through `name_expressions` (their lowered names come from NVRTC). ``RawModule(path=...)``
    loads a compiled file as is.
    """

    def __init__(
        self,
        code=None,
        path=None,
        options=(),
        backend="nvrtc",
        translate_cucomplex=False,
        *,
        enable_cooperative_groups=False,
        name_expressions=None,
        jitify=False,
    ):
        who = "ember.RawModule"
        if (code is None) == (path is None):
            raise TypeError(f"{who}: give exactly one of code and path")
        if code is not None and not isinstance(code, str):
            raise TypeError(f"{who}: code must be a str, got {type(code).__name__}")
        _check_backend(backend, jitify, who, translate_cucomplex, enable_cooperative_groups)
        self._options = _options(options, who)
        if name_expressions is None:
            name_expressions = ()
        if isinstance(name_expressions, str) or not all(
            isinstance(e, str) for e in name_expressions
        ):
            raise TypeError(f"{who}: name_expressions must be a sequence of str")
        self._name_expressions = tuple(name_expressions)
        if path is not None and self._name_expressions:
            raise ValueError(f"{who}: name_expressions need code, not a compiled file")
        self.code = code
        self.path = None if path is None else str(path)
        self._image = None
        if path is not None:
            with open(path, "rb") as f:
                self._image = f.read()
            if not self._image:
                raise ValueError(f"{who}: {path} is empty")
        self._modules = {}  # device -> module handle
        self._lowered = {}  # device -> {name expression: lowered name}
        self._kernels = {}
        self._name = "ember_module"

    @property
    def options(self):
        return self._options

    @property
    def name_expressions(self):
        return self._name_expressions

    def _compile(self, arch):
        """(image bytes, lowered names) of the source for sm_<arch>; needs NVRTC, not a GPU."""
        return _k.compile(
            self.code, self._name, list(self._options), list(self._name_expressions), arch
        )

    def _module(self, device):
        m = self._modules.get(device)
        if m is None:
            if self._image is not None:
                image, lowered = self._image, {}
            else:
                image, lowered = self._compile(_k.device_arch(device))
            m = _k.load_module(image, device)
            self._lowered[device] = lowered
            self._modules[device] = m
        return m

    def _function(self, name, device):
        m = self._module(device)
        return _k.Function.get(m, device, self._lowered[device].get(name, name))

    def compile(self, log_stream=None):
        """Compiles (and loads) the module for the current device now rather than at first use."""
        self._module(_current_device("ember.RawModule.compile"))

    def get_function(self, name):
        """The kernel `name` (an extern "C" name or one of the name expressions)."""
        if not isinstance(name, str):
            raise TypeError(f"ember.RawModule.get_function: name must be a str, got {name!r}")
        k = self._kernels.get(name)
        if k is None:
            k = RawKernel._of_module(self, name)
            if _c.is_available():
                k._function()  # CuPy reports a missing function here
            self._kernels[name] = k
        return k

    def get_global(self, name):
        raise NotImplementedError("ember.RawModule.get_global is not supported yet")


class RawKernel(_k.KernelBase):
    """A CUDA kernel written in CUDA C++, launched as ``kernel(grid, block, args)``.

    `args` holds ember arrays (passed as device pointers), NumPy scalars (passed with their exact
    C types: ``np.float32(2)`` is a 4-byte float), Python ints (long long), floats (double),
    bools (bool) and complex numbers (complex<double>), and NumPy structured scalars (their bytes,
    for struct parameters). `grid` and `block` are ints or tuples of up to three ints.
    """

    def __init__(
        self,
        code,
        name,
        options=(),
        backend="nvrtc",
        *,
        translate_cucomplex=False,
        enable_cooperative_groups=False,
        jitify=False,
    ):
        if not isinstance(name, str) or not name:
            raise TypeError(f"ember.RawKernel: name must be a non-empty str, got {name!r}")
        module = RawModule(
            code=code,
            options=options,
            backend=backend,
            translate_cucomplex=translate_cucomplex,
            enable_cooperative_groups=enable_cooperative_groups,
            jitify=jitify,
        )
        module._name = name
        self._init(module, name)

    @classmethod
    def _of_module(cls, module, name):
        self = cls.__new__(cls)
        self._init(module, name)
        return self

    def _init(self, module, name):
        _k.KernelBase.__init__(self)
        self._mod = module
        self.name = name
        self._fns = {}

    @property
    def code(self):
        return self._mod.code

    @property
    def options(self):
        return self._mod.options

    @property
    def backend(self):
        return "nvrtc"

    def _function(self, device=None):
        if device is None:
            device = _current_device(f"ember.RawKernel {self.name!r}")
        f = self._fns.get(device)
        if f is None:
            f = self._fns[device] = self._mod._function(self.name, device)
            self._remember(f)
        return f

    def _compile(self, arch=90):
        """The cubin of the source for sm_<arch> (NVRTC only: works without a GPU)."""
        return self._mod._compile(arch)[0]

    def compile(self, log_stream=None):
        self._function()

    # __call__ is KernelBase's (C++): it launches the function remembered for the current
    # device, and comes here for the first launch on a device or without CUDA.
    def _call_slow(self, grid, block, args, shared_mem=0, stream=None):
        if _cuda_available():
            f = self._fns.get(_current())
            if f is None:
                f = self._function()
            f(grid, block, args, shared_mem, stream)
            return
        # No CUDA: argument errors first (as on a GPU), then the missing device.
        _k.check_dims(grid, block)
        _k.check_args(args)
        _require_cuda(f"ember.RawKernel {self.name!r}")

    @property
    def attributes(self):
        """The kernel's attributes (cuFuncGetAttribute) as a dict."""
        f = self._function()
        return {name: f.attribute(a) for name, a in _ATTRIBUTES.items()}

    def _attr(self, name):
        return self._function().attribute(_ATTRIBUTES[name])

    max_threads_per_block = property(lambda self: self._attr("max_threads_per_block"))
    shared_size_bytes = property(lambda self: self._attr("shared_size_bytes"))
    const_size_bytes = property(lambda self: self._attr("const_size_bytes"))
    local_size_bytes = property(lambda self: self._attr("local_size_bytes"))
    num_regs = property(lambda self: self._attr("num_regs"))
    ptx_version = property(lambda self: self._attr("ptx_version"))
    binary_version = property(lambda self: self._attr("binary_version"))
    cache_mode_ca = property(lambda self: self._attr("cache_mode_ca"))

    def _set_attr(self, name, value):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"ember.RawKernel: {name} must be an int >= 0, got {value!r}")
        self._function().set_attribute(_ATTRIBUTES[name], int(value))

    max_dynamic_shared_size_bytes = property(
        lambda self: self._attr("max_dynamic_shared_size_bytes"),
        lambda self, v: self._set_attr("max_dynamic_shared_size_bytes", v),
    )
    preferred_shared_memory_carveout = property(
        lambda self: self._attr("preferred_shared_memory_carveout"),
        lambda self, v: self._set_attr("preferred_shared_memory_carveout", v),
    )

    def __repr__(self):
        return f"<ember.RawKernel {self.name!r}>"


# ---- ElementwiseKernel and ReductionKernel --------------------------------------------------

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


def _collapse(shape, strides, reduce_dims=True):
    """Drops size-1 dims and merges neighbours contiguous in every operand (C order)."""
    dims = [d for d in range(len(shape)) if shape[d] != 1] if reduce_dims else range(len(shape))
    out_shape, out_strides = [], [[] for _ in strides]
    for d in dims:
        if (
            reduce_dims
            and out_shape
            and all(st[-1] == s[d] * shape[d] for st, s in zip(out_strides, strides, strict=True))
        ):
            out_shape[-1] *= shape[d]
            for st, s in zip(out_strides, strides, strict=True):
                st[-1] = s[d]
            continue
        out_shape.append(shape[d])
        for st, s in zip(out_strides, strides, strict=True):
            st.append(s[d])
    return out_shape, out_strides


def _void(values):
    """A NumPy structured scalar holding `values` as 64-bit integers (a by-value struct)."""
    buf = np.array(values, dtype=np.int64)
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


def _needs_complex(names):
    return any(n is not None and n.startswith("complex") for n in names)


def _typedefs(types):
    return "".join(f"typedef {_CTYPES[t]} {p};\n" for p, t in sorted(types.items()))


def _header(types, extra_names=()):
    s = "// Generated by ember (python/ember/_kernels.py).\n"
    if _needs_complex(list(types.values()) + list(extra_names)):
        s += "#define EMBER_DEVICE_COMPLEX 1\n"
    return s + "#include <ember/kernels.cuh>\n\n" + _typedefs(types)


def _block_grid(n, block_size, device):
    sms = _SMS.get(device)
    if sms is None:
        sms = _SMS[device] = _k.multiprocessor_count(device)
    return min(max(1, -(-n // block_size)), sms * (2048 // block_size)), block_size


_SMS = {}
_MODULES = {}  # (source, options, device) -> RawKernel over the generated source


def _launch_generated(source, name, options, device, grid, block, args):
    key = (source, options, device)
    k = _MODULES.get(key)
    if k is None:
        k = _MODULES[key] = RawKernel(source, name, options=options)
    k._function(device)(grid, block, args, 0, None)


def _stream_ctx(stream):
    if stream is None:
        return None
    from . import cuda

    return cuda.stream(stream)


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


class ElementwiseKernel:
    """An elementwise kernel from a C++ snippet, with CuPy's semantics.

    ``ElementwiseKernel('T x, T y', 'T z', 'z = (x - y) * (x - y)', 'squared_diff')``: inputs
    broadcast together; outputs are allocated unless passed after the inputs; single-letter types
    are placeholders resolved from the arguments' dtypes (one letter, one type); ``raw``
    parameters are whole arrays indexed as ``x[j]``; ``i`` is the index of the element and
    ``_ind.size()`` the number of elements. Non-array arguments pass as scalars of their
    parameter's type.
    """

    def __init__(
        self,
        in_params,
        out_params,
        operation,
        name="kernel",
        reduce_dims=True,
        preamble="",
        no_return=False,
        return_tuple=False,
        loop_prep="",
        after_loop="",
        options=(),
    ):
        who = _check_texts(
            "ember.ElementwiseKernel",
            name,
            operation=operation,
            preamble=preamble,
            loop_prep=loop_prep,
            after_loop=after_loop,
        )
        self.in_params = _parse_params(in_params, who)
        self.out_params = _parse_params(out_params, who)
        _check_names(self.in_params, self.out_params, who)
        self.operation = operation
        self.name = name
        self.reduce_dims = bool(reduce_dims)
        self.preamble = preamble
        self.no_return = bool(no_return)
        self.return_tuple = bool(return_tuple)
        self.loop_prep = loop_prep
        self.after_loop = after_loop
        self.options = _options(options, who)
        self.nin = len(self.in_params)
        self.nout = len(self.out_params)
        self.nargs = self.nin + self.nout
        self._who = who

    def _checked_args(self, args):
        """(params, given arguments padded with None for missing outputs, placeholder types),
        after checking the argument count and kinds."""
        who = self._who
        if len(args) not in (self.nin, self.nargs):
            raise TypeError(
                f"{who}: takes {self.nin} argument{'s' if self.nin != 1 else ''}"
                + (f" (or {self.nargs} with the outputs)" if self.nout else "")
                + f", got {len(args)}"
            )
        params = self.in_params + self.out_params
        given = list(args) + [None] * (self.nargs - len(args))
        _check_arg_kinds(params, given, self.nin, who)
        types = _resolve_types(params, given, who)
        for p in params:
            if p.placeholder is not None and p.placeholder not in types:
                raise TypeError(f"{who}: cannot determine the type {p.placeholder} of {p.name!r}")
        return params, given, types

    def _plan(self, args, size=None):
        who = self._who
        params, given, types = self._checked_args(args)
        arrays = [a for a in given if _is_array(a)]
        dev = _device_of(arrays, who)
        # The iteration shape: the broadcast of the non-raw array arguments (outputs included).
        shapes = [
            tuple(a.shape) for p, a in zip(params, given, strict=True) if _is_array(a) and not p.raw
        ]
        if size is not None:
            if shapes:
                raise ValueError(f"{who}: size= is only for calls without non-raw array arguments")
            if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
                raise ValueError(f"{who}: size must be an int >= 0, got {size!r}")
            shape = (int(size),)
        elif shapes:
            try:
                shape = tuple(np.broadcast_shapes(*shapes))
            except ValueError:
                raise ValueError(
                    f"{who}: arguments cannot be broadcast together: {shapes}"
                ) from None
        else:
            raise ValueError(f"{who}: without non-raw array arguments, size= must be given")
        for p, a in zip(self.out_params, given[self.nin :], strict=True):
            if a is not None and not p.raw and tuple(a.shape) != shape:
                raise ValueError(
                    f"{who}: output {p.name!r} has shape {tuple(a.shape)}, the arguments "
                    f"broadcast to {shape}"
                )
        for p, a in zip(params, given, strict=True):
            if p.raw and p.dtype is not None and a is not None and a.dtype.name != p.dtype:
                raise TypeError(f"{who}: raw argument {p.name!r} is {a.dtype.name}, not {p.dtype}")
        outs = []
        for p, a in zip(self.out_params, given[self.nin :], strict=True):
            if a is None:
                t = p.dtype or types[p.placeholder]
                if dev is None:
                    _require_cuda(who)
                    dev = _core.Device("cuda", _c.current_device())
                a = _core.empty(shape, dtype=t, device=dev)
            outs.append(a)
        if dev is None:
            dev = _core.Device("cuda", _c.current_device()) if _c.is_available() else None
        given[self.nin :] = outs
        return types, given, outs, shape, dev

    def _generate(self, types, given, shape, with_values=True):
        """(source, kernel arguments) for one call."""
        params = self.in_params + self.out_params
        n = math.prod(shape)
        elem = [(p, a) for p, a in zip(params, given, strict=True) if _is_array(a) and not p.raw]
        strides = [_elem_strides(a, shape) for _, a in elem]
        cshape, cstrides = _collapse(list(shape), strides, self.reduce_dims)
        contiguous = len(cshape) <= 1 and all(s == [] or s == [1] for s in cstrides)
        nd = len(cshape)
        sig, loads, stores, kargs = [], [], [], []
        slot = {id(p): k for k, (p, _) in enumerate(elem)}
        complex_names = []
        for idx, (p, a) in enumerate(zip(params, given, strict=True)):
            is_out = idx >= self.nin
            vt = p.ctype
            st = _add_param(p, a, is_out, types, self._who, with_values, sig, kargs, complex_names)
            if st is not None:
                off = "i" if contiguous else f"_o{slot[id(p)]}"
                if is_out:
                    if st == _CTYPES.get(types.get(p.ctype, p.dtype)):
                        loads.append(f"        {vt}& {p.name} = _p_{p.name}[{off}];\n")
                    else:
                        loads.append(
                            f"        {vt} {p.name} = static_cast<{vt}>(_p_{p.name}[{off}]);\n"
                        )
                        stores.append(
                            f"        _p_{p.name}[{off}] = static_cast<{st}>({p.name});\n"
                        )
                else:
                    loads.append(
                        f"        const {vt} {p.name} = static_cast<{vt}>(_p_{p.name}[{off}]);\n"
                    )
        sig.append("const long long _n")
        kargs.append(np.int64(n))
        src = _header(types, complex_names)
        if not contiguous:
            src += (
                f"struct _ember_geom {{\n    long long shape[{nd}];\n"
                f"    long long strides[{len(elem)}][{nd}];\n}};\n"
            )
            sig.append("const _ember_geom _g")
            kargs.append(_void(cshape + [s for st in cstrides for s in st]))
        src += "\n" + self.preamble + "\n\n"
        src += f'extern "C" __global__ void {self.name}({", ".join(sig)}) {{\n'
        src += "    const _ember_index _ind{_n};\n"
        src += "    (void)_ind;\n"
        if self.loop_prep:
            src += "    " + self.loop_prep + "\n"
        src += (
            "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < _n;\n"
            "         i += (long long)blockDim.x * gridDim.x) {\n"
        )
        if not contiguous:
            src += "        long long _r = i, _c;\n"
            src += "".join(f"        long long _o{k} = 0;\n" for k in range(len(elem)))
            for d in reversed(range(nd)):
                src += f"        _c = _r % _g.shape[{d}];\n        _r /= _g.shape[{d}];\n"
                src += "".join(
                    f"        _o{k} += _c * _g.strides[{k}][{d}];\n" for k in range(len(elem))
                )
        src += "".join(loads)
        src += "        {\n" + self.operation + "\n        ;}\n"
        src += "".join(stores)
        src += "    }\n"
        if self.after_loop:
            src += "    " + self.after_loop + "\n"
        src += "}\n"
        return src, kargs, n

    def _source(self, *args, size=None):
        """The CUDA source one call with these arguments compiles (works without a GPU: the
        arguments may be CPU arrays; only their dtypes and shapes are used)."""
        types, given, _, shape, _ = self._plan_meta(args, size)
        return self._generate(types, given, shape, with_values=False)[0]

    def _launch_args(self, *args, size=None):
        """(source, kernel arguments) of a call, without launching (CPU arrays are fine)."""
        types, given, _, shape, _ = self._plan_meta(args, size)
        return self._generate(types, given, shape)[:2]

    def _plan_meta(self, args, size):
        # Like _plan, but CPU arrays are fine and outputs are not allocated.
        params, given, types = self._checked_args(args)
        shapes = [
            tuple(a.shape) for p, a in zip(params, given, strict=True) if _is_array(a) and not p.raw
        ]
        shape = (int(size),) if size is not None else tuple(np.broadcast_shapes(*shapes))
        for k, p in enumerate(self.out_params):
            if given[self.nin + k] is None:
                given[self.nin + k] = _core.empty(
                    shape, dtype=p.dtype or types[p.placeholder], device="cpu"
                )
        return types, given, None, shape, None

    def _resolve(self, *args):
        """{placeholder: dtype name} for a call with these arguments (no GPU needed)."""
        who = self._who
        params = self.in_params + self.out_params
        given = list(args) + [None] * (self.nargs - len(args))
        _check_arg_kinds(params, given, self.nin, who)
        return _resolve_types(params, given, who)

    def __call__(self, *args, size=None, block_size=256, stream=None):
        types, given, outs, shape, dev = self._plan(args, size)
        if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
            raise ValueError(f"{self._who}: block_size must be an int >= 1, got {block_size!r}")
        if dev is None:
            _require_cuda(self._who)
        n = math.prod(shape)
        if n > 0:
            src, kargs, _ = self._generate(types, given, shape)
            grid, block = _block_grid(n, block_size, dev.index)
            ctx = _stream_ctx(stream)
            if ctx is None:
                _launch_generated(src, self.name, self.options, dev.index, grid, block, kargs)
            else:
                with ctx:
                    _launch_generated(src, self.name, self.options, dev.index, grid, block, kargs)
        if self.no_return:
            return None
        if self.nout == 1 and not self.return_tuple:
            return outs[0]
        return tuple(outs)

    def __repr__(self):
        return f"<ember.ElementwiseKernel {self.name!r}>"


def _normalize_axis(axis, ndim, who):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"{who}: axis must be an int or a tuple of ints, got {axis!r}")
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise _core.AxisError(f"{who}: axis {a} is out of bounds for {ndim} dimensions")
        a %= ndim
        if a in out:
            raise ValueError(f"{who}: duplicate axis {a} in {axis!r}")
        out.append(a)
    return tuple(sorted(out))


class ReductionKernel:
    """A reduction kernel from C++ snippets, with CuPy's semantics.

    ``ReductionKernel('T x', 'T y', 'x * x', 'a + b', 'y = sqrt(a)', '0', 'l2norm')`` maps each
    element with `map_expr`, folds with `reduce_expr` (of ``a`` and ``b``, in ``_type_reduce``),
    starting from `identity`, and writes the output with `post_map_expr` (``a`` is the folded
    value). Called with ``axis=`` (None: all) and ``keepdims=``. One block folds each output in a
    fixed order, so results are the same run to run.
    """

    def __init__(
        self,
        in_params,
        out_params,
        map_expr,
        reduce_expr,
        post_map_expr,
        identity,
        name="reduce_kernel",
        reduce_type=None,
        reduce_dims=True,
        preamble="",
        options=(),
    ):
        who = _check_texts(
            "ember.ReductionKernel",
            name,
            map_expr=map_expr,
            reduce_expr=reduce_expr,
            post_map_expr=post_map_expr,
            preamble=preamble,
        )
        if identity is not None and not isinstance(identity, str):
            identity = str(identity)
        self.in_params = _parse_params(in_params, who)
        self.out_params = _parse_params(out_params, who)
        if not self.out_params:
            raise ValueError(f"{who}: needs an output parameter")
        if any(p.raw for p in self.out_params):
            raise ValueError(f"{who}: output parameters cannot be raw")
        _check_names(self.in_params, self.out_params, who)
        if reduce_type is None:
            reduce_type = self.out_params[0].ctype
        elif not isinstance(reduce_type, str):
            name_ = _dtype_name(reduce_type)
            if name_ is None:
                raise TypeError(f"{who}: bad reduce_type {reduce_type!r}")
            reduce_type = _CTYPES[name_]
        elif reduce_type in _CTYPES:
            reduce_type = _CTYPES[reduce_type]
        self.reduce_type = reduce_type
        self.map_expr = map_expr
        self.reduce_expr = reduce_expr
        self.post_map_expr = post_map_expr
        self.identity = identity
        self.name = name
        self.reduce_dims = bool(reduce_dims)
        self.preamble = preamble
        self.options = _options(options, who)
        self.nin = len(self.in_params)
        self.nout = len(self.out_params)
        self.nargs = self.nin + self.nout
        self._who = who

    def _prepare(self, args, out, axis, keepdims, allocate):
        who = self._who
        if out is not None:
            if len(args) != self.nin:
                raise TypeError(f"{who}: out= given with the outputs among the arguments")
            args = tuple(args) + ((out,) if self.nout == 1 else tuple(out))
        if len(args) not in (self.nin, self.nargs):
            raise TypeError(
                f"{who}: takes {self.nin} argument{'s' if self.nin != 1 else ''} "
                f"(or {self.nargs} with the outputs), got {len(args)}"
            )
        params = self.in_params + self.out_params
        given = list(args) + [None] * (self.nargs - len(args))
        _check_arg_kinds(params, given, self.nin, who)
        types = _resolve_types(params, given, who)
        for p in params:
            if p.placeholder is not None and p.placeholder not in types:
                raise TypeError(f"{who}: cannot determine the type {p.placeholder} of {p.name!r}")
        if len(self.reduce_type) == 1 and self.reduce_type not in types:
            raise TypeError(f"{who}: cannot determine the reduce type {self.reduce_type}")
        ins = [
            (p, a)
            for p, a in zip(self.in_params, given, strict=False)
            if _is_array(a) and not p.raw
        ]
        if not ins:
            raise ValueError(f"{who}: needs at least one non-raw array input")
        try:
            shape = tuple(np.broadcast_shapes(*[tuple(a.shape) for _, a in ins]))
        except ValueError:
            raise ValueError(
                f"{who}: arguments cannot be broadcast together: {[a.shape for _, a in ins]}"
            ) from None
        axes = _normalize_axis(axis, len(shape), who)
        kept = [d for d in range(len(shape)) if d not in axes]
        out_shape = (
            tuple(1 if d in axes else shape[d] for d in range(len(shape)))
            if keepdims
            else (tuple(shape[d] for d in kept))
        )
        dev = _device_of([a for a in given if _is_array(a)], who) if allocate else None
        for k, p in enumerate(self.out_params):
            a = given[self.nin + k]
            if a is None:
                t = p.dtype or types[p.placeholder]
                a = _core.empty(out_shape, dtype=t, device=dev if allocate else "cpu")
                given[self.nin + k] = a
            elif tuple(a.shape) != out_shape:
                raise ValueError(
                    f"{who}: output {p.name!r} has shape {tuple(a.shape)}, expected {out_shape}"
                )
        nred = math.prod(shape[d] for d in axes)
        nout = math.prod(shape[d] for d in kept)
        if nred == 0 and nout > 0 and self.identity is None:
            raise ValueError(f"{who}: zero-size reduction without an identity")
        return types, given, shape, axes, kept, nred, nout, dev

    def _generate(self, types, given, shape, axes, kept, nred, with_values=True):
        params = self.in_params + self.out_params
        ins = [
            (p, a)
            for p, a in zip(self.in_params, given, strict=False)
            if _is_array(a) and not p.raw
        ]
        outs = given[self.nin :]
        # Kept dims: strides of the inputs and of the outputs; reduced dims: of the inputs.
        in_strides = [_elem_strides(a, shape) for _, a in ins]
        out_strides = []
        for o in outs:
            st = [s // o.itemsize for s in o.strides]
            if o.ndim == len(shape):  # keepdims
                st = [st[d] for d in kept]
            out_strides.append(st)
        kshape, kstr = _collapse(
            [shape[d] for d in kept],
            [[s[d] for d in kept] for s in in_strides] + out_strides,
            self.reduce_dims,
        )
        rshape, rstr = _collapse(
            [shape[d] for d in axes], [[s[d] for d in axes] for s in in_strides], self.reduce_dims
        )
        if not kshape:
            kshape, kstr = [1], [[0] for _ in kstr]
        if not rshape:
            rshape, rstr = [1], [[0] for _ in rstr]
        nk, nr, nops = len(kshape), len(rshape), len(ins)
        block = 256 if nred >= 256 else max(32, 1 << max(0, (nred - 1).bit_length()))
        slot = {id(p): k for k, (p, _) in enumerate(ins)}
        sig, loads, kargs, names = [], [], [], []
        for idx, (p, a) in enumerate(zip(params, given, strict=True)):
            is_out = idx >= self.nin
            vt = p.ctype
            st = _add_param(p, a, is_out, types, self._who, with_values, sig, kargs, names)
            if st is not None and not is_out:
                loads.append(
                    f"                const {vt} {p.name} = "
                    f"static_cast<{vt}>(_p_{p.name}[_o{slot[id(p)]}]);\n"
                )
        sig += ["const long long _nout", "const long long _nred", "const _ember_rgeom _g"]
        nout = math.prod(shape[d] for d in kept)
        kargs += [
            np.int64(nout),
            np.int64(nred),
            _void(
                kshape + [s for st in kstr for s in st] + rshape + [s for st in rstr for s in st]
            ),
        ]
        src = _header(types, names)
        src += (
            f"struct _ember_rgeom {{\n    long long kshape[{nk}];\n"
            f"    long long kstrides[{nops + self.nout}][{nk}];\n"
            f"    long long rshape[{nr}];\n    long long rstrides[{max(nops, 1)}][{nr}];\n}};\n"
        )
        src += f"typedef {self.reduce_type} _type_reduce;\n"
        src += "\n" + self.preamble + "\n\n"
        src += f"#define _EMBER_REDUCE(a, b) ({self.reduce_expr})\n"
        src += f"#define _EMBER_POST_MAP(a) ({self.post_map_expr})\n"
        has_id = self.identity is not None
        src += f'extern "C" __global__ void {self.name}({", ".join(sig)}) {{\n'
        src += f"    __shared__ alignas(16) unsigned char _sbuf[{block} * sizeof(_type_reduce)];\n"
        src += "    _type_reduce* _sdata = reinterpret_cast<_type_reduce*>(_sbuf);\n"
        if not has_id:
            src += f"    __shared__ bool _svalid[{block}];\n"
        src += "    const unsigned _tid = threadIdx.x;\n"
        src += "    for (long long _out = blockIdx.x; _out < _nout; _out += gridDim.x) {\n"
        src += "        long long _r = _out, _c;\n"
        src += "".join(f"        long long _k{k} = 0;\n" for k in range(nops + self.nout))
        for d in reversed(range(nk)):
            src += f"        _c = _r % _g.kshape[{d}];\n        _r /= _g.kshape[{d}];\n"
            src += "".join(
                f"        _k{k} += _c * _g.kstrides[{k}][{d}];\n" for k in range(nops + self.nout)
            )
        if has_id:
            src += f"        _type_reduce _s = static_cast<_type_reduce>({self.identity});\n"
        else:
            src += "        _type_reduce _s;\n        bool _v = false;\n"
        src += f"        for (long long _j = _tid; _j < _nred; _j += {block}) {{\n"
        src += "            long long _q = _j, _e;\n"
        src += "".join(f"            long long _o{k} = _k{k};\n" for k in range(nops))
        for d in reversed(range(nr)):
            src += f"            _e = _q % _g.rshape[{d}];\n            _q /= _g.rshape[{d}];\n"
            src += "".join(
                f"            _o{k} += _e * _g.rstrides[{k}][{d}];\n" for k in range(nops)
            )
        src += "            {\n" + "".join(loads)
        src += (
            f"                const _type_reduce _m = static_cast<_type_reduce>({self.map_expr});\n"
        )
        if has_id:
            src += "                _s = _EMBER_REDUCE(_s, _m);\n"
        else:
            src += "                if (_v) _s = _EMBER_REDUCE(_s, _m);\n"
            src += "                else { _s = _m; _v = true; }\n"
        src += "            }\n        }\n"
        src += "        _sdata[_tid] = _s;\n"
        if not has_id:
            src += "        _svalid[_tid] = _v;\n"
        src += "        __syncthreads();\n"
        src += f"        for (unsigned _w = {block // 2}; _w > 0; _w >>= 1) {{\n"
        if has_id:
            src += (
                "            if (_tid < _w)\n"
                "                _sdata[_tid] = _EMBER_REDUCE(_sdata[_tid], _sdata[_tid + _w]);\n"
            )
        else:
            src += (
                "            if (_tid < _w && _svalid[_tid + _w]) {\n"
                "                if (_svalid[_tid]) _sdata[_tid] = "
                "_EMBER_REDUCE(_sdata[_tid], _sdata[_tid + _w]);\n"
                "                else { _sdata[_tid] = _sdata[_tid + _w]; _svalid[_tid] = true; }\n"
                "            }\n"
            )
        src += "            __syncthreads();\n        }\n"
        src += "        if (_tid == 0) {\n"
        out_slots = {}
        for k, p in enumerate(self.out_params):
            o = outs[k]
            st = _CTYPES[o.dtype.name]
            out_slots[p.name] = k
            if st == _CTYPES.get(types.get(p.ctype, p.dtype)):
                src += f"            {p.ctype}& {p.name} = _p_{p.name}[_k{nops + k}];\n"
            else:
                src += (
                    f"            {p.ctype} {p.name} = "
                    f"static_cast<{p.ctype}>(_p_{p.name}[_k{nops + k}]);\n"
                )
        src += "            const _type_reduce _a = _sdata[0];\n"
        src += "            _EMBER_POST_MAP(_a);\n"
        for k, p in enumerate(self.out_params):
            st = _CTYPES[outs[k].dtype.name]
            if st != _CTYPES.get(types.get(p.ctype, p.dtype)):
                src += f"            _p_{p.name}[_k{nops + k}] = static_cast<{st}>({p.name});\n"
        src += "        }\n        __syncthreads();\n    }\n}\n"
        return src, kargs, block, nout

    def _source(self, *args, out=None, axis=None, keepdims=False):
        """The CUDA source a call with these arguments compiles (no GPU needed: CPU arrays are
        fine, only dtypes and shapes are used)."""
        types, given, shape, axes, kept, nred, _, _ = self._prepare(
            args, out, axis, keepdims, allocate=False
        )
        return self._generate(types, given, shape, axes, kept, nred, with_values=False)[0]

    def _launch_args(self, *args, out=None, axis=None, keepdims=False):
        """(source, kernel arguments) of a call, without launching (CPU arrays are fine)."""
        types, given, shape, axes, kept, nred, _, _ = self._prepare(
            args, out, axis, keepdims, allocate=False
        )
        return self._generate(types, given, shape, axes, kept, nred)[:2]

    def __call__(self, *args, out=None, axis=None, keepdims=False, stream=None):
        types, given, shape, axes, kept, nred, nout, dev = self._prepare(
            args, out, axis, keepdims, allocate=True
        )
        if dev is None:
            _require_cuda(self._who)
        outs = given[self.nin :]
        if nout > 0:
            src, kargs, block, _ = self._generate(types, given, shape, axes, kept, nred)
            sms = _SMS.get(dev.index)
            if sms is None:
                sms = _SMS[dev.index] = _k.multiprocessor_count(dev.index)
            grid = min(nout, sms * 32)
            ctx = _stream_ctx(stream)
            if ctx is None:
                _launch_generated(src, self.name, self.options, dev.index, grid, block, kargs)
            else:
                with ctx:
                    _launch_generated(src, self.name, self.options, dev.index, grid, block, kargs)
        return outs[0] if self.nout == 1 else tuple(outs)

    def __repr__(self):
        return f"<ember.ReductionKernel {self.name!r}>"
