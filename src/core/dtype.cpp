// DType table, name parsing, casting and promotion rules.
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "ember/dtype.hpp"
#include "ember/error.hpp"

namespace ember {

namespace {

constexpr const DTypeInfo* infos = detail::dtype_infos;

// Significand bits (incl. the implicit one) of each float type; integers need that many bits.
int mantissa_bits(DType t) {
    switch (t) {
        case DType::float16:
            return 11;
        case DType::bfloat16:
            return 8;
        case DType::float32:
        case DType::complex64:
            return 24;
        case DType::float64:
        case DType::complex128:
            return 53;
        default:
            return 0;
    }
}

int exponent_rank(DType t) {  // bfloat16's range equals float32's, float16's is narrower
    switch (t) {
        case DType::float16:
            return 0;
        case DType::bfloat16:
        case DType::float32:
        case DType::complex64:
            return 1;
        default:
            return 2;
    }
}

bool can_cast_impl(DType from, DType to) {
    if (from == to || from == DType::bool_) return true;
    const Kind kf = kind(from), kt = kind(to);
    const int bf = itemsize(from) * 8;
    switch (kf) {
        case Kind::boolean:
            return true;
        case Kind::unsigned_int:
            if (kt == Kind::unsigned_int) return itemsize(to) >= itemsize(from);
            if (kt == Kind::signed_int) return itemsize(to) > itemsize(from);
            if (kt == Kind::floating || kt == Kind::complex)
                return from == DType::uint64 ? mantissa_bits(to) == 53 : mantissa_bits(to) >= bf;
            return false;
        case Kind::signed_int:
            if (kt == Kind::signed_int) return itemsize(to) >= itemsize(from);
            if (kt == Kind::floating || kt == Kind::complex)
                return from == DType::int64
                           ? mantissa_bits(to) == 53
                           : mantissa_bits(to) >= bf - (from == DType::int8 ? 1 : 0);
            return false;
        case Kind::floating:
            if (kt != Kind::floating && kt != Kind::complex) return false;
            return mantissa_bits(to) >= mantissa_bits(from) &&
                   exponent_rank(to) >= exponent_rank(from);
        case Kind::complex:
            return kt == Kind::complex && itemsize(to) >= itemsize(from);
    }
    return false;
}

// Candidates tried in this order; the first both operands cast to safely is the promotion.
constexpr std::array<DType, num_dtypes> promotion_order = {
    DType::bool_,    DType::uint8,   DType::int8,    DType::uint16,    DType::int16,
    DType::uint32,   DType::int32,   DType::uint64,  DType::int64,     DType::float16,
    DType::bfloat16, DType::float32, DType::float64, DType::complex64, DType::complex128,
};

struct Tables {
    bool cast[num_dtypes][num_dtypes];
    DType promote[num_dtypes][num_dtypes];
    Tables() {
        for (int i = 0; i < num_dtypes; ++i)
            for (int j = 0; j < num_dtypes; ++j)
                cast[i][j] = can_cast_impl(DType(i), DType(j));
        for (int i = 0; i < num_dtypes; ++i)
            for (int j = 0; j < num_dtypes; ++j) {
                promote[i][j] = DType::complex128;
                for (DType c : promotion_order)
                    if (cast[i][int(c)] && cast[j][int(c)]) {
                        promote[i][j] = c;
                        break;
                    }
            }
    }
};
const Tables tables;

}  // namespace

DType dtype_from_name(std::string_view s) {
    for (int i = 0; i < num_dtypes; ++i)
        if (infos[i].name == s) return DType(i);
    struct Alias {
        std::string_view name;
        DType t;
    };
    static constexpr Alias aliases[] = {
        {"?", DType::bool_},
        {"bool_", DType::bool_},
        {"b1", DType::bool_},
        {"i1", DType::int8},
        {"i2", DType::int16},
        {"i4", DType::int32},
        {"i8", DType::int64},
        {"int", DType::int64},
        {"u1", DType::uint8},
        {"u2", DType::uint16},
        {"u4", DType::uint32},
        {"u8", DType::uint64},
        {"uint", DType::uint64},
        {"f2", DType::float16},
        {"half", DType::float16},
        {"f4", DType::float32},
        {"single", DType::float32},
        {"f8", DType::float64},
        {"float", DType::float64},
        {"double", DType::float64},
        {"c8", DType::complex64},
        {"c16", DType::complex128},
        {"complex", DType::complex128},
        {"b", DType::int8},
        {"h", DType::int16},
        {"i", DType::int32},
        {"l", DType::int64},
        {"q", DType::int64},
        {"B", DType::uint8},
        {"H", DType::uint16},
        {"I", DType::uint32},
        {"L", DType::uint64},
        {"Q", DType::uint64},
        {"e", DType::float16},
        {"f", DType::float32},
        {"d", DType::float64},
        {"F", DType::complex64},
        {"D", DType::complex128},
    };
    std::string_view t = s;
    if (!t.empty() && (t[0] == '<' || t[0] == '=' || t[0] == '|')) t.remove_prefix(1);
    for (const auto& a : aliases)
        if (a.name == t) return a.t;
    throw TypeError("ember.dtype: data type '" + std::string(s) + "' not understood");
}

bool can_cast(DType from, DType to) { return tables.cast[int(from)][int(to)]; }
DType promote_types(DType a, DType b) { return tables.promote[int(a)][int(b)]; }

DType default_dtype(WeakKind w) {
    switch (w) {
        case WeakKind::integer:
            return DType::int64;
        case WeakKind::floating:
            return DType::float64;
        case WeakKind::complex:
            return DType::complex128;
        default:
            return DType::bool_;
    }
}

DType promote_weak(DType a, WeakKind w) {
    const Kind k = kind(a);
    switch (w) {
        case WeakKind::none:
        case WeakKind::boolean:
            return a;
        case WeakKind::integer:
            return k == Kind::boolean ? DType::int64 : a;
        case WeakKind::floating:
            return (k == Kind::floating || k == Kind::complex) ? a : DType::float64;
        case WeakKind::complex:
            if (k == Kind::complex) return a;
            if (k == Kind::floating) return complex_dtype(a);
            return DType::complex128;
    }
    return a;
}

DType real_dtype(DType t) {
    if (t == DType::complex64) return DType::float32;
    if (t == DType::complex128) return DType::float64;
    return t;
}

DType complex_dtype(DType t) {
    if (t == DType::float64 || t == DType::complex128) return DType::complex128;
    if (is_inexact(t)) return DType::complex64;
    return promote_types(t, DType::complex64);
}

FInfo finfo(DType t) {
    switch (real_dtype(t)) {
        case DType::float16:
            return {
                16, 0.0009765625,  65504.0, -65504.0, 6.103515625e-05, 5.960464477539063e-08, 1e-3,
                3,  DType::float16};
        case DType::bfloat16:
            return {16,
                    0.0078125,
                    3.3895313892515355e+38,
                    -3.3895313892515355e+38,
                    1.1754943508222875e-38,
                    9.183549615799121e-41,
                    1e-2,
                    2,
                    DType::bfloat16};
        case DType::float32:
            return {32,
                    double(std::numeric_limits<float>::epsilon()),
                    double(std::numeric_limits<float>::max()),
                    -double(std::numeric_limits<float>::max()),
                    double(std::numeric_limits<float>::min()),
                    double(std::numeric_limits<float>::denorm_min()),
                    1e-6,
                    6,
                    DType::float32};
        case DType::float64:
            return {64,
                    std::numeric_limits<double>::epsilon(),
                    std::numeric_limits<double>::max(),
                    -std::numeric_limits<double>::max(),
                    std::numeric_limits<double>::min(),
                    std::numeric_limits<double>::denorm_min(),
                    1e-15,
                    15,
                    DType::float64};
        default:
            throw TypeError("ember.finfo: data type " + std::string(name(t)) +
                            " is not an inexact type");
    }
}

IInfo iinfo(DType t) {
    if (!is_integer(t))
        throw TypeError("ember.iinfo: data type " + std::string(name(t)) +
                        " is not an integer type");
    const int bits = itemsize(t) * 8;
    if (kind(t) == Kind::unsigned_int)
        return {bits, 0, bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1, t};
    return {bits, bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (bits - 1)),
            bits == 64 ? uint64_t(std::numeric_limits<int64_t>::max())
                       : (uint64_t(1) << (bits - 1)) - 1,
            t};
}

}  // namespace ember
