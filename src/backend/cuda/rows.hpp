// Row-wise softmax / log_softmax / cross-entropy / layer norm on the GPU (backend.hpp's
// RowsCall): NVRTC kernels with one warp (rows up to 512) or one 256-thread block per row.
#pragma once

#include <string>

#include "backend/backend.hpp"
#include "backend/cuda/runtime.hpp"

namespace ember::gpu {

// How one rows kernel is specialized. `op` is a backend::RowsOp, or rows_ln_partials for the
// column sums of layer_norm_backward (dgamma, dbeta partials). tpr: threads per row (32 or
// 256); k: vector chunks of `vec` elements per thread held in registers (0: the row is streamed
// from memory, read twice).
inline constexpr int rows_ln_partials = 15;
struct RowsKernel {
    int op = 0;
    DType dtype = DType::float32;
    int tpr = 256;
    int k = 0;
    int vec = 1;
};

// The kernel chosen for a call (from its op, dtype, row length and alignment).
RowsKernel rows_kernel_for(const backend::RowsCall& c, int op);
std::string rows_kernel_name(const RowsKernel& k);
Program rows_program(const RowsKernel& k);

// Runs one RowsCall on the current stream of `d`.
void rows(DeviceState& d, const backend::RowsCall& call);

}  // namespace ember::gpu
