"""``topk`` on the GPU for small k: one thread block per row, no sort.

Each of the block's 512 threads scans its strided share of the row keeping its own k best
(key, index) pairs sorted in registers/local memory (four loads in flight each; an insertion
only when a value beats the thread's current k-th, which after the first few elements is
rare), then k rounds of a
block-wide argmax over the threads' heads emit the row's k best in order. The row is read once:
memory speed, where a full sort of the row (the general path) reads and writes it several times
and sorts n elements to keep k. Values are compared through order-preserving unsigned keys
(NaN above everything, as PyTorch orders it); equal values keep the lower index first, so
the result equals a stable sort's first k.

Used by :func:`ember.topk` (and through it kNN in ember.ml) for CUDA arrays of float32,
float64, int32 and int64 with 1 <= k <= 32 along rows of at least 256 elements; the indices
come from the kernel and the values are gathered by ``take_along_axis`` (so gradients flow).
Compiled once per process through ember's RawModule (NVRTC, the kernel disk cache)."""

from __future__ import annotations

import os

# On by default once a GPU run has verified it (tests/python/test_topk.py runs both paths);
# EMBER_TOPK_KERNEL=0/1 overrides.
ENABLED = os.environ.get("EMBER_TOPK_KERNEL", "0") not in ("", "0")

KMAX = 32
THREADS = 512
SUFFIX = {"float32": "f32", "float64": "f64", "int32": "i32", "int64": "i64"}

_CODE = r"""
#define KMAX 32

template <typename K>
__device__ __forceinline__ bool better(K a, long long ia, K b, long long ib) {
    return a > b || (a == b && ia < ib);
}

__device__ __forceinline__ unsigned int key_of(float v) {
    unsigned int u = __float_as_uint(v);
    if (v != v) return 0xffffffffu;
    return (u >> 31) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ unsigned long long key_of(double v) {
    unsigned long long u = (unsigned long long)__double_as_longlong(v);
    if (v != v) return 0xffffffffffffffffull;
    return (u >> 63) ? ~u : (u | 0x8000000000000000ull);
}
__device__ __forceinline__ unsigned int key_of(int v) { return (unsigned int)v ^ 0x80000000u; }
__device__ __forceinline__ unsigned long long key_of(long long v) {
    return (unsigned long long)v ^ 0x8000000000000000ull;
}

template <typename K>
__device__ __forceinline__ void consider(K key, long long j, int k, K* kk, long long* ii,
                                         int& cnt, K& worst, long long& worsti) {
    if (cnt == k && !better(key, j, worst, worsti)) return;
    int pos = cnt < k ? cnt++ : k - 1;
    while (pos > 0 && better(key, j, kk[pos - 1], ii[pos - 1])) {
        kk[pos] = kk[pos - 1];
        ii[pos] = ii[pos - 1];
        --pos;
    }
    kk[pos] = key;
    ii[pos] = j;
    worst = kk[cnt - 1];
    worsti = ii[cnt - 1];
}

template <typename T, typename K>
__device__ void topk_row(const T* __restrict__ x, long long n, int k, bool largest,
                         long long* __restrict__ oi) {
    const long long row = blockIdx.x;
    const T* p = x + row * n;
    K kk[KMAX];
    long long ii[KMAX];
    int cnt = 0;
    K worst = 0;
    long long worsti = 0;
    const K flip = largest ? (K)0 : ~(K)0;
    const long long bd = blockDim.x;
    long long j = threadIdx.x;
    // four loads in flight per thread before any compare: the scan is memory-bound
    for (; j + 3 * bd < n; j += 4 * bd) {
        const T v0 = p[j], v1 = p[j + bd], v2 = p[j + 2 * bd], v3 = p[j + 3 * bd];
        consider<K>(key_of(v0) ^ flip, j, k, kk, ii, cnt, worst, worsti);
        consider<K>(key_of(v1) ^ flip, j + bd, k, kk, ii, cnt, worst, worsti);
        consider<K>(key_of(v2) ^ flip, j + 2 * bd, k, kk, ii, cnt, worst, worsti);
        consider<K>(key_of(v3) ^ flip, j + 3 * bd, k, kk, ii, cnt, worst, worsti);
    }
    for (; j < n; j += bd) consider<K>(key_of(p[j]) ^ flip, j, k, kk, ii, cnt, worst, worsti);
    __shared__ K wk[32];
    __shared__ long long wi[32];
    __shared__ int wt[32];
    __shared__ int wh[32];
    __shared__ int win;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nw = (blockDim.x + 31) >> 5;
    int head = 0;
    for (int r = 0; r < k; ++r) {
        int has = head < cnt;
        K key = has ? kk[head] : (K)0;
        long long idx = has ? ii[head] : 0;
        int tid = threadIdx.x;
        for (int off = 16; off > 0; off >>= 1) {
            K k2 = __shfl_down_sync(0xffffffffu, key, off);
            long long i2 = __shfl_down_sync(0xffffffffu, idx, off);
            int t2 = __shfl_down_sync(0xffffffffu, tid, off);
            int h2 = __shfl_down_sync(0xffffffffu, has, off);
            if (lane + off < 32 && h2 && (!has || better(k2, i2, key, idx))) {
                key = k2;
                idx = i2;
                tid = t2;
                has = 1;
            }
        }
        if (lane == 0) {
            wk[warp] = key;
            wi[warp] = idx;
            wt[warp] = tid;
            wh[warp] = has;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            int b = -1;
            for (int w = 0; w < nw; ++w)
                if (wh[w] && (b < 0 || better(wk[w], wi[w], wk[b], wi[b]))) b = w;
            win = b < 0 ? -1 : wt[b];
            oi[row * k + r] = b < 0 ? 0 : wi[b];
        }
        __syncthreads();
        if ((int)threadIdx.x == win) ++head;
    }
}

#define EMBER_TOPK(SUF, T, K)                                                          \
    extern "C" __global__ void __launch_bounds__(512)                                  \
        ember_topk_##SUF(const T* x, long long n, long long k, bool largest,           \
                         long long* oi) {                                              \
        topk_row<T, K>(x, n, (int)k, largest, oi);                                     \
    }
EMBER_TOPK(f32, float, unsigned int)
EMBER_TOPK(f64, double, unsigned long long)
EMBER_TOPK(i32, int, unsigned int)
EMBER_TOPK(i64, long long, unsigned long long)
"""

_module = None


def usable(x, k, n):
    """Whether the kernel takes this topk: a CUDA array of a supported dtype, 1 <= k <= 32,
    rows of at least 256 elements (shorter rows sort quickly and would idle the block)."""
    return (
        ENABLED
        and x.device.type == "cuda"
        and str(x.dtype) in SUFFIX
        and 1 <= k <= min(KMAX, n)
        and n >= 256
        and x.size > 0
    )


def topk_indices(x, k, largest):
    """Indices (int64, shape ``x.shape[:-1] + (k,)``) of the k largest (or smallest) elements of
    each row of ``x`` along its last axis, best first, ties to the lower index."""
    global _module
    from . import _core
    from ._creation import ascontiguousarray
    from ._kernels._raw import RawModule

    if _module is None:
        _module = RawModule(code=_CODE)
    n = x.shape[-1]
    rows = x.size // n
    xc = ascontiguousarray(x).reshape(rows, n)
    out = _core.empty((rows, k), dtype=_core.int64, device=x.device)
    fn = _module.get_function("ember_topk_" + SUFFIX[str(x.dtype)])
    fn((rows,), (THREADS,), (xc, n, k, bool(largest), out))
    return out.reshape(*x.shape[:-1], k)
