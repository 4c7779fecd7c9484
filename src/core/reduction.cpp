// Reduction front-ends: one for every row of the reduction table (axis handling, the row's result
// and accumulator dtypes, empty inputs), and mean/var/std composed from sum and elementwise ops.
#include <cmath>
#include <string>

#include "core/internal.hpp"
#include "core/record.hpp"
#include "ember/debug.hpp"
#include "ember/error.hpp"
#include "ember/ops.hpp"

namespace ember {

namespace {

using ops::ReduceOp;

const Axes& no_axes() {
    static const Axes none = std::nullopt;
    return none;
}
const Axes& reduce_nothing() {
    static const Axes empty = std::vector<int64_t>{};
    return empty;
}

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

// Index rows: one axis (None: the flattened array); an empty extent is NumPy's "attempt to get
// argmax of an empty sequence".
Array run_index(ReduceOp op, const Array& x, const Axes& axes, bool keepdims) {
    const std::string who = "ember." + std::string(ops::info(op).name);
    const std::string what = who.substr(6);
    if (!axes) {
        if (x.size() == 0)
            throw ValueError(who + ": attempt to get " + what + " of an empty sequence");
        Array r = run_index(op, x.reshape({x.size()}), std::vector<int64_t>{0}, false);
        if (keepdims) return r.reshape(Shape(size_t(x.ndim()), 1));
        return r;
    }
    if (axes->size() != 1) throw ValueError(who + ": takes one axis");
    const int64_t axis = (*axes)[0];
    const int ax = normalize_axis(axis, x.ndim(), who.c_str());
    if (x.shape()[size_t(ax)] == 0)
        throw ValueError(who + ": attempt to get " + what + " of an empty sequence along axis " +
                         std::to_string(axis));
    AxisSet s;
    s.reduced.assign(size_t(x.ndim()), false);
    s.reduced[size_t(ax)] = true;
    Array out = Array::empty(reduced_shape(x, s, keepdims), DType::int64, x.device());
    if (out.size() == 0) return out;
    const DType acc = ops::reduce_acc_dtype(op, x.dtype(), DType::int64);
    Array operands[2] = {expanded_output(out, x, s, keepdims), x};
    const backend::Loop loop = detail::make_loop(operands, 1);
    backend::of(x.device(), who.c_str()).reduce(op, acc, loop);
    if (debug::profiling()) debug::count_bytes(backend::footprint_bytes(loop));
    return out;
}

}  // namespace

// Every reduction of the table: the row's result and accumulator dtypes, its identity for empty
// inputs, and its backward formula when autograd records.
Array reduce(ReduceOp op, const Array& x, const Axes& axes_in, bool keepdims,
             std::optional<DType> dtype) {
    const ops::ReduceInfo& row = ops::info(op);
    // NumPy's reductions take axis 0 or -1 on a 0-d array as the array's one element (a
    // reduction over no axis; argmax/argmin give 0). mean/var/std check their axes first
    // and raise, as NumPy's do.
    const bool zero_d_axis = x.ndim() == 0 && axes_in && axes_in->size() == 1 &&
                             ((*axes_in)[0] == 0 || (*axes_in)[0] == -1);
    const Axes& axes = zero_d_axis ? (row.index() ? no_axes() : reduce_nothing()) : axes_in;
    if (row.grad != ops::GradRule::none && x.grad_meta() && autograd::detail::should_record(x))
        [[unlikely]]
        return autograd::detail::reduce(op, x, axes, keepdims, dtype);
    const std::string who = "ember." + std::string(row.name);
    if (dtype && !(row.flags & ops::R_DTYPE)) throw TypeError(who + ": takes no dtype");
    if (row.index()) return run_index(op, x, axes, keepdims);
    AxisSet s = normalize_axes(x, axes, who.c_str());
    const DType out_dtype = ops::reduce_result_dtype(op, x.dtype(), dtype);
    Array out = Array::empty(reduced_shape(x, s, keepdims), out_dtype, x.device());
    if (out.size() == 0) return out;
    if (s.count == 0) {
        if (!row.has_identity()) {
            const std::string ufunc = op == ReduceOp::max   ? "maximum"
                                      : op == ReduceOp::min ? "minimum"
                                                            : std::string(row.name);
            throw ValueError(who + ": zero-size array to reduction operation " + ufunc +
                             " which has no identity");
        }
        // Integral identities as integers, so that every result dtype takes them exactly.
        const double id = row.identity;
        const bool integral = std::abs(id) < 0x1p62 && id == std::trunc(id);
        out.fill(integral ? Scalar(int64_t(id)) : Scalar(id));
        return out;
    }
    const DType acc = ops::reduce_acc_dtype(op, x.dtype(), out_dtype);
    Array operands[2] = {expanded_output(out, x, s, keepdims), x};
    const backend::Loop loop = detail::make_loop(operands, 1);
    backend::of(x.device(), who.c_str()).reduce(op, acc, loop);
    if (debug::profiling()) debug::count_bytes(backend::footprint_bytes(loop));
    return out;
}

Array sum(const Array& x, const Axes& axes, bool keepdims, std::optional<DType> dtype) {
    return reduce(ReduceOp::sum, x, axes, keepdims, dtype);
}
Array prod(const Array& x, const Axes& axes, bool keepdims, std::optional<DType> dtype) {
    return reduce(ReduceOp::prod, x, axes, keepdims, dtype);
}
Array max(const Array& x, const Axes& axes, bool keepdims) {
    return reduce(ReduceOp::max, x, axes, keepdims);
}
Array min(const Array& x, const Axes& axes, bool keepdims) {
    return reduce(ReduceOp::min, x, axes, keepdims);
}
Array any(const Array& x, const Axes& axes, bool keepdims) {
    return reduce(ReduceOp::any, x, axes, keepdims);
}
Array all(const Array& x, const Axes& axes, bool keepdims) {
    return reduce(ReduceOp::all, x, axes, keepdims);
}
Array argmax(const Array& x, std::optional<int64_t> axis, bool keepdims) {
    return reduce(ReduceOp::argmax, x, axis ? Axes(std::vector<int64_t>{*axis}) : std::nullopt,
                  keepdims);
}
Array argmin(const Array& x, std::optional<int64_t> axis, bool keepdims) {
    return reduce(ReduceOp::argmin, x, axis ? Axes(std::vector<int64_t>{*axis}) : std::nullopt,
                  keepdims);
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

}  // namespace ember
