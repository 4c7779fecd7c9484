// What the CUDA backend tells ember.debug and ember.profiler (ember/debug.hpp): events of
// transfers, kernel loads and pool growth; the ring of recent launches that names the op of an
// asynchronous fault; CUDA-event timing of each launch while the profiler runs; NVTX ranges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "backend/cuda/loader.hpp"
#include "ember/debug.hpp"

namespace ember::gpu {

struct DeviceState;

// A host<->device copy of n bytes (direction 1: to the device, 2: to the host; a read is also
// a synchronization). May throw: a strict mode's "error".
void note_transfer(int dev, const void* host, size_t n, int direction);
// A kernel made available by `kind` (compile, disk_load, shipped_load), in `ms`; says why it was
// needed (the first kernel of its op, a new dtype or a new layout class).
void note_kernel_load(debug::EventKind kind, int dev, const std::string& name, double ms);
// Pool growth: the reserved memory of d grew from `reserved_before` for a `bytes` request.
void note_alloc(DeviceState& d, size_t bytes, size_t reserved_before);
void note_oom_retry(DeviceState& d, size_t bytes);

// The names of loaded kernels, by function (for the ring and the profiler).
void name_kernel(CUfunction f, const std::string& name);
std::string kernel_name(CUfunction f);

// The ring of the last launches: each launch's device, kernel, op and Python line (a few
// nanoseconds and one location lookup). note_synced marks every launch on `dev` so far as
// finished without error (a synchronization succeeded).
uint64_t note_launch(int dev, CUfunction f, std::string_view who);
void note_synced(int dev);
// A launch the driver refused (it never ran, so it cannot have faulted).
void forget_launch(uint64_t seq);
// For an error of a synchronizing call: the launches that may have faulted (those since the
// last successful synchronization of the device, the latest last), and, for the errors that
// destroy the context, that it is lost and how to go on. Empty when there is nothing to say.
std::string describe_fault(CUresult r);
// Whether the context was lost to an earlier fault, and that fault's description.
const std::string* lost_context();

// Profiler timing of one launch: CUDA events recorded around it on stream s.
CUevent profile_before(DeviceState& d, CUstream s);
void profile_after(DeviceState& d, CUstream s, CUfunction f, CUevent before);
// ... of a library call (cuBLAS, cuDNN through Python): its row is named `label`.
void profile_after(DeviceState& d, CUstream s, std::string label, CUevent before);

// NVTX (Nsight Systems' ranges), from libnvtx3interop / libnvToolsExt when one loads.
bool nvtx_available();
void nvtx_push(const char* name);
void nvtx_pop();
void nvtx_mark(const char* name);

}  // namespace ember::gpu
