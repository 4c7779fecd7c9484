// cuFFT, loaded at run time like the driver (DESIGN.md §4): an LRU cache of batched 1-D plans per
// device whose work areas come from ember's pool, and the transforms of the CUDA backend's fft
// family (backend.hpp's FftCall). The public plan-cache functions of ember/fft.hpp live here too.
#pragma once

#include <cstdint>

#include "ember/fft.hpp"

namespace ember::gpu {

// `batch` unnormalized 1-D transforms of length `n` on cuda:`device`'s current stream, each row
// contiguous and the rows one after another: c2c batch x n -> batch x n (`inverse`: exponent
// +2*pi*i), r2c batch x n real -> batch x (n/2+1) complex, c2r batch x (n/2+1) complex -> batch x n
// real. `dbl` picks complex128/float64 over complex64/float32. c2r overwrites `in` (cuFFT does):
// pass a scratch copy. Asynchronous; CudaError naming the cuFFT call and status on failure.
void cufft_execute(int device, FftKind kind, bool dbl, int64_t n, int64_t batch, const void* in,
                   void* out, bool inverse);

// Plans held by the cache (all devices), and dropping them (waits for the devices first).
int cufft_cached_plans();
void cufft_clear_plans();

}  // namespace ember::gpu
