// The nodes of the fused row ops (softmax, log_softmax, cross_entropy, layer_norm): backward runs
// the backward kernels through the core's front-ends (src/core/rows.hpp) and, under
// create_graph, the same formulas in ember ops (differentiable again).
#include <memory>
#include <string>
#include <vector>

#include "autograd/internal.hpp"
#include "core/rows.hpp"
#include "ember/nn.hpp"
#include "ember/ops.hpp"

namespace ember::autograd {

namespace {

using nn::detail::CrossEntropySaved;
using nn::detail::Rows;

class SoftmaxNode final : public Node {
public:
    SoftmaxNode(Rows L, bool log) : L_(std::move(L)), log_(log) {}
    std::string name() const override { return log_ ? "LogSoftmaxBackward" : "SoftmaxBackward"; }
    std::string op_name() const override {
        return log_ ? "ember.nn.log_softmax" : "ember.nn.softmax";
    }
    std::vector<Array> apply(std::vector<Array>&& grads) override {
        const Array yv = y.unpack(*this);
        const Array g = grads[0].astype(yv.dtype(), false);
        if (is_grad_enabled()) {
            // create_graph: the same formula in ember ops (y carries this node's history)
            const Axes ax = std::vector<int64_t>{L_.axis};
            if (log_) return {g - exp(yv) * ember::sum(g, ax, true)};
            return {yv * (g - ember::sum(g * yv, ax, true))};
        }
        return {nn::detail::softmax_backward(yv, g, L_, log_)};
    }
    void release_saved() override {
        if (y.defined()) freed = true;
        y.reset();
    }
    SavedArray y;

private:
    Rows L_;
    bool log_;
};

class CrossEntropyNode final : public Node {
public:
    CrossEntropyNode(Rows L, CrossEntropySaved s) : L_(std::move(L)), s_(std::move(s)) {}
    std::string name() const override { return "CrossEntropyBackward"; }
    std::string op_name() const override { return "ember.nn.cross_entropy"; }
    std::vector<Array> apply(std::vector<Array>&& grads) override {
        const Array xv = x.unpack(*this);
        const DType acc = nn::detail::acc_dtype(xv.dtype());
        const Array g = grads[0].astype(acc, false);
        if (is_grad_enabled()) return {composed(xv, g)};
        return {nn::detail::cross_entropy_backward(xv, g, L_, s_)};
    }
    void release_saved() override {
        if (x.defined()) freed = true;
        x.reset();
        s_.target = s_.weight = s_.row_max = s_.logsum = s_.wt = Array();
    }

    SavedArray x;

private:
    // d loss / dx = g ((1 - ls) w[t] (p - onehot) + ls / C (W p - w)), p = softmax(x): in ember
    // ops, differentiable again.
    Array composed(const Array& xv, const Array& g) const {
        const DType acc = nn::detail::acc_dtype(xv.dtype());
        const int64_t C = L_.n;
        const double label_smoothing = s_.label_smoothing;
        Array xm = L_.last() ? xv : xv.permute(L_.perm);  // (..., C)
        xm = xm.astype(acc, false);
        const Array p = nn::softmax(xm, -1);
        const Shape rshape = xm.shape();
        Shape tsh(rshape.begin(), rshape.end() - 1);
        const Array t = s_.target.reshape(tsh).expand_dims(-1);
        const Array classes =
            arange(Scalar(int64_t(0)), Scalar(C), Scalar(int64_t(1)), DType::int64, xv.device());
        const Array onehot = equal(t, classes).astype(acc);
        const Array valid = logical_and(not_equal(t, s_.ignore_index),
                                        logical_and(greater_equal(t, int64_t(0)), less(t, C)));
        const Array wr = s_.wt.reshape(tsh).expand_dims(-1);
        const Array gm = g.reshape(tsh).expand_dims(-1);
        Array d = (p - onehot) * (wr * (1.0 - label_smoothing));
        if (label_smoothing != 0.0) {
            Array w = s_.weight.defined() ? s_.weight.astype(acc) : ones({C}, acc, xv.device());
            const Array W = ember::sum(w);
            d = d + (p * W - w) * (label_smoothing / double(C));
        }
        Array dx = where(valid, d * gm, 0.0).astype(xv.dtype());
        return L_.from_rows(dx);
    }

    Rows L_;
    CrossEntropySaved s_;  // contiguous rows; not differentiated
};

class LayerNormNode final : public Node {
public:
    LayerNormNode(Shape xshape, int k, double eps) : xshape_(std::move(xshape)), k_(k), eps_(eps) {}
    std::string name() const override { return "LayerNormBackward"; }
    std::string op_name() const override { return "ember.nn.layer_norm"; }
    std::vector<Array> apply(std::vector<Array>&& grads) override {
        const Array xv = x.unpack(*this);
        const Array gv = gamma.defined() ? gamma.unpack(*this) : Array();
        const Array g = grads[0].astype(xv.dtype(), false);
        if (is_grad_enabled()) return composed(xv, gv, g);
        const bool want[3] = {next[0].valid(), next.size() > 1 && next[1].valid(),
                              next.size() > 2 && next[2].valid()};
        return nn::detail::layer_norm_backward(xv, gv, g, mean, rstd, k_, want);
    }
    void release_saved() override {
        if (x.defined()) freed = true;
        x.reset();
        gamma.reset();
        mean = rstd = Array();
    }
    SavedArray x, gamma;
    Array mean, rstd;  // per row, acc dtype

private:
    // The backward in ember ops (statistics recomputed from x, so it is differentiable again).
    std::vector<Array> composed(const Array& xv, const Array& gv, const Array& g) const {
        const DType acc = nn::detail::acc_dtype(xv.dtype());
        const int nd = int(xshape_.size());
        std::vector<int64_t> ax, lead;
        for (int d = 0; d < nd; ++d)
            (d >= nd - k_ ? ax : lead).push_back(d);
        const Array xa = xv.astype(acc, false), ga = g.astype(acc, false);
        const Array d = xa - ember::mean(xa, ax, true);
        const Array rs = 1.0 / sqrt(ember::mean(d * d, ax, true) + eps_);
        const Array xh = d * rs;
        const Array dxh = gv.defined() ? ga * gv.astype(acc, false) : ga;
        std::vector<Array> r(3);
        if (next[0].valid())
            r[0] = (rs * (dxh - ember::mean(dxh, ax, true) - xh * ember::mean(dxh * xh, ax, true)))
                       .astype(xv.dtype());
        if (next.size() > 1 && next[1].valid()) r[1] = ember::sum(ga * xh, lead).astype(xv.dtype());
        if (next.size() > 2 && next[2].valid()) r[2] = ember::sum(ga, lead).astype(xv.dtype());
        return r;
    }

    Shape xshape_;
    int k_;
    double eps_;
};

}  // namespace

namespace detail {

void on_softmax(const Array& x, Array& y, const Rows& L, bool log) {
    const Array* ins[1] = {&x};
    if (!any_requires_grad(ins)) return;
    auto node = std::make_shared<SoftmaxNode>(L, log);
    collect_next_edges(*node, ins);
    attach(node, y);
    node->y = SavedArray(y, true, 0);
}

void on_cross_entropy(const Array& x, Array& loss, const Rows& L, CrossEntropySaved s) {
    const Array* ins[1] = {&x};
    if (!any_requires_grad(ins)) return;
    auto node = std::make_shared<CrossEntropyNode>(L, std::move(s));
    collect_next_edges(*node, ins);
    attach(node, loss);
    node->x = SavedArray(x, false);
}

void on_layer_norm(const Array& x, const Array& gamma, const Array& beta, Array& y,
                   const Array& mean, const Array& rstd, int k, double eps) {
    const Array* ins[3] = {&x, gamma.defined() ? &gamma : nullptr,
                           beta.defined() ? &beta : nullptr};
    if (!any_requires_grad(ins)) return;
    auto node = std::make_shared<LayerNormNode>(x.shape(), k, eps);
    collect_next_edges(*node, ins);
    attach(node, y);
    node->x = SavedArray(x, false);
    if (gamma.defined()) node->gamma = SavedArray(gamma, false);
    node->mean = mean;
    node->rstd = rstd;
}

}  // namespace detail

}  // namespace ember::autograd
