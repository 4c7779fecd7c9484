// Internal hooks of the CUDA interop layer (src/backend/cuda/interop.cpp) for the allocator.
#pragma once

#include "backend/cuda/runtime.hpp"

namespace ember::gpu {

// Called by deallocate before block `p` (allocated on `alloc_stream`) is cached or freed: makes
// alloc_stream wait for the work queued so far on the streams recorded for `p` with
// ember::cuda::record_stream, and forgets them. Cheap when nothing was ever recorded.
void wait_recorded_streams(DeviceState& d, void* p, CUstream alloc_stream) noexcept;

}  // namespace ember::gpu
