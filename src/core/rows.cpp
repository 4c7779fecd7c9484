// Front-ends of the fused row ops (ember/nn.hpp): checks, the move of the reduced axis to a
// contiguous last axis, the backend's rows() call, and the autograd nodes whose backward runs
// the backward kernels (and, under create_graph, the same formulas in ember ops).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "ember/autograd.hpp"
#include "ember/error.hpp"
#include "ember/nn.hpp"
#include "ember/ops.hpp"

namespace ember::nn {

namespace {

using autograd::Node;
using autograd::NoGradGuard;
using autograd::SavedArray;
using backend::RowsCall;
using backend::RowsOp;

std::string dtype_str(DType t) { return std::string(name(t)); }

void check_float(const Array& x, const std::string& who, const char* what = "input") {
    if (!x.defined()) throw ValueError(who + ": " + what + " is undefined");
    if (!is_floating(x.dtype()))
        throw TypeError(who + ": " + what + " must have a floating-point dtype, got " +
                        dtype_str(x.dtype()));
}

// An array viewed as contiguous rows along `axis`: the permutation that moves it last and back.
struct Rows {
    int axis = 0, ndim = 0;
    std::vector<int64_t> perm, inv;
    int64_t rows = 0, n = 0;

    Rows(const Shape& shape, int ax) : axis(ax), ndim(int(shape.size())) {
        for (int d = 0; d < ndim; ++d)
            if (d != axis) perm.push_back(d);
        perm.push_back(axis);
        inv.assign(size_t(ndim), 0);
        for (int d = 0; d < ndim; ++d)
            inv[size_t(perm[size_t(d)])] = d;
        n = shape[size_t(axis)];
        rows = n ? numel(shape) / n : 0;
        if (!n) {
            rows = 1;
            for (int d = 0; d < ndim; ++d)
                if (d != axis) rows *= shape[size_t(d)];
        }
    }
    bool last() const { return axis == ndim - 1; }
    // a's elements as a C-contiguous (..., n) array with the axis last (a copy only when needed).
    Array to_rows(const Array& a) const {
        return last() ? a.contiguous() : a.permute(perm).contiguous();
    }
    // The inverse of to_rows: a view in the original layout.
    Array from_rows(const Array& r) const { return last() ? r : r.permute(inv); }
};

void run(RowsCall& c, Device dev, const char* who) {
    c.device = dev.index;
    backend::of(dev, who).rows(c);
}

// ---- softmax / log_softmax ---------------------------------------------------------------------

Array softmax_rows(const Array& x, const Rows& L, bool log, const char* who) {
    const Array xr = L.to_rows(x);
    Array out = Array::empty(xr.shape(), x.dtype(), x.device());
    if (xr.size()) {
        RowsCall c;
        c.op = log ? RowsOp::log_softmax : RowsOp::softmax;
        c.dtype = x.dtype();
        c.rows = L.rows;
        c.n = L.n;
        c.x = xr.data();
        c.out = out.data();
        run(c, x.device(), who);
    }
    return L.from_rows(out);
}

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
        if (autograd::is_grad_enabled()) {
            // create_graph: the same formula in ember ops (y carries this node's history)
            const Axes ax = std::vector<int64_t>{L_.axis};
            if (log_) return {g - exp(yv) * ember::sum(g, ax, true)};
            return {yv * (g - ember::sum(g * yv, ax, true))};
        }
        const Array yr = L_.to_rows(yv), gr = L_.to_rows(g);
        Array dx = Array::empty(yr.shape(), yv.dtype(), yv.device());
        if (yr.size()) {
            RowsCall c;
            c.op = log_ ? RowsOp::log_softmax_backward : RowsOp::softmax_backward;
            c.dtype = yv.dtype();
            c.rows = L_.rows;
            c.n = L_.n;
            c.y = yr.data();
            c.dy = gr.data();
            c.out = dx.data();
            run(c, yv.device(), op_name().c_str());
        }
        return {L_.from_rows(dx)};
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

Array softmax_family(const Array& x, int64_t axis, bool log) {
    const char* who = log ? "ember.nn.log_softmax" : "ember.nn.softmax";
    check_float(x, who);
    if (x.ndim() == 0) return softmax_family(x.reshape({1}), 0, log).reshape({});
    const Rows L(x.shape(), normalize_axis(axis, x.ndim(), who));
    Array y;
    {
        NoGradGuard ng;
        y = softmax_rows(x.detach(), L, log, who);
    }
    const Array* ins[1] = {&x};
    if (!autograd::any_requires_grad(ins)) return y;
    auto node = std::make_shared<SoftmaxNode>(L, log);
    autograd::collect_next_edges(*node, ins);
    Array* outs[1] = {&y};
    autograd::set_history(outs, node);
    node->y = SavedArray(y, true, 0);
    return y;
}

// ---- cross_entropy ---------------------------------------------------------------------------

class CrossEntropyNode final : public Node {
public:
    CrossEntropyNode(Rows L, Shape tshape) : L_(std::move(L)), tshape_(std::move(tshape)) {}
    std::string name() const override { return "CrossEntropyBackward"; }
    std::string op_name() const override { return "ember.nn.cross_entropy"; }
    std::vector<Array> apply(std::vector<Array>&& grads) override {
        const Array xv = x.unpack(*this);
        const DType acc = backend::acc_dtype(xv.dtype());
        const Array g = grads[0].astype(acc, false);
        if (autograd::is_grad_enabled()) return {composed(xv, g)};
        const Array xr = L_.to_rows(xv), gr = g.contiguous();
        Array dx = Array::empty(xr.shape(), xv.dtype(), xv.device());
        if (xr.size()) {
            RowsCall c;
            c.op = RowsOp::cross_entropy_backward;
            c.dtype = xv.dtype();
            c.rows = L_.rows;
            c.n = L_.n;
            c.x = xr.data();
            c.out = dx.data();
            c.target = static_cast<const int64_t*>(static_cast<const void*>(target.data()));
            c.weight = weight.defined() ? weight.data() : nullptr;
            c.ignore_index = ignore_index;
            c.label_smoothing = label_smoothing;
            c.row_max = row_max.data();
            c.logsum = logsum.data();
            c.dloss = gr.data();
            run(c, xv.device(), "ember.nn.cross_entropy (backward)");
        }
        return {L_.from_rows(dx)};
    }
    void release_saved() override {
        if (x.defined()) freed = true;
        x.reset();
        target = weight = row_max = logsum = wt = Array();
    }

    SavedArray x;
    Array target, weight, row_max, logsum, wt;  // contiguous rows; not differentiated
    int64_t ignore_index = -100;
    double label_smoothing = 0.0;

private:
    // d loss / dx = g ((1 - ls) w[t] (p - onehot) + ls / C (W p - w)), p = softmax(x): in ember
    // ops, differentiable again.
    Array composed(const Array& xv, const Array& g) const {
        const DType acc = backend::acc_dtype(xv.dtype());
        const int64_t C = L_.n;
        Array xm = L_.last() ? xv : xv.permute(L_.perm);  // (..., C)
        xm = xm.astype(acc, false);
        const Array p = softmax(xm, -1);
        const Shape rshape = xm.shape();
        Shape tsh(rshape.begin(), rshape.end() - 1);
        const Array t = target.reshape(tsh).expand_dims(-1);
        const Array classes =
            arange(Scalar(int64_t(0)), Scalar(C), Scalar(int64_t(1)), DType::int64, xv.device());
        const Array onehot = equal(t, classes).astype(acc);
        const Array valid = logical_and(not_equal(t, ignore_index),
                                        logical_and(greater_equal(t, int64_t(0)), less(t, C)));
        const Array wr = wt.reshape(tsh).expand_dims(-1);
        const Array gm = g.reshape(tsh).expand_dims(-1);
        Array d = (p - onehot) * (wr * (1.0 - label_smoothing));
        if (label_smoothing != 0.0) {
            Array w = weight.defined() ? weight.astype(acc) : ones({C}, acc, xv.device());
            const Array W = ember::sum(w);
            d = d + (p * W - w) * (label_smoothing / double(C));
        }
        Array dx = where(valid, d * gm, 0.0).astype(xv.dtype());
        return L_.from_rows(dx);
    }

    Rows L_;
    Shape tshape_;
};

}  // namespace

Array softmax(const Array& x, int64_t axis) { return softmax_family(x, axis, false); }
Array log_softmax(const Array& x, int64_t axis) { return softmax_family(x, axis, true); }

Array cross_entropy(const Array& x, const Array& target, const Array& weight, int64_t ignore_index,
                    double label_smoothing, Reduction reduction) {
    const char* who = "ember.nn.cross_entropy";
    check_float(x, who);
    if (!target.defined()) throw ValueError(std::string(who) + ": target is undefined");
    if (x.ndim() == 0)
        throw ValueError(std::string(who) +
                         ": input must be at least 1-d (C,) or (N, C, *), got a 0-d array");
    if (!is_integer(target.dtype()))
        throw TypeError(std::string(who) + ": target must have an integer dtype, got " +
                        dtype_str(target.dtype()));
    if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0))
        throw ValueError(std::string(who) + ": label_smoothing must be in [0, 1], got " +
                         std::to_string(label_smoothing));
    const int class_axis = x.ndim() == 1 ? 0 : 1;
    const Rows L(x.shape(), class_axis);
    const int64_t C = L.n;
    Shape tshape;
    for (int d = 0; d < x.ndim(); ++d)
        if (d != class_axis) tshape.push_back(x.shape()[size_t(d)]);
    if (!(target.shape() == tshape))
        throw ValueError(std::string(who) + ": target shape " + shape_str(target.shape()) +
                         " does not match the input shape " + shape_str(x.shape()) + " (expected " +
                         shape_str(tshape) + ")");
    if (target.device() != x.device())
        throw ValueError(std::string(who) + ": target is on " + target.device().str() +
                         " but input is on " + x.device().str());
    Array w;
    if (weight.defined()) {
        if (!(weight.shape() == Shape{C}))
            throw ValueError(std::string(who) + ": weight must have shape (" + std::to_string(C) +
                             ",), one value per class, got " + shape_str(weight.shape()));
        if (weight.device() != x.device())
            throw ValueError(std::string(who) + ": weight is on " + weight.device().str() +
                             " but input is on " + x.device().str());
        NoGradGuard ng;
        w = weight.detach().astype(x.dtype(), false).contiguous();
    }
    const DType acc = backend::acc_dtype(x.dtype());
    Array t, loss, wt, row_max, logsum;
    {
        NoGradGuard ng;
        t = target.detach().astype(DType::int64, false).contiguous();
        if (x.device().type == DeviceType::cpu && t.size()) {
            const int64_t* tp = static_cast<const int64_t*>(static_cast<const void*>(t.data()));
            for (int64_t i = 0; i < t.size(); ++i)
                if (tp[i] != ignore_index && (tp[i] < 0 || tp[i] >= C))
                    throw IndexError(std::string(who) + ": target " + std::to_string(tp[i]) +
                                     " is out of bounds for " + std::to_string(C) + " classes");
        }
        const Array xr = L.to_rows(x.detach());
        loss = Array::empty(tshape, acc, x.device());
        wt = Array::empty(tshape, acc, x.device());
        row_max = Array::empty(tshape, acc, x.device());
        logsum = Array::empty(tshape, acc, x.device());
        if (L.rows) {
            RowsCall c;
            c.op = RowsOp::cross_entropy;
            c.dtype = x.dtype();
            c.rows = L.rows;
            c.n = C;
            c.x = xr.data();
            c.target = static_cast<const int64_t*>(static_cast<const void*>(t.data()));
            c.weight = w.defined() ? w.data() : nullptr;
            c.ignore_index = ignore_index;
            c.label_smoothing = label_smoothing;
            c.loss = loss.data();
            c.weight_out = wt.data();
            c.row_max = row_max.data();
            c.logsum = logsum.data();
            run(c, x.device(), who);
        }
    }
    const Array* ins[1] = {&x};
    if (autograd::any_requires_grad(ins)) {
        auto node = std::make_shared<CrossEntropyNode>(L, tshape);
        autograd::collect_next_edges(*node, ins);
        Array* outs[1] = {&loss};
        autograd::set_history(outs, node);
        node->x = SavedArray(x, false);
        node->target = t;
        node->weight = w;
        node->row_max = row_max;
        node->logsum = logsum;
        node->wt = wt;
        node->ignore_index = ignore_index;
        node->label_smoothing = label_smoothing;
    }
    Array r;
    switch (reduction) {
        case Reduction::none:
            r = loss;
            break;
        case Reduction::sum:
            r = ember::sum(loss);
            break;
        case Reduction::mean:
            r = ember::sum(loss) / ember::sum(wt);
            break;
    }
    return r.astype(x.dtype(), false);
}

// ---- layer_norm ------------------------------------------------------------------------------

namespace {

class LayerNormNode final : public Node {
public:
    LayerNormNode(Shape xshape, int k, double eps) : xshape_(std::move(xshape)), k_(k), eps_(eps) {}
    std::string name() const override { return "LayerNormBackward"; }
    std::string op_name() const override { return "ember.nn.layer_norm"; }
    std::vector<Array> apply(std::vector<Array>&& grads) override {
        const Array xv = x.unpack(*this);
        const Array gv = gamma.defined() ? gamma.unpack(*this) : Array();
        const Array g = grads[0].astype(xv.dtype(), false);
        if (autograd::is_grad_enabled()) return composed(xv, gv, g);
        const int64_t n = numel(Shape(xshape_.end() - k_, xshape_.end()));
        const int64_t rows = n ? xv.size() / n : 0;
        const Array xr = xv.contiguous(), gr = g.contiguous();
        const Array gc = gv.defined() ? gv.contiguous() : Array();
        const DType acc = backend::acc_dtype(xv.dtype());
        const bool want_x = next[0].valid(), want_g = next.size() > 1 && next[1].valid(),
                   want_b = next.size() > 2 && next[2].valid();
        const int64_t parts = std::clamp<int64_t>((rows + 31) / 32, 1, 256);
        Array dx = want_x ? Array::empty(xshape_, xv.dtype(), xv.device()) : Array();
        Array pg = want_g ? Array::empty({parts, n}, acc, xv.device()) : Array();
        Array pb = want_b ? Array::empty({parts, n}, acc, xv.device()) : Array();
        if (xv.size() || want_g || want_b) {
            RowsCall c;
            c.op = RowsOp::layer_norm_backward;
            c.dtype = xv.dtype();
            c.rows = rows;
            c.n = n;
            c.x = xr.data();
            c.dy = gr.data();
            c.out = want_x ? dx.data() : nullptr;
            c.gamma = gc.defined() ? gc.data() : nullptr;
            c.mean = mean.data();
            c.rstd = rstd.data();
            c.dgamma = want_g ? pg.data() : nullptr;
            c.dbeta = want_b ? pb.data() : nullptr;
            c.parts = parts;
            run(c, xv.device(), "ember.nn.layer_norm (backward)");
        }
        const Shape ns(xshape_.end() - k_, xshape_.end());
        std::vector<Array> r(3);
        r[0] = dx;
        if (want_g) r[1] = ember::sum(pg, std::vector<int64_t>{0}).astype(xv.dtype()).reshape(ns);
        if (want_b) r[2] = ember::sum(pb, std::vector<int64_t>{0}).astype(xv.dtype()).reshape(ns);
        return r;
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
        const DType acc = backend::acc_dtype(xv.dtype());
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

Array layer_norm(const Array& x, int normalized_ndim, const Array& weight, const Array& bias,
                 double eps) {
    const char* who = "ember.nn.layer_norm";
    check_float(x, who);
    const int k = normalized_ndim;
    if (k < 1 || k > x.ndim())
        throw ValueError(std::string(who) + ": normalized_ndim must be in [1, " +
                         std::to_string(x.ndim()) + "] for input shape " + shape_str(x.shape()) +
                         ", got " + std::to_string(k));
    const Shape ns(x.shape().end() - k, x.shape().end());
    auto param = [&](const Array& p, const char* what) {
        if (!p.defined()) return Array();
        if (!(p.shape() == ns))
            throw ValueError(std::string(who) + ": " + what + " shape " + shape_str(p.shape()) +
                             " differs from normalized_shape " + shape_str(ns));
        if (p.device() != x.device())
            throw ValueError(std::string(who) + ": " + what + " is on " + p.device().str() +
                             " but input is on " + x.device().str());
        if (!is_floating(p.dtype()))
            throw TypeError(std::string(who) + ": " + what +
                            " must have a floating-point dtype, got " + dtype_str(p.dtype()));
        return p.astype(x.dtype(), false);  // recorded: its gradient flows back through the cast
    };
    const Array gw = param(weight, "weight"), gb = param(bias, "bias");
    const int64_t n = numel(ns);
    const int64_t rows = n ? x.size() / n : 0;
    const DType acc = backend::acc_dtype(x.dtype());
    Shape lead(x.shape().begin(), x.shape().end() - k);
    Array y, mean, rstd;
    {
        NoGradGuard ng;
        const Array xr = x.detach().contiguous();
        const Array wc = gw.defined() ? gw.detach().contiguous() : Array();
        const Array bc = gb.defined() ? gb.detach().contiguous() : Array();
        y = Array::empty(x.shape(), x.dtype(), x.device());
        mean = Array::empty(lead, acc, x.device());
        rstd = Array::empty(lead, acc, x.device());
        if (rows) {
            RowsCall c;
            c.op = RowsOp::layer_norm;
            c.dtype = x.dtype();
            c.rows = rows;
            c.n = n;
            c.x = xr.data();
            c.out = y.data();
            c.gamma = wc.defined() ? wc.data() : nullptr;
            c.beta = bc.defined() ? bc.data() : nullptr;
            c.eps = eps;
            c.mean = mean.data();
            c.rstd = rstd.data();
            run(c, x.device(), who);
        }
    }
    const Array* ins[3] = {&x, gw.defined() ? &gw : nullptr, gb.defined() ? &gb : nullptr};
    if (!autograd::any_requires_grad(ins)) return y;
    auto node = std::make_shared<LayerNormNode>(x.shape(), k, eps);
    autograd::collect_next_edges(*node, ins);
    Array* outs[1] = {&y};
    autograd::set_history(outs, node);
    node->x = SavedArray(x, false);
    if (gw.defined()) node->gamma = SavedArray(gw, false);
    node->mean = mean;
    node->rstd = rstd;
    return y;
}

}  // namespace ember::nn
