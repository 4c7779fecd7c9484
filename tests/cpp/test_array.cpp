// Tests of Array views: reshape, transpose, slicing, broadcasting, copies and indexing.
#include <gtest/gtest.h>

#include <ember/ember.hpp>

using namespace ember;

namespace {
Array iota(int64_t n, DType t = DType::int64) {
    return arange(Scalar(int64_t(0)), Scalar(n), Scalar(int64_t(1)), t);
}
}  // namespace

TEST(Array, ViewsShareStorage) {
    Array a = iota(12).reshape({3, 4});
    Array t = a.transpose();
    EXPECT_EQ(t.shape(), (Shape{4, 3}));
    EXPECT_EQ(t.storage(), a.storage());
    Slice all;
    Index idx[] = {Index(1), Index(Slice{std::nullopt, std::nullopt, -1})};
    Array row = index(a, idx);
    EXPECT_EQ(to_vector<int64_t>(row), (std::vector<int64_t>{7, 6, 5, 4}));
    row.fill(Scalar(int64_t(0)));
    EXPECT_EQ(to_vector<int64_t>(sum(a, std::vector<int64_t>{1})),
              (std::vector<int64_t>{6, 0, 38}));
}

TEST(Array, ReshapeViewOrCopy) {
    Array a = iota(24).reshape({2, 3, 4});
    EXPECT_TRUE(a.reshape_view({6, 4}).has_value());
    EXPECT_TRUE(a.reshape_view({2, 12}).has_value());
    Array t = a.transpose();  // (4, 3, 2), not contiguous
    EXPECT_FALSE(t.reshape_view({24}).has_value());
    Array flat = t.reshape({24});
    EXPECT_TRUE(flat.is_contiguous());
    EXPECT_EQ(to_vector<int64_t>(flat)[1], 12);
    EXPECT_THROW(a.reshape({5, 5}), ValueError);
}

TEST(Array, BroadcastAndErrors) {
    Array a = iota(3).reshape({3, 1});
    Array b = iota(4);
    Array c = a + b;
    EXPECT_EQ(c.shape(), (Shape{3, 4}));
    EXPECT_EQ(to_vector<int64_t>(c)[5], 1 + 1);
    EXPECT_THROW(iota(3) + iota(4), ValueError);
    try {
        (void)(iota(3) + iota(4));
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("(3,) (4,)"), std::string::npos);
    }
}

TEST(Array, IndexErrors) {
    Array a = iota(5);
    Index bad[] = {Index(5)};
    EXPECT_THROW(index(a, bad), IndexError);
    Index too_many[] = {Index(0), Index(0)};
    EXPECT_THROW(index(a, too_many), IndexError);
    EXPECT_THROW(Array::empty({int64_t(1) << 40, int64_t(1) << 40}, DType::float32), ValueError);
    EXPECT_THROW(Array::empty({-1}, DType::float32), ValueError);
}

TEST(Array, AssignBroadcastsAndCasts) {
    Array a = zeros({2, 3}, DType::int32);
    Index idx[] = {Index(Slice{}), Index(Slice{int64_t(1), std::nullopt, std::nullopt})};
    index_assign(a, idx, Operand(from_vector<double>({1.9, 2.9})));
    EXPECT_EQ(to_vector<int32_t>(a), (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
}

TEST(Array, OverlappingAssignmentCopiesFirst) {
    Array a = iota(6);
    Index dst[] = {Index(Slice{int64_t(1), std::nullopt, std::nullopt})};
    Index src[] = {Index(Slice{std::nullopt, int64_t(5), std::nullopt})};
    index_assign(a, dst, Operand(index(a, src)));
    EXPECT_EQ(to_vector<int64_t>(a), (std::vector<int64_t>{0, 0, 1, 2, 3, 4}));
}

TEST(Array, LargeHostBlocksAreRecycled) {
    // A freed large block is reused by the next allocation of its size: its old contents are
    // still there (a fresh block from the kernel would be zero pages).
    void* first;
    {
        Array a = empty({int64_t(1) << 21}, DType::float32);  // 8 MiB
        a.fill(Scalar(int64_t(7)));
        first = a.data();
    }
    Array b = empty({int64_t(1) << 21}, DType::float32);
    EXPECT_EQ(b.data(), first);
    EXPECT_EQ(to_vector<float>(b)[12345], 7.0f);
}
