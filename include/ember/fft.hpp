// FFTs in the C++ core: batched 1-D transforms along the last axis of a CUDA array (cuFFT).
// Python's ember.fft builds NumPy's fft API on it for CUDA arrays and uses NumPy's pocketfft for
// CPU arrays; the C++ CPU FFT does not exist yet.
#pragma once

#include <cstdint>

#include "ember/array.hpp"

namespace ember {

enum class FftKind : uint8_t {
    c2c,  // complex64/complex128 (..., m) -> (..., n) of the same dtype, forward or inverse
    r2c,  // float32/float64 (..., m) -> (..., n/2+1) complex of that precision, forward only
    c2r,  // complex (..., m) -> (..., n) real of that precision, inverse only: the input holds the
          // first n/2+1 terms of a Hermitian-symmetric spectrum
};

// The unnormalized DFT along the last axis of `x` (a CUDA array of at least one dimension):
// sum_j x[..., j] * exp(-+2*pi*i*j*k/n), the exponent's sign + when `inverse`. The last axis is
// first cropped or zero-padded to n (n/2+1 for c2r); c2r ignores the imaginary parts of the zero
// and (even n) Nyquist terms, as NumPy does. The result is a new C-contiguous array on x's
// device, computed on its current stream. n >= 1. TypeError for a dtype the kind does not take;
// ValueError for a CPU array, n < 1 or a direction the kind does not have.
Array fft_last_axis(const Array& x, FftKind kind, int64_t n, bool inverse);

// cuFFT plans ember holds (at most 32, least recently used evicted first), and releasing them.
int fft_plan_cache_size();
void fft_plan_cache_clear();

}  // namespace ember
