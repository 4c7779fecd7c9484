// Tests of elementwise ops, special values, reductions (incl. determinism and the threaded
// paths) and creation through the public C++ API.
#include <gtest/gtest.h>

#include <cmath>
#include <ember/ember.hpp>
#include <limits>
#include <vector>

#include "ops/reduce.hpp"

using namespace ember;

TEST(Ops, IntegerSpecialValues) {
    Array a = from_vector<int8_t>({-128, 7, -7, 5});
    Array b = from_vector<int8_t>({-1, 0, 2, -2});
    EXPECT_EQ(to_vector<int8_t>(floor_divide(a, b)), (std::vector<int8_t>{-128, 0, -4, -3}));
    EXPECT_EQ(to_vector<int8_t>(remainder(a, b)), (std::vector<int8_t>{0, 0, 1, -1}));
    EXPECT_EQ(to_vector<int8_t>(a + a)[0], 0);  // wraps
    Array s = from_vector<int32_t>({1, -8});
    Array k = from_vector<int32_t>({40, 40});
    EXPECT_EQ(to_vector<int32_t>(bitwise_left_shift(s, k)), (std::vector<int32_t>{0, 0}));
    EXPECT_EQ(to_vector<int32_t>(bitwise_right_shift(s, k)), (std::vector<int32_t>{0, -1}));
}

TEST(Ops, FloatSpecialValues) {
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = INFINITY;
    Array x = from_vector<double>({nan, -0.0, inf, -inf, 2.5, -2.5});
    auto r = to_vector<double>(round(x));
    EXPECT_TRUE(std::isnan(r[0]));
    EXPECT_TRUE(std::signbit(r[1]));
    EXPECT_EQ(r[4], 2.0);
    EXPECT_EQ(r[5], -2.0);
    auto m = to_vector<double>(maximum(x, 0.0));
    EXPECT_TRUE(std::isnan(m[0]));
    EXPECT_EQ(m[3], 0.0);
    auto fd = to_vector<double>(floor_divide(from_vector<double>({1.0, -1.0}), 0.0));
    EXPECT_EQ(fd[0], inf);
    EXPECT_EQ(fd[1], -inf);
    EXPECT_TRUE(to_vector<bool>(signbit(x))[1]);
}

TEST(Ops, WeakScalarsKeepDtype) {
    Array f = ones({4}, DType::float32);
    EXPECT_EQ((f * 2.5).dtype(), DType::float32);
    Array i = ones({4}, DType::int8);
    EXPECT_EQ((i + 1).dtype(), DType::int8);
    EXPECT_THROW(i + 1000, OverflowError);
    EXPECT_EQ(sqrt(i).dtype(), DType::float16);
    EXPECT_EQ(divide(i, i).dtype(), DType::float64);
    EXPECT_THROW(subtract(ones({2}, DType::bool_), ones({2}, DType::bool_)), TypeError);
}

TEST(Ops, InPlaceCasting) {
    Array a = ones({3}, DType::int8);
    a += 2;
    EXPECT_EQ(to_vector<int8_t>(a), (std::vector<int8_t>{3, 3, 3}));
    EXPECT_THROW(a += 1.5, TypeError);  // float64 -> int8 is not same_kind
    Array h = ones({3}, DType::float16);
    h *= 3.0;
    EXPECT_EQ(to_vector<float>(h.astype(DType::float32))[0], 3.0f);
}

TEST(Reduce, SumDtypesAndAxes) {
    Array a = arange(Scalar(int64_t(0)), Scalar(int64_t(24)), Scalar(int64_t(1)), DType::int8)
                  .reshape({2, 3, 4});
    EXPECT_EQ(sum(a).dtype(), DType::int64);
    EXPECT_EQ(sum(a).item<int64_t>(), 276);
    EXPECT_EQ(to_vector<int64_t>(sum(a, std::vector<int64_t>{0, 2})),
              (std::vector<int64_t>{60, 92, 124}));
    Array k = sum(a, std::vector<int64_t>{1}, true);
    EXPECT_EQ(k.shape(), (Shape{2, 1, 4}));
    EXPECT_EQ(max(a.astype(DType::float16)).item<float>(), 23.0f);
    EXPECT_EQ(to_vector<int64_t>(argmax(a, int64_t(2))), std::vector<int64_t>(6, 3));
    EXPECT_EQ(to_vector<int64_t>(argmin(a, int64_t(0))), std::vector<int64_t>(12, 0));
}

TEST(Reduce, LargeDeterministicAndAccurate) {
    const int64_t n = 3'000'001;
    Array x = linspace(Scalar(0.0), Scalar(1.0), n, DType::float32);
    Array s1 = sum(x), s2 = sum(x);
    EXPECT_EQ(s1.item<float>(), s2.item<float>());
    EXPECT_NEAR(s1.item<float>(), 1'500'000.5, 2.0);
    // Threaded axis reductions (both shapes of work) against the full sum.
}

TEST(Reduce, ThreadedAxes) {
    Array x =
        arange(Scalar(int64_t(0)), Scalar(int64_t(2000 * 1500)), Scalar(int64_t(1)), DType::float64)
            .reshape({2000, 1500});
    auto rows = to_vector<double>(sum(x, std::vector<int64_t>{1}));
    auto cols = to_vector<double>(sum(x, std::vector<int64_t>{0}));
    EXPECT_DOUBLE_EQ(rows[7], 1500.0 * 7 * 1500 + 1499.0 * 1500 / 2);
    EXPECT_DOUBLE_EQ(cols[7], 2000.0 * 7 + 1500.0 * (1999.0 * 2000 / 2));
    auto tmax = to_vector<double>(max(x.transpose(), std::vector<int64_t>{1}));
    EXPECT_DOUBLE_EQ(tmax[3], 1999.0 * 1500 + 3);
    EXPECT_THROW(max(zeros({0}, DType::float32)), ValueError);
    EXPECT_EQ(sum(zeros({0}, DType::float32)).item<float>(), 0.0f);
}

// Every row of the reduction table, through the front-end and the CPU backend, against a serial
// fold with the row's policy (a short run folds serially from the identity, so the order is the
// same); empty inputs give the row's identity or raise.
template <template <class, class, class> class P>
double fold_with(const std::vector<double>& v) {
    using Policy = P<double, double, double>;
    typename Policy::acc_t a = Policy::identity();
    for (size_t i = 0; i < v.size(); ++i)
        a = Policy::combine(a, Policy::load(v[i], (long long)i));
    return double(Policy::finish(a));
}

TEST(Reduce, EveryTableRowFoldsWithItsPolicy) {
    const std::vector<double> v{3, -1, 2.5, 7, -4, 7, 0.5};
    const Array x = from_vector<double>(v);
#define EMBER_CHECK_ROW(name, identity, acc, result, grad, flags, doc)                         \
    {                                                                                          \
        const Array r = reduce(ops::ReduceOp::name, x);                                        \
        EXPECT_EQ(r.dtype(),                                                                   \
                  ops::reduce_result_dtype(ops::ReduceOp::name, DType::float64, std::nullopt)) \
            << #name;                                                                          \
        EXPECT_EQ(r.astype(DType::float64).item<double>(), fold_with<ops::reduce_##name>(v))   \
            << #name;                                                                          \
    }
    EMBER_REDUCTIONS(EMBER_CHECK_ROW)
#undef EMBER_CHECK_ROW
    for (int i = 0; i < ops::num_reductions; ++i) {
        const ops::ReduceInfo& row = ops::reduce_infos[i];
        const Array e = zeros({0}, DType::float32);
        if (!row.has_identity()) {
            EXPECT_THROW(reduce(ops::ReduceOp(i), e), ValueError) << row.name;
            continue;
        }
        EXPECT_EQ(reduce(ops::ReduceOp(i), e).astype(DType::float64).item<double>(), row.identity)
            << row.name;
    }
    EXPECT_EQ(reduce(ops::ReduceOp::sum, x).item<double>(), sum(x).item<double>());
    EXPECT_THROW(reduce(ops::ReduceOp::max, x, std::nullopt, false, DType::float32), TypeError);
}
