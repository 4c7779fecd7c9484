// sort, argsort and searchsorted: layout (the sorted axis moved last and made contiguous), output
// allocation and argument checks in front of the backends' sort family. sort's values are
// differentiable: under autograd they are a take of x at argsort's positions.
#include <string>

#include "backend/backend.hpp"
#include "core/internal.hpp"
#include "core/record.hpp"
#include "ember/autograd.hpp"
#include "ember/error.hpp"
#include "ember/ops.hpp"

namespace ember {

namespace {

struct SortResult {
    Array values, indices;
};

SortResult sort_rows(const Array& x, int64_t axis, bool descending, bool stable, bool values,
                     bool indices, const char* who) {
    if (!x.defined()) throw ValueError(std::string(who) + ": undefined array");
    if (x.ndim() == 0)
        throw AxisError(std::string(who) + ": axis " + std::to_string(axis) +
                        " is out of bounds for a 0-dimensional array (sort needs at least one "
                        "dimension)");
    const int ax = normalize_axis(axis, x.ndim(), who);
    const int last = x.ndim() - 1;
    autograd::NoGradGuard no_grad;
    const Array moved = ax == last ? x.detach() : x.detach().swapaxes(ax, last);
    const Array keys = moved.contiguous();
    const Shape& s = keys.shape();
    const int64_t n = s.back();
    SortResult r;
    if (values) r.values = Array::empty(s, x.dtype(), x.device());
    if (indices) r.indices = Array::empty(s, DType::int64, x.device());
    if (keys.size() > 0) {
        backend::SortCall c;
        c.device = x.device().index;
        c.dtype = x.dtype();
        c.rows = keys.size() / n;
        c.n = n;
        c.descending = descending;
        c.stable = stable;
        c.keys = keys.data();
        c.sorted = values ? r.values.data() : nullptr;
        c.indices = indices ? reinterpret_cast<int64_t*>(r.indices.data()) : nullptr;
        backend::of(x.device(), who).sort(c);
    }
    if (ax != last) {
        if (values) r.values = r.values.swapaxes(ax, last);
        if (indices) r.indices = r.indices.swapaxes(ax, last);
    }
    return r;
}

}  // namespace

Array argsort(const Array& x, int64_t axis, bool descending, bool stable) {
    return sort_rows(x, axis, descending, stable, false, true, "ember.argsort").indices;
}

Array sort(const Array& x, int64_t axis, bool descending, bool stable) {
    const char* who = "ember.sort";
    if (!(x.defined() && x.requires_grad() && autograd::is_grad_enabled()))
        return sort_rows(x, axis, descending, stable, true, false, who).values;
    // Differentiable: x taken at the sorted positions (flat offsets of a C-order x), so the
    // gradient scatters back through take's adjoint.
    const int ax = x.ndim() ? normalize_axis(axis, x.ndim(), who) : 0;
    Array idx = sort_rows(x, axis, descending, stable, false, true, who).indices;
    const Shape& shape = x.shape();
    Array off;
    {
        autograd::NoGradGuard no_grad;
        int64_t cstride = 1;
        for (int d = x.ndim() - 1; d > ax; --d)
            cstride *= shape[size_t(d)];
        Shape along(shape.size(), 1);
        along[size_t(ax)] = shape[size_t(ax)];
        const Device dev = x.device();
        const Array pos =
            arange(Scalar(int64_t(0)), Scalar(x.size()), Scalar(int64_t(1)), DType::int64, dev)
                .reshape(shape);
        const Array coord = arange(Scalar(int64_t(0)), Scalar(shape[size_t(ax)]),
                                   Scalar(int64_t(1)), DType::int64, dev)
                                .reshape(along);
        off = add(pos, multiply(subtract(idx, coord), cstride)).reshape({x.size()});
    }
    return take(x.reshape({x.size()}), off).reshape(shape);
}

Array searchsorted(const Array& sorted, const Array& values, bool right) {
    const char* who = "ember.searchsorted";
    if (!sorted.defined() || !values.defined())
        throw ValueError(std::string(who) + ": undefined array");
    if (sorted.ndim() != 1)
        throw ValueError(std::string(who) + ": x1 must be 1-dimensional, got " +
                         std::to_string(sorted.ndim()) + " dimensions");
    if (sorted.device() != values.device())
        throw ValueError(std::string(who) + ": x1 is on " + sorted.device().str() +
                         " but x2 is on " + values.device().str());
    if (sorted.dtype() != values.dtype())
        throw TypeError(std::string(who) + ": x1 and x2 must have the same dtype, got " +
                        std::string(name(sorted.dtype())) + " and " +
                        std::string(name(values.dtype())));
    autograd::NoGradGuard no_grad;
    const Array keys = sorted.detach().contiguous();
    const Array vals = values.detach().contiguous();
    Array out = Array::empty(values.shape(), DType::int64, values.device());
    if (vals.size() == 0) return out;
    if (keys.size() == 0) {
        out.fill(Scalar(int64_t(0)));
        return out;
    }
    backend::SearchCall c;
    c.device = values.device().index;
    c.dtype = values.dtype();
    c.n = keys.size();
    c.m = vals.size();
    c.right = right;
    c.keys = keys.data();
    c.values = vals.data();
    c.out = reinterpret_cast<int64_t*>(out.data());
    backend::of(values.device(), who).searchsorted(c);
    return out;
}

}  // namespace ember
