// Backward formulas, written in ember ops (so they run on any device and are themselves
// recorded under create_graph): the elementwise derivative table (one entry per op-table row,
// complex ops with PyTorch's conjugate Wirtinger convention) and the nodes of reductions, with
// their recording entry points (core/record.hpp). Other topics: linalg.cpp, indexing.cpp,
// views.cpp, rows.cpp, scan.cpp.
#include <cctype>
#include <cmath>
#include <functional>
#include <numbers>
#include <string>

#include "autograd/internal.hpp"
#include "core/internal.hpp"
#include "ember/error.hpp"
#include "ember/ops.hpp"

namespace ember::autograd {

std::string camel(std::string_view s) {
    std::string r;
    bool up = true;
    for (char c : s) {
        if (c == '_') {
            up = true;
            continue;
        }
        r += up ? char(std::toupper(static_cast<unsigned char>(c))) : c;
        up = false;
    }
    return r;
}

namespace {

using ops::OpId;

// ---- elementwise ------------------------------------------------------------------------------

enum : uint8_t { formula, zero, not_impl };
constexpr uint8_t SA = 1, SB = 2, SC = 4, SY = 8;  // what the formula reads: operands, output
struct Spec {
    uint8_t kind;
    uint8_t save;
};

// The derivative table: how each op-table row differentiates. Rows whose outputs are bool or
// integer never get here (their results do not require grad).
Spec spec(OpId op) {
    switch (op) {
        case OpId::add:
        case OpId::subtract:
        case OpId::negative:
        case OpId::positive:
        case OpId::conj:
        case OpId::real:
        case OpId::imag:
            return {formula, 0};
        case OpId::multiply:
        case OpId::remainder:
        case OpId::fmod:
        case OpId::atan2:
        case OpId::maximum:
        case OpId::minimum:
            return {formula, SA | SB};
        case OpId::divide:
            return {formula, SB | SY};
        case OpId::pow:
        case OpId::logaddexp:
        case OpId::hypot:
            return {formula, SA | SB | SY};
        case OpId::clip:
            return {formula, SA | SB | SC};
        case OpId::where:
            return {formula, SA};
        case OpId::sign:
        case OpId::copysign:
            return {formula, SA | SY};
        case OpId::abs:
        case OpId::square:
        case OpId::log:
        case OpId::log1p:
        case OpId::log2:
        case OpId::log10:
        case OpId::sin:
        case OpId::cos:
        case OpId::asin:
        case OpId::acos:
        case OpId::atan:
        case OpId::sinh:
        case OpId::cosh:
        case OpId::asinh:
        case OpId::acosh:
        case OpId::atanh:
            return {formula, SA};
        case OpId::reciprocal:
        case OpId::sqrt:
        case OpId::exp:
        case OpId::expm1:
        case OpId::tan:
        case OpId::tanh:
            return {formula, SY};
        case OpId::floor_divide:
        case OpId::floor:
        case OpId::ceil:
        case OpId::trunc:
        case OpId::round:
            return {zero, 0};
        default:  // nextafter (PyTorch has no derivative either), and non-differentiable rows
            return {not_impl, 0};
    }
}

class MapNode final : public Node {
public:
    MapNode(OpId op, int arity) : op_(op), arity_(arity) {}
    std::string name() const override {
        static const auto names = [] {
            std::vector<std::string> v;
            for (const ops::OpInfo& oi : ops::op_infos)
                v.push_back(camel(oi.name) + "Backward");
            return v;
        }();
        return names[size_t(op_)];
    }
    std::string op_name() const override { return "ember." + std::string(ops::info(op_).name); }
    std::vector<Array> apply(std::vector<Array>&& grads) override;
    void release_saved() override {
        bool any = out.defined();
        out.reset();
        for (SavedArray& s : saved) {
            any |= s.defined();
            s.reset();
        }
        if (any) freed = true;
    }

    // Operand k (the saved array or the scalar), and the output.
    Operand x(int k) const {
        return is_scalar[k] ? Operand(scal[k]) : Operand(saved[k].unpack(*this));
    }
    Array y() const { return out.unpack(*this); }
    DType in_dtype(int k) const { return is_scalar[k] ? scal[k].dtype : inputs[size_t(k)].dtype; }

    SavedArray saved[3];
    Scalar scal[3];
    bool is_scalar[3] = {};
    SavedArray out;

private:
    Array grad(const Array& g, int k) const;
    Array pow_grad(const Array& g, int k) const;

    OpId op_;
    int arity_;
};

bool is_zero(const Scalar& s) { return s.c == std::complex<double>(0.0); }

// x**b's derivatives: b * x**(b-1) (0 where b == 0), and x**b * log(x) (0 where x == 0 and
// real(b) >= 0), as PyTorch.
Array MapNode::pow_grad(const Array& g, int k) const {
    const Operand a = x(0), b = x(1);
    if (k == 0) {
        if (b.is_scalar) {
            const Scalar& s = b.scalar;
            if (is_zero(s)) return zeros_of(inputs[0]);
            if (s.weak != WeakKind::none && s.weak != WeakKind::complex && s.c.real() == 2.0)
                return g * cj(a * 2.0);
            Scalar s1 = s;
            if (s.weak == WeakKind::boolean) s1 = Scalar(int64_t(s.b) - 1);
            s1.c -= 1.0;
            s1.i -= 1;
            s1.u -= 1;
            return g * cj(b * pow(a, Operand(s1)));
        }
        Array r = g * cj(b * pow(a, b - 1));
        return where(equal(b, 0.0), 0.0, r);
    }
    Array r = g * cj(y() * log(a));
    const Operand rb = is_complex(in_dtype(1)) ? Operand(real(b)) : b;
    return where(logical_and(equal(a, 0.0), greater_equal(rb, 0.0)), 0.0, r);
}

Array MapNode::grad(const Array& g, int k) const {
    switch (op_) {
        case OpId::add:
        case OpId::positive:
        case OpId::real:
            return g;
        case OpId::subtract:
            return k == 0 ? g : negative(g);
        case OpId::negative:
            return negative(g);
        case OpId::conj:
            return conj(g);
        case OpId::imag:
            return is_complex(in_dtype(0)) ? multiply(g, std::complex<double>(0.0, 1.0))
                                           : zeros_of(inputs[0]);
        case OpId::multiply:
            return g * cj(x(1 - k));
        case OpId::divide:
            return k == 0 ? g / cj(x(1)) : negative(g) * cj(y() / x(1));
        case OpId::remainder:
            return k == 0 ? g : negative(g) * floor_divide(x(0), x(1));
        case OpId::fmod:
            return k == 0 ? g : negative(g) * trunc(divide(x(0), x(1)));
        case OpId::pow:
            return pow_grad(g, k);
        case OpId::abs:
            return g * sign(x(0));
        case OpId::sign: {
            if (!is_complex(in_dtype(0))) return zeros_of(inputs[0]);
            // s = z/|z|: (g - s^2 conj(g)) / (2|z|), 0 at z == 0.
            const Array s = y(), az = abs(x(0));
            Array r = (g - s * s * conj(g)) / (az * 2.0);
            return where(equal(az, 0.0), 0.0, r);
        }
        case OpId::square:
            return g * cj(x(0) * 2.0);
        case OpId::reciprocal: {
            const Array r = y();
            return negative(g) * cj(r * r);
        }
        case OpId::sqrt:
            return g / cj(y() * 2.0);
        case OpId::exp:
            return g * cj(y());
        case OpId::expm1:
            return g * cj(y() + 1.0);
        case OpId::log:
            return g / cj(x(0));
        case OpId::log1p:
            return g / cj(x(0) + 1.0);
        case OpId::log2:
            return g / cj(x(0) * std::numbers::ln2);
        case OpId::log10:
            return g / cj(x(0) * std::numbers::ln10);
        case OpId::logaddexp:
            return g * exp(x(k) - y());
        case OpId::sin:
            return g * cj(cos(x(0)));
        case OpId::cos:
            return negative(g) * cj(sin(x(0)));
        case OpId::tan: {
            const Array t = y();
            return g * cj(t * t + 1.0);
        }
        case OpId::asin:
            return g / cj(sqrt(1.0 - square(x(0))));
        case OpId::acos:
            return negative(g) / cj(sqrt(1.0 - square(x(0))));
        case OpId::atan:
            return g / cj(square(x(0)) + 1.0);
        case OpId::sinh:
            return g * cj(cosh(x(0)));
        case OpId::cosh:
            return g * cj(sinh(x(0)));
        case OpId::tanh: {
            const Array t = y();
            return g * cj(1.0 - t * t);
        }
        case OpId::asinh:
            return g / cj(sqrt(square(x(0)) + 1.0));
        case OpId::acosh:
            return g / cj(sqrt(square(x(0)) - 1.0));
        case OpId::atanh:
            return g / cj(1.0 - square(x(0)));
        case OpId::atan2: {
            const Operand a = x(0), b = x(1);
            const Array d = square(a) + square(b);
            return k == 0 ? g * b / d : negative(g) * a / d;
        }
        case OpId::hypot:
            return g * x(k) / y();
        case OpId::copysign: {
            if (k == 1) return zeros_of(inputs[1]);
            const Operand a = x(0);
            return g * where(equal(a, 0.0), 0.0, y() / a);
        }
        case OpId::maximum:
        case OpId::minimum: {
            // The larger (smaller) operand gets the gradient; ties split it evenly (PyTorch).
            const Operand a = x(k), b = x(1 - k);
            const Array lose = op_ == OpId::maximum ? less(a, b) : greater(a, b);
            return where(lose, 0.0, where(equal(a, b), g * 0.5, g));
        }
        case OpId::clip: {
            const Operand v = x(0), lo = x(1), hi = x(2);
            if (k == 0) return where(logical_and(greater_equal(v, lo), less_equal(v, hi)), g, 0.0);
            if (k == 1) return where(logical_and(less(v, lo), less_equal(lo, hi)), g, 0.0);
            return where(logical_or(greater(v, hi), greater(lo, hi)), g, 0.0);
        }
        case OpId::where:
            return k == 1 ? where(x(0), g, 0.0) : where(x(0), 0.0, g);
        default:
            throw Error("ember.autograd: the derivative of ember." +
                        std::string(ops::info(op_).name) + " is not implemented");
    }
}

std::vector<Array> MapNode::apply(std::vector<Array>&& grads) {
    std::vector<Array> r(static_cast<size_t>(arity_));
    const Array& g = grads[0];
    if (!g.defined()) return r;
    const Spec s = spec(op_);
    if (s.kind == not_impl)
        throw Error("ember.autograd: the derivative of ember." + std::string(ops::info(op_).name) +
                    " is not implemented");
    for (int k = 0; k < arity_; ++k) {
        if (!next[size_t(k)].valid()) continue;
        r[size_t(k)] = s.kind == zero ? zeros_of(inputs[size_t(k)]) : grad(g, k);
    }
    return r;
}

// What to save, given which operands need a gradient (a product needs only the other factor).
uint8_t save_mask(OpId op, const bool* rg) {
    uint8_t m = spec(op).save;
    if (op == OpId::multiply) m = uint8_t((rg[1] ? SA : 0) | (rg[0] ? SB : 0));
    if (op == OpId::divide && !rg[1]) m = SB;
    return m;
}

// ---- reductions -------------------------------------------------------------------------------

class ReduceNode final : public Node {
public:
    ReduceNode(ops::ReduceOp op, Shape in, Shape keep, bool keepdims, Axes axes)
        : op_(op),
          in_(std::move(in)),
          keep_(std::move(keep)),
          keepdims_(keepdims),
          axes_(std::move(axes)) {}
    // SumBackward, ProdBackward, ... from the row's name.
    std::string name() const override {
        std::string n(ops::info(op_).name);
        n[0] = char(n[0] - 'a' + 'A');
        return n + "Backward";
    }
    std::string op_name() const override { return "ember." + std::string(ops::info(op_).name); }
    std::vector<Array> apply(std::vector<Array>&& grads) override {
        const Array gk = keepdims_ ? grads[0] : grads[0].reshape(keep_);
        switch (ops::info(op_).grad) {
            case ops::GradRule::none:
                break;
            case ops::GradRule::sum:
                return {gk.broadcast_to(in_)};
            case ops::GradRule::prod: {
                // Exact with zeros: the product of the other elements, from the product of the
                // non-zero ones and the number of zeros.
                const Array xv = x.unpack(*this);
                const Array z = equal(xv, 0.0);
                const Array nz = ember::sum(z, axes_, true);
                const Array xs = where(z, 1.0, xv);
                const Array p = ember::prod(xs, axes_, true);
                const Array others = where(equal(nz, int64_t(0)), p / xs,
                                           where(logical_and(z, equal(nz, int64_t(1))), p, 0.0));
                return {gk * cj(others)};
            }
            case ops::GradRule::extremum: {
                // Ties share the gradient evenly (PyTorch's amax/amin and full max/min).
                const Array xv = x.unpack(*this), yv = y.unpack(*this);
                const Array yk = keepdims_ ? yv : yv.reshape(keep_);
                const Array hit = logical_or(equal(xv, yk), logical_and(isnan(xv), isnan(yk)));
                const Array m = hit.astype(gk.dtype());
                return {gk * m / ember::sum(m, axes_, true)};
            }
        }
        return {};
    }
    void release_saved() override {
        if (x.defined()) freed = true;
        x.reset();
        y.reset();
    }
    SavedArray x, y;

private:
    ops::ReduceOp op_;
    Shape in_, keep_;
    bool keepdims_;
    Axes axes_;
};

}  // namespace

namespace detail {

Array map(OpId op, std::span<const Operand> xs, const Array* out) {
    const std::string who = "ember." + std::string(ops::info(op).name);
    if (out) check_inplace(*out, who);
    const int n = int(xs.size());
    bool rg[3] = {};
    for (int k = 0; k < n; ++k)
        rg[k] = !xs[size_t(k)].is_scalar && xs[size_t(k)].array().requires_grad();
    auto node = std::make_shared<MapNode>(op, n);
    const uint8_t save = save_mask(op, rg);
    for (int k = 0; k < n; ++k) {
        const Operand& o = xs[size_t(k)];
        if (o.is_scalar) {
            node->is_scalar[k] = true;
            node->scal[k] = o.scalar;
        } else if (save & (1u << k)) {
            const Array& a = o.array();
            if (out && ember::detail::may_overlap(a, *out)) {
                // The in-place op overwrites it: save a copy of the old value.
                NoGradGuard ng;
                Array c = a.copy();
                c.set_grad_meta(a.grad_meta());
                node->saved[k] = SavedArray(c, false);
            } else {
                node->saved[k] = SavedArray(a, false);
            }
        }
    }
    Array result;
    {
        NoGradGuard ng;
        result = ember::map(op, xs, out);
    }
    if (!is_inexact(result.dtype())) return result;
    const Array* ins[3] = {};
    for (int k = 0; k < n; ++k)
        ins[k] = xs[size_t(k)].is_scalar ? nullptr : &xs[size_t(k)].array();
    collect_next_edges(*node, std::span<const Array* const>(ins, size_t(n)));
    bool any = false;
    for (const Edge& e : node->next)
        any |= e.valid();
    if (!any) {
        if (out && out->requires_grad())
            throw Error(who +
                        ": the output array requires grad but no operand does; out= writes "
                        "are not differentiable");
        return result;
    }
    if (save & SY) node->out = SavedArray(result, true, 0);
    if (out) {
        const MetaPtr& om = out->grad_meta();
        if (om && om->is_view && om->view_fn) {
            int self = -1;
            for (int k = 0; k < n && self < 0; ++k)
                if (!xs[size_t(k)].is_scalar &&
                    ember::detail::same_view(xs[size_t(k)].array(), *out))
                    self = k;
            node->outputs.assign(1, TensorInfo{out->shape(), out->dtype(), out->device()});
            rebase_through_view(*out, node, self);
        } else {
            rebase_history(*out, node);
        }
        return *out;
    }
    attach(node, result);
    return result;
}

Array reduce(ops::ReduceOp op, const Array& x, const Axes& axes, bool keepdims,
             std::optional<DType> dtype) {
    Array r;
    {
        NoGradGuard ng;
        r = ember::reduce(op, x, axes, keepdims, dtype);
    }
    if (!is_inexact(r.dtype())) return r;
    // The output's shape with the reduced dims kept (as 1).
    Shape keep = x.shape();
    std::vector<int64_t> norm;
    if (axes) {
        for (int64_t a : *axes)
            norm.push_back(normalize_axis(a, x.ndim(), "ember.autograd"));
    } else {
        for (int d = 0; d < x.ndim(); ++d)
            norm.push_back(d);
    }
    for (int64_t a : norm)
        keep[size_t(a)] = 1;
    auto node = std::make_shared<ReduceNode>(op, x.shape(), keep, keepdims, Axes(norm));
    const ops::GradRule rule = ops::info(op).grad;
    if (rule != ops::GradRule::sum) node->x = SavedArray(x, false);
    if (rule == ops::GradRule::extremum) node->y = SavedArray(r, true, 0);
    const Array* ins[1] = {&x};
    collect_next_edges(*node, ptrs(ins));
    attach(node, r);
    return r;
}

}  // namespace detail

}  // namespace ember::autograd
