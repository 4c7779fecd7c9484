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

// NumPy's check on a float scalar written into an integer array (setitem, fill): NaN is a
// ValueError, an infinity an OverflowError, and a Python float is truncated and range-checked
// as a Python integer would be.
void check_float_to_int(const Scalar& value, DType to, const char* who);

// The number of elements of a slice with normalized bounds (Python's slice.indices) and a
// non-zero step in [-INT64_MAX, INT64_MAX]: written so that no step or bound overflows.
inline int64_t slice_length(int64_t start, int64_t stop, int64_t step) {
    if (step > 0) return start < stop ? (stop - start - 1) / step + 1 : 0;
    return stop < start ? (start - stop - 1) / -step + 1 : 0;
}

}  // namespace ember::detail
