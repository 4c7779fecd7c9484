"""``ember.ndarray.__dask_tokenize__``: a deterministic token of an array's contents, cheap on
both devices.

Dask names its graph keys by tokens, and two arrays with the same token are taken to be equal:
the token must change with any byte of the data (sound), give the same value for equal arrays
in any process (deterministic), and not copy the data (cheap). A CPU array is hashed in place
through its buffer, as Dask hashes NumPy arrays. A GPU array is hashed on its device (a
position-keyed 64-bit mix of every 8-byte word, summed modulo 2**64: ember's elementwise and
reduction kernels in blocks, so the temporaries stay small); only the two 64-bit sums come to
the host. The token also holds the dtype, the shape and the device."""

from __future__ import annotations

from dask.hashing import hash_buffer_hex

import ember

__all__ = ["device_digest", "token"]

_M1 = 0xBF58476D1CE4E5B9  # SplitMix64's finalizer constants
_M2 = 0x94D049BB133111EB
_GOLDEN = 0x9E3779B97F4A7C15
_SEED2 = 0xD6E8FEB86659FD93
_BLOCK = 1 << 22  # words per block (32 MiB of uint64 temporaries)


def _bytes(x):
    """The array's bytes as a contiguous 1-d uint8 array on its device (a view when possible)."""
    return ember.ascontiguousarray(x).reshape(-1).view(ember.uint8)


def _mix(z, c1, c2):
    z = z ^ (z >> 30)
    z = z * c1
    z = z ^ (z >> 27)
    z = z * c2
    return z ^ (z >> 31)


def device_digest(x):
    """A 128-bit digest (two ints) of `x`'s bytes, computed on `x`'s device with ember ops."""
    dev = x.device
    b = _bytes(x)
    n = b.shape[0]
    nw = n // 8
    words = b[: nw * 8].view(ember.uint64) if nw else None
    tail = b[nw * 8 :].astype(ember.uint64)

    def c(v):
        return ember.asarray(v, dtype=ember.uint64, device=dev)

    m1, m2, golden, seed2 = c(_M1), c(_M2), c(_GOLDEN), c(_SEED2)
    h1 = ember.zeros((), dtype=ember.uint64, device=dev)
    h2 = ember.zeros((), dtype=ember.uint64, device=dev)

    def fold(v, start, h1, h2):
        pos = ember.arange(start, start + v.shape[0], dtype=ember.uint64, device=dev)
        z = _mix(v ^ (pos * golden), m1, m2)
        h1 = h1 + ember.sum(z, dtype=ember.uint64)
        h2 = h2 + ember.sum(_mix(z ^ seed2, m2, m1), dtype=ember.uint64)
        return h1, h2

    for start in range(0, nw, _BLOCK):
        h1, h2 = fold(words[start : start + _BLOCK], start, h1, h2)
    if tail.shape[0]:
        # the tail bytes take positions past any word's (the length is in the token too)
        h1, h2 = fold(tail, nw + (1 << 40), h1, h2)
    return int(h1.item()), int(h2.item())


def token(x):
    """The Dask token of `x` (see the module docstring)."""
    if x.device.type == "cpu":
        digest = hash_buffer_hex(memoryview(_bytes(x)))
    else:
        h1, h2 = device_digest(x)
        digest = f"{h1:016x}{h2:016x}"
    return ("ember.ndarray", x.dtype.name, tuple(x.shape), str(x.device), digest)
