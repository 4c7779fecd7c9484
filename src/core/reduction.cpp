// Reduction front-ends: axis handling, NumPy's result and accumulator dtypes, empty inputs, and
// mean/var/std composed from sum and elementwise ops.
#include <cmath>
#include <string>

#include "core/internal.hpp"
#include "core/record.hpp"
#include "ember/error.hpp"
#include "ember/ops.hpp"

namespace ember {

namespace {

using backend::ReduceOp;

struct AxisSet {
    std::vector<bool> reduced;
    int64_t count = 1;  // number of elements reduced into each output
};

AxisSet normalize_axes(const Array& x, const Axes& axes, const char* who) {
    AxisSet s;
    s.reduced.assign(size_t(x.ndim()), !axes.has_value());
    if (axes) {
        for (int64_t a : *axes) {
            const int ax = normalize_axis(a, x.ndim(), who);
            if (s.reduced[size_t(ax)])
                throw ValueError(std::string(who) + ": duplicate value in 'axis' (" +
                                 std::to_string(a) + ")");
            s.reduced[size_t(ax)] = true;
        }
    }
    for (int d = 0; d < x.ndim(); ++d)
        if (s.reduced[size_t(d)]) s.count *= x.shape()[size_t(d)];
    return s;
}

Shape reduced_shape(const Array& x, const AxisSet& s, bool keepdims) {
    Shape r;
    for (int d = 0; d < x.ndim(); ++d) {
        if (!s.reduced[size_t(d)])
            r.push_back(x.shape()[size_t(d)]);
        else if (keepdims)
            r.push_back(1);
    }
    return r;
}

// `out` viewed with the input's shape: stride 0 along reduced dims.
Array expanded_output(const Array& out, const Array& x, const AxisSet& s, bool keepdims) {
    Strides st(size_t(x.ndim()), 0);
    size_t o = 0;
    for (int d = 0; d < x.ndim(); ++d) {
        if (!s.reduced[size_t(d)])
            st[size_t(d)] = out.strides()[o++];
        else if (keepdims)
            ++o;
    }
    return out.view(x.shape(), st);
}

const char* op_name(ReduceOp op) {
    switch (op) {
        case ReduceOp::sum:
            return "ember.sum";
        case ReduceOp::prod:
            return "ember.prod";
        case ReduceOp::max:
            return "ember.max";
        case ReduceOp::min:
            return "ember.min";
        case ReduceOp::any:
            return "ember.any";
        case ReduceOp::all:
            return "ember.all";
    }
    return "ember.reduce";
}

Array run_reduce(ReduceOp op, const Array& x, const Axes& axes, bool keepdims, DType out_dtype,
                 DType acc) {
    const char* who = op_name(op);
    AxisSet s = normalize_axes(x, axes, who);
    Array out = Array::empty(reduced_shape(x, s, keepdims), out_dtype, x.device());
    if (out.size() == 0) return out;
    if (s.count == 0) {
        switch (op) {
            case ReduceOp::sum:
                out.fill(Scalar(int64_t(0)));
                break;
            case ReduceOp::prod:
                out.fill(Scalar(int64_t(1)));
                break;
            case ReduceOp::any:
                out.fill(Scalar(false));
                break;
            case ReduceOp::all:
                out.fill(Scalar(true));
                break;
            default:
                throw ValueError(std::string(who) +
                                 ": zero-size array to reduction operation which has no "
                                 "identity (input shape " +
                                 shape_str(x.shape()) + ")");
        }
        return out;
    }
    Array ops[2] = {expanded_output(out, x, s, keepdims), x};
    backend::of(x.device(), who).reduce(op, acc, detail::make_loop(ops, 1));
    return out;
}

// Accumulator for a sum/prod result dtype: integers in 64 bits (wrapping is the same modulo
// 2^n), 16-bit floats in float32.
DType sum_acc(DType out) {
    switch (kind(out)) {
        case Kind::boolean:
        case Kind::signed_int:
            return DType::int64;
        case Kind::unsigned_int:
            return DType::uint64;
        case Kind::floating:
            return out == DType::float64 ? DType::float64 : DType::float32;
        case Kind::complex:
            return out;
    }
    return out;
}

DType sum_default(DType in) {
    if (in == DType::bool_ || kind(in) == Kind::signed_int) return DType::int64;
    if (kind(in) == Kind::unsigned_int) return DType::uint64;
    return in;
}

}  // namespace

Array sum(const Array& x, const Axes& axes, bool keepdims, std::optional<DType> dtype) {
    using autograd::detail::Reduce;
    if (x.grad_meta() && autograd::detail::should_record(x)) [[unlikely]]
        return autograd::detail::reduce(Reduce::sum, x, axes, keepdims, dtype);
    const DType out = dtype.value_or(sum_default(x.dtype()));
    return run_reduce(ReduceOp::sum, x, axes, keepdims, out, sum_acc(out));
}

Array prod(const Array& x, const Axes& axes, bool keepdims, std::optional<DType> dtype) {
    using autograd::detail::Reduce;
    if (x.grad_meta() && autograd::detail::should_record(x)) [[unlikely]]
        return autograd::detail::reduce(Reduce::prod, x, axes, keepdims, dtype);
    const DType out = dtype.value_or(sum_default(x.dtype()));
    return run_reduce(ReduceOp::prod, x, axes, keepdims, out, sum_acc(out));
}

Array max(const Array& x, const Axes& axes, bool keepdims) {
    using autograd::detail::Reduce;
    if (x.grad_meta() && autograd::detail::should_record(x)) [[unlikely]]
        return autograd::detail::reduce(Reduce::max, x, axes, keepdims, std::nullopt);
    return run_reduce(ReduceOp::max, x, axes, keepdims, x.dtype(), x.dtype());
}
Array min(const Array& x, const Axes& axes, bool keepdims) {
    using autograd::detail::Reduce;
    if (x.grad_meta() && autograd::detail::should_record(x)) [[unlikely]]
        return autograd::detail::reduce(Reduce::min, x, axes, keepdims, std::nullopt);
    return run_reduce(ReduceOp::min, x, axes, keepdims, x.dtype(), x.dtype());
}
Array any(const Array& x, const Axes& axes, bool keepdims) {
    return run_reduce(ReduceOp::any, x, axes, keepdims, DType::bool_, DType::bool_);
}
Array all(const Array& x, const Axes& axes, bool keepdims) {
    return run_reduce(ReduceOp::all, x, axes, keepdims, DType::bool_, DType::bool_);
}

namespace {

// The dtype mean/var compute in, and the one they return.
std::pair<DType, DType> mean_dtypes(DType in, std::optional<DType> dtype, const char* who) {
    if (dtype) {
        if (!is_inexact(*dtype) && !is_integer(*dtype))
            throw TypeError(std::string(who) + ": unsupported dtype " + std::string(name(*dtype)));
        DType c = (*dtype == DType::float16 || *dtype == DType::bfloat16) ? DType::float32 : *dtype;
        return {c, *dtype};
    }
    if (!is_inexact(in)) return {DType::float64, DType::float64};
    if (in == DType::float16 || in == DType::bfloat16) return {DType::float32, in};
    return {in, in};
}

Array mean_in(const Array& x, const Axes& axes, bool keepdims, DType compute) {
    AxisSet s = normalize_axes(x, axes, "ember.mean");
    Array total = sum(x, axes, keepdims, compute);
    return divide(total, Scalar(double(s.count)));
}

}  // namespace

Array mean(const Array& x, const Axes& axes, bool keepdims, std::optional<DType> dtype) {
    auto [compute, out] = mean_dtypes(x.dtype(), dtype, "ember.mean");
    if (x.dtype() == DType::bool_ && !dtype) compute = DType::float64;
    Array m = mean_in(x, axes, keepdims, compute);
    return m.dtype() == out ? m : m.astype(out);
}

Array var(const Array& x, const Axes& axes, double correction, bool keepdims,
          std::optional<DType> dtype) {
    auto [compute, out] = mean_dtypes(x.dtype(), dtype, "ember.var");
    AxisSet s = normalize_axes(x, axes, "ember.var");
    Array xc = x.dtype() == compute ? x : x.astype(compute);
    Array m = mean_in(xc, axes, true, compute);
    Array d = subtract(xc, m);
    Array sq = is_complex(compute) ? real(multiply(d, conj(d))) : multiply(d, d);
    Array total = sum(sq, axes, keepdims);
    const double denom = std::max(0.0, double(s.count) - correction);
    Array v = divide(total, Scalar(denom));
    const DType want = is_complex(out) ? real_dtype(out) : out;
    return v.dtype() == want ? v : v.astype(want);
}

Array std(const Array& x, const Axes& axes, double correction, bool keepdims,
          std::optional<DType> dtype) {
    Array v = var(x, axes, correction, keepdims, dtype);
    if (v.dtype() == DType::float16 || v.dtype() == DType::bfloat16)
        return sqrt(v.astype(DType::float32)).astype(v.dtype());
    return sqrt(v);
}

namespace {

Array arg_reduce(backend::ArgReduceOp op, const Array& x, std::optional<int64_t> axis,
                 bool keepdims) {
    const char* who = op == backend::ArgReduceOp::argmax ? "ember.argmax" : "ember.argmin";
    if (!axis) {
        if (x.size() == 0)
            throw ValueError(std::string(who) + ": attempt to get " + (who + 6) +
                             " of an empty sequence");
        Array flat = x.reshape({x.size()});
        Array r = arg_reduce(op, flat, 0, false);
        if (keepdims) return r.reshape(Shape(size_t(x.ndim()), 1));
        return r;
    }
    const int ax = normalize_axis(*axis, x.ndim(), who);
    if (x.shape()[size_t(ax)] == 0)
        throw ValueError(std::string(who) + ": attempt to get " + (who + 6) +
                         " of an empty sequence along axis " + std::to_string(*axis));
    AxisSet s;
    s.reduced.assign(size_t(x.ndim()), false);
    s.reduced[size_t(ax)] = true;
    Array out = Array::empty(reduced_shape(x, s, keepdims), DType::int64, x.device());
    if (out.size() == 0) return out;
    Array ops[2] = {expanded_output(out, x, s, keepdims), x};
    backend::of(x.device(), who).arg_reduce(op, detail::make_loop(ops, 1));
    return out;
}

}  // namespace

Array argmax(const Array& x, std::optional<int64_t> axis, bool keepdims) {
    return arg_reduce(backend::ArgReduceOp::argmax, x, axis, keepdims);
}
Array argmin(const Array& x, std::optional<int64_t> axis, bool keepdims) {
    return arg_reduce(backend::ArgReduceOp::argmin, x, axis, keepdims);
}

}  // namespace ember
