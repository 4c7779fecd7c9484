// cuSOLVER, loaded at run time like the driver (DESIGN.md §4): one handle per device and stream,
// and the dense factorizations behind the CUDA backend's solver family.
#pragma once

#include "backend/backend.hpp"
#include "backend/cuda/runtime.hpp"

namespace ember::gpu {

// Runs one SolverCall (backend.hpp) on the current stream of `d`.
void cusolver_solver(DeviceState& d, const backend::SolverCall& call);

}  // namespace ember::gpu
