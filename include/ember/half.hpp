// float16 and bfloat16 storage types for host code: bit containers with IEEE round-to-nearest-even
// conversions to and from float; arithmetic happens in float.
#pragma once

#include <bit>
#include <cstdint>

namespace ember {

struct float16 {
    uint16_t bits = 0;

    float16() = default;
    float16(float f) : bits(from_float(f)) {}
    operator float() const { return to_float(bits); }

    static float16 from_bits(uint16_t b) {
        float16 h;
        h.bits = b;
        return h;
    }

    static uint16_t from_float(float f) {
        uint32_t x = std::bit_cast<uint32_t>(f);
        uint32_t sign = (x >> 16) & 0x8000u;
        uint32_t absx = x & 0x7fffffffu;
        if (absx >= 0x7f800000u) {  // inf or nan
            return uint16_t(sign | 0x7c00u |
                            (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0u));
        }
        if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to inf
        if (absx < 0x38800000u) {                                  // subnormal half (or zero)
            // Add the magic constant 0.5 so the FPU performs round-to-nearest-even for us.
            float a = std::bit_cast<float>(absx) + 0.5f;
            return uint16_t(sign | (std::bit_cast<uint32_t>(a) - 0x3f000000u));
        }
        uint32_t mant_odd = (absx >> 13) & 1u;
        absx += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
        return uint16_t(sign | (absx >> 13));
    }

    static float to_float(uint16_t h) {
        uint32_t sign = uint32_t(h & 0x8000u) << 16;
        uint32_t exp = (h >> 10) & 0x1fu;
        uint32_t mant = h & 0x3ffu;
        if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
        if (exp == 0) {
            float m = float(mant) * 5.9604644775390625e-08f;  // 2^-24
            return sign ? -m : m;
        }
        return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
    }
};

struct bfloat16 {
    uint16_t bits = 0;

    bfloat16() = default;
    bfloat16(float f) : bits(from_float(f)) {}
    operator float() const { return to_float(bits); }

    static bfloat16 from_bits(uint16_t b) {
        bfloat16 h;
        h.bits = b;
        return h;
    }

    static uint16_t from_float(float f) {
        uint32_t x = std::bit_cast<uint32_t>(f);
        if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet nan
        x += 0x7fffu + ((x >> 16) & 1u);
        return uint16_t(x >> 16);
    }

    static float to_float(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }
};

// nextafter in the 16-bit types' own precision (used by the nextafter op).
template <class H>
inline H half_nextafter(H a, H b) {
    float fa = float(a), fb = float(b);
    if (fa != fa || fb != fb) return H(fa + fb);
    if (fa == fb) return b;
    if (fa == 0.0f) return H::from_bits(uint16_t((b.bits & 0x8000u) | 1u));
    uint16_t bits = a.bits;
    bits = ((fa < fb) == (fa > 0.0f)) ? uint16_t(bits + 1) : uint16_t(bits - 1);
    return H::from_bits(bits);
}
inline float16 nextafter(float16 a, float16 b) { return half_nextafter(a, b); }
inline bfloat16 nextafter(bfloat16 a, bfloat16 b) { return half_nextafter(a, b); }

}  // namespace ember
