"""ember.save and ember.load: NumPy's .npy/.npz files under NumPy's names, and ember's safetensors
files (state dicts) through the same two names.

``save`` tells the two apart by which argument is the file, so both habits work:
  - ``ember.save(file, arr)`` (NumPy's order: the file first) writes a NumPy ``.npy`` file, as
    ``numpy.save`` does (``.npy`` is appended to a file name without it);
  - ``ember.save(obj, file)`` (PyTorch's order: the object first) writes safetensors, as
    ``ember.save_safetensors`` does.
A file is a ``str``, a path object or an object with ``write``; when both arguments or neither
are, ``save`` raises TypeError. ``np.save(file, x)`` on an ember array arrives here (NumPy's
``__array_function__``) and writes ``.npy``.

``load`` reads what the file holds, told by its first bytes: ``\\x93NUMPY`` a ``.npy`` array,
``PK\\x03\\x04`` a ``.npz`` archive (an NpzFile: a mapping of ember arrays, and a context
manager), a pickle (only with ``allow_pickle=True``, as NumPy), anything else safetensors (whose
checks say what is wrong with a file of none of these kinds).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as _np

from . import _core
from ._array import _bfloat16, asarray, asnumpy
from ._serialization import _load as _load_safetensors
from ._serialization import _save as _save_safetensors
from ._serialization import load_safetensors, save_safetensors

__all__ = ["NpzFile", "load", "load_safetensors", "save", "save_safetensors"]

_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")  # a zip archive, an empty one


def _is_file(x):
    return isinstance(x, (str, bytes, os.PathLike)) or hasattr(x, "write")


def save(file, arr, allow_pickle=True, fix_imports=_np._NoValue, *, metadata=None):
    """NumPy's ``save(file, arr)`` (a ``.npy`` file) or, with the object first, ember's
    ``save(obj, path)`` (safetensors, as ``save_safetensors``); see the module's rule.

    ``.npy``: the array's values are copied to the host; bfloat16 is written as NumPy writes
    ``ml_dtypes.bfloat16`` (a 2-byte void type, which ``ember.load`` reads back as bfloat16);
    `allow_pickle` as NumPy (object arrays only). `metadata` is for safetensors only.
    """
    first, second = _is_file(file), _is_file(arr)
    if first and not second:
        if metadata is not None:
            raise TypeError("ember.save: metadata= is for safetensors files (save(obj, path))")
        host = asnumpy(arr) if isinstance(arr, _core.ndarray) else arr
        kwargs = {} if fix_imports is _np._NoValue else {"fix_imports": fix_imports}
        _np.save(file, host, allow_pickle=allow_pickle, **kwargs)
        return
    if second and not first:
        if allow_pickle is not True or fix_imports is not _np._NoValue:
            raise TypeError(
                "ember.save: allow_pickle= and fix_imports= are for NumPy's save(file, arr); "
                "save(obj, path) writes safetensors"
            )
        _save_safetensors(file, arr, metadata, "ember.save")
        return
    raise TypeError(
        "ember.save: cannot tell which argument is the file: save(file, arr) writes NumPy's "
        "'.npy', save(obj, path) writes safetensors, and a file is a str, a path or an object "
        f"with write(); got {type(file).__name__} and {type(arr).__name__}"
    )


def _peek(file):
    """The first 16 bytes of a path or a seekable binary file (its position is kept)."""
    if isinstance(file, (str, bytes, os.PathLike)):
        with open(file, "rb") as f:
            return f.read(16)
    if not hasattr(file, "read") or not hasattr(file, "seek"):
        raise TypeError(
            f"ember.load: file must be a path or a readable, seekable file, got "
            f"{type(file).__name__}"
        )
    start = file.tell()
    head = file.read(16)
    file.seek(start)
    if not isinstance(head, bytes):
        raise TypeError("ember.load: the file must be opened in binary mode ('rb')")
    return head


def _is_pickle(head):
    """A pickle of protocol 2 to 5 starts with PROTO (0x80, the protocol), then an opcode (never
    0). A safetensors file starts with its header length, whose low byte may be 0x80 too, but
    whose third byte is 0 below 64 KiB, and its header starts with "{" at byte 8."""
    return (
        len(head) >= 3
        and head[0] == 0x80
        and 2 <= head[1] <= 5
        and head[2] != 0
        and head[8:9] != b"{"
    )


def _to_ember(a, device):
    """A loaded NumPy array as an ember array; object arrays (allow_pickle) stay NumPy's."""
    if not isinstance(a, _np.ndarray) or a.dtype.hasobject:
        return a
    if a.dtype.kind == "V" and a.dtype.itemsize == 2 and a.dtype.names is None:
        a = a.view(_bfloat16())  # how NumPy writes ml_dtypes.bfloat16
    return asarray(a, device=device)


def load(
    file,
    mmap_mode=None,
    allow_pickle=False,
    fix_imports=True,
    encoding="ASCII",
    *,
    max_header_size=10000,
    device=None,
    weights_only=None,
    map_location=None,
):
    """NumPy's ``load``, with ember arrays on `device` (None: the default device), and ember's
    safetensors files too: the format is told by the file's first bytes (see the module).
    PyTorch's keywords: ``map_location`` (a device or its name) is `device`;
    ``weights_only=False`` allows a pickle (True or None: arrays and dicts only).

    ``.npy`` gives an array; ``.npz`` an NpzFile (close it, or use ``with``); a pickle (only
    with ``allow_pickle=True``) whatever it holds; safetensors the saved dict (or array). Object
    arrays, which ember cannot hold, come back as NumPy arrays. `mmap_mode` maps the file, but
    the values are then copied into the ember array.
    """
    if map_location is not None:
        if device is not None:
            raise TypeError("ember.load: give device= or map_location=, not both")
        if callable(map_location) or isinstance(map_location, dict):
            raise TypeError(
                "ember.load: map_location must be a device or a device name (functions and "
                f"dicts are not supported), got {map_location!r}"
            )
        device = map_location
    user_pickle = allow_pickle
    if weights_only is False:
        allow_pickle = True
    head = _peek(file)
    np_kwargs = {
        "mmap_mode": mmap_mode,
        "allow_pickle": allow_pickle,
        "fix_imports": fix_imports,
        "encoding": encoding,
        "max_header_size": max_header_size,
    }
    if head.startswith(_NPY_MAGIC):
        return _to_ember(_np.load(file, **np_kwargs), device)
    if head.startswith(_ZIP_MAGICS):
        return NpzFile(_np.load(file, **np_kwargs), device)
    if _is_pickle(head):  # NumPy's rules (allow_pickle)
        return _np.load(file, **np_kwargs)
    if not isinstance(file, (str, bytes, os.PathLike)):
        raise TypeError(
            "ember.load: this file is not NumPy's (.npy, .npz or a pickle); safetensors files "
            "are read from a path"
        )
    if mmap_mode is not None or user_pickle:
        raise TypeError("ember.load: mmap_mode= and allow_pickle= are for NumPy's files")
    return _load_safetensors(file, device, "ember.load")


class _Bag:
    """``npz.f.name``: attribute access to the archive's arrays, as NumPy's NpzFile.f."""

    def __init__(self, npz):
        self._npz = npz

    def __getattr__(self, key):
        try:
            return self._npz[key]
        except KeyError:
            raise AttributeError(key) from None

    def __dir__(self):
        return list(self._npz.files)


class NpzFile(Mapping):
    """A ``.npz`` archive opened by ``ember.load``: a read-only mapping from the array names to
    ember arrays (each read from the file when it is looked up), and a context manager that
    closes the file. ``files`` lists the names; ``f.name`` reads one as an attribute."""

    def __init__(self, npz, device=None):
        if not isinstance(npz, _np.lib.npyio.NpzFile):
            raise TypeError(
                "ember.NpzFile: wraps the NpzFile numpy.load returns; open archives with "
                f"ember.load, got {type(npz).__name__}"
            )
        self._npz = npz
        self._device = device
        self.f = _Bag(self)

    @property
    def files(self):
        return list(self._npz.files)

    @property
    def zip(self):
        return self._npz.zip

    def __getitem__(self, key):
        return _to_ember(self._npz[key], self._device)

    def __iter__(self):
        return iter(self._npz.files)

    def __len__(self):
        return len(self._npz.files)

    def __contains__(self, key):
        return key in self._npz.files

    def close(self):
        """Closes the file (the names stay readable; the arrays do not)."""
        self._npz.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        npz = self.__dict__.get("_npz")  # absent when __init__ refused its argument
        if npz is not None:
            npz.close()

    def __repr__(self):
        return f"ember.NpzFile({self._npz!r})"
