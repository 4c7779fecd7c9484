// The Philox4x32-10 generator against Random123's known answers, and the C++ Generator API.
#include <gtest/gtest.h>

#include <vector>

#include "ember/ember.hpp"
#include "ops/random.hpp"

using namespace ember;

TEST(Philox, KnownAnswers) {
    struct Case {
        rng::Block ctr;
        uint32_t k0, k1;
        rng::Block want;
    } cases[] = {
        {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
        {{{~0u, ~0u, ~0u, ~0u}}, ~0u, ~0u, {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
        {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
         0xa4093822,
         0x299f31d0,
         {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
    };
    for (const Case& c : cases) {
        const rng::Block got = rng::philox4x32_10(c.ctr, c.k0, c.k1);
        for (int i = 0; i < 4; ++i)
            EXPECT_EQ(got.v[i], c.want.v[i]) << i;
    }
}

TEST(Random, GeneratorReservesCountersAndRepeatsFromAState) {
    random::Generator g(42);
    Array a = g.uniform(0, 1, {5}, DType::float32, cpu);
    EXPECT_EQ(g.position(), 2u);  // 5 floats: two blocks of four
    Array b = g.integers(10, 5, {3}, DType::int16, cpu);
    EXPECT_EQ(g.position(), 5u);  // streamed: one per element
    random::Generator h(g.key(), 0);
    Array a2 = h.uniform(0, 1, {5}, DType::float32, cpu);
    const float* x = reinterpret_cast<const float*>(a.data());
    const float* y = reinterpret_cast<const float*>(a2.data());
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(x[i], y[i]);
        EXPECT_GE(x[i], 0.0f);
        EXPECT_LT(x[i], 1.0f);
    }
    const int16_t* v = reinterpret_cast<const int16_t*>(b.data());
    for (int i = 0; i < 3; ++i) {
        EXPECT_GE(v[i], 10);
        EXPECT_LT(v[i], 15);
    }
}

TEST(Random, BadDtypesAndParametersThrow) {
    random::Generator g(1);
    EXPECT_THROW(g.uniform(0, 1, {2}, DType::int32, cpu), TypeError);
    EXPECT_THROW(g.integers(0, 3, {2}, DType::float32, cpu), TypeError);
    EXPECT_THROW(g.bits({2}, DType::int64, cpu), TypeError);
    EXPECT_THROW(g.normal(0, -1, {2}, DType::float64, cpu), ValueError);
    EXPECT_THROW(g.binomial(-1, 0.5, {2}, DType::int64, cpu), ValueError);
}
