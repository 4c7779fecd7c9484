// Launch geometry shared by ember's own kernels and user kernels (ember.ElementwiseKernel,
// ReductionKernel): collapsing the dimensions of strided operands, and grid-stride grid sizes.
#pragma once

#include <cstdint>

#include "ember/shape.hpp"

namespace ember {

// Appends dims order[0..n) of `shape` (innermost first) to out_shape and out_strides[k] for the
// nops operands whose stride along dim d is stride(k, d). A dim joins the innermost group so far
// when every operand steps over the pair as over one longer dim (its stride is the group's stride
// times the group's extent), so strided loops index fewer dims. The core's Loop builder passes
// its stride-sorted dims; the user-kernel generators pass C order. Inline: the Loop builder is on
// every op's host path.
template <class StrideOf>
inline void collapse_dims(const Shape& shape, const int64_t* order, int n, int nops,
                          StrideOf stride, Shape& out_shape, Strides* out_strides) {
    for (int i = 0; i < n; ++i) {
        const int64_t d = order[i];
        const int64_t extent = shape[size_t(d)];
        if (!out_shape.empty()) {
            bool merge = true;
            for (int k = 0; k < nops && merge; ++k)
                merge = stride(k, d) == out_strides[k].back() * out_shape.back();
            if (merge) {
                out_shape.back() *= extent;
                continue;
            }
        }
        out_shape.push_back(extent);
        for (int k = 0; k < nops; ++k)
            out_strides[k].push_back(stride(k, d));
    }
}

namespace cuda {

// The number of blocks of `block` threads for a grid-stride loop over `work` items on `device`:
// enough blocks for the work, at most one wave of resident blocks (the device's multiprocessors
// times the blocks of this size each holds), as the CUDA backend sizes its own grids. At least 1.
// ValueError when CUDA is unavailable.
unsigned grid_size(int device, int64_t work, int block);

}  // namespace cuda

}  // namespace ember
