// Elementwise map kernel source generation: a readable template per layout, filled with the op,
// the compute type and the operand storage types; the bodies are those of src/ops/scalar.hpp.
#include "backend/cuda/codegen.hpp"

#include <algorithm>
#include <functional>
#include <vector>

#include "ember/error.hpp"
#include "ember_scalar_text.hpp"

namespace ember::gpu {
namespace {

// What scalar.hpp takes from <cmath>/<complex>/<type_traits> on the host: own traits and limits,
// CUDA's math functions, and CCCL's complex only in kernels with complex types;
// value conversions with the results of src/ops/convert.hpp; float16/bfloat16 as bit containers
// converted through float32 with the rounding of include/ember/half.hpp.
constexpr std::string_view prelude =
    R"EMBER_PRELUDE(// ember device prelude for NVRTC-compiled kernels.
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

template <class T>
struct is_cplx : std::false_type {};
#ifdef EMBER_DEVICE_COMPLEX
template <class T>
struct is_cplx<cuda::std::complex<T>> : std::true_type {};
#endif
template <class T>
inline constexpr bool is_half_v =
    std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// NumPy's unsafe casts without undefined behaviour: NaN and out-of-range floats become the
// integer minimum, as on the host (x86), not the device's saturating conversion.
template <class To, class From>
__device__ inline To convert(From v) {
    if constexpr (std::is_same_v<To, From>) {
        return v;
    } else if constexpr (is_half_v<From>) {
        return convert<To>(to_float(v));
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
        return To(R(v), R(0));
    } else if constexpr (is_half_v<To>) {
        if constexpr (std::is_same_v<From, double>) {
            // Round to odd on the way to float, then to nearest: no double rounding.
            float f = float(v);
            if (double(f) != v && v == v) {
                uint32_t b = __float_as_uint(f);
                if ((double(f) > v) == (v > 0)) --b;
                f = __uint_as_float(b | 1u);
            }
            return from_float<To>(f);
        } else {
            return from_float<To>(float(v));
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
)EMBER_PRELUDE";

void replace_all(std::string& s, std::string_view from, std::string_view to) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
        s.replace(p, from.size(), to);
}

const std::string& prelude_text() {
    static const std::string text = [] {
        std::string t(prelude);
        replace_all(t, "@MAX_DIMS@", std::to_string(max_strided_dims));
        replace_all(t, "@MAX_OPS@", std::to_string(max_map_operands));
        return t;
    }();
    return text;
}

bool has_loop(ops::OpId op, DType compute) {
    const ops::OpInfo& oi = ops::info(op);
    if (!(oi.loops & ops::bit(compute))) return false;
    const bool half = compute == DType::float16 || compute == DType::bfloat16;
    return !half || (oi.flags & ops::F_EXACT_HALF);
}

void check(const MapKernel& k) {
    const ops::OpInfo& oi = ops::info(k.op);
    if (!has_loop(k.op, k.compute))
        throw ValueError("map kernel " + std::string(oi.name) + ": the op table has no loop for " +
                         std::string(name(k.compute)));
    if (k.layout == MapLayout::strided && (k.ndim < 1 || k.ndim > max_strided_dims))
        throw ValueError("map kernel " + std::string(oi.name) + ": strided ndim " +
                         std::to_string(k.ndim) + " is outside 1.." +
                         std::to_string(max_strided_dims));
}

std::string layout_comment(bool strided, int ndim, bool index64, int vec) {
    std::string s = strided ? std::to_string(ndim) + "-d strided" : "contiguous";
    if (vec > 1) s += ", " + std::to_string(vec) + "-wide vectors";
    s += index64 ? ", 64-bit indices.\n" : ", 32-bit indices.\n";
    return s;
}

std::string layout_suffix(bool strided, int ndim, bool index64, int vec) {
    std::string s = strided ? "__strided" + std::to_string(ndim) : "__contig";
    if (vec > 1) s += "_v" + std::to_string(vec);
    s += index64 ? "_i64" : "_i32";
    return s;
}

}  // namespace

std::string_view device_prelude_text() { return prelude_text(); }
std::string_view scalar_header_text() { return generated::scalar_hpp; }

DType result_dtype(ops::OpId op, DType compute) {
    switch (ops::info(op).out) {
        case ops::OutRule::same:
            return compute;
        case ops::OutRule::boolean:
            return DType::bool_;
        case ops::OutRule::real:
            return real_dtype(compute);
    }
    return compute;
}

MapKernel natural_map_kernel(ops::OpId op, DType compute, MapLayout layout, int ndim,
                             bool index64) {
    MapKernel k;
    k.op = op;
    k.compute = compute;
    k.out = result_dtype(op, compute);
    for (DType& t : k.in)
        t = compute;
    k.layout = layout;
    k.ndim = layout == MapLayout::strided ? ndim : 1;
    k.index64 = index64;
    return k;
}

std::string kernel_name(const MapKernel& k) {
    const ops::OpInfo& oi = ops::info(k.op);
    std::string s = "ember_map_";
    s += oi.name;
    s += '_';
    s += dtype_code(k.compute);
    s += "__";
    s += dtype_code(k.out);
    for (int i = 0; i < oi.arity; ++i) {
        s += '_';
        s += dtype_code(k.in[i]);
        if (k.scalar_mask & (1u << i)) s += 's';
    }
    s += layout_suffix(k.layout == MapLayout::strided, k.ndim, k.index64,
                       k.layout == MapLayout::strided ? 1 : k.vec);
    return s;
}

namespace {

// The shared text of every elementwise kernel family (map, copy/cast): operands, index types, the
// grid-stride loop over a contiguous or collapsed strided space, an optional 16-byte vector loop
// with a scalar tail. `load(i, at)` spells the value of input i at element `at`; `result` is the
// expression stored to the output, in terms of a0, a1, ...
struct Elementwise {
    std::string name, comment;
    std::string out_t;
    std::vector<std::string> in_t;
    uint8_t scalar_mask = 0;
    bool strided = false;
    int ndim = 1;
    bool index64 = false;
    int vec = 1;
    std::string aliases;                                // type aliases at the top of the body
    std::string value_t;                                // the type inputs are loaded as
    std::function<std::string(int, std::string)> load;  // (input, source expression)
    std::string result;
};

std::string elementwise_text(const Elementwise& e) {
    const int arity = int(e.in_t.size());
    const auto is_scalar = [&](int i) { return (e.scalar_mask & (1u << i)) != 0; };
    const std::string iu = "Index", is = "Offset";
    std::string s = e.comment;
    s += "extern \"C\" __global__ void " + e.name + "(\n";
    s += "    " + e.out_t + "* __restrict__ out";
    for (int i = 0; i < arity; ++i) {
        s += ",\n    ";
        s += is_scalar(i) ? "const " + e.in_t[i] + " in" + std::to_string(i)
                          : "const " + e.in_t[i] + "* __restrict__ in" + std::to_string(i);
    }
    if (e.strided) s += ",\n    const ember::dev::StridedGeometry g";
    s += e.index64 ? ",\n    const long long n) {\n" : ",\n    const unsigned int n) {\n";
    s += "    using namespace ember::dev;\n";
    s += "    grid_dependency();\n";
    s += e.aliases;
    if (e.index64) {
        s += "    using Index = long long;  // linear index\n";
        if (e.strided) s += "    using Offset = long long;  // element offset\n";
    } else {
        // The host keeps n and gridDim.x * blockDim.x below 2^31, so i + step cannot wrap.
        s += "    using Index = unsigned int;  // linear index (n < 2^31)\n";
        if (e.strided) s += "    using Offset = int;  // element offset\n";
    }
    for (int i = 0; i < arity; ++i)
        if (is_scalar(i))
            s += "    const " + e.value_t + " a" + std::to_string(i) + " = " +
                 e.load(i, "in" + std::to_string(i)) + ";\n";
    s += "    const Index step = Index(gridDim.x) * blockDim.x;\n";
    std::string first = "Index(blockIdx.x) * blockDim.x + threadIdx.x";
    if (e.vec > 1) {
        const std::string V = std::to_string(e.vec);
        s += "    // " + V + " elements per 16-byte access, then the scalar tail.\n";
        s += "    const Index nv = n / " + V + ";\n";
        s += "    for (Index j = " + first + "; j < nv; j += step) {\n";
        for (int i = 0; i < arity; ++i)
            if (!is_scalar(i))
                s += "        const vec_t<" + e.in_t[i] + ", " + V + "> x" + std::to_string(i) +
                     " = reinterpret_cast<const vec_t<" + e.in_t[i] + ", " + V + ">*>(in" +
                     std::to_string(i) + ")[j];\n";
        s += "        vec_t<" + e.out_t + ", " + V + "> y;\n";
        s += "#pragma unroll\n";
        s += "        for (int k = 0; k < " + V + "; ++k) {\n";
        for (int i = 0; i < arity; ++i)
            if (!is_scalar(i))
                s += "            const " + e.value_t + " a" + std::to_string(i) + " = " +
                     e.load(i, "x" + std::to_string(i) + ".v[k]") + ";\n";
        s += "            y.v[k] = " + e.result + ";\n";
        s += "        }\n";
        s += "        reinterpret_cast<vec_t<" + e.out_t + ", " + V + ">*>(out)[j] = y;\n";
        s += "    }\n";
        first = "nv * " + V + " + " + first;
    }
    s += "    for (Index i = " + first + "; i < n; i += step) {\n";
    // Operand element offsets: the output is operand 0, input i is operand i + 1.
    std::vector<std::string> at(arity + 1, std::string("i"));
    if (e.strided) {
        std::vector<int> arrays;  // operand indices that need an offset
        arrays.push_back(0);
        for (int i = 0; i < arity; ++i)
            if (!is_scalar(i)) arrays.push_back(i + 1);
        s += "        " + iu + " rem = i;\n";
        s += "        " + is;
        for (size_t j = 0; j < arrays.size(); ++j)
            s += (j ? ", o" : " o") + std::to_string(arrays[j]) + " = 0";
        s += ";\n";
        if (e.ndim > 1) {
            s += "#pragma unroll\n";
            s += "        for (int d = 0; d < " + std::to_string(e.ndim - 1) + "; ++d) {\n";
            s += "            const " + iu + " q = rem / " + iu + "(g.shape[d]);\n";
            s += "            const " + is + " x = " + is + "(rem - q * " + iu + "(g.shape[d]));\n";
            s += "            rem = q;\n";
            for (int op : arrays)
                s += "            o" + std::to_string(op) + " += x * " + is + "(g.strides[" +
                     std::to_string(op) + "][d]);\n";
            s += "        }\n";
        }
        for (int op : arrays)
            s += "        o" + std::to_string(op) + " += " + is + "(rem) * " + is + "(g.strides[" +
                 std::to_string(op) + "][" + std::to_string(e.ndim - 1) + "]);\n";
        for (int op : arrays)
            at[op].assign(1, 'o').append(std::to_string(op));
    }
    for (int i = 0; i < arity; ++i)
        if (!is_scalar(i))
            s += "        const " + e.value_t + " a" + std::to_string(i) + " = " +
                 e.load(i, "in" + std::to_string(i) + "[" + at[i + 1] + "]") + ";\n";
    s += "        out[" + at[0] + "] = " + e.result + ";\n";
    s += "    }\n}\n";
    return s;
}

}  // namespace

std::string kernel_text(const MapKernel& k) {
    check(k);
    const ops::OpInfo& oi = ops::info(k.op);
    const int arity = oi.arity;
    const bool strided = k.layout == MapLayout::strided;
    const auto is_scalar = [&](int i) { return (k.scalar_mask & (1u << i)) != 0; };
    Elementwise e;
    e.name = kernel_name(k);
    e.out_t = device_type(k.out);
    for (int i = 0; i < arity; ++i)
        e.in_t.emplace_back(device_type(k.in[i]));
    e.scalar_mask = k.scalar_mask;
    e.strided = strided;
    e.ndim = k.ndim;
    e.index64 = k.index64;
    e.vec = strided ? 1 : k.vec;
    e.comment = "// " + std::string(oi.name) + ": " + std::string(name(k.out)) + " <- (";
    for (int i = 0; i < arity; ++i) {
        if (i) e.comment += ", ";
        e.comment += std::string(name(k.in[i])) + (is_scalar(i) ? " scalar" : "");
    }
    e.comment += "), computed in " + std::string(name(k.compute)) + "; " +
                 layout_comment(strided, k.ndim, k.index64, e.vec);
    e.aliases = "    using C = " + std::string(device_type(k.compute)) + ";  // compute type\n";
    e.aliases += "    using R = " + std::string(device_type(result_dtype(k.op, k.compute))) +
                 ";  // what the op returns\n";
    e.value_t = "C";
    e.load = [](int, std::string src) { return "convert<C>(" + src + ")"; };
    e.result = "convert<" + e.out_t + ">(R(ember::ops::op_" + std::string(oi.name) + "::apply(";
    for (int i = 0; i < arity; ++i)
        e.result += (i ? ", a" : "a") + std::to_string(i);
    e.result += ")))";
    return elementwise_text(e);
}

int natural_vec(const MapKernel& k) {
    int64_t widest = itemsize(k.out);
    for (int i = 0; i < ops::info(k.op).arity; ++i)
        if (!(k.scalar_mask & (1u << i))) widest = std::max<int64_t>(widest, itemsize(k.in[i]));
    return int(16 / widest);
}

int natural_vec(const CopyKernel& k) {
    const int64_t widest = std::max(itemsize(k.out), k.scalar ? 1 : itemsize(k.in));
    return int(16 / widest);
}

namespace {
template <class K>
std::vector<K> variants_of(const K& k) {
    std::vector<K> v;
    const int vec = natural_vec(k);
    for (int w : {vec, 1}) {
        K c = k;
        c.layout = MapLayout::contiguous;
        c.ndim = 1;
        c.vec = w;
        v.push_back(c);
        if (vec == 1) break;
    }
    for (int nd = 1; nd <= 3; ++nd) {
        K c = k;
        c.layout = MapLayout::strided;
        c.ndim = nd;
        c.vec = 1;
        v.push_back(c);
    }
    return v;
}
}  // namespace

std::vector<MapKernel> layout_variants(const MapKernel& k) { return variants_of(k); }
std::vector<CopyKernel> layout_variants(const CopyKernel& k) { return variants_of(k); }

std::string copy_kernel_name(const CopyKernel& k) {
    std::string s = "ember_copy_";
    s += dtype_code(k.out);
    s += '_';
    s += dtype_code(k.in);
    if (k.scalar) s += 's';
    s += layout_suffix(k.layout == MapLayout::strided, k.ndim, k.index64, k.vec);
    return s;
}

std::string copy_kernel_text(const CopyKernel& k) {
    const bool strided = k.layout == MapLayout::strided;
    if (strided && (k.ndim < 1 || k.ndim > max_strided_dims))
        throw ValueError("copy kernel: strided ndim " + std::to_string(k.ndim) + " is outside 1.." +
                         std::to_string(max_strided_dims));
    Elementwise e;
    e.name = copy_kernel_name(k);
    e.out_t = device_type(k.out);
    e.in_t = {std::string(device_type(k.in))};
    e.scalar_mask = k.scalar ? 1 : 0;
    e.strided = strided;
    e.ndim = k.ndim;
    e.index64 = k.index64;
    e.vec = strided ? 1 : k.vec;
    e.comment = std::string("// ") + (k.scalar ? "fill" : "copy") + ": " +
                std::string(name(k.out)) + " <- " + std::string(name(k.in)) +
                (k.scalar ? " scalar" : "") + " (NumPy's unsafe cast); " +
                layout_comment(strided, k.ndim, k.index64, e.vec);
    e.value_t = "Out";
    e.aliases = "    using Out = " + e.out_t + ";\n";
    e.load = [](int, std::string src) { return "convert<Out>(" + src + ")"; };
    e.result = "a0";
    return elementwise_text(e);
}

std::string iota_kernel_name(DType out, bool index64) {
    return "ember_iota_" + std::string(dtype_code(out)) + (index64 ? "_i64" : "_i32");
}

std::string iota_kernel_text(DType out, bool index64) {
    const std::string t(device_type(out));
    const Kind kd = kind(out);
    // start and step come as int64, double or complex<double> by the kind of the output.
    const std::string arg = kd == Kind::complex    ? "ember::dev::complex128"
                            : kd == Kind::floating ? "double"
                                                   : "long long";
    std::string value;
    if (out == DType::bool_)
        value = "(start + i * step) != 0";
    else if (kd == Kind::complex)
        value = "convert<" + t + ">(start + double(i) * step)";
    else if (kd == Kind::floating)
        value = "convert<" + t + ">(start + double(i) * step)";
    else
        value =
            t + "((unsigned long long)start + (unsigned long long)i * (unsigned long long)step)";
    std::string s = "// arange/linspace: out[i * stride] = start + i * step, computed in " + arg +
                    ", stored as " + std::string(name(out)) + ".\n";
    const std::string idx = index64 ? "long long" : "unsigned int";
    s += "extern \"C\" __global__ void " + iota_kernel_name(out, index64) + "(\n";
    s += "    " + t + "* __restrict__ out,\n    const long long stride,\n    const " + arg +
         " start,\n    const " + arg + " step,\n    const " + idx + " n) {\n";
    s += "    using namespace ember::dev;\n";
    s += "    using Index = " + idx + ";\n";
    s += "    const Index gstep = Index(gridDim.x) * blockDim.x;\n";
    s += "    for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += gstep)\n";
    s += "        out[(long long)i * stride] = " + value + ";\n";
    s += "}\n";
    return s;
}

Program single_program(std::string kernel_name, std::string text, bool cplx,
                       std::vector<ProgramHeader> extra) {
    Program p;
    p.name = kernel_name + ".cu";
    p.source = "// Generated by ember (src/backend/cuda/codegen.cpp).\n";
    if (cplx) p.source += "#define EMBER_DEVICE_COMPLEX 1\n";
    p.source +=
        "#include \"ember/device_prelude.cuh\"\n"
        "#include \"ember/ops/scalar.hpp\"\n";
    for (const ProgramHeader& h : extra)
        p.source += "#include \"" + h.first + "\"\n";
    p.source += '\n';
    p.source += text;
    p.headers = {{"ember/device_prelude.cuh", prelude_text()},
                 {"ember/ops/scalar.hpp", std::string(scalar_header_text())}};
    for (ProgramHeader& h : extra)
        p.headers.push_back(std::move(h));
    return p;
}

Program copy_program(const CopyKernel& k) {
    return single_program(copy_kernel_name(k), copy_kernel_text(k),
                          is_complex(k.in) || is_complex(k.out));
}
RandomFamily random_family(rng::Dist d) {
    if (d == rng::Dist::bits) return RandomFamily::bits;
    if (rng::is_packed(d)) return RandomFamily::real;
    if (d == rng::Dist::gamma || d == rng::Dist::beta) return RandomFamily::streamed_real;
    return RandomFamily::streamed_int;
}

std::string random_kernel_name(RandomFamily f, DType out) {
    static const char* fam[] = {"bits", "real", "streamed_real", "streamed_int"};
    return "ember_random_" + std::string(fam[int(f)]) + "_" + std::string(dtype_code(out));
}

std::string random_kernel_text(RandomFamily f, DType out) {
    const std::string t(device_type(out)), name = random_kernel_name(f, out);
    std::string s;
    if (f == RandomFamily::bits || f == RandomFamily::real) {
        const bool wide = itemsize(out) == 8;
        const std::string v = wide ? "2" : "4";
        const std::string c = f == RandomFamily::bits ? t : (wide ? "double" : "float");
        const std::string fill = f == RandomFamily::bits ? "packed_bits" : "packed_real";
        s += "// Random draws stored as " + std::string(ember::name(out)) + ": one Philox block (" +
             v + " values, computed as " + c + ") per thread and step.\n";
        s += "extern \"C\" __global__ void " + name + "(\n";
        s += "    " + t + "* __restrict__ out,\n    const ember::rng::Params p,\n";
        s += "    const unsigned long long n) {\n";
        s += "    using namespace ember::dev;\n";
        s += "    constexpr int V = " + v + ";\n";
        if (f == RandomFamily::real) {
            s += "    if (p.dist == ember::rng::Dist::normal) {  // the ziggurat's queued loop\n";
            s += "        ember::rng::normal_fill<" + t + ", " + c + ", V>(out, p, n);\n";
            s += "        return;\n";
            s += "    }\n";
        }
        s += "    const unsigned long long blocks = (n + V - 1) / V;\n";
        s += "    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;\n";
        s += "    for (unsigned long long k = (unsigned long long)blockIdx.x * blockDim.x + "
             "threadIdx.x; k < blocks; k += step) {\n";
        s += "        " + c + " c[V];\n";
        s += "        ember::rng::" + fill + "(p, k, c);\n";
        s += "        vec_t<" + t + ", V> y;\n";
        s += "#pragma unroll\n";
        s += "        for (int j = 0; j < V; ++j) y.v[j] = convert<" + t + ">(c[j]);\n";
        s += "        if ((k + 1) * V <= n) {\n";
        s += "            reinterpret_cast<vec_t<" + t + ", V>*>(out)[k] = y;\n";
        s += "        } else {  // constant indices: y stays in registers\n";
        s += "#pragma unroll\n";
        s += "            for (int j = 0; j < V; ++j)\n";
        s += "                if (k * V + j < n) out[k * V + j] = y.v[j];\n";
        s += "        }\n";
        s += "    }\n}\n";
        return s;
    }
    const bool real = f == RandomFamily::streamed_real;
    s += "// Random draws with rejection loops (one Philox stream per element), stored as " +
         std::string(ember::name(out)) + ".\n";
    s += "extern \"C\" __global__ void " + name + "(\n";
    s += "    " + t + "* __restrict__ out,\n    const ember::rng::Params p,\n";
    s += "    const unsigned long long n) {\n";
    s += "    using namespace ember::dev;\n";
    s += "    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;\n";
    s += "    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + "
         "threadIdx.x; i < n; i += step)\n";
    if (real)
        s += "        out[i] = convert<" + t + ">(ember::rng::streamed_real(p, i));\n";
    else if (out == DType::bool_)
        s += "        out[i] = ember::rng::streamed_int(p, i) != 0;\n";
    else if (kind(out) == Kind::floating)
        s += "        out[i] = convert<" + t + ">((long long)ember::rng::streamed_int(p, i));\n";
    else
        s += "        out[i] = " + t + "(ember::rng::streamed_int(p, i));\n";
    s += "}\n";
    return s;
}

Program random_program(RandomFamily f, DType out) {
    Program p = single_program(random_kernel_name(f, out), "", false);
    p.source =
        "// Generated by ember (src/backend/cuda/codegen.cpp): random numbers.\n"
        "#include \"ember/device_prelude.cuh\"\n"
        "#include \"ember/ops/scalar.hpp\"\n"
        "#include \"ember/ops/random.hpp\"\n\n" +
        random_kernel_text(f, out);
    p.headers.emplace_back("ember/ops/random.hpp", std::string(generated::random_hpp));
    return p;
}

std::string gather_kernel_name(int itemsize) { return "ember_gather_b" + std::to_string(itemsize); }

Program gather_program(int itemsize) {
    const std::string t = itemsize == 16  ? "ember::dev::vec_t<unsigned long long, 2>"
                          : itemsize == 8 ? "unsigned long long"
                          : itemsize == 4 ? "unsigned int"
                          : itemsize == 2 ? "unsigned short"
                                          : "unsigned char";
    const std::string nm = gather_kernel_name(itemsize);
    std::string s = "// out[i] = src[offsets[i]], " + std::to_string(itemsize) +
                    "-byte elements moved as bits.\n";
    s += "extern \"C\" __global__ void " + nm + "(\n";
    s += "    " + t + "* __restrict__ out, const " + t +
         "* src, const long long* __restrict__ offsets,\n";
    s += "    const long long n) {\n";
    s += "    const long long step = (long long)gridDim.x * blockDim.x;\n";
    s += "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += "
         "step)\n";
    s += "        out[i] = src[offsets[i]];\n";
    s += "}\n";
    return single_program(nm, s, false);
}

std::string int_matmul_kernel_name(DType t) { return "ember_matmul_" + std::string(dtype_code(t)); }

Program int_matmul_program(DType t) {
    const std::string ty(device_type(t)), nm = int_matmul_kernel_name(t);
    const bool b = t == DType::bool_;
    std::string s = "// C = A @ B for " + std::string(name(t)) +
                    ", one output element per thread; A/B row-major or transposed.\n";
    s += "extern \"C\" __global__ void " + nm + "(\n";
    s += "    " + ty + "* __restrict__ c, const " + ty + "* __restrict__ a, const " + ty +
         "* __restrict__ b,\n";
    s += "    const long long m, const long long n, const long long k, const long long lda,\n";
    s += "    const long long ldb, const long long ldc, const int ta, const int tb) {\n";
    s += "    const long long step = (long long)gridDim.x * blockDim.x;\n";
    s += "    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < m * n; "
         "e += step) {\n";
    s += "        const long long i = e / n, j = e % n;\n";
    s += b ? "        bool acc = false;\n" : "        unsigned long long acc = 0;\n";
    s += "        for (long long p = 0; p < k; ++p) {\n";
    s += "            const " + ty + " x = a[ta ? p * lda + i : i * lda + p];\n";
    s += "            const " + ty + " y = b[tb ? j * ldb + p : p * ldb + j];\n";
    s += b ? "            acc = acc || (x && y);\n"
           : "            acc += (unsigned long long)(long long)x * (unsigned long long)(long "
             "long)y;\n";
    s += "        }\n";
    s += "        c[i * ldc + j] = " + (b ? std::string("acc") : ty + "(acc)") + ";\n";
    s += "    }\n}\n";
    return single_program(nm, s, false);
}

Program iota_program(DType out, bool index64) {
    return single_program(iota_kernel_name(out, index64), iota_kernel_text(out, index64),
                          is_complex(out));
}

std::string program_text(std::span<const MapKernel> kernels) {
    bool cplx = false;
    for (const MapKernel& k : kernels) {
        cplx = cplx || is_complex(k.compute) || is_complex(k.out);
        for (int i = 0; i < ops::info(k.op).arity; ++i)
            cplx = cplx || is_complex(k.in[i]);
    }
    std::string s =
        "// Generated by ember (src/backend/cuda/codegen.cpp): elementwise map kernels.\n";
    if (cplx) s += "#define EMBER_DEVICE_COMPLEX 1\n";
    s += "#include \"ember/device_prelude.cuh\"\n"
         "#include \"ember/ops/scalar.hpp\"\n";
    for (const MapKernel& k : kernels) {
        s += '\n';
        s += kernel_text(k);
    }
    return s;
}

Program map_program(std::span<const MapKernel> kernels) {
    Program p;
    p.name = kernels.size() == 1 ? kernel_name(kernels[0]) + ".cu" : "ember_map.cu";
    p.source = program_text(kernels);
    p.headers = {{"ember/device_prelude.cuh", prelude_text()},
                 {"ember/ops/scalar.hpp", std::string(scalar_header_text())}};
    return p;
}

}  // namespace ember::gpu
