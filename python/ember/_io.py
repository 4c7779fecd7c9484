"""Input, output and printing, whose work is on the host by nature: NumPy's text and file
readers hand back ember arrays (they take ``device=``); printing and writing read an ember array
explicitly (its values are copied to the host, as ``repr`` does). ``save``/``load`` (NumPy's
.npy/.npz and ember's safetensors) are in _npyio and _serialization."""

from __future__ import annotations

import numpy as _np

from . import _core
from ._array import asarray, asnumpy
from ._manipulation import _asarray

__all__ = [
    "array2string",
    "array_repr",
    "array_str",
    "base_repr",
    "binary_repr",
    "format_float_positional",
    "format_float_scientific",
    "frombuffer",
    "fromfile",
    "fromiter",
    "fromregex",
    "fromstring",
    "genfromtxt",
    "get_printoptions",
    "loadtxt",
    "printoptions",
    "savetxt",
    "savez",
    "savez_compressed",
    "set_printoptions",
]


def _host(x):
    return asnumpy(x) if isinstance(x, _core.ndarray) else x


# ---- printing: NumPy's own (ember's repr prints through NumPy) ------------------------------


printoptions = _np.printoptions
set_printoptions = _np.set_printoptions
get_printoptions = _np.get_printoptions
base_repr = _np.base_repr
binary_repr = _np.binary_repr
format_float_positional = _np.format_float_positional
format_float_scientific = _np.format_float_scientific


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
        return asarray(fn(*args, **kwargs), device=device)

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


def _savez(save, who, file, args, kwds, allow_pickle):
    arrays = [_host(_asarray(a)) for a in args]
    named = {}
    for k, v in kwds.items():
        if not isinstance(k, str):
            raise TypeError(f"{who}: array names must be strings, got {k!r}")
        named[k] = _host(_asarray(v))
    save(file, *arrays, allow_pickle=allow_pickle, **named)


def savez(file, *args, allow_pickle=True, **kwds):
    """Writes the arrays into an uncompressed ``.npz`` archive (NumPy's format: read it back with
    ``ember.load`` or ``numpy.load``). The values are copied to the host; object arrays are
    refused (ember arrays hold numbers only), so `allow_pickle` changes nothing."""
    _savez(_np.savez, "ember.savez", file, args, kwds, allow_pickle)


def savez_compressed(file, *args, allow_pickle=True, **kwds):
    """As ``savez``, into a zip-deflated ``.npz`` archive."""
    _savez(_np.savez_compressed, "ember.savez_compressed", file, args, kwds, allow_pickle)
