// The recording entry points the op front-ends call (src/core): each front-end tests for
// autograd state with one null check per operand, and only then comes here, where the plain op
// runs under NoGradGuard and its backward node is attached to the result.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "ember/autograd.hpp"
#include "ember/linalg.hpp"
#include "ember/ops.hpp"

namespace ember::autograd::detail {

// Grad mode is on and `a` requires grad (call after finding a grad_meta).
bool should_record(const Array& a);
bool should_record(const Array& a, const Array& b);
inline bool has_meta(std::span<const Operand> xs, const Array* out) {
    for (const Operand& x : xs)
        if (!x.is_scalar && x.array().grad_meta()) return true;
    return out && out->grad_meta();
}
bool should_record_map(std::span<const Operand> xs, const Array* out);
bool should_record_assign(const Array& x, const Operand& value);

// Elementwise ops (also in-place ones, which rebase the output's history).
Array map(ops::OpId op, std::span<const Operand> xs, const Array* out);

// Reductions of the table whose row has a GradRule (ember/reducetable.hpp).
Array reduce(ops::ReduceOp op, const Array& x, const Axes& axes, bool keepdims,
             std::optional<DType> dtype);

Array matmul(const Array& a, const Array& b);
Array take(const Array& x, const Array& indices, std::optional<int64_t> axis);
Array index(const Array& x, std::span<const Index> idx);
void index_assign(const Array& x, std::span<const Index> idx, const Operand& value);
void index_assign(const Array& x, std::span<const IndexItem> idx, const Operand& value);

// Views and copies made by Array's members: `r` was computed from `x` under NoGradGuard.
void on_reshape(const Array& x, const Array& r);
void on_permute(const Array& x, const Array& r, std::vector<int64_t> perm);
void on_broadcast(const Array& x, const Array& r);
// A view `redo(x)` of distinct elements of x (slices, diagonals, basic indexing).
void on_view(const Array& x, const Array& r, std::function<Array(const Array&)> redo,
             const char* name);
// copy(), astype() and to(): the gradient goes back unchanged (cast and moved back).
void on_copy(const Array& x, const Array& r, const char* name);
// Array::view (as_strided): no derivative (backward raises).
void on_strided(const Array& x, const Array& r);

// Outputs of an op without a backward formula: backward through them raises naming `op`.
void not_implemented(const char* op, std::span<const Array* const> inputs,
                     std::span<Array* const> outputs);
linalg::Factors factorize(linalg::Factorization kind, const Array& a, const Array* b,
                          const Array* ipiv, const Array* tau, bool vectors, bool full);

// Raises for an in-place write into `out` that autograd cannot follow (a leaf that requires
// grad, a view of an array that requires grad) while grad mode is on.
void check_inplace(const Array& out, const std::string& who);
// An in-place op made by `node` gave `out` a new history (output 0 of node).
void rebase_history(const Array& out, const std::shared_ptr<Node>& node);
// A view whose base got a new history gets a new one of its own (a view of the base's).
void refresh_view(const Array& view);
// The engine's gradient fitting (broadcast dims summed, cast to the input's dtype).
Array fit_gradient(Array g, const TensorInfo& in, const Node& n);

}  // namespace ember::autograd::detail
