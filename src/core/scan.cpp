// Scans (cumsum, cumprod) and mask compaction (nonzero, x[mask]): the front-ends of the backend's
// scan and compact families (cumsum's backward is autograd's, src/autograd/scan.cpp).
#include <cstring>
#include <string>

#include "backend/backend.hpp"
#include "core/internal.hpp"
#include "core/record.hpp"
#include "ember/debug.hpp"
#include "ember/error.hpp"
#include "ember/ops.hpp"

namespace ember {

namespace {

using backend::ScanOp;

DType scan_default(DType in) {
    if (in == DType::bool_ || kind(in) == Kind::signed_int) return DType::int64;
    if (kind(in) == Kind::unsigned_int) return DType::uint64;
    return in;
}

// What the backend scans in on `dev`: on the CPU every dtype but the 16-bit floats as itself
// (integers wrap like NumPy's, so cumsum(x, dtype=int8) needs no wide temporary); on a GPU
// integers of 4 and 8 bytes as themselves and narrower ones in int64 (the same values modulo
// 2^n); 16-bit floats in float32.
DType scan_compute(DType out, const Device& dev) {
    switch (kind(out)) {
        case Kind::boolean:
        case Kind::signed_int:
        case Kind::unsigned_int:
            return dev.is_cpu() || itemsize(out) >= 4 ? out : DType::int64;
        case Kind::floating:
            return out == DType::float64 ? DType::float64 : DType::float32;
        case Kind::complex:
            return out;
    }
    return out;
}

Array run_scan(ScanOp op, const Array& x, std::optional<int64_t> axis, std::optional<DType> dtype,
               const char* who) {
    if (!x.defined()) throw ValueError(std::string(who) + ": undefined array");
    const Array src = axis ? x : x.reshape({x.size()});
    const int ax = axis ? normalize_axis(*axis, src.ndim(), who) : 0;
    const DType out_t = dtype.value_or(scan_default(x.dtype()));
    if (is_complex(src.dtype()) && !is_complex(out_t))
        throw TypeError(std::string(who) + ": cannot accumulate complex values in dtype " +
                        std::string(name(out_t)));
    const DType comp = scan_compute(out_t, x.device());
    const int last = src.ndim() - 1;
    Array moved = ax == last ? src : src.swapaxes(ax, last);
    // Integers and bools scanned wider (on a GPU) take the output dtype's values first, so the
    // wide sum equals NumPy's step-by-step one modulo 2^n (and a bool sum is logical or).
    const bool narrow = comp != out_t && kind(out_t) != Kind::floating;
    Array in = (narrow ? moved.astype(out_t, false) : moved).astype(comp, false).contiguous();
    // A cast or a contiguous copy is already a fresh array: scanned in place.
    Array out = in.data() != moved.data() ? in : Array::empty(in.shape(), comp, x.device());
    const int64_t len = in.shape()[size_t(last)];
    if (out.size() > 0)
        backend::of(x.device(), who)
            .scan(op, comp, out.data(), in.data(), out.size() / len, len, x.device().index);
    if (comp != out_t) out = out.astype(out_t);
    return ax == last ? out : out.swapaxes(ax, last);
}

}  // namespace

Array cumsum(const Array& x, std::optional<int64_t> axis, std::optional<DType> dtype) {
    const char* who = "ember.cumsum";
    if (x.defined() && x.grad_meta() && autograd::detail::should_record(x)) [[unlikely]]
        return autograd::detail::cumsum(x, axis, dtype);
    return run_scan(ScanOp::sum, x, axis, dtype, who);
}

Array cumprod(const Array& x, std::optional<int64_t> axis, std::optional<DType> dtype) {
    const char* who = "ember.cumprod";
    if (x.defined() && x.grad_meta() && autograd::detail::should_record(x)) [[unlikely]] {
        Array r;
        {
            autograd::NoGradGuard ng;
            r = run_scan(ScanOp::prod, x, axis, dtype, who);
        }
        if (!is_inexact(r.dtype())) return r;
        const Array* ins[1] = {&x};
        Array* outs[1] = {&r};
        autograd::not_implemented(who, std::span<const Array* const>(ins, 1),
                                  std::span<Array* const>(outs, 1));
        return r;
    }
    return run_scan(ScanOp::prod, x, axis, dtype, who);
}

namespace {

// x as a contiguous bool mask (x != 0 for other dtypes).
Array as_mask(const Array& x) {
    if (x.dtype() == DType::bool_) return x.contiguous();
    return not_equal(x, Operand(int64_t(0))).contiguous();
}

// The number of nonzero bytes of CPU memory: eight at a time, a byte's high bit set when it is
// nonzero ((b & 0x7f) + 0x7f carries into bit 7 for any nonzero low bits), then counted.
int64_t count_nonzero_bytes(const uint8_t* p, int64_t n) {
    constexpr uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL, high = 0x8080808080808080ULL;
    int64_t c = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        std::memcpy(&w, p + i, 8);
        c += __builtin_popcountll((((w & low7) + low7) | w) & high);
    }
    for (; i < n; ++i)
        c += p[i] != 0;
    return c;
}

int64_t count_true(const Array& mask) {
    if (mask.size() == 0) return 0;
    if (mask.device().type == DeviceType::cpu && mask.is_contiguous())
        return count_nonzero_bytes(reinterpret_cast<const uint8_t*>(mask.data()), mask.size());
    debug::OpScope op("nonzero / boolean mask (the result size)");
    return sum(mask).item<int64_t>();
}

}  // namespace

Array flatnonzero(const Array& x) {
    const char* who = "ember.flatnonzero";
    if (!x.defined()) throw ValueError(std::string(who) + ": undefined array");
    autograd::NoGradGuard ng;
    const Array m = as_mask(x.detach());
    const int64_t count = count_true(m);
    Array out = Array::empty({count}, DType::int64, x.device());
    if (count > 0)
        backend::of(x.device(), who)
            .compact(out.data(), nullptr, reinterpret_cast<const uint8_t*>(m.data()), m.size(), 1,
                     8, x.device().index);
    return out;
}

std::vector<Array> nonzero(const Array& x) {
    const char* who = "ember.nonzero";
    if (!x.defined()) throw ValueError(std::string(who) + ": undefined array");
    if (x.ndim() == 0)
        throw ValueError(std::string(who) +
                         ": nonzero is not defined for 0-d arrays; use atleast_1d(x).nonzero()");
    autograd::NoGradGuard ng;
    const Array flat = flatnonzero(x);
    std::vector<Array> out;
    if (x.ndim() == 1) {
        out.push_back(flat);
        return out;
    }
    int64_t inner = x.size() / (x.shape()[0] ? x.shape()[0] : 1);
    for (int d = 0; d < x.ndim(); ++d) {
        const int64_t n = x.shape()[size_t(d)];
        Array q = inner > 1 ? floor_divide(flat, Operand(inner)) : flat;
        out.push_back(d == 0 ? q : remainder(q, Operand(n)));
        if (d + 1 < x.ndim()) {
            const int64_t next = x.shape()[size_t(d + 1)];
            inner = next ? inner / next : 1;
        }
    }
    return out;
}

Array compress_mask(const Array& x, const Array& mask) {
    const char* who = "ember.__getitem__";
    if (!x.defined() || !mask.defined()) throw ValueError(std::string(who) + ": undefined array");
    if (mask.device() != x.device())
        throw ValueError(std::string(who) + ": the mask is on " + mask.device().str() +
                         " but the array is on " + x.device().str());
    if (mask.ndim() > x.ndim())
        throw IndexError("ember: too many indices for array: array is " + std::to_string(x.ndim()) +
                         "-dimensional, but " + std::to_string(mask.ndim()) + " were indexed");
    // A mask axis must match the array's; one of size 0 selects nothing (the Array API suite's
    // rule; NumPy raises for it).
    bool selects_nothing = false;
    for (int d = 0; d < mask.ndim(); ++d) {
        const int64_t ms = mask.shape()[size_t(d)], xs = x.shape()[size_t(d)];
        if (ms == 0) selects_nothing = true;
        if (ms != xs && ms != 0)
            throw IndexError("ember: boolean index did not match indexed array along axis " +
                             std::to_string(d) + "; size of axis is " + std::to_string(xs) +
                             " but size of corresponding boolean axis is " + std::to_string(ms));
    }
    if (selects_nothing) {
        Shape shape{0};
        for (int d = mask.ndim(); d < x.ndim(); ++d)
            shape.push_back(x.shape()[size_t(d)]);
        return Array::empty(shape, x.dtype(), x.device());
    }
    autograd::NoGradGuard ng;
    const Array m = as_mask(mask.detach());
    const int64_t count = count_true(m);
    Shape shape{count};
    int64_t row = 1;
    for (int d = mask.ndim(); d < x.ndim(); ++d) {
        shape.push_back(x.shape()[size_t(d)]);
        row *= x.shape()[size_t(d)];
    }
    Array out = Array::empty(shape, x.dtype(), x.device());
    if (out.size() == 0) return out;
    const Array src = x.detach().contiguous();
    if (row > 16 && x.device().type != DeviceType::cpu) {
        // Long rows: one thread per selected row would copy it alone; gather them instead.
        const Array pos = flatnonzero(m);
        return take(src.reshape({m.size(), row}), pos, int64_t(0)).reshape(shape);
    }
    backend::of(x.device(), who)
        .compact(out.data(), src.data(), reinterpret_cast<const uint8_t*>(m.data()), m.size(), row,
                 int(x.itemsize()), x.device().index);
    return out;
}

}  // namespace ember
