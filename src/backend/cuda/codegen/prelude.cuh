// ember device prelude for NVRTC-compiled kernels.
#pragma once

#define EMBER_DEVICE_PRELUDE 1
#define EMBER_HD __device__

// NVRTC has no C++ standard library: the few traits scalar.hpp names as std:: are declared here
// (CCCL's <cuda/std/type_traits> alone costs ~400 ms of compile time per kernel). Kernels with a
// complex operand define EMBER_DEVICE_COMPLEX and use CCCL's complex and its math.
#ifdef EMBER_DEVICE_COMPLEX
#include <cuda/std/cmath>
#include <cuda/std/complex>
#endif

typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;

namespace std {
template <class T, T v>
struct integral_constant {
    static constexpr T value = v;
};
using true_type = integral_constant<bool, true>;
using false_type = integral_constant<bool, false>;
template <class A, class B>
struct is_same : false_type {};
template <class A>
struct is_same<A, A> : true_type {};
template <class A, class B>
inline constexpr bool is_same_v = is_same<A, B>::value;
template <bool C, class A, class B>
struct conditional {
    using type = A;
};
template <class A, class B>
struct conditional<false, A, B> {
    using type = B;
};
template <bool C, class A, class B>
using conditional_t = typename conditional<C, A, B>::type;
template <class T> struct remove_cv { using type = T; };
template <class T> struct remove_cv<const T> { using type = T; };
template <class T> struct remove_cv<volatile T> { using type = T; };
template <class T> struct remove_cv<const volatile T> { using type = T; };
template <class T> struct is_integral_base : false_type {};
template <> struct is_integral_base<bool> : true_type {};
template <> struct is_integral_base<char> : true_type {};
template <> struct is_integral_base<signed char> : true_type {};
template <> struct is_integral_base<unsigned char> : true_type {};
template <> struct is_integral_base<short> : true_type {};
template <> struct is_integral_base<unsigned short> : true_type {};
template <> struct is_integral_base<int> : true_type {};
template <> struct is_integral_base<unsigned int> : true_type {};
template <> struct is_integral_base<long> : true_type {};
template <> struct is_integral_base<unsigned long> : true_type {};
template <> struct is_integral_base<long long> : true_type {};
template <> struct is_integral_base<unsigned long long> : true_type {};
template <class T>
inline constexpr bool is_integral_v = is_integral_base<typename remove_cv<T>::type>::value;
template <class T>
inline constexpr bool is_floating_point_v =
    is_same_v<typename remove_cv<T>::type, float> || is_same_v<typename remove_cv<T>::type, double>;
template <class T, bool = is_integral_v<T> || is_floating_point_v<T>>
struct is_signed_base : integral_constant<bool, T(-1) < T(0)> {};
template <class T>
struct is_signed_base<T, false> : false_type {};
template <class T>
inline constexpr bool is_signed_v = is_signed_base<T>::value;
template <class T>
inline constexpr bool is_unsigned_v = is_integral_v<T> && !is_signed_v<T>;
template <class T> struct make_unsigned { using type = T; };
template <> struct make_unsigned<signed char> { using type = unsigned char; };
template <> struct make_unsigned<char> { using type = unsigned char; };
template <> struct make_unsigned<short> { using type = unsigned short; };
template <> struct make_unsigned<int> { using type = unsigned int; };
template <> struct make_unsigned<long> { using type = unsigned long; };
template <> struct make_unsigned<long long> { using type = unsigned long long; };
template <class T>
using make_unsigned_t = typename make_unsigned<T>::type;
}  // namespace std

namespace ember::dev {

// numeric_limits, for what the kernels ask of it.
template <class T>
struct num_limits {
    static constexpr bool is_signed = T(-1) < T(0);
    __device__ static constexpr T max() {
        return is_signed ? T((1ull << (sizeof(T) * 8 - 1)) - 1) : T(~0ull);
    }
    __device__ static constexpr T lowest() {
        return is_signed ? T(-max() - 1) : T(0);
    }
};
template <>
struct num_limits<bool> {
    __device__ static constexpr bool max() { return true; }
    __device__ static constexpr bool lowest() { return false; }
};
template <>
struct num_limits<float> {
    __device__ static float max() { return __int_as_float(0x7f7fffff); }
    __device__ static float lowest() { return -max(); }
    __device__ static float infinity() { return __int_as_float(0x7f800000); }
    __device__ static float quiet_NaN() { return __int_as_float(0x7fc00000); }
};
template <>
struct num_limits<double> {
    __device__ static double max() { return __longlong_as_double(0x7fefffffffffffffll); }
    __device__ static double lowest() { return -max(); }
    __device__ static double infinity() { return __longlong_as_double(0x7ff0000000000000ll); }
    __device__ static double quiet_NaN() { return __longlong_as_double(0x7ff8000000000000ll); }
};

}  // namespace ember::dev

namespace ember::ops {
template <class T>
using limits = ember::dev::num_limits<T>;
#ifdef EMBER_DEVICE_COMPLEX
template <class T>
using complex_t = cuda::std::complex<T>;
using cuda::std::abs;
using cuda::std::acos;
using cuda::std::acosh;
using cuda::std::asin;
using cuda::std::asinh;
using cuda::std::atan;
using cuda::std::atan2;
using cuda::std::atanh;
using cuda::std::ceil;
using cuda::std::copysign;
using cuda::std::cos;
using cuda::std::cosh;
using cuda::std::exp;
using cuda::std::expm1;
using cuda::std::floor;
__device__ inline float fmod(float a, float b) { return ::fmodf(a, b); }
__device__ inline double fmod(double a, double b) { return ::fmod(a, b); }
using cuda::std::log;
using cuda::std::log10;
using cuda::std::log1p;
using cuda::std::log2;
using cuda::std::nextafter;
using cuda::std::pow;
using cuda::std::rint;
using cuda::std::signbit;
using cuda::std::sin;
using cuda::std::sinh;
using cuda::std::sqrt;
using cuda::std::tan;
using cuda::std::tanh;
using cuda::std::trunc;
#else
// A name for scalar.hpp's complex overloads; never instantiated in a kernel without complex types.
template <class T>
struct complex_unused;
template <class T>
using complex_t = complex_unused<T>;
__device__ inline float acos(float x) { return ::acosf(x); }
__device__ inline double acos(double x) { return ::acos(x); }
__device__ inline float acosh(float x) { return ::acoshf(x); }
__device__ inline double acosh(double x) { return ::acosh(x); }
__device__ inline float asin(float x) { return ::asinf(x); }
__device__ inline double asin(double x) { return ::asin(x); }
__device__ inline float asinh(float x) { return ::asinhf(x); }
__device__ inline double asinh(double x) { return ::asinh(x); }
__device__ inline float atan(float x) { return ::atanf(x); }
__device__ inline double atan(double x) { return ::atan(x); }
__device__ inline float atanh(float x) { return ::atanhf(x); }
__device__ inline double atanh(double x) { return ::atanh(x); }
__device__ inline float ceil(float x) { return ::ceilf(x); }
__device__ inline double ceil(double x) { return ::ceil(x); }
__device__ inline float cos(float x) { return ::cosf(x); }
__device__ inline double cos(double x) { return ::cos(x); }
__device__ inline float cosh(float x) { return ::coshf(x); }
__device__ inline double cosh(double x) { return ::cosh(x); }
__device__ inline float exp(float x) { return ::expf(x); }
__device__ inline double exp(double x) { return ::exp(x); }
__device__ inline float expm1(float x) { return ::expm1f(x); }
__device__ inline double expm1(double x) { return ::expm1(x); }
__device__ inline float floor(float x) { return ::floorf(x); }
__device__ inline double floor(double x) { return ::floor(x); }
__device__ inline float log(float x) { return ::logf(x); }
__device__ inline double log(double x) { return ::log(x); }
__device__ inline float log10(float x) { return ::log10f(x); }
__device__ inline double log10(double x) { return ::log10(x); }
__device__ inline float log1p(float x) { return ::log1pf(x); }
__device__ inline double log1p(double x) { return ::log1p(x); }
__device__ inline float log2(float x) { return ::log2f(x); }
__device__ inline double log2(double x) { return ::log2(x); }
__device__ inline float rint(float x) { return ::rintf(x); }
__device__ inline double rint(double x) { return ::rint(x); }
__device__ inline float sin(float x) { return ::sinf(x); }
__device__ inline double sin(double x) { return ::sin(x); }
__device__ inline float sinh(float x) { return ::sinhf(x); }
__device__ inline double sinh(double x) { return ::sinh(x); }
__device__ inline float sqrt(float x) { return ::sqrtf(x); }
__device__ inline double sqrt(double x) { return ::sqrt(x); }
__device__ inline float tan(float x) { return ::tanf(x); }
__device__ inline double tan(double x) { return ::tan(x); }
__device__ inline float tanh(float x) { return ::tanhf(x); }
__device__ inline double tanh(double x) { return ::tanh(x); }
__device__ inline float trunc(float x) { return ::truncf(x); }
__device__ inline double trunc(double x) { return ::trunc(x); }
__device__ inline float atan2(float x, float y) { return ::atan2f(x, y); }
__device__ inline double atan2(double x, double y) { return ::atan2(x, y); }
__device__ inline float copysign(float x, float y) { return ::copysignf(x, y); }
__device__ inline double copysign(double x, double y) { return ::copysign(x, y); }
__device__ inline float fmod(float x, float y) { return ::fmodf(x, y); }
__device__ inline double fmod(double x, double y) { return ::fmod(x, y); }
__device__ inline float nextafter(float x, float y) { return ::nextafterf(x, y); }
__device__ inline double nextafter(double x, double y) { return ::nextafter(x, y); }
__device__ inline float pow(float x, float y) { return ::powf(x, y); }
__device__ inline double pow(double x, double y) { return ::pow(x, y); }
__device__ inline float abs(float x) { return ::fabsf(x); }
__device__ inline double abs(double x) { return ::fabs(x); }
__device__ inline int abs(int x) { return x < 0 ? -x : x; }
__device__ inline long long abs(long long x) { return x < 0 ? -x : x; }
__device__ inline bool signbit(float x) { return (__float_as_uint(x) >> 31) != 0; }
__device__ inline bool signbit(double x) { return __double_as_longlong(x) < 0; }
#endif
// CUDA's hypot is within 2 ulp, so near the top of the range it rounds past the largest finite
// value to inf (hypot(1, DBL_MAX)). When r is not finite for finite operands: float retries in
// double; double takes a * sqrt(1 + (b/a)^2) with a >= b, exact when b/a is negligible, inf only
// when the true result overflows. inf and nan operands keep r.
__device__ inline float hypot(float x, float y) {
    const float r = ::hypotf(x, y);
    return r - r == 0.0f ? r : float(::hypot(double(x), double(y)));
}
__device__ inline double hypot(double x, double y) {
    const double r = ::hypot(x, y);
    if (r - r == 0.0 || !(x - x == 0.0 && y - y == 0.0)) return r;
    const double a = ::fmax(::fabs(x), ::fabs(y)), b = ::fmin(::fabs(x), ::fabs(y));
    const double q = b / a;
    return a * ::sqrt(1.0 + q * q);
}
#ifdef EMBER_DEVICE_COMPLEX
// CCCL's complex tanh divides by cosh(2x) + cos(2y), which cancels near the poles and loses
// the sign of tiny imaginary parts. For finite z this is the formula of C libraries' ctanh
// (what NumPy gets): (sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y), and +-1 + i*tiny
// once 1 - tanh|x| is below half an ulp; tan(z) = -i tanh(iz) follows.
template <class T>
__device__ inline cuda::std::complex<T> tanh_robust(const cuda::std::complex<T>& z) {
    const T x = z.real(), y = z.imag();
    if (!(x - x == T(0) && y - y == T(0))) return cuda::std::tanh(z);  // inf and NaN cases
    const T big = sizeof(T) == 4 ? T(9) : T(22);
    const T s = sin(y), c = cos(y);
    if (x >= big || x <= -big) {
        const T e = exp(T(-2) * (x < 0 ? -x : x));
        return {copysign(T(1), x), T(4) * s * c * e};
    }
    const T sh = sinh(x), ch = sqrt(T(1) + sh * sh);
    const T den = sh * sh + c * c;
    return {sh * ch / den, s * c / den};
}
__device__ inline cuda::std::complex<float> tanh(const cuda::std::complex<float>& z) {
    return tanh_robust(z);
}
__device__ inline cuda::std::complex<double> tanh(const cuda::std::complex<double>& z) {
    return tanh_robust(z);
}
template <class T>
__device__ inline cuda::std::complex<T> tan_robust(const cuda::std::complex<T>& z) {
    const cuda::std::complex<T> t = tanh_robust(cuda::std::complex<T>(-z.imag(), z.real()));
    return {t.imag(), -t.real()};
}
__device__ inline cuda::std::complex<float> tan(const cuda::std::complex<float>& z) {
    return tan_robust(z);
}
__device__ inline cuda::std::complex<double> tan(const cuda::std::complex<double>& z) {
    return tan_robust(z);
}

// CCCL's other complex functions are the textbook formulas, evaluated in the argument's
// precision: complex64 exp, sin, sqrt, ... lose up to ~1e-4 relative, acosh/asinh cancel in the
// left half-plane (log(z + sqrt(z^2 - 1))) and overflow once |z|^2 does (complex64 above ~1e19),
// log loses a tiny log|z| near the unit circle, sqrt goes through polar form, and exp/sinh/cosh
// turn inf * sin(0) into NaN. ember evaluates complex64 in double and, for finite z, replaces:
// sqrt (Kahan's, scaled), log (log1p of a compensated x^2 + y^2 - 1 near |z| = 1), exp/sinh/cosh
// (real axis exact, e^|x| in two halves past 709), asinh on the right half-plane (odd for the
// left) as log1p(w + w^2 / (1 + sqrt(w^2 + 1))), acosh(z) = log1p((z - 1) + sqrt(z + 1)
// sqrt(z - 1)), log(2z) for both above 1e150, atanh from log1p and atan2, and asin, acos, atan,
// sin, cos through them (each modelled in Python against glibc first: within 2e-14 relative,
// most within 5e-16). Infinities and NaN keep CCCL's values (C99 Annex G), except
// acosh(+-0 + NaN i) = NaN + i pi/2 (the Array API standard's, and glibc's).
namespace cmath {
using zd = cuda::std::complex<double>;
constexpr double ln2 = 0.693147180559945309417232121458;
constexpr double half_pi = 1.57079632679489661923132169164;
constexpr double huge = 1e150;
__device__ inline bool finite(const zd& z) {
    return z.real() - z.real() == 0.0 && z.imag() - z.imag() == 0.0;
}
__device__ inline double norm_inf(const zd& z) { return ::fmax(::fabs(z.real()), ::fabs(z.imag())); }
__device__ inline zd log_2z(const zd& z) {  // log(2z), for |z| so large that 2z would overflow
    const zd r = cuda::std::log(z);
    return {r.real() + ln2, r.imag()};
}
__device__ inline zd log1p(const zd& u) {  // log(1 + u), accurate for small u
    const double x = u.real(), y = u.imag();
    const double m = hypot(x + 1.0, y);
    const double re = (m < 0.5 || m > 2.0) ? ::log(m) : 0.5 * ::log1p(x * (2.0 + x) + y * y);
    return {re, ::atan2(y, x + 1.0)};
}
// sqrt: CCCL's goes through polar form, so sqrt(-4 + 0i) = 1.2e-16 + 2i; this one is exact
// on the axes and scaled away from overflow (Kahan's).
__device__ inline zd sqrt(const zd& z) {
    const double x = z.real(), y = z.imag();
    if (!finite(z)) return cuda::std::sqrt(z);
    if (x == 0.0 && y == 0.0) return {0.0, y};
    double ax = ::fabs(x), ay = ::fabs(y), sc = 1.0;
    const double m = ::fmax(ax, ay);
    if (m > 0x1p1000) {
        ax *= 0x1p-2, ay *= 0x1p-2, sc = 2.0;
    } else if (m < 0x1p-1000) {
        ax *= 0x1p600, ay *= 0x1p600, sc = 0x1p-300;
    }
    const double t = ::sqrt(0.5 * (ax + hypot(ax, ay))), u = ay / (2.0 * t);
    return x >= 0.0 ? zd(t * sc, ::copysign(u * sc, y)) : zd(u * sc, ::copysign(t * sc, y));
}
// x^2 + y^2 - 1 without cancellation: the squares split exactly by fma, summed compensated.
__device__ inline double x2y2m1(double x, double y) {
    const double p1 = x * x, p2 = y * y;
    const double t[5] = {-1.0, p1, p2, ::fma(x, x, -p1), ::fma(y, y, -p2)};
    double sum = 0.0, c = 0.0;
    for (double v : t) {
        const double u = sum + v;
        c += ::fabs(sum) >= ::fabs(v) ? (sum - u) + v : (v - u) + sum;
        sum = u;
    }
    return sum + c;
}
// log: log|z| = log1p(x^2 + y^2 - 1) / 2 near |z| = 1, where log(hypot) loses a tiny result.
__device__ inline zd log(const zd& z) {
    if (!finite(z)) return cuda::std::log(z);
    const double x = ::fabs(z.real()), y = ::fabs(z.imag()), h = hypot(x, y);
    const double re = h > 0.5 && h < 2.0 ? 0.5 * ::log1p(x2y2m1(x, y)) : ::log(h);
    return {re, ::atan2(z.imag(), z.real())};
}
// exp, sinh, cosh (sin, cos through them): for a real argument, exp(x) + 0i, sinh(x) + 0i and
// cosh(x) + 0i even where they overflow (CCCL multiplies inf by sin(0) into NaN); beyond
// exp's range (|x| > 709) e^|x| is applied as two halves, so a finite result stays finite.
constexpr double exp_max = 709.0;
__device__ inline zd exp(const zd& z) {
    const double x = z.real(), y = z.imag();
    if (!finite(z) || x <= exp_max) return cuda::std::exp(z);
    if (y == 0.0) return {::exp(x), y};
    const double h = ::exp(0.5 * x);
    return {(h * ::cos(y)) * h, (h * ::sin(y)) * h};
}
__device__ inline zd sinh(const zd& z) {
    const double x = z.real(), y = z.imag();
    if (!finite(z)) return cuda::std::sinh(z);
    if (y == 0.0) return {::sinh(x), y};
    if (::fabs(x) <= exp_max) return cuda::std::sinh(z);
    const double h = 0.5 * ::exp(0.5 * ::fabs(x)), e = 2.0 * h;  // sinh|x| = cosh|x| = e^|x| / 2
    return {::copysign(1.0, x) * ((h * ::cos(y)) * e), (h * ::sin(y)) * e};
}
__device__ inline zd cosh(const zd& z) {
    const double x = z.real(), y = z.imag();
    if (!finite(z)) return cuda::std::cosh(z);
    if (y == 0.0) return {::cosh(x), ::copysign(0.0, x) * y};
    if (::fabs(x) <= exp_max) return cuda::std::cosh(z);
    const double h = 0.5 * ::exp(0.5 * ::fabs(x)), e = 2.0 * h;
    return {(h * ::cos(y)) * e, ::copysign(1.0, x) * ((h * ::sin(y)) * e)};
}
__device__ inline zd sin(const zd& z) {  // -i sinh(iz)
    const zd r = sinh(zd(-z.imag(), z.real()));
    return {r.imag(), -r.real()};
}
__device__ inline zd cos(const zd& z) { return cosh(zd(-z.imag(), z.real())); }
__device__ inline zd asinh(const zd& z) {
    if (!finite(z)) return cuda::std::asinh(z);
    const bool neg = signbit(z.real());
    const zd w = neg ? -z : z;
    const double x = w.real(), y = w.imag();
    zd r;
    if (norm_inf(w) > huge) {
        r = log_2z(w);
    } else {  // log1p(w + w^2 / (1 + sqrt(w^2 + 1))); w^2 + 1 without cancellation near +-i
        const zd q((x - y) * (x + y), 2.0 * x * y);
        const zd s = sqrt(zd(x < 0.5 ? (1.0 - y) * (1.0 + y) + x * x : q.real() + 1.0,
                                        q.imag()));
        r = log1p(w + q / zd(s.real() + 1.0, s.imag()));
    }
    r = zd(::fabs(r.real()), ::copysign(r.imag(), y));  // asinh keeps the quadrant
    return neg ? -r : r;
}
__device__ inline zd acosh(const zd& z) {
    if (!finite(z)) {
        if (z.real() == 0.0 && z.imag() != z.imag()) return {z.imag(), half_pi};
        return cuda::std::acosh(z);
    }
    const double x = z.real(), y = z.imag();
    const zd r =
        norm_inf(z) > huge
            ? log_2z(z)
            : log1p(zd(x - 1.0, y) + sqrt(zd(x + 1.0, y)) * sqrt(zd(x - 1.0, y)));
    return {::fabs(r.real()), ::copysign(r.imag(), y)};
}
__device__ inline zd atanh(const zd& z) {
    if (!finite(z)) return cuda::std::atanh(z);
    const double x = z.real(), y = z.imag(), m = norm_inf(z);
    if (m > huge) {  // 1/z, and +-pi/2
        const double s = 1.0 / m, xs = x * s, ys = y * s;
        return {xs * s / (xs * xs + ys * ys), ::copysign(half_pi, y)};
    }
    // Re = log(|1 + z|^2 / |1 - z|^2) / 4 = log1p(4|x| / |1 - |x| + iy|^2) / 4 (odd in x)
    const double ax = ::fabs(x), h = hypot(1.0 - ax, y);
    const double re = h < 1e-8 ? 0.25 * ::log(4.0 * ax) - 0.5 * ::log(h)
                               : 0.25 * ::log1p(4.0 * ax / (h * h));
    return {::copysign(re, x), 0.5 * ::atan2(2.0 * y, (1.0 - x) * (1.0 + x) - y * y)};
}
__device__ inline zd asin(const zd& z) {  // -i asinh(iz)
    const zd r = asinh(zd(-z.imag(), z.real()));
    return {r.imag(), -r.real()};
}
__device__ inline zd atan(const zd& z) {  // -i atanh(iz)
    const zd r = atanh(zd(-z.imag(), z.real()));
    return {r.imag(), -r.real()};
}
__device__ inline zd acos(const zd& z) {  // +-i acosh(z), the one with a real part >= 0
    if (!finite(z)) return cuda::std::acos(z);
    const zd w = acosh(z);
    return signbit(w.imag()) ? zd(-w.imag(), w.real()) : zd(w.imag(), -w.real());
}
}  // namespace cmath
#define EMBER_COMPLEX_MATH(name, impl)                                                       \
    __device__ inline cuda::std::complex<float> name(const cuda::std::complex<float>& z) {   \
        return cuda::std::complex<float>(impl(cuda::std::complex<double>(z)));               \
    }
EMBER_COMPLEX_MATH(exp, cmath::exp)
EMBER_COMPLEX_MATH(log, cmath::log)
EMBER_COMPLEX_MATH(sqrt, cmath::sqrt)
EMBER_COMPLEX_MATH(sin, cmath::sin)
EMBER_COMPLEX_MATH(cos, cmath::cos)
EMBER_COMPLEX_MATH(sinh, cmath::sinh)
EMBER_COMPLEX_MATH(cosh, cmath::cosh)
EMBER_COMPLEX_MATH(asin, cmath::asin)
EMBER_COMPLEX_MATH(acos, cmath::acos)
EMBER_COMPLEX_MATH(atan, cmath::atan)
EMBER_COMPLEX_MATH(asinh, cmath::asinh)
EMBER_COMPLEX_MATH(acosh, cmath::acosh)
EMBER_COMPLEX_MATH(atanh, cmath::atanh)
#undef EMBER_COMPLEX_MATH
__device__ inline cuda::std::complex<float> pow(const cuda::std::complex<float>& a,
                                                const cuda::std::complex<float>& b) {
    using zd = cuda::std::complex<double>;
    return cuda::std::complex<float>(cuda::std::pow(zd(a), zd(b)));
}
__device__ inline cmath::zd exp(const cmath::zd& z) { return cmath::exp(z); }
__device__ inline cmath::zd log(const cmath::zd& z) { return cmath::log(z); }
__device__ inline cmath::zd sqrt(const cmath::zd& z) { return cmath::sqrt(z); }
__device__ inline cmath::zd sin(const cmath::zd& z) { return cmath::sin(z); }
__device__ inline cmath::zd cos(const cmath::zd& z) { return cmath::cos(z); }
__device__ inline cmath::zd sinh(const cmath::zd& z) { return cmath::sinh(z); }
__device__ inline cmath::zd cosh(const cmath::zd& z) { return cmath::cosh(z); }
__device__ inline cmath::zd asin(const cmath::zd& z) { return cmath::asin(z); }
__device__ inline cmath::zd acos(const cmath::zd& z) { return cmath::acos(z); }
__device__ inline cmath::zd atan(const cmath::zd& z) { return cmath::atan(z); }
__device__ inline cmath::zd asinh(const cmath::zd& z) { return cmath::asinh(z); }
__device__ inline cmath::zd acosh(const cmath::zd& z) { return cmath::acosh(z); }
__device__ inline cmath::zd atanh(const cmath::zd& z) { return cmath::atanh(z); }
#endif
}  // namespace ember::ops

namespace ember {

// Storage types of the 16-bit floats: arithmetic happens in float.
struct float16 {
    uint16_t bits;
};
struct bfloat16 {
    uint16_t bits;
};

namespace dev {

#ifdef EMBER_DEVICE_COMPLEX
using complex64 = cuda::std::complex<float>;
using complex128 = cuda::std::complex<double>;
#endif

// Programmatic dependent launch (sm_90 and later): a kernel captured into a CUDA graph with it
// may start before the kernel ahead of it has finished. It waits here, before touching memory,
// for that kernel and its writes; then lets the next kernel start launching. A no-op otherwise.
__device__ __forceinline__ void grid_dependency() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ inline float to_float(float16 h) {
    const uint32_t sign = uint32_t(h.bits & 0x8000u) << 16;
    const uint32_t exp = (h.bits >> 10) & 0x1fu;
    const uint32_t mant = h.bits & 0x3ffu;
    if (exp == 0x1f) return __uint_as_float(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        const float m = float(mant) * 5.9604644775390625e-08f;  // 2^-24
        return sign ? -m : m;
    }
    return __uint_as_float(sign | ((exp + 112) << 23) | (mant << 13));
}
__device__ inline float to_float(bfloat16 h) { return __uint_as_float(uint32_t(h.bits) << 16); }

// Round to nearest even, NaN stays NaN (quiet), overflow gives inf.
template <class H>
__device__ inline H from_float(float f);
template <>
__device__ inline float16 from_float<float16>(float f) {
    const uint32_t x = __float_as_uint(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u)
        return {uint16_t(sign | 0x7c00u |
                         (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0u))};
    if (absx >= 0x477ff000u) return {uint16_t(sign | 0x7c00u)};
    if (absx < 0x38800000u) {  // subnormal or zero: adding 0.5 rounds to nearest even
        const float a = __uint_as_float(absx) + 0.5f;
        return {uint16_t(sign | (__float_as_uint(a) - 0x3f000000u))};
    }
    const uint32_t mant_odd = (absx >> 13) & 1u;
    absx += 0xc8000fffu + mant_odd;
    return {uint16_t(sign | (absx >> 13))};
}
template <>
__device__ inline bfloat16 from_float<bfloat16>(float f) {
    uint32_t x = __float_as_uint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return {uint16_t((x >> 16) | 0x40u)};
    x += 0x7fffu + ((x >> 16) & 1u);
    return {uint16_t(x >> 16)};
}

}  // namespace dev
}  // namespace ember

// is_cplx, is_half_v and convert: the host's src/ops/convert.hpp, whose text codegen.cpp puts here.
#include "ember/ops/convert.hpp"

namespace ember {
namespace dev {

// A 16-byte (or smaller) aligned group of V values: one vector load or store.
template <class T, int V>
struct alignas(sizeof(T) * V) vec_t {
    T v[V];
};

// The by-value geometry of a strided kernel (layout of ember::gpu::StridedGeometry).
struct StridedGeometry {
    long long shape[@MAX_DIMS@];
    long long strides[@MAX_OPS@][@MAX_DIMS@];
};

}  // namespace dev

// nextafter in the 16-bit types' own precision (found by argument-dependent lookup).
template <class H>
__device__ inline H half_nextafter(H a, H b) {
    const float fa = dev::to_float(a), fb = dev::to_float(b);
    if (fa != fa || fb != fb) return dev::from_float<H>(fa + fb);
    if (fa == fb) return b;
    if (fa == 0.0f) return H{uint16_t((b.bits & 0x8000u) | 1u)};
    uint16_t bits = a.bits;
    bits = ((fa < fb) == (fa > 0.0f)) ? uint16_t(bits + 1) : uint16_t(bits - 1);
    return H{bits};
}
__device__ inline float16 nextafter(float16 a, float16 b) { return half_nextafter(a, b); }
__device__ inline bfloat16 nextafter(bfloat16 a, bfloat16 b) { return half_nextafter(a, b); }

}  // namespace ember
