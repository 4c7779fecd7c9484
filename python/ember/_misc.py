"""What fits no other topic (NumPy's "Miscellaneous routines"): memory ranges
(shares_memory, may_share_memory) and what ember was built with and runs on (show_config,
show_runtime)."""

from __future__ import annotations

import operator

import numpy as _np

from . import _core
from . import cuda as _cuda

__all__ = [
    "may_share_memory",
    "shares_memory",
    "show_config",
    "show_runtime",
]


# ---- memory ranges --------------------------------------------------------------------------


def _extent(x):
    base, off = _core._memory_base(x)
    lo = hi = off
    for n, s in zip(x.shape, x.strides, strict=True):
        if n == 0:
            return base, off, off  # no bytes at all
        if s > 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return base, lo, hi + x.itemsize


def may_share_memory(a, b, max_work=None):
    """Whether the byte ranges of two arrays overlap (may share memory)."""
    if not isinstance(a, _core.ndarray) or not isinstance(b, _core.ndarray):
        return False
    ba, la, ha = _extent(a)
    bb, lb, hb = _extent(b)
    return ba == bb and la < hb and lb < ha and la < ha and lb < hb


_MAX_EXACT = 1 << 22  # elements enumerated by shares_memory's exact answer


def shares_memory(a, b, max_work=None):
    """Whether two arrays have a byte in common (exactly: their elements' byte ranges are
    compared; ValueError when that would take more than max_work elements)."""
    if not may_share_memory(a, b):
        return False
    limit = _MAX_EXACT if max_work is None else operator.index(max_work)
    if a.size + b.size > limit:
        raise ValueError(
            f"ember.shares_memory: deciding needs more than max_work={limit} elements of work"
        )
    _, oa = _core._memory_base(a)
    _, ob = _core._memory_base(b)

    def starts(x, off):
        s = _np.full((1,) * x.ndim, off, dtype=_np.int64)
        for k, (n, st) in enumerate(zip(x.shape, x.strides, strict=True)):
            shape = [1] * x.ndim
            shape[k] = n
            s = s + (_np.arange(n, dtype=_np.int64) * st).reshape(shape)
        return _np.unique(s.reshape(-1))

    sa, sb = starts(a, oa), starts(b, ob)
    # element j of b overlaps some element of a when a starts in (start_b - size_a, start_b +
    # size_b)
    i = _np.searchsorted(sa, sb - a.itemsize, side="right")
    ok = i < sa.size
    return bool(_np.any(sa[_np.minimum(i, sa.size - 1)][ok] < (sb + b.itemsize)[ok]))


# ---- configuration --------------------------------------------------------------------------


def _convolution_line():
    """How GPU convolutions run: cuDNN when it loads, else the notice of the fallback."""
    from .nn import _cudnn

    v = _cudnn.version()
    if v:
        return f"cuDNN {v // 10000}.{v // 100 % 100}.{v % 100}"
    return f"ember's im2col + cuBLAS (cuDNN not found: {_cudnn.load_error()})"


def _config():
    b = _core._build_info()
    cuda = {
        "available": _cuda.is_available(),
        "unavailable_reason": _cuda.unavailable_reason(),
        "driver_version": b["cuda_driver_version"],
        "nvrtc_version": ".".join(map(str, b["nvrtc_version"])) if b["nvrtc_version"] else None,
        "kernel_cache_dir": _cuda.kernel_cache_dir(),
        "convolution": _convolution_line(),
    }
    if not b["nvrtc_version"]:
        cuda["nvrtc_unavailable_reason"] = b["nvrtc_unavailable_reason"]
    return {
        "ember": {"version": _core.__version__, "numpy": _np.__version__},
        "Build": {"compiler": b["compiler"], "c++ standard": b["cxx_standard"]},
        "CPU": {
            "blas": b["blas"] + (" (ILP64)" if b["blas_ilp64"] else ""),
            "lapack": b["lapack"],
            "fft": "NumPy's pocketfft",
            "threads": b["host_threads"],
        },
        "CUDA": cuda,
    }


def _print_sections(d):
    for section, items in d.items():
        print(f"{section}:")
        if isinstance(items, list):
            for item in items:
                print("  - " + ", ".join(f"{k}: {v}" for k, v in item.items()))
            continue
        for k, v in items.items():
            print(f"  {k}: {v}")


def show_config(mode="stdout"):
    """ember's build and the libraries it found: the compiler, BLAS, LAPACK and FFT of the CPU,
    the CUDA driver and NVRTC. ``mode="dicts"`` returns them as a dict instead of printing."""
    if mode not in ("stdout", "dicts"):
        raise ValueError(f"ember.show_config: mode must be 'stdout' or 'dicts', got {mode!r}")
    d = _config()
    if mode == "dicts":
        return d
    _print_sections(d)
    return None


def show_runtime():
    """What ember uses in this process: the host threads, each CUDA device (name, compute
    capability, memory) and the kernel cache counters."""
    d = {"host": {"threads": _core._build_info()["host_threads"]}}
    if _cuda.is_available():
        devices = []
        for i in range(_cuda.device_count()):
            p = _cuda.get_device_properties(i)
            devices.append(
                {
                    "device": f"cuda:{i}",
                    "name": p["name"],
                    "compute capability": f"{p['major']}.{p['minor']}",
                    "memory": f"{p['total_memory'] / 2**30:.1f} GiB",
                    "multiprocessors": p["multi_processor_count"],
                }
            )
        d["CUDA devices"] = devices
        d["kernel cache"] = _cuda.kernel_cache_stats()
    else:
        d["CUDA"] = {"unavailable": _cuda.unavailable_reason()}
    _print_sections(d)
