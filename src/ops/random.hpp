// ember's random numbers, written once for all backends: the Philox4x32-10 counter-based
// generator (Salmon et al., SC'11) and the distributions drawn from it. The CPU backend compiles
// this header; the CUDA backend hands the same text to NVRTC after its device prelude, so a seed
// gives the same bits on both devices, and the same floats wherever the math functions agree.
//
// Counters (DESIGN.md §13): a generator is a 64-bit key and a 64-bit position. "Packed"
// distributions (raw bits, uniform, normal, exponential) read block pos + i / V for element i
// (V = 4 values per block for 32-bit results, 2 for 64-bit ones), counter (block, 0, 0); a call
// of n elements advances the position by ceil(n / V). "Streamed" distributions (those with
// rejection loops: integers, gamma, beta, poisson, binomial) give element i its own stream of
// blocks, counter (pos + i, j, 1) for draw j; a call advances the position by n.
//
// Normals come from a 256-layer ziggurat (Marsaglia and Tsang 2000; tables below, made by
// tools/gen_ziggurat.py). A float32 normal (float16, bfloat16: the float32 one, rounded) is one
// 32-bit word of its block: bits 0-7 pick the layer, bit 8 the sign, bits 9-31 the uniform; a
// float64 normal is one 64-bit word (the block's words 2k and 2k + 1, high first): bits 0-7 the
// layer, bit 8 the sign, bits 11-63 the uniform. About 98.5% of words give their normal at once
// (integer compare, one multiply). The rest (wedge test, tail beyond the base layer, a new try)
// draw further words for value k of packed block b from counters (pos + b, j, 2 + k), j = 0, 1,
// ..., the words of each block in order: one word per 32-bit draw, two (high first) per 64-bit
// draw. A rejected try starts over with a new word (layer, sign and uniform) from the same
// stream. Streamed distributions' normals (gamma) are 64-bit words of the element's own stream.
#pragma once

#ifndef EMBER_HD
#define EMBER_HD
#endif

#ifndef EMBER_DEVICE_PRELUDE
#include <bit>
#include <cstdint>

#include "ops/scalar.hpp"  // the math functions (the device prelude supplies them on the GPU)
#endif

namespace ember::rng {

struct Block {
    uint32_t v[4];
};

EMBER_HD inline Block philox4x32_10(Block c, uint32_t k0, uint32_t k1) {
    for (int r = 0; r < 10; ++r) {
        if (r) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        const uint64_t p0 = uint64_t(0xD2511F53u) * c.v[0];
        const uint64_t p1 = uint64_t(0xCD9E8D57u) * c.v[2];
        const Block n = {{uint32_t(p1 >> 32) ^ c.v[1] ^ k0, uint32_t(p1),
                          uint32_t(p0 >> 32) ^ c.v[3] ^ k1, uint32_t(p0)}};
        c = n;
    }
    return c;
}

struct Key {
    uint32_t k0, k1;
};

EMBER_HD inline Block packed_block(Key k, uint64_t block) {
    return philox4x32_10({{uint32_t(block), uint32_t(block >> 32), 0u, 0u}}, k.k0, k.k1);
}

// Uniform in [0, 1) from the top 53 bits of two words (floats: see packed_real).
EMBER_HD inline double u01d(uint32_t hi, uint32_t lo) {
    return double(((uint64_t(hi) << 32) | lo) >> 11) * (1.0 / 9007199254740992.0);
}

// The kinds of the backends' random family; `a` and `b` are the distribution's parameters.
enum class Dist : uint8_t {
    bits,         // raw 32- or 64-bit words (uint32 / uint64 output)
    uniform,      // a + (b - a) * U[0, 1)
    normal,       // a + b * N(0, 1)
    exponential,  // a * Exp(1)
    integers,     // low + [0, range) without bias (Lemire); range 0 means 2^64
    gamma,        // Gamma(shape a, scale b)
    beta,         // Beta(a, b)
    poisson,      // Poisson(lam a)
    binomial,     // Binomial(n, p a)
};

EMBER_HD inline bool is_packed(Dist d) { return d <= Dist::exponential; }

// One element's stream of draws for the streamed distributions.
struct Stream {
    Key key;
    uint64_t pos;
    uint32_t space = 1;  // the counter's last word: 1 for streamed draws, 2 + k for normals' rest
    uint32_t j = 0;
    int used = 4;
    Block buf{};

    EMBER_HD uint32_t u32() {
        if (used == 4) {
            buf = philox4x32_10({{uint32_t(pos), uint32_t(pos >> 32), j++, space}}, key.k0, key.k1);
            used = 0;
        }
        // The words in order, shifted down rather than indexed, so the stream stays in registers
        // on the GPU.
        const uint32_t v = buf.v[0];
        buf.v[0] = buf.v[1];
        buf.v[1] = buf.v[2];
        buf.v[2] = buf.v[3];
        ++used;
        return v;
    }
    EMBER_HD uint64_t u64() {
        const uint32_t hi = u32();
        return (uint64_t(hi) << 32) | u32();
    }
    EMBER_HD double uniform() {  // [0, 1)
        const uint32_t hi = u32();
        return u01d(hi, u32());
    }
    EMBER_HD double normal();  // N(0, 1), after the ziggurat below
};

// ---- normals: the ziggurat ----------------------------------------------------------------
// Layer i of N = 256 has area v: layer 0 is [0, r] x [0, f(r)] plus the tail x > r, drawn as
// the rectangle [0, x0) x [0, f(r)] with x0 = v / f(r); layer i >= 1 is [0, x_i) x [f(x_i),
// f(x_{i+1})], f(x) = exp(-x^2 / 2), x_1 = r > ... > x_256 = 0. A word gives layer i and
// x = u * x_i with u uniform in [0, 1); x < x_{i+1} lies under the curve in every layer and is
// taken at once (word < k[i], an integer compare). Otherwise: layer 0 draws from the tail, other
// layers keep x when a uniform height in [f(x_i), f(x_{i+1})) is below f(x), else start over.
// The tables live in device memory on the GPU (constexpr arrays are host-only there).
#ifdef EMBER_DEVICE_PRELUDE
#define EMBER_RNG_TABLE __device__ const
#else
#define EMBER_RNG_TABLE inline constexpr
#endif

struct alignas(8) ZigLayer32 {
    uint32_t k;  // the word is taken at once when word < k
    float w;     // x_i / 2^23: the value is (word >> 9) * w
};
struct alignas(16) ZigLayer64 {
    uint64_t k;  // the word is taken at once when word < k
    double w;    // x_i / 2^53: the value is (word >> 11) * w
};

}  // namespace ember::rng
#include "ops/ziggurat_tables.hpp"  // the tables below (embedded in place for NVRTC)
namespace ember::rng {

// The word of a T-valued normal: 32 bits for float, 64 for double.
template <class T>
using zig_word = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

// x with its sign bit flipped where s has it set, without a branch (the sign is a coin toss).
EMBER_HD inline float flip_sign(float x, uint32_t s) {
#ifdef EMBER_DEVICE_PRELUDE
    return __uint_as_float(__float_as_uint(x) ^ s);
#else
    return std::bit_cast<float>(std::bit_cast<uint32_t>(x) ^ s);
#endif
}
EMBER_HD inline double flip_sign(double x, uint64_t s) {
#ifdef EMBER_DEVICE_PRELUDE
    return __longlong_as_double(__double_as_longlong(x) ^ (long long)s);
#else
    return std::bit_cast<double>(std::bit_cast<uint64_t>(x) ^ s);
#endif
}

template <class T>
using zig_layer = std::conditional_t<sizeof(T) == 8, ZigLayer64, ZigLayer32>;
template <class T>
EMBER_HD inline const zig_layer<T>* zig_table() {
    if constexpr (sizeof(T) == 8)
        return zig_layers64;
    else
        return zig_layers32;
}

// The fast path: x from word w (layer, sign, uniform); true when the layer takes it at once.
// `table` is zig_table<T>() or a copy of it (the GPU's fill reads one in shared memory: the 32
// lanes of a warp look up 32 different layers, which global memory would serve one line at a time).
template <class T>
EMBER_HD inline bool zig_fast(zig_word<T> w, T& x, const zig_layer<T>* table = zig_table<T>()) {
    const zig_layer<T> l = table[w & 255u];
    if constexpr (sizeof(T) == 8)
        x = flip_sign(T(w >> 11) * l.w, (w & 256u) << 55);
    else
        x = flip_sign(T(w >> 9) * l.w, (w & 256u) << 23);
    return w < l.k;
}

// Draws of the slow path from s: a word, a uniform in [0, 1), a uniform in (0, 1].
template <class T>
EMBER_HD inline zig_word<T> zig_next(Stream& s) {
    if constexpr (sizeof(T) == 8)
        return s.u64();
    else
        return s.u32();
}
template <class T>
EMBER_HD inline T zig_u01(Stream& s) {
    if constexpr (sizeof(T) == 8)
        return T(s.u64() >> 11) * T(1.0 / 9007199254740992.0);
    else
        return T(s.u32() >> 8) * T(1.0 / 16777216.0);
}
template <class T>
EMBER_HD inline T zig_u01_open0(Stream& s) {
    return zig_u01<T>(s) + (sizeof(T) == 8 ? T(1.0 / 9007199254740992.0) : T(1.0 / 16777216.0));
}

// The slow path for a word that zig_fast did not take; further draws come from s. A try is
// rejected with probability 1 - 1/1.0067 (the layers' area over the curve's), then a new word
// starts over: the loop ends with probability 1, after 1.007 tries on average.
template <class T>
EMBER_HD inline T zig_slow(zig_word<T> w, Stream& s) {
    constexpr bool wide = sizeof(T) == 8;
    for (;;) {
        T x;
        if (zig_fast<T>(w, x)) return x;
        const unsigned i = unsigned(w & 255u);
        if (i == 0) {
            // The tail x > r (Marsaglia 1964): r + a with a = -log(u1) / r, kept when
            // -2 log(u2) > a^2; the sign is the word's.
            const T r = wide ? T(zig_r64) : T(zig_r32);
            const T inv_r = wide ? T(zig_inv_r64) : T(zig_inv_r32);
            for (;;) {
                const T a = -ops::log(zig_u01_open0<T>(s)) * inv_r;
                const T b = -ops::log(zig_u01_open0<T>(s));
                if (b + b > a * a) return (w & 256u) ? -(r + a) : r + a;
            }
        }
        T f0, f1;
        if constexpr (wide) {
            f0 = zig_f64[i];
            f1 = zig_f64[i + 1];
        } else {
            f0 = zig_f32[i];
            f1 = zig_f32[i + 1];
        }
        if (f0 + zig_u01<T>(s) * (f1 - f0) < ops::exp(T(-0.5) * x * x)) return x;
        w = zig_next<T>(s);
    }
}

EMBER_HD inline double Stream::normal() {
    const uint64_t w = u64();
    double x;
    return zig_fast<double>(w, x) ? x : zig_slow<double>(w, *this);
}

EMBER_HD inline uint64_t mul_hi64(uint64_t a, uint64_t b) {
#ifdef EMBER_DEVICE_PRELUDE
    return __umul64hi(a, b);
#else
    return uint64_t((unsigned __int128)a * b >> 64);
#endif
}

// An unbiased integer in [0, range) (range 0: the whole 64-bit range), Lemire's method.
EMBER_HD inline uint64_t bounded(Stream& s, uint64_t range) {
    if (range == 0) return s.u64();
    if (range <= 0xFFFFFFFFull) {
        const uint32_t r = uint32_t(range);
        uint64_t m = uint64_t(s.u32()) * r;
        if (uint32_t(m) < r) {
            const uint32_t t = uint32_t(0u - r) % r;
            while (uint32_t(m) < t)
                m = uint64_t(s.u32()) * r;
        }
        return m >> 32;
    }
    uint64_t x = s.u64();
    uint64_t lo = x * range;
    if (lo < range) {
        const uint64_t t = (0ull - range) % range;
        while (lo < t) {
            x = s.u64();
            lo = x * range;
        }
    }
    return mul_hi64(x, range);
}

// Gamma(k, 1), Marsaglia and Tsang (2000); k < 1 through Gamma(k + 1) * U^(1/k).
EMBER_HD inline double gamma1(Stream& s, double k) {
    if (!(k > 0)) return 0;  // the front-end rejects k < 0 and nan
    double boost = 1;
    if (k < 1) {
        double u = s.uniform();
        while (u == 0)
            u = s.uniform();
        boost = ops::pow(u, 1.0 / k);
        k += 1;
    }
    const double d = k - 1.0 / 3.0, c = 1.0 / ops::sqrt(9.0 * d);
    for (;;) {
        double x, v;
        do {
            x = s.normal();
            v = 1.0 + c * x;
        } while (v <= 0);
        v = v * v * v;
        const double u = s.uniform();
        if (u < 1.0 - 0.0331 * (x * x) * (x * x)) return boost * d * v;
        if (u > 0 && ops::log(u) < 0.5 * x * x + d * (1.0 - v + ops::log(v))) return boost * d * v;
    }
}

EMBER_HD inline double beta(Stream& s, double a, double b) {
    const double x = gamma1(s, a), y = gamma1(s, b);
    return x / (x + y);
}

// Binomial(n, p), exact: while n is large, the a-th smallest of n uniforms is Beta(a, n + 1 - a)
// and splits the count (Knuth, TAOCP 3.4.1); the last <= 16 trials are drawn one by one.
EMBER_HD inline int64_t binomial(Stream& s, int64_t n, double p) {
    if (n <= 0 || !(p > 0)) return 0;
    if (p >= 1) return n;
    const int64_t n0 = n;
    const bool flip = p > 0.5;
    if (flip) p = 1 - p;
    int64_t count = 0;
    while (n > 16) {
        const int64_t a = 1 + n / 2, b = n + 1 - a;
        const double x = beta(s, double(a), double(b));
        if (x >= p) {
            n = a - 1;
            p = p / x;
        } else {
            count += a;
            n = b - 1;
            p = (p - x) / (1 - x);
        }
    }
    for (int64_t i = 0; i < n; ++i)
        count += s.uniform() < p;
    return flip ? n0 - count : count;
}

// Poisson(lam), exact: while lam is large, the m-th arrival time is Gamma(m); arrivals before
// lam given it are binomial (Ahrens and Dieter 1974); the rest by multiplying uniforms (Knuth).
EMBER_HD inline int64_t poisson(Stream& s, double lam) {
    if (!(lam > 0)) return 0;
    int64_t count = 0;
    while (lam > 16) {
        const int64_t m = int64_t(ops::floor(0.875 * lam));
        const double x = gamma1(s, double(m));
        if (x >= lam) return count + binomial(s, m - 1, lam / x);
        count += m;
        lam -= x;
    }
    const double limit = ops::exp(-lam);
    double prod = s.uniform();
    while (prod > limit) {
        ++count;
        prod *= s.uniform();
    }
    return count;
}

// Parameters of one random fill.
struct Params {
    Dist dist = Dist::uniform;
    Key key{0, 0};
    uint64_t pos = 0;     // first block (packed) or first element stream (streamed)
    double a = 0, b = 1;  // see Dist
    int64_t low = 0;      // integers: the lowest value; binomial: n
    uint64_t range = 0;   // integers: the number of values (0: 2^64)
    int32_t bits = 24;    // uniform floats: mantissa bits kept (11 for float16, 8 for bfloat16,
                          // so that rounding to the output never reaches 1)
};

// Streamed element i, as a double (gamma, beta) or an integer (the others), before conversion.
EMBER_HD inline double streamed_real(const Params& p, uint64_t i) {
    Stream s{p.key, p.pos + i};
    return p.dist == Dist::gamma ? gamma1(s, p.a) * p.b : beta(s, p.a, p.b);
}
EMBER_HD inline uint64_t streamed_int(const Params& p, uint64_t i) {
    Stream s{p.key, p.pos + i};
    switch (p.dist) {
        case Dist::poisson:
            return uint64_t(poisson(s, p.a));
        case Dist::binomial:
            return uint64_t(binomial(s, p.low, p.a));
        default:
            return uint64_t(p.low) + bounded(s, p.range);
    }
}

// Elements per packed block for a result of `bytes` bytes: 2 for 64-bit values, else 4.
EMBER_HD inline int per_block(int bytes) { return bytes == 8 ? 2 : 4; }

// Raw words of one packed block: 4 uint32 or 2 uint64.
template <class T>
EMBER_HD inline void packed_bits(const Params& p, uint64_t block, T* out) {
    const Block r = packed_block(p.key, p.pos + block);
    if constexpr (sizeof(T) == 8) {
        for (int k = 0; k < 2; ++k)
            out[k] = T((uint64_t(r.v[2 * k]) << 32) | r.v[2 * k + 1]);
    } else {
        for (int k = 0; k < 4; ++k)
            out[k] = T(r.v[k]);
    }
}

// Whether normals are scaled and shifted: standard ones (loc 0, scale 1) are the ziggurat's own
// values (so -0.0 stays -0.0).
EMBER_HD inline bool normal_affine(const Params& p) { return !(p.a == 0 && p.b == 1); }

// Uniform, normal or exponential values of one packed block: 4 floats or 2 doubles.
template <class T>
EMBER_HD inline void packed_real(const Params& p, uint64_t block, T* out) {
    const Block r = packed_block(p.key, p.pos + block);
    constexpr int n = sizeof(T) == 8 ? 2 : 4;
    if (p.dist == Dist::normal) {
        zig_word<T> w[n];
        unsigned miss = 0;
        for (int k = 0; k < n; ++k) {
            if constexpr (sizeof(T) == 8)
                w[k] = (uint64_t(r.v[2 * k]) << 32) | r.v[2 * k + 1];
            else
                w[k] = r.v[k];
            if (!zig_fast<T>(w[k], out[k])) miss |= 1u << k;
        }
        // The words not taken at once, one after another (the GPU's kernels queue them instead:
        // normal_fill); masks and selects rather than indexing by k keep registers on the GPU.
        while (miss) {
            const unsigned k = (miss & 1u) ? 0u : (miss & 2u) ? 1u : (miss & 4u) ? 2u : 3u;
            miss &= miss - 1;
            zig_word<T> wk = 0;
            for (int j = 0; j < n; ++j)
                wk |= w[j] & (zig_word<T>(0) - zig_word<T>(unsigned(j) == k));
            Stream s{p.key, p.pos + block, 2u + k};
            const T z = zig_slow<T>(wk, s);
            for (int j = 0; j < n; ++j)
                out[j] = unsigned(j) == k ? z : out[j];
        }
        if (normal_affine(p))
            for (int k = 0; k < n; ++k)
                out[k] = T(p.a) + T(p.b) * out[k];
        return;
    }
    const int drop = p.dist == Dist::uniform ? 32 - p.bits : 8;
    for (int k = 0; k < n; ++k) {
        if constexpr (sizeof(T) == 8)
            out[k] = u01d(r.v[2 * k], r.v[2 * k + 1]);
        else
            out[k] = float(r.v[k] >> drop) * float(1u << drop) * (1.0f / 4294967296.0f);
    }
    if (p.dist == Dist::exponential) {
        for (int k = 0; k < n; ++k)
            out[k] = -ops::log1p(-out[k]) * T(p.a);
    } else {  // uniform
        for (int k = 0; k < n; ++k)
            out[k] = T(p.a) + (T(p.b) - T(p.a)) * out[k];
    }
}

#ifdef EMBER_DEVICE_PRELUDE
// Normal element e (block e / V, value e % V) that the fast path did not take, stored as T: its
// first word again (one more Philox block: cheaper than carrying the word to here), then the slow
// path.
template <class T, class C, int V>
__device__ void normal_finish(T* out, const Params& p, unsigned long long e) {
    const unsigned j = unsigned(e % V);
    const Block r = packed_block(p.key, p.pos + e / V);
    zig_word<C> w;
    if constexpr (V == 2)
        w = j ? (uint64_t(r.v[2]) << 32) | r.v[3] : (uint64_t(r.v[0]) << 32) | r.v[1];
    else
        w = j == 0 ? r.v[0] : j == 1 ? r.v[1] : j == 2 ? r.v[2] : r.v[3];
    Stream s{p.key, p.pos + e / V, 2u + j};
    C z = zig_slow<C>(w, s);
    if (normal_affine(p)) z = C(p.a) + C(p.b) * z;
    out[e] = ember::dev::convert<T>(z);
}

// The GPU's loop over the packed normals of n elements stored as T (computed as C, V per
// block), for 256-thread blocks: the values of packed_real, in another order of work. A warp
// takes 32 * U consecutive blocks per step, lane l blocks l, l + 32, ... (coalesced stores). The
// fast path reads a shared table indexed by the word's layer and sign bits whose widths carry
// the sign (x * -w is x * w with its sign flipped, bit for bit, -0.0 included). The elements it
// does not take (1.5%) wait in a queue in shared memory and are finished 32 at a time, one per
// lane: a warp pays for the slow path about once in 4 steps instead of in most steps.
template <class T, class C, int V>
__device__ void normal_fill(T* __restrict__ out, const Params& p, unsigned long long n) {
    using W = zig_word<C>;
    // Philox blocks per lane and step: the queue's per-step work spread over 16 values (H200,
    // tools/rng_nvrtc.py: 2^28 f32 in 0.408 ms with U = 4, 0.449 with U = 2, the same bits).
    constexpr int U = 4;
    constexpr unsigned warps = 8, cap = 64;  // per warp: < 32 waiting + 32 added per round
    constexpr int shift = sizeof(C) == 8 ? 11 : 9;
    __shared__ unsigned long long queue[warps][cap];
    __shared__ zig_layer<C> table[512];
    for (unsigned i = threadIdx.x; i < 512u; i += blockDim.x) {
        zig_layer<C> l = zig_table<C>()[i & 255u];
        if (i & 256u) l.w = -l.w;
        table[i] = l;
    }
    __syncthreads();
    const unsigned long long blocks = (n + V - 1) / V;
    if (blockDim.x > warps * 32) {  // not the launch this is written for: one block per thread
        const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
        for (unsigned long long k = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
             k < blocks; k += step) {
            C c[V];
            packed_real(p, k, c);
            for (int j = 0; j < V; ++j)
                if (k * V + j < n) out[k * V + j] = ember::dev::convert<T>(c[j]);
        }
        return;
    }
    const unsigned lane = threadIdx.x & 31u, below = (1u << lane) - 1u;
    unsigned long long* q = queue[threadIdx.x >> 5];
    const bool affine = normal_affine(p);
    const C a = C(p.a), b = C(p.b);
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x * U;
    const unsigned long long whole_blocks = n / V;
    unsigned count = 0;  // elements waiting in q (the same in every lane)
    for (unsigned long long base =
             ((unsigned long long)blockIdx.x * blockDim.x + (threadIdx.x & ~31u)) * U;
         base < blocks; base += step) {
        // The U blocks first (their chains interleave), beyond the end too (not stored).
        Block r[U];
#pragma unroll
        for (int u = 0; u < U; ++u)
            r[u] = packed_block(p.key, p.pos + base + 32u * u + lane);
        const bool whole = base + 32u * U <= whole_blocks;  // every value of the step is stored
        unsigned miss = 0;  // bit u * V + j: value j of the lane's block u is not taken
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const unsigned long long k = base + 32u * u + lane;
            ember::dev::vec_t<T, V> y;
#pragma unroll
            for (int j = 0; j < V; ++j) {
                W w;
                if constexpr (V == 2)
                    w = (uint64_t(r[u].v[2 * j]) << 32) | r[u].v[2 * j + 1];
                else
                    w = r[u].v[j];
                const zig_layer<C> l = table[unsigned(w) & 511u];
                C x = C(w >> shift) * l.w;
                if (!(w < l.k)) miss |= 1u << (u * V + j);
                if (affine) x = a + b * x;
                y.v[j] = ember::dev::convert<T>(x);
            }
            if (whole) {
                reinterpret_cast<ember::dev::vec_t<T, V>*>(out)[k] = y;
            } else {
#pragma unroll
                for (int j = 0; j < V; ++j) {
                    if (k * V + j < n)
                        out[k * V + j] = y.v[j];
                    else
                        miss &= ~(1u << (u * V + j));
                }
            }
        }
        // One element per lane and round into the queue; 32 waiting: each lane finishes one.
        while (__any_sync(0xffffffffu, miss != 0)) {
            const unsigned adding = __ballot_sync(0xffffffffu, miss != 0);
            if (miss) {
                const unsigned bit = unsigned(__ffs(miss)) - 1u;
                miss &= miss - 1;
                q[count + __popc(adding & below)] = (base + 32u * (bit / V) + lane) * V + bit % V;
            }
            count += __popc(adding);
            if (count >= 32) {
                count -= 32;
                __syncwarp();
                const unsigned long long e = q[count + lane];
                __syncwarp();
                normal_finish<T, C, V>(out, p, e);
            }
        }
    }
    __syncwarp();
    if (lane < count) normal_finish<T, C, V>(out, p, q[lane]);
}
#endif

}  // namespace ember::rng
