"""IDX files (the format of MNIST and Fashion-MNIST), plain or gzip-compressed, checked fully.

An IDX file is a 4-byte magic number (two zero bytes, a dtype code, the number of dimensions),
one big-endian 32-bit size per dimension, then the values in C order, big-endian.
"""

from __future__ import annotations

import gzip
import math
import os
import zlib

import numpy as _np

from .._array import asarray

# IDX dtype code -> (name, big-endian NumPy dtype)
_CODES = {
    0x08: ("unsigned byte", _np.dtype(">u1")),
    0x09: ("signed byte", _np.dtype(">i1")),
    0x0B: ("short", _np.dtype(">i2")),
    0x0C: ("int", _np.dtype(">i4")),
    0x0D: ("float", _np.dtype(">f4")),
    0x0E: ("double", _np.dtype(">f8")),
}
_CHUNK = 1 << 24
_MAX_NDIM = 64


def _is_gzip(p):
    with open(p, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _read_exact(f, n, where, what):
    """Exactly `n` bytes of `f` (read in chunks: memory follows the data, not a header's claim)."""
    out = bytearray()
    while len(out) < n:
        chunk = f.read(min(_CHUNK, n - len(out)))
        if not chunk:
            raise ValueError(
                f"{where}: the file is truncated: {what} needs {n} bytes, it has {len(out)}"
            )
        out += chunk
    return out


def _header(f, where):
    magic = _read_exact(f, 4, where, "the magic number")
    if magic[0] != 0 or magic[1] != 0:
        raise ValueError(
            f"{where}: not an IDX file: the magic number {bytes(magic).hex()} does not start "
            "with two zero bytes"
        )
    code, ndim = magic[2], magic[3]
    if code not in _CODES:
        raise ValueError(
            f"{where}: unknown IDX dtype code {code:#04x} (known: "
            + ", ".join(f"{c:#04x} {n}" for c, (n, _) in _CODES.items())
            + ")"
        )
    if not 1 <= ndim <= _MAX_NDIM:
        raise ValueError(f"{where}: the header says {ndim} dimensions; 1 to {_MAX_NDIM} are read")
    raw = _read_exact(f, 4 * ndim, where, f"the sizes of {ndim} dimensions")
    shape = tuple(int.from_bytes(raw[4 * i : 4 * i + 4], "big") for i in range(ndim))
    dt = _CODES[code][1]
    return dt, shape, 4 + 4 * ndim, math.prod(shape) * dt.itemsize


def _read_idx_numpy(path, who):
    p = os.fspath(path)
    where = f"{who}: {p!r}"
    try:
        gz = _is_gzip(p)
    except IsADirectoryError:
        raise ValueError(f"{where} is a directory, not an IDX file") from None
    if not gz:
        with open(p, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            dt, shape, head, nbytes = _header(f, where)
            if size != head + nbytes:
                raise ValueError(
                    f"{where}: the file has {size} bytes, but its header (shape {shape}, "
                    f"{dt.itemsize}-byte values) says {head + nbytes}: it is "
                    + ("truncated" if size < head + nbytes else "longer than its header says")
                )
            buf = _np.empty(nbytes, dtype=_np.uint8)
            if f.readinto(buf) != nbytes:
                raise ValueError(f"{where}: the file ended early while reading (it changed?)")
    else:
        try:
            with gzip.open(p, "rb") as f:
                dt, shape, head, nbytes = _header(f, where)
                data = _read_exact(f, nbytes, where, f"shape {shape} of {dt.itemsize}-byte values")
                if f.read(1):
                    raise ValueError(
                        f"{where}: the decompressed data are longer than its header (shape "
                        f"{shape}, {dt.itemsize}-byte values) says"
                    )
        except (gzip.BadGzipFile, EOFError, zlib.error) as e:
            raise ValueError(f"{where}: damaged gzip data ({e})") from None
        buf = _np.frombuffer(data, dtype=_np.uint8)
    return buf.view(dt).reshape(shape).astype(dt.newbyteorder("="), copy=dt.itemsize > 1)


def read_idx(path, *, device="cpu"):
    """Reads one IDX file (optionally gzip-compressed; detected from its content) as an ember
    array of its dtype (uint8, int8, int16, int32, float32 or float64) and shape, on `device`.

    The file is checked before any large allocation: magic number, dtype code, number of
    dimensions, and a size that matches the header exactly. A problem raises ValueError naming
    the file and what is wrong.
    """
    return asarray(_read_idx_numpy(path, "ember.datasets.read_idx"), device=device)


_KINDS = {"train": "train", "test": "t10k", "t10k": "t10k"}


def _find(folder, prefix, what, idx, who):
    names = []
    for sep in ("-", "."):
        base = f"{prefix}-{what}{sep}{idx}-ubyte"
        names += [base, base + ".gz"]
    for name in names:
        p = os.path.join(folder, name)
        if os.path.isfile(p):
            return p
    raise FileNotFoundError(f"{who}: none of {', '.join(names)} is in {folder!r}")


def mnist(path, kind="train", *, device="cpu"):
    """Reads an MNIST-format dataset (MNIST, Fashion-MNIST, KMNIST, ...) from the folder `path`.

    `kind` is ``"train"`` (files ``train-images-idx3-ubyte`` and ``train-labels-idx1-ubyte``)
    or ``"test"`` (alias ``"t10k"``: ``t10k-...``); each file may be gzip-compressed with a
    ``.gz`` suffix, and ``train-images.idx3-ubyte`` spellings are found too. Returns
    ``(images, labels)`` on `device`: images uint8 of shape ``(n, rows, cols)`` with the raw pixel
    values 0..255 (scale them yourself, e.g. ``images.astype(ember.float32) / 255``), labels
    int64 of shape ``(n,)``.

    Both files are checked completely (see ``read_idx``); images must be 3-d unsigned bytes,
    labels 1-d unsigned bytes, and their counts equal, else ValueError naming the file.
    """
    who = "ember.datasets.mnist"
    if not isinstance(kind, str) or kind not in _KINDS:
        raise ValueError(f"{who}: kind must be 'train' or 'test' ('t10k'), got {kind!r}")
    folder = os.fspath(path)
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"{who}: {folder!r} is not a folder")
    prefix = _KINDS[kind]
    img_path = _find(folder, prefix, "images", "idx3", who)
    lbl_path = _find(folder, prefix, "labels", "idx1", who)
    images = _read_idx_numpy(img_path, who)
    labels = _read_idx_numpy(lbl_path, who)
    if images.dtype != _np.uint8 or images.ndim != 3:
        raise ValueError(
            f"{who}: {img_path!r} must hold 3-d unsigned bytes (n, rows, cols), got "
            f"{images.ndim}-d {images.dtype}"
        )
    if labels.dtype != _np.uint8 or labels.ndim != 1:
        raise ValueError(
            f"{who}: {lbl_path!r} must hold 1-d unsigned bytes, got {labels.ndim}-d {labels.dtype}"
        )
    if images.shape[0] != labels.shape[0]:
        raise ValueError(
            f"{who}: {img_path!r} has {images.shape[0]} images but {lbl_path!r} has "
            f"{labels.shape[0]} labels"
        )
    return asarray(images, device=device), asarray(labels.astype(_np.int64), device=device)
