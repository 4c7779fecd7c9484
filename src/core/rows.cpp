// Front-ends of the fused row ops (ember/nn.hpp): checks, the move of the reduced axis to a
// contiguous last axis and the backend's rows() call, forward and backward; the autograd nodes
// that call the backward ones are autograd's (src/autograd/rows.cpp).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "core/record.hpp"
#include "core/rows.hpp"
#include "ember/autograd.hpp"
#include "ember/error.hpp"
#include "ember/nn.hpp"
#include "ember/ops.hpp"

namespace ember::nn {

namespace detail {

Rows::Rows(const Shape& shape, int ax) : axis(ax), ndim(int(shape.size())) {
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

DType acc_dtype(DType t) { return backend::acc_dtype(t); }

}  // namespace detail

namespace {

using autograd::NoGradGuard;
using backend::RowsCall;
using backend::RowsOp;
using detail::CrossEntropySaved;
using detail::Rows;

std::string dtype_str(DType t) { return std::string(name(t)); }

void check_float(const Array& x, const std::string& who, const char* what = "input") {
    if (!x.defined()) throw ValueError(who + ": " + what + " is undefined");
    if (!is_floating(x.dtype()))
        throw TypeError(who + ": " + what + " must have a floating-point dtype, got " +
                        dtype_str(x.dtype()));
}

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
    autograd::detail::on_softmax(x, y, L, log);
    return y;
}

// ---- cross_entropy ---------------------------------------------------------------------------

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
    autograd::detail::on_cross_entropy(
        x, loss, L, CrossEntropySaved{t, w, row_max, logsum, wt, ignore_index, label_smoothing});
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
    autograd::detail::on_layer_norm(x, gw, gb, y, mean, rstd, k, eps);
    return y;
}

// ---- the backward kernels' front-ends (autograd's nodes call them) -----------------------------

namespace detail {

Array softmax_backward(const Array& y, const Array& g, const Rows& L, bool log) {
    const Array yr = L.to_rows(y), gr = L.to_rows(g);
    Array dx = Array::empty(yr.shape(), y.dtype(), y.device());
    if (yr.size()) {
        RowsCall c;
        c.op = log ? RowsOp::log_softmax_backward : RowsOp::softmax_backward;
        c.dtype = y.dtype();
        c.rows = L.rows;
        c.n = L.n;
        c.y = yr.data();
        c.dy = gr.data();
        c.out = dx.data();
        run(c, y.device(), log ? "ember.nn.log_softmax" : "ember.nn.softmax");
    }
    return L.from_rows(dx);
}

Array cross_entropy_backward(const Array& x, const Array& g, const Rows& L,
                             const CrossEntropySaved& s) {
    const Array xr = L.to_rows(x), gr = g.contiguous();
    Array dx = Array::empty(xr.shape(), x.dtype(), x.device());
    if (xr.size()) {
        RowsCall c;
        c.op = RowsOp::cross_entropy_backward;
        c.dtype = x.dtype();
        c.rows = L.rows;
        c.n = L.n;
        c.x = xr.data();
        c.out = dx.data();
        c.target = static_cast<const int64_t*>(static_cast<const void*>(s.target.data()));
        c.weight = s.weight.defined() ? s.weight.data() : nullptr;
        c.ignore_index = s.ignore_index;
        c.label_smoothing = s.label_smoothing;
        c.row_max = s.row_max.data();
        c.logsum = s.logsum.data();
        c.dloss = gr.data();
        run(c, x.device(), "ember.nn.cross_entropy (backward)");
    }
    return L.from_rows(dx);
}

std::vector<Array> layer_norm_backward(const Array& x, const Array& gamma, const Array& g,
                                       const Array& mean, const Array& rstd, int k,
                                       const bool want[3]) {
    const Shape& xshape = x.shape();
    const int64_t n = numel(Shape(xshape.end() - k, xshape.end()));
    const int64_t rows = n ? x.size() / n : 0;
    const Array xr = x.contiguous(), gr = g.contiguous();
    const Array gc = gamma.defined() ? gamma.contiguous() : Array();
    const DType acc = backend::acc_dtype(x.dtype());
    const int64_t parts = std::clamp<int64_t>((rows + 31) / 32, 1, 256);
    Array dx = want[0] ? Array::empty(xshape, x.dtype(), x.device()) : Array();
    Array pg = want[1] ? Array::empty({parts, n}, acc, x.device()) : Array();
    Array pb = want[2] ? Array::empty({parts, n}, acc, x.device()) : Array();
    if (x.size() || want[1] || want[2]) {
        RowsCall c;
        c.op = RowsOp::layer_norm_backward;
        c.dtype = x.dtype();
        c.rows = rows;
        c.n = n;
        c.x = xr.data();
        c.dy = gr.data();
        c.out = want[0] ? dx.data() : nullptr;
        c.gamma = gc.defined() ? gc.data() : nullptr;
        c.mean = mean.data();
        c.rstd = rstd.data();
        c.dgamma = want[1] ? pg.data() : nullptr;
        c.dbeta = want[2] ? pb.data() : nullptr;
        c.parts = parts;
        run(c, x.device(), "ember.nn.layer_norm (backward)");
    }
    const Shape ns(xshape.end() - k, xshape.end());
    std::vector<Array> r(3);
    r[0] = dx;
    if (want[1]) r[1] = ember::sum(pg, std::vector<int64_t>{0}).astype(x.dtype()).reshape(ns);
    if (want[2]) r[2] = ember::sum(pb, std::vector<int64_t>{0}).astype(x.dtype()).reshape(ns);
    return r;
}

}  // namespace detail

}  // namespace ember::nn
