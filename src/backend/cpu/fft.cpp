// The CPU backend's FFT family: the host FFT registered at run time (ember::set_host_fft), so
// that no FFT library is linked into the core; without one a CPU transform raises. The scale goes
// to the host FFT with the transform, so that it can apply it the way its library does.
#include <atomic>

#include "backend/cpu/fft.hpp"
#include "ember/error.hpp"
#include "ember/fft.hpp"

namespace ember {

namespace {
std::atomic<HostFft> registered{nullptr};
}  // namespace

HostFft set_host_fft(HostFft fn) { return registered.exchange(fn); }
HostFft host_fft() { return registered.load(); }

namespace host {

void fft(const backend::FftCall& c) {
    const HostFft fn = registered.load();
    if (!fn)
        throw Error(
            "ember::fft_last_axis: no host FFT is registered for CPU arrays (register one with "
            "ember::set_host_fft; Python's ember registers NumPy's pocketfft)");
    HostFftCall h;
    h.kind = c.kind;
    h.inverse = c.inverse;
    h.dbl = c.dtype == DType::float64 || c.dtype == DType::complex128;
    h.n = c.n;
    h.batch = c.batch;
    h.scale = c.scale;
    h.in = c.in;
    h.out = c.out;
    fn(h);
}

}  // namespace host

}  // namespace ember
