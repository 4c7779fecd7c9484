// Host value conversion between the storage types with NumPy's (unsafe-cast) results and no
// undefined behaviour: NaN and out-of-range floats become the integer minimum, as on x86.
#pragma once

#include <bit>
#include <complex>
#include <cstdint>
#include <type_traits>

#include "ember/half.hpp"

namespace ember::ops {

template <class T>
struct is_cplx : std::false_type {};
template <class T>
struct is_cplx<std::complex<T>> : std::true_type {};
template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// Widens half types to float; identity for everything else.
template <class T>
inline auto widen(T v) {
    if constexpr (is_half_v<T>)
        return float(v);
    else
        return v;
}

template <class To, class From>
inline To convert(From v) {
    if constexpr (std::is_same_v<To, From>) {
        return v;
    } else if constexpr (is_half_v<From>) {
        return convert<To>(float(v));
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
                uint32_t b = std::bit_cast<uint32_t>(f);
                if ((double(f) > v) == (v > 0)) --b;  // rounded away from zero: step back
                f = std::bit_cast<float>(b | 1u);
            }
            return To(f);
        } else {
            return To(float(v));
        }
    } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
        if constexpr (std::is_unsigned_v<To> && sizeof(To) == 8) {
            if (v >= From(0) && v < From(18446744073709551616.0)) return To(v);
            if (v > From(-9223372036854775808.0) && v < From(0)) return To(int64_t(v));
            return To(uint64_t(1) << 63);
        } else {
            if (v > From(-9223372036854775808.0) && v < From(9223372036854775808.0))
                return To(int64_t(v));
            return To(int64_t(INT64_MIN));
        }
    } else {
        return To(v);
    }
}

}  // namespace ember::ops
