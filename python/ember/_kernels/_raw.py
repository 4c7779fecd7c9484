"""RawModule and RawKernel: CUDA C++ source compiled by NVRTC (or a compiled file) loaded per
device, and kernels launched as ``kernel(grid, block, args)`` (the launch itself is C++)."""

import re

import numpy as np

from .. import _core
from ._args import _options, _require_cuda

_k = _core._kernels
_c = _core._cuda

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


def _check_backend(backend, jitify, who, translate_cucomplex=False, cooperative=False):
    if translate_cucomplex:
        raise ValueError(f"{who}: translate_cucomplex=True is not supported")
    if cooperative:
        raise ValueError(f"{who}: enable_cooperative_groups=True is not supported")
    if backend != "nvrtc":
        raise ValueError(f"{who}: backend {backend!r} is not supported (only 'nvrtc')")
    if jitify:
        raise ValueError(f"{who}: jitify=True is not supported; compile with jitify=False")


# a (qualified, maybe templated) name: NVRTC gets its address, "&name"
_PLAIN_NAME = re.compile(r"\s*(::)?[A-Za-z_]\w*(::[A-Za-z_]\w*)*\s*(<.*>)?\s*$", re.S)


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
        """(image bytes, lowered names) of the source for sm_<arch>; needs NVRTC, not a GPU.
        NVRTC takes a name expression as the *address* of a kernel or variable: ``f<float>``
        decays to one for a kernel, a variable template ``v<float>`` needs ``&v<float>``, so
        a plain (qualified, maybe templated) name goes in with a ``&`` (the same lowered name
        for a kernel) and the lowered names are keyed by the user's spelling."""
        given = self._name_expressions
        sent = ["&" + e if _PLAIN_NAME.match(e) else e for e in given]
        image, lowered = _k.compile(self.code, self._name, list(self._options), sent, arch)
        return image, {e: lowered[a] for e, a in zip(given, sent, strict=True) if a in lowered}

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
        """The ``__device__`` or ``__constant__`` variable `name` (an extern "C" name or one of
        the name expressions) of the module on the current device, as a MemoryPointer (CuPy's
        ``RawModule.get_global``): ``ember.asarray(ptr).view(dtype)`` is an array over it, and
        ``ptr.copy_from_host`` / ``copy_to_host`` fill and read it."""
        if not isinstance(name, str):
            raise TypeError(f"ember.RawModule.get_global: name must be a str, got {name!r}")
        _require_cuda("ember.RawModule.get_global")
        device = _current_device("ember.RawModule.get_global")
        m = self._module(device)
        ptr, size = _k.module_global(m, device, self._lowered[device].get(name, name))
        return MemoryPointer(ptr, size, device, self)


class MemoryPointer:
    """Device memory that ember did not allocate (a module's global variable), as CuPy's
    MemoryPointer: `ptr`, `size` (bytes), `device_id`, the copy methods, and a
    ``__cuda_array_interface__`` of its bytes (so ``ember.asarray`` views it without a copy).
    It keeps its owner (the module) alive."""

    def __init__(self, ptr, size, device_id, owner=None):
        self.ptr, self.size, self.device_id, self._owner = int(ptr), int(size), device_id, owner

    def __int__(self):
        return self.ptr

    def __repr__(self):
        return f"<ember.MemoryPointer 0x{self.ptr:x} ({self.size} bytes) on cuda:{self.device_id}>"

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": (self.size,),
            "typestr": "|u1",
            "data": (self.ptr, False),
            "version": 3,
            "strides": None,
            "stream": None,
        }

    def _bytes(self, size, who):
        if size is None:
            size = self.size
        if not isinstance(size, (int, np.integer)) or not 0 <= size <= self.size:
            raise ValueError(
                f"ember.MemoryPointer.{who}: size must be an int in [0, {self.size}], got {size!r}"
            )
        from .._array import asarray

        return asarray(self)[: int(size)], int(size)

    @staticmethod
    def _host_bytes(mem, size, who):
        a = np.frombuffer(mem, dtype=np.uint8) if isinstance(mem, (bytes, bytearray)) else mem
        a = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
        if a.size < size:
            raise ValueError(
                f"ember.MemoryPointer.{who}: the host buffer has {a.size} bytes, {size} asked"
            )
        return a

    def copy_from_host(self, mem, size=None):
        """Copies `size` bytes (default: all) from a host buffer (NumPy array, bytes)."""
        dst, size = self._bytes(size, "copy_from_host")
        dst[...] = self._host_bytes(mem, size, "copy_from_host")[:size]

    def copy_to_host(self, mem, size=None):
        """Copies `size` bytes (default: all) into a writable host NumPy array."""
        src, size = self._bytes(size, "copy_to_host")
        if not isinstance(mem, np.ndarray) or not mem.flags.c_contiguous:
            raise TypeError("ember.MemoryPointer.copy_to_host: mem must be a C-contiguous ndarray")
        self._host_bytes(mem, size, "copy_to_host")[:size] = src.get()

    def copy_from_device(self, src, size=None):
        """Copies `size` bytes (default: all) from an ember array or another MemoryPointer."""
        from .._array import asarray

        dst, size = self._bytes(size, "copy_from_device")
        dst[...] = asarray(src).reshape(-1).view(np.uint8)[:size]

    def memset(self, value, size=None):
        """Sets `size` bytes (default: all) to `value` (0..255)."""
        dst, _ = self._bytes(size, "memset")
        dst.fill(int(value))


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
