// FFTs in the C++ core: batched 1-D transforms along the last axis, on any device (the backend's
// fft family: cuFFT on CUDA devices, a registered host FFT on the CPU). Python's ember.fft builds
// NumPy's fft API on it, and registers NumPy's pocketfft as the host FFT.
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

// The DFT along the last axis of `x` (an array of at least one dimension), times `scale`:
// scale * sum_j x[..., j] * exp(-+2*pi*i*j*k/n), the exponent's sign + when `inverse`. The last
// axis is first cropped or zero-padded to n (n/2+1 for c2r); c2r ignores the imaginary parts of
// the zero and (even n) Nyquist terms, as NumPy does. The scale multiplies the real and imaginary
// parts, in the result's precision; a normalization is passed here rather than applied after, so
// that the CPU gives NumPy's bits (pocketfft scales inside its passes). The result is a new
// C-contiguous array on x's device (on a CUDA device computed on its current stream). n >= 1.
// TypeError for a dtype the kind does not take; ValueError for n < 1 or a direction the kind does
// not have; Error for a CPU array when no host FFT is registered (set_host_fft).
Array fft_last_axis(const Array& x, FftKind kind, int64_t n, bool inverse, double scale = 1.0);

// cuFFT plans ember holds (at most 32, least recently used evicted first), and releasing them.
int fft_plan_cache_size();
void fft_plan_cache_clear();

// ---- the host FFT ------------------------------------------------------------------------------
// The CPU backend's transforms come from a function registered at run time, so that the library
// needs no FFT library of its own: Python's ember registers NumPy's pocketfft on import. One call
// is `batch` transforms of length n, each row contiguous and the rows one after another in host
// memory: c2c batch x n -> batch x n (`inverse`: exponent +2*pi*i), r2c batch x n real -> batch x
// (n/2+1) complex, c2r batch x (n/2+1) complex -> batch x n real; the results times `scale`
// (1: unnormalized). `dbl` picks complex128/float64 over complex64/float32. `in` may be
// overwritten by a c2r transform.
struct HostFftCall {
    FftKind kind = FftKind::c2c;
    bool inverse = false;
    bool dbl = false;
    int64_t n = 0, batch = 0;
    double scale = 1.0;
    const void* in = nullptr;
    void* out = nullptr;
};
using HostFft = void (*)(const HostFftCall& call);
// Registers the host FFT (nullptr removes it); returns the previous one. Thread-safe.
HostFft set_host_fft(HostFft fn);
HostFft host_fft();

}  // namespace ember
