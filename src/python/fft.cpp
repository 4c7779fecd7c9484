// Bindings of ember::fft_last_axis (ember._core._fft_last_axis) and the cuFFT plan cache;
// python/ember/fft.py builds the NumPy / Array API fft functions on them.
#include "ember/fft.hpp"

#include <string>

#include "python/common.hpp"

namespace ember::python {

namespace {

using namespace nb::literals;

FftKind to_kind(const std::string& s) {
    if (s == "c2c") return FftKind::c2c;
    if (s == "r2c") return FftKind::r2c;
    if (s == "c2r") return FftKind::c2r;
    throw ValueError("ember.fft: kind must be 'c2c', 'r2c' or 'c2r', got '" + s + "'");
}

}  // namespace

void bind_fft(nb::module_& m) {
    m.def(
        "_fft_last_axis",
        [](nb::handle x, const std::string& kind, int64_t n, bool inverse) {
            if (!is_ndarray(x)) throw TypeError("ember.fft: expected an ember.ndarray");
            const Array& a = as_array(x);
            const FftKind k = to_kind(kind);
            return wrap(heavy(a.size(), fft_last_axis, a, k, n, inverse));
        },
        "x"_a, "kind"_a, "n"_a, "inverse"_a,
        "Unnormalized batched 1-D FFT along the last axis of a CUDA array (cuFFT); kind is 'c2c', "
        "'r2c' or 'c2r', the last axis is cropped or zero-padded to n (n//2+1 for 'c2r').");
    m.def("_fft_plan_cache_size", &fft_plan_cache_size);
    m.def("_fft_plan_cache_clear", [] {
        nb::gil_scoped_release unlocked;  // waits for the devices the plans were used on
        fft_plan_cache_clear();
    });
}

}  // namespace ember::python
