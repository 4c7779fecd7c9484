"""``ember.cuda.jit``: Numba's decorator on ember's compiler. A :class:`Dispatcher` holds the
Python function; each launch classifies its arguments (ember arrays on the CPU or a GPU, NumPy
arrays, CUDA arrays of other libraries, scalars), compiles one specialization per argument
type signature (cached in memory; NVRTC's cubins and the host's shared objects also on disk,
keyed by the generated source), and launches it on the GPU or, for CPU arrays, on the host.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import threading
import warnings

import numpy as np

from .. import _core
from . import _types as T  # noqa: N812
from ._frontend import FunctionCompiler, Source, TypingError

__all__ = ["Dispatcher", "jit"]

_ARRAY_TYPES = (_core.ndarray,)
_jit_launch = _core._kernels.jit_launch


class NumbaPerformanceWarning(UserWarning):
    """Numba's warning for host arrays passed to a GPU kernel (copied in and back)."""


def jit(func_or_sig=None, device=False, *, fastmath=False, cache=False, debug=False,
        lineinfo=False, opt=True, inline=False, max_registers=None, link=None, **kws):  # fmt: skip
    """Compiles a Python function into a GPU kernel (or a device function with device=True),
    as ``numba.cuda.jit``: ``@cuda.jit``, ``@cuda.jit(device=True)``, ``@cuda.jit("void(float32[:],
    float32[:])")``, ``@cuda.jit(fastmath=True)``. Launch kernels as ``kernel[grid, block](args)``
    or ``kernel[grid, block, stream, sharedmem](args)``; ``kernel.forall(n)(args)``. On CPU
    arrays (ember or NumPy, without a GPU) the kernel runs on the host with the GPU's semantics.
    """
    if kws:
        bad = ", ".join(sorted(kws))
        raise TypeError(f"ember.cuda.jit: unexpected keyword arguments: {bad}")
    if link:
        raise TypeError("ember.cuda.jit: link= (external PTX/CUDA files) is not supported")
    opts = dict(device=device, fastmath=fastmath, cache=cache, debug=debug, lineinfo=lineinfo)
    if callable(func_or_sig) and not isinstance(func_or_sig, (str, list, tuple)):
        return Dispatcher(func_or_sig, **opts)
    sigs = func_or_sig
    if sigs is not None and not isinstance(sigs, (list, tuple)):
        sigs = [sigs]

    def wrap(f):
        d = Dispatcher(f, **opts)
        for s in sigs or ():
            d._eager(s)
        return d

    return wrap


_SIG = re.compile(r"^\s*(\w+)\s*\((.*)\)\s*$")


def _parse_sig(sig):
    """(argument types, return type) of a Numba signature string: ``"void(float32[:], int64)"``,
    ``"float32(float32, float32)"``, ``"void(float64[:, :], float64[:, ::1])"``."""
    if not isinstance(sig, str):
        raise TypeError(
            f"ember.cuda.jit: signatures are strings like 'void(float32[:])', got {sig!r}"
        )
    m = _SIG.match(sig)
    if not m:
        raise ValueError(f"ember.cuda.jit: cannot parse the signature {sig!r}")
    ret, body = m.groups()
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    types = []
    for p in parts:
        p = p.strip()
        name = p.split("[", 1)[0].strip()
        dt = T.dtype_name(name)
        if dt is None:
            raise ValueError(f"ember.cuda.jit: unknown type {name!r} in the signature {sig!r}")
        if "[" in p:
            types.append(T.Array(dt, p.count(":")))
        else:
            types.append(T.Scalar(dt))
    rt = None if ret == "void" else T.dtype_name(ret)
    if ret != "void" and rt is None:
        raise ValueError(f"ember.cuda.jit: unknown return type {ret!r} in {sig!r}")
    return types, rt


class _Compiled:
    """One specialization: its generated C++ and what runs it (a RawKernel on the GPU, a shared
    object on the host)."""

    __slots__ = ("text", "name", "arg_types", "uses", "gpu", "host", "fastmath")

    def __init__(self, text, name, arg_types, uses, fastmath=False):
        self.text = text
        self.name = name
        self.arg_types = arg_types
        self.uses = uses
        self.gpu = {}
        self.host = None
        self.fastmath = fastmath


def dump_source(kind, name, text):
    """EMBER_DUMP_SOURCE=1: the generated source of a kernel on stderr, as ember's own kernels."""
    if os.environ.get("EMBER_DUMP_SOURCE", "0") not in ("", "0"):
        import sys

        print(f"--- ember: generated source of {name} ({kind}) ---\n{text}", file=sys.stderr)


class Dispatcher:
    """A function compiled with ``ember.cuda.jit``."""

    def __init__(self, pyfunc, *, device=False, fastmath=False, cache=False, debug=False,
                 lineinfo=False):  # fmt: skip
        functools.update_wrapper(self, pyfunc)
        self.py_func = pyfunc
        self.device = bool(device)
        self.fastmath = bool(fastmath)
        self.cache = bool(cache)
        self.debug = bool(debug)
        self._source = None
        self._lock = threading.RLock()
        self._specs = {}  # (arg types, target) -> _Compiled
        self._fast = None  # (RawKernel, plan, NumPy scalar types) of the last GPU launch
        self._launchers = {}  # launch configuration -> _Launcher
        self._device_specs = {}  # arg types -> (C++ text, C++ name, return type, uses, deps)

    # ---- compilation -------------------------------------------------------------------------

    def _src(self):
        if self._source is None:
            self._source = Source(self.py_func)
        return self._source

    def _eager(self, sig):
        types, _ = _parse_sig(sig)
        if self.device:
            self._device_spec(tuple(types), None)
        else:
            self._compile(tuple(types))

    def _device_spec(self, types, node, stack=()):
        """(text, cname, return type, uses, dependencies in order) of this device function for
        argument types `types`."""
        key = tuple(types)
        hit = self._device_specs.get(key)
        if hit is not None:
            return hit
        if self in stack:
            raise TypingError(f"{self._src().filename}: {self.__name__}: recursive device "
                              "functions are not supported")  # fmt: skip
        deps = []
        uses = set()

        def resolve(disp, arg_types, call_node):
            text, cname, ret, u, d = disp._device_spec(tuple(arg_types), call_node, stack + (self,))
            for item in d + [(disp, tuple(arg_types))]:
                if item not in deps:
                    deps.append(item)
            uses.update(u)
            return cname, ret

        cname = f"ej_dev_{_ident(self.__name__)}_{len(self._device_specs)}_{id(self) & 0xFFFF:x}"
        fc = FunctionCompiler(self._src(), types, kernel=False, resolve_device=resolve,
                              fastmath=self.fastmath)  # fmt: skip
        text, ret = fc.compile(cname)
        uses |= fc.uses
        text = "\n".join(fc.shared) + ("\n" if fc.shared else "") + text
        spec = (text, cname, ret, uses, deps)
        self._device_specs[key] = spec
        return spec

    def _compile(self, types):
        key = tuple(types)
        with self._lock:
            hit = self._specs.get(key)
            if hit is not None:
                return hit
            deps = []
            uses = set()

            def resolve(disp, arg_types, call_node):
                text, cname, ret, u, d = disp._device_spec(tuple(arg_types), call_node, (self,))
                for item in d + [(disp, tuple(arg_types))]:
                    if item not in deps:
                        deps.append(item)
                uses.update(u)
                return cname, ret

            name = f"ej_{_ident(self.__name__)}"
            fc = FunctionCompiler(self._src(), types, kernel=True, resolve_device=resolve,
                                  fastmath=self.fastmath)  # fmt: skip
            body, _ = fc.compile(name + "_body")
            uses |= fc.uses
            parts = []
            for disp, at in deps:
                parts.append(disp._device_specs[at][0])
            parts += fc.shared
            parts.append(body)
            c = _Compiled("\n".join(parts), name, key, uses, self.fastmath)
            self._specs[key] = c
            return c

    def inspect_source(self, signature=None):
        """The generated C++ of each compiled specialization (or of the one for `signature`, a
        tuple of argument types as the dispatcher keys them)."""
        if signature is not None:
            return self._specs[signature].text
        return {k: v.text for k, v in self._specs.items()}

    @property
    def signatures(self):
        """The argument type signatures compiled so far."""
        return list(self._specs) if not self.device else list(self._device_specs)

    # ---- launching -------------------------------------------------------------------------------

    def __getitem__(self, config):
        hit = self._launchers.get(config) if type(config) is tuple else None
        if hit is not None:
            return hit
        launcher = self._configure(config)
        if type(config) is tuple and len(self._launchers) < 64:
            try:
                self._launchers[config] = launcher
            except TypeError:  # an unhashable stream object
                pass
        return launcher

    def _configure(self, config):
        if self.device:
            raise TypeError(f"{self.__name__} is a device function: call it from a kernel")
        if not isinstance(config, tuple):
            config = (config,)
        if not 2 <= len(config) <= 4:
            raise ValueError(
                f"{self.__name__}[...]: the launch configuration is [griddim, blockdim] or "
                f"[griddim, blockdim, stream, sharedmem], got {len(config)} items"
            )
        grid, block = _dim3(config[0], "griddim"), _dim3(config[1], "blockdim")
        stream = config[2] if len(config) > 2 else 0
        shared = config[3] if len(config) > 3 else 0
        if isinstance(shared, bool) or not isinstance(shared, (int, np.integer)) or shared < 0:
            raise ValueError(f"{self.__name__}: sharedmem must be a byte count, got {shared!r}")
        return _Launcher(self, grid, block, stream, int(shared))

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """A launcher of `ntasks` threads: ``kernel.forall(n)(args)`` (blocks of `tpb` threads,
        256 when 0)."""
        if isinstance(ntasks, bool) or not isinstance(ntasks, (int, np.integer)) or ntasks < 0:
            raise ValueError(f"{self.__name__}.forall: ntasks must be an int >= 0, got {ntasks!r}")
        tpb = int(tpb) or 256
        blocks = max(1, (int(ntasks) + tpb - 1) // tpb)
        return self[blocks, tpb, stream, sharedmem]

    def __call__(self, *args, **kwargs):
        if self.device:
            raise TypeError(
                f"{self.__name__} is a device function: it can only be called from a kernel "
                "or another device function"
            )
        raise ValueError(
            f"{self.__name__}: kernel launch configuration was not specified: launch it as "
            f"{self.__name__}[griddim, blockdim](...)"
        )

    def __repr__(self):
        kind = "device function" if self.device else "kernel"
        return f"<ember.cuda.jit {kind} {self.__qualname__}>"


def _ident(name):
    return re.sub(r"\W", "_", name)


def _dim3(v, what):
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        t = (int(v), 1, 1)
    elif (
        isinstance(v, (tuple, list))
        and 1 <= len(v) <= 3
        and all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in v)
    ):
        t = tuple(int(x) for x in v) + (1,) * (3 - len(v))
    else:
        raise ValueError(
            f"ember.cuda.jit: {what} must be an int or a tuple of 1 to 3 ints, got {v!r}"
        )
    if any(x < 1 for x in t):
        raise ValueError(f"ember.cuda.jit: {what} must be positive, got {v!r}")
    return t


class _Arg:
    """One launch argument, classified."""

    __slots__ = ("type", "value", "host_copy", "device")

    def __init__(self, typ, value, device=None, host_copy=None):
        self.type = typ
        self.value = value
        self.device = device
        self.host_copy = host_copy


def _classify(name, args):
    """(types, args, target) for a launch: target 'cuda:N' or 'cpu'."""
    out = []
    devices = set()
    numpy_arrays = False
    for i, a in enumerate(args):
        if isinstance(a, _core.ndarray):
            dev = str(a.device)
            devices.add("cpu" if dev == "cpu" else dev)
            out.append(_Arg(T.Array(a.dtype.name, a.ndim), a, dev))
            continue
        if isinstance(a, np.ndarray):
            if T.dtype_name(a.dtype) is None:
                raise TypeError(f"{name}: argument {i}: unsupported dtype {a.dtype}")
            numpy_arrays = True
            out.append(_Arg(T.Array(a.dtype.name, a.ndim), a, None))
            continue
        if hasattr(a, "__cuda_array_interface__") or (
            hasattr(a, "__dlpack__") and not isinstance(a, (int, float, complex, bool, np.generic))
        ):
            from .. import _array

            e = _array.asarray(a)
            dev = str(e.device)
            devices.add("cpu" if dev == "cpu" else dev)
            out.append(_Arg(T.Array(e.dtype.name, e.ndim), e, dev))
            continue
        t = T.of_value(a)
        if t is None:
            raise TypeError(
                f"{name}: argument {i} of type {type(a).__name__} is not supported (kernels take "
                "arrays and numbers)"
            )
        out.append(_Arg(t, a))
    if len(devices) > 1:
        raise ValueError(f"{name}: the arrays are on different devices: {sorted(devices)}")
    if devices:
        target = devices.pop()
    elif numpy_arrays and _core._cuda.is_available() and not _force_cpu():
        target = f"cuda:{_core._cuda.current_device()}"
    else:
        target = "cpu"
    return out, target


def _force_cpu():
    return os.environ.get("EMBER_JIT_TARGET", "").lower() == "cpu"


class _Launcher:
    __slots__ = ("disp", "grid", "block", "stream", "shared")

    def __init__(self, disp, grid, block, stream, shared):
        self.disp = disp
        self.grid = grid
        self.block = block
        self.stream = stream or None
        self.shared = shared

    def __call__(self, *args):
        d = self.disp
        fast = d._fast
        if fast is not None and _jit_launch(
            fast[0], self.grid, self.block, self.shared, self.stream, args, *fast[1:]
        ):
            return
        src = d._src()
        if len(args) != len(src.params):
            raise TypeError(
                f"{d.__name__}() takes {len(src.params)} argument"
                f"{'s' if len(src.params) != 1 else ''}, got {len(args)}"
            )
        classified, target = _classify(d.__name__, args)
        types = tuple(a.type for a in classified)
        compiled = d._compile(types)
        if target == "cpu":
            from . import _host

            _host.launch(compiled, classified, self.grid, self.block, self.shared, d)
            return
        _launch_gpu(compiled, classified, target, self)


# ---- GPU ---------------------------------------------------------------------------------------


def _gpu_source(c):
    """The CUDA source of a compiled specialization: runtime headers, the body, the kernel."""
    from . import _runtime

    params, unpack, call = [], [], []
    for i, t in enumerate(c.arg_types):
        if isinstance(t, T.Array):
            n = max(t.ndim, 1)
            params.append(f"{t.elem.ctype}* a{i}_d")
            params += [f"long long a{i}_s{k}" for k in range(n)]
            params += [f"long long a{i}_t{k}" for k in range(n)]
            sh = ", ".join(f"a{i}_s{k}" for k in range(n))
            st = ", ".join(f"a{i}_t{k}" for k in range(n))
            unpack.append(f"    {t.ctype} a{i}{{a{i}_d, {{{sh}}}, {{{st}}}}};")
            call.append(f"a{i}")
        else:
            params.append(f"{t.ctype} s{i}")
            call.append(f"s{i}")
    complex_used = "complex" in c.text or any(
        isinstance(t, T.Scalar) and t.kind == "c" or isinstance(t, T.Array) and
        np.dtype(t.dtype).kind == "c" for t in c.arg_types
    )  # fmt: skip
    head = "#define EMBER_DEVICE_COMPLEX 1\n#define EJ_COMPLEX 1\n" if complex_used else ""
    grid_word = "__device__ unsigned int ej_grid_barrier_word;\n" if "grid_sync" in c.uses else ""
    return (
        head + _runtime.DEVICE + _runtime.DEVICE_TAIL + _runtime.COMMON + grid_word + c.text +
        f'\nextern "C" __global__ void {c.name}({", ".join(params)}) {{\n' +
        "\n".join(unpack) + f"\n    {c.name}_body({', '.join(call)});\n}}\n"
    )  # fmt: skip


def _launch_gpu(c, classified, target, launcher):
    from .. import _array
    from .._kernels import RawModule

    dev = int(target.split(":")[1])
    k = c.gpu.get(dev)
    if k is None:
        src = _gpu_source(c)
        dump_source("ember.cuda.jit, CUDA", c.name, src)
        opts = ("-std=c++17", "--use_fast_math") if c.fastmath else ("-std=c++17",)
        mod = RawModule(code=src, options=opts)
        k = mod.get_function(c.name)
        c.gpu[dev] = k
    k._function()  # loaded on this device, for the C++ launch
    args, copies = [], []
    for a in classified:
        x = a.value
        if isinstance(a.type, T.Array) and not isinstance(x, _core.ndarray):
            if isinstance(x, np.ndarray):
                warnings.warn(
                    "Host array used in CUDA kernel will incur copy overhead to/from device.",
                    NumbaPerformanceWarning,
                    stacklevel=3,
                )
                dx = _array.asarray(x, device=target)
                if x.flags.writeable:
                    copies.append((x, dx))
                x = dx
        elif isinstance(a.type, T.Scalar) and not isinstance(x, (bool, int, float, complex)):
            x = np.dtype(a.type.name).type(x)
        args.append(x)
    plan = _core._kernels.jit_plan(tuple(args))
    if plan is None:
        raise TypeError(f"ember.cuda.jit: {c.name[3:]}: an argument cannot be passed to the GPU")
    coop = "grid_sync" in c.uses
    if not _jit_launch(k, launcher.grid, launcher.block, launcher.shared, launcher.stream,
                       tuple(args), plan[0], plan[1], coop):  # fmt: skip
        raise RuntimeError(f"ember.cuda.jit: {c.name[3:]}: the launch did not match its plan")
    for host, dx in copies:
        host[...] = _array.asnumpy(dx)
    # The next launch with arguments of these kinds goes straight to C++.
    launcher.disp._fast = None if copies else (k, plan[0], plan[1], coop)


def _source_hash(text):
    return hashlib.sha256(text.encode()).hexdigest()[:32]
