// The elementwise op table: one row per op (name, arity, the dtypes that have loops, the output
// rule, flags). Backends instantiate loops from it, the front-end resolves dtypes with it, the
// bindings export it and the tests parametrize over it. Adding an op = one row here plus its body
// in scalar.hpp.
#pragma once

#include <cstdint>
#include <string_view>

#include "ember/dtype.hpp"

namespace ember::ops {

// Sets of dtypes, as bit masks over DType.
constexpr uint32_t bit(DType t) { return 1u << unsigned(t); }
constexpr uint32_t M_BOOL = bit(DType::bool_);
constexpr uint32_t M_INT = bit(DType::int8) | bit(DType::int16) | bit(DType::int32) |
                           bit(DType::int64) | bit(DType::uint8) | bit(DType::uint16) |
                           bit(DType::uint32) | bit(DType::uint64);
constexpr uint32_t M_FLOAT =
    bit(DType::float16) | bit(DType::bfloat16) | bit(DType::float32) | bit(DType::float64);
constexpr uint32_t M_COMPLEX = bit(DType::complex64) | bit(DType::complex128);
constexpr uint32_t M_ALL = M_BOOL | M_INT | M_FLOAT | M_COMPLEX;
constexpr uint32_t M_NUM = M_INT | M_FLOAT | M_COMPLEX;  // bool inputs use the int8 loop
constexpr uint32_t M_REALNUM = M_INT | M_FLOAT;
constexpr uint32_t M_INEXACT = M_FLOAT | M_COMPLEX;

enum class OutRule : uint8_t { same, boolean, real };

// Flags.
constexpr uint32_t F_NO_BOOL = 1;      // a bool input is a TypeError (np.subtract(True, True))
constexpr uint32_t F_INT_TO_F64 = 2;   // integer inputs use the float64 loop (true division)
constexpr uint32_t F_CAST_BOOL = 4;    // every input is cast to bool (logical ops)
constexpr uint32_t F_EXACT_HALF = 8;   // float16/bfloat16 computed in their own type (nextafter)
constexpr uint32_t F_BOOL_FLOAT = 16;  // a bool input uses the float16 loop (np.round(True))

// X(name, arity, loops, out_rule, flags)
#define EMBER_ELEMENTWISE_OPS(X)                    \
    X(add, 2, M_ALL, same, 0)                       \
    X(subtract, 2, M_NUM, same, F_NO_BOOL)          \
    X(multiply, 2, M_ALL, same, 0)                  \
    X(divide, 2, M_INEXACT, same, F_INT_TO_F64)     \
    X(floor_divide, 2, M_REALNUM, same, 0)          \
    X(remainder, 2, M_REALNUM, same, 0)             \
    X(pow, 2, M_NUM, same, 0)                       \
    X(equal, 2, M_ALL, boolean, 0)                  \
    X(not_equal, 2, M_ALL, boolean, 0)              \
    X(less, 2, M_ALL, boolean, 0)                   \
    X(less_equal, 2, M_ALL, boolean, 0)             \
    X(greater, 2, M_ALL, boolean, 0)                \
    X(greater_equal, 2, M_ALL, boolean, 0)          \
    X(logical_and, 2, M_BOOL, boolean, F_CAST_BOOL) \
    X(logical_or, 2, M_BOOL, boolean, F_CAST_BOOL)  \
    X(logical_xor, 2, M_BOOL, boolean, F_CAST_BOOL) \
    X(logical_not, 1, M_BOOL, boolean, F_CAST_BOOL) \
    X(bitwise_and, 2, M_BOOL | M_INT, same, 0)      \
    X(bitwise_or, 2, M_BOOL | M_INT, same, 0)       \
    X(bitwise_xor, 2, M_BOOL | M_INT, same, 0)      \
    X(bitwise_invert, 1, M_BOOL | M_INT, same, 0)   \
    X(bitwise_left_shift, 2, M_INT, same, 0)        \
    X(bitwise_right_shift, 2, M_INT, same, 0)       \
    X(abs, 1, M_ALL, real, 0)                       \
    X(negative, 1, M_NUM, same, F_NO_BOOL)          \
    X(positive, 1, M_NUM, same, F_NO_BOOL)          \
    X(sign, 1, M_NUM, same, F_NO_BOOL)              \
    X(square, 1, M_NUM, same, 0)                    \
    X(reciprocal, 1, M_NUM, same, 0)                \
    X(conj, 1, M_NUM, same, 0)                      \
    X(real, 1, M_ALL, real, 0)                      \
    X(imag, 1, M_ALL, real, 0)                      \
    X(sqrt, 1, M_INEXACT, same, 0)                  \
    X(exp, 1, M_INEXACT, same, 0)                   \
    X(expm1, 1, M_INEXACT, same, 0)                 \
    X(log, 1, M_INEXACT, same, 0)                   \
    X(log1p, 1, M_INEXACT, same, 0)                 \
    X(log2, 1, M_INEXACT, same, 0)                  \
    X(log10, 1, M_INEXACT, same, 0)                 \
    X(logaddexp, 2, M_FLOAT, same, 0)               \
    X(sin, 1, M_INEXACT, same, 0)                   \
    X(cos, 1, M_INEXACT, same, 0)                   \
    X(tan, 1, M_INEXACT, same, 0)                   \
    X(asin, 1, M_INEXACT, same, 0)                  \
    X(acos, 1, M_INEXACT, same, 0)                  \
    X(atan, 1, M_INEXACT, same, 0)                  \
    X(sinh, 1, M_INEXACT, same, 0)                  \
    X(cosh, 1, M_INEXACT, same, 0)                  \
    X(tanh, 1, M_INEXACT, same, 0)                  \
    X(asinh, 1, M_INEXACT, same, 0)                 \
    X(acosh, 1, M_INEXACT, same, 0)                 \
    X(atanh, 1, M_INEXACT, same, 0)                 \
    X(atan2, 2, M_FLOAT, same, 0)                   \
    X(hypot, 2, M_FLOAT, same, 0)                   \
    X(copysign, 2, M_FLOAT, same, 0)                \
    X(nextafter, 2, M_FLOAT, same, F_EXACT_HALF)    \
    X(signbit, 1, M_FLOAT, boolean, 0)              \
    X(floor, 1, M_BOOL | M_REALNUM, same, 0)        \
    X(ceil, 1, M_BOOL | M_REALNUM, same, 0)         \
    X(trunc, 1, M_BOOL | M_REALNUM, same, 0)        \
    X(round, 1, M_NUM, same, F_BOOL_FLOAT)          \
    X(isnan, 1, M_ALL, boolean, 0)                  \
    X(isinf, 1, M_ALL, boolean, 0)                  \
    X(isfinite, 1, M_ALL, boolean, 0)               \
    X(maximum, 2, M_ALL, same, 0)                   \
    X(minimum, 2, M_ALL, same, 0)                   \
    X(clip, 3, M_ALL, same, 0)

enum class OpId : uint16_t {
#define EMBER_OP_ENUM(name, arity, loops, out, flags) name,
    EMBER_ELEMENTWISE_OPS(EMBER_OP_ENUM)
#undef EMBER_OP_ENUM
};

struct OpInfo {
    std::string_view name;
    int arity;
    uint32_t loops;
    OutRule out;
    uint32_t flags;
};

inline constexpr OpInfo op_infos[] = {
#define EMBER_OP_INFO(name, arity, loops, out, flags) {#name, arity, loops, OutRule::out, flags},
    EMBER_ELEMENTWISE_OPS(EMBER_OP_INFO)
#undef EMBER_OP_INFO
};
inline constexpr int num_ops = int(sizeof(op_infos) / sizeof(op_infos[0]));

inline const OpInfo& info(OpId op) { return op_infos[int(op)]; }

// The type in which a loop over `t` computes: float16/bfloat16 in float32, unless the op needs
// its own storage type.
inline DType compute_dtype(OpId op, DType t) {
    if ((t == DType::float16 || t == DType::bfloat16) && !(info(op).flags & F_EXACT_HALF))
        return DType::float32;
    return t;
}

}  // namespace ember::ops
