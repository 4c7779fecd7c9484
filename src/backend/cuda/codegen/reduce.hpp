// Reduction kernels of the reduction table's rows over kept and reduced dimensions: the kernel
// description and its source generation; the policies are src/ops/reduce.hpp's, the geometry's
// device layout is reduce.cuh.
#pragma once

#include <cstdint>
#include <string>

#include "backend/cuda/codegen/common.hpp"
#include "ember/dtype.hpp"
#include "ember/reducetable.hpp"

namespace ember::gpu {

// The by-value geometry of a reduction: kept dims (input and output strides) and reduced dims
// (input strides), innermost first, in elements. The reduce prelude declares the same layout.
struct ReduceGeometry {
    int64_t kshape[max_strided_dims], kin[max_strided_dims], kout[max_strided_dims];
    int64_t rshape[max_strided_dims], rin[max_strided_dims];
};

// One reduction kernel. Threads per output: 1 (each thread folds its output's values serially;
// used when the innermost input dim is kept) or 32/256 (a group of threads folds one output and
// finishes with a fixed-order tree). The reduced extent may be split into segments (grid.y):
// the first pass writes partial accumulators, a second pass (partial_in) combines them in order.
struct ReduceKernel {
    ops::ReduceOp op{};
    DType in{}, acc{}, out{};  // acc: never 16-bit (those accumulate in float32)
    int tpo = 1;
    int nk = 0, nr = 0;  // kept and reduced dims, 0..max_strided_dims
    int vec = 1;         // vector loads (tpo > 1, nr == 1 with unit stride)
    bool partial_in = false, partial_out = false;
    bool index64 = false;
};

std::string reduce_kernel_name(const ReduceKernel& k);
std::string reduce_kernel_text(const ReduceKernel& k);
Program reduce_program(const ReduceKernel& k);

}  // namespace ember::gpu
