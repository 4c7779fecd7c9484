// The CPU backend's sort family: stable sorts of rows by order-preserving unsigned integer keys
// (the same mapping the GPU's radix sort uses, so both give identical orders and indices) and
// binary searches in sorted rows. Large rows sort by an LSD radix sort (8-bit digits, passes
// whose digit is the same in every key skipped), 1-byte keys and large rows of 2-byte keys by a
// counting sort; scratch is at most two rows of keys (argsort's index buffers are its output).
#include "backend/cpu/sort.hpp"

#include <algorithm>
#include <array>
#include <complex>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cpu/cpu.hpp"
#include "ember/error.hpp"
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
constexpr bool is_real_float = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16> ||
                               std::is_same_v<T, float> || std::is_same_v<T, double>;

// The bits of T's infinity (real floating types).
template <class T>
constexpr auto inf_bits() {
    if constexpr (std::is_same_v<T, float16>) return uint16_t(0x7c00u);
    if constexpr (std::is_same_v<T, bfloat16>) return uint16_t(0x7f80u);
    if constexpr (std::is_same_v<T, float>) return uint32_t(0x7f800000u);
    if constexpr (std::is_same_v<T, double>) return uint64_t(0x7ff0000000000000ull);
}

// Rows are handled as the unsigned integers of their element size (U), never as T: keys are
// computed from the bits and sorted values are written as bits. The aliasing-safe pointer types
// let the same memory be read as T elsewhere and as U here (and argsort's int64 output be used
// as two uint32 index buffers).
template <class U>
using alias_t [[gnu::may_alias]] = U;

template <class T>
using key_t = decltype(sort_key(T()));

template <class T, class U = key_t<T>>
U key_of_bits(U b) {
    constexpr U sign = U(U(1) << (sizeof(U) * 8 - 1));
    if constexpr (std::is_same_v<T, bool>)
        return U(b != 0);
    else if constexpr (is_real_float<T>)
        return map_float_bits<U>(b, inf_bits<T>());
    else if constexpr (std::is_signed_v<T>)
        return U(b ^ sign);
    else
        return b;
}

// The inverse of key_of_bits, except that zero keys give +0.0 and the NaN key one NaN (the sort
// restores the input's signed zeros and NaN payloads afterwards).
template <class T, class U = key_t<T>>
U bits_of_key(U k) {
    constexpr U sign = U(U(1) << (sizeof(U) * 8 - 1));
    if constexpr (std::is_same_v<T, bool>)
        return k;
    else if constexpr (is_real_float<T>)
        return (k & sign) ? U(k ^ sign) : U(~k);
    else if constexpr (std::is_signed_v<T>)
        return U(k ^ sign);
    else
        return k;
}

constexpr int64_t radix_min = 256;  // shorter rows use comparison sorts

// Per-digit histograms of keys: count[p][d] keys have digit d in byte p.
template <class U>
using Histograms = std::array<std::array<int64_t, 256>, sizeof(U)>;

template <class U>
inline void count_digits(Histograms<U>& count, U k) {
    for (size_t p = 0; p < sizeof(U); ++p)
        ++count[p][size_t((k >> (8 * p)) & 0xff)];
}

// Runs fn(t) for t in [0, parts): on the thread pool when parts > 1.
template <class F>
void run_parts(int parts, F&& fn) {
    if (parts == 1)
        fn(int64_t(0));
    else
        parallel_for(parts, fn);
}

// Scratch from the CPU backend's allocator (large blocks on huge pages and recycled, so a sort
// does not pay the kernel's zeroing of fresh pages), grown on demand.
template <class E>
class Scratch {
public:
    Scratch() = default;
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    ~Scratch() { release(); }
    alias_t<E>* get(int64_t n) {
        if (n > cap_) {
            release();
            const size_t nbytes = size_t(n) * sizeof(E);
            p_ = backend::cpu().allocate(nbytes, 0);
            if (!p_)
                throw MemoryError("ember.sort: unable to allocate " + std::to_string(nbytes) +
                                  " bytes of scratch on cpu");
            cap_ = n;
        }
        return static_cast<alias_t<E>*>(p_);
    }

private:
    void release() {
        if (p_) backend::cpu().deallocate(p_, size_t(cap_) * sizeof(E), 0);
        p_ = nullptr;
        cap_ = 0;
    }
    void* p_ = nullptr;
    int64_t cap_ = 0;
};

// Counts of the float classes whose sorted bits the keys do not determine.
struct FloatTally {
    int64_t nan = 0, zero = 0, neg_zero = 0, neg = 0;
    void add(const FloatTally& o) {
        nan += o.nan;
        zero += o.zero;
        neg_zero += o.neg_zero;
        neg += o.neg;
    }
};

template <bool B>
using flag = std::integral_constant<bool, B>;

// Sorts rows of a real (non-complex) dtype; one instance per task, keeping its scratch.
//
// Rows of at least radix_min keys sort by a stable LSD radix sort: one read-only pass counts the
// digits of the keys (and the float classes), then one scatter pass per digit that is not the
// same in every key. The first pass reads the row itself (computing keys on the fly) and, for
// values, the last writes the sorted bits straight into the output, so no pass only converts.
// A row is split into `parts` chunks, scattered on the thread pool to their own offsets (the
// result does not depend on `parts`).
template <class T>
struct RowSorter {
    using U = key_t<T>;
    static constexpr U sign = U(U(1) << (sizeof(U) * 8 - 1));
    const backend::SortCall& c;
    const U flip;  // keys are xor-ed with it: descending is ascending order of the flipped keys
    const int parts;
    Scratch<U> s0, s1;
    Scratch<int64_t> wide;  // rows too long for 32-bit indices
    std::vector<Histograms<U>> hists;
    std::vector<std::array<int64_t, 256>> at;

    RowSorter(const backend::SortCall& call, int nparts)
        : c(call), flip(call.descending ? U(~U(0)) : U(0)), parts(nparts) {}

    static void tally(FloatTally& t, U b) {
        if constexpr (is_real_float<T>) {
            const U mag = U(b & U(~sign));
            t.nan += mag > inf_bits<T>();
            t.zero += mag == 0;
            t.neg_zero += b == sign;
            t.neg += (b & sign) && mag != 0 && mag <= inf_bits<T>();
        }
    }

    U key(U bits) const { return U(key_of_bits<T>(bits) ^ flip); }

    // Equal keys with different bits (the zeros, the NaNs) are together in the sorted row: they
    // are rewritten from the input in input order, as a stable sort leaves them.
    void restore(const alias_t<U>* in, alias_t<U>* out, int64_t n, const FloatTally& t) {
        if constexpr (is_real_float<T>) {
            if (t.nan == 0 && t.neg_zero == 0) return;
            int64_t z = 0, q = 0;
            if (c.descending) {
                z = t.nan + (n - t.nan - t.neg - t.zero);
                q = 0;
            } else {
                z = t.neg;
                q = n - t.nan;
            }
            for (int64_t i = 0; i < n; ++i) {
                const U b = in[i];
                const U mag = U(b & U(~sign));
                if (mag == 0) {
                    if (t.neg_zero) out[z++] = b;
                } else if (mag > inf_bits<T>()) {
                    out[q++] = b;
                }
            }
        }
    }

    // A counting sort of 1- and 2-byte keys: no scratch beyond the counts.
    void counting(const alias_t<U>* in, alias_t<U>* out, int64_t n) {
        constexpr size_t K = size_t(1) << (8 * sizeof(U));
        std::vector<int64_t> count(K, 0);
        FloatTally t;
        for (int64_t i = 0; i < n; ++i) {
            const U b = in[i];
            tally(t, b);
            ++count[size_t(key(b))];
        }
        int64_t to = 0;
        for (size_t k = 0; k < K; ++k) {
            const U bits = bits_of_key<T>(U(U(k) ^ flip));
            for (int64_t e = to + count[k]; to < e; ++to)
                out[to] = bits;
        }
        restore(in, out, n, t);
    }

    // The radix sort of row `in` (n >= radix_min). Values: the sorted bits into `vout`, and
    // nullptr is returned. Indices (vout null): the sorted positions end in ia or ib (which one
    // is returned).
    template <class I>
    const alias_t<I>* radix(const alias_t<U>* in, int64_t n, alias_t<U>* vout, alias_t<I>* ia,
                            alias_t<I>* ib) {
        constexpr int P = int(sizeof(U));
        const int np = n >= (int64_t(1) << 20) ? parts : 1;
        const int64_t chunk = (n + np - 1) / np;
        hists.resize(size_t(np));
        at.resize(size_t(np));
        std::vector<FloatTally> tallies(static_cast<size_t>(np));
        run_parts(np, [&](int64_t q) {
            auto& h = hists[size_t(q)];
            FloatTally t;
            Histograms<U> local{};
            const alias_t<U>* ip = in;
            const U fl = flip;
            for (int64_t i = q * chunk, e = std::min(n, i + chunk); i < e; ++i) {
                const U b = ip[i];
                tally(t, b);
                count_digits<U>(local, U(key_of_bits<T>(b) ^ fl));
            }
            h = local;
            tallies[size_t(q)] = t;
        });
        FloatTally t;
        for (const auto& x : tallies)
            t.add(x);
        Histograms<U> count = hists[0];
        for (size_t q = 1; q < hists.size(); ++q)
            for (size_t p = 0; p < size_t(P); ++p)
                for (size_t d = 0; d < 256; ++d)
                    count[p][d] += hists[q][p][d];
        int pass[P];
        int m = 0;
        const U k0 = key(in[0]);
        for (int p = 0; p < P; ++p)
            if (count[size_t(p)][size_t((k0 >> (8 * p)) & 0xff)] != n) pass[m++] = p;
        const bool values = vout != nullptr;
        if (m == 0) {  // all keys equal: the input order is the stable order
            if (values)
                std::memcpy(vout, in, size_t(n) * sizeof(U));
            else
                for (int64_t i = 0; i < n; ++i)
                    ia[i] = I(i);
            return values ? nullptr : ia;
        }
        alias_t<U>* ka = m >= 2 ? s0.get(n) : nullptr;
        alias_t<U>* kb = !values && m >= 3 ? s1.get(n) : nullptr;
        const alias_t<U>* src = in;
        const alias_t<I>* isrc = nullptr;
        for (int j = 0; j < m; ++j) {
            const int shift = 8 * pass[j];
            const bool first = j == 0, last = j == m - 1;
            alias_t<U>* dst = values ? ((m - 1 - j) % 2 == 0 ? vout : ka)
                                     : (last ? nullptr : (j % 2 == 0 ? ka : kb));
            alias_t<I>* idst = values ? nullptr : (j % 2 == 0 ? ia : ib);
            if (np == 1) {
                at[0] = count[size_t(pass[j])];
            } else if (first) {
                for (int q = 0; q < np; ++q)
                    at[size_t(q)] = hists[size_t(q)][size_t(pass[j])];
            } else {
                run_parts(np, [&](int64_t q) {
                    std::array<int64_t, 256> h{};
                    const alias_t<U>* sp = src;
                    for (int64_t i = q * chunk, e = std::min(n, i + chunk); i < e; ++i)
                        ++h[size_t((sp[i] >> shift) & 0xff)];
                    at[size_t(q)] = h;
                });
            }
            int64_t sum = 0;
            for (size_t d = 0; d < 256; ++d)
                for (auto& h : at) {
                    const int64_t k = h[d];
                    h[d] = sum;
                    sum += k;
                }
            auto scatter = [&](auto first_c, auto last_c) {
                constexpr bool F = decltype(first_c)::value, L = decltype(last_c)::value;
                run_parts(np, [&](int64_t q) {
                    // Locals, not captures: the stores may alias anything reachable by pointer.
                    const alias_t<U>* sp = src;
                    alias_t<U>* dp = dst;
                    const alias_t<I>* isp = isrc;
                    alias_t<I>* idp = idst;
                    const U fl = flip;
                    const int sh = shift;
                    std::array<int64_t, 256> to = at[size_t(q)];
                    for (int64_t i = q * chunk, e = std::min(n, i + chunk); i < e; ++i) {
                        const U k = F ? U(key_of_bits<T>(sp[i]) ^ fl) : U(sp[i]);
                        const int64_t w = to[size_t((k >> sh) & 0xff)]++;
                        if (values) {
                            dp[w] = L ? bits_of_key<T>(U(k ^ fl)) : k;
                        } else {
                            if (!L) dp[w] = k;
                            idp[w] = F ? I(i) : isp[i];
                        }
                    }
                });
            };
            if (first && last)
                scatter(flag<true>(), flag<true>());
            else if (first)
                scatter(flag<true>(), flag<false>());
            else if (last)
                scatter(flag<false>(), flag<true>());
            else
                scatter(flag<false>(), flag<false>());
            src = dst;
            isrc = idst;
        }
        if (values) {
            restore(in, vout, n, t);
            return nullptr;
        }
        return isrc;
    }

    // Values only: equal keys are equal values up to the classes restore() handles, so any
    // order of them does.
    void values(const alias_t<U>* in, alias_t<U>* out, int64_t n) {
        if constexpr (sizeof(U) <= 2)
            if (n >= (sizeof(U) == 1 ? 64 : int64_t(1) << 16)) return counting(in, out, n);
        if (n >= radix_min) {
            radix<uint32_t>(in, n, out, nullptr, nullptr);
            return;
        }
        FloatTally t;
        for (int64_t i = 0; i < n; ++i) {
            tally(t, in[i]);
            out[i] = key(in[i]);
        }
        std::sort(out, out + n);
        for (int64_t i = 0; i < n; ++i)
            out[i] = bits_of_key<T>(U(out[i] ^ flip));
        restore(in, out, n, t);
    }

    // Indices (and values when asked): a stable sort of (key, position) pairs.
    void indices(const alias_t<U>* in, alias_t<U>* out, int64_t* idx, int64_t n) {
        if (n < radix_min) {
            alias_t<U>* k = s0.get(n);
            for (int64_t i = 0; i < n; ++i)
                k[i] = key(in[i]);
            std::iota(idx, idx + n, int64_t(0));
            std::stable_sort(idx, idx + n, [k](int64_t x, int64_t y) { return k[x] < k[y]; });
        } else if (n <= int64_t(UINT32_MAX)) {
            // The int64 output holds both 32-bit index buffers; widened in place at the end.
            auto* lo = reinterpret_cast<alias_t<uint32_t>*>(idx);
            auto* hi = lo + n;
            auto* w = reinterpret_cast<alias_t<int64_t>*>(idx);
            if (radix<uint32_t>(in, n, nullptr, lo, hi) == hi) {
                for (int64_t i = 0; i < n; ++i)  // reads lo[n + i], writes over lo[2i..2i+1]
                    w[i] = int64_t(hi[i]);
            } else {
                for (int64_t i = n - 1; i >= 0; --i)  // reads lo[i], writes over lo[2i..2i+1]
                    w[i] = int64_t(lo[i]);
            }
        } else {
            alias_t<int64_t>* ib = wide.get(n);
            auto* w = reinterpret_cast<alias_t<int64_t>*>(idx);
            if (radix<int64_t>(in, n, nullptr, w, ib) == ib)
                std::memcpy(idx, ib, size_t(n) * sizeof(int64_t));
        }
        if (out)
            parallel_range(n, parts == 1 ? n : int64_t(1) << 16, [&](int64_t lo, int64_t hi) {
                for (int64_t i = lo; i < hi; ++i)
                    out[i] = in[idx[i]];
            });
    }
};

template <class T>
void sort_real_rows(const backend::SortCall& c) {
    using U = key_t<T>;
    const auto* keys = static_cast<const alias_t<U>*>(c.keys);
    auto* sorted = static_cast<alias_t<U>*>(c.sorted);
    const int64_t n = c.n;
    // Few long rows: each sorted by all threads; many rows: whole rows per thread.
    const int parts = c.rows < num_threads() && n >= (int64_t(1) << 16) ? num_threads() : 1;
    auto chunk = [&](int64_t b, int64_t e) {
        RowSorter<T> s(c, parts);
        for (int64_t r = b; r < e; ++r) {
            const alias_t<U>* in = keys + r * n;
            alias_t<U>* out = sorted ? sorted + r * n : nullptr;
            if (c.indices)
                s.indices(in, out, c.indices + r * n, n);
            else if (out)
                s.values(in, out, n);
        }
    };
    parallel_range(c.rows, std::max<int64_t>(1, (int64_t(1) << 14) / n), chunk);
}

// Complex rows: a stable sort of (key, position) pairs (no radix: the key has three parts).
template <class T>
void sort_complex_rows(const backend::SortCall& c) {
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
    visit_dtype(c.dtype, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_unsigned_v<key_t<T>>)
            sort_real_rows<T>(c);
        else
            sort_complex_rows<T>(c);
    });
}

void searchsorted(const backend::SearchCall& c) {
    if (c.m <= 0) return;
    visit_dtype(c.dtype, [&](auto tag) { search<decltype(tag)>(c); });
}

}  // namespace ember::host
