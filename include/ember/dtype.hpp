// Data types, their properties, and the type promotion rules of NumPy 2 / the Array API.
#pragma once

#include <complex>
#include <cstdint>
#include <string_view>

#include "ember/half.hpp"

namespace ember {

// The order is part of the ABI of the op tables: never reorder, only append.
enum class DType : uint8_t {
    bool_,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    float16,
    bfloat16,
    float32,
    float64,
    complex64,
    complex128,
};
inline constexpr int num_dtypes = 15;

enum class Kind : uint8_t { boolean, signed_int, unsigned_int, floating, complex };

struct DTypeInfo {
    std::string_view name;
    int itemsize;
    Kind kind;
};

namespace detail {
inline constexpr DTypeInfo dtype_infos[num_dtypes] = {
    {"bool", 1, Kind::boolean},        {"int8", 1, Kind::signed_int},
    {"int16", 2, Kind::signed_int},    {"int32", 4, Kind::signed_int},
    {"int64", 8, Kind::signed_int},    {"uint8", 1, Kind::unsigned_int},
    {"uint16", 2, Kind::unsigned_int}, {"uint32", 4, Kind::unsigned_int},
    {"uint64", 8, Kind::unsigned_int}, {"float16", 2, Kind::floating},
    {"bfloat16", 2, Kind::floating},   {"float32", 4, Kind::floating},
    {"float64", 8, Kind::floating},    {"complex64", 8, Kind::complex},
    {"complex128", 16, Kind::complex},
};
}  // namespace detail
inline const DTypeInfo& info(DType t) { return detail::dtype_infos[size_t(t)]; }
inline std::string_view name(DType t) { return info(t).name; }
inline int itemsize(DType t) { return info(t).itemsize; }
inline Kind kind(DType t) { return info(t).kind; }
inline bool is_bool(DType t) { return t == DType::bool_; }
inline bool is_integer(DType t) {
    return kind(t) == Kind::signed_int || kind(t) == Kind::unsigned_int;
}
inline bool is_floating(DType t) { return kind(t) == Kind::floating; }
inline bool is_complex(DType t) { return kind(t) == Kind::complex; }
inline bool is_inexact(DType t) { return is_floating(t) || is_complex(t); }

// Parses "float32", "f4", "int", "complex" ... ; throws TypeError naming the string.
DType dtype_from_name(std::string_view s);

// NumPy's "safe" casting relation.
bool can_cast(DType from, DType to);
// The smallest type both operands cast to safely (NumPy 2 promotion; int64+uint64 -> float64).
DType promote_types(DType a, DType b);

// Python scalars are "weak": they take the array's dtype when their kind allows (NEP 50).
enum class WeakKind : uint8_t { none, boolean, integer, floating, complex };
// Result dtype of combining an array of dtype `a` with a Python scalar of kind `w`.
DType promote_weak(DType a, WeakKind w);
// The default dtype of a Python scalar of kind `w` on its own (bool, int64, float64, complex128).
DType default_dtype(WeakKind w);

// Real counterpart of a complex type (complex64 -> float32); identity otherwise.
DType real_dtype(DType t);
// Complex counterpart of a float type (float32 -> complex64, float16/bfloat16 -> complex64).
DType complex_dtype(DType t);

struct FInfo {
    int bits;
    double eps, max, min, smallest_normal, smallest_subnormal, resolution;
    int precision;
    DType dtype;
};
struct IInfo {
    int bits;
    int64_t min;
    uint64_t max;
    DType dtype;
};
FInfo finfo(DType t);  // TypeError for non-inexact types (complex gives its real type's info)
IInfo iinfo(DType t);  // TypeError for non-integer types

// Compile-time mapping between C++ element types and DType.
template <class T>
struct dtype_of;
#define EMBER_DTYPE_OF(T, D)                     \
    template <>                                  \
    struct dtype_of<T> {                         \
        static constexpr DType value = DType::D; \
    };
EMBER_DTYPE_OF(bool, bool_)
EMBER_DTYPE_OF(int8_t, int8)
EMBER_DTYPE_OF(int16_t, int16)
EMBER_DTYPE_OF(int32_t, int32)
EMBER_DTYPE_OF(int64_t, int64)
EMBER_DTYPE_OF(uint8_t, uint8)
EMBER_DTYPE_OF(uint16_t, uint16)
EMBER_DTYPE_OF(uint32_t, uint32)
EMBER_DTYPE_OF(uint64_t, uint64)
EMBER_DTYPE_OF(float16, float16)
EMBER_DTYPE_OF(bfloat16, bfloat16)
EMBER_DTYPE_OF(float, float32)
EMBER_DTYPE_OF(double, float64)
EMBER_DTYPE_OF(std::complex<float>, complex64)
EMBER_DTYPE_OF(std::complex<double>, complex128)
#undef EMBER_DTYPE_OF
template <class T>
inline constexpr DType dtype_v = dtype_of<T>::value;

// Calls f(T{}) with the C++ type of `t` (the host storage type).
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
    switch (t) {
        case DType::bool_:
            return f(bool{});
        case DType::int8:
            return f(int8_t{});
        case DType::int16:
            return f(int16_t{});
        case DType::int32:
            return f(int32_t{});
        case DType::int64:
            return f(int64_t{});
        case DType::uint8:
            return f(uint8_t{});
        case DType::uint16:
            return f(uint16_t{});
        case DType::uint32:
            return f(uint32_t{});
        case DType::uint64:
            return f(uint64_t{});
        case DType::float16:
            return f(float16{});
        case DType::bfloat16:
            return f(bfloat16{});
        case DType::float32:
            return f(float{});
        case DType::float64:
            return f(double{});
        case DType::complex64:
            return f(std::complex<float>{});
        case DType::complex128:
            return f(std::complex<double>{});
    }
    return f(bool{});
}

}  // namespace ember
