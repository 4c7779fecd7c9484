// Elementwise map kernel source generation: a readable template per layout, filled with the op,
// the compute type and the operand storage types; the bodies are those of src/ops/scalar.hpp.
#include "backend/cuda/codegen.hpp"

#include "ember/error.hpp"
#include "ember_scalar_text.hpp"

namespace ember::gpu {
namespace {

// What scalar.hpp takes from <cmath>/<complex>/<type_traits> on the host, from CCCL's cuda::std;
// value conversions with the results of src/ops/convert.hpp; float16/bfloat16 as bit containers
// converted through float32 with the rounding of include/ember/half.hpp.
constexpr std::string_view prelude =
    R"EMBER_PRELUDE(// ember device prelude for NVRTC-compiled kernels.
#pragma once

#define EMBER_DEVICE_PRELUDE 1
#define EMBER_HD __device__

#include <cuda/std/cmath>
#include <cuda/std/complex>
#include <cuda/std/cstdint>
#include <cuda/std/limits>
#include <cuda/std/type_traits>

using cuda::std::int16_t;
using cuda::std::int32_t;
using cuda::std::int64_t;
using cuda::std::int8_t;
using cuda::std::uint16_t;
using cuda::std::uint32_t;
using cuda::std::uint64_t;
using cuda::std::uint8_t;

// scalar.hpp names its type traits std::...; on the device they are CCCL's.
namespace std {
using namespace cuda::std;
}

namespace ember::ops {
template <class T>
using complex_t = cuda::std::complex<T>;
template <class T>
using limits = cuda::std::numeric_limits<T>;
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
using cuda::std::hypot;
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
__device__ inline float fmod(float a, float b) { return ::fmodf(a, b); }
__device__ inline double fmod(double a, double b) { return ::fmod(a, b); }
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

using complex64 = cuda::std::complex<float>;
using complex128 = cuda::std::complex<double>;

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
struct is_cplx : cuda::std::false_type {};
template <class T>
struct is_cplx<cuda::std::complex<T>> : cuda::std::true_type {};
template <class T>
inline constexpr bool is_half_v =
    cuda::std::is_same_v<T, float16> || cuda::std::is_same_v<T, bfloat16>;

// NumPy's unsafe casts without undefined behaviour: NaN and out-of-range floats become the
// integer minimum, as on the host (x86), not the device's saturating conversion.
template <class To, class From>
__device__ inline To convert(From v) {
    if constexpr (cuda::std::is_same_v<To, From>) {
        return v;
    } else if constexpr (is_half_v<From>) {
        return convert<To>(to_float(v));
    } else if constexpr (cuda::std::is_same_v<To, bool>) {
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
        if constexpr (cuda::std::is_same_v<From, double>) {
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
    } else if constexpr (cuda::std::is_integral_v<To> && cuda::std::is_floating_point_v<From>) {
        if constexpr (cuda::std::is_unsigned_v<To> && sizeof(To) == 8) {
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

// Device spelling of each dtype's storage type.
std::string_view device_type(DType t) {
    switch (t) {
        case DType::bool_:
            return "bool";
        case DType::int8:
            return "int8_t";
        case DType::int16:
            return "int16_t";
        case DType::int32:
            return "int32_t";
        case DType::int64:
            return "int64_t";
        case DType::uint8:
            return "uint8_t";
        case DType::uint16:
            return "uint16_t";
        case DType::uint32:
            return "uint32_t";
        case DType::uint64:
            return "uint64_t";
        case DType::float16:
            return "ember::float16";
        case DType::bfloat16:
            return "ember::bfloat16";
        case DType::float32:
            return "float";
        case DType::float64:
            return "double";
        case DType::complex64:
            return "ember::dev::complex64";
        case DType::complex128:
            return "ember::dev::complex128";
    }
    return "void";
}

// Short dtype code for kernel names.
std::string_view code(DType t) {
    switch (t) {
        case DType::bool_:
            return "b1";
        case DType::int8:
            return "i8";
        case DType::int16:
            return "i16";
        case DType::int32:
            return "i32";
        case DType::int64:
            return "i64";
        case DType::uint8:
            return "u8";
        case DType::uint16:
            return "u16";
        case DType::uint32:
            return "u32";
        case DType::uint64:
            return "u64";
        case DType::float16:
            return "f16";
        case DType::bfloat16:
            return "bf16";
        case DType::float32:
            return "f32";
        case DType::float64:
            return "f64";
        case DType::complex64:
            return "c64";
        case DType::complex128:
            return "c128";
    }
    return "x";
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
    s += code(k.compute);
    s += "__";
    s += code(k.out);
    for (int i = 0; i < oi.arity; ++i) {
        s += '_';
        s += code(k.in[i]);
        if (k.scalar_mask & (1u << i)) s += 's';
    }
    s += k.layout == MapLayout::contiguous ? "__contig" : "__strided" + std::to_string(k.ndim);
    s += k.index64 ? "_i64" : "_i32";
    return s;
}

std::string kernel_text(const MapKernel& k) {
    check(k);
    const ops::OpInfo& oi = ops::info(k.op);
    const int arity = oi.arity;
    const bool strided = k.layout == MapLayout::strided;
    const std::string iu = "Index", is = "Offset";  // aliases declared in the kernel
    const auto is_scalar = [&](int i) { return (k.scalar_mask & (1u << i)) != 0; };
    const std::string out_t(device_type(k.out));

    std::string s;
    // Header comment: what the kernel computes.
    s += "// " + std::string(oi.name) + ": " + std::string(name(k.out)) + " <- (";
    for (int i = 0; i < arity; ++i) {
        if (i) s += ", ";
        s += std::string(name(k.in[i])) + (is_scalar(i) ? " scalar" : "");
    }
    s += "), computed in " + std::string(name(k.compute)) + "; ";
    s += strided ? std::to_string(k.ndim) + "-d strided" : "contiguous";
    s += k.index64 ? ", 64-bit indices.\n" : ", 32-bit indices.\n";

    s += "extern \"C\" __global__ void " + kernel_name(k) + "(\n";
    s += "    " + out_t + "* __restrict__ out";
    for (int i = 0; i < arity; ++i) {
        const std::string t(device_type(k.in[i]));
        s += ",\n    ";
        s += is_scalar(i) ? "const " + t + " in" + std::to_string(i)
                          : "const " + t + "* __restrict__ in" + std::to_string(i);
    }
    if (strided) s += ",\n    const ember::dev::StridedGeometry g";
    s += k.index64 ? ",\n    const long long n) {\n" : ",\n    const unsigned int n) {\n";
    s += "    using namespace ember::dev;\n";
    s += "    using C = " + std::string(device_type(k.compute)) + ";  // compute type\n";
    s += "    using R = " + std::string(device_type(result_dtype(k.op, k.compute))) +
         ";  // what the op returns\n";
    if (k.index64) {
        s += "    using Index = long long;  // linear index\n";
        if (strided) s += "    using Offset = long long;  // element offset\n";
    } else {
        // The host keeps n and gridDim.x * blockDim.x below 2^31, so i + step cannot wrap.
        s += "    using Index = unsigned int;  // linear index (n < 2^31)\n";
        if (strided) s += "    using Offset = int;  // element offset\n";
    }
    for (int i = 0; i < arity; ++i)
        if (is_scalar(i))
            s += "    const C a" + std::to_string(i) + " = convert<C>(in" + std::to_string(i) +
                 ");\n";
    s += "    const Index step = Index(gridDim.x) * blockDim.x;\n";
    s += "    for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {\n";
    // Operand element offsets: the output is operand 0, input i is operand i + 1.
    std::vector<std::string> at(arity + 1, std::string("i"));
    if (strided) {
        std::vector<int> arrays;  // operand indices that need an offset
        arrays.push_back(0);
        for (int i = 0; i < arity; ++i)
            if (!is_scalar(i)) arrays.push_back(i + 1);
        const std::string nd = std::to_string(k.ndim);
        s += "        " + iu + " rem = i;\n";
        s += "        " + is;
        for (size_t j = 0; j < arrays.size(); ++j)
            s += (j ? ", o" : " o") + std::to_string(arrays[j]) + " = 0";
        s += ";\n";
        if (k.ndim > 1) {
            s += "#pragma unroll\n";
            s += "        for (int d = 0; d < " + std::to_string(k.ndim - 1) + "; ++d) {\n";
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
                 std::to_string(op) + "][" + std::to_string(k.ndim - 1) + "]);\n";
        for (int op : arrays)
            at[op].assign(1, 'o').append(std::to_string(op));
    }
    for (int i = 0; i < arity; ++i)
        if (!is_scalar(i))
            s += "        const C a" + std::to_string(i) + " = convert<C>(in" + std::to_string(i) +
                 "[" + at[i + 1] + "]);\n";
    s += "        out[" + at[0] + "] = convert<" + out_t + ">(R(ember::ops::op_" +
         std::string(oi.name) + "::apply(";
    for (int i = 0; i < arity; ++i)
        s += (i ? ", a" : "a") + std::to_string(i);
    s += ")));\n";
    s += "    }\n}\n";
    return s;
}

std::string program_text(std::span<const MapKernel> kernels) {
    std::string s =
        "// Generated by ember (src/backend/cuda/codegen.cpp): elementwise map kernels.\n"
        "#include \"ember/device_prelude.cuh\"\n"
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
