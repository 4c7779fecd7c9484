// Basic indexing: integers, slices, newaxis and ellipsis produce views; assignment writes
// through them with broadcasting and casting.
#include <cmath>
#include <cstdio>
#include <string>

#include "core/internal.hpp"
#include "core/record.hpp"
#include "ember/debug.hpp"
#include "ember/error.hpp"
#include "ember/ops.hpp"

namespace ember {

void detail::check_float_to_int(const Scalar& value, DType to, const char* who) {
    const bool floating = value.weak == WeakKind::floating ||
                          (value.weak == WeakKind::none && kind(value.dtype) == Kind::floating);
    if (!floating || !is_integer(to)) return;
    const double d = value.c.real();
    if (std::isnan(d)) throw ValueError(std::string(who) + ": cannot convert float NaN to integer");
    if (std::isinf(d))
        throw OverflowError(std::string(who) + ": cannot convert float infinity to integer");
    if (value.weak != WeakKind::floating) return;  // NumPy casts its own float scalars
    const double t = std::trunc(d);
    const IInfo ii = iinfo(to);
    // Bounds as doubles: 2**63 and 2**64 are exact, so "below the bound" is exact too.
    const double below = to == DType::uint64 ? 0x1p64 : double(ii.max) + 1.0;
    const double lowest = kind(to) == Kind::unsigned_int ? 0.0 : double(ii.min);
    if (t < lowest || t >= below) {
        char text[64];
        std::snprintf(text, sizeof text, std::fabs(t) < 1e20 ? "%.0f" : "%.17g", t);
        throw OverflowError(std::string(who) + ": Python integer " + text + " out of bounds for " +
                            std::string(name(to)));
    }
}

namespace {

// Python's slice.indices(n) and the slice's length (PySlice_AdjustIndices), without overflow
// for any bounds and steps: a step below -INT64_MAX is clamped as Python clamps it.
int64_t slice_indices(const Slice& s, int64_t n, int64_t& start, int64_t& stop, int64_t& step) {
    step = s.step.value_or(1);
    if (step == 0) throw ValueError("ember: slice step cannot be zero");
    if (step < -INT64_MAX) step = -INT64_MAX;
    const int64_t lo = step < 0 ? -1 : 0, hi = step < 0 ? n - 1 : n;
    auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
        if (!v) return dflt;
        int64_t x = *v;
        if (x < 0) {
            x += n;
            if (x < lo) x = lo;
        } else if (x > hi) {
            x = hi;
        }
        return x;
    };
    start = clamp(s.start, step < 0 ? hi : lo);
    stop = clamp(s.stop, step < 0 ? lo : hi);
    return detail::slice_length(start, stop, step);
}

}  // namespace

Array index(const Array& x, std::span<const Index> idx) {
    if (x.grad_meta() && autograd::detail::should_record(x)) [[unlikely]]
        return autograd::detail::index(x, idx);
    int consumed = 0, ellipses = 0;
    for (const Index& i : idx) {
        if (i.kind == Index::Kind::integer || i.kind == Index::Kind::slice) ++consumed;
        if (i.kind == Index::Kind::ellipsis) ++ellipses;
    }
    if (ellipses > 1) throw IndexError("ember: an index can only have a single ellipsis ('...')");
    if (consumed > x.ndim())
        throw IndexError("ember: too many indices for array: array is " + std::to_string(x.ndim()) +
                         "-dimensional, but " + std::to_string(consumed) + " were indexed");
    Shape shape;
    Strides strides;
    int64_t offset = 0;
    int axis = 0;
    for (const Index& i : idx) {
        switch (i.kind) {
            case Index::Kind::integer: {
                const int64_t n = x.shape()[size_t(axis)];
                int64_t v = i.i;
                if (v < -n || v >= n)
                    throw IndexError("ember: index " + std::to_string(i.i) +
                                     " is out of bounds for axis " + std::to_string(axis) +
                                     " with size " + std::to_string(n));
                if (v < 0) v += n;
                offset += v * x.strides()[size_t(axis)];
                ++axis;
                break;
            }
            case Index::Kind::slice: {
                const int64_t n = x.shape()[size_t(axis)];
                int64_t start, stop, step;
                const int64_t len = slice_indices(i.s, n, start, stop, step);
                shape.push_back(len);
                // With one element or none the step never moves: keeping the axis's stride
                // avoids overflowing it with a huge step.
                strides.push_back(len > 1 ? x.strides()[size_t(axis)] * step
                                          : x.strides()[size_t(axis)]);
                if (len) offset += start * x.strides()[size_t(axis)];
                ++axis;
                break;
            }
            case Index::Kind::newaxis:
                shape.push_back(1);
                strides.push_back(0);
                break;
            case Index::Kind::ellipsis: {
                const int fill = x.ndim() - consumed;
                for (int k = 0; k < fill; ++k, ++axis) {
                    shape.push_back(x.shape()[size_t(axis)]);
                    strides.push_back(x.strides()[size_t(axis)]);
                }
                break;
            }
        }
    }
    for (; axis < x.ndim(); ++axis) {
        shape.push_back(x.shape()[size_t(axis)]);
        strides.push_back(x.strides()[size_t(axis)]);
    }
    if (numel(shape) == 0) offset = 0;
    return x.view(std::move(shape), std::move(strides), offset);
}

void index_assign(const Array& x, std::span<const Index> idx, const Operand& value) {
    x.check_writeable("ember.__setitem__");
    if ((x.grad_meta() || (!value.is_scalar && value.array().grad_meta())) &&
        autograd::detail::should_record_assign(x, value)) [[unlikely]]
        return autograd::detail::index_assign(x, idx, value);
    Array v = index(x, idx);
    if (value.is_scalar) {
        if (value.scalar.weak == WeakKind::complex && !is_complex(x.dtype()))
            throw TypeError(
                "ember.__setitem__: cannot assign a complex number to an array of "
                "dtype " +
                std::string(name(x.dtype())));
        detail::check_float_to_int(value.scalar, x.dtype(), "ember.__setitem__");
        if (value.scalar.weak != WeakKind::none) {
            alignas(16) unsigned char buf[16];
            value.scalar.store(x.dtype(), buf, true, "ember.__setitem__");
        }
        v.fill(value.scalar);
        return;
    }
    if (value.array().device() != x.device())
        throw ValueError("ember.__setitem__: value is on " + value.array().device().str() +
                         " but the array is on " + x.device().str());
    const Shape& vs = value.array().shape();
    if (!(vs == v.shape())) {
        Shape b = broadcast_shapes(v.shape(), vs, "ember.__setitem__");
        if (!(b == v.shape()))
            throw ValueError("ember.__setitem__: could not broadcast input array from shape " +
                             shape_str(vs) + " into shape " + shape_str(v.shape()));
    }
    v.assign(value.array());
}

}  // namespace ember

namespace ember {

namespace {

// take's element offsets from src.data() (src: x, or x flattened without an axis), for an
// output of take's shape; the indices are checked and normalized.
struct Gather {
    Array off;  // int64, contiguous, of shape `shape`
    Shape shape;
};
// `in_range`: the caller guarantees 0 <= index < n (no bounds check, hence no synchronization).
Gather gather_offsets(const Array& src, const Array& indices, int ax, const char* who,
                      bool in_range = false) {
    const Kind ik = kind(indices.dtype());
    if (ik != Kind::signed_int && ik != Kind::unsigned_int)
        throw IndexError(std::string(who) + ": indices must be integers, got dtype " +
                         std::string(name(indices.dtype())));
    if (src.device() != indices.device())
        throw ValueError(std::string(who) + ": the array is on " + src.device().str() +
                         " but the indices are on " + indices.device().str());
    const int64_t n = src.shape()[size_t(ax)];
    Array idx = indices.astype(DType::int64, false);
    if (idx.size() > 0 && n == 0)
        throw IndexError(std::string(who) + ": cannot do a non-empty take from an empty axis");
    if (idx.size() > 0 && !in_range) {
        debug::OpScope op("take / put (the bounds check)");
        const int64_t lo = min(idx).item<int64_t>(), hi = max(idx).item<int64_t>();
        if (lo < -n || hi >= n)
            throw IndexError(std::string(who) + ": index " + std::to_string(lo < -n ? lo : hi) +
                             " is out of bounds for axis " + std::to_string(ax) + " with size " +
                             std::to_string(n));
        if (lo < 0) idx = add(idx, multiply(less(idx, int64_t(0)), n));
    }
    // Element offsets from src.data(): the index times the axis stride, plus each other
    // dimension's position times its stride, broadcast to the output shape.
    const int nd = src.ndim(), ni = idx.ndim();
    Shape out_shape;
    for (int d = 0; d < ax; ++d)
        out_shape.push_back(src.shape()[size_t(d)]);
    for (int64_t e : idx.shape())
        out_shape.push_back(e);
    for (int d = ax + 1; d < nd; ++d)
        out_shape.push_back(src.shape()[size_t(d)]);
    if (numel(out_shape) == 0) return {Array(), out_shape};
    auto placed = [&](const Array& a, int pos, int width) {
        Shape s(size_t(out_shape.size()), 1);
        for (int i = 0; i < width; ++i)
            s[size_t(pos + i)] = a.shape()[size_t(i)];
        return a.reshape(s);
    };
    const int64_t axis_stride = src.strides()[size_t(ax)];
    Array off = placed(axis_stride == 1 ? idx : multiply(idx, axis_stride), ax, ni);
    for (int d = 0; d < nd; ++d) {
        if (d == ax) continue;
        const Array pos = multiply(arange(Scalar(int64_t(0)), Scalar(src.shape()[size_t(d)]),
                                          Scalar(int64_t(1)), DType::int64, src.device()),
                                   src.strides()[size_t(d)]);
        off = add(off, placed(pos, d < ax ? d : d - 1 + ni, 1));
    }
    return {off.broadcast_to(out_shape).contiguous(), out_shape};
}

// CPU: when the dimensions after the axis are one contiguous run of B > 1 elements (rows of a
// C-ordered matrix, say), one offset per index and a copy of B elements each, not one offset
// and copy per element. The offsets are those of a view whose unit is the run. (CUDA's gather
// kernels are built per element width, so there the per-element path stays.)
Array take_rows(const Array& src, const Array& indices, int ax, const char* who, bool in_range) {
    if (src.device().type != DeviceType::cpu) return Array();
    const int nd = src.ndim();
    int64_t run = 1;
    for (int d = nd - 1; d > ax; --d) {
        if (src.shape()[size_t(d)] != 1 && src.strides()[size_t(d)] != run) return Array();
        run *= src.shape()[size_t(d)];
    }
    if (run <= 1 || run * int64_t(src.itemsize()) > (int64_t(1) << 30)) return Array();
    Shape bshape;
    Strides bstrides;
    for (int d = 0; d <= ax; ++d) {
        const int64_t st = src.strides()[size_t(d)];
        if (st % run != 0 && src.shape()[size_t(d)] != 1) return Array();
        bshape.push_back(src.shape()[size_t(d)]);
        bstrides.push_back(st / run);
    }
    // the offsets in runs, from a view with the run as its unit (only its geometry is read)
    const Array units = src.detach().view(bshape, bstrides);
    Gather g = gather_offsets(units, indices, ax, who, in_range);
    Shape out_shape = g.shape;
    for (int d = ax + 1; d < nd; ++d)
        out_shape.push_back(src.shape()[size_t(d)]);
    Array out = Array::empty(out_shape, src.dtype(), src.device());
    if (out.size() == 0) return out;
    backend::of(src.device(), who)
        .gather(out.data(), src.data(), reinterpret_cast<const int64_t*>(g.off.data()),
                numel(g.shape), int(run * int64_t(src.itemsize())), src.device().index);
    return out;
}

}  // namespace

Array take(const Array& x, const Array& indices, std::optional<int64_t> axis, bool in_range) {
    const char* who = "ember.take";
    if (x.grad_meta() && autograd::detail::should_record(x)) [[unlikely]]
        return autograd::detail::take(x, indices, axis);
    const Array src = axis ? x : x.reshape({x.size()});
    const int ax = axis ? normalize_axis(*axis, src.ndim(), who) : 0;
    if (Array rows = take_rows(src, indices, ax, who, in_range); rows.defined()) return rows;
    Gather g = gather_offsets(src, indices, ax, who, in_range);
    Array out = Array::empty(g.shape, x.dtype(), x.device());
    if (out.size() == 0) return out;
    backend::of(x.device(), who)
        .gather(out.data(), src.data(), reinterpret_cast<const int64_t*>(g.off.data()), out.size(),
                int(x.itemsize()), x.device().index);
    return out;
}

void add_at(const Array& x, const Array& indices, const Operand& values,
            std::optional<int64_t> axis) {
    const char* who = "ember.add_at";
    if (!x.defined() || !indices.defined())
        throw ValueError(std::string(who) + ": undefined operand");
    x.check_writeable(who);
    if (autograd::is_grad_enabled() &&
        (x.requires_grad() || (!values.is_scalar && values.array().requires_grad())))
        throw Error(std::string(who) +
                    ": not differentiable (an in-place op); use take's gradient, or run it "
                    "under ember.no_grad()");
    if (!axis && !x.is_contiguous())
        throw ValueError(std::string(who) + ": without an axis the array must be C-contiguous");
    const Array dst = axis ? x : x.view({x.size()}, {1});
    const int ax = axis ? normalize_axis(*axis, dst.ndim(), who) : 0;
    Gather g = gather_offsets(dst, indices, ax, who);
    if (numel(g.shape) == 0) return;
    Array v;
    if (values.is_scalar) {
        v = full(g.shape, values.scalar, x.dtype(), x.device());
    } else {
        const Array& va = values.array();
        if (va.device() != x.device())
            throw ValueError(std::string(who) + ": the values are on " + va.device().str() +
                             " but the array is on " + x.device().str());
        v = va.broadcast_to(g.shape);
        v = v.dtype() == x.dtype() && v.is_contiguous() && !detail::may_overlap(v, x)
                ? v
                : v.astype(x.dtype());
    }
    backend::of(x.device(), who)
        .scatter_add(dst.data(), v.data(), reinterpret_cast<const int64_t*>(g.off.data()), v.size(),
                     x.dtype(), x.device().index);
    x.storage()->bump_version();
}

}  // namespace ember
