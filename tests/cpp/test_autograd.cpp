// Tests of the autograd engine through the C++ API: leaves and accumulation, grad(), broadcast
// reduction, create_graph, grad mode, version counters, the in-place and freed-graph errors, and a
// custom node.
#include <gtest/gtest.h>

#include <ember/ember.hpp>

using namespace ember;

namespace {

Array leaf(std::vector<double> v, Shape shape = {}) {
    Array a = from_vector<double>(v, shape, cpu);
    a.set_requires_grad(true);
    return a;
}

}  // namespace

TEST(Autograd, BackwardAccumulatesIntoLeaves) {
    Array x = leaf({1.0, 2.0, 3.0});
    Array y = sum(x * x);
    EXPECT_TRUE(y.requires_grad());
    EXPECT_FALSE(y.is_leaf());
    EXPECT_EQ(y.grad_fn()->name(), "SumBackward");
    y.backward();
    EXPECT_EQ(to_vector<double>(x.grad()), (std::vector<double>{2.0, 4.0, 6.0}));
    sum(x * 3.0).backward();
    EXPECT_EQ(to_vector<double>(x.grad()), (std::vector<double>{5.0, 7.0, 9.0}));
}

TEST(Autograd, GradWithBroadcastingAndMatmul) {
    Array a = leaf({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
    Array b = leaf({1.0, -1.0, 0.5}, {3});  // broadcast over rows
    Array w = leaf({1.0, 0.0, 2.0, 1.0, 0.0, 3.0}, {3, 2});
    Array out = sum(matmul(a * b, w));
    const Array outs[1] = {out};
    const Array ins[3] = {a, b, w};
    std::vector<Array> g = autograd::grad(outs, ins);
    ASSERT_EQ(g.size(), 3u);
    EXPECT_EQ(g[1].shape(), (Shape{3}));
    // d/db_j = sum_i a_ij * sum_k w_jk
    EXPECT_EQ(to_vector<double>(g[1]), (std::vector<double>{5.0 * 1, 7.0 * 3, 9.0 * 3}));
    EXPECT_EQ(to_vector<double>(g[2]), (std::vector<double>{5, 5, -7, -7, 4.5, 4.5}));
    EXPECT_FALSE(a.grad().defined());  // grad() does not accumulate
}

TEST(Autograd, CreateGraphGivesSecondDerivatives) {
    Array x = leaf({2.0});
    Array y = sum(x * x * x);
    const Array outs[1] = {y};
    const Array ins[1] = {x};
    std::vector<Array> g = autograd::grad(outs, ins, {}, std::nullopt, true);
    EXPECT_TRUE(g[0].requires_grad());
    EXPECT_DOUBLE_EQ(to_vector<double>(g[0])[0], 12.0);
    const Array outs2[1] = {sum(g[0])};
    std::vector<Array> h = autograd::grad(outs2, ins);
    EXPECT_DOUBLE_EQ(to_vector<double>(h[0])[0], 12.0);
}

TEST(Autograd, NoGradGuard) {
    Array x = leaf({1.0});
    {
        autograd::NoGradGuard ng;
        EXPECT_FALSE(autograd::is_grad_enabled());
        EXPECT_FALSE((x * 2.0).requires_grad());
        x += 1.0;  // allowed on a leaf without grad mode
    }
    EXPECT_TRUE(autograd::is_grad_enabled());
    EXPECT_TRUE((x * 2.0).requires_grad());
}

TEST(Autograd, InPlaceErrors) {
    Array x = leaf({1.0, 2.0});
    EXPECT_THROW(x += 1.0, Error);
    Array y = x * 1.0;
    Array z = sum(exp(y) * y);
    const uint64_t v = y.version();
    y += 1.0;
    EXPECT_EQ(y.version(), v + 1);
    try {
        z.backward();
        FAIL() << "expected the version error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("modified by an in-place operation"),
                  std::string::npos);
    }
}

TEST(Autograd, FreedGraph) {
    Array x = leaf({1.0, 2.0});
    Array y = sum(exp(x));
    y.backward();
    EXPECT_THROW(y.backward(), Error);
    Array z = sum(exp(x));
    z.backward(Array(), true);
    z.backward();
    EXPECT_NEAR(to_vector<double>(x.grad())[0], 3 * std::exp(1.0), 1e-12);
}

TEST(Autograd, ImplicitGradientOnlyForScalars) {
    Array x = leaf({1.0, 2.0});
    EXPECT_THROW((x * 2.0).backward(), Error);
    EXPECT_THROW(from_vector<int64_t>({1}).set_requires_grad(true), Error);
}

TEST(Autograd, CustomNode) {
    // y = 2x with a hand-written node, then the engine reduces and casts as for built-in ones.
    struct Twice final : autograd::Node {
        std::string name() const override { return "TwiceBackward"; }
        std::vector<Array> apply(std::vector<Array>&& g) override { return {g[0] * 2.0}; }
    };
    Array x = leaf({1.0, 2.0});
    Array y = x.detach() * 2.0;
    auto node = std::make_shared<Twice>();
    const Array* ins[1] = {&x};
    autograd::collect_next_edges(*node, ins);
    Array* outs[1] = {&y};
    autograd::set_history(outs, node);
    sum(y * y).backward();
    EXPECT_EQ(to_vector<double>(x.grad()), (std::vector<double>{8.0, 16.0}));
}
