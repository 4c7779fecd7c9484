"""NumPy functions whose work is on the host by nature (text, files, printing, Python scalars):
they run in NumPy and hand back ember arrays (creation functions take ``device=``), or read an
ember array explicitly (printing and saving text copy it to the host, as ``repr`` does). Plus
packbits/unpackbits, apply_over_axes, histogramdd and einsum_path, composed from ember ops or
computed from shapes only."""

from __future__ import annotations

import builtins
import operator

import numpy as _np

from . import _core
from ._manipulation import _asarray

__all__ = [
    "apply_over_axes",
    "array2string",
    "array_repr",
    "array_str",
    "base_repr",
    "binary_repr",
    "einsum_path",
    "format_float_positional",
    "format_float_scientific",
    "frombuffer",
    "fromfile",
    "fromiter",
    "fromregex",
    "fromstring",
    "genfromtxt",
    "get_printoptions",
    "histogramdd",
    "loadtxt",
    "mintypecode",
    "packbits",
    "printoptions",
    "savetxt",
    "savez",
    "savez_compressed",
    "set_printoptions",
    "show_config",
    "show_runtime",
    "typename",
    "unpackbits",
]


def _ember():
    import ember

    return ember


def _host(x):
    return _ember().asnumpy(x) if isinstance(x, _core.ndarray) else x


# ---- printing and scalars: NumPy's own (ember's repr prints through NumPy) -----------------

printoptions = _np.printoptions
set_printoptions = _np.set_printoptions
get_printoptions = _np.get_printoptions
base_repr = _np.base_repr
binary_repr = _np.binary_repr
format_float_positional = _np.format_float_positional
format_float_scientific = _np.format_float_scientific
typename = _np.typename
mintypecode = _np.mintypecode


def array2string(a, *args, **kwargs):
    """NumPy's array2string of the array's values (copied to the host, as repr does)."""
    return _np.array2string(_host(_asarray(a)), *args, **kwargs)


def array_str(a, *args, **kwargs):
    return _np.array_str(_host(_asarray(a)), *args, **kwargs)


def array_repr(a, *args, **kwargs):
    return (
        repr(_asarray(a))
        if not args and not kwargs
        else _np.array_repr(_host(_asarray(a)), *args, **kwargs)
    )


# ---- text and files: read on the host, then placed on `device` ------------------------------


def _placed(fn):
    def wrapper(*args, device=None, **kwargs):
        return _ember().asarray(fn(*args, **kwargs), device=device)

    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__name__
    wrapper.__doc__ = (
        f"NumPy's {fn.__name__}, read on the host; the result is an ember array on `device` "
        "(default: ember's default device)."
    )
    return wrapper


loadtxt = _placed(_np.loadtxt)
genfromtxt = _placed(_np.genfromtxt)
fromfile = _placed(_np.fromfile)
frombuffer = _placed(_np.frombuffer)
fromstring = _placed(_np.fromstring)
fromiter = _placed(_np.fromiter)
fromregex = _placed(_np.fromregex)


def savetxt(fname, X, *args, **kwargs):
    """Writes the array as text (its values are copied to the host)."""
    _np.savetxt(fname, _host(_asarray(X)), *args, **kwargs)


def _savez(save, who, file, args, kwds):
    arrays = [_host(_asarray(a)) for a in args]
    named = {}
    for k, v in kwds.items():
        if not isinstance(k, str):
            raise TypeError(f"{who}: array names must be strings, got {k!r}")
        named[k] = _host(_asarray(v))
    save(file, *arrays, allow_pickle=False, **named)


def savez(file, *args, **kwds):
    """Writes the arrays into an uncompressed ``.npz`` archive (NumPy's format: read it back with
    ``numpy.load``). The values are copied to the host; object arrays are refused (no pickles)."""
    _savez(_np.savez, "ember.savez", file, args, kwds)


def savez_compressed(file, *args, **kwds):
    """As ``savez``, into a zip-deflated ``.npz`` archive."""
    _savez(_np.savez_compressed, "ember.savez_compressed", file, args, kwds)


# ---- configuration --------------------------------------------------------------------------


def _config():
    em = _ember()
    b = _core._build_info()
    cuda = {
        "available": em.cuda.is_available(),
        "unavailable_reason": em.cuda.unavailable_reason(),
        "driver_version": b["cuda_driver_version"],
        "nvrtc_version": ".".join(map(str, b["nvrtc_version"])) if b["nvrtc_version"] else None,
        "kernel_cache_dir": em.cuda.kernel_cache_dir(),
    }
    if not b["nvrtc_version"]:
        cuda["nvrtc_unavailable_reason"] = b["nvrtc_unavailable_reason"]
    return {
        "ember": {"version": em.__version__, "numpy": _np.__version__},
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
    em = _ember()
    d = {"host": {"threads": _core._build_info()["host_threads"]}}
    if em.cuda.is_available():
        devices = []
        for i in range(em.cuda.device_count()):
            p = em.cuda.get_device_properties(i)
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
        d["kernel cache"] = em.cuda.kernel_cache_stats()
    else:
        d["CUDA"] = {"unavailable": em.cuda.unavailable_reason()}
    _print_sections(d)


# ---- computed on the device or from shapes --------------------------------------------------


def packbits(a, /, axis=None, bitorder="big"):
    """The truth values of a packed into uint8, 8 per byte along axis (padded with zeros)."""
    em = _ember()
    x = _asarray(a)
    if x.dtype.kind not in "biu":
        raise TypeError(f"ember.packbits: expected an integer or bool array, got {x.dtype}")
    if bitorder not in ("big", "little"):
        raise ValueError(f"ember.packbits: bitorder must be 'big' or 'little', got {bitorder!r}")
    if axis is None:
        x, axis = x.reshape((-1,)), 0
    ax = operator.index(axis) % builtins.max(x.ndim, 1)
    x = em.moveaxis(x != 0, ax, -1).astype(em.uint8)
    n = x.shape[-1]
    pad = (-n) % 8
    if pad:
        x = em.concat(
            [x, em.zeros(x.shape[:-1] + (pad,), dtype=em.uint8, device=x.device)], axis=-1
        )
    x = x.reshape(x.shape[:-1] + ((n + pad) // 8, 8))
    shifts = (
        em.arange(7, -1, -1, device=x.device)
        if bitorder == "big"
        else em.arange(8, device=x.device)
    )
    packed = em.sum(em.bitwise_left_shift(x, shifts.astype(em.uint8)), axis=-1, dtype=em.uint8)
    return em.moveaxis(packed, -1, ax)


def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """The bits of a uint8 array, as uint8 zeros and ones (8 per byte along axis)."""
    em = _ember()
    x = _asarray(a)
    if x.dtype != em.uint8:
        raise TypeError(f"ember.unpackbits: expected a uint8 array, got {x.dtype}")
    if bitorder not in ("big", "little"):
        raise ValueError(f"ember.unpackbits: bitorder must be 'big' or 'little', got {bitorder!r}")
    if axis is None:
        x, axis = x.reshape((-1,)), 0
    ax = operator.index(axis) % builtins.max(x.ndim, 1)
    x = em.moveaxis(x, ax, -1)
    shifts = (
        em.arange(7, -1, -1, device=x.device)
        if bitorder == "big"
        else em.arange(8, device=x.device)
    )
    bits = em.bitwise_right_shift(x[..., None], shifts.astype(em.uint8)) & 1
    bits = bits.reshape(x.shape[:-1] + (x.shape[-1] * 8,))
    if count is not None:
        count = operator.index(count)
        total = bits.shape[-1]
        if count >= 0:
            if count <= total:
                bits = bits[..., :count]
            else:
                z = em.zeros(bits.shape[:-1] + (count - total,), dtype=em.uint8, device=x.device)
                bits = em.concat([bits, z], axis=-1)
        else:
            bits = bits[..., : builtins.max(total + count, 0)]
    return em.moveaxis(bits, -1, ax)


def apply_over_axes(func, a, axes):
    """func(a, axis) applied over each of `axes` in turn, keeping the dimensions (NumPy's
    apply_over_axes)."""
    em = _ember()
    x = _asarray(a)
    for ax in [axes] if isinstance(axes, int) else axes:
        ax = operator.index(ax) % x.ndim
        try:
            r = func(x, ax)  # NumPy's call
        except TypeError:
            r = func(x, axis=ax)  # ember's reductions take axis by keyword (Array API)
        if r.ndim == x.ndim:
            x = r
        elif r.ndim == x.ndim - 1:
            x = em.expand_dims(r, axis=ax)
        else:
            raise ValueError(
                "ember.apply_over_axes: function is not returning an array of the correct shape"
            )
    return x


def histogramdd(sample, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """(H, edges): the D-dimensional histogram of N points (an (N, D) array)."""
    em = _ember()
    from ._sets import bincount, histogram

    s = _asarray(sample)
    if s.ndim == 1:
        s = s[:, None]
    if s.ndim != 2:
        raise ValueError("ember.histogramdd: sample must be (N, D)")
    d = s.shape[1]
    nbins = bins if isinstance(bins, list | tuple) else [bins] * d
    ranges = range if range is not None else [None] * d
    edges, idx, inside = [], None, None
    for k in builtins.range(d):
        col = s[:, k]
        e = histogram(col, bins=nbins[k], range=ranges[k])[1]
        edges.append(e)
        nk = e.shape[0] - 1
        i = em.clip(em.searchsorted(e, col.astype(e.dtype), side="right") - 1, 0, nk - 1)
        ok = (col >= e[0]) & (col <= e[-1])
        idx = i if idx is None else idx * nk + i
        inside = ok if inside is None else inside & ok
    shape = tuple(e.shape[0] - 1 for e in edges)
    w = None if weights is None else _asarray(weights).reshape((-1,))[inside]
    flat = idx[inside]
    h = bincount(flat, weights=w, minlength=int(_np.prod(shape))).reshape(shape)
    h = h.astype(em.float64)
    if density:
        vol = em.ones(shape, dtype=em.float64, device=s.device)
        for k, e in enumerate(edges):
            widths = (e[1:] - e[:-1]).reshape(tuple(-1 if j == k else 1 for j in builtins.range(d)))
            vol = vol * widths
        h = h / (vol * em.sum(h))
    return h, edges


def einsum_path(subscripts, *operands, optimize="greedy", einsum_call=False):
    """NumPy's einsum contraction order for operands of these shapes (computed from the shapes
    alone; no data moves)."""
    if einsum_call:
        raise ValueError("ember.einsum_path: einsum_call is NumPy-internal")
    stand_ins = [
        _np.broadcast_to(_np.zeros((), dtype=_np.float64), tuple(_asarray(op).shape))
        for op in operands
    ]
    return _np.einsum_path(subscripts, *stand_ins, optimize=optimize)
