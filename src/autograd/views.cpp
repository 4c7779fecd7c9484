// The nodes of views, copies and ops without a formula: reshape, permute, broadcast, slices and
// other views (with the view bookkeeping that lets an in-place write through a view rebase its
// base's history), copies and casts, and the recording entry points that make them.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autograd/internal.hpp"
#include "ember/error.hpp"
#include "ember/ops.hpp"

namespace ember::autograd {

namespace {

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

}  // namespace detail

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

}  // namespace ember::autograd
