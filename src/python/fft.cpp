// Bindings of ember::fft_last_axis (ember._core._fft_last_axis) and the cuFFT plan cache, and the
// host FFT the CPU backend runs: NumPy's pocketfft on zero-copy views of the rows, normalized
// inside pocketfft as numpy.fft does it.
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

// numpy.fft's own transforms, the pocketfft ufuncs its functions call with their normalization
// factor (numpy.fft._pocketfft_umath, NumPy 2): fft, ifft, rfft_n_even / rfft_n_odd and irfft,
// each (rows, factor) -> rows. None when this NumPy has no such module.
nb::object& pocketfft_ufuncs() {
    static nb::object& m = *new nb::object([]() -> nb::object {  // kept past exit
        try {
            return nb::module_::import_("numpy.fft._pocketfft_umath");
        } catch (nb::python_error&) {
            return nb::none();
        }
    }());
    return m;
}

// The host FFT: numpy.fft's pocketfft with out= on views of the rows. The scale goes in as the
// factor numpy.fft's functions pass for their norm, in the call's precision, so that pocketfft
// applies it inside its passes and the results are NumPy's bits (NumPy computes a float32 real
// input's fft in double with a float32 factor, which numpy.fft's public norm argument cannot give
// for the complex128 rows ember passes then). Without that module: numpy.fft's public functions,
// unnormalized, and the scale multiplied afterwards.
void numpy_host_fft(const HostFftCall& c) {
    nb::gil_scoped_acquire gil;
    try {
        static nb::object& np = *new nb::object(nb::module_::import_("numpy"));
        const int64_t in_len = c.kind == FftKind::c2r ? c.n / 2 + 1 : c.n;
        const int64_t out_len = c.kind == FftKind::r2c ? c.n / 2 + 1 : c.n;
        const bool cplx_out = c.kind != FftKind::c2r;
        const nb::object in = host_rows(c.in, c.batch, in_len, c.kind != FftKind::r2c, c.dbl);
        const nb::object out = host_rows(c.out, c.batch, out_len, cplx_out, c.dbl);
        if (const nb::object& u = pocketfft_ufuncs(); !u.is_none()) {
            const char* fn = c.kind == FftKind::r2c ? (c.n % 2 == 0 ? "rfft_n_even" : "rfft_n_odd")
                             : c.kind == FftKind::c2r ? "irfft"
                             : c.inverse              ? "ifft"
                                                      : "fft";
            // numpy.fft passes the integer 1 when it does not scale, which makes its ufuncs
            // compute in double precision even for single precision rows
            const nb::object fct =
                c.scale == 1.0 ? nb::int_(1) : np.attr(c.dbl ? "float64" : "float32")(c.scale);
            u.attr(fn)(in, fct, "out"_a = out);
            return;
        }
        static nb::object& np_fft = *new nb::object(nb::module_::import_("numpy.fft"));
        const char* fn = c.kind == FftKind::r2c   ? "rfft"
                         : c.kind == FftKind::c2r ? "irfft"
                         : c.inverse              ? "ifft"
                                                  : "fft";
        // numpy.fft's norm names the direction scaled by 1/n: these do not scale
        np_fft.attr(fn)(in, c.n, -1, c.inverse ? "forward" : "backward", "out"_a = out);
        if (c.scale != 1.0)  // in the result's precision, on its real and imaginary parts
            host_rows(c.out, c.batch, out_len * (cplx_out ? 2 : 1), false, c.dbl)
                .attr("__imul__")(c.scale);
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
        [](nb::handle x, const std::string& kind, int64_t n, bool inverse, double scale) {
            if (!is_ndarray(x)) throw TypeError("ember.fft: expected an ember.ndarray");
            const Array& a = as_array(x);
            const FftKind k = to_kind(kind);
            return wrap(heavy(a.size(), fft_last_axis, a, k, n, inverse, scale));
        },
        "x"_a, "kind"_a, "n"_a, "inverse"_a, "scale"_a = 1.0,
        "Batched 1-D FFT along the last axis times scale (cuFFT on CUDA devices, NumPy's "
        "pocketfft on the CPU); kind is 'c2c', 'r2c' or 'c2r', the last axis is cropped or "
        "zero-padded to n (n//2+1 for 'c2r').");
    m.def("_fft_plan_cache_size", &fft_plan_cache_size);
    m.def("_fft_plan_cache_clear", [] {
        nb::gil_scoped_release unlocked;  // waits for the devices the plans were used on
        fft_plan_cache_clear();
    });
}

}  // namespace ember::python
