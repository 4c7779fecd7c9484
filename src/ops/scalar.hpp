// The scalar body of every elementwise op, written once for all backends. Bodies see the compute
// type of a loop: bool, the integer types, float, double and the complex types (float16 and
// bfloat16 are computed in float). Semantics follow NumPy 2 on special values: integer division
// by zero gives 0, signed overflow wraps, shifts past the width give 0 (or -1), NaN propagates.
//
// The header is self-contained apart from the math prelude, so the CUDA backend can hand the
// same text to NVRTC with a device prelude; on the host the prelude maps to <cmath>/<complex>.
#pragma once

#ifndef EMBER_HD
#define EMBER_HD
#endif

#ifndef EMBER_DEVICE_PRELUDE
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>
namespace ember::ops {
template <class T>
using complex_t = std::complex<T>;
using std::abs;
using std::acos;
using std::acosh;
using std::asin;
using std::asinh;
using std::atan;
using std::atan2;
using std::atanh;
using std::ceil;
using std::copysign;
using std::cos;
using std::cosh;
using std::exp;
using std::expm1;
using std::floor;
using std::fmod;
using std::hypot;
using std::log;
using std::log10;
using std::log1p;
using std::log2;
using std::nextafter;
using std::pow;
using std::rint;
using std::signbit;
using std::sin;
using std::sinh;
using std::sqrt;
using std::tan;
using std::tanh;
using std::trunc;
template <class T>
using limits = std::numeric_limits<T>;
}  // namespace ember::ops
#endif

namespace ember::ops {

template <class T>
struct is_complex : std::false_type {};
template <class T>
struct is_complex<complex_t<T>> : std::true_type {};
template <class T>
inline constexpr bool is_complex_v = is_complex<T>::value;
template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T>;
template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T>
inline constexpr bool is_bool_v = std::is_same_v<T, bool>;

template <class T>
struct real_of {
    using type = T;
};
template <class T>
struct real_of<complex_t<T>> {
    using type = T;
};
template <class T>
using real_t = typename real_of<T>::type;

// Wide unsigned type for wrapping integer arithmetic without signed-overflow UB.
template <class T>
using wide_unsigned_t = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

template <class T>
EMBER_HD inline T wrap_add(T a, T b) {
    using U = wide_unsigned_t<T>;
    return T(U(a) + U(b));
}
template <class T>
EMBER_HD inline T wrap_sub(T a, T b) {
    using U = wide_unsigned_t<T>;
    return T(U(a) - U(b));
}
template <class T>
EMBER_HD inline T wrap_mul(T a, T b) {
    using U = wide_unsigned_t<T>;
    return T(U(a) * U(b));
}

template <class T>
EMBER_HD inline bool isnan_(T a) {
    if constexpr (is_float_v<T>)
        return a != a;
    else if constexpr (is_complex_v<T>)
        return a.real() != a.real() || a.imag() != a.imag();
    else
        return false;
}

// NumPy's lexicographic order of complex numbers; a NaN imaginary part leaves them unordered.
template <class T>
EMBER_HD inline bool lt_(T a, T b) {
    if constexpr (is_complex_v<T>)
        return (a.real() < b.real() && a.imag() == a.imag() && b.imag() == b.imag()) ||
               (a.real() == b.real() && a.imag() < b.imag());
    else
        return a < b;
}
template <class T>
EMBER_HD inline bool le_(T a, T b) {
    if constexpr (is_complex_v<T>)
        return (a.real() < b.real() && a.imag() == a.imag() && b.imag() == b.imag()) ||
               (a.real() == b.real() && a.imag() <= b.imag());
    else
        return a <= b;
}

template <class T>
EMBER_HD inline bool isinf_(T a) {
    return a == limits<T>::infinity() || a == -limits<T>::infinity();
}

// ---- arithmetic -------------------------------------------------------------------------------
struct op_add {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        if constexpr (is_bool_v<T>)
            return a || b;
        else if constexpr (is_int_v<T>)
            return wrap_add(a, b);
        else
            return a + b;
    }
};
struct op_subtract {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        if constexpr (is_int_v<T>)
            return wrap_sub(a, b);
        else
            return a - b;
    }
};
struct op_multiply {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        if constexpr (is_bool_v<T>)
            return a && b;
        else if constexpr (is_int_v<T>)
            return wrap_mul(a, b);
        else
            return a * b;
    }
};
struct op_divide {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        return a / b;
    }
};

template <class T>
EMBER_HD inline T int_floor_div(T a, T b) {
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return wrap_sub(T(0), a);
        T q = T(a / b);
        if ((a % b != 0) && ((a < 0) != (b < 0))) q = T(q - 1);
        return q;
    } else {
        return T(a / b);
    }
}
template <class T>
EMBER_HD inline T int_mod(T a, T b) {
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return T(0);
        T r = T(a % b);
        if (r != 0 && ((r < 0) != (b < 0))) r = T(r + b);
        return r;
    } else {
        return T(a % b);
    }
}
// Python's divmod for floats (the sign of the remainder follows the divisor); an infinite operand
// gives the standard's a / b (inf // 2 is inf, 1 // -inf is -0), not NumPy's nan and -1.
template <class T>
EMBER_HD inline T float_floor_div(T a, T b) {
    if (b == T(0) || isinf_(a) || isinf_(b)) return a / b;
    T mod = fmod(a, b);
    T div = (a - mod) / b;
    if (mod != T(0)) {
        if ((b < T(0)) != (mod < T(0))) div -= T(1);
    }
    T floordiv;
    if (div != T(0)) {
        floordiv = floor(div);
        if (div - floordiv > T(0.5)) floordiv += T(1);
    } else {
        floordiv = copysign(T(0), a / b);
    }
    return floordiv;
}
template <class T>
EMBER_HD inline T float_mod(T a, T b) {
    if (b == T(0)) return fmod(a, b);
    T mod = fmod(a, b);
    if (mod != T(0)) {
        if ((b < T(0)) != (mod < T(0))) mod += b;
    } else {
        mod = copysign(T(0), b);
    }
    return mod;
}

struct op_floor_divide {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        if constexpr (is_int_v<T>)
            return int_floor_div(a, b);
        else
            return float_floor_div(a, b);
    }
};
struct op_remainder {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        if constexpr (is_int_v<T>)
            return int_mod(a, b);
        else
            return float_mod(a, b);
    }
};
struct op_fmod {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        if constexpr (is_int_v<T>) {
            if (b == T(0)) return T(0);  // NumPy's (with a warning)
            if constexpr (std::is_signed_v<T>)
                if (b == T(-1)) return T(0);  // INT_MIN % -1 would trap
            return T(a % b);
        } else {
            return fmod(a, b);
        }
    }
};
// |x| as the unsigned type: exact also for the most negative value.
template <class T>
EMBER_HD inline std::make_unsigned_t<T> magnitude(T a) {
    using U = std::make_unsigned_t<T>;
    if constexpr (std::is_signed_v<T>)
        return a < 0 ? U(U(0) - U(a)) : U(a);
    else
        return U(a);
}
template <class U>
EMBER_HD inline U gcd_unsigned(U a, U b) {
    while (b != 0) {
        const U t = U(a % b);
        a = b;
        b = t;
    }
    return a;
}
// gcd and lcm wrap to the type as NumPy's do (gcd(-128, 0) is -128 in int8).
struct op_gcd {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        return T(gcd_unsigned(magnitude(a), magnitude(b)));
    }
};
struct op_lcm {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        using U = std::make_unsigned_t<T>;
        const U x = magnitude(a), y = magnitude(b);
        if (x == 0 || y == 0) return T(0);
        return T(U(x / gcd_unsigned(x, y) * y));
    }
};
struct op_pow {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        if constexpr (is_int_v<T>) {
            // The front-end raises for negative exponents (NumPy's rule); the limit otherwise.
            if constexpr (std::is_signed_v<T>) {
                if (b < 0) {
                    if (a == 1) return T(1);
                    if (a == -1) return (b & 1) ? T(-1) : T(1);
                    return T(0);
                }
            }
            T r = 1, base = a;
            auto e = std::make_unsigned_t<T>(b);
            while (e) {
                if (e & 1u) r = wrap_mul(r, base);
                base = wrap_mul(base, base);
                e >>= 1;
            }
            return r;
        } else if constexpr (is_complex_v<T>) {
            if (b == T(0)) return T(1);
            if (b.imag() == 0 && b.real() == 1) return a;
            if (b.imag() == 0 && b.real() == 2) return a * a;
            return pow(a, b);
        } else {
            return pow(a, b);
        }
    }
};

// ---- comparisons ------------------------------------------------------------------------------
struct op_equal {
    template <class T>
    EMBER_HD static bool apply(T a, T b) {
        return a == b;
    }
};
struct op_not_equal {
    template <class T>
    EMBER_HD static bool apply(T a, T b) {
        return a != b;
    }
};
struct op_less {
    template <class T>
    EMBER_HD static bool apply(T a, T b) {
        return lt_(a, b);
    }
};
struct op_less_equal {
    template <class T>
    EMBER_HD static bool apply(T a, T b) {
        return le_(a, b);
    }
};
struct op_greater {
    template <class T>
    EMBER_HD static bool apply(T a, T b) {
        return lt_(b, a);
    }
};
struct op_greater_equal {
    template <class T>
    EMBER_HD static bool apply(T a, T b) {
        return le_(b, a);
    }
};

// ---- logical (inputs are cast to bool)
// -----------------------------------------------------------
struct op_logical_and {
    EMBER_HD static bool apply(bool a, bool b) { return a && b; }
};
struct op_logical_or {
    EMBER_HD static bool apply(bool a, bool b) { return a || b; }
};
struct op_logical_xor {
    EMBER_HD static bool apply(bool a, bool b) { return a != b; }
};
struct op_logical_not {
    EMBER_HD static bool apply(bool a) { return !a; }
};

// ---- bitwise ----------------------------------------------------------------------------------
struct op_bitwise_and {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        return T(a & b);
    }
};
struct op_bitwise_or {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        return T(a | b);
    }
};
struct op_bitwise_xor {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        return T(a ^ b);
    }
};
struct op_bitwise_invert {
    template <class T>
    EMBER_HD static T apply(T a) {
        if constexpr (is_bool_v<T>)
            return !a;
        else
            return T(~a);
    }
};
struct op_bitwise_left_shift {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        if (b < 0 || b >= T(sizeof(T) * 8)) return T(0);
        return T(std::make_unsigned_t<T>(a) << b);
    }
};
struct op_bitwise_right_shift {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        if (b < 0 || b >= T(sizeof(T) * 8)) {
            if constexpr (std::is_signed_v<T>)
                return a < 0 ? T(-1) : T(0);
            else
                return T(0);
        }
        return T(a >> b);
    }
};

// ---- unary arithmetic -------------------------------------------------------------------------
struct op_abs {
    template <class T>
    EMBER_HD static real_t<T> apply(T a) {
        if constexpr (is_bool_v<T>)
            return a;
        else if constexpr (is_complex_v<T>)
            return hypot(a.real(), a.imag());
        else if constexpr (is_float_v<T>)
            return fabs_(a);
        else if constexpr (std::is_signed_v<T>)
            return a < 0 ? wrap_sub(T(0), a) : a;
        else
            return a;
    }
    template <class T>
    EMBER_HD static T fabs_(T a) {
        return copysign(a, T(1));
    }
};
struct op_negative {
    template <class T>
    EMBER_HD static T apply(T a) {
        if constexpr (is_int_v<T>)
            return wrap_sub(T(0), a);
        else
            return -a;
    }
};
struct op_positive {
    template <class T>
    EMBER_HD static T apply(T a) {
        return a;
    }
};
struct op_sign {
    template <class T>
    EMBER_HD static T apply(T a) {
        if constexpr (is_complex_v<T>) {
            if (isnan_(a)) return T(limits<real_t<T>>::quiet_NaN(), limits<real_t<T>>::quiet_NaN());
            real_t<T> m = hypot(a.real(), a.imag());
            if (m == 0) return T(0);
            if (m > limits<real_t<T>>::max()) {  // an infinite component
                real_t<T> re = a.real() == a.real() && (a.real() > limits<real_t<T>>::max() ||
                                                        a.real() < -limits<real_t<T>>::max())
                                   ? copysign(real_t<T>(1), a.real())
                                   : real_t<T>(0);
                real_t<T> im =
                    (a.imag() > limits<real_t<T>>::max() || a.imag() < -limits<real_t<T>>::max())
                        ? copysign(real_t<T>(1), a.imag())
                        : real_t<T>(0);
                if (re != 0 && im != 0)
                    return T(limits<real_t<T>>::quiet_NaN(), limits<real_t<T>>::quiet_NaN());
                return T(re, im);
            }
            return T(a.real() / m, a.imag() / m);
        } else if constexpr (is_float_v<T>) {
            if (a != a) return a;
            return T((a > T(0)) - (a < T(0)));
        } else if constexpr (std::is_signed_v<T>) {
            return T((a > 0) - (a < 0));
        } else {
            return T(a > 0);
        }
    }
};
struct op_square {
    template <class T>
    EMBER_HD static T apply(T a) {
        if constexpr (is_int_v<T>)
            return wrap_mul(a, a);
        else
            return a * a;
    }
};
struct op_reciprocal {
    template <class T>
    EMBER_HD static T apply(T a) {
        // Integer 1/0 as NumPy's x86 cast of inf: INT_MIN (no sign-bit shift) if 32/64-bit signed.
        if constexpr (is_int_v<T>) {
            constexpr bool wide_signed = std::is_signed_v<T> && sizeof(T) >= 4;
            const T at_zero = wide_signed ? T(T(-(T(1) << (8 * sizeof(T) - 2))) * T(2)) : T(0);
            return a == 0 ? at_zero : T(T(1) / a);
        }
        return T(1) / a;
    }
};
struct op_conj {
    template <class T>
    EMBER_HD static T apply(T a) {
        if constexpr (is_complex_v<T>)
            return T(a.real(), -a.imag());
        else
            return a;
    }
};
struct op_real {
    template <class T>
    EMBER_HD static real_t<T> apply(T a) {
        if constexpr (is_complex_v<T>)
            return a.real();
        else
            return a;
    }
};
struct op_imag {
    template <class T>
    EMBER_HD static real_t<T> apply(T a) {
        if constexpr (is_complex_v<T>)
            return a.imag();
        else
            return real_t<T>(0);
    }
};

// ---- transcendental (float and complex loops only) -------------------------------------------
#define EMBER_MATH_UNARY(name, fn)     \
    struct op_##name {                 \
        template <class T>             \
        EMBER_HD static T apply(T a) { \
            return fn(a);              \
        }                              \
    };
EMBER_MATH_UNARY(sqrt, sqrt)
EMBER_MATH_UNARY(exp, exp)
EMBER_MATH_UNARY(log, log)
EMBER_MATH_UNARY(sin, sin)
EMBER_MATH_UNARY(cos, cos)
EMBER_MATH_UNARY(tan, tan)
EMBER_MATH_UNARY(asin, asin)
EMBER_MATH_UNARY(acos, acos)
EMBER_MATH_UNARY(atan, atan)
EMBER_MATH_UNARY(sinh, sinh)
EMBER_MATH_UNARY(cosh, cosh)
EMBER_MATH_UNARY(asinh, asinh)
EMBER_MATH_UNARY(acosh, acosh)
EMBER_MATH_UNARY(atanh, atanh)
#undef EMBER_MATH_UNARY

// Complex tanh: the standard's special values (C's ctanh but tanh(inf + iy) = 1 + copysign(0, y)i).
struct op_tanh {
    template <class T>
    EMBER_HD static T apply(T a) {
        if constexpr (is_complex_v<T>) {
            using R = real_t<T>;
            const R x = a.real(), y = a.imag();
            if (isinf_(x)) return T(copysign(R(1), x), copysign(R(0), y));
            if (x != x) return y == R(0) ? a : T(x, x);
            if (y - y != R(0)) return T(x == R(0) ? x : y - y, y - y);  // y infinite or NaN
        }
        return tanh(a);
    }
};

struct op_expm1 {
    template <class T>
    EMBER_HD static T apply(T a) {
        if constexpr (is_complex_v<T>) {
            // exp(x+iy) - 1 = (expm1(x) cos y - 2 sin^2(y/2)) + i exp(x) sin y, accurate near 0;
            // special values as the standard's (C's cexp less 1): inf + 0j stays inf + 0j.
            using R = real_t<T>;
            if constexpr (sizeof(R) == 4) {  // complex64 in double: the two terms can cancel
                using D = std::conditional_t<sizeof(R) == 4, double, R>;  // (a dependent type)
                return T(apply(complex_t<D>(a)));
            }
            R x = a.real(), y = a.imag();
            if (y == R(0)) return T(expm1(x) + R(0), y);  // + 0: expm1(-0 + 0j) is +0 + 0j
            if (isinf_(x) && y - y != R(0))
                return x < R(0) ? T(R(-1), copysign(R(0), y)) : T(x, limits<R>::quiet_NaN());
            R s = sin(y / R(2));
            return T(expm1(x) * cos(y) - R(2) * s * s, exp(x) * sin(y));
        } else {
            return expm1(a);
        }
    }
};
struct op_log1p {
    template <class T>
    EMBER_HD static T apply(T a) {
        if constexpr (is_complex_v<T>) {
            using R = real_t<T>;
            R x = a.real(), y = a.imag();
            // log|1+z| = 0.5 log1p(2x + x^2 + y^2), arg(1+z) = atan2(y, 1+x)
            R m = hypot(x + R(1), y);
            R re = (m < R(0.5) || m > R(2)) ? log(m) : R(0.5) * log1p(x * (R(2) + x) + y * y);
            return T(re, atan2(y, x + R(1)));
        } else {
            return log1p(a);
        }
    }
};
// log2, log10 of complex: log(a) / log(base)
#define EMBER_LOG_BASE(name, ln_base)               \
    struct op_##name {                              \
        template <class T>                          \
        EMBER_HD static T apply(T a) {              \
            if constexpr (is_complex_v<T>)          \
                return log(a) / real_t<T>(ln_base); \
            else                                    \
                return name(a);                     \
        }                                           \
    };
EMBER_LOG_BASE(log2, 0.693147180559945309417232121458)
EMBER_LOG_BASE(log10, 2.30258509299404568401799145468)
#undef EMBER_LOG_BASE
struct op_logaddexp {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        if (a == b) return a + T(0.693147180559945309417232121458);  // also handles equal infs
        T d = a - b;
        if (d > 0) return a + log1p(exp(-d));
        if (d <= 0) return b + log1p(exp(d));
        return d;  // nan
    }
};
struct op_atan2 {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        return atan2(a, b);
    }
};
struct op_hypot {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        return hypot(a, b);
    }
};
struct op_copysign {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        return copysign(a, b);
    }
};
// nextafter steps in the storage type, so it is instantiated for float16/bfloat16 themselves
// (see half_nextafter in the backend prelude) and for float/double here.
struct op_nextafter {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        return nextafter(a, b);
    }
};
struct op_signbit {
    template <class T>
    EMBER_HD static bool apply(T a) {
        return signbit(a);
    }
};

// ---- rounding ---------------------------------------------------------------------------------
struct op_floor {
    template <class T>
    EMBER_HD static T apply(T a) {
        if constexpr (is_float_v<T>)
            return floor(a);
        else
            return a;
    }
};
struct op_ceil {
    template <class T>
    EMBER_HD static T apply(T a) {
        if constexpr (is_float_v<T>)
            return ceil(a);
        else
            return a;
    }
};
struct op_trunc {
    template <class T>
    EMBER_HD static T apply(T a) {
        if constexpr (is_float_v<T>)
            return trunc(a);
        else
            return a;
    }
};
struct op_round {  // half to even, like np.round with decimals=0
    template <class T>
    EMBER_HD static T apply(T a) {
        if constexpr (is_float_v<T>)
            return rint(a);
        else if constexpr (is_complex_v<T>)
            return T(rint(a.real()), rint(a.imag()));
        else
            return a;
    }
};

// ---- classification ---------------------------------------------------------------------------
struct op_isnan {
    template <class T>
    EMBER_HD static bool apply(T a) {
        return isnan_(a);
    }
};
struct op_isinf {
    template <class T>
    EMBER_HD static bool apply(T a) {
        if constexpr (is_float_v<T>)
            return a == limits<T>::infinity() || a == -limits<T>::infinity();
        else if constexpr (is_complex_v<T>)
            return op_isinf::apply(a.real()) || op_isinf::apply(a.imag());
        else
            return false;
    }
};
struct op_isfinite {
    template <class T>
    EMBER_HD static bool apply(T a) {
        if constexpr (is_float_v<T>)
            return a - a == a - a;  // false for inf and nan
        else if constexpr (is_complex_v<T>)
            return op_isfinite::apply(a.real()) && op_isfinite::apply(a.imag());
        else
            return true;
    }
};

// ---- extrema (NaN propagates, like np.maximum) ------------------------------------------------
// On a tie of reals (+0, -0) the second wins (NumPy's float32/64 loops); of complex, the first.
struct op_maximum {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        if constexpr (is_bool_v<T>)
            return a || b;
        else {
            if (isnan_(a)) return a;
            if (isnan_(b)) return b;
            if constexpr (is_complex_v<T>)
                return le_(b, a) ? a : b;
            else
                return b < a ? a : b;
        }
    }
};
struct op_minimum {
    template <class T>
    EMBER_HD static T apply(T a, T b) {
        if constexpr (is_bool_v<T>)
            return a && b;
        else {
            if (isnan_(a)) return a;
            if (isnan_(b)) return b;
            if constexpr (is_complex_v<T>)
                return le_(a, b) ? a : b;
            else
                return a < b ? a : b;
        }
    }
};
// x wins a tie with a bound (NumPy's loop for scalar bounds); NaN propagates from x, then bounds.
struct op_clip {
    template <class T>
    EMBER_HD static T apply(T x, T lo, T hi) {
        if (isnan_(x)) return x;
        if (isnan_(lo)) return lo;
        const T r = lt_(x, lo) ? lo : x;
        if (isnan_(hi)) return hi;
        return lt_(hi, r) ? hi : r;
    }
};

// The condition arrives converted to T; the front-end casts it to bool first, so its dtype does
// not take part in the promotion.
struct op_where {
    template <class T>
    EMBER_HD static T apply(T c, T a, T b) {
        return c != T(0) ? a : b;
    }
};

}  // namespace ember::ops
