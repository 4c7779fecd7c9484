"""The CPU mode of ember's Python kernels: the generated C++ compiled for the host by the
system's C++ compiler (``$CXX``, else ``c++``, ``g++`` or ``clang++``) into a shared object
cached on disk, loaded with ctypes and run over the grid: blocks in parallel on the host's
cores; within a block, GPU threads as fibers when the kernel uses barriers, warp functions or
grid sync (so they behave as on the GPU), else a plain loop.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading

import numpy as np

from .. import _core
from . import _types as T  # noqa: N812

_lock = threading.Lock()
_loaded = {}  # source hash -> ctypes function

_CTYPES = {
    "bool": ctypes.c_bool,
    "int8": ctypes.c_int8,
    "int16": ctypes.c_int16,
    "int32": ctypes.c_int32,
    "int64": ctypes.c_int64,
    "uint8": ctypes.c_uint8,
    "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64,
    "float16": ctypes.c_uint16,
    "float32": ctypes.c_float,
    "float64": ctypes.c_double,
    "complex64": ctypes.c_float * 2,
    "complex128": ctypes.c_double * 2,
}


class HostCompilerError(RuntimeError):
    """The host's C++ compiler failed on (or is missing for) a kernel's CPU mode."""


def compiler():
    """The host C++ compiler's path, or None."""
    cxx = os.environ.get("CXX")
    if cxx:
        return shutil.which(cxx) or cxx
    for c in ("c++", "g++", "clang++"):
        p = shutil.which(c)
        if p:
            return p
    return None


def _cache_dir():
    base = os.environ.get("EMBER_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ember"
    )
    d = os.path.join(base, "jit-cpu")
    os.makedirs(os.path.join(d, "include", "ember", "ops"), exist_ok=True)
    for name in ("ember/half.hpp", "ember/ops/scalar.hpp"):
        text = _core._kernels.embedded_header(name)
        path = os.path.join(d, "include", name)
        try:
            with open(path) as f:
                if f.read() == text:
                    continue
        except OSError:
            pass
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    return d


def host_source(c):
    """The host C++ of a compiled specialization."""
    from . import _runtime

    unpack, call = [], []
    k = 0
    for i, t in enumerate(c.arg_types):
        if isinstance(t, T.Array):
            n = max(t.ndim, 1)
            el = t.elem.ctype
            sh = ", ".join(f"*(long long*)args[{k + 1 + j}]" for j in range(n))
            st = ", ".join(f"*(long long*)args[{k + 1 + n + j}]" for j in range(n))
            unpack.append(f"    {t.ctype} a{i}{{*({el}**)args[{k}], {{{sh}}}, {{{st}}}}};")
            k += 1 + 2 * n
        else:
            unpack.append(f"    {t.ctype} a{i} = *({t.ctype}*)args[{k}];")
            k += 1
        call.append(f"a{i}")
    entry = (
        "static void ej_entry(void* const* args) {\n" + "\n".join(unpack) +
        f"\n    {c.name}_body({', '.join(call)});\n}}\n"
        'extern "C" __attribute__((visibility("default"))) int ej_launch(void* const* args, '
        "const long long* dims, long long shared, int mode, long long stack, int workers, "
        "char* err, int errlen) {\n"
        "    return ej::launch(&ej_entry, args, dims, shared, mode, stack, workers, err,\n"
        "                      errlen);\n}\n"
    )  # fmt: skip
    return (
        "#define EJ_COMPLEX 1\n" + _runtime.HOST + _runtime.HOST_TAIL + _runtime.COMMON + c.text +
        "\n" + _runtime.HOST_SCHEDULER + entry
    )  # fmt: skip


def _build(c, fastmath):
    cxx = compiler()
    if cxx is None:
        raise HostCompilerError(
            "ember.cuda.jit: running a kernel on the CPU needs a C++ compiler (set CXX, or "
            "install g++ or clang++); or pass GPU arrays to run it on the GPU"
        )
    src = host_source(c)
    from ._jit import dump_source

    dump_source("ember.cuda.jit, host", c.name, src)
    flags = ["-std=c++20", "-O2", "-shared", "-fPIC", "-pthread", "-w"]
    if fastmath:
        flags.append("-ffast-math")
    key = hashlib.sha256((cxx + " ".join(flags) + src).encode()).hexdigest()[:32]
    fn = _loaded.get(key)
    if fn is not None:
        return fn
    d = _cache_dir()
    lib = os.path.join(d, f"{key}.so")
    if not os.path.exists(lib):
        with tempfile.TemporaryDirectory(dir=d) as tmp:
            cpp = os.path.join(tmp, "kernel.cpp")
            with open(cpp, "w") as f:
                f.write(src)
            out = os.path.join(tmp, "kernel.so")
            r = subprocess.run(
                [cxx, *flags, "-I", os.path.join(d, "include"), cpp, "-o", out],
                capture_output=True,
                text=True,
            )
            if r.returncode != 0:
                raise HostCompilerError(
                    f"ember.cuda.jit: the host compiler failed on the CPU version of "
                    f"{c.name[3:]} (a bug in ember: please report it with this log)\n"
                    f"{r.stderr[-4000:]}"
                )
            os.replace(out, lib)
    so = ctypes.CDLL(lib)
    f = so.ej_launch
    f.restype = ctypes.c_int
    f.argtypes = [
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.POINTER(ctypes.c_longlong),
        ctypes.c_longlong,
        ctypes.c_int,
        ctypes.c_longlong,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
    ]
    _loaded[key] = f
    return f


def _array_parts(x):
    """(data address, shape, element strides) of a CPU ember array or a NumPy array."""
    if isinstance(x, _core.ndarray):
        if str(x.device) != "cpu":
            raise ValueError("ember.cuda.jit: a GPU array in a CPU launch")
        v = x._numpy_view()
    else:
        v = x
    item = v.itemsize
    addr = v.__array_interface__["data"][0]
    return addr, v.shape, tuple(s // item for s in v.strides)


def launch(c, classified, grid, block, shared, disp=None):
    """Runs the compiled specialization `c` on the host: compiled by the host's C++ compiler, or
    interpreted (``_simulator.py``) without one or with ``EMBER_JIT_CPU=interpret``."""
    if disp is not None and (
        os.environ.get("EMBER_JIT_CPU", "").lower() == "interpret" or compiler() is None
    ):
        from . import _simulator

        _simulator.run(disp, c, classified, grid, block, shared)
        return
    with _lock:
        if c.host is None:
            c.host = _build(c, fastmath=c.fastmath)
    f = c.host
    keep = []
    ptrs = []
    for a in classified:
        if isinstance(a.type, T.Array):
            addr, shape, strides = _array_parts(a.value)
            vals = [ctypes.c_void_p(addr)]
            vals += [ctypes.c_longlong(s) for s in (shape or (1,))]
            vals += [ctypes.c_longlong(s) for s in (strides or (0,))]
        else:
            ct = _CTYPES[a.type.name]
            if a.type.name == "float16":
                v = ct(int(np.float16(a.value).view(np.uint16)))
            elif a.type.kind == "c":
                z = complex(a.value)
                v = ct(z.real, z.imag)
            else:
                v = ct(np.dtype(a.type.name).type(a.value).item())
            vals = [v]
        keep += vals
        ptrs += [ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals]
    args = (ctypes.c_void_p * max(len(ptrs), 1))(*[p.value for p in ptrs])
    dims = (ctypes.c_longlong * 6)(*grid, *block)
    mode = 2 if "grid_sync" in c.uses else 1 if c.uses & {"barrier", "warp"} else 0
    stack = int(os.environ.get("EMBER_JIT_CPU_STACK", 1 << 18))
    workers = os.cpu_count() or 1
    err = ctypes.create_string_buffer(1024)
    rc = f(args, dims, shared, mode, stack, workers, err, len(err))
    del keep
    if rc:
        raise RuntimeError(f"ember.cuda.jit: {c.name[3:]} on the CPU: {err.value.decode()}")
