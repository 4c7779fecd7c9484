// NumPy's advanced indexing: integer arrays and boolean masks mixed with basic indices. The
// basic items make a view first (advanced ones keep their axes whole); the advanced indices
// broadcast together and, with the other axes' positions, give int64 element offsets built with
// ember ops; getitem gathers them, setitem scatters (the last of repeated indices wins).
#include <algorithm>
#include <string>

#include "backend/backend.hpp"
#include "core/internal.hpp"
#include "core/record.hpp"
#include "ember/debug.hpp"
#include "ember/error.hpp"
#include "ember/ops.hpp"

namespace ember {

namespace {

struct Advanced {
    int axis;        // in the basic view
    Array idx;       // int64 (broadcastable), already normalized, or undefined with `scalar`
    int64_t scalar;  // an integer index (normalized)
    bool is_scalar;
};

struct Plan {
    Array view;                 // x with the basic items applied (advanced axes kept whole)
    std::vector<Advanced> adv;  // in axis order
    std::vector<Index> basic;   // the basic items that made `view`
    bool unique = false;        // the advanced indices come from one boolean mask (plus ints)
};

// The mask when the whole index is one boolean mask over the leading axes (then only full
// slices or an ellipsis), else nullptr.
const Array* simple_mask(std::span<const IndexItem> items) {
    if (items.empty() || !items[0].array.defined() || items[0].array.dtype() != DType::bool_ ||
        items[0].array.ndim() == 0)
        return nullptr;
    for (size_t k = 1; k < items.size(); ++k) {
        const Index& b = items[k].index;
        if (items[k].array.defined() ||
            !(b.kind == Index::Kind::ellipsis ||
              (b.kind == Index::Kind::slice && !b.s.start && !b.s.stop && !b.s.step)))
            return nullptr;
    }
    return &items[0].array;
}

std::string idx_err_prefix(const char* who) { return std::string(who) + ": "; }

// Checks an integer index array against an axis of size n and wraps negative values.
Array normalize_indices(const Array& a, int64_t n, int axis, const char* who) {
    Array idx = a.astype(DType::int64, false);
    if (idx.size() == 0) return idx;
    // Both reductions are enqueued before the first read: one wait for the device.
    const Array lo_a = min(idx), hi_a = max(idx);
    debug::OpScope op("integer-array indexing (the bounds check)");
    const int64_t lo = lo_a.item<int64_t>(), hi = hi_a.item<int64_t>();
    if (n == 0)
        throw IndexError(idx_err_prefix(who) + "index " + std::to_string(lo) +
                         " is out of bounds for axis " + std::to_string(axis) + " with size 0");
    if (lo < -n || hi >= n)
        throw IndexError(idx_err_prefix(who) + "index " + std::to_string(lo < -n ? lo : hi) +
                         " is out of bounds for axis " + std::to_string(axis) + " with size " +
                         std::to_string(n));
    if (lo < 0) idx = add(idx, multiply(less(idx, int64_t(0)), n));
    return idx;
}

Plan make_plan(const Array& x, std::span<const IndexItem> items, const char* who) {
    // Dimensions each item consumes; an ellipsis takes the rest.
    int consumed = 0, ellipses = 0, arrays = 0, masks = 0;
    for (const IndexItem& it : items) {
        if (it.array.defined()) {
            const Array& a = it.array;
            if (a.device() != x.device())
                throw ValueError(idx_err_prefix(who) + "the index is on " + a.device().str() +
                                 " but the array is on " + x.device().str());
            if (a.dtype() == DType::bool_) {
                consumed += a.ndim();
                ++masks;
            } else if (is_integer(a.dtype())) {
                consumed += 1;
            } else {
                throw IndexError(idx_err_prefix(who) +
                                 "arrays used as indices must be of integer (or boolean) type, "
                                 "got dtype " +
                                 std::string(name(a.dtype())));
            }
            ++arrays;
        } else if (it.index.kind == Index::Kind::integer || it.index.kind == Index::Kind::slice) {
            ++consumed;
        } else if (it.index.kind == Index::Kind::ellipsis) {
            ++ellipses;
        }
    }
    if (ellipses > 1) throw IndexError("ember: an index can only have a single ellipsis ('...')");
    if (consumed > x.ndim())
        throw IndexError("ember: too many indices for array: array is " + std::to_string(x.ndim()) +
                         "-dimensional, but " + std::to_string(consumed) + " were indexed");
    Plan p;
    // The basic view: arrays and (with arrays present) ints become full slices, 0-d masks new
    // axes; remember which axis of the view each advanced item indexes.
    std::vector<Index> basic;
    struct Pending {
        int axis, ndim;  // first axis in the view, number of axes (mask dims; 1 otherwise)
        const IndexItem* item;
        bool zero_d_mask;
        int xaxis;  // the axis of x it indexes (for messages)
    };
    std::vector<Pending> pend;
    int vaxis = 0, xaxis = 0;
    for (const IndexItem& it : items) {
        if (it.array.defined()) {
            const Array& a = it.array;
            if (a.dtype() == DType::bool_ && a.ndim() == 0) {
                basic.emplace_back(NewAxis{});
                pend.push_back({vaxis, 1, &it, true, xaxis});
                ++vaxis;
                continue;
            }
            const int k = a.dtype() == DType::bool_ ? a.ndim() : 1;
            for (int j = 0; j < k; ++j) {
                basic.emplace_back(Slice{});
                if (a.dtype() == DType::bool_) {
                    const int64_t xs = x.shape()[size_t(xaxis + j)], ms = a.shape()[size_t(j)];
                    if (xs != ms)
                        throw IndexError(
                            "ember: boolean index did not match indexed array along axis " +
                            std::to_string(xaxis + j) + "; size of axis is " + std::to_string(xs) +
                            " but size of corresponding boolean axis is " + std::to_string(ms));
                }
            }
            pend.push_back({vaxis, k, &it, false, xaxis});
            vaxis += k;
            xaxis += k;
            continue;
        }
        switch (it.index.kind) {
            case Index::Kind::integer:
                basic.emplace_back(Slice{});
                pend.push_back({vaxis, 1, &it, false, xaxis});
                ++vaxis;
                ++xaxis;
                break;
            case Index::Kind::slice:
                basic.push_back(it.index);
                ++vaxis;
                ++xaxis;
                break;
            case Index::Kind::newaxis:
                basic.push_back(it.index);
                ++vaxis;
                break;
            case Index::Kind::ellipsis: {
                basic.push_back(it.index);
                const int fill = x.ndim() - consumed;
                vaxis += fill;
                xaxis += fill;
                break;
            }
        }
    }
    p.view = index(x, std::span<const Index>(basic));
    p.basic = std::move(basic);
    p.unique = masks == 1 && arrays == 1;
    for (const Pending& q : pend) {
        const IndexItem& it = *q.item;
        if (!it.array.defined()) {  // an integer
            const int64_t n = p.view.shape()[size_t(q.axis)];
            int64_t v = it.index.i;
            if (v < -n || v >= n)
                throw IndexError("ember: index " + std::to_string(v) +
                                 " is out of bounds for axis " + std::to_string(q.xaxis) +
                                 " with size " + std::to_string(n));
            if (v < 0) v += n;
            p.adv.push_back({q.axis, Array(), v, true});
            continue;
        }
        const Array& a = it.array;
        if (q.zero_d_mask) {
            debug::OpScope op("indexing with a 0-d boolean array");
            const bool t = a.item<bool>();
            p.adv.push_back({q.axis, zeros({t ? 1 : 0}, DType::int64, x.device()), 0, false});
            continue;
        }
        if (a.dtype() == DType::bool_) {
            std::vector<Array> nz = nonzero(a);
            for (int j = 0; j < q.ndim; ++j)
                p.adv.push_back({q.axis + j, nz[size_t(j)], 0, false});
            continue;
        }
        p.adv.push_back(
            {q.axis, normalize_indices(a.detach(), p.view.shape()[size_t(q.axis)], q.xaxis, who), 0,
             false});
    }
    return p;
}

struct Offsets {
    Array off;  // int64 of `shape`, contiguous (undefined when empty)
    Shape shape;
};

// Element offsets from view.data() (with `strides`: the view's for setitem, C order for take)
// of every element of the indexing result, in the result's shape.
Offsets offsets_of(const Plan& p, const Strides& strides, const char* who) {
    const Array& v = p.view;
    Shape b;
    bool have = false;
    for (const Advanced& a : p.adv) {
        if (a.is_scalar) continue;
        const Shape& s = a.idx.shape();
        if (!have) {
            b = s;
            have = true;
            continue;
        }
        try {
            b = broadcast_shapes(b, s, who);
        } catch (const ValueError&) {
            std::string shapes;
            for (const Advanced& c : p.adv)
                shapes += " " + (c.is_scalar ? std::string("()") : shape_str(c.idx.shape()));
            throw IndexError(
                "ember: shape mismatch: indexing arrays could not be broadcast together with "
                "shapes" +
                shapes);
        }
    }
    bool adjacent = true;
    for (size_t k = 1; k < p.adv.size(); ++k)
        if (p.adv[k].axis != p.adv[k - 1].axis + 1) adjacent = false;
    const int first = p.adv.front().axis, nb = int(b.size());
    std::vector<bool> is_adv(size_t(v.ndim()), false);
    for (const Advanced& a : p.adv)
        is_adv[size_t(a.axis)] = true;
    // Where the broadcast dims start in the result, and each other view axis' result position.
    const int bstart = adjacent ? first : 0;
    Shape out;
    std::vector<int> pos(size_t(v.ndim()), -1);
    for (int d = 0; d < v.ndim(); ++d) {
        if (is_adv[size_t(d)]) continue;
        if (int(out.size()) == bstart)
            for (int64_t e : b)
                out.push_back(e);
        pos[size_t(d)] = int(out.size());
        out.push_back(v.shape()[size_t(d)]);
    }
    if (int(out.size()) == bstart)
        for (int64_t e : b)
            out.push_back(e);
    if (numel(out) == 0) return {Array(), out};
    const int on = int(out.size());
    auto placed = [&](const Array& a, int at, int width) {
        Shape s(size_t(on), 1);
        for (int i = 0; i < width; ++i)
            s[size_t(at + i)] = a.shape()[size_t(a.ndim() - width + i)];
        return a.reshape(s);
    };
    int64_t base = 0;
    Array off;
    auto acc = [&](const Array& a) { off = off.defined() ? add(off, a) : a; };
    for (const Advanced& a : p.adv) {
        const int64_t st = strides[size_t(a.axis)];
        if (a.is_scalar) {
            base += a.scalar * st;
            continue;
        }
        // Right-aligned into the broadcast dims.
        const int w = a.idx.ndim();
        acc(placed(multiply(a.idx, st), bstart + nb - w, w));
    }
    for (int d = 0; d < v.ndim(); ++d) {
        if (is_adv[size_t(d)]) continue;
        const Array r = multiply(arange(Scalar(int64_t(0)), Scalar(v.shape()[size_t(d)]),
                                        Scalar(int64_t(1)), DType::int64, v.device()),
                                 strides[size_t(d)]);
        acc(placed(r, pos[size_t(d)], 1));
    }
    if (!off.defined()) off = full({}, Scalar(int64_t(0)), DType::int64, v.device());
    if (base != 0) off = add(off, base);
    return {off.broadcast_to(out).astype(DType::int64, false).contiguous(), out};
}

bool has_array(std::span<const IndexItem> items) {
    for (const IndexItem& it : items)
        if (it.array.defined()) return true;
    return false;
}

std::vector<Index> basic_of(std::span<const IndexItem> items) {
    std::vector<Index> b;
    for (const IndexItem& it : items)
        b.push_back(it.index);
    return b;
}

Strides c_strides(const Shape& s) {
    Strides st(s.size(), 1);
    for (int d = int(s.size()) - 2; d >= 0; --d)
        st[size_t(d)] = st[size_t(d + 1)] * s[size_t(d + 1)];
    return st;
}

}  // namespace

Array index(const Array& x, std::span<const IndexItem> items) {
    const char* who = "ember.__getitem__";
    if (!has_array(items)) {
        const std::vector<Index> b = basic_of(items);
        return index(x, std::span<const Index>(b));
    }
    const bool record = x.grad_meta() && autograd::detail::should_record(x);
    if (const Array* m = simple_mask(items); m && !record) return compress_mask(x, *m);
    // x[int_array]: take along the first axis (whole rows at a time on the CPU)
    if (items.size() == 1 && !record && x.ndim() >= 1) {
        const Kind k = kind(items[0].array.dtype());
        if (k == Kind::signed_int || k == Kind::unsigned_int) return take(x, items[0].array, 0);
    }
    Plan p;
    {
        autograd::NoGradGuard ng;
        p = make_plan(x.detach(), items, who);
    }
    if (record) {
        // Through take (differentiable) on the C-ordered basic view, itself a recorded view.
        const Array view = index(x, std::span<const Index>(p.basic));
        Offsets o;
        {
            autograd::NoGradGuard ng;
            o = offsets_of(p, c_strides(p.view.shape()), who);
        }
        if (!o.off.defined()) return zeros(o.shape, x.dtype(), x.device());
        return take(view.reshape({view.size()}), o.off);
    }
    autograd::NoGradGuard ng;
    Offsets o = offsets_of(p, p.view.strides(), who);
    Array out = Array::empty(o.shape, x.dtype(), x.device());
    if (out.size() == 0) return out;
    backend::of(x.device(), who)
        .gather(out.data(), p.view.data(), reinterpret_cast<const int64_t*>(o.off.data()),
                out.size(), int(x.itemsize()), x.device().index);
    return out;
}

void index_assign(const Array& x, std::span<const IndexItem> items, const Operand& value) {
    const char* who = "ember.__setitem__";
    x.check_writeable(who);
    if (value.is_scalar) detail::check_float_to_int(value.scalar, x.dtype(), who);
    if (!has_array(items)) {
        const std::vector<Index> b = basic_of(items);
        return index_assign(x, std::span<const Index>(b), value);
    }
    if ((x.grad_meta() || (!value.is_scalar && value.array().grad_meta())) &&
        autograd::detail::should_record_assign(x, value))
        return autograd::detail::index_assign(x, items, value);
    if (!value.is_scalar && value.array().device() != x.device())
        throw ValueError(std::string(who) + ": value is on " + value.array().device().str() +
                         " but the array is on " + x.device().str());
    if (value.is_scalar && value.scalar.weak == WeakKind::complex && !is_complex(x.dtype()))
        throw TypeError(std::string(who) +
                        ": cannot assign a complex number to an array of dtype " +
                        std::string(name(x.dtype())));
    autograd::NoGradGuard ng;
    // A full-shape mask and one value: an in-place where (one fused pass, no offsets).
    const bool one_value = value.is_scalar || value.array().size() == 1;
    if (const Array* m = simple_mask(items);
        m && one_value && m->shape() == x.shape() && m->device() == x.device()) {
        Array v = value.is_scalar ? full({}, value.scalar, x.dtype(), x.device())
                                  : value.array().reshape({}).astype(x.dtype(), false);
        const Operand xs[3] = {Operand(*m), Operand(v), Operand(x)};
        map(ops::OpId::where, std::span<const Operand>(xs), &x);
        return;
    }
    Plan p = make_plan(x.detach(), items, who);
    Offsets o = offsets_of(p, p.view.strides(), who);
    if (!o.off.defined()) {
        if (!value.is_scalar) broadcast_shapes(o.shape, value.array().shape(), who);
        return;
    }
    Array v;
    if (value.is_scalar) {
        v = full(o.shape, value.scalar, x.dtype(), x.device());
    } else {
        const Array& va = value.array();
        Shape vs = va.shape();
        // NumPy drops leading 1s of the value that the result has no room for.
        Array src = va;
        size_t drop = 0;
        while (vs.size() - drop > o.shape.size() && vs[drop] == 1)
            ++drop;
        if (drop) vs = Shape(vs.begin() + drop, vs.end());
        if (vs.size() != va.shape().size()) src = va.reshape(vs);
        const Shape bshape = [&] {
            try {
                return broadcast_shapes(o.shape, vs, who);
            } catch (const ValueError&) {
                return Shape{-1};
            }
        }();
        if (!(bshape == o.shape))
            throw ValueError(std::string(who) + ": shape mismatch: value array of shape " +
                             shape_str(va.shape()) +
                             " could not be broadcast to indexing result of shape " +
                             shape_str(o.shape));
        v = src.broadcast_to(o.shape).astype(x.dtype(), true).contiguous();
    }
    // The offsets' range from view.data().
    int64_t lo = 0, hi = 0;
    const Array& vw = p.view;
    for (int d = 0; d < vw.ndim(); ++d) {
        const int64_t span = (vw.shape()[size_t(d)] - 1) * vw.strides()[size_t(d)];
        if (span < 0)
            lo += span;
        else
            hi += span;
    }
    backend::of(x.device(), who)
        .scatter(vw.data(), v.data(), reinterpret_cast<const int64_t*>(o.off.data()), v.size(),
                 int(x.itemsize()), lo, hi - lo + 1, p.unique, x.device().index);
    x.storage()->bump_version();
}

}  // namespace ember
