// Helpers shared by the core's translation units: building backend Loops from arrays.
#pragma once

#include <span>

#include "backend/backend.hpp"
#include "ember/array.hpp"

namespace ember::detail {

// A Loop over operands that already have the same shape (broadcast views). Dimensions are
// ordered innermost-first by the strides of operand `order_by`, size-1 dims are dropped and
// adjacent dims that are contiguous in every operand are merged.
backend::Loop make_loop(const Array* const* ops, int nops, int order_by = 0);
inline backend::Loop make_loop(std::span<const Array> ops, int order_by = 0) {
    const Array* p[backend::max_operands];
    for (size_t i = 0; i < ops.size(); ++i)
        p[i] = &ops[i];
    return make_loop(p, int(ops.size()), order_by);
}
// Sets operand k of a loop to a scalar value held inside the loop.
void set_scalar_operand(backend::Loop& l, int k, DType dtype, const void* value);

// True when the memory of a and b may overlap (same storage, intersecting byte ranges).
bool may_overlap(const Array& a, const Array& b);
// True when a and b view exactly the same elements in the same layout.
bool same_view(const Array& a, const Array& b);

}  // namespace ember::detail
