// The sort family on the GPU: an LSD radix sort (8-bit digits, stable) and binary searches, as
// generated NVRTC kernels, one program per key dtype.
#pragma once

#include "backend/backend.hpp"
#include "backend/cuda/runtime.hpp"

namespace ember::gpu {

// Runs a SortCall (backend.hpp) on the current stream of `d`; scratch memory from d's pool.
void sort(DeviceState& d, const backend::SortCall& call);
// Runs a SearchCall on the current stream of `d`: one thread per value.
void searchsorted(DeviceState& d, const backend::SearchCall& call);

// Backend::scatter_add on the GPU, deterministic: the offsets sorted stably (carrying the source
// positions), then each destination's values added in input order by one thread.
void scatter_add(DeviceState& d, void* dst, const void* src, const int64_t* offsets, int64_t n,
                 DType t);
Program scatter_add_program(DType t);

// The sort program for keys of dtype `t` and its kernels' names (for the compile tests).
Program sort_program(DType t);
std::string sort_kernel_name(DType t, const char* kernel);

}  // namespace ember::gpu
