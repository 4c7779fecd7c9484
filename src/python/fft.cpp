// Bindings of ember::fft_last_axis (ember._core._fft_last_axis) and the cuFFT plan cache, and the
// host FFT the CPU backend runs: NumPy's pocketfft on zero-copy views of the rows.
// python/ember/fft.py builds the NumPy / Array API fft functions on them.
#include "ember/fft.hpp"

#include <string>

#include "python/common.hpp"

namespace ember::python {

namespace {

using namespace nb::literals;

// A writable NumPy view (rows x len) of host memory, for the duration of one call.
nb::object host_rows(const void* p, int64_t rows, int64_t len, bool cplx, bool dbl) {
    static const char* names[2][2] = {{"float32", "float64"}, {"complex64", "complex128"}};
    const int64_t isz = (cplx ? 2 : 1) * (dbl ? 8 : 4);
    nb::object mv = nb::steal(PyMemoryView_FromMemory(static_cast<char*>(const_cast<void*>(p)),
                                                      Py_ssize_t(rows * len * isz), PyBUF_WRITE));
    if (!mv.is_valid()) throw nb::python_error();
    static nb::object& frombuffer =
        *new nb::object(nb::module_::import_("numpy").attr("frombuffer"));  // kept past exit
    return frombuffer(mv, names[cplx][dbl]).attr("reshape")(rows, len);
}

// The host FFT: numpy.fft's fft / ifft / rfft / irfft with out= on views of the rows. The inverse
// ones run with norm="forward", which is no scaling there: the transforms are unnormalized.
void numpy_host_fft(const HostFftCall& c) {
    nb::gil_scoped_acquire gil;
    try {
        static nb::object& np_fft = *new nb::object(nb::module_::import_("numpy.fft"));
        const int64_t in_len = c.kind == FftKind::c2r ? c.n / 2 + 1 : c.n;
        const int64_t out_len = c.kind == FftKind::r2c ? c.n / 2 + 1 : c.n;
        const nb::object in = host_rows(c.in, c.batch, in_len, c.kind != FftKind::r2c, c.dbl);
        const nb::object out = host_rows(c.out, c.batch, out_len, c.kind != FftKind::c2r, c.dbl);
        const char* fn = c.kind == FftKind::r2c   ? "rfft"
                         : c.kind == FftKind::c2r ? "irfft"
                         : c.inverse              ? "ifft"
                                                  : "fft";
        np_fft.attr(fn)(in, c.n, -1, c.inverse ? "forward" : "backward", "out"_a = out);
    } catch (nb::python_error& e) {
        throw Error(std::string("ember.fft: NumPy's pocketfft failed: ") + e.what());
    }
}

FftKind to_kind(const std::string& s) {
    if (s == "c2c") return FftKind::c2c;
    if (s == "r2c") return FftKind::r2c;
    if (s == "c2r") return FftKind::c2r;
    throw ValueError("ember.fft: kind must be 'c2c', 'r2c' or 'c2r', got '" + s + "'");
}

}  // namespace

void bind_fft(nb::module_& m) {
    set_host_fft(&numpy_host_fft);
    m.def(
        "_fft_last_axis",
        [](nb::handle x, const std::string& kind, int64_t n, bool inverse) {
            if (!is_ndarray(x)) throw TypeError("ember.fft: expected an ember.ndarray");
            const Array& a = as_array(x);
            const FftKind k = to_kind(kind);
            return wrap(heavy(a.size(), fft_last_axis, a, k, n, inverse));
        },
        "x"_a, "kind"_a, "n"_a, "inverse"_a,
        "Unnormalized batched 1-D FFT along the last axis (cuFFT on CUDA devices, NumPy's "
        "pocketfft "
        "on the CPU); kind is 'c2c', 'r2c' or 'c2r', the last axis is cropped or zero-padded to n "
        "(n//2+1 for 'c2r').");
    m.def("_fft_plan_cache_size", &fft_plan_cache_size);
    m.def("_fft_plan_cache_clear", [] {
        nb::gil_scoped_release unlocked;  // waits for the devices the plans were used on
        fft_plan_cache_clear();
    });
}

}  // namespace ember::python
