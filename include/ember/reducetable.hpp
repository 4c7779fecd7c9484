// The reduction table: one row per reduction (name, identity, accumulator and result dtype rules,
// derivative, flags). The front-end resolves dtypes and empty inputs with it, both backends
// instantiate the row's policy from src/ops/reduce.hpp (named reduce_<name>), autograd picks the
// row's formula, the bindings export a module function and an ndarray method per row, and the tests
// parametrize over it. Adding a reduction = one row here plus its policy in src/ops/reduce.hpp.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "ember/dtype.hpp"

namespace ember::ops {

// The dtype a reduction accumulates in.
enum class AccRule : uint8_t {
    wide,     // from the result dtype: integers (and bool) in 64 bits of their signedness,
              // 16-bit floats in float32, others their own (wrapping is the same modulo 2^n)
    own,      // the input's dtype, 16-bit floats in float32
    boolean,  // bool
};

// The dtype a reduction returns.
enum class ResultRule : uint8_t {
    sum,      // NumPy's sum/prod: bool and signed integers give int64, unsigned ones uint64,
              // others their own
    same,     // the input's dtype
    boolean,  // bool
    index,    // int64 positions along the (one) reduced axis
};

// The backward formula (src/autograd/derivatives.cpp); `none`: the front-end records nothing.
enum class GradRule : uint8_t { none, sum, prod, extremum };

// Flags.
constexpr uint32_t R_DTYPE = 1;  // takes dtype= (the result dtype, then accumulated per AccRule)
constexpr uint32_t R_INDEX = 2;  // index-returning: one axis (None: the flattened array), the
                                 // result is int64 positions of the first match

// An empty reduction of a row without identity is an error (NumPy's "zero-size array to reduction
// operation which has no identity"; index rows: "attempt to get argmax of an empty sequence").
inline constexpr double no_identity = std::numeric_limits<double>::quiet_NaN();

// X(name, identity, acc, result, grad, flags, doc)
#define EMBER_REDUCTIONS(X)                                                                     \
    X(sum, 0, wide, sum, sum, R_DTYPE,                                                          \
      "Sum of elements over the given axes (NumPy's accumulation dtypes).")                     \
    X(prod, 1, wide, sum, prod, R_DTYPE, "Product of elements over the given axes.")            \
    X(max, no_identity, own, same, extremum, 0, "Maximum over the given axes; NaN propagates.") \
    X(min, no_identity, own, same, extremum, 0, "Minimum over the given axes; NaN propagates.") \
    X(any, 0, boolean, boolean, none, 0, "Whether any element along the axes is true.")         \
    X(all, 1, boolean, boolean, none, 0, "Whether all elements along the axes are true.")       \
    X(argmax, no_identity, own, index, none, R_INDEX,                                           \
      "Index of the first maximum (NaN counts as the maximum).")                                \
    X(argmin, no_identity, own, index, none, R_INDEX,                                           \
      "Index of the first minimum (NaN counts as the minimum).")

enum class ReduceOp : uint8_t {
#define EMBER_REDUCE_ENUM(name, identity, acc, result, grad, flags, doc) name,
    EMBER_REDUCTIONS(EMBER_REDUCE_ENUM)
#undef EMBER_REDUCE_ENUM
};

struct ReduceInfo {
    std::string_view name;
    double identity;  // no_identity (NaN) when there is none
    AccRule acc;
    ResultRule result;
    GradRule grad;
    uint32_t flags;
    std::string_view doc;  // one line, for docstrings

    constexpr bool has_identity() const { return identity == identity; }
    constexpr bool index() const { return flags & R_INDEX; }
};

inline constexpr ReduceInfo reduce_infos[] = {
#define EMBER_REDUCE_INFO(name, identity, acc, result, grad, flags, doc) \
    {#name, identity, AccRule::acc, ResultRule::result, GradRule::grad, flags, doc},
    EMBER_REDUCTIONS(EMBER_REDUCE_INFO)
#undef EMBER_REDUCE_INFO
};
inline constexpr int num_reductions = int(sizeof(reduce_infos) / sizeof(reduce_infos[0]));

inline const ReduceInfo& info(ReduceOp op) { return reduce_infos[int(op)]; }

// The result dtype of `op` over an input of dtype `in`; `requested` is the caller's dtype= (rows
// with R_DTYPE only).
inline DType reduce_result_dtype(ReduceOp op, DType in, std::optional<DType> requested) {
    if (requested) return *requested;
    switch (info(op).result) {
        case ResultRule::sum:
            if (in == DType::bool_ || kind(in) == Kind::signed_int) return DType::int64;
            if (kind(in) == Kind::unsigned_int) return DType::uint64;
            return in;
        case ResultRule::same:
            return in;
        case ResultRule::boolean:
            return DType::bool_;
        case ResultRule::index:
            return DType::int64;
    }
    return in;
}

// The accumulator dtype of `op` over an input of dtype `in` with result dtype `out`.
inline DType reduce_acc_dtype(ReduceOp op, DType in, DType out) {
    const auto half = [](DType t) { return t == DType::float16 || t == DType::bfloat16; };
    switch (info(op).acc) {
        case AccRule::wide:
            switch (kind(out)) {
                case Kind::boolean:
                case Kind::signed_int:
                    return DType::int64;
                case Kind::unsigned_int:
                    return DType::uint64;
                case Kind::floating:
                    return out == DType::float64 ? DType::float64 : DType::float32;
                case Kind::complex:
                    return out;
            }
            return out;
        case AccRule::own:
            return half(in) ? DType::float32 : in;
        case AccRule::boolean:
            return DType::bool_;
    }
    return out;
}

}  // namespace ember::ops
