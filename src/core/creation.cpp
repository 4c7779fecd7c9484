// Array creation: empty/zeros/ones/full, arange, linspace, eye, and copies from host memory.
#include <cmath>
#include <string>

#include "core/internal.hpp"
#include "ember/error.hpp"
#include "ember/ops.hpp"

namespace ember {

Array empty(const Shape& shape, DType dtype, Device device) {
    return Array::empty(shape, dtype, device);
}

Array zeros(const Shape& shape, DType dtype, Device device) {
    Array a = Array::empty(shape, dtype, device);
    a.fill(Scalar(int64_t(0)));
    return a;
}

Array ones(const Shape& shape, DType dtype, Device device) {
    Array a = Array::empty(shape, dtype, device);
    a.fill(Scalar(int64_t(1)));
    return a;
}

Array full(const Shape& shape, const Scalar& value, std::optional<DType> dtype, Device device) {
    DType natural = value.weak == WeakKind::none ? value.dtype : default_dtype(value.weak);
    if (value.weak == WeakKind::integer && value.dtype == DType::uint64) natural = DType::uint64;
    const DType t = dtype.value_or(natural);
    Array a = Array::empty(shape, t, device);
    alignas(16) unsigned char buf[16];
    value.store(t, buf, true, "ember.full");  // range check for Python integers
    a.fill(value);
    return a;
}

namespace {

bool is_int_like(const Scalar& s) {
    return s.weak == WeakKind::integer || s.weak == WeakKind::boolean ||
           (s.weak == WeakKind::none && !is_inexact(s.dtype));
}

}  // namespace

Array arange(const Scalar& start, const Scalar& stop, const Scalar& step,
             std::optional<DType> dtype, Device device) {
    const bool ints = is_int_like(start) && is_int_like(stop) && is_int_like(step);
    const bool cplx = start.weak == WeakKind::complex || stop.weak == WeakKind::complex ||
                      step.weak == WeakKind::complex;
    if (cplx) throw TypeError("ember.arange: complex arguments are not supported");
    DType t = dtype.value_or(ints ? DType::int64 : DType::float64);
    int64_t n;
    Scalar a = start, d = step;
    if (ints) {
        if (step.i == 0) throw ValueError("ember.arange: step must not be zero");
        const __int128 span = __int128(stop.i) - start.i;
        __int128 len = span / step.i + ((span % step.i) != 0 && ((span > 0) == (step.i > 0)));
        n = len > 0 ? int64_t(std::min<__int128>(len, INT64_MAX)) : 0;
    } else {
        const double s0 = start.as_double(), s1 = stop.as_double(), st = step.as_double();
        if (st == 0) throw ValueError("ember.arange: step must not be zero");
        const double len = std::ceil((s1 - s0) / st);
        if (std::isnan(len)) throw ValueError("ember.arange: arange arguments must be finite");
        if (len > 9.2e18) throw ValueError("ember.arange: maximum allowed size exceeded");
        n = len > 0 ? int64_t(len) : 0;
        a = Scalar(s0);
        d = Scalar(st);
    }
    Array out = Array::empty({n}, t, device);
    if (n == 0) return out;
    if (!ints && !is_inexact(t)) {
        // NumPy computes float ranges in float64 and then casts.
        Array f = arange(start, stop, step, DType::float64, device);
        out.assign(f);
        return out;
    }
    Array ops[1] = {out};
    backend::Loop l = detail::make_loop(ops);
    if (l.shape.empty()) {  // a single element: make_loop dropped the size-1 dim
        l.shape.push_back(1);
        l.strides[0].push_back(1);
    }
    backend::of(device, "ember.arange").iota(l, a, d);
    return out;
}

Array linspace(const Scalar& start, const Scalar& stop, int64_t num, std::optional<DType> dtype,
               Device device, bool endpoint) {
    if (num < 0)
        throw ValueError("ember.linspace: number of samples, " + std::to_string(num) +
                         ", must be non-negative");
    const bool cplx = start.weak == WeakKind::complex || stop.weak == WeakKind::complex ||
                      (start.weak == WeakKind::none && is_complex(start.dtype)) ||
                      (stop.weak == WeakKind::none && is_complex(stop.dtype));
    const DType work = cplx ? DType::complex128 : DType::float64;
    const DType t = dtype.value_or(work);
    Array out = Array::empty({num}, work, device);
    if (num > 0) {
        const int64_t div = endpoint ? num - 1 : num;
        const std::complex<double> a = start.c, b = stop.c;
        const std::complex<double> step = div > 0 ? (b - a) / double(div) : std::complex<double>(0);
        Array ops[1] = {out};
        backend::Loop l = detail::make_loop(ops);
        if (l.shape.empty()) {
            l.shape.push_back(1);
            l.strides[0].push_back(1);
        }
        Scalar s0 = cplx ? Scalar(a) : Scalar(a.real()),
               ds = cplx ? Scalar(step) : Scalar(step.real());
        backend::of(device, "ember.linspace").iota(l, s0, ds);
        if (endpoint && num > 1)
            out.slice(0, num - 1, num, 1).fill(cplx ? Scalar(b) : Scalar(b.real()));
    }
    return t == work ? out : out.astype(t);
}

Array eye(int64_t n, std::optional<int64_t> m, int64_t k, DType dtype, Device device) {
    const int64_t cols = m.value_or(n);
    if (n < 0 || cols < 0)
        throw ValueError("ember.eye: negative dimensions are not allowed (" + std::to_string(n) +
                         ", " + std::to_string(cols) + ")");
    Array a = zeros({n, cols}, dtype, device);
    Array d = a.diagonal_view(k);
    if (d.size()) d.fill(Scalar(int64_t(1)));
    return a;
}

Array from_host(const void* data, const Shape& shape, DType dtype, Device device) {
    Array a = Array::empty(shape, dtype, device);
    if (a.nbytes())
        backend::of(device, "ember.from_host")
            .copy_from_host(a.data(), data, size_t(a.nbytes()), device.index);
    return a;
}

}  // namespace ember
