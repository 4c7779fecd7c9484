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

// X(name, arity, loops, out_rule, flags, doc)
#define EMBER_ELEMENTWISE_OPS(X)                                                                  \
    X(add, 2, M_ALL, same, 0, "Sum x1 + x2.")                                                     \
    X(subtract, 2, M_NUM, same, F_NO_BOOL, "Difference x1 - x2.")                                 \
    X(multiply, 2, M_ALL, same, 0, "Product x1 * x2.")                                            \
    X(divide, 2, M_INEXACT, same, F_INT_TO_F64, "True division x1 / x2 (integers give float64).") \
    X(floor_divide, 2, M_REALNUM, same, 0,                                                        \
      "Floor division x1 // x2 (integer division by zero gives 0, like NumPy).")                  \
    X(remainder, 2, M_REALNUM, same, 0, "Remainder with the sign of the divisor (Python's %).")   \
    X(fmod, 2, M_REALNUM, same, 0, "Remainder with the sign of the dividend (C's fmod).")         \
    X(gcd, 2, M_INT, same, F_NO_BOOL, "Greatest common divisor of |x1| and |x2|.")                \
    X(lcm, 2, M_INT, same, F_NO_BOOL, "Least common multiple of |x1| and |x2|.")                  \
    X(pow, 2, M_NUM, same, 0, "x1 raised to the power x2.")                                       \
    X(equal, 2, M_ALL, boolean, 0, "x1 == x2.")                                                   \
    X(not_equal, 2, M_ALL, boolean, 0, "x1 != x2.")                                               \
    X(less, 2, M_ALL, boolean, 0, "x1 < x2.")                                                     \
    X(less_equal, 2, M_ALL, boolean, 0, "x1 <= x2.")                                              \
    X(greater, 2, M_ALL, boolean, 0, "x1 > x2.")                                                  \
    X(greater_equal, 2, M_ALL, boolean, 0, "x1 >= x2.")                                           \
    X(logical_and, 2, M_BOOL, boolean, F_CAST_BOOL, "Logical AND of the truth values.")           \
    X(logical_or, 2, M_BOOL, boolean, F_CAST_BOOL, "Logical OR of the truth values.")             \
    X(logical_xor, 2, M_BOOL, boolean, F_CAST_BOOL, "Logical XOR of the truth values.")           \
    X(logical_not, 1, M_BOOL, boolean, F_CAST_BOOL, "Logical NOT of the truth value.")            \
    X(bitwise_and, 2, M_BOOL | M_INT, same, 0, "Bitwise AND (integers and bool).")                \
    X(bitwise_or, 2, M_BOOL | M_INT, same, 0, "Bitwise OR (integers and bool).")                  \
    X(bitwise_xor, 2, M_BOOL | M_INT, same, 0, "Bitwise XOR (integers and bool).")                \
    X(bitwise_invert, 1, M_BOOL | M_INT, same, 0, "Bitwise NOT (~x).")                            \
    X(bitwise_left_shift, 2, M_INT, same, 0, "x1 << x2 (shifts past the width give 0).")          \
    X(bitwise_right_shift, 2, M_INT, same, 0, "x1 >> x2, arithmetic for signed types.")           \
    X(abs, 1, M_ALL, real, 0, "Absolute value (magnitude for complex).")                          \
    X(negative, 1, M_NUM, same, F_NO_BOOL, "-x.")                                                 \
    X(positive, 1, M_NUM, same, F_NO_BOOL, "+x.")                                                 \
    X(sign, 1, M_NUM, same, F_NO_BOOL, "Sign of x: -1, 0 or 1 (x/|x| for complex).")              \
    X(square, 1, M_NUM, same, 0, "x * x.")                                                        \
    X(reciprocal, 1, M_NUM, same, 0, "1 / x.")                                                    \
    X(conj, 1, M_NUM, same, 0, "Complex conjugate.")                                              \
    X(real, 1, M_ALL, real, 0, "Real part.")                                                      \
    X(imag, 1, M_ALL, real, 0, "Imaginary part.")                                                 \
    X(sqrt, 1, M_INEXACT, same, 0, "Square root.")                                                \
    X(exp, 1, M_INEXACT, same, 0, "e**x.")                                                        \
    X(expm1, 1, M_INEXACT, same, 0, "exp(x) - 1, accurate near 0.")                               \
    X(log, 1, M_INEXACT, same, 0, "Natural logarithm.")                                           \
    X(log1p, 1, M_INEXACT, same, 0, "log(1 + x), accurate near 0.")                               \
    X(log2, 1, M_INEXACT, same, 0, "Base-2 logarithm.")                                           \
    X(log10, 1, M_INEXACT, same, 0, "Base-10 logarithm.")                                         \
    X(logaddexp, 2, M_FLOAT, same, 0, "log(exp(x1) + exp(x2)) without overflow.")                 \
    X(sin, 1, M_INEXACT, same, 0, "Sine.")                                                        \
    X(cos, 1, M_INEXACT, same, 0, "Cosine.")                                                      \
    X(tan, 1, M_INEXACT, same, 0, "Tangent.")                                                     \
    X(asin, 1, M_INEXACT, same, 0, "Inverse sine.")                                               \
    X(acos, 1, M_INEXACT, same, 0, "Inverse cosine.")                                             \
    X(atan, 1, M_INEXACT, same, 0, "Inverse tangent.")                                            \
    X(sinh, 1, M_INEXACT, same, 0, "Hyperbolic sine.")                                            \
    X(cosh, 1, M_INEXACT, same, 0, "Hyperbolic cosine.")                                          \
    X(tanh, 1, M_INEXACT, same, 0, "Hyperbolic tangent.")                                         \
    X(asinh, 1, M_INEXACT, same, 0, "Inverse hyperbolic sine.")                                   \
    X(acosh, 1, M_INEXACT, same, 0, "Inverse hyperbolic cosine.")                                 \
    X(atanh, 1, M_INEXACT, same, 0, "Inverse hyperbolic tangent.")                                \
    X(atan2, 2, M_FLOAT, same, 0, "Angle of the point (x2, x1), quadrant-aware.")                 \
    X(hypot, 2, M_FLOAT, same, 0, "sqrt(x1**2 + x2**2) without overflow.")                        \
    X(copysign, 2, M_FLOAT, same, 0, "Magnitude of x1 with the sign of x2.")                      \
    X(nextafter, 2, M_FLOAT, same, F_EXACT_HALF, "Next representable value after x1 towards x2.") \
    X(signbit, 1, M_FLOAT, boolean, 0, "Whether the sign bit is set (true for -0.0).")            \
    X(floor, 1, M_BOOL | M_REALNUM, same, 0, "Largest integer <= x.")                             \
    X(ceil, 1, M_BOOL | M_REALNUM, same, 0, "Smallest integer >= x.")                             \
    X(trunc, 1, M_BOOL | M_REALNUM, same, 0, "x rounded towards zero.")                           \
    X(round, 1, M_NUM, same, F_BOOL_FLOAT, "x rounded to the nearest integer, halves to even.")   \
    X(isnan, 1, M_ALL, boolean, 0, "Whether x is NaN.")                                           \
    X(isinf, 1, M_ALL, boolean, 0, "Whether x is infinite.")                                      \
    X(isfinite, 1, M_ALL, boolean, 0, "Whether x is finite.")                                     \
    X(maximum, 2, M_ALL, same, 0, "Elementwise maximum; NaN propagates.")                         \
    X(minimum, 2, M_ALL, same, 0, "Elementwise minimum; NaN propagates.")                         \
    X(clip, 3, M_ALL, same, 0, "x limited to [min, max]; a missing bound is no bound.")           \
    X(where, 3, M_ALL, same, 0, "x1 where condition is true (nonzero), else x2.")

enum class OpId : uint16_t {
#define EMBER_OP_ENUM(name, arity, loops, out, flags, doc) name,
    EMBER_ELEMENTWISE_OPS(EMBER_OP_ENUM)
#undef EMBER_OP_ENUM
};

struct OpInfo {
    std::string_view name;
    int arity;
    uint32_t loops;
    OutRule out;
    uint32_t flags;
    std::string_view doc;  // one line, for docstrings
};

inline constexpr OpInfo op_infos[] = {
#define EMBER_OP_INFO(name, arity, loops, out, flags, doc) \
    {#name, arity, loops, OutRule::out, flags, doc},
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
