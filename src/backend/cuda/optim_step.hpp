// The fused optimizer step on the GPU (src/ops/optim.hpp's math in one NVRTC kernel per dtype).
#pragma once

#include "backend/backend.hpp"
#include "backend/cuda/runtime.hpp"

namespace ember::gpu {

// Runs one OptimizerStep (backend.hpp) on the current stream of `d`: one launch per 48 tensors.
void optimizer_step(DeviceState& d, const backend::OptimizerStep& step);

// The kernel's translation unit for parameters of dtype `t` (for the snapshot tests).
Program optimizer_step_program(DType t);

}  // namespace ember::gpu
