// Dims: a small vector of int64 used for shapes and strides (inline up to 6 entries, so creating
// an array of common rank allocates nothing for its metadata).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

namespace ember {

inline constexpr int max_ndim = 64;

class Dims {
public:
    using value_type = int64_t;
    static constexpr int inline_capacity = 6;

    Dims() = default;
    explicit Dims(size_t n, int64_t fill = 0) { resize(n, fill); }
    Dims(std::initializer_list<int64_t> v) { assign(v.begin(), v.end()); }
    Dims(const std::vector<int64_t>& v) { assign(v.data(), v.data() + v.size()); }
    template <class It>
    Dims(It first, It last) {
        assign(first, last);
    }
    Dims(const Dims& o) { assign(o.begin(), o.end()); }
    Dims(Dims&& o) noexcept { move_from(o); }
    Dims& operator=(const Dims& o) {
        if (this != &o) assign(o.begin(), o.end());
        return *this;
    }
    Dims& operator=(Dims&& o) noexcept {
        if (this != &o) {
            release();
            move_from(o);
        }
        return *this;
    }
    ~Dims() {
        if (heap_) delete[] heap_;
    }

    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    int64_t* data() { return heap_ ? heap_ : inline_; }
    const int64_t* data() const { return heap_ ? heap_ : inline_; }
    int64_t* begin() { return data(); }
    int64_t* end() { return data() + size_; }
    const int64_t* begin() const { return data(); }
    const int64_t* end() const { return data() + size_; }
    std::reverse_iterator<const int64_t*> rbegin() const { return std::reverse_iterator(end()); }
    std::reverse_iterator<const int64_t*> rend() const { return std::reverse_iterator(begin()); }
    int64_t& operator[](size_t i) { return data()[i]; }
    int64_t operator[](size_t i) const { return data()[i]; }
    int64_t& back() { return data()[size_ - 1]; }
    int64_t back() const { return data()[size_ - 1]; }

    void resize(size_t n, int64_t fill = 0) {
        reserve(n);
        for (size_t i = size_; i < n; ++i)
            data()[i] = fill;
        size_ = uint32_t(n);
    }
    void push_back(int64_t v) {
        reserve(size_ + 1);
        data()[size_++] = v;
    }
    void insert(size_t pos, int64_t v) {
        reserve(size_ + 1);
        int64_t* d = data();
        std::memmove(d + pos + 1, d + pos, (size_ - pos) * sizeof(int64_t));
        d[pos] = v;
        ++size_;
    }
    void erase(size_t pos) {
        int64_t* d = data();
        std::memmove(d + pos, d + pos + 1, (size_ - pos - 1) * sizeof(int64_t));
        --size_;
    }
    void clear() { size_ = 0; }

    friend bool operator==(const Dims& a, const Dims& b) {
        // A plain loop: std::equal becomes a memcmp call, which costs more than the few
        // dimensions it compares (it showed in profiles of small ops).
        if (a.size_ != b.size_) return false;
        const int64_t *p = a.begin(), *q = b.begin();
        for (size_t i = 0; i < a.size_; ++i)
            if (p[i] != q[i]) return false;
        return true;
    }

private:
    template <class It>
    void assign(It first, It last) {
        size_t n = size_t(std::distance(first, last));
        reserve(n);
        int64_t* d = data();
        for (size_t i = 0; i < n; ++i, ++first)
            d[i] = *first;  // small: no memmove call
        size_ = uint32_t(n);
    }
    void reserve(size_t n) {
        if (n <= capacity_) return;
        size_t cap = std::max<size_t>(n, capacity_ * 2);
        auto* p = new int64_t[cap];
        std::copy(begin(), end(), p);
        delete[] heap_;
        heap_ = p;
        capacity_ = uint32_t(cap);
    }
    void release() {
        if (heap_) delete[] heap_;
        heap_ = nullptr;
        capacity_ = inline_capacity;
        size_ = 0;
    }
    void move_from(Dims& o) {
        size_ = o.size_;
        if (o.heap_) {
            heap_ = o.heap_;
            capacity_ = o.capacity_;
            o.heap_ = nullptr;
            o.capacity_ = inline_capacity;
        } else {
            // All of the inline buffer, a constant size: a few moves, where a loop over size_
            // becomes a memcpy call (it showed in profiles of small ops).
            std::memcpy(inline_, o.inline_, sizeof inline_);
        }
        o.size_ = 0;
    }

    int64_t* heap_ = nullptr;
    uint32_t size_ = 0;
    uint32_t capacity_ = inline_capacity;
    int64_t inline_[inline_capacity];
};

using Shape = Dims;
using Strides = Dims;  // in elements, not bytes (see DESIGN.md)

// Product of the entries; throws ValueError naming `who` when it overflows int64 or an entry is
// negative.
int64_t checked_numel(const Shape& s, const char* who);
inline int64_t numel(const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s)
        n *= d;
    return n;
}
// C-order (row-major) strides in elements.
Strides contiguous_strides(const Shape& s);
void contiguous_strides(const Shape& s, Strides& out);  // into `out` (no temporary to move)
// NumPy's broadcasting of two shapes; ValueError naming both shapes when incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* who);
std::string shape_str(const Shape& s);  // "(3, 4)", "(5,)", "()"
// Normalizes a possibly negative axis; AxisError-like IndexError naming `who`.
int normalize_axis(int64_t axis, int ndim, const char* who);

}  // namespace ember
