// The scan, compaction and scatter (assignment) families' default implementations: sequential
// host loops (rows spread over the CPU's threads), so results are deterministic. CPU memory is
// used in place; other devices go through host copies (a device kernel overrides them).
#include <algorithm>
#include <complex>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backend/backend.hpp"
#include "ember/error.hpp"
#include "support/thread_pool.hpp"

namespace ember::backend {

namespace {

template <class T>
void scan_rows(ScanOp op, T* out, const T* in, int64_t rows, int64_t len) {
    // Narrow unsigned integers combine in 32 bits (uint16 * uint16 would overflow a signed int).
    using W = std::conditional_t<std::is_integral_v<T> && sizeof(T) < 4, uint32_t, T>;
    host::parallel_range(rows, (int64_t(1) << 15) / (len > 0 ? len : 1), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
            const T* s = in + r * len;
            T* d = out + r * len;
            if (len == 0) continue;
            T acc = s[0];
            d[0] = acc;
            for (int64_t i = 1; i < len; ++i) {
                acc = op == ScanOp::sum ? T(W(acc) + W(s[i])) : T(W(acc) * W(s[i]));
                d[i] = acc;
            }
        }
    });
}

void scan_on_host(ScanOp op, DType t, void* out, const void* in, int64_t rows, int64_t len) {
    // Integers in the unsigned type of their size: wrap-around modulo 2^bits as NumPy's, with no
    // signed overflow.
    auto run = [&](auto tag) {
        using T = decltype(tag);
        scan_rows(op, static_cast<T*>(out), static_cast<const T*>(in), rows, len);
    };
    switch (t) {
        case DType::bool_:  // + is or, * is and
            return run(bool{});
        case DType::int8:
        case DType::uint8:
            return run(uint8_t{});
        case DType::int16:
        case DType::uint16:
            return run(uint16_t{});
        case DType::int32:
        case DType::uint32:
            return run(uint32_t{});
        case DType::int64:
        case DType::uint64:
            return run(uint64_t{});
        case DType::float32:
            return run(float{});
        case DType::float64:
            return run(double{});
        case DType::complex64:
            return run(std::complex<float>{});
        case DType::complex128:
            return run(std::complex<double>{});
        default:
            throw TypeError("ember: scan has no loop for dtype " + std::string(name(t)));
    }
}

// Branch-free compaction of fixed-size elements: every element up to the last selected one is
// written at the current output slot, which advances only past selected ones (so the writes
// stay below `count` until the last selected element, written on its own). Without `src`, the
// selected positions (plus `base`) are written.
template <class T>
void compact_typed(T* out, const T* src, const uint8_t* mask, int64_t n, int64_t base) {
    int64_t last = n - 1;
    while (last >= 0 && !mask[last])
        --last;
    if (last < 0) return;
    int64_t k = 0;
    for (int64_t i = 0; i < last; ++i) {
        out[k] = src ? src[i] : T(i + base);
        k += mask[i] != 0;
    }
    out[k] = src ? src[last] : T(last + base);
}

// Rows [b, e) of the compaction into `out` (already offset to this range's first output row).
void compact_range(char* out, const char* src, const uint8_t* mask, int64_t b, int64_t e,
                   size_t rb) {
    const int64_t n = e - b;
    mask += b;
    if (!src) return compact_typed<int64_t>(reinterpret_cast<int64_t*>(out), nullptr, mask, n, b);
    src += size_t(b) * rb;
    switch (rb) {
        case 1:
            return compact_typed(reinterpret_cast<uint8_t*>(out),
                                 reinterpret_cast<const uint8_t*>(src), mask, n, 0);
        case 2:
            return compact_typed(reinterpret_cast<uint16_t*>(out),
                                 reinterpret_cast<const uint16_t*>(src), mask, n, 0);
        case 4:
            return compact_typed(reinterpret_cast<uint32_t*>(out),
                                 reinterpret_cast<const uint32_t*>(src), mask, n, 0);
        case 8:
            return compact_typed(reinterpret_cast<uint64_t*>(out),
                                 reinterpret_cast<const uint64_t*>(src), mask, n, 0);
        default:
            break;
    }
    int64_t k = 0;
    for (int64_t i = 0; i < n; ++i) {
        if (!mask[i]) continue;
        std::memcpy(out + size_t(k) * rb, src + size_t(i) * rb, rb);
        ++k;
    }
}

// Nonzero bytes of [p, p + n): eight at a time, a byte's high bit set when it is nonzero.
int64_t count_nonzero_bytes(const uint8_t* p, int64_t n) {
    constexpr uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL, high = 0x8080808080808080ULL;
    int64_t c = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        std::memcpy(&w, p + i, 8);
        c += __builtin_popcountll((((w & low7) + low7) | w) & high);
    }
    for (; i < n; ++i)
        c += p[i] != 0;
    return c;
}

// Large masks are split over the threads: each range's count, their running sum (where each
// range writes), then the ranges compact in parallel into their slots (same result, in order).
void compact_on_host(char* out, const char* src, const uint8_t* mask, int64_t n, int64_t row,
                     int isz) {
    const size_t rb = src ? size_t(row) * size_t(isz) : sizeof(int64_t);
    const int64_t threads = host::num_threads();
    if (threads <= 1 || n < (int64_t(1) << 18)) return compact_range(out, src, mask, 0, n, rb);
    const int64_t parts = threads * 4, chunk = (n + parts - 1) / parts;
    std::vector<int64_t> at(size_t(parts) + 1, 0);
    host::parallel_for(parts, [&](int64_t t) {
        const int64_t b = t * chunk, e = std::min(n, b + chunk);
        at[size_t(t) + 1] = b < e ? count_nonzero_bytes(mask + b, e - b) : 0;
    });
    for (int64_t t = 0; t < parts; ++t)
        at[size_t(t) + 1] += at[size_t(t)];
    host::parallel_for(parts, [&](int64_t t) {
        const int64_t b = t * chunk, e = std::min(n, b + chunk);
        if (b < e) compact_range(out + size_t(at[size_t(t)]) * rb, src, mask, b, e, rb);
    });
}

}  // namespace

void Backend::scan(ScanOp op, DType dtype, void* out, const void* in, int64_t rows, int64_t len,
                   int device) {
    if (rows <= 0 || len <= 0) return;
    if (this == &cpu()) return scan_on_host(op, dtype, out, in, rows, len);
    std::vector<char> h(size_t(rows * len) * size_t(itemsize(dtype)));
    copy_to_host(h.data(), in, h.size(), device);
    scan_on_host(op, dtype, h.data(), h.data(), rows, len);
    copy_from_host(out, h.data(), h.size(), device);
}

void Backend::compact(void* out, const void* src, const uint8_t* mask, int64_t n, int64_t row,
                      int itemsize, int device) {
    if (n <= 0) return;
    if (this == &cpu())
        return compact_on_host(static_cast<char*>(out), static_cast<const char*>(src), mask, n, row,
                               itemsize);
    std::vector<uint8_t> m(static_cast<size_t>(n));
    copy_to_host(m.data(), mask, m.size(), device);
    int64_t count = 0;
    for (uint8_t b : m)
        count += b != 0;
    if (count == 0) return;
    const size_t rb = src ? size_t(row) * size_t(itemsize) : sizeof(int64_t);
    std::vector<char> s;
    if (src) {
        s.resize(size_t(n) * rb);
        copy_to_host(s.data(), src, s.size(), device);
    }
    std::vector<char> o(size_t(count) * rb);
    compact_on_host(o.data(), src ? s.data() : nullptr, m.data(), n, row, itemsize);
    copy_from_host(out, o.data(), o.size(), device);
}

void Backend::scatter(void* dst, const void* src, const int64_t* offsets, int64_t n, int itemsize,
                      int64_t lo, int64_t extent, bool unique, int device) {
    if (n <= 0) return;
    const size_t isz = size_t(itemsize);
    if (this == &cpu()) {
        char* d = static_cast<char*>(dst);
        const char* s = static_cast<const char*>(src);
        auto body = [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i)
                std::memcpy(d + offsets[i] * int64_t(isz), s + size_t(i) * isz, isz);
        };
        if (unique)
            host::parallel_range(n, int64_t(1) << 15, body);
        else
            body(0, n);  // in order: the last of repeated offsets wins
        return;
    }
    std::vector<int64_t> off(static_cast<size_t>(n));
    copy_to_host(off.data(), offsets, size_t(n) * sizeof(int64_t), device);
    std::vector<char> s(size_t(n) * isz);
    copy_to_host(s.data(), src, s.size(), device);
    std::vector<char> d(size_t(extent) * isz);
    char* dev_dst = static_cast<char*>(dst) + lo * int64_t(isz);
    copy_to_host(d.data(), dev_dst, d.size(), device);
    for (int64_t i = 0; i < n; ++i)
        std::memcpy(d.data() + size_t(off[size_t(i)] - lo) * isz, s.data() + size_t(i) * isz, isz);
    copy_from_host(dev_dst, d.data(), d.size(), device);
}

}  // namespace ember::backend
