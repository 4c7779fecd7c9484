// Value conversion between the storage types with NumPy's (unsafe-cast) results and no undefined
// behaviour, one text for both devices: the host compiles it in ember::ops, NVRTC gets it inside
// the device prelude (codegen/prelude.cuh) in ember::dev, where float16 and bfloat16 are bit
// containers converted by the prelude's to_float / from_float (the rounding of ember/half.hpp).
#pragma once

#ifndef EMBER_DEVICE_PRELUDE
#include <bit>
#include <complex>
#include <cstdint>
#include <type_traits>

#include "ember/half.hpp"
#endif

#ifndef EMBER_HD
#define EMBER_HD
#endif

#ifdef EMBER_DEVICE_PRELUDE
namespace ember::dev {
#else
namespace ember::ops {
#endif

template <class T>
struct is_cplx : std::false_type {};
#ifndef EMBER_DEVICE_PRELUDE
template <class T>
struct is_cplx<std::complex<T>> : std::true_type {};
#elif defined(EMBER_DEVICE_COMPLEX)
template <class T>
struct is_cplx<cuda::std::complex<T>> : std::true_type {};
#endif
template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// The 16-bit floats' value as float and their rounding from float, and float's bits.
#ifdef EMBER_DEVICE_PRELUDE
template <class H>
EMBER_HD inline float half_to_float(H h) {
    return to_float(h);
}
template <class H>
EMBER_HD inline H half_from_float(float f) {
    return from_float<H>(f);
}
EMBER_HD inline uint32_t float_to_bits(float f) { return __float_as_uint(f); }
EMBER_HD inline float bits_to_float(uint32_t b) { return __uint_as_float(b); }
#else
template <class H>
inline float half_to_float(H h) {
    return float(h);
}
template <class H>
inline H half_from_float(float f) {
    return H(f);
}
inline uint32_t float_to_bits(float f) { return std::bit_cast<uint32_t>(f); }
inline float bits_to_float(uint32_t b) { return std::bit_cast<float>(b); }
#endif

// Widens half types to float; identity for everything else.
template <class T>
EMBER_HD inline auto widen(T v) {
    if constexpr (is_half_v<T>)
        return half_to_float(v);
    else
        return v;
}

// NaN and out-of-range floats become the integer minimum, as on the host (x86), not the device's
// saturating conversion.
template <class To, class From>
EMBER_HD inline To convert(From v) {
    if constexpr (std::is_same_v<To, From>) {
        return v;
    } else if constexpr (is_half_v<From>) {
        return convert<To>(half_to_float(v));
    } else if constexpr (std::is_same_v<To, bool>) {
        if constexpr (is_cplx<From>::value)
            return v.real() != 0 || v.imag() != 0;
        else
            return v != From(0);
    } else if constexpr (is_cplx<From>::value) {
        if constexpr (is_cplx<To>::value)
            return To(typename To::value_type(v.real()), typename To::value_type(v.imag()));
        else
            return convert<To>(v.real());
    } else if constexpr (is_cplx<To>::value) {
        using R = typename To::value_type;
        return To(R(widen(v)), R(0));
    } else if constexpr (is_half_v<To>) {
        if constexpr (std::is_same_v<From, double>) {
            // Round to odd on the way to float, then to nearest: no double-rounding error, since
            // float keeps more than two extra bits over either 16-bit type.
            float f = float(v);
            if (double(f) != v && v == v) {
                uint32_t b = float_to_bits(f);
                if ((double(f) > v) == (v > 0)) --b;  // rounded away from zero: step back
                f = bits_to_float(b | 1u);
            }
            return half_from_float<To>(f);
        } else {
            return half_from_float<To>(float(v));
        }
    } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
        if constexpr (std::is_unsigned_v<To> && sizeof(To) == 8) {
            if (v >= From(0) && v < From(18446744073709551616.0)) return To(v);
            if (v > From(-9223372036854775808.0) && v < From(0)) return To(int64_t(v));
            return To(uint64_t(1) << 63);
        } else {
            if (v > From(-9223372036854775808.0) && v < From(9223372036854775808.0))
                return To(int64_t(v));
            return To(int64_t(0x8000000000000000ull));
        }
    } else {
        return To(v);
    }
}

#ifdef EMBER_DEVICE_PRELUDE
}  // namespace ember::dev
#else
}  // namespace ember::ops
#endif
