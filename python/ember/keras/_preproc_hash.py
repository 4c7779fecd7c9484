"""The string hashes of Keras's ``Hashing`` layer (and of StringLookup's extra OOV buckets), written
from their published definitions: FarmHash's 64-bit fingerprint (``farmhash::Fingerprint64``,
the "na" variant, which ``tf.strings.to_hash_bucket_fast`` uses) and SipHash-2-4 with a 128-bit
key (``tf.strings.to_hash_bucket_strong``, Keras's salted hashing).

``fingerprint64`` / ``siphash24`` hash one string (pure Python over its UTF-8 bytes, on the host:
strings live there in ember.keras). ``fingerprint64_ints`` / ``siphash24_ints`` hash the decimal
text of every int64 of an ember array on its device, vectorized with uint64 ember ops."""

from __future__ import annotations

import struct

import numpy as _np

import ember as _e

__all__ = ["fingerprint64", "fingerprint64_ints", "siphash24", "siphash24_ints"]

_M = (1 << 64) - 1
_K0 = 0xC3A5C85C97CB3127
_K1 = 0xB492B66FBE98F273
_K2 = 0x9AE16A3B2F90404F


def _fetch64(s, i):
    return struct.unpack_from("<Q", s, i)[0]


def _fetch32(s, i):
    return struct.unpack_from("<I", s, i)[0]


def _rot(v, shift):
    """Right rotation of a 64-bit value."""
    return v if shift == 0 else ((v >> shift) | (v << (64 - shift))) & _M


def _shift_mix(v):
    return v ^ (v >> 47)


def _hash16(u, v, mul):
    a = ((u ^ v) * mul) & _M
    a ^= a >> 47
    b = ((v ^ a) * mul) & _M
    b ^= b >> 47
    return (b * mul) & _M


def _len0to16(s, n):
    if n >= 8:
        mul = _K2 + n * 2
        a = (_fetch64(s, 0) + _K2) & _M
        b = _fetch64(s, n - 8)
        c = (_rot(b, 37) * mul + a) & _M
        d = ((_rot(a, 25) + b) * mul) & _M
        return _hash16(c, d, mul)
    if n >= 4:
        mul = _K2 + n * 2
        a = _fetch32(s, 0)
        return _hash16(n + (a << 3), _fetch32(s, n - 4), mul)
    if n > 0:
        y = s[0] + (s[n >> 1] << 8)
        z = n + (s[n - 1] << 2)
        return (_shift_mix(((y * _K2) ^ (z * _K0)) & _M) * _K2) & _M
    return _K2


def _len17to32(s, n):
    mul = _K2 + n * 2
    a = (_fetch64(s, 0) * _K1) & _M
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & _M
    d = (_fetch64(s, n - 16) * _K2) & _M
    return _hash16(
        (_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M,
        (a + _rot((b + _K2) & _M, 18) + c) & _M,
        mul,
    )


def _len33to64(s, n):
    mul = _K2 + n * 2
    a = (_fetch64(s, 0) * _K2) & _M
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & _M
    d = (_fetch64(s, n - 16) * _K2) & _M
    y = (_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M
    z = _hash16(y, (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)
    e = (_fetch64(s, 16) * mul) & _M
    f = _fetch64(s, 24)
    g = ((y + _fetch64(s, n - 32)) * mul) & _M
    h = ((z + _fetch64(s, n - 24)) * mul) & _M
    return _hash16(
        (_rot((e + f) & _M, 43) + _rot(g, 30) + h) & _M,
        (e + _rot((f + a) & _M, 18) + g) & _M,
        mul,
    )


def _weak32(s, i, a, b):
    w, x, y, z = (_fetch64(s, i + 8 * k) for k in range(4))
    a = (a + w) & _M
    b = _rot((b + a + z) & _M, 21)
    c = a
    a = (a + x + y) & _M
    b = (b + _rot(a, 44)) & _M
    return (a + z) & _M, (b + c) & _M


def fingerprint64(data):
    """FarmHash's ``Fingerprint64`` of `data` (bytes; str is UTF-8 encoded), an int in
    [0, 2**64)."""
    s = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    n = len(s)
    if n <= 16:
        return _len0to16(s, n)
    if n <= 32:
        return _len17to32(s, n)
    if n <= 64:
        return _len33to64(s, n)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _M
    z = (_shift_mix((y * _K2 + 113) & _M) * _K2) & _M
    v = (0, 0)
    w = (0, 0)
    x = (x * _K2 + _fetch64(s, 0)) & _M
    end = ((n - 1) // 64) * 64
    last64 = n - 64
    i = 0
    while True:
        x = (_rot((x + y + v[0] + _fetch64(s, i + 8)) & _M, 37) * _K1) & _M
        y = (_rot((y + v[1] + _fetch64(s, i + 48)) & _M, 42) * _K1) & _M
        x ^= w[1]
        y = (y + v[0] + _fetch64(s, i + 40)) & _M
        z = (_rot((z + w[0]) & _M, 33) * _K1) & _M
        v = _weak32(s, i, (v[1] * _K1) & _M, (x + w[0]) & _M)
        w = _weak32(s, i + 32, (z + w[1]) & _M, (y + _fetch64(s, i + 16)) & _M)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = _K1 + ((z & 0xFF) << 1)
    i = last64
    w0 = (w[0] + ((n - 1) & 63)) & _M
    v0 = (v[0] + w0) & _M
    w0 = (w0 + v0) & _M
    v, w = (v0, v[1]), (w0, w[1])
    x = (_rot((x + y + v[0] + _fetch64(s, i + 8)) & _M, 37) * mul) & _M
    y = (_rot((y + v[1] + _fetch64(s, i + 48)) & _M, 42) * mul) & _M
    x ^= (w[1] * 9) & _M
    y = (y + v[0] * 9 + _fetch64(s, i + 40)) & _M
    z = (_rot((z + w[0]) & _M, 33) * mul) & _M
    v = _weak32(s, i, (v[1] * mul) & _M, (x + w[0]) & _M)
    w = _weak32(s, i + 32, (z + w[1]) & _M, (y + _fetch64(s, i + 16)) & _M)
    z, x = x, z
    return _hash16(
        (_hash16(v[0], w[0], mul) + _shift_mix(y) * _K0 + z) & _M,
        (_hash16(v[1], w[1], mul) + x) & _M,
        mul,
    )


def _sipround(v0, v1, v2, v3):
    v0 = (v0 + v1) & _M
    v1 = _rotl(v1, 13) ^ v0
    v0 = _rotl(v0, 32)
    v2 = (v2 + v3) & _M
    v3 = _rotl(v3, 16) ^ v2
    v0 = (v0 + v3) & _M
    v3 = _rotl(v3, 21) ^ v0
    v2 = (v2 + v1) & _M
    v1 = _rotl(v1, 17) ^ v2
    v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


def _rotl(v, b):
    return ((v << b) | (v >> (64 - b))) & _M


def siphash24(key0, key1, data):
    """SipHash-2-4 (64-bit output) of `data` (bytes; str is UTF-8 encoded) under the 128-bit
    key ``(key0, key1)`` (two 64-bit words, as TensorFlow's StrongKeyedHash takes them)."""
    s = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    k0, k1 = key0 & _M, key1 & _M
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573
    n = len(s)
    full = n - n % 8
    for i in range(0, full, 8):
        m = _fetch64(s, i)
        v3 ^= m
        v0, v1, v2, v3 = _sipround(*_sipround(v0, v1, v2, v3))
        v0 ^= m
    last = int.from_bytes(s[full:], "little") | ((n & 0xFF) << 56)
    v3 ^= last
    v0, v1, v2, v3 = _sipround(*_sipround(v0, v1, v2, v3))
    v0 ^= last
    v2 ^= 0xFF
    for _ in range(4):
        v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


# ---- the same hashes of integers' decimal text, vectorized on the integers' device -------------
#
# ``str(v)`` of an int64 has 1 to 20 bytes, so only FarmHash's 0-16 and 17-32 byte branches and
# at most two SipHash blocks occur: every branch is computed for every value with uint64 ember
# ops (wrapping arithmetic) and the one of each value's length is kept.

_POWS = {}  # device -> the uint64 powers of ten
_W = 24  # bytes per row: the longest text (20) padded so every 8-byte fetch stays inside


def _decimal_bytes(x):
    """The bytes of ``str(v)`` for each int64 `v` of the 1-D ember array `x`, as an (n, 24)
    uint64 matrix (zero padded), and the lengths (int64)."""
    dev = x.device
    u64 = _e.uint64
    neg = x < 0
    u = x.astype(u64)
    mag = _e.where(neg, _e.zeros((), dtype=u64, device=dev) - u, u)  # |v|, INT64_MIN included
    key = str(dev)
    if key not in _POWS:
        _POWS[key] = _e.asarray(_np.asarray([10**k for k in range(20)], _np.uint64), device=dev)
    pows = _POWS[key]
    digits = (mag[:, None] // pows) % 10  # least significant first
    ndig = 1 + _e.sum((mag[:, None] >= pows[1:]).astype(_e.int64), axis=1)
    sign = neg.astype(_e.int64)
    length = ndig + sign
    j = _e.arange(_W, device=dev)[None, :]
    pos = _e.clip(ndig[:, None] - 1 - (j - sign[:, None]), 0, 19)
    valid = (j >= sign[:, None]) & (j < length[:, None])
    chars = _rows_take(digits, pos) + 48
    dash = _e.where(neg[:, None] & (j == 0), 45, 0).astype(u64)
    return _e.where(valid, chars, dash), length


def _rows_take(m, cols):
    """``m[i, cols[i, j]]`` for in-range `cols` (a flat take in "clip" mode: no bounds-check
    read back from the device)."""
    rows = _e.arange(m.shape[0], device=m.device)[:, None] * m.shape[1]
    return _e.take(m, rows + cols, mode="clip")


def _fetch(b, off, width):
    """Little-endian `width`-byte words of the rows of `b` at per-row byte offsets `off`."""
    if isinstance(off, int):
        off = _e.full((b.shape[0],), off, dtype=_e.int64, device=b.device)
    off = _e.clip(off, 0, _W - width)
    cols = _rows_take(b, off[:, None] + _e.arange(width, device=b.device)[None, :])
    out = cols[:, 0]
    for k in range(1, width):
        out = out | (cols[:, k] << (8 * k))
    return out


def _vrot(v, s):
    return (v >> s) | (v << (64 - s))


def _vhash16(u, v, mul):
    a = (u ^ v) * mul
    a = a ^ (a >> 47)
    b = (v ^ a) * mul
    b = b ^ (b >> 47)
    return b * mul


def fingerprint64_ints(x):
    """``fingerprint64(str(v))`` for each int64 of the 1-D ember array `x`, on its device
    (uint64)."""
    b, n = _decimal_bytes(x)
    k0, k1, k2 = _np.uint64(_K0), _np.uint64(_K1), _np.uint64(_K2)
    nu = n.astype(_e.uint64)
    mul = nu * 2 + k2
    # 17 to 20 bytes
    a = _fetch(b, 0, 8) * k1
    bb = _fetch(b, 8, 8)
    c = _fetch(b, n - 8, 8) * mul
    d = _fetch(b, n - 16, 8) * k2
    h17 = _vhash16(_vrot(a + bb, 43) + _vrot(c, 30) + d, a + _vrot(bb + k2, 18) + c, mul)
    # 8 to 16 bytes
    a = _fetch(b, 0, 8) + k2
    bb = _fetch(b, n - 8, 8)
    h8 = _vhash16(_vrot(bb, 37) * mul + a, (_vrot(a, 25) + bb) * mul, mul)
    # 4 to 7 bytes
    h4 = _vhash16(nu + (_fetch(b, 0, 4) << 3), _fetch(b, n - 4, 4), mul)
    # 1 to 3 bytes
    y = _fetch(b, 0, 1) + (_fetch(b, n >> 1, 1) << 8)
    z = nu + (_fetch(b, n - 1, 1) << 2)
    v = y * k2 ^ z * k0
    h1 = (v ^ (v >> 47)) * k2
    return _e.where(n >= 17, h17, _e.where(n >= 8, h8, _e.where(n >= 4, h4, h1)))


def _vsipround(v0, v1, v2, v3):
    def rotl(v, s):
        return (v << s) | (v >> (64 - s))

    v0 = v0 + v1
    v1 = rotl(v1, 13) ^ v0
    v0 = rotl(v0, 32)
    v2 = v2 + v3
    v3 = rotl(v3, 16) ^ v2
    v0 = v0 + v3
    v3 = rotl(v3, 21) ^ v0
    v2 = v2 + v1
    v1 = rotl(v1, 17) ^ v2
    v2 = rotl(v2, 32)
    return v0, v1, v2, v3


def siphash24_ints(key0, key1, x):
    """``siphash24(key0, key1, str(v))`` for each int64 of the 1-D ember array `x`, on its
    device (uint64)."""
    b, n = _decimal_bytes(x)
    k0, k1 = _np.uint64(key0 & _M), _np.uint64(key1 & _M)
    zero = _e.zeros(x.shape, dtype=_e.uint64, device=x.device)
    v = [
        zero + (k0 ^ _np.uint64(0x736F6D6570736575)),
        zero + (k1 ^ _np.uint64(0x646F72616E646F6D)),
        zero + (k0 ^ _np.uint64(0x6C7967656E657261)),
        zero + (k1 ^ _np.uint64(0x7465646279746573)),
    ]

    def block(v, m):
        v0, v1, v2, v3 = v
        v0, v1, v2, v3 = _vsipround(*_vsipround(v0, v1, v2, v3 ^ m))
        return [v0 ^ m, v1, v2, v3]

    for i in range(2):  # the full 8-byte blocks (at most 2 in 20 bytes)
        done = block(v, _fetch(b, 8 * i, 8))
        has = n >= 8 * (i + 1)
        v = [_e.where(has, new, old) for new, old in zip(done, v, strict=True)]
    full = n - n % 8
    last = _fetch(b, full, 8) | (n.astype(_e.uint64) << 56)  # bytes past the text are zero
    v = block(v, last)
    v[2] = v[2] ^ _np.uint64(0xFF)
    for _ in range(2):
        v = list(_vsipround(*_vsipround(*v)))
    return v[0] ^ v[1] ^ v[2] ^ v[3]
