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
#pragma once

#ifndef EMBER_HD
#define EMBER_HD
#endif

#ifndef EMBER_DEVICE_PRELUDE
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

// Box-Muller: two standard normals from two uniforms in [0, 1) (1 - u keeps the log finite).
template <class T>
EMBER_HD inline void box_muller(T u1, T u2, T& z0, T& z1) {
    const T two_pi = T(6.283185307179586476925286766559);
    const T r = ops::sqrt(T(-2) * ops::log(T(1) - u1));
    const T t = two_pi * u2;
    z0 = r * ops::cos(t);
    z1 = r * ops::sin(t);
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
    uint32_t j = 0;
    int used = 4;
    Block buf{};

    EMBER_HD uint32_t u32() {
        if (used == 4) {
            buf = philox4x32_10({{uint32_t(pos), uint32_t(pos >> 32), j++, 1u}}, key.k0, key.k1);
            used = 0;
        }
        return buf.v[used++];
    }
    EMBER_HD uint64_t u64() {
        const uint32_t hi = u32();
        return (uint64_t(hi) << 32) | u32();
    }
    EMBER_HD double uniform() {  // [0, 1)
        const uint32_t hi = u32();
        return u01d(hi, u32());
    }
    EMBER_HD double normal() {
        const double u1 = uniform();
        double z0, z1;
        box_muller(u1, uniform(), z0, z1);
        return z0;
    }
};

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

// Uniform, normal or exponential values of one packed block: 4 floats or 2 doubles.
template <class T>
EMBER_HD inline void packed_real(const Params& p, uint64_t block, T* out) {
    const Block r = packed_block(p.key, p.pos + block);
    constexpr int n = sizeof(T) == 8 ? 2 : 4;
    const int drop = p.dist == Dist::uniform ? 32 - p.bits : 8;
    for (int k = 0; k < n; ++k) {
        if constexpr (sizeof(T) == 8)
            out[k] = u01d(r.v[2 * k], r.v[2 * k + 1]);
        else
            out[k] = float(r.v[k] >> drop) * float(1u << drop) * (1.0f / 4294967296.0f);
    }
    if (p.dist == Dist::normal) {
        for (int k = 0; k < n; k += 2) {
            T z0, z1;
            box_muller(out[k], out[k + 1], z0, z1);
            out[k] = T(p.a) + T(p.b) * z0;
            out[k + 1] = T(p.a) + T(p.b) * z1;
        }
    } else if (p.dist == Dist::exponential) {
        for (int k = 0; k < n; ++k)
            out[k] = -ops::log1p(-out[k]) * T(p.a);
    } else {  // uniform
        for (int k = 0; k < n; ++k)
            out[k] = T(p.a) + (T(p.b) - T(p.a)) * out[k];
    }
}

}  // namespace ember::rng
