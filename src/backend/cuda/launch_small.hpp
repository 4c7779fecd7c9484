// The launches of the small kernel families of the CUDA backend: iota (arange, linspace), random
// fills, gather and integer matrix products; their sources are generated under codegen/.
#pragma once

#include <cstdint>

#include "backend/backend.hpp"
#include "backend/cuda/runtime.hpp"
#include "ops/random.hpp"

namespace ember::gpu {

// 1-D out = start + i * step over a non-empty loop (Backend::iota).
void iota(DeviceState& d, const backend::Loop& l, const Scalar& start, const Scalar& step);
// n > 0 draws of distribution p stored as t (Backend::random).
void random(DeviceState& d, const rng::Params& p, void* out, DType t, int64_t n);
// out[i] = src[off[i]] for n > 0 elements of isz bytes (Backend::gather).
void gather(DeviceState& d, void* out, const void* src, const int64_t* off, int64_t n, int isz);
// A matrix product of an integer or bool dtype (cuBLAS has none).
void int_matmul(DeviceState& d, const backend::MatmulLoop& l);

}  // namespace ember::gpu
