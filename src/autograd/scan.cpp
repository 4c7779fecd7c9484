// The node of cumsum: its backward is a reversed cumsum of the gradient.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autograd/internal.hpp"
#include "ember/ops.hpp"

namespace ember::autograd {

namespace {

// x reversed along `axis` (a view).
Array flip_axis(const Array& x, int axis) {
    std::vector<Index> idx;
    for (int d = 0; d < axis; ++d)
        idx.emplace_back(Slice{});
    idx.emplace_back(Slice{std::nullopt, std::nullopt, int64_t(-1)});
    return index(x, std::span<const Index>(idx));
}

class CumsumNode final : public Node {
public:
    CumsumNode(std::optional<int64_t> axis, int ax, Shape xshape)
        : axis_(axis), ax_(ax), xshape_(std::move(xshape)) {}
    std::string name() const override { return "CumsumBackward"; }
    std::string op_name() const override { return "ember.cumsum"; }
    std::vector<Array> apply(std::vector<Array>&& grads) override {
        const Array& g = grads[0];
        Array r = flip_axis(ember::cumsum(flip_axis(g, ax_), int64_t(ax_), g.dtype()), ax_);
        return {axis_ ? r : r.reshape(xshape_)};
    }

private:
    std::optional<int64_t> axis_;
    int ax_;
    Shape xshape_;
};

}  // namespace

namespace detail {

Array cumsum(const Array& x, std::optional<int64_t> axis, std::optional<DType> dtype) {
    Array r;
    {
        NoGradGuard ng;
        r = ember::cumsum(x, axis, dtype);
    }
    if (!is_inexact(r.dtype()) || x.ndim() == 0 || r.ndim() == 0) return r;
    const int ax = axis ? normalize_axis(*axis, x.ndim(), "ember.cumsum") : 0;
    auto node = std::make_shared<CumsumNode>(axis, ax, x.shape());
    const Array* ins[1] = {&x};
    collect_next_edges(*node, ptrs(ins));
    attach(node, r);
    return r;
}

}  // namespace detail

}  // namespace ember::autograd
