// Backward formulas, written in ember ops (so they run on any device and are themselves
// recorded under create_graph): the elementwise derivative table (one entry per op-table row,
// complex ops with PyTorch's conjugate Wirtinger convention), and the nodes of reductions,
// matmul, take, views, copies and setitem, with the recording entry points of record.hpp.
#include <cctype>
#include <cmath>
#include <functional>
#include <numbers>
#include <string>

#include "autograd/record.hpp"
#include "core/internal.hpp"
#include "ember/error.hpp"
#include "ember/ops.hpp"

namespace ember::autograd {

namespace {

using ops::OpId;

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

// conj for complex values (the conjugate Wirtinger chain rule), nothing for real ones.
Array cj(const Array& a) { return is_complex(a.dtype()) ? conj(a) : a; }
Operand cj(const Operand& o) {
    if (!o.is_scalar) return Operand(cj(o.array()));
    Scalar s = o.scalar;
    s.c = std::conj(s.c);
    return Operand(s);
}
// The conjugate transpose of the last two axes.
Array mh(const Array& a) { return cj(a.swapaxes(-1, -2)); }

Array zeros_of(const TensorInfo& t) { return zeros(t.shape, t.dtype, t.device); }

template <size_t N>
std::span<const Array* const> ptrs(const Array* (&p)[N]) {
    return std::span<const Array* const>(p, N);
}

void attach(const std::shared_ptr<Node>& node, Array& out) {
    Array* outs[1] = {&out};
    set_history(outs, node);
}

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

// ---- matmul -----------------------------------------------------------------------------------

class MatmulNode final : public Node {
public:
    MatmulNode(bool a1, bool b1) : a1_(a1), b1_(b1) {}
    std::string name() const override { return "MatmulBackward"; }
    std::string op_name() const override { return "ember.matmul"; }
    std::vector<Array> apply(std::vector<Array>&& grads) override {
        const Array& g = grads[0];
        // The gradient with the dimensions NumPy dropped for 1-D operands put back.
        Array g2 = g;
        if (a1_ && b1_)
            g2 = g.reshape({1, 1});
        else if (a1_)
            g2 = g.expand_dims(g.ndim() - 1);
        else if (b1_)
            g2 = g.expand_dims(g.ndim());
        std::vector<Array> r(2);
        if (next[0].valid()) {
            const Array bv = b.unpack(*this);
            Array ga = ember::matmul(g2, mh(b1_ ? bv.expand_dims(1) : bv));
            r[0] = a1_ ? ga.squeeze({int64_t(ga.ndim() - 2)}) : ga;
        }
        if (next[1].valid()) {
            const Array av = a.unpack(*this);
            Array gb = ember::matmul(mh(a1_ ? av.expand_dims(0) : av), g2);
            r[1] = b1_ ? gb.squeeze({int64_t(gb.ndim() - 1)}) : gb;
        }
        return r;
    }
    void release_saved() override {
        if (a.defined() || b.defined()) freed = true;
        a.reset();
        b.reset();
    }
    SavedArray a, b;

private:
    bool a1_, b1_;
};

// ---- take and its adjoint ---------------------------------------------------------------------

Array take_adjoint(const Array& g, const Array& idx, std::optional<int64_t> axis,
                   const Shape& xshape);

// The adjoint of take: zeros with the gradient added at the indices; its own backward is take.
class TakeAdjointNode final : public Node {
public:
    TakeAdjointNode(Array idx, std::optional<int64_t> axis) : idx_(std::move(idx)), axis_(axis) {}
    std::string name() const override { return "TakeAdjointBackward"; }
    std::vector<Array> apply(std::vector<Array>&& grads) override {
        return {ember::take(grads[0], idx_, axis_)};
    }

private:
    Array idx_;
    std::optional<int64_t> axis_;
};

class TakeNode final : public Node {
public:
    TakeNode(std::optional<int64_t> axis, Shape xshape) : axis_(axis), xshape_(std::move(xshape)) {}
    std::string name() const override { return "TakeBackward"; }
    std::string op_name() const override { return "ember.take"; }
    std::vector<Array> apply(std::vector<Array>&& grads) override {
        return {take_adjoint(grads[0], idx.unpack(*this), axis_, xshape_), Array()};
    }
    void release_saved() override {
        if (idx.defined()) freed = true;
        idx.reset();
    }
    SavedArray idx;

private:
    std::optional<int64_t> axis_;
    Shape xshape_;
};

Array take_adjoint(const Array& g, const Array& idx, std::optional<int64_t> axis,
                   const Shape& xshape) {
    Array z = zeros(axis ? xshape : Shape{numel(xshape)}, g.dtype(), g.device());
    {
        NoGradGuard ng;
        add_at(z, idx, g, axis);
    }
    if (g.requires_grad() && is_grad_enabled()) {
        auto node = std::make_shared<TakeAdjointNode>(idx.detach(), axis);
        const Array* ins[1] = {&g};
        collect_next_edges(*node, ptrs(ins));
        attach(node, z);
    }
    return axis ? z : z.reshape(xshape);
}

// ---- views and copies -------------------------------------------------------------------------

class ReshapeNode final : public Node {
public:
    explicit ReshapeNode(Shape in) : in_(std::move(in)) {}
    std::string name() const override { return "ReshapeBackward"; }
    std::vector<Array> apply(std::vector<Array>&& g) override { return {g[0].reshape(in_)}; }

private:
    Shape in_;
};

class PermuteNode final : public Node {
public:
    explicit PermuteNode(std::vector<int64_t> perm) : inv_(perm.size()) {
        for (size_t i = 0; i < perm.size(); ++i)
            inv_[size_t(perm[i])] = int64_t(i);
    }
    std::string name() const override { return "PermuteBackward"; }
    std::vector<Array> apply(std::vector<Array>&& g) override { return {g[0].permute(inv_)}; }

private:
    std::vector<int64_t> inv_;
};

// The engine sums the broadcast dimensions back to the input's shape.
class BroadcastNode final : public Node {
public:
    std::string name() const override { return "BroadcastToBackward"; }
    std::vector<Array> apply(std::vector<Array>&& g) override { return {std::move(g[0])}; }
};

Array embed(const Array& g, const TensorInfo& in, const std::function<Array(const Array&)>& redo);

// The backward of embed: the same view of the gradient.
class EmbedNode final : public Node {
public:
    explicit EmbedNode(std::function<Array(const Array&)> redo) : redo_(std::move(redo)) {}
    std::string name() const override { return "EmbedBackward"; }
    std::vector<Array> apply(std::vector<Array>&& g) override { return {redo_(g[0])}; }

private:
    std::function<Array(const Array&)> redo_;
};

// A view of distinct elements: its gradient is zeros with g written into the same view.
class ViewNode final : public Node {
public:
    ViewNode(std::function<Array(const Array&)> redo, const char* name)
        : redo_(std::move(redo)), name_(name) {}
    std::string name() const override { return name_; }
    std::vector<Array> apply(std::vector<Array>&& g) override {
        return {embed(g[0], inputs[0], redo_)};
    }

private:
    std::function<Array(const Array&)> redo_;
    const char* name_;
};

Array embed(const Array& g, const TensorInfo& in, const std::function<Array(const Array&)>& redo) {
    Array z = zeros(in.shape, g.dtype(), in.device);
    {
        NoGradGuard ng;
        const Array v = redo(z);
        if (v.storage() != z.storage())
            throw Error(
                "ember.autograd: this chain of views is not a view of a contiguous array "
                "of its base's shape; its gradient cannot be written back");
        v.assign(g);
    }
    if (g.requires_grad() && is_grad_enabled()) {
        auto node = std::make_shared<EmbedNode>(redo);
        const Array* ins[1] = {&g};
        collect_next_edges(*node, ptrs(ins));
        attach(node, z);
    }
    return z;
}

class CopyNode final : public Node {
public:
    explicit CopyNode(const char* name) : name_(name) {}
    std::string name() const override { return name_; }
    std::vector<Array> apply(std::vector<Array>&& g) override {
        return {g[0].to(inputs[0].device)};  // the engine casts it back to the input's dtype
    }

private:
    const char* name_;
};

// Records view `r` of `x`; `fn` makes the same view of an array shaped as x (null when the
// view cannot be written through). A view keeps its root base and the composed view function.
void record_view(const std::shared_ptr<Node>& node, const Array& x, const Array& r, ViewFn fn) {
    if (!detail::should_record(x)) return;
    const Array* ins[1] = {&x};
    collect_next_edges(*node, ptrs(ins));
    Array out = r;  // a handle of the same view; its autograd state is shared with r
    attach(node, out);
    r.set_grad_meta(out.grad_meta());
    if (r.storage() != x.storage()) return;
    Meta& m = *r.grad_meta();
    m.is_view = true;
    m.view_rebases = r.storage()->rebases();
    if (!fn) return;
    const MetaPtr& xm = x.grad_meta();
    if (!xm->is_view) {
        m.view_base = x;
        m.view_fn = std::make_shared<const ViewFn>(std::move(fn));
    } else if (xm->view_fn) {
        m.view_base = xm->view_base;
        m.view_fn =
            std::make_shared<const ViewFn>([first = xm->view_fn, then = std::move(fn)](
                                               const Array& z) { return then((*first)(z)); });
    }
}

// An in-place op (node `fn`) wrote through a view: the base's new history. Its gradient is the
// incoming one outside the view's region, and inside it what `fn` gives its input `self` (the
// view's old value; -1 when the op overwrote the region without reading it).
class CopySlices final : public Node {
public:
    CopySlices(std::shared_ptr<Node> fn, int self, std::shared_ptr<const ViewFn> view,
               TensorInfo base)
        : fn_(std::move(fn)), self_(self), view_(std::move(view)), base_(std::move(base)) {}
    std::string name() const override { return "CopySlices"; }
    std::string op_name() const override { return fn_->op_name(); }
    std::vector<Array> apply(std::vector<Array>&& grads) override {
        const Array& g = grads[0];
        const Array gv = (*view_)(g);
        std::vector<Array> res = fn_->apply(std::vector<Array>{gv});
        res.resize(fn_->next.size());
        for (size_t i = 0; i < res.size(); ++i)
            if (res[i].defined())
                res[i] = detail::fit_gradient(std::move(res[i]), fn_->inputs[i], *fn_);
        Array gb = g - embed(gv, base_, *view_);
        if (self_ >= 0 && res[size_t(self_)].defined())
            gb = gb + embed(res[size_t(self_)], base_, *view_);
        std::vector<Array> out(1 + res.size());
        out[0] = std::move(gb);
        for (size_t i = 0; i < res.size(); ++i)
            if (int(i) != self_) out[1 + i] = std::move(res[i]);
        return out;
    }
    void release_saved() override {
        fn_->release_saved();
        freed = fn_->freed;
    }

private:
    std::shared_ptr<Node> fn_;
    int self_;
    std::shared_ptr<const ViewFn> view_;
    TensorInfo base_;
};

// After `node` wrote in place through `view` (a recorded view with a base): the base gets a
// CopySlices history and the view a new view history of it. `self`: the operand of `node` that
// was the view's old value (-1: none).
void rebase_through_view(const Array& view, const std::shared_ptr<Node>& node, int self) {
    const MetaPtr vm = view.grad_meta();
    const Array base = vm->view_base;
    auto cs = std::make_shared<CopySlices>(node, self, vm->view_fn,
                                           TensorInfo{base.shape(), base.dtype(), base.device()});
    const Array* ins[1] = {&base};
    collect_next_edges(*cs, ptrs(ins));
    for (size_t i = 0; i < node->next.size(); ++i) {
        cs->next.push_back(int(i) == self ? Edge{} : node->next[i]);
        cs->inputs.push_back(node->inputs[i]);
    }
    detail::rebase_history(base, cs);
    detail::refresh_view(view);
}

// ---- setitem ----------------------------------------------------------------------------------

// x[idx] = value: x's old elements outside the region and value's inside it. `I`: Index (basic
// indexing) or IndexItem (with integer/boolean arrays; where indices repeat, every value gets
// the gradient of its position, as in PyTorch).
template <class I>
class SetItemNode final : public Node {
public:
    explicit SetItemNode(std::vector<I> idx) : idx_(std::move(idx)) {}
    std::string name() const override { return "SetItemBackward"; }
    std::vector<Array> apply(std::vector<Array>&& grads) override {
        const Array& g = grads[0];
        const std::span<const I> idx(idx_);
        std::vector<Array> r(2);
        if (next[0].valid()) {
            Array gx = g.copy();
            ember::index_assign(gx, idx, Operand(0.0));
            r[0] = gx;
        }
        if (next[1].valid()) r[1] = ember::index(g, idx);
        return r;
    }

private:
    std::vector<I> idx_;
};

class NotImplementedNode final : public Node {
public:
    explicit NotImplementedNode(std::string op) : op_(std::move(op)) {}
    std::string name() const override { return camel(op_.substr(op_.rfind('.') + 1)) + "Backward"; }
    std::string op_name() const override { return op_; }
    std::vector<Array> apply(std::vector<Array>&&) override {
        throw Error("ember.autograd: the derivative of " + op_ + " is not implemented");
    }

private:
    std::string op_;
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

Array matmul(const Array& a, const Array& b) {
    Array r;
    {
        NoGradGuard ng;
        r = ember::matmul(a, b);
    }
    if (!is_inexact(r.dtype())) return r;
    auto node = std::make_shared<MatmulNode>(a.ndim() == 1, b.ndim() == 1);
    if (b.requires_grad()) node->a = SavedArray(a, false);
    if (a.requires_grad()) node->b = SavedArray(b, false);
    const Array* ins[2] = {&a, &b};
    collect_next_edges(*node, ptrs(ins));
    attach(node, r);
    return r;
}

Array take(const Array& x, const Array& indices, std::optional<int64_t> axis) {
    Array r;
    {
        NoGradGuard ng;
        r = ember::take(x, indices, axis);
    }
    auto node = std::make_shared<TakeNode>(axis, x.shape());
    node->idx = SavedArray(indices, false);
    const Array* ins[2] = {&x, nullptr};
    collect_next_edges(*node, ptrs(ins));
    attach(node, r);
    return r;
}

Array index(const Array& x, std::span<const Index> idx) {
    Array r;
    {
        NoGradGuard ng;
        r = ember::index(x, idx);
    }
    std::vector<Index> keep(idx.begin(), idx.end());
    on_view(
        x, r, [keep](const Array& z) { return ember::index(z, keep); }, "IndexBackward");
    return r;
}

namespace {

template <class I>
void record_index_assign(const Array& x, std::span<const I> idx, const Operand& value) {
    check_inplace(x, "ember.__setitem__");
    auto node = std::make_shared<SetItemNode<I>>(std::vector<I>(idx.begin(), idx.end()));
    const Array* ins[2] = {&x, value.is_scalar ? nullptr : &value.array()};
    collect_next_edges(*node, ptrs(ins));
    {
        NoGradGuard ng;
        ember::index_assign(x, idx, value);
    }
    const MetaPtr& xm = x.grad_meta();
    if (xm && xm->is_view && xm->view_fn) {
        node->outputs.assign(1, TensorInfo{x.shape(), x.dtype(), x.device()});
        rebase_through_view(x, node, 0);
    } else {
        rebase_history(x, node);
    }
}

}  // namespace

void index_assign(const Array& x, std::span<const Index> idx, const Operand& value) {
    record_index_assign(x, idx, value);
}
void index_assign(const Array& x, std::span<const IndexItem> idx, const Operand& value) {
    record_index_assign(x, idx, value);
}

void refresh_view(const Array& view) {
    const MetaPtr& m = view.grad_meta();
    if (!m->view_fn)
        throw Error("ember.autograd: a view (made by " +
                    (m->grad_fn ? m->grad_fn->name() : std::string("a view op")) +
                    ") is used after an in-place operation gave its base array a new history, "
                    "and this kind of view cannot follow it; make the view again after the "
                    "in-place operation");
    auto node = std::make_shared<ViewNode>(*m->view_fn, "ViewBackward");
    const Array* ins[1] = {&m->view_base};
    collect_next_edges(*node, ptrs(ins));
    node->outputs.assign(1, TensorInfo{view.shape(), view.dtype(), view.device()});
    m->grad_fn = std::move(node);
    m->output_nr = 0;
    m->requires_grad = true;
    m->view_rebases = view.storage()->rebases();
}

void on_reshape(const Array& x, const Array& r) {
    if (!should_record(x)) return;
    record_view(std::make_shared<ReshapeNode>(x.shape()), x, r,
                [s = r.shape()](const Array& z) { return z.reshape(s); });
}
void on_permute(const Array& x, const Array& r, std::vector<int64_t> perm) {
    if (!should_record(x)) return;
    for (int64_t& p : perm)
        p = normalize_axis(p, x.ndim(), "ember.permute_dims");
    ViewFn fn = [perm](const Array& z) { return z.permute(perm); };
    record_view(std::make_shared<PermuteNode>(std::move(perm)), x, r, std::move(fn));
}
void on_broadcast(const Array& x, const Array& r) {
    if (!should_record(x)) return;
    record_view(std::make_shared<BroadcastNode>(), x, r, nullptr);
}
void on_view(const Array& x, const Array& r, std::function<Array(const Array&)> redo,
             const char* name) {
    if (!should_record(x)) return;
    ViewFn fn = redo;
    record_view(std::make_shared<ViewNode>(std::move(redo), name), x, r, std::move(fn));
}
void on_copy(const Array& x, const Array& r, const char* name) {
    if (!is_inexact(r.dtype()) || !should_record(x)) return;
    record_view(std::make_shared<CopyNode>(name), x, r, nullptr);
}

void on_strided(const Array& x, const Array& r) {
    if (!should_record(x)) return;
    record_view(std::make_shared<NotImplementedNode>("ember.Array.view"), x, r, nullptr);
}

void not_implemented(const char* op, std::span<const Array* const> inputs,
                     std::span<Array* const> outputs) {
    if (!any_requires_grad(inputs)) return;
    std::vector<Array*> outs;
    for (Array* o : outputs)
        if (o && o->defined() && is_inexact(o->dtype())) outs.push_back(o);
    if (outs.empty()) return;
    auto node = std::make_shared<NotImplementedNode>(op);
    collect_next_edges(*node, inputs);
    set_history(outs, node);
}

linalg::Factors factorize(linalg::Factorization kind, const Array& a, const Array* b,
                          const Array* ipiv, const Array* tau, bool vectors, bool full) {
    linalg::Factors f;
    {
        NoGradGuard ng;
        f = linalg::factorize(kind, a, b, ipiv, tau, vectors, full);
    }
    static const char* names[] = {
        "ember.linalg.lu",   "ember.linalg.lu_solve", "ember.linalg.cholesky", "ember.linalg.qr",
        "ember.linalg.qr_q", "ember.linalg.eigh",     "ember.linalg.svd",      "ember.linalg.eig"};
    const Array* ins[3] = {&a, b, tau};
    Array* outs[5] = {&f.a, &f.tau, &f.w, &f.u, &f.vt};
    not_implemented(names[int(kind)], ins, outs);
    return f;
}

}  // namespace detail

}  // namespace ember::autograd
