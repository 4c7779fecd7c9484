// Storage, Scalar and the Array view operations (reshape, transpose, slicing, copies, casts).
#include <algorithm>
#include <cstring>
#include <string>

#include "backend/backend.hpp"
#include "core/internal.hpp"
#include "core/record.hpp"
#include "ember/array.hpp"
#include "ember/debug.hpp"
#include "ember/error.hpp"
#include "ops/convert.hpp"

namespace ember {

// ---- Storage ----------------------------------------------------------------------------------

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, Device device) {
    backend::Backend& b = backend::of(device, "ember");
    void* p = b.allocate(nbytes, device.index);
    debug::count_alloc(nbytes);
    if (!p)
        throw MemoryError("ember: unable to allocate " + std::to_string(nbytes) + " bytes on " +
                          device.str());
    return std::make_shared<Storage>(p, nbytes, device, nullptr);
}

std::shared_ptr<Storage> Storage::wrap(void* data, size_t nbytes, Device device,
                                       std::shared_ptr<void> owner) {
    if (!owner) owner = std::shared_ptr<void>(nullptr, [](void*) {});
    return std::make_shared<Storage>(data, nbytes, device, std::move(owner));
}

Storage::~Storage() {
    if (!owner_ && data_) {
        if (backend::Backend* b = backend::get(device_.type))
            b->deallocate(data_, nbytes_, device_.index);
    }
}

// ---- Scalar -----------------------------------------------------------------------------------

namespace {

// The strongly typed Scalar of the dtype-`t` value stored at `buf` (NumPy's conversions to the
// bool, integer and complex views).
Scalar scalar_from_bytes(DType t, const unsigned char* buf) {
    Scalar s;
    s.dtype = t;
    s.weak = WeakKind::none;
    visit_dtype(t, [&](auto tag) {
        using T = decltype(tag);
        T v{};
        std::memcpy(&v, buf, sizeof(T));
        using ops::convert;
        s.b = convert<bool>(v);
        if constexpr (ops::is_cplx<T>::value) {
            s.c = std::complex<double>(v.real(), v.imag());
        } else {
            s.c = convert<double>(v);
            if constexpr (std::is_integral_v<T>) {
                s.i = int64_t(v);
                s.u = uint64_t(v);
            } else {
                s.i = convert<int64_t>(v);
                s.u = convert<uint64_t>(v);
            }
        }
    });
    return s;
}

}  // namespace

Scalar Scalar::from_uint64(uint64_t v) {
    Scalar s{int64_t(v)};
    s.u = v;
    s.c = double(v);
    s.dtype = DType::uint64;
    return s;
}

Scalar Scalar::strong(DType t) const {
    alignas(16) unsigned char buf[16];
    store(t, buf, false, "ember");
    Scalar s = scalar_from_bytes(t, buf);
    if (is_complex(t)) s.i = int64_t(s.c.real());
    return s;
}

void Scalar::store(DType t, void* dst, bool check_range, const char* who) const {
    const bool big = weak == WeakKind::integer && dtype == DType::uint64;
    const bool huge = weak == WeakKind::integer && dtype == DType::float64;  // beyond 64 bits
    if (check_range && weak == WeakKind::integer && is_integer(t)) {
        const IInfo ii = iinfo(t);
        const bool ok =
            !huge && (big ? u <= ii.max : (i >= ii.min && (i < 0 || uint64_t(i) <= ii.max)));
        if (!ok)
            throw OverflowError(std::string(who) + ": Python integer " +
                                (huge  ? std::to_string(c.real())
                                 : big ? std::to_string(u)
                                       : std::to_string(i)) +
                                " out of bounds for " + std::string(name(t)));
    }
    visit_dtype(t, [&](auto tag) {
        using T = decltype(tag);
        using ops::convert;
        T v{};
        if (weak == WeakKind::none) {
            // A strong scalar keeps its value in the fields of its own kind.
            switch (kind(dtype)) {
                case Kind::boolean:
                    v = convert<T>(b);
                    break;
                case Kind::signed_int:
                    v = convert<T>(i);
                    break;
                case Kind::unsigned_int:
                    v = convert<T>(u);
                    break;
                case Kind::floating:
                    v = convert<T>(c.real());
                    break;
                case Kind::complex:
                    v = convert<T>(c);
                    break;
            }
        } else if (weak == WeakKind::boolean) {
            v = convert<T>(b);
        } else if (weak == WeakKind::integer) {
            if (huge)
                v = convert<T>(c.real());
            else if (big)
                v = convert<T>(u);
            else
                v = convert<T>(i);
        } else if (weak == WeakKind::floating) {
            v = convert<T>(c.real());
        } else {
            v = convert<T>(c);
        }
        std::memcpy(dst, &v, sizeof(T));
    });
}

// ---- Array ------------------------------------------------------------------------------------

namespace {

std::vector<int64_t> reversed_axes(int nd) {
    std::vector<int64_t> p(static_cast<size_t>(nd));
    for (int i = 0; i < nd; ++i)
        p[size_t(i)] = nd - 1 - i;
    return p;
}

std::vector<int64_t> swapped_axes(int nd, int64_t a, int64_t b) {
    std::vector<int64_t> p(static_cast<size_t>(nd));
    for (int i = 0; i < nd; ++i)
        p[size_t(i)] = i;
    std::swap(p[size_t(normalize_axis(a, nd, "ember.swapaxes"))],
              p[size_t(normalize_axis(b, nd, "ember.swapaxes"))]);
    return p;
}

}  // namespace

Array Array::empty(const Shape& shape, DType dtype, Device device) {
    const int64_t n = checked_numel(shape, "ember.empty");
    const int64_t isz = ember::itemsize(dtype);
    int64_t nonzero = 1;  // NumPy's bound, which holds for empty arrays too
    for (int64_t d : shape)
        nonzero *= d ? d : 1;
    if (nonzero > INT64_MAX / isz)
        throw ValueError("ember.empty: array is too big; shape " + shape_str(shape) + " of " +
                         std::string(name(dtype)) + " needs more than 2**63 bytes");
    // Members set in place: the constructor's by-value shape and strides cost two more copies.
    Array a;
    a.storage_ = Storage::allocate(size_t(n * isz), device);
    a.shape_ = shape;
    contiguous_strides(shape, a.strides_);
    a.dtype_ = dtype;
    return a;
}

bool Array::is_contiguous() const {
    int64_t expect = 1;
    for (size_t i = shape_.size(); i-- > 0;) {
        if (shape_[i] == 1) continue;
        if (shape_[i] == 0) return true;
        if (strides_[i] != expect) return false;
        expect *= shape_[i];
    }
    return true;
}

bool Array::is_f_contiguous() const {
    int64_t expect = 1;
    for (size_t i = 0; i < shape_.size(); ++i) {
        if (shape_[i] == 1) continue;
        if (shape_[i] == 0) return true;
        if (strides_[i] != expect) return false;
        expect *= shape_[i];
    }
    return true;
}

void Array::throw_read_only(const char* who, const char* what) {
    throw ValueError(std::string(who) + ": " + what + " is read-only");
}

Array Array::view(Shape shape, Strides strides, int64_t offset_delta) const {
    Array r = raw_view(std::move(shape), std::move(strides), offset_delta);
    if (grad_meta_) [[unlikely]]
        autograd::detail::on_strided(*this, r);
    return r;
}

std::optional<Array> Array::reshape_view(const Shape& shape) const {
    // Walk both shapes in C order grouping dims of equal products; each group of the old shape
    // must be contiguous within itself for the view to exist.
    const size_t on = shape_.size(), nn = shape.size();
    if (size() == 0) {
        Array r = raw_view(shape, contiguous_strides(shape));
        if (grad_meta_) [[unlikely]]
            autograd::detail::on_reshape(*this, r);
        return r;
    }
    Strides ns(nn);
    size_t oi = 0, ni = 0;
    while (oi < on || ni < nn) {
        // Size-1 dims are free on both sides.
        if (ni < nn && shape[ni] == 1) {
            ns[ni++] = 1;
            continue;
        }
        if (oi < on && shape_[oi] == 1) {
            ++oi;
            continue;
        }
        if (oi >= on || ni >= nn) return std::nullopt;
        size_t o_end = oi + 1, n_end = ni + 1;
        int64_t op = shape_[oi], np = shape[ni];
        while (op != np) {
            if (op < np) {
                if (o_end >= on) return std::nullopt;
                op *= shape_[o_end++];
            } else {
                if (n_end >= nn) return std::nullopt;
                np *= shape[n_end++];
            }
        }
        size_t prev = o_end;  // previous non-trivial dim of the group
        for (size_t k = oi; k < o_end; ++k) {
            if (shape_[k] == 1) continue;
            if (prev != o_end && strides_[prev] != strides_[k] * shape_[k]) return std::nullopt;
            prev = k;
        }
        // Innermost stride of the group.
        int64_t st = 1;
        for (size_t k = o_end; k-- > oi;)
            if (shape_[k] != 1) {
                st = strides_[k];
                break;
            }
        for (size_t k = n_end; k-- > ni;) {
            ns[k] = st;
            st *= shape[k];
        }
        oi = o_end;
        ni = n_end;
    }
    {
        Array r = raw_view(shape, ns);
        if (grad_meta_) [[unlikely]]
            autograd::detail::on_reshape(*this, r);
        return r;
    }
}

Array Array::reshape(const Shape& shape) const {
    if (checked_numel(shape, "ember.reshape") != size())
        throw ValueError("ember.reshape: cannot reshape array of size " + std::to_string(size()) +
                         " into shape " + shape_str(shape));
    if (auto v = reshape_view(shape)) return std::move(*v);
    Array c = copy();
    Array r = c.raw_view(shape, contiguous_strides(shape));
    if (c.grad_meta_) [[unlikely]]
        autograd::detail::on_reshape(c, r);
    return r;
}

Array Array::transpose() const {
    Shape s(shape_.rbegin(), shape_.rend());
    Strides st(strides_.rbegin(), strides_.rend());
    {
        Array r = raw_view(std::move(s), std::move(st));
        if (grad_meta_) [[unlikely]]
            autograd::detail::on_permute(*this, r, reversed_axes(ndim()));
        return r;
    }
}

Array Array::permute(const std::vector<int64_t>& axes) const {
    if (int(axes.size()) != ndim())
        throw ValueError("ember.permute_dims: axes don't match array (got " +
                         std::to_string(axes.size()) + " axes for an array of dimension " +
                         std::to_string(ndim()) + ")");
    Shape s(axes.size());
    Strides st(axes.size());
    std::vector<bool> seen(axes.size(), false);
    for (size_t i = 0; i < axes.size(); ++i) {
        int a = normalize_axis(axes[i], ndim(), "ember.permute_dims");
        if (seen[size_t(a)]) throw ValueError("ember.permute_dims: repeated axis in transpose");
        seen[size_t(a)] = true;
        s[i] = shape_[size_t(a)];
        st[i] = strides_[size_t(a)];
    }
    {
        Array r = raw_view(std::move(s), std::move(st));
        if (grad_meta_) [[unlikely]]
            autograd::detail::on_permute(*this, r, axes);
        return r;
    }
}

Array Array::swapaxes(int64_t a, int64_t b) const {
    const int x = normalize_axis(a, ndim(), "ember.swapaxes");
    const int y = normalize_axis(b, ndim(), "ember.swapaxes");
    Shape s = shape_;
    Strides st = strides_;
    std::swap(s[size_t(x)], s[size_t(y)]);
    std::swap(st[size_t(x)], st[size_t(y)]);
    {
        Array r = raw_view(std::move(s), std::move(st));
        if (grad_meta_) [[unlikely]]
            autograd::detail::on_permute(*this, r, swapped_axes(ndim(), a, b));
        return r;
    }
}

Array Array::broadcast_to(const Shape& shape) const {
    checked_numel(shape, "ember.broadcast_to");
    if (shape.size() < shape_.size())
        throw ValueError("ember.broadcast_to: cannot broadcast shape " + shape_str(shape_) +
                         " to " + shape_str(shape));
    const size_t lead = shape.size() - shape_.size();
    Strides st(shape.size(), 0);
    for (size_t i = 0; i < shape_.size(); ++i) {
        if (shape_[i] == shape[lead + i])
            st[lead + i] = strides_[i];
        else if (shape_[i] == 1)
            st[lead + i] = 0;
        else
            throw ValueError("ember.broadcast_to: cannot broadcast shape " + shape_str(shape_) +
                             " to " + shape_str(shape));
    }
    {
        Array r = raw_view(shape, std::move(st));
        if (grad_meta_) [[unlikely]]
            autograd::detail::on_broadcast(*this, r);
        return r;
    }
}

Array Array::expand_dims(int64_t axis) const {
    const int a = normalize_axis(axis, ndim() + 1, "ember.expand_dims");
    Shape s = shape_;
    Strides st = strides_;
    s.insert(size_t(a), 1);
    st.insert(size_t(a), size_t(a) < strides_.size() ? strides_[size_t(a)] * shape_[size_t(a)] : 1);
    {
        Array r = raw_view(std::move(s), std::move(st));
        if (grad_meta_) [[unlikely]]
            autograd::detail::on_reshape(*this, r);
        return r;
    }
}

Array Array::squeeze() const {
    Shape s;
    Strides st;
    for (size_t i = 0; i < shape_.size(); ++i)
        if (shape_[i] != 1) {
            s.push_back(shape_[i]);
            st.push_back(strides_[i]);
        }
    {
        Array r = raw_view(std::move(s), std::move(st));
        if (grad_meta_) [[unlikely]]
            autograd::detail::on_reshape(*this, r);
        return r;
    }
}

Array Array::squeeze(const std::vector<int64_t>& axes) const {
    std::vector<bool> drop(shape_.size(), false);
    for (int64_t a : axes) {
        int x = normalize_axis(a, ndim(), "ember.squeeze");
        if (shape_[size_t(x)] != 1)
            throw ValueError(
                "ember.squeeze: cannot select an axis to squeeze out which has size "
                "not equal to one (axis " +
                std::to_string(a) + ", size " + std::to_string(shape_[size_t(x)]) + ")");
        drop[size_t(x)] = true;
    }
    Shape s;
    Strides st;
    for (size_t i = 0; i < shape_.size(); ++i)
        if (!drop[i]) {
            s.push_back(shape_[i]);
            st.push_back(strides_[i]);
        }
    {
        Array r = raw_view(std::move(s), std::move(st));
        if (grad_meta_) [[unlikely]]
            autograd::detail::on_reshape(*this, r);
        return r;
    }
}

Array Array::slice(int axis, int64_t start, int64_t stop, int64_t step) const {
    // start/stop/step already normalized (Python's slice.indices semantics).
    if (step == 0) throw ValueError("ember.slice: slice step cannot be zero");
    if (step < -INT64_MAX) step = -INT64_MAX;
    const int64_t len = detail::slice_length(start, stop, step);
    Shape s = shape_;
    Strides st = strides_;
    s[size_t(axis)] = len;
    if (len > 1) st[size_t(axis)] = strides_[size_t(axis)] * step;
    {
        Array r = raw_view(std::move(s), std::move(st), len ? start * strides_[size_t(axis)] : 0);
        if (grad_meta_) [[unlikely]]
            autograd::detail::on_view(
                *this, r, [=](const Array& z) { return z.slice(axis, start, stop, step); },
                "SliceBackward");
        return r;
    }
}

Array Array::diagonal_view(int64_t k) const {
    if (ndim() < 2) throw ValueError("ember.diagonal: array must be at least 2-d");
    const size_t r = shape_.size() - 2, c = r + 1;
    const int64_t rows = shape_[r], cols = shape_[c];
    int64_t n, off;
    // Only an offset within the matrix is computed: |k| may be anything up to 2**63.
    if (k >= 0) {
        n = std::max<int64_t>(0, std::min(rows, cols - k));
        off = n ? k * strides_[c] : 0;
    } else {
        n = std::max<int64_t>(0, std::min(rows + k, cols));
        off = n ? -k * strides_[r] : 0;
    }
    Shape s = shape_;
    Strides st = strides_;
    s.erase(c);
    st.erase(c);
    s[r] = n;
    st[r] = strides_[r] + strides_[c];
    {
        Array r = raw_view(std::move(s), std::move(st), n ? off : 0);
        if (grad_meta_) [[unlikely]]
            autograd::detail::on_view(
                *this, r, [=](const Array& z) { return z.diagonal_view(k); }, "DiagonalBackward");
        return r;
    }
}

Array Array::copy() const {
    if (grad_meta_ && autograd::detail::should_record(*this)) [[unlikely]] {
        Array r;
        {
            autograd::NoGradGuard ng;
            r = copy();
        }
        autograd::detail::on_copy(*this, r, "CopyBackward");
        return r;
    }
    Array out = Array::empty(shape_, dtype_, device());
    out.assign(*this);
    return out;
}

Array Array::astype(DType dtype, bool copy_always) const {
    if (dtype == dtype_ && !copy_always) return *this;
    if (grad_meta_ && autograd::detail::should_record(*this)) [[unlikely]] {
        Array r;
        {
            autograd::NoGradGuard ng;
            r = astype(dtype, copy_always);
        }
        autograd::detail::on_copy(*this, r, "AstypeBackward");
        return r;
    }
    Array out = Array::empty(shape_, dtype, device());
    out.assign(*this);
    return out;
}

Array Array::to(Device device) const {
    if (device == this->device()) return *this;
    if (grad_meta_ && autograd::detail::should_record(*this)) [[unlikely]] {
        Array r;
        {
            autograd::NoGradGuard ng;
            r = to(device);
        }
        autograd::detail::on_copy(*this, r, "ToBackward");
        return r;
    }
    backend::Backend& dst_b = backend::of(device, "ember.to");
    backend::Backend& src_b = backend::of(this->device(), "ember.to");
    Array src = contiguous();
    Array out = Array::empty(shape_, dtype_, device);
    const size_t n = size_t(src.nbytes());
    if (n == 0) return out;
    if (this->device().is_cpu()) {
        dst_b.copy_from_host(out.data(), src.data(), n, device.index);
    } else if (device.is_cpu()) {
        src_b.copy_to_host(out.data(), src.data(), n, this->device().index);
    } else {
        Array host = src.to(cpu);
        dst_b.copy_from_host(out.data(), host.data(), n, device.index);
    }
    return out;
}

Scalar Array::item() const {
    if (size() != 1)
        throw ValueError(
            "ember.item: can only convert an array of size 1 to a Python scalar "
            "(size is " +
            std::to_string(size()) + ")");
    alignas(16) unsigned char buf[16];
    if (device().is_cpu()) {
        std::memcpy(buf, data(), size_t(itemsize()));
    } else {
        debug::OpScope op("item");
        backend::of(device(), "ember.item")
            .copy_to_host(buf, data(), size_t(itemsize()), device().index);
    }
    return scalar_from_bytes(dtype_, buf);
}

void Array::assign(const Array& src) const {
    if ((grad_meta_ || src.grad_meta()) && autograd::detail::should_record_assign(*this, src))
        [[unlikely]]
        return autograd::detail::index_assign(*this, std::span<const Index>(), Operand(src));
    check_writeable("ember.assign");
    if (src.device() != device())
        throw ValueError("ember.assign: source is on " + src.device().str() +
                         " but the destination is on " + device().str());
    Array s = src.broadcast_to(shape_);
    if (detail::may_overlap(*this, s) && !detail::same_view(*this, s)) s = s.copy();
    if (size() == 0) return;
    Array ops[2] = {*this, s};
    const backend::Loop loop = detail::make_loop(ops);
    backend::of(device(), "ember.assign").copy(loop);
    if (debug::profiling()) debug::count_bytes(backend::footprint_bytes(loop));
    storage_->bump_version();
}

void Array::fill(const Scalar& value) const {
    if (grad_meta_ && autograd::detail::should_record(*this)) [[unlikely]]
        return autograd::detail::index_assign(*this, std::span<const Index>(), Operand(value));
    check_writeable("ember.fill");
    if (size() == 0) return;
    Array ops[1] = {*this};
    backend::Loop l = detail::make_loop(ops);
    alignas(16) unsigned char buf[16];
    value.store(dtype_, buf, false, "ember.fill");
    l.nops = 2;
    detail::set_scalar_operand(l, 1, dtype_, buf);
    backend::of(device(), "ember.fill").fill(l);
    storage_->bump_version();
}

template <class T>
T Array::item() const {
    debug::OpScope op("item");
    Array h = astype(dtype_v<T>, false).to(cpu);
    if (h.size() != 1) item();  // throws the size error
    T v;
    std::memcpy(&v, h.data(), sizeof(T));
    return v;
}
template bool Array::item<bool>() const;
template int8_t Array::item<int8_t>() const;
template int16_t Array::item<int16_t>() const;
template int32_t Array::item<int32_t>() const;
template int64_t Array::item<int64_t>() const;
template uint8_t Array::item<uint8_t>() const;
template uint16_t Array::item<uint16_t>() const;
template uint32_t Array::item<uint32_t>() const;
template uint64_t Array::item<uint64_t>() const;
template float Array::item<float>() const;
template double Array::item<double>() const;
template std::complex<float> Array::item<std::complex<float>>() const;
template std::complex<double> Array::item<std::complex<double>>() const;

}  // namespace ember
