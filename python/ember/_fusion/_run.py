"""Running a traced fused function: per-call scalar values (and the checks eager ember makes on
them), the broadcast shape and strides, and the launch: the host program through the host C++
compiler of ember.cuda.jit's CPU mode, or the CUDA kernels through RawKernel's NVRTC path."""

from __future__ import annotations

import ctypes
import hashlib
import math
import os
import subprocess
import tempfile
import threading

import numpy as np

from .. import _core
from . import _codegen

_lock = threading.Lock()
_host_libs = {}  # source hash -> (ctypes library) or an Exception (no compiler / failed)


class Eager(Exception):
    """This call runs eagerly (a value eager ember treats specially, or no host compiler)."""


# ---- scalar values -------------------------------------------------------------------------------


def eval_scalars(plan, args):
    """{node id: value} of the plan's scalar nodes for this call (Python's or ember's own
    arithmetic on the actual values, as the unfused function computes them)."""
    vals = {}
    for n in plan.scalar_nodes:
        if n.kind == "param":
            v = args[n.index]
        elif n.kind == "const":
            v = n.value
        else:
            v = n.fn(*[vals[m.id] for m in n.inputs])
        if n.weak is not None:
            if type(v) is not n.weak:
                raise Eager("a scalar changed type")
        else:
            dt = getattr(v, "dtype", None)
            if dt is None or dt.name != n.dtype:
                raise Eager("a scalar changed dtype")
        vals[n.id] = v
    return vals


def _strong_bits(v, dtype):
    """A strong scalar's value as NumPy holds it (bfloat16: its bits as uint16)."""
    if isinstance(v, _core.ndarray):
        if str(v.device) == "cpu":
            return np.array(v._numpy_view()).reshape(())
        from .._array import asnumpy

        return np.asarray(asnumpy(v)).reshape(())  # a device scalar read back (explicit)
    return np.asarray(v).reshape(())


_IINFO = {}


def slot_values(plan, vals):
    """The slots' values in their carrier types (NumPy scalars), with eager ember's checks: a
    Python int out of the loop type's range (OverflowError, or a widened comparison) and
    integer powers with negative exponents run eagerly, so they raise or widen as eager does."""
    out = []
    for s in plan.slots:
        v = vals[s.node.id]
        if s.weak is None:
            b = _strong_bits(v, s.carrier)
        elif s.weak is int:
            c = s.carrier
            lo, hi = _IINFO.get(c) or _IINFO.setdefault(c, (np.iinfo(c).min, np.iinfo(c).max))
            if not lo <= v <= hi:
                raise Eager("a Python int beyond the loop type")
            b = np.array(v, dtype=c)
        else:
            b = np.array(v, dtype={"bool": np.bool_, "float64": np.float64}.get(s.carrier, "c16"))
        out.append(b.reshape(()))
    for n in plan.selectors:
        e, t = vals[n.inputs[1].id], n.inputs[0].dtype
        q = 0
        if n.inputs[1].weak is float and e == 0.5 and t.startswith(("float", "bfloat")):
            q = 2
        elif t != "bool" and (
            (n.inputs[1].weak is int and e == 2) or (n.inputs[1].weak is float and e == 2.0)
        ):
            q = 1 if (n.inputs[1].weak is int or t[0] in "fbc") else 0
        out.append(np.array(q, dtype=np.int32))
    for _n, e in plan.pow_checks:
        if not e.array:
            v = vals[e.id]
            if e.weak is int or (e.weak is None and e.dtype[0] == "i"):
                if int(_strong_bits(v, None) if e.weak is None else v) < 0:
                    raise Eager("a negative integer power")
    return out


# ---- shapes -------------------------------------------------------------------------------------


def elem_strides(a, shape):
    """Element strides of array `a` broadcast to `shape` (0 along broadcast dimensions)."""
    nd, k = len(shape), a.ndim
    st = []
    item = a.itemsize
    for d in range(nd):
        j = d - (nd - k)
        if j < 0 or (a.shape[j] == 1 and shape[d] != 1):
            st.append(0)
        else:
            st.append(a.strides[j] // item)
    return st


def collapse(shape, strides):
    from .._kernels._launch import _collapse

    if not shape:
        return [1], [[0] for _ in strides]
    cs, cst = _collapse(list(shape), strides)
    if not cs:
        return [1], [[0] for _ in strides]
    return list(cs), [list(x) for x in cst]


def _addr(a):
    return _core._kernels.data_ptr(a)


# ---- the host ------------------------------------------------------------------------------------


def host_library(plan):
    """The compiled host program of a plan (cached by source), or raises Eager without a host
    compiler (the caller then runs the DAG eagerly)."""
    lib = plan.host_lib
    if lib is not None:
        return lib
    from ..cuda import _host

    src = _codegen.host_source(plan)
    key = hashlib.sha256(src.encode()).hexdigest()[:32]
    with _lock:
        lib = _host_libs.get(key)
        if lib is None:
            cxx = _host.compiler()
            try:
                if cxx is None:
                    raise Eager("no host C++ compiler")
                lib = _build(cxx, src, key, _host._cache_dir())
            except Eager as e:
                lib = e
            _host_libs[key] = lib
    if isinstance(lib, Exception):
        raise Eager(str(lib))
    plan.host_lib = lib
    return lib


def _x86_64_v3():
    """Whether this CPU runs the x86-64-v3 clones of ember's CPU loops (AVX2, FMA, ...): the
    fused host code is then compiled for it too, so it rounds as they do (GCC's complex
    multiplication uses FMA there); floating-point contraction stays off (ISO mode), as in
    ember's own build."""
    import platform

    if platform.machine() not in ("x86_64", "AMD64"):
        return False
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    have = set(line.split(":", 1)[1].split())
                    return {"avx2", "fma", "bmi1", "bmi2", "f16c", "movbe", "abm"} <= have
    except OSError:
        pass
    return False


def _build(cxx, src, key, d):
    flags = ["-std=c++20", "-O2", "-fvect-cost-model=dynamic", "-fPIC", "-pthread", "-w"]
    flags.append("-ffp-contract=off")
    if _x86_64_v3():
        flags.append("-march=x86-64-v3")
    src = src.replace(_codegen.HOST_PRELUDE, f'#include "{_prelude_header(cxx, flags, d)}"\n')
    key = hashlib.sha256((cxx + " ".join(flags) + src).encode()).hexdigest()[:32]
    lib = os.path.join(d, f"fuse-{key}.so")
    if not os.path.exists(lib):
        with tempfile.TemporaryDirectory(dir=d) as tmp:
            cpp = os.path.join(tmp, "fused.cpp")
            with open(cpp, "w") as f:
                f.write(src)
            out = os.path.join(tmp, "fused.so")
            r = subprocess.run(
                [cxx, *flags, "-shared", "-I", os.path.join(d, "include"), cpp, "-o", out],
                capture_output=True,
                text=True,
            )
            if r.returncode != 0:
                import warnings

                warnings.warn(
                    "ember.fuse: the host compiler failed on a fused function (a bug in ember: "
                    "please report it); it runs eagerly instead\n" + r.stderr[-3000:],
                    RuntimeWarning,
                    stacklevel=4,
                )
                raise Eager("the host compiler failed")
            os.replace(out, lib)
    return ctypes.CDLL(lib)


def _prelude_header(cxx, flags, d):
    """The host prelude as a header in the cache's include folder, precompiled once (GCC's
    .gch: a fused function then compiles in ~0.4 s instead of ~1 s); its name, or the plain
    header's when precompiling fails (the compiler then reads the text)."""
    text = _codegen.HOST_PRELUDE
    h = hashlib.sha256((cxx + " ".join(flags) + text).encode()).hexdigest()[:16]
    name = f"fz_prelude_{h}.hpp"
    path = os.path.join(d, "include", name)
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    gch = path + ".gch"
    if not os.path.exists(gch) and not os.path.exists(gch + ".failed"):
        tmp = f"{gch}.{os.getpid()}.tmp"
        r = subprocess.run(
            [cxx, *flags, "-I", os.path.join(d, "include"), "-x", "c++-header", path, "-o", tmp],
            capture_output=True,
        )
        if r.returncode == 0:
            os.replace(tmp, gch)
        else:
            open(gch + ".failed", "w").close()
    return name


def _ptrs(values):
    """A void* array of the (0-d NumPy) values' addresses, and what keeps them alive."""
    arr = (ctypes.c_void_p * max(len(values), 1))(
        *[v.__array_interface__["data"][0] for v in values]
    )
    return arr, values


def _ll(xs):
    return (ctypes.c_longlong * max(len(xs), 1))(*xs)


_WORKERS = os.cpu_count() or 1
_WORKERS_C = ctypes.c_int(_WORKERS)


def host_map(plan, arrays, outs, shape, scalars):
    """Runs the elementwise host program; returns ``again(arrays, outs, scalars)``, which runs
    it for other arrays of the same shapes and strides with the geometry worked out here."""
    lib = host_library(plan)
    ops = list(arrays) + list(outs)
    cs, cst = collapse(shape, [elem_strides(a, shape) for a in ops])
    flat = [x for st in cst for x in st]
    geo = (_ll(cs), _ll(flat), ctypes.c_int(len(cs)), ctypes.c_longlong(math.prod(cs)))
    fz_map, nops = lib.fz_map, len(ops)
    parr = ctypes.c_void_p * nops

    def again(arrays, outs, scalars):
        P = parr(*[_addr(a) for a in arrays], *[_addr(o) for o in outs])
        S, keep = _ptrs(scalars)
        fz_map(P, S, *geo, _WORKERS_C)
        del keep

    again(arrays, outs, scalars)
    return again


def reduce_geometry(arrays, shape, axes):
    """Kept and reduced (shape, per-array strides), each collapsed."""
    kept = [d for d in range(len(shape)) if d not in axes]
    full = [elem_strides(a, shape) for a in arrays]
    ks, kst = collapse([shape[d] for d in kept], [[s[d] for d in kept] for s in full])
    rs, rst = collapse([shape[d] for d in axes], [[s[d] for d in axes] for s in full])
    return ks, kst, rs, rst


def host_reduce(plan, arrays, out, shape, axes, scalars):
    """Runs the reduction's host program; returns ``again(arrays, out, scalars)`` (as
    host_map)."""
    lib = host_library(plan)
    ks, kst, rs, rst = reduce_geometry(arrays, shape, axes)
    nout = math.prod(shape[d] for d in range(len(shape)) if d not in axes)
    nred = math.prod(shape[d] for d in axes)
    geo = (_ll(ks), ctypes.c_int(len(ks)), _ll([x for s in kst for x in s]),
           _ll(rs), ctypes.c_int(len(rs)), _ll([x for s in rst for x in s]),
           ctypes.c_longlong(nout), ctypes.c_longlong(nred), ctypes.c_double(nred),
           _WORKERS_C)  # fmt: skip
    fz_reduce, parr = lib.fz_reduce, ctypes.c_void_p * (len(arrays) + 1)

    def again(arrays, out, scalars):
        P = parr(*[_addr(a) for a in arrays], _addr(out))
        S, keep = _ptrs(scalars)
        fz_reduce(P, S, *geo)
        del keep

    again(arrays, out, scalars)
    return again


# ---- CUDA ---------------------------------------------------------------------------------------

# --fmad=false: ptxas contracts a PTX mul.f32 + add.f32 into one FMA even across the empty asm
# barrier of fz_keep (the barrier only stops NVVM), so a fused a * b + 1 would round once where
# eager's two kernels round twice; ember's own kernels compile with the same flag.
OPTIONS = ("-std=c++17", "--fmad=false")


def _gpu_scalars(values):
    """Kernel arguments of the slot values (bfloat16 travels as its bits)."""
    return [v[()] if v.dtype != np.dtype("uint16") else np.uint16(v[()]) for v in values]


def cuda_map(plan, name, arrays, outs, shape, scalars, dev):
    """Launches the elementwise kernel; returns ``again(arrays, outs, scalars)``, which launches
    it for other arrays of the same shapes and strides with the geometry worked out here."""
    from .._kernels._args import _void
    from .._kernels._launch import _block_grid, _generated_function

    ops = list(arrays) + list(outs)
    cs, cst = collapse(shape, [elem_strides(a, shape) for a in ops])
    contiguous = len(cs) == 1 and all(s == [1] for s in cst)
    nd = 0 if contiguous else len(cs)
    n = math.prod(shape)
    # 32-bit index arithmetic when every element index and offset fits
    i32 = (
        bool(nd)
        and n < 2**31
        and all(sum((c - 1) * abs(x) for c, x in zip(cs, st, strict=True)) < 2**31 for st in cst)
    )
    src = plan.cuda_sources.get((name, nd, i32))
    if src is None:
        src = plan.cuda_sources[(name, nd, i32)] = _codegen.cuda_source(plan, name, nd, i32)
    geom = cs + [x for st in cst for x in st]
    tail = [_void(geom, np.int32 if i32 else np.int64)] if nd else []
    tail.append(np.int64(n))
    grid, block = _block_grid(n, 256, dev.index)
    fn = _generated_function(src, name, OPTIONS, dev.index)

    def again(arrays, outs, scalars):
        fn(grid, block, [*arrays, *outs, *_gpu_scalars(scalars), *tail], 0, None)

    again(arrays, outs, scalars)
    return again


def cuda_reduce(plan, name, arrays, out, shape, axes, scalars, dev):
    """Launches the reduction (and its second pass); returns ``again(arrays, out, scalars)`` for
    other arrays of the same shapes and strides (see cuda_map)."""
    from .._kernels._args import _void
    from .._kernels._launch import _generated_function, _reduction_grid

    ks, kst, rs, rst = reduce_geometry(arrays, shape, axes)
    nout = math.prod(shape[d] for d in range(len(shape)) if d not in axes)
    nred = math.prod(shape[d] for d in axes)
    src = plan.cuda_sources.get((name, len(ks), len(rs)))
    if src is None:
        src = _codegen.cuda_reduce_source(plan, name, len(ks), len(rs))
        plan.cuda_sources[(name, len(ks), len(rs))] = src
    sms = max(1, _reduction_grid(1 << 30, dev.index) // 32)
    # outputs adjacent in memory and slices that are not: the column kernel (coalesced)
    column = bool(arrays) and nout >= 8 and kst[0][-1] == 1 and rst[0][-1] != 1
    if column:
        ncb = -(-nout // 32)
        # enough blocks, and (with the kernel's 8-way unrolled loads) enough loads in flight,
        # to stream at memory speed: a few waves of 8 blocks per multiprocessor
        G = max(1, min(-(-16 * sms // ncb), -(-nred // 64)))
        grid = _reduction_grid(ncb * G, dev.index)
    else:
        per = _codegen.RBLOCK * 4
        G = 1 if nout >= 2 * sms else max(1, min(-(-4 * sms // nout), -(-nred // per)))
        grid = _reduction_grid(nout * G, dev.index)
    acc = plan.reduce.acc
    geom = _void(ks + [x for s in kst for x in s] + rs + [x for s in rst for x in s])
    tail = [geom, np.int64(nout), np.int64(nred), np.int64(G), np.float64(nred)]
    fn = _generated_function(src, name + ("_col" if column else ""), OPTIONS, dev.index)
    fin = _generated_function(src, name + "_fin", OPTIONS, dev.index) if G > 1 else None
    fin_grid = _reduction_grid(nout, dev.index)
    fin_tail = [np.int64(nout), np.int64(G), np.float64(nred)]
    nparts = nout * G if G > 1 else 1

    def again(arrays, out, scalars):
        part = _core.empty((nparts,), dtype=acc, device=dev)
        sc = _gpu_scalars(scalars)
        fn(grid, _codegen.RBLOCK, [*arrays, out, part, *sc, *tail], 0, None)
        if fin is not None:
            fin(fin_grid, _codegen.RBLOCK, [out, part, *sc, *fin_tail], 0, None)

    again(arrays, out, scalars)
    return again
