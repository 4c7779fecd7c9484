// Scans, stream compaction and deterministic scatter (assignment) on the GPU: NVRTC kernels of
// ember's own (block scans with a fixed combining order, a three-phase scan for long rows).
#pragma once

#include <cstdint>

#include "backend/backend.hpp"
#include "backend/cuda/runtime.hpp"

namespace ember::gpu {

// Inclusive scans of `rows` contiguous rows of `len` elements (Backend::scan) for int64, float32
// and float64; false for other dtypes (the caller takes the host path).
bool scan(DeviceState& d, backend::ScanOp op, DType t, void* out, const void* in, int64_t rows,
          int64_t len);
// Backend::compact on the GPU (itemsize 1, 2, 4, 8 or 16; src null: int64 positions).
void compact(DeviceState& d, void* out, const void* src, const uint8_t* mask, int64_t n,
             int64_t row, int itemsize);
// Backend::scatter: where offsets repeat, a marking pass keeps the largest i per destination
// (atomicMax into a scratch array over [lo, lo + extent)), then a write pass stores the winners.
void scatter(DeviceState& d, void* dst, const void* src, const int64_t* offsets, int64_t n,
             int itemsize, int64_t lo, int64_t extent, bool unique);

// The translation units (for the snapshot tests and for compiling them without a GPU).
Program scan_program(backend::ScanOp op, DType t);
Program compact_program(int itemsize);
Program scatter_program(int itemsize);

}  // namespace ember::gpu
