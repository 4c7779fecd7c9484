// cuBLAS, loaded at run time like the driver (DESIGN.md §4): one handle per device and stream,
// and the batched GEMM behind the CUDA backend's matmul family.
#pragma once

#include "backend/backend.hpp"
#include "backend/cuda/runtime.hpp"

namespace ember::gpu {

// The floating and complex dtypes of a MatmulLoop through cublasGemmStridedBatchedEx_64 on the
// current stream; float32 uses TF32 tensor cores when the matmul precision is "high".
void cublas_matmul(DeviceState& d, const backend::MatmulLoop& l);

}  // namespace ember::gpu
