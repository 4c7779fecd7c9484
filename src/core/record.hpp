// The recording hook of the op front-ends (src/core): each front-end tests for autograd state
// with one null check per operand, and only then calls an entry point declared here, where the
// plain op runs under NoGradGuard and its backward node is attached to the result. The core owns
// this list; autograd (src/autograd) implements it and owns every node and formula, so the core
// includes nothing of autograd's.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "ember/autograd.hpp"
#include "ember/linalg.hpp"
#include "ember/ops.hpp"

namespace ember::nn::detail {
struct Rows;
struct CrossEntropySaved;
}  // namespace ember::nn::detail

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

// Scans: cumsum (cumprod has no formula: autograd::not_implemented).
Array cumsum(const Array& x, std::optional<int64_t> axis, std::optional<DType> dtype);

// The fused row ops (src/core/rows.cpp): their outputs were computed under NoGradGuard; these
// attach the nodes when an input requires grad (nothing otherwise).
void on_softmax(const Array& x, Array& y, const nn::detail::Rows& L, bool log);
void on_cross_entropy(const Array& x, Array& loss, const nn::detail::Rows& L,
                      nn::detail::CrossEntropySaved saved);
void on_layer_norm(const Array& x, const Array& gamma, const Array& beta, Array& y,
                   const Array& mean, const Array& rstd, int k, double eps);

linalg::Factors factorize(linalg::Factorization kind, const Array& a, const Array* b,
                          const Array* ipiv, const Array* tau, bool vectors, bool full);

}  // namespace ember::autograd::detail
