// The CPU backend's sort family: stable sorts of rows by order-preserving integer keys (the same
// mapping the GPU's radix sort uses, so both give identical orders and indices) and binary
// searches in sorted rows.
#include "backend/cpu/sort.hpp"

#include <algorithm>
#include <complex>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backend/cpu/cpu.hpp"
#include "support/thread_pool.hpp"

namespace ember::host {

namespace {

// An unsigned integer whose order is the key's sort order: sign flipped for signed integers; for
// floats all bits of negatives and the sign bit of the others flipped, with -0.0 taken as +0.0
// and every NaN as the largest key.
template <class U>
U map_float_bits(U u, U inf_bits) {
    const U sign = U(U(1) << (sizeof(U) * 8 - 1));
    const U mag = U(u & U(~sign));
    if (mag > inf_bits) return U(~U(0));
    if (mag == 0) return sign;
    return (u & sign) ? U(~u) : U(u | sign);
}

template <class T>
auto sort_key(const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
        return uint8_t(v ? 1 : 0);
    } else if constexpr (std::is_same_v<T, float16>) {
        uint16_t u;
        std::memcpy(&u, &v, 2);
        return map_float_bits<uint16_t>(u, 0x7c00u);
    } else if constexpr (std::is_same_v<T, bfloat16>) {
        uint16_t u;
        std::memcpy(&u, &v, 2);
        return map_float_bits<uint16_t>(u, 0x7f80u);
    } else if constexpr (std::is_same_v<T, float>) {
        uint32_t u;
        std::memcpy(&u, &v, 4);
        return map_float_bits<uint32_t>(u, 0x7f800000u);
    } else if constexpr (std::is_same_v<T, double>) {
        uint64_t u;
        std::memcpy(&u, &v, 8);
        return map_float_bits<uint64_t>(u, 0x7ff0000000000000ull);
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
        using U = std::make_unsigned_t<T>;
        return U(U(v) ^ (U(1) << (sizeof(T) * 8 - 1)));
    } else if constexpr (std::is_integral_v<T>) {
        return v;
    } else {
        // Complex: NumPy's classes (no NaN, NaN imaginary part, NaN real part, both), then the
        // real part, then the imaginary part.
        using R = typename T::value_type;
        struct Key {
            uint8_t cls;
            decltype(sort_key(R())) re, im;
            bool operator<(const Key& o) const {
                if (cls != o.cls) return cls < o.cls;
                if (re != o.re) return re < o.re;
                return im < o.im;
            }
            bool operator==(const Key&) const = default;
        };
        const R re = v.real(), im = v.imag();
        return Key{uint8_t((re != re ? 2 : 0) + (im != im ? 1 : 0)), sort_key(re), sort_key(im)};
    }
}

template <class T>
void sort_rows(const backend::SortCall& c) {
    const T* keys = static_cast<const T*>(c.keys);
    T* sorted = static_cast<T*>(c.sorted);
    using K = decltype(sort_key(T()));
    struct Item {
        K key;
        int64_t pos;
    };
    auto one_row = [&](int64_t r) {
        const T* in = keys + r * c.n;
        std::vector<Item> items(size_t(c.n));
        for (int64_t i = 0; i < c.n; ++i)
            items[size_t(i)] = {sort_key(in[i]), i};
        if (c.descending)
            std::stable_sort(items.begin(), items.end(),
                             [](const Item& a, const Item& b) { return b.key < a.key; });
        else
            std::stable_sort(items.begin(), items.end(),
                             [](const Item& a, const Item& b) { return a.key < b.key; });
        if (sorted) {
            T* out = sorted + r * c.n;
            for (int64_t i = 0; i < c.n; ++i)
                out[i] = in[items[size_t(i)].pos];
        }
        if (c.indices) {
            int64_t* out = c.indices + r * c.n;
            for (int64_t i = 0; i < c.n; ++i)
                out[i] = items[size_t(i)].pos;
        }
    };
    if (c.rows == 1 || c.rows * c.n < 4096) {
        for (int64_t r = 0; r < c.rows; ++r)
            one_row(r);
    } else {
        parallel_for(c.rows, one_row);
    }
}

template <class T>
void search(const backend::SearchCall& c) {
    const T* keys = static_cast<const T*>(c.keys);
    const T* values = static_cast<const T*>(c.values);
    parallel_range(c.m, 4096, [&](int64_t b, int64_t e) {
        for (int64_t j = b; j < e; ++j) {
            const auto v = sort_key(values[j]);
            int64_t lo = 0, hi = c.n;  // the answer lies in [lo, hi]
            while (lo < hi) {
                const int64_t mid = lo + (hi - lo) / 2;
                const auto k = sort_key(keys[mid]);
                if (c.right ? !(v < k) : k < v)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            c.out[j] = lo;
        }
    });
}

}  // namespace

void sort(const backend::SortCall& c) {
    if (c.rows <= 0 || c.n <= 0) return;
    visit_dtype(c.dtype, [&](auto tag) { sort_rows<decltype(tag)>(c); });
}

void searchsorted(const backend::SearchCall& c) {
    if (c.m <= 0) return;
    visit_dtype(c.dtype, [&](auto tag) { search<decltype(tag)>(c); });
}

}  // namespace ember::host
