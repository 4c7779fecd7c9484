// Array: a strided view (storage + offset + shape + strides + dtype) and Scalar, a typed value.
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "ember/device.hpp"
#include "ember/dtype.hpp"
#include "ember/shape.hpp"
#include "ember/storage.hpp"

namespace ember {

namespace autograd {
struct Meta;
class Node;
[[gnu::cold]] void retain(Meta* m) noexcept;
[[gnu::cold]] void release(Meta* m) noexcept;

// An intrusive reference to an array's autograd state (ember/autograd.hpp): one pointer, so
// copying, moving and destroying an array without autograd state costs a null test.
class MetaPtr {
public:
    MetaPtr() = default;
    MetaPtr(std::nullptr_t) {}
    static MetaPtr adopt(Meta* m) {  // takes over a reference
        MetaPtr p;
        p.p_ = m;
        return p;
    }
    MetaPtr(const MetaPtr& o) : p_(o.p_) {
        if (p_) retain(p_);
    }
    MetaPtr(MetaPtr&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
    MetaPtr& operator=(const MetaPtr& o) {
        if (o.p_) retain(o.p_);
        Meta* old = p_;
        p_ = o.p_;
        if (old) release(old);
        return *this;
    }
    MetaPtr& operator=(MetaPtr&& o) noexcept {
        if (this != &o) {
            Meta* old = p_;
            p_ = o.p_;
            o.p_ = nullptr;
            if (old) release(old);
        }
        return *this;
    }
    ~MetaPtr() {
        if (p_) release(p_);
    }
    Meta* get() const { return p_; }
    Meta* operator->() const { return p_; }
    Meta& operator*() const { return *p_; }
    explicit operator bool() const { return p_ != nullptr; }
    bool operator==(const MetaPtr& o) const { return p_ == o.p_; }

private:
    Meta* p_ = nullptr;
};
}  // namespace autograd

// A single value with a dtype. Values from Python (or C++ literals) are `weak`: they adopt the
// dtype of the array they meet, following NEP 50.
struct Scalar {
    DType dtype = DType::float64;
    WeakKind weak = WeakKind::none;
    bool b = false;
    int64_t i = 0;
    uint64_t u = 0;               // integers above INT64_MAX (uint64)
    std::complex<double> c{0.0};  // floats keep their value in c.real()

    Scalar() = default;
    Scalar(bool v) : dtype(DType::bool_), weak(WeakKind::boolean), b(v), i(v), u(v), c(v) {}
    Scalar(int v) : Scalar(int64_t(v)) {}
    Scalar(int64_t v)
        : dtype(DType::int64),
          weak(WeakKind::integer),
          b(v != 0),
          i(v),
          u(uint64_t(v)),
          c(double(v)) {}
    Scalar(double v)
        : dtype(DType::float64), weak(WeakKind::floating), b(v != 0), i(int64_t(0)), c(v) {}
    Scalar(std::complex<double> v)
        : dtype(DType::complex128), weak(WeakKind::complex), b(v != 0.0), c(v) {}
    static Scalar from_uint64(uint64_t v);  // weak integer above INT64_MAX
    // A strong (typed) scalar: exactly `t`, as if it were a 0-d array.
    Scalar strong(DType t) const;

    double as_double() const { return c.real(); }
    // Writes the value converted to `t` into `dst` (itemsize(t) bytes). With `check_range`, a
    // weak integer that does not fit an integer type raises OverflowError (as NumPy 2 does).
    void store(DType t, void* dst, bool check_range, const char* who) const;
};

class Array {
public:
    Array() = default;
    Array(std::shared_ptr<Storage> storage, int64_t offset, Shape shape, Strides strides,
          DType dtype)
        : storage_(std::move(storage)),
          offset_(offset),
          shape_(std::move(shape)),
          strides_(std::move(strides)),
          dtype_(dtype) {}

    // Uninitialized C-contiguous array (ValueError/MemoryError for impossible sizes).
    static Array empty(const Shape& shape, DType dtype, Device device = default_device());

    bool defined() const { return storage_ != nullptr; }
    const Shape& shape() const { return shape_; }
    const Strides& strides() const { return strides_; }  // in elements
    DType dtype() const { return dtype_; }
    int ndim() const { return int(shape_.size()); }
    int64_t size() const { return numel(shape_); }
    int64_t itemsize() const { return ember::itemsize(dtype_); }
    int64_t nbytes() const { return size() * itemsize(); }
    int64_t offset() const { return offset_; }
    Device device() const { return storage_->device(); }
    const std::shared_ptr<Storage>& storage() const { return storage_; }
    // Address of the first element (host or device pointer).
    char* data() const { return static_cast<char*>(storage_->data()) + offset_ * itemsize(); }

    bool is_contiguous() const;  // C order
    bool is_f_contiguous() const;

    // NumPy's WRITEABLE flag. Read-only arrays (broadcast views, read-only imports) pass it on
    // to their views; every write path calls check_writeable, which raises ValueError.
    bool writeable() const { return !readonly_; }
    void set_writeable(bool w) { readonly_ = !w; }
    void check_writeable(const char* who, const char* what = "assignment destination") const {
        if (readonly_) [[unlikely]]
            throw_read_only(who, what);
    }

    // ---- views (share storage) ----
    Array view(Shape shape, Strides strides, int64_t offset_delta = 0) const;
    Array reshape(const Shape& shape) const;  // a view when possible, else a copy
    std::optional<Array> reshape_view(const Shape& shape) const;  // nullopt when not a view
    Array transpose() const;                                      // reverses the axes
    Array permute(const std::vector<int64_t>& axes) const;
    Array swapaxes(int64_t a, int64_t b) const;
    Array broadcast_to(const Shape& shape) const;
    Array expand_dims(int64_t axis) const;
    Array squeeze() const;
    Array squeeze(const std::vector<int64_t>& axes) const;
    Array slice(int axis, int64_t start, int64_t stop, int64_t step) const;  // normalized bounds
    Array diagonal_view(int64_t k = 0) const;                                // of the last two axes

    // ---- copies ----
    Array copy() const;  // C-contiguous copy on the same device
    Array contiguous() const { return is_contiguous() ? *this : copy(); }
    Array astype(DType dtype, bool copy = true) const;
    Array to(Device device) const;  // copy to another device (a view of itself when same)

    // Host value of a one-element array.
    Scalar item() const;
    template <class T>
    T item() const;

    // Writes `src` (broadcast, cast) into this view.
    void assign(const Array& src) const;
    void fill(const Scalar& value) const;

    // ---- autograd (ember/autograd.hpp) ----
    bool requires_grad() const;
    // Makes a leaf require gradients (floating and complex dtypes only), or stop requiring them.
    const Array& set_requires_grad(bool requires_grad = true) const;
    bool is_leaf() const;  // no grad_fn (arrays that do not require grad are leaves too)
    Array grad() const;    // undefined when there is none
    void set_grad(const Array& grad) const;  // an undefined array clears it
    std::shared_ptr<autograd::Node> grad_fn() const;
    void retain_grad() const;  // a non-leaf keeps its .grad too
    // hook(grad) runs when this array's gradient is computed, before it flows on (a leaf:
    // before it accumulates in .grad); a defined result replaces the gradient.
    void register_hook(std::function<Array(const Array&)> hook) const;
    bool retains_grad() const;
    Array detach() const;  // the same data without autograd state
    // Gradients of this array into the leaves' .grad; `gradient` may be omitted for one element.
    void backward() const;
    void backward(const Array& gradient, std::optional<bool> retain_graph = std::nullopt,
                  bool create_graph = false) const;
    uint64_t version() const { return storage_->version(); }  // in-place writes to the storage
    const autograd::MetaPtr& grad_meta() const { return grad_meta_; }
    void set_grad_meta(autograd::MetaPtr m) const { grad_meta_ = std::move(m); }

private:
    // view() without autograd recording (the members that make views record their own node).
    Array raw_view(Shape shape, Strides strides, int64_t offset_delta = 0) const {
        Array r(storage_, offset_ + offset_delta, std::move(shape), std::move(strides), dtype_);
        r.readonly_ = readonly_;
        return r;
    }
    [[noreturn, gnu::cold]] static void throw_read_only(const char* who, const char* what);

    std::shared_ptr<Storage> storage_;
    int64_t offset_ = 0;  // in elements
    Shape shape_;
    Strides strides_;
    DType dtype_ = DType::float32;
    bool readonly_ = false;
    // Autograd state; null for arrays that never required grad, so ops pay one null test.
    // Mutable: in-place ops attach history to the handle they write through.
    mutable autograd::MetaPtr grad_meta_;
};

}  // namespace ember
