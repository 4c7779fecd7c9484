"""The C++ headers of ember's Python kernels: ``COMMON`` (arrays, tuples, index arithmetic,
float16, the intrinsics' names) over either ``DEVICE`` (CUDA: NVRTC compiles it with ember's
device prelude and op-table scalar bodies) or ``HOST`` (the CPU mode: the same generated code
compiled by the host's C++ compiler; GPU threads are fibers of a block, so barriers, warp
shuffles and grid sync behave as on the GPU; blocks run in parallel on the host's cores).
"""

from __future__ import annotations

DEVICE = r"""
#include "ember/device_prelude.cuh"
#include "ember/ops/scalar.hpp"
#define EJ_DEVICE __device__ __forceinline__
#define EJ_SHARED(T, name, n) __shared__ T name[n]
#define EJ_CONSTANT __constant__
namespace ej {
struct half {
    unsigned short bits;
    half() = default;
    __device__ half(float f) : bits(ember::dev::from_float<ember::float16>(f).bits) {}
    __device__ half(double f) : half(float(f)) {}
    __device__ half(int v) : half(float(v)) {}
    __device__ half(long long v) : half(float(v)) {}
    __device__ operator float() const { return ember::dev::to_float(ember::float16{bits}); }
};
#ifdef EMBER_DEVICE_COMPLEX
template <class T> using complex = cuda::std::complex<T>;
#endif
__device__ __forceinline__ long long tid_x() { return threadIdx.x; }
__device__ __forceinline__ long long tid_y() { return threadIdx.y; }
__device__ __forceinline__ long long tid_z() { return threadIdx.z; }
__device__ __forceinline__ long long bid_x() { return blockIdx.x; }
__device__ __forceinline__ long long bid_y() { return blockIdx.y; }
__device__ __forceinline__ long long bid_z() { return blockIdx.z; }
__device__ __forceinline__ long long bdim_x() { return blockDim.x; }
__device__ __forceinline__ long long bdim_y() { return blockDim.y; }
__device__ __forceinline__ long long bdim_z() { return blockDim.z; }
__device__ __forceinline__ long long gdim_x() { return gridDim.x; }
__device__ __forceinline__ long long gdim_y() { return gridDim.y; }
__device__ __forceinline__ long long gdim_z() { return gridDim.z; }
__device__ __forceinline__ int lane_id() { return threadIdx.x & 31; }
__device__ __forceinline__ void syncthreads() { __syncthreads(); }
__device__ __forceinline__ int syncthreads_count(bool p) { return __syncthreads_count(p); }
__device__ __forceinline__ int syncthreads_and(bool p) { return __syncthreads_and(p); }
__device__ __forceinline__ int syncthreads_or(bool p) { return __syncthreads_or(p); }
__device__ __forceinline__ void syncwarp(unsigned m) { __syncwarp(m); }
__device__ __forceinline__ void threadfence() { __threadfence(); }
__device__ __forceinline__ void threadfence_block() { __threadfence_block(); }
__device__ __forceinline__ void threadfence_system() { __threadfence_system(); }
__device__ __forceinline__ unsigned activemask() { return __activemask(); }
__device__ __forceinline__ unsigned lanemask_lt() {
    unsigned r; asm("mov.u32 %0, %%lanemask_lt;" : "=r"(r)); return r;
}
template <class T> __device__ __forceinline__ T shfl_sync(unsigned m, T v, int l) { return __shfl_sync(m, v, l); }
template <class T> __device__ __forceinline__ T shfl_up_sync(unsigned m, T v, int d) { return __shfl_up_sync(m, v, d); }
template <class T> __device__ __forceinline__ T shfl_down_sync(unsigned m, T v, int d) { return __shfl_down_sync(m, v, d); }
template <class T> __device__ __forceinline__ T shfl_xor_sync(unsigned m, T v, int d) { return __shfl_xor_sync(m, v, d); }
__device__ __forceinline__ bool shfl_sync(unsigned m, bool v, int l) { return __shfl_sync(m, int(v), l); }
__device__ __forceinline__ unsigned ballot_sync(unsigned m, bool p) { return __ballot_sync(m, p); }
__device__ __forceinline__ int all_sync(unsigned m, bool p) { return __all_sync(m, p); }
__device__ __forceinline__ int any_sync(unsigned m, bool p) { return __any_sync(m, p); }
__device__ __forceinline__ void grid_sync() {
    // A grid barrier for cooperative launches: one counter, generation in the high bit.
    extern __device__ unsigned int ej_grid_barrier_word;
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        const unsigned int nb = gridDim.x * gridDim.y * gridDim.z;
        const bool master = blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0;
        const unsigned int add = master ? 0x80000000u - (nb - 1) : 1u;
        __threadfence();
        const unsigned int old = atomicAdd(&ej_grid_barrier_word, add);
        while (((old ^ *(volatile unsigned int*)&ej_grid_barrier_word) & 0x80000000u) == 0) {}
        __threadfence();
    }
    __syncthreads();
}
__device__ __forceinline__ float fast_sin(float x) { return __sinf(x); }
__device__ __forceinline__ float fast_cos(float x) { return __cosf(x); }
__device__ __forceinline__ float fast_tan(float x) { return __tanf(x); }
__device__ __forceinline__ float fast_exp(float x) { return __expf(x); }
__device__ __forceinline__ float fast_log(float x) { return __logf(x); }
__device__ __forceinline__ float fast_log2(float x) { return __log2f(x); }
__device__ __forceinline__ float fast_log10(float x) { return __log10f(x); }
__device__ __forceinline__ float fast_divide(float a, float b) { return __fdividef(a, b); }
template <class T> __device__ __forceinline__ T fma(T a, T b, T c) { return ::fma(a, b, c); }
__device__ __forceinline__ double erf(double x) { return ::erf(x); }
__device__ __forceinline__ float erf(float x) { return ::erff(x); }
__device__ __forceinline__ double erfc(double x) { return ::erfc(x); }
__device__ __forceinline__ float erfc(float x) { return ::erfcf(x); }
__device__ __forceinline__ double lgamma(double x) { return ::lgamma(x); }
__device__ __forceinline__ float lgamma(float x) { return ::lgammaf(x); }
__device__ __forceinline__ double tgamma(double x) { return ::tgamma(x); }
__device__ __forceinline__ float tgamma(float x) { return ::tgammaf(x); }
__device__ __forceinline__ double exp2(double x) { return ::exp2(x); }
__device__ __forceinline__ float exp2(float x) { return ::exp2f(x); }
__device__ __forceinline__ double cbrt(double x) { return ::cbrt(x); }
__device__ __forceinline__ float cbrt(float x) { return ::cbrtf(x); }
template <class T> __device__ __forceinline__ T nan() { return T(__longlong_as_double(0x7ff8000000000000ll)); }
template <class T> __device__ __forceinline__ T inf() { return T(__longlong_as_double(0x7ff0000000000000ll)); }

// Atomics: the hardware's where it has them, else a compare-and-swap loop on the bits.
template <class T, class F>
__device__ T atomic_cas_loop(T* p, F f) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "atomic on this size");
    using U = typename std::conditional<sizeof(T) == 4, unsigned int, unsigned long long>::type;
    U* q = reinterpret_cast<U*>(p);
    U old = *q, assumed;
    do {
        assumed = old;
        T cur; memcpy(&cur, &assumed, sizeof(T));
        T nv = f(cur);
        U nb; memcpy(&nb, &nv, sizeof(T));
        old = atomicCAS(q, assumed, nb);
    } while (old != assumed);
    T r; memcpy(&r, &old, sizeof(T));
    return r;
}
template <class T> __device__ T atomic_add(T* p, T v) {
    if constexpr (sizeof(T) == 8 && std::is_integral_v<T>)
        return T(atomicAdd(reinterpret_cast<unsigned long long*>(p), (unsigned long long)v));
    else if constexpr (sizeof(T) < 4)
        return atomic_cas_loop(p, [&](T c) { return T(c + v); });
    else
        return atomicAdd(p, v);
}
template <class T> __device__ T atomic_sub(T* p, T v) {
    if constexpr (std::is_integral_v<T>) return atomic_add(p, T(T(0) - v));
    else return atomic_add(p, T(-v));
}
template <class T> __device__ T atomic_max(T* p, T v) {
    if constexpr (std::is_floating_point_v<T>)
        return atomic_cas_loop(p, [&](T c) { return (c < v || c != c) ? v : c; });
    else if constexpr (sizeof(T) == 8)
        return T(std::is_signed_v<T> ? (T)atomicMax((long long*)p, (long long)v)
                                                : (T)atomicMax((unsigned long long*)p, (unsigned long long)v));
    else return atomicMax(p, v);
}
template <class T> __device__ T atomic_min(T* p, T v) {
    if constexpr (std::is_floating_point_v<T>)
        return atomic_cas_loop(p, [&](T c) { return (c > v || c != c) ? v : c; });
    else if constexpr (sizeof(T) == 8)
        return T(std::is_signed_v<T> ? (T)atomicMin((long long*)p, (long long)v)
                                                : (T)atomicMin((unsigned long long*)p, (unsigned long long)v));
    else return atomicMin(p, v);
}
template <class T> __device__ T atomic_nanmax(T* p, T v) {
    return atomic_cas_loop(p, [&](T c) { return (c < v || c != c) && v == v ? v : c; });
}
template <class T> __device__ T atomic_nanmin(T* p, T v) {
    return atomic_cas_loop(p, [&](T c) { return (c > v || c != c) && v == v ? v : c; });
}
template <class T> __device__ T atomic_and(T* p, T v) { return atomic_cas_loop(p, [&](T c) { return T(c & v); }); }
template <class T> __device__ T atomic_or(T* p, T v) { return atomic_cas_loop(p, [&](T c) { return T(c | v); }); }
template <class T> __device__ T atomic_xor(T* p, T v) { return atomic_cas_loop(p, [&](T c) { return T(c ^ v); }); }
template <class T> __device__ T atomic_exch(T* p, T v) { return atomic_cas_loop(p, [&](T) { return v; }); }
template <class T> __device__ T atomic_inc(T* p, T v) { return atomic_cas_loop(p, [&](T c) { return c >= v ? T(0) : T(c + 1); }); }
template <class T> __device__ T atomic_dec(T* p, T v) { return atomic_cas_loop(p, [&](T c) { return (c == 0 || c > v) ? v : T(c - 1); }); }
template <class T> __device__ T atomic_cas(T* p, T old, T v) { return atomic_cas_loop(p, [&](T c) { return c == old ? v : c; }); }
extern __shared__ unsigned char ej_dynamic_shared_bytes[];
}  // namespace ej
"""

HOST = r"""
#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include "ember/half.hpp"
#include "ember/ops/scalar.hpp"
#define EJ_DEVICE static inline
#define EJ_SHARED(T, name, n) static thread_local T name[n]
#define EJ_CONSTANT static const
namespace ej {
using half = ember::float16;
template <class T> using complex = std::complex<T>;
struct Dim { long long x = 1, y = 1, z = 1; };
struct ThreadCtx;
struct Sched;
// The GPU thread running now on this host thread, and its block's scheduler (fiber mode).
inline thread_local ThreadCtx* cur = nullptr;
inline thread_local Sched* sched = nullptr;
inline thread_local unsigned char* dyn_shared = nullptr;
inline thread_local long long dyn_shared_bytes = 0;
struct ThreadCtx {
    Dim tid, bid;
    void* sp = nullptr;        // the saved stack pointer (fiber mode)
    int state = 0;             // 0 running, 1 at the block barrier, 2 at its warp's barrier, 3 done, 4 at the grid barrier
    int pred = 0;              // its barrier predicate
    unsigned long long word = 0;  // the value it offers to its warp
    int warp = 0, lane = 0;
    char* stack = nullptr;
};
inline thread_local Dim grid_dim, block_dim;
inline long long tid_x() { return cur->tid.x; }
inline long long tid_y() { return cur->tid.y; }
inline long long tid_z() { return cur->tid.z; }
inline long long bid_x() { return cur->bid.x; }
inline long long bid_y() { return cur->bid.y; }
inline long long bid_z() { return cur->bid.z; }
inline long long bdim_x() { return block_dim.x; }
inline long long bdim_y() { return block_dim.y; }
inline long long bdim_z() { return block_dim.z; }
inline long long gdim_x() { return grid_dim.x; }
inline long long gdim_y() { return grid_dim.y; }
inline long long gdim_z() { return grid_dim.z; }
inline int lane_id() { return cur->lane; }
void yield_to_scheduler(int state);
int barrier_result(int kind);
inline void syncthreads() { cur->pred = 0; yield_to_scheduler(1); }
inline int syncthreads_count(bool p) { cur->pred = p; yield_to_scheduler(1); return barrier_result(0); }
inline int syncthreads_and(bool p) { cur->pred = p; yield_to_scheduler(1); return barrier_result(1); }
inline int syncthreads_or(bool p) { cur->pred = p; yield_to_scheduler(1); return barrier_result(2); }
inline void syncwarp(unsigned) { yield_to_scheduler(2); }
inline void threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }
unsigned long long* warp_words();
int warp_width();
inline unsigned activemask() {
    const int w = warp_width();
    return w >= 32 ? 0xffffffffu : ((1u << w) - 1u);
}
inline unsigned lanemask_lt() { return (1u << cur->lane) - 1u; }
template <class T> inline unsigned long long to_word(T v) { unsigned long long w = 0; std::memcpy(&w, &v, sizeof(T)); return w; }
template <class T> inline T from_word(unsigned long long w) { T v; std::memcpy(&v, &w, sizeof(T)); return v; }
// A warp exchange: every lane offers a word, all wait, each reads the lane it wants, all wait.
template <class T, class F> inline T exchange(T v, F pick) {
    cur->word = to_word(v);
    yield_to_scheduler(2);
    const int w = warp_width();
    const int src = pick(cur->lane, w);
    const unsigned long long got = (src >= 0 && src < w) ? warp_words()[src] : cur->word;
    yield_to_scheduler(2);
    return from_word<T>(got);
}
template <class T> inline T shfl_sync(unsigned, T v, int l) { return exchange(v, [&](int, int w) { return ((l % 32) + 32) % 32 % (w > 0 ? 32 : 1); }); }
template <class T> inline T shfl_up_sync(unsigned, T v, int d) { return exchange(v, [&](int lane, int) { return lane - d >= 0 ? lane - d : -1; }); }
template <class T> inline T shfl_down_sync(unsigned, T v, int d) { return exchange(v, [&](int lane, int w) { return lane + d < w ? lane + d : -1; }); }
template <class T> inline T shfl_xor_sync(unsigned, T v, int d) { return exchange(v, [&](int lane, int w) { return (lane ^ d) < w ? (lane ^ d) : -1; }); }
inline unsigned ballot_sync(unsigned m, bool p) {
    cur->word = p;
    yield_to_scheduler(2);
    unsigned r = 0;
    const int w = warp_width();
    for (int i = 0; i < w; ++i) if (warp_words()[i] && (m >> i & 1u)) r |= 1u << i;
    yield_to_scheduler(2);
    return r;
}
inline int all_sync(unsigned m, bool p) { return ballot_sync(m, p) == (ballot_sync(m, true)); }
inline int any_sync(unsigned m, bool p) { return ballot_sync(m, p) != 0; }
inline void grid_sync() { yield_to_scheduler(4); }
inline float fast_sin(float x) { return std::sin(x); }
inline float fast_cos(float x) { return std::cos(x); }
inline float fast_tan(float x) { return std::tan(x); }
inline float fast_exp(float x) { return std::exp(x); }
inline float fast_log(float x) { return std::log(x); }
inline float fast_log2(float x) { return std::log2(x); }
inline float fast_log10(float x) { return std::log10(x); }
inline float fast_divide(float a, float b) { return a / b; }
template <class T> inline T fma(T a, T b, T c) { return std::fma(a, b, c); }
using std::erf; using std::erfc; using std::lgamma; using std::tgamma; using std::exp2; using std::cbrt;
template <class T> inline T nan() { return std::numeric_limits<T>::quiet_NaN(); }
template <class T> inline T inf() { return std::numeric_limits<T>::infinity(); }
template <class T, class F> inline T atomic_rmw(T* p, F f) {
    if constexpr (sizeof(T) == 2) {
        std::atomic_ref<unsigned short> a(*reinterpret_cast<unsigned short*>(p));
        unsigned short old = a.load();
        for (;;) { T c; std::memcpy(&c, &old, 2); T n = f(c); unsigned short nb; std::memcpy(&nb, &n, 2);
                   if (a.compare_exchange_weak(old, nb)) return c; }
    } else {
        std::atomic_ref<T> a(*p);
        T old = a.load();
        while (!a.compare_exchange_weak(old, f(old))) {}
        return old;
    }
}
template <class T> inline T atomic_add(T* p, T v) {
    if constexpr (std::is_integral_v<T> && sizeof(T) >= 4) return std::atomic_ref<T>(*p).fetch_add(v);
    else return atomic_rmw(p, [&](T c) { return T(c + v); });
}
template <class T> inline T atomic_sub(T* p, T v) { return atomic_rmw(p, [&](T c) { return T(c - v); }); }
template <class T> inline T atomic_max(T* p, T v) { return atomic_rmw(p, [&](T c) { return (c < v || c != c) ? v : c; }); }
template <class T> inline T atomic_min(T* p, T v) { return atomic_rmw(p, [&](T c) { return (c > v || c != c) ? v : c; }); }
template <class T> inline T atomic_nanmax(T* p, T v) { return atomic_rmw(p, [&](T c) { return (c < v || c != c) && v == v ? v : c; }); }
template <class T> inline T atomic_nanmin(T* p, T v) { return atomic_rmw(p, [&](T c) { return (c > v || c != c) && v == v ? v : c; }); }
template <class T> inline T atomic_and(T* p, T v) { return atomic_rmw(p, [&](T c) { return T(c & v); }); }
template <class T> inline T atomic_or(T* p, T v) { return atomic_rmw(p, [&](T c) { return T(c | v); }); }
template <class T> inline T atomic_xor(T* p, T v) { return atomic_rmw(p, [&](T c) { return T(c ^ v); }); }
template <class T> inline T atomic_exch(T* p, T v) { return atomic_rmw(p, [&](T) { return v; }); }
template <class T> inline T atomic_inc(T* p, T v) { return atomic_rmw(p, [&](T c) { return c >= v ? T(0) : T(c + 1); }); }
template <class T> inline T atomic_dec(T* p, T v) { return atomic_rmw(p, [&](T c) { return (c == 0 || c > v) ? v : T(c - 1); }); }
template <class T> inline T atomic_cas(T* p, T old, T v) { return atomic_rmw(p, [&](T c) { return c == old ? v : c; }); }
}  // namespace ej
"""

COMMON = r"""
namespace ej {
template <class T, int N>
struct Array {
    T* data;
    long long shape[N];
    long long strides[N];  // in elements
    template <class... I>
    EJ_DEVICE_INLINE T& at(I... idx) const {
        const long long ix[] = {(long long)idx...};
        long long off = 0;
        for (int k = 0; k < N; ++k) off += ix[k] * strides[k];
        return data[off];
    }
    EJ_DEVICE_INLINE long long size() const {
        long long n = 1;
        for (int k = 0; k < N; ++k) n *= shape[k];
        return n;
    }
    EJ_DEVICE_INLINE auto shape_tuple() const;
    EJ_DEVICE_INLINE auto byte_strides(long long item) const;
    EJ_DEVICE_INLINE Array transposed() const {
        Array r = *this;
        for (int k = 0; k < N; ++k) { r.shape[k] = shape[N - 1 - k]; r.strides[k] = strides[N - 1 - k]; }
        return r;
    }
};
template <class T>
struct Array<T, 0> {
    T* data;
    long long shape[1];
    long long strides[1];
    EJ_DEVICE_INLINE T& at() const { return *data; }
    EJ_DEVICE_INLINE long long size() const { return 1; }
};
template <class T, int N>
struct Tuple {
    T v[N];
    EJ_DEVICE_INLINE T& operator[](long long i) { return v[i]; }
    EJ_DEVICE_INLINE const T& operator[](long long i) const { return v[i]; }
};
template <class T, int N>
EJ_DEVICE_INLINE auto Array<T, N>::shape_tuple() const {
    Tuple<long long, N> t;
    for (int k = 0; k < N; ++k) t.v[k] = shape[k];
    return t;
}
template <class T, int N>
EJ_DEVICE_INLINE auto Array<T, N>::byte_strides(long long item) const {
    Tuple<long long, N> t;
    for (int k = 0; k < N; ++k) t.v[k] = strides[k] * item;
    return t;
}
template <class T, int N>
EJ_DEVICE_INLINE Array<T, N> make_array(T* p, Tuple<long long, N> shape, Tuple<long long, N> strides) {
    Array<T, N> a;
    a.data = p;
    for (int k = 0; k < N; ++k) { a.shape[k] = shape.v[k]; a.strides[k] = strides.v[k]; }
    return a;
}
EJ_DEVICE_INLINE long long wrap(long long i, long long n) { return i < 0 ? i + n : i; }
// Python's slice of a dimension of n: the first index and the length.
EJ_DEVICE_INLINE void slice(long long n, long long lo, bool has_lo, long long hi, bool has_hi,
                            long long st, long long& first, long long& len) {
    if (st > 0) {
        lo = has_lo ? (lo < 0 ? (lo + n < 0 ? 0 : lo + n) : (lo > n ? n : lo)) : 0;
        hi = has_hi ? (hi < 0 ? (hi + n < 0 ? 0 : hi + n) : (hi > n ? n : hi)) : n;
        len = hi > lo ? (hi - lo + st - 1) / st : 0;
    } else {
        lo = has_lo ? (lo < 0 ? (lo + n < 0 ? -1 : lo + n) : (lo >= n ? n - 1 : lo)) : n - 1;
        hi = has_hi ? (hi < 0 ? (hi + n < 0 ? -1 : hi + n) : (hi >= n ? n - 1 : hi)) : -1;
        len = lo > hi ? (lo - hi - st - 1) / (-st) : 0;
    }
    first = lo;
}
template <class C, class T>
EJ_DEVICE_INLINE C to_complex(T v) { return C(v); }
#ifdef EJ_COMPLEX
template <class C, class R>
EJ_DEVICE_INLINE C to_complex(complex<R> v) { return C(v.real(), v.imag()); }
#endif
EJ_DEVICE_INLINE long long grid1() { return tid_x() + bid_x() * bdim_x(); }
EJ_DEVICE_INLINE Tuple<long long, 2> grid2() { return {{tid_x() + bid_x() * bdim_x(), tid_y() + bid_y() * bdim_y()}}; }
EJ_DEVICE_INLINE Tuple<long long, 3> grid3() {
    return {{tid_x() + bid_x() * bdim_x(), tid_y() + bid_y() * bdim_y(), tid_z() + bid_z() * bdim_z()}};
}
EJ_DEVICE_INLINE long long gridsize1() { return bdim_x() * gdim_x(); }
EJ_DEVICE_INLINE Tuple<long long, 2> gridsize2() { return {{bdim_x() * gdim_x(), bdim_y() * gdim_y()}}; }
EJ_DEVICE_INLINE Tuple<long long, 3> gridsize3() {
    return {{bdim_x() * gdim_x(), bdim_y() * gdim_y(), bdim_z() * gdim_z()}};
}
template <class A, class B>
EJ_DEVICE_INLINE auto py_min(A a, B b) { return b < a ? b : a; }
template <class A, class B>
EJ_DEVICE_INLINE auto py_max(A a, B b) { return b > a ? b : a; }
template <class T>
EJ_DEVICE_INLINE Array<T, 1> dynamic_shared() {
    Array<T, 1> a;
    a.data = reinterpret_cast<T*>(EJ_DYNAMIC_SHARED);
    a.shape[0] = EJ_DYNAMIC_SHARED_BYTES / (long long)sizeof(T);
    a.strides[0] = 1;
    return a;
}
}  // namespace ej
"""

DEVICE_TAIL = r"""
#define EJ_DEVICE_INLINE __device__ __forceinline__
#define EJ_DYNAMIC_SHARED ej_dynamic_shared_bytes
#define EJ_DYNAMIC_SHARED_BYTES ((long long)ej::dyn_shared_size())
namespace ej {
__device__ __forceinline__ unsigned dyn_shared_size() {
    unsigned r; asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r)); return r;
}
}
"""

HOST_TAIL = r"""
#define EJ_DEVICE_INLINE inline
#define EJ_DYNAMIC_SHARED ej::dyn_shared
#define EJ_DYNAMIC_SHARED_BYTES ej::dyn_shared_bytes
"""

# The fiber scheduler of the CPU mode, compiled once per kernel module (after the kernel text).
HOST_SCHEDULER = r"""
namespace ej {
extern "C" void ej_switch(void** save, void* to);
#if defined(__x86_64__)
asm(R"EJ(
.text
.p2align 4
.globl ej_switch
.hidden ej_switch
ej_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
)EJ");
#elif defined(__aarch64__)
asm(R"EJ(
.text
.p2align 4
.globl ej_switch
.hidden ej_switch
ej_switch:
    sub sp, sp, #176
    stp x19, x20, [sp, #0]
    stp x21, x22, [sp, #16]
    stp x23, x24, [sp, #32]
    stp x25, x26, [sp, #48]
    stp x27, x28, [sp, #64]
    stp x29, x30, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    mov x2, sp
    str x2, [x0]
    mov sp, x1
    ldp x19, x20, [sp, #0]
    ldp x21, x22, [sp, #16]
    ldp x23, x24, [sp, #32]
    ldp x25, x26, [sp, #48]
    ldp x27, x28, [sp, #64]
    ldp x29, x30, [sp, #80]
    ldp d8, d9, [sp, #96]
    ldp d10, d11, [sp, #112]
    ldp d12, d13, [sp, #128]
    ldp d14, d15, [sp, #144]
    add sp, sp, #176
    ret
)EJ");
#else
#error "ember.cuda.jit's CPU mode needs x86-64 or aarch64"
#endif

using Body = void (*)(void* const* args);

struct Sched {
    std::vector<ThreadCtx> threads;
    void* home = nullptr;  // the scheduler's own stack pointer while a fiber runs
    Body body = nullptr;
    void* const* args = nullptr;
    long long stack_bytes = 0;
    int result[3] = {0, 0, 0};  // the last barrier's count, and, or
    std::vector<unsigned long long> words;  // one per thread: what it offers its warp
    ThreadCtx* running = nullptr;
    std::string error;
};

[[noreturn]] static void fiber_entry() {
    Sched* s = sched;
    s->body(s->args);
    cur->state = 3;
    ej_switch(&cur->sp, s->home);
    __builtin_unreachable();
}

inline void yield_to_scheduler(int state) {
    Sched* s = sched;
    if (!s) {  // not in fiber mode: a barrier with one thread per block (cannot happen) or none
        return;
    }
    cur->state = state;
    s->words[&*cur - s->threads.data()] = cur->word;
    ej_switch(&cur->sp, s->home);
}
inline int barrier_result(int kind) { return sched ? sched->result[kind] : cur->pred; }
inline unsigned long long* warp_words() {
    Sched* s = sched;
    const long long first = (&*cur - s->threads.data()) - cur->lane;
    return s->words.data() + first;
}
inline int warp_width() {
    Sched* s = sched;
    const long long first = (&*cur - s->threads.data()) - cur->lane;
    const long long block = block_dim.x * block_dim.y * block_dim.z;
    const long long in_block = first % block;
    return int(std::min<long long>(32, block - in_block));
}

static void start_fiber(ThreadCtx& t, long long bytes) {
    t.stack = static_cast<char*>(std::malloc(size_t(bytes)));
    uintptr_t top = (reinterpret_cast<uintptr_t>(t.stack) + uintptr_t(bytes)) & ~uintptr_t(15);
    void** sp = reinterpret_cast<void**>(top);
#if defined(__x86_64__)
    *--sp = nullptr;                                   // the entry's (unused) return address
    *--sp = reinterpret_cast<void*>(&fiber_entry);     // where ej_switch's ret goes
    for (int i = 0; i < 6; ++i) *--sp = nullptr;       // rbp rbx r12..r15
#else
    sp -= 22;                                          // 176 bytes: x19..x30, d8..d15
    for (int i = 0; i < 22; ++i) sp[i] = nullptr;
    sp[11] = reinterpret_cast<void*>(&fiber_entry);   // x30 (the link register)
#endif
    t.sp = sp;
}

// Runs `threads` (the GPU threads of one block, or of the whole grid for grid sync) as fibers
// until all are done; barriers release when every live thread of the group has arrived.
static void run_fibers(Sched& s) {
    sched = &s;
    s.words.assign(s.threads.size(), 0);
    const long long block = block_dim.x * block_dim.y * block_dim.z;
    for (ThreadCtx& t : s.threads) start_fiber(t, s.stack_bytes);
    for (;;) {
        bool progress = false, live = false;
        for (ThreadCtx& t : s.threads) {
            if (t.state != 0) continue;
            live = true;
            progress = true;
            cur = &t;
            ej_switch(&s.home, t.sp);
        }
        if (progress) continue;
        // Everyone is done or waiting: release the barriers whose groups are complete.
        const long long n = (long long)s.threads.size();
        bool released = false;
        for (long long w0 = 0; w0 < n; w0 += 32) {  // warps (within blocks)
            const long long bstart = (w0 / block) * block;
            const long long wend = std::min(std::min(w0 + 32, n), bstart + block);
            bool all = true, any = false;
            for (long long i = w0; i < wend; ++i) {
                if (s.threads[i].state == 2) any = true;
                else if (s.threads[i].state != 3) all = false;
            }
            if (any && all) {
                for (long long i = w0; i < wend; ++i) if (s.threads[i].state == 2) s.threads[i].state = 0;
                released = true;
            }
            if (wend != std::min(w0 + 32, n)) w0 = wend - 32;
        }
        if (released) continue;
        for (long long b0 = 0; b0 < n; b0 += block) {  // blocks
            bool all = true, any = false;
            int cnt = 0, all_true = 1, any_true = 0;
            for (long long i = b0; i < b0 + block; ++i) {
                const ThreadCtx& t = s.threads[i];
                if (t.state == 1) { any = true; cnt += t.pred != 0; all_true &= t.pred != 0; any_true |= t.pred != 0; }
                else if (t.state != 3) all = false;
            }
            if (any && all) {
                s.result[0] = cnt; s.result[1] = all_true; s.result[2] = any_true;
                for (long long i = b0; i < b0 + block; ++i) if (s.threads[i].state == 1) s.threads[i].state = 0;
                released = true;
            }
        }
        if (released) continue;
        bool grid_all = true, grid_any = false;
        for (const ThreadCtx& t : s.threads) {
            if (t.state == 4) grid_any = true;
            else if (t.state != 3) grid_all = false;
        }
        if (grid_any && grid_all) {
            for (ThreadCtx& t : s.threads) if (t.state == 4) t.state = 0;
            continue;
        }
        live = false;
        for (const ThreadCtx& t : s.threads) if (t.state != 3) live = true;
        if (live) s.error = "the threads of a block wait at different barriers (a deadlock on the GPU)";
        break;
    }
    for (ThreadCtx& t : s.threads) std::free(t.stack);
    sched = nullptr;
    cur = nullptr;
}

static void fill_threads(std::vector<ThreadCtx>& v, long long b0, long long nb) {
    const long long block = block_dim.x * block_dim.y * block_dim.z;
    v.clear();
    v.reserve(size_t(nb * block));
    for (long long b = b0; b < b0 + nb; ++b) {
        Dim bid{b % grid_dim.x, (b / grid_dim.x) % grid_dim.y, b / (grid_dim.x * grid_dim.y)};
        for (long long i = 0; i < block; ++i) {
            ThreadCtx t;
            t.bid = bid;
            t.tid = {i % block_dim.x, (i / block_dim.x) % block_dim.y, i / (block_dim.x * block_dim.y)};
            t.lane = int(i % 32);
            t.warp = int(i / 32);
            v.push_back(t);
        }
    }
}

// Runs a kernel over the grid: dims = grid x y z, block x y z; mode 0: no barriers (a loop per
// block), 1: fibers per block, 2: fibers for the whole grid (grid sync). Returns 0, or 1 with
// a message in err.
static int launch(Body body, void* const* args, const long long* dims, long long shared_bytes,
                  int mode, long long stack_bytes, int workers, char* err, int errlen) {
    const Dim g{dims[0], dims[1], dims[2]}, b{dims[3], dims[4], dims[5]};
    const long long nblocks = g.x * g.y * g.z, block = b.x * b.y * b.z;
    if (nblocks == 0 || block == 0) return 0;
    std::atomic<long long> next{0};
    std::string error;
    std::atomic<bool> failed{false};
    auto worker = [&] {
        grid_dim = g;
        block_dim = b;
        std::vector<unsigned char> shared(size_t(shared_bytes > 0 ? shared_bytes : 1));
        dyn_shared = shared.data();
        dyn_shared_bytes = shared_bytes;
        if (mode == 2) {
            Sched s;
            s.body = body; s.args = args; s.stack_bytes = stack_bytes;
            fill_threads(s.threads, 0, nblocks);
            run_fibers(s);
            if (!s.error.empty()) { error = s.error; failed = true; }
            return;
        }
        Sched s;
        s.body = body; s.args = args; s.stack_bytes = stack_bytes;
        ThreadCtx one;
        for (;;) {
            const long long bi = next.fetch_add(1);
            if (bi >= nblocks || failed) break;
            if (mode == 0) {
                one.bid = {bi % g.x, (bi / g.x) % g.y, bi / (g.x * g.y)};
                cur = &one;
                for (long long i = 0; i < block; ++i) {
                    one.tid = {i % b.x, (i / b.x) % b.y, i / (b.x * b.y)};
                    one.lane = int(i % 32);
                    body(args);
                }
                cur = nullptr;
            } else {
                fill_threads(s.threads, bi, 1);
                run_fibers(s);
                if (!s.error.empty()) { error = s.error; failed = true; }
            }
        }
    };
    const long long n = mode == 2 ? 1 : std::max<long long>(1, std::min<long long>(workers, nblocks));
    std::vector<std::thread> pool;
    for (long long i = 1; i < n; ++i) pool.emplace_back(worker);
    worker();
    for (std::thread& t : pool) t.join();
    if (failed) {
        std::snprintf(err, size_t(errlen), "%s", error.c_str());
        return 1;
    }
    return 0;
}
}  // namespace ej
"""
