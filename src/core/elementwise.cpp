// The elementwise front-end: dtype resolution from the op table (NumPy's loop search with NEP 50
// weak scalars), broadcasting, output allocation or in-place checks, then one backend map call.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/internal.hpp"
#include "core/record.hpp"
#include "ember/debug.hpp"
#include "ember/error.hpp"
#include "ember/ops.hpp"

namespace ember {

namespace {

// NumPy's order of loop types: the first one the inputs cast to safely wins.
constexpr DType loop_order[] = {
    DType::bool_,    DType::int8,    DType::uint8,   DType::int16,     DType::uint16,
    DType::int32,    DType::uint32,  DType::int64,   DType::uint64,    DType::float16,
    DType::bfloat16, DType::float32, DType::float64, DType::complex64, DType::complex128,
};

const std::string& who(ops::OpId op) {
    static const auto names = [] {
        std::vector<std::string> v;
        for (const ops::OpInfo& oi : ops::op_infos)
            v.push_back("ember." + std::string(oi.name));
        return v;
    }();
    return names[size_t(op)];
}

int kind_rank(DType t) {
    switch (kind(t)) {
        case Kind::boolean:
            return 0;
        case Kind::unsigned_int:
            return 1;
        case Kind::signed_int:
            return 2;
        case Kind::floating:
            return 3;
        case Kind::complex:
            return 4;
    }
    return 0;
}

bool can_cast_same_kind(DType from, DType to) {
    if (can_cast(from, to)) return true;
    const int a = kind_rank(from), b = kind_rank(to);
    if (a == 1 && b == 2) return true;  // unsigned to signed
    return a <= b && !(a == 2 && b == 1);
}

bool is_comparison(ops::OpId op) {
    using ops::OpId;
    return op == OpId::equal || op == OpId::not_equal || op == OpId::less ||
           op == OpId::less_equal || op == OpId::greater || op == OpId::greater_equal;
}

// x ** 0.5 with a Python float: NumPy's power loops (float32/float64) and its ** operator
// (float16 too) take the square root for a scalar exponent of 0.5, so (-inf) ** 0.5 is NaN and
// (-0.0) ** 0.5 is -0.0 where C's pow (and the standard, for arrays) give inf and 0.
bool is_sqrt_power(std::span<const Operand> xs) {
    if (xs[0].is_scalar || !xs[1].is_scalar) return false;
    const Scalar& e = xs[1].scalar;
    return e.weak == WeakKind::floating && e.c.real() == 0.5 && is_floating(xs[0].dtype());
}

// NumPy's integer power raises for a negative exponent (whatever the base). A scalar exponent
// is checked here; an array exponent costs one reduction and one synchronization (on a GPU too),
// paid only by integer powers with a signed integer array as exponent.
void check_int_power(std::span<const Operand> xs, DType loop, const Shape& shape) {
    if (kind(loop) != Kind::signed_int) return;
    const Operand& e = xs[1];
    bool negative = false;
    if (e.is_scalar) {
        const Scalar& s = e.scalar;
        negative = (s.weak == WeakKind::integer || kind(s.dtype) == Kind::signed_int) &&
                   s.dtype != DType::uint64 && s.i < 0;
    } else if (kind(e.dtype()) == Kind::signed_int && numel(shape) > 0 && e.array().size() > 0) {
        debug::OpScope op("integer power (the negative exponent check)");
        negative = any(less(e.array(), Operand(Scalar(0)))).item<bool>();
    }
    if (negative)
        throw ValueError("ember.pow: Integers to negative integer powers are not allowed.");
}

bool fits(const Scalar& s, DType t) {
    if (s.weak != WeakKind::integer || !is_integer(t)) return true;
    const IInfo ii = iinfo(t);
    if (s.dtype == DType::float64) return false;  // beyond 64 bits
    if (s.dtype == DType::uint64) return s.u <= ii.max;
    return s.i >= ii.min && (s.i < 0 || uint64_t(s.i) <= ii.max);
}

}  // namespace

DType result_type(std::span<const Operand> xs) {
    // NumPy folds several dtypes starting from the highest kind (so int8, uint8, float16 gives
    // float16, not float32 as pairwise left-to-right would).
    bool have_strong = false;
    DType t = DType::bool_;
    WeakKind w = WeakKind::none;
    // Fastest path: two arrays of one dtype (most binary ops).
    if (xs.size() == 2 && !xs[0].is_scalar && !xs[1].is_scalar && xs[0].dtype() == xs[1].dtype())
        return xs[0].dtype();
    // Fast path: at most two strong dtypes (pairwise promotion is then exact).
    int nstrong = 0;
    for (const Operand& x : xs) {
        if (x.is_scalar && x.scalar.weak != WeakKind::none) {
            if (int(x.scalar.weak) > int(w)) w = x.scalar.weak;
        } else {
            t = nstrong ? promote_types(t, x.dtype()) : x.dtype();
            ++nstrong;
        }
    }
    if (nstrong <= 2) return nstrong ? promote_weak(t, w) : default_dtype(w);
    w = WeakKind::none;
    for (int pass = int(Kind::complex); pass >= 0; --pass) {
        for (const Operand& x : xs) {
            if (x.is_scalar && x.scalar.weak != WeakKind::none) {
                if (pass == 0 && int(x.scalar.weak) > int(w)) w = x.scalar.weak;
                continue;
            }
            int k = int(kind(x.dtype()));
            if (k == int(Kind::unsigned_int)) k = int(Kind::signed_int);
            if (k != pass) continue;
            t = have_strong ? promote_types(t, x.dtype()) : x.dtype();
            have_strong = true;
        }
    }
    if (!have_strong) return default_dtype(w);
    return promote_weak(t, w);
}

namespace {

// loop_for[op][t]: the first loop of `op` that dtype `t` casts to safely (NumPy's loop search),
// or bool_ with ok=false; computed once.
struct LoopChoice {
    DType loop = DType::bool_;
    bool ok = false;
};
const LoopChoice& loop_for(ops::OpId op, DType t) {
    static const auto table = [] {
        std::vector<std::array<LoopChoice, num_dtypes>> tab(size_t(ops::num_ops));
        for (int o = 0; o < ops::num_ops; ++o)
            for (int i = 0; i < num_dtypes; ++i)
                for (DType d : loop_order)
                    if ((ops::op_infos[o].loops & ops::bit(d)) && can_cast(DType(i), d)) {
                        tab[size_t(o)][size_t(i)] = {d, true};
                        break;
                    }
        return tab;
    }();
    return table[size_t(op)][size_t(t)];
}

// NumPy's loop search over inputs of several dtypes: the first loop every input casts to safely,
// each input taken with the weak scalars' kind (NEP 50: a Python float makes an integer input
// float64). It differs from the loop of the promoted dtype when that is not the smallest common
// loop: int8 and uint8 promote to int16 (whose float loop is float32), but both cast to float16.
LoopChoice loop_for_inputs(ops::OpId op, std::span<const Operand> xs) {
    static const auto casts_to = [] {
        std::array<uint32_t, num_dtypes> m{};
        for (int i = 0; i < num_dtypes; ++i)
            for (int j = 0; j < num_dtypes; ++j)
                if (can_cast(DType(i), DType(j))) m[size_t(i)] |= ops::bit(DType(j));
        return m;
    }();
    WeakKind w = WeakKind::none;
    for (const Operand& x : xs)
        if (x.is_scalar && x.scalar.weak != WeakKind::none && int(x.scalar.weak) > int(w))
            w = x.scalar.weak;
    uint32_t ok = ops::info(op).loops;
    for (const Operand& x : xs)
        if (!x.is_scalar || x.scalar.weak == WeakKind::none)
            ok &= casts_to[size_t(promote_weak(x.dtype(), w))];
    for (DType d : loop_order)
        if (ok & ops::bit(d)) return {d, true};
    return {};
}

// Whether the strong operands have more than one dtype (only then can the loop search over
// the inputs differ from the loop of their promoted dtype).
bool mixed_dtypes(std::span<const Operand> xs) {
    const Operand* first = nullptr;
    for (const Operand& x : xs) {
        if (x.is_scalar && x.scalar.weak != WeakKind::none) continue;
        if (!first)
            first = &x;
        else if (x.dtype() != first->dtype())
            return true;
    }
    return false;
}

// x ** 2 with a Python 2 (or 2.0 on a float array) is square(x), NumPy's fast path: the same
// dtype and values, one multiply instead of a pow per element.
bool is_square_power(std::span<const Operand> xs) {
    if (xs[0].is_scalar || !xs[1].is_scalar) return false;
    const Scalar& e = xs[1].scalar;
    const DType t = xs[0].dtype();
    const bool two = (e.weak == WeakKind::integer && e.i == 2) ||
                     (e.weak == WeakKind::floating && e.c.real() == 2.0 && is_inexact(t));
    if (!two || t == DType::bool_) return false;
    const LoopChoice& c = loop_for(ops::OpId::square, t);
    return c.ok && c.loop == t;
}

}  // namespace

OpTypes resolve_op_types(ops::OpId op, std::span<const Operand> xs) {
    const ops::OpInfo& oi = ops::info(op);
    if (oi.flags & ops::F_CAST_BOOL) return {DType::bool_, DType::bool_};
    DType t = result_type(xs);
    if ((oi.flags & ops::F_NO_BOOL) && t == DType::bool_)
        throw TypeError(who(op) + ": not supported for boolean inputs (dtype bool)");
    if ((oi.flags & ops::F_INT_TO_F64) && !is_inexact(t)) t = DType::float64;
    if ((oi.flags & ops::F_BOOL_FLOAT) && t == DType::bool_) t = DType::float16;
    LoopChoice c = loop_for(op, t);
    // Several input dtypes without a loop of their promoted dtype (integers into a float-only
    // op): NumPy's search over the inputs may find a smaller loop.
    if (c.ok && c.loop != t && !(oi.flags & ops::F_INT_TO_F64) && mixed_dtypes(xs)) {
        const LoopChoice d = loop_for_inputs(op, xs);
        if (d.ok) c = d;
    }
    if (!c.ok) throw TypeError(who(op) + ": not supported for input dtype " + std::string(name(t)));
    const DType out = oi.out == ops::OutRule::boolean ? DType::bool_
                      : oi.out == ops::OutRule::real  ? real_dtype(c.loop)
                                                      : c.loop;
    return {c.loop, out};
}

namespace {
// A new result in NumPy's order 'K': when the operand `like` (of the result's shape) is dense in
// a permuted axis order (a channels_last batch, a transpose), the result is laid out in that
// order, so a chain of elementwise ops keeps the layout and the next op needs no relayout copy;
// otherwise C order.
[[gnu::noinline]] Array empty_like_layout(const Array& like, DType dtype, Device dev) {
    const auto& sh = like.shape();
    const auto& st = like.strides();
    const size_t n = sh.size();
    std::vector<int64_t> order(n);
    for (size_t i = 0; i < n; ++i)
        order[i] = int64_t(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return std::abs(st[a]) > std::abs(st[b]); });
    int64_t step = 1;
    for (size_t i = n; i-- > 0;) {
        const int64_t d = order[i];
        if (sh[d] != 1 && st[d] != step) return Array::empty(sh, dtype, dev);  // not dense
        step *= sh[d];
    }
    Shape ps(n);
    std::vector<int64_t> inv(n);
    for (size_t i = 0; i < n; ++i) {
        ps[i] = sh[order[i]];
        inv[order[i]] = int64_t(i);
    }
    return Array::empty(ps, dtype, dev).permute(inv);
}
}  // namespace

Array map(ops::OpId op, std::span<const Operand> xs, const Array* out) {
    const ops::OpInfo& oi = ops::info(op);
    if (int(xs.size()) != oi.arity)
        throw TypeError(who(op) + ": expected " + std::to_string(oi.arity) + " operands, got " +
                        std::to_string(xs.size()));
    if (op == ops::OpId::pow && is_sqrt_power(xs)) [[unlikely]]
        return map(ops::OpId::sqrt, xs.first(1), out);
    if (op == ops::OpId::pow && is_square_power(xs)) [[unlikely]]
        return map(ops::OpId::square, xs.first(1), out);
    OpTypes ty = resolve_op_types(op, xs);
    // Python integers beyond the loop type: comparisons answer exactly (as NumPy 2 does) by
    // widening the loop; everything else raises OverflowError.
    for (const Operand& x : xs)
        if (x.is_scalar && !fits(x.scalar, ty.loop) && is_comparison(op))
            ty.loop = (ty.loop == DType::uint64 || x.scalar.dtype != DType::int64) ? DType::float64
                                                                                   : DType::int64;
    const DType compute = ops::compute_dtype(op, ty.loop);

    // Device and shape of the array operands.
    const Array* first = nullptr;
    // The result's shape: the first array's, or a broadcast one computed only when they differ
    // (no copy of a shape on the common path).
    Shape broadcast;
    const Shape* shape = &broadcast;
    bool meta = out && out->grad_meta();
    for (const Operand& x : xs) {
        if (x.is_scalar) continue;
        if (!x.array().defined()) throw ValueError(who(op) + ": undefined array operand");
        meta |= bool(x.array().grad_meta());
        if (!first) {
            first = &x.array();
            shape = &first->shape();
        } else {
            if (x.array().device() != first->device())
                throw ValueError(who(op) + ": operands are on different devices (" +
                                 first->device().str() + " and " + x.array().device().str() +
                                 "); move one with .to(device)");
            if (!(x.array().shape() == *shape)) {
                broadcast = broadcast_shapes(*shape, x.array().shape(), who(op).c_str());
                shape = &broadcast;
            }
        }
    }
    const Device dev = first ? first->device() : (out ? out->device() : default_device());
    if (out) out->check_writeable(who(op).c_str(), "output array");
    if (op == ops::OpId::pow && is_integer(ty.loop)) check_int_power(xs, ty.loop, *shape);

    // Operands with autograd state (found above, one null test each) take the recording path.
    const bool record = meta && autograd::detail::should_record_map(xs, out);
    if (out && !record) {
        if (out->device() != dev)
            throw ValueError(who(op) + ": output is on " + out->device().str() +
                             " but the operands are on " + dev.str());
        if (!(out->shape() == *shape)) {
            Shape b = broadcast_shapes(out->shape(), *shape, who(op).c_str());
            if (!(b == out->shape()))
                throw ValueError(who(op) + ": non-broadcastable output operand with shape " +
                                 shape_str(out->shape()) + " doesn't match the broadcast shape " +
                                 shape_str(b));
            broadcast = std::move(b);
            shape = &broadcast;
        }
        if (!can_cast_same_kind(ty.out, out->dtype()))
            throw TypeError(who(op) + ": cannot cast the result from dtype " +
                            std::string(name(ty.out)) + " to the output dtype " +
                            std::string(name(out->dtype())) + " with casting rule 'same_kind'");
    }
    // Built in place, and every return below returns it: no move of the result (a conditional
    // expression, or a return of another object, would add one).
    Array result = [&]() -> Array {
        if (record) [[unlikely]]
            return autograd::detail::map(op, xs, out);
        if (out) return *out;
        if (first && first->ndim() > 1 && !first->is_contiguous() && first->shape() == *shape)
            [[unlikely]]
            return empty_like_layout(*first, ty.out, dev);
        return Array::empty(*shape, ty.out, dev);
    }();
    if (record || result.size() == 0) return result;

    // Operand views for the loop: the inputs themselves when no broadcast or copy is needed.
    const Array* ptrs[backend::max_operands];
    // Broadcast or copied operands, rarely needed: allocated then (four empty optionals cost
    // about a hundred instructions per op to build and destroy).
    std::unique_ptr<std::optional<Array>[]> tmp;
    auto hold = [&](size_t k, Array&& a) {
        if (!tmp) tmp.reset(new std::optional<Array>[backend::max_operands]);
        tmp[k] = std::move(a);
        return &*tmp[k];
    };
    ptrs[0] = &result;
    for (size_t k = 0; k < xs.size(); ++k) {
        if (xs[k].is_scalar) {
            ptrs[k + 1] = &result;  // placeholder with the right shape; replaced below
            continue;
        }
        const Array& a = xs[k].array();
        const Array* p = &a;
        if (!(a.shape() == *shape)) p = hold(k + 1, a.broadcast_to(*shape));
        if (out && detail::may_overlap(result, *p) && !detail::same_view(result, *p))
            p = hold(k + 1, p->copy());
        ptrs[k + 1] = p;
    }
    backend::Loop loop = detail::make_loop(ptrs, int(xs.size() + 1), 0);
    for (size_t k = 0; k < xs.size(); ++k) {
        if (!xs[k].is_scalar) continue;
        const DType st = (oi.flags & ops::F_CAST_BOOL) ? DType::bool_ : compute;
        alignas(16) unsigned char buf[16];
        const Scalar& s = xs[k].scalar;
        if (s.weak != WeakKind::none) {
            // Range-checked in the loop type (NEP 50), then widened to the compute type.
            s.store(ty.loop, buf, true, who(op).c_str());
            if (st != ty.loop) s.strong(ty.loop).store(st, buf, false, "");
        } else {
            s.store(st, buf, false, "");
        }
        detail::set_scalar_operand(loop, int(k + 1), st, buf);
    }
    // The result (or out) lives on dev, so its backend exists; `of` names the op otherwise.
    backend::Backend* be = backend::get(dev.type);
    if (!be) [[unlikely]]
        be = &backend::of(dev, who(op).c_str());
    be->map(op, compute, loop);
    if (debug::profiling()) debug::count_bytes(backend::footprint_bytes(loop));
    if (out) out->storage()->bump_version();
    return result;
}

#define EMBER_DEFINE_OP_1(name)          \
    Array name(const Operand& a) {       \
        const Operand xs[1] = {a};       \
        return map(ops::OpId::name, xs); \
    }
#define EMBER_DEFINE_OP_2(name)                      \
    Array name(const Operand& a, const Operand& b) { \
        const Operand xs[2] = {a, b};                \
        return map(ops::OpId::name, xs);             \
    }
#define EMBER_DEFINE_OP_3(name)                                        \
    Array name(const Operand& a, const Operand& b, const Operand& c) { \
        const Operand xs[3] = {a, b, c};                               \
        return map(ops::OpId::name, xs);                               \
    }
#define EMBER_DEFINE_OP(name, arity, loops, out, flags, doc) EMBER_DEFINE_OP_##arity(name)
EMBER_ELEMENTWISE_OPS(EMBER_DEFINE_OP)

namespace {
Array& inplace(Array& a, ops::OpId op, const Operand& b) {
    const Operand xs[2] = {a, b};
    map(op, xs, &a);
    return a;
}
}  // namespace

Array& operator+=(Array& a, const Operand& b) { return inplace(a, ops::OpId::add, b); }
Array& operator-=(Array& a, const Operand& b) { return inplace(a, ops::OpId::subtract, b); }
Array& operator*=(Array& a, const Operand& b) { return inplace(a, ops::OpId::multiply, b); }
Array& operator/=(Array& a, const Operand& b) { return inplace(a, ops::OpId::divide, b); }

}  // namespace ember
