// ember::fft_last_axis: argument checks, the input layout the backends take (contiguous rows,
// cropped or zero-padded) and the output; the transforms and their scaling are the backend's fft
// family.
#include "ember/fft.hpp"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>

#include "backend/backend.hpp"
#include "core/record.hpp"
#include "ember/error.hpp"
#include "ember/ops.hpp"

namespace ember {

namespace {

const char* kind_name(FftKind k) {
    switch (k) {
        case FftKind::c2c:
            return "c2c";
        case FftKind::r2c:
            return "r2c";
        case FftKind::c2r:
            return "c2r";
    }
    return "?";
}

// The real parts' view of a complex array: shape (..., 2), element [..., 1] the imaginary part.
Array real_view(const Array& c) {
    const int nd = c.ndim();
    Shape s(size_t(nd + 1));
    Strides st(size_t(nd + 1));
    for (int i = 0; i < nd; ++i) {
        s[size_t(i)] = c.shape()[size_t(i)];
        st[size_t(i)] = 2 * c.strides()[size_t(i)];
    }
    s[size_t(nd)] = 2;
    st[size_t(nd)] = 1;
    return Array(c.storage(), 2 * c.offset(), std::move(s), std::move(st), real_dtype(c.dtype()));
}

}  // namespace

Array fft_last_axis(const Array& x, FftKind kind, int64_t n, bool inverse, double scale) {
    const std::string who = std::string("ember.fft (") + kind_name(kind) + ")";
    if (!x.defined()) throw ValueError(who + ": the array is undefined");
    if (x.grad_meta() && autograd::detail::should_record(x)) [[unlikely]] {
        Array r;
        {
            autograd::NoGradGuard ng;
            r = fft_last_axis(x, kind, n, inverse, scale);
        }
        const Array* ins[1] = {&x};
        Array* outs[1] = {&r};
        autograd::not_implemented("ember.fft", ins, outs);
        return r;
    }
    if (x.ndim() < 1) throw ValueError(who + ": the array must have at least one dimension");
    if (n < 1)
        throw ValueError(who + ": invalid number of FFT data points (" + std::to_string(n) + ")");
    const DType t = x.dtype();
    const std::string tn(name(t));
    switch (kind) {
        case FftKind::c2c:
        case FftKind::c2r:
            if (t != DType::complex64 && t != DType::complex128)
                throw TypeError(who + ": takes complex64 or complex128, got " + tn);
            if (kind == FftKind::c2r && !inverse)
                throw ValueError(who + ": a complex-to-real transform is an inverse one");
            break;
        case FftKind::r2c:
            if (t != DType::float32 && t != DType::float64)
                throw TypeError(who + ": takes float32 or float64, got " + tn);
            if (inverse) throw ValueError(who + ": a real-to-complex transform is a forward one");
            break;
    }
    const int last = x.ndim() - 1;
    const int64_t m = x.shape()[size_t(last)];
    const int64_t in_len = kind == FftKind::c2r ? n / 2 + 1 : n;
    const int64_t out_len = kind == FftKind::r2c ? n / 2 + 1 : n;
    const DType out_t = kind == FftKind::c2c   ? t
                        : kind == FftKind::r2c ? complex_dtype(t)
                                               : real_dtype(t);
    Shape os = x.shape();
    os[size_t(last)] = out_len;
    Array out = Array::empty(os, out_t, x.device());
    if (out.size() == 0) return out;
    const int64_t batch = out.size() / out_len;

    // The rows the backend reads: x itself when it already has that layout, else a copy (always
    // for c2r, whose input cuFFT overwrites, and for real input not aligned as if it were
    // complex, which cuFFT's r2c needs).
    const bool aligned = uintptr_t(x.data()) % uintptr_t(2 * x.itemsize()) == 0;
    Array in = x;
    if (m != in_len || !x.is_contiguous() || kind == FftKind::c2r ||
        (kind == FftKind::r2c && !aligned)) {
        Shape is = x.shape();
        is[size_t(last)] = in_len;
        in = Array::empty(is, t, x.device());
        const int64_t k = std::min(m, in_len);
        if (k < in_len) in.slice(last, k, in_len, 1).fill(Scalar(0.0));
        if (k > 0) in.slice(last, 0, k, 1).assign(x.slice(last, 0, k, 1));
        if (kind == FftKind::c2r) {
            // NumPy's pocketfft reads only the real parts of the terms that must be real; cuFFT's
            // result would depend on their imaginary parts, so drop them.
            const Array im = real_view(in).slice(last + 1, 1, 2, 1);
            im.slice(last, 0, 1, 1).fill(Scalar(0.0));
            if (n % 2 == 0 && n / 2 < k) im.slice(last, n / 2, n / 2 + 1, 1).fill(Scalar(0.0));
        }
    }
    if (n == 1) {
        // A 1-point DFT is the identity (the real part for c2r): no plan needed.
        out.assign(in);
        if (scale != 1.0) {
            const Array parts = is_complex(out_t) ? real_view(out) : out;
            const Operand xs[2] = {parts, Scalar(scale)};
            map(ops::OpId::multiply, std::span<const Operand>(xs), &parts);
        }
        return out;
    }
    backend::FftCall c;
    c.kind = kind;
    c.inverse = inverse;
    c.device = x.device().index;
    c.dtype = t;
    c.n = n;
    c.batch = batch;
    c.scale = scale;
    c.in = in.data();
    c.out = out.data();
    backend::of(x.device(), "ember.fft").fft(c);
    return out;
}

}  // namespace ember
