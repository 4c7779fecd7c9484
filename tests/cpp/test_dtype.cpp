// Tests of dtypes: promotion (NumPy 2 table spot checks and lattice properties), casting, weak
// scalars, finfo/iinfo, half conversions.
#include <gtest/gtest.h>

#include <cmath>
#include <ember/ember.hpp>

using namespace ember;

TEST(DType, PromotionMatchesNumPy) {
    EXPECT_EQ(promote_types(DType::int8, DType::uint8), DType::int16);
    EXPECT_EQ(promote_types(DType::int32, DType::uint32), DType::int64);
    EXPECT_EQ(promote_types(DType::int64, DType::uint64), DType::float64);
    EXPECT_EQ(promote_types(DType::int8, DType::float16), DType::float16);
    EXPECT_EQ(promote_types(DType::int16, DType::float16), DType::float32);
    EXPECT_EQ(promote_types(DType::int32, DType::float32), DType::float64);
    EXPECT_EQ(promote_types(DType::float16, DType::bfloat16), DType::float32);
    EXPECT_EQ(promote_types(DType::uint8, DType::bfloat16), DType::bfloat16);
    EXPECT_EQ(promote_types(DType::float64, DType::complex64), DType::complex128);
    EXPECT_EQ(promote_types(DType::bool_, DType::bool_), DType::bool_);
    EXPECT_EQ(promote_types(DType::bool_, DType::int8), DType::int8);
}

TEST(DType, PromotionIsSymmetricAndSafe) {
    for (int i = 0; i < num_dtypes; ++i)
        for (int j = 0; j < num_dtypes; ++j) {
            DType r = promote_types(DType(i), DType(j));
            EXPECT_EQ(r, promote_types(DType(j), DType(i)));
            EXPECT_TRUE(can_cast(DType(i), r));
            EXPECT_TRUE(can_cast(DType(j), r));
        }
}

TEST(DType, WeakScalars) {
    EXPECT_EQ(promote_weak(DType::int8, WeakKind::integer), DType::int8);
    EXPECT_EQ(promote_weak(DType::float32, WeakKind::floating), DType::float32);
    EXPECT_EQ(promote_weak(DType::int32, WeakKind::floating), DType::float64);
    EXPECT_EQ(promote_weak(DType::float32, WeakKind::complex), DType::complex64);
    EXPECT_EQ(promote_weak(DType::bool_, WeakKind::integer), DType::int64);
}

TEST(DType, NamesAndInfo) {
    EXPECT_EQ(dtype_from_name("float32"), DType::float32);
    EXPECT_EQ(dtype_from_name("f8"), DType::float64);
    EXPECT_THROW(dtype_from_name("float33"), TypeError);
    EXPECT_EQ(iinfo(DType::int8).min, -128);
    EXPECT_EQ(iinfo(DType::uint16).max, 65535u);
    EXPECT_DOUBLE_EQ(finfo(DType::float16).max, 65504.0);
    EXPECT_THROW(finfo(DType::int32), TypeError);
}

TEST(Half, RoundTripAndRounding) {
    for (uint32_t b = 0; b < 0x10000; ++b) {
        float16 h = float16::from_bits(uint16_t(b));
        float f = float(h);
        if (f != f) continue;
        EXPECT_EQ(float16(f).bits, h.bits) << b;
    }
    EXPECT_EQ(float(float16(65520.0f)), INFINITY);
    EXPECT_EQ(float(float16(1.0f + 1.0f / 4096)), 1.0f);  // ties to even
    EXPECT_EQ(float(bfloat16(1.00390625f)), 1.0f);        // tie -> even
    EXPECT_TRUE(std::isnan(float(bfloat16(NAN))));
}
