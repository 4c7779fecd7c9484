// The scatter-add family's default implementation (take's adjoint): a sequential host loop, so
// repeated offsets accumulate in a fixed order. CPU memory is updated in place; other devices go
// through a host copy of the touched range (a device kernel can override it).
#include <algorithm>
#include <vector>

#include "backend/backend.hpp"
#include "ember/half.hpp"
#include "ops/convert.hpp"

namespace ember::backend {

namespace {

void add_on_host(char* dst, const char* src, const int64_t* off, int64_t n, DType dtype) {
    visit_dtype(dtype, [&](auto tag) {
        using T = decltype(tag);
        T* d = reinterpret_cast<T*>(dst);
        const T* s = reinterpret_cast<const T*>(src);
        for (int64_t i = 0; i < n; ++i) {
            T& v = d[off[i]];
            if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
                v = T(float(v) + float(s[i]));
            else if constexpr (std::is_same_v<T, bool>)
                v = v || s[i];
            else
                v = T(v + s[i]);
        }
    });
}

}  // namespace

void Backend::scatter_add(void* dst, const void* src, const int64_t* offsets, int64_t n,
                          DType dtype, int device) {
    if (n <= 0) return;
    if (this == &cpu()) {
        add_on_host(static_cast<char*>(dst), static_cast<const char*>(src), offsets, n, dtype);
        return;
    }
    const size_t isz = size_t(itemsize(dtype));
    std::vector<int64_t> off(static_cast<size_t>(n));
    copy_to_host(off.data(), offsets, size_t(n) * sizeof(int64_t), device);
    std::vector<char> s(size_t(n) * isz);
    copy_to_host(s.data(), src, s.size(), device);
    const auto [lo, hi] = std::minmax_element(off.begin(), off.end());
    const int64_t base = *lo, count = *hi - *lo + 1;
    for (int64_t& o : off)
        o -= base;
    std::vector<char> d(size_t(count) * isz);
    char* dev_dst = static_cast<char*>(dst) + base * int64_t(isz);
    copy_to_host(d.data(), dev_dst, d.size(), device);
    add_on_host(d.data(), s.data(), off.data(), n, dtype);
    copy_from_host(dev_dst, d.data(), d.size(), device);
}

}  // namespace ember::backend
