"""``ember.cuda.random``: Numba's xoroshiro128+ generators for kernels. Each thread owns one
state (two uint64 words; a states array is ``uint64[n, 2]``), created by
:func:`create_xoroshiro128p_states` (seeded with splitmix64, the subsequences 2^64 steps apart by
the generator's jump polynomial) and advanced inside kernels by the device functions below,
which ember's kernel compiler compiles like any other (Python source, this file).
"""

from __future__ import annotations

import numpy as np

from .. import _core
from ._jit import jit

__all__ = [
    "create_xoroshiro128p_states",
    "init_xoroshiro128p_states",
    "xoroshiro128p_next",
    "xoroshiro128p_normal_float32",
    "xoroshiro128p_normal_float64",
    "xoroshiro128p_uniform_float32",
    "xoroshiro128p_uniform_float64",
]

TWO_PI = 6.283185307179586


@jit(device=True)
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@jit(device=True)
def xoroshiro128p_next(states, index):
    """The next 64 random bits of thread `index`'s generator (xoroshiro128+)."""
    s0 = states[index, 0]
    s1 = states[index, 1]
    result = s0 + s1
    s1 ^= s0
    states[index, 0] = _rotl(s0, 24) ^ s1 ^ (s1 << np.uint64(16))
    states[index, 1] = _rotl(s1, 37)
    return result


@jit(device=True)
def xoroshiro128p_uniform_float64(states, index):
    """A float64 uniform on [0, 1)."""
    return np.float64(xoroshiro128p_next(states, index) >> np.uint64(11)) * 1.1102230246251565e-16


@jit(device=True)
def xoroshiro128p_uniform_float32(states, index):
    """A float32 uniform on [0, 1)."""
    bits = xoroshiro128p_next(states, index) >> np.uint64(40)
    return np.float32(bits) * np.float32(5.960464477539063e-08)


@jit(device=True)
def xoroshiro128p_normal_float64(states, index):
    """A float64 standard normal (Box-Muller)."""
    u1 = 1.0 - xoroshiro128p_uniform_float64(states, index)
    u2 = xoroshiro128p_uniform_float64(states, index)
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(TWO_PI * u2)


@jit(device=True)
def xoroshiro128p_normal_float32(states, index):
    """A float32 standard normal (Box-Muller)."""
    u1 = np.float32(1.0) - xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return np.sqrt(np.float32(-2.0) * np.log(u1)) * np.cos(np.float32(TWO_PI) * u2)


@jit(device=True)
def _splitmix64(x):
    z = x + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@jit(device=True)
def _jump(states, i):
    # 2^64 steps of the generator at once: xoroshiro128+'s jump polynomial.
    j0 = np.uint64(0xDF900294D8F554A5)
    j1 = np.uint64(0x170865DF4B3201FC)
    a = np.uint64(0)
    b = np.uint64(0)
    for w in range(2):
        word = j0 if w == 0 else j1
        for bit in range(64):
            if (word >> np.uint64(bit)) & np.uint64(1):
                a ^= states[i, 0]
                b ^= states[i, 1]
            xoroshiro128p_next(states, i)
    states[i, 0] = a
    states[i, 1] = b


@jit
def _init_states(states, seed, start):
    # One host thread: state 0 from the seed, each next state one jump further.
    n = states.shape[0]
    if n == 0:
        return
    z = _splitmix64(seed)
    states[0, 0] = z
    states[0, 1] = _splitmix64(z)
    for _ in range(start):
        _jump(states, 0)
    for i in range(1, n):
        states[i, 0] = states[i - 1, 0]
        states[i, 1] = states[i - 1, 1]
        _jump(states, i)


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Seeds `states` (``uint64[n, 2]``) in place: thread i's generator starts 2^64 * (i +
    subsequence_start) steps into the sequence of `seed`."""
    from .._array import asarray, asnumpy

    # The sequential seeding runs on the host (the CPU mode), then moves where `states` lives.
    host = _core.zeros((states.shape[0], 2), dtype="uint64", device="cpu")
    _init_states[1, 1](host, np.uint64(int(seed) % 2**64), np.int64(subsequence_start))
    if isinstance(states, np.ndarray):
        states[...] = asnumpy(host)
    else:
        states[...] = asarray(host, device=states.device)


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """A new ``uint64[n, 2]`` array of `n` seeded generators on the current GPU (the CPU
    without one), for ``xoroshiro128p_uniform_float32(states, i)`` and friends in kernels."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(
            f"ember.cuda.random.create_xoroshiro128p_states: n must be >= 0, got {n!r}"
        )
    from . import _jit_device

    states = _core.empty((int(n), 2), dtype="uint64", device=_jit_device())
    init_xoroshiro128p_states(states, seed, subsequence_start, stream)
    return states
