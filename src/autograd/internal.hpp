// What autograd's own files share beyond the core's recording hook (core/record.hpp): in-place
// bookkeeping, the engine's gradient fitting, view recording and the small helpers of the nodes.
#pragma once

#include <cctype>
#include <complex>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "core/record.hpp"
#include "ember/autograd.hpp"
#include "ember/ops.hpp"

namespace ember::autograd {

namespace detail {

// Raises for an in-place write into `out` that autograd cannot follow (a leaf that requires
// grad, a view of an array that requires grad) while grad mode is on.
void check_inplace(const Array& out, const std::string& who);
// An in-place op made by `node` gave `out` a new history (output 0 of node).
void rebase_history(const Array& out, const std::shared_ptr<Node>& node);
// A view whose base got a new history gets a new one of its own (a view of the base's).
void refresh_view(const Array& view);
// The engine's gradient fitting (broadcast dims summed, cast to the input's dtype).
Array fit_gradient(Array g, const TensorInfo& in, const Node& n);

// Records view `r` of `x` made by `node`; `fn` makes the same view of an array shaped as x (null
// when the view cannot be written through). A view keeps its root base and the composed view
// function.
void record_view(const std::shared_ptr<Node>& node, const Array& x, const Array& r, ViewFn fn);
// After `node` wrote in place through `view` (a recorded view with a base): the base gets a
// CopySlices history and the view a new view history of it. `self`: the operand of `node` that
// was the view's old value (-1: none).
void rebase_through_view(const Array& view, const std::shared_ptr<Node>& node, int self);

}  // namespace detail

// "log_softmax" -> "LogSoftmax": node names from op names.
std::string camel(std::string_view s);

// conj for complex values (the conjugate Wirtinger chain rule), nothing for real ones.
inline Array cj(const Array& a) { return is_complex(a.dtype()) ? conj(a) : a; }
inline Operand cj(const Operand& o) {
    if (!o.is_scalar) return Operand(cj(o.array()));
    Scalar s = o.scalar;
    s.c = std::conj(s.c);
    return Operand(s);
}
// The conjugate transpose of the last two axes.
inline Array mh(const Array& a) { return cj(a.swapaxes(-1, -2)); }

inline Array zeros_of(const TensorInfo& t) { return zeros(t.shape, t.dtype, t.device); }

template <size_t N>
std::span<const Array* const> ptrs(const Array* (&p)[N]) {
    return std::span<const Array* const>(p, N);
}

// Makes `out` output 0 of `node`.
inline void attach(const std::shared_ptr<Node>& node, Array& out) {
    Array* outs[1] = {&out};
    set_history(outs, node);
}

}  // namespace ember::autograd
