// The nodes of indexing: take and its adjoint (whose backward is take again), basic indexing
// (a view) and setitem (x[idx] = value, with basic and advanced indices).
#include <memory>
#include <optional>
#include <vector>

#include "autograd/internal.hpp"
#include "ember/error.hpp"
#include "ember/ops.hpp"

namespace ember::autograd {

namespace {

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

}  // namespace

namespace detail {

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

}  // namespace detail

}  // namespace ember::autograd
