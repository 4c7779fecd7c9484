// The CPU backend: host memory, strided copies and casts, fills, and elementwise maps over the
// op table's loops, split over the thread pool for large arrays.
#include <algorithm>
#include <atomic>
#include <cfenv>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "backend/cpu/blas.hpp"
#include "backend/cpu/cpu.hpp"
#include "backend/cpu/fft.hpp"
#include "backend/cpu/lapack.hpp"
#include "backend/cpu/reduce.hpp"
#include "backend/cpu/rows.hpp"
#include "backend/cpu/sort.hpp"
#include "ember/error.hpp"
#include "ember/fp_status.hpp"
#include "ops/convert.hpp"
#include "support/thread_pool.hpp"

namespace ember::host {

LoopFn map_table[ops::num_ops][num_dtypes];
CastFn cast_table[num_dtypes][num_dtypes];

void init_kernels() {
    static std::once_flag once;
    std::call_once(once, [] {
        register_cast_kernels();
        register_map_kernels_0();
        register_map_kernels_1();
        register_map_kernels_2();
        register_map_kernels_3();
    });
}

ByteLoop::ByteLoop(const backend::Loop& l) : ndim(l.ndim()), nops(l.nops) {
    for (int d = 0; d < ndim; ++d)
        shape[d] = l.shape[d];
    for (int k = 0; k < nops; ++k) {
        const int64_t isz = itemsize(l.dtype[k]);
        base[k] = const_cast<char*>(static_cast<const char*>(l.operand_data(k)));
        for (int d = 0; d < ndim; ++d)
            strides[k][d] = l.scalar[k] ? 0 : l.strides[k][d] * isz;
    }
}

namespace {

// Around a chunk of map work: fp_begin clears the flags other code left set, fp_end returns
// what the chunk raised (as FpFlag bits in `mask`) and clears it. On x86-64 only SSE's MXCSR is
// read (one instruction each when nothing was raised): every loop computes with SSE, no x87.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
constexpr unsigned mxcsr_flags = 0x1d;  // IE, ZE, OE, UE (DE and PE are not NumPy's)
inline void fp_begin() {
    const unsigned c = __builtin_ia32_stmxcsr();
    if (c & mxcsr_flags) __builtin_ia32_ldmxcsr(c & ~mxcsr_flags);
}
inline unsigned fp_end(unsigned mask) {
    const unsigned c = __builtin_ia32_stmxcsr();
    if (!(c & mxcsr_flags)) return 0;
    __builtin_ia32_ldmxcsr(c & ~mxcsr_flags);
    const unsigned f = (c & 0x04 ? fp_divide_by_zero : 0u) | (c & 0x08 ? fp_overflow : 0u) |
                       (c & 0x10 ? fp_underflow : 0u) | (c & 0x01 ? fp_invalid : 0u);
    return f & mask;
}
#else
constexpr int fe_reported = FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID;
inline void fp_begin() {
    if (std::fetestexcept(fe_reported)) std::feclearexcept(fe_reported);
}
inline unsigned fp_end(unsigned mask) {
    const int raised = std::fetestexcept(fe_reported);
    if (!raised) return 0;
    std::feclearexcept(fe_reported);
    const unsigned f = (raised & FE_DIVBYZERO ? fp_divide_by_zero : 0u) |
                       (raised & FE_OVERFLOW ? fp_overflow : 0u) |
                       (raised & FE_UNDERFLOW ? fp_underflow : 0u) |
                       (raised & FE_INVALID ? fp_invalid : 0u);
    return f & mask;
}
#endif

// Elements per parallel task: below this an op stays on the calling thread.
constexpr int64_t grain = 1 << 15;
// Elements per conversion buffer in the buffered paths.
constexpr int64_t buf_elems = 512;

void copy_elements(const char* src, int64_t ss, char* dst, int64_t ds, int64_t n, int64_t isz) {
    if (ss == isz && ds == isz) {
        std::memcpy(dst, src, size_t(n * isz));
        return;
    }
    switch (isz) {
        case 1:
            for (int64_t i = 0; i < n; ++i, src += ss, dst += ds)
                *dst = *src;
            break;
        case 2:
            for (int64_t i = 0; i < n; ++i, src += ss, dst += ds)
                std::memcpy(dst, src, 2);
            break;
        case 4:
            for (int64_t i = 0; i < n; ++i, src += ss, dst += ds)
                std::memcpy(dst, src, 4);
            break;
        case 8:
            for (int64_t i = 0; i < n; ++i, src += ss, dst += ds)
                std::memcpy(dst, src, 8);
            break;
        default:
            for (int64_t i = 0; i < n; ++i, src += ss, dst += ds)
                std::memcpy(dst, src, size_t(isz));
    }
}

// A same-dtype 2-D copy where the operands disagree on which axis is contiguous (a transpose):
// copy in square tiles so both sides stay in cache.
bool tiled_copy(const ByteLoop& L, int64_t isz) {
    if (L.ndim != 2) return false;
    const int64_t d0 = L.strides[0][0], d1 = L.strides[0][1];
    const int64_t s0 = L.strides[1][0], s1 = L.strides[1][1];
    if (!(d0 == isz && s1 == isz) && !(s0 == isz && d1 == isz)) return false;
    if (L.shape[0] < 16 || L.shape[1] < 16) return false;
    constexpr int64_t tile = 64;
    const int64_t n0 = L.shape[0], n1 = L.shape[1];
    const int64_t tiles1 = (n1 + tile - 1) / tile;
    parallel_range(tiles1, std::max<int64_t>(1, grain / (tile * n0)), [&](int64_t b, int64_t e) {
        for (int64_t t1 = b; t1 < e; ++t1) {
            const int64_t j0 = t1 * tile, j1 = std::min(n1, j0 + tile);
            for (int64_t i0 = 0; i0 < n0; i0 += tile) {
                const int64_t i1 = std::min(n0, i0 + tile);
                for (int64_t j = j0; j < j1; ++j) {
                    char* dst = L.base[0] + j * d1 + i0 * d0;
                    const char* src = L.base[1] + j * s1 + i0 * s0;
                    copy_elements(src, s0, dst, d0, i1 - i0, isz);
                }
            }
        }
    });
    return true;
}

constexpr size_t large_block = size_t(1) << 22;  // 4 MiB
constexpr size_t huge_page = size_t(1) << 21;
size_t round_large(size_t n) { return (n + huge_page - 1) / huge_page * huge_page; }

// Freed large blocks kept for reuse by size, up to a byte budget (EMBER_CPU_CACHE_MB; default
// 1/16 of RAM, at most 1 GiB; 0 disables). Oldest blocks are released first past the budget.
class BlockCache {
public:
    BlockCache() {
        // Default budget: 1/16 of physical memory, at most 1 GiB.
        size_t bytes = size_t(1) << 30;
        const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        if (pages > 0 && page > 0) bytes = std::min(bytes, size_t(pages) * size_t(page) / 16);
        if (const char* s = std::getenv("EMBER_CPU_CACHE_MB"))
            bytes = size_t(std::strtoull(s, nullptr, 10)) << 20;
        budget_ = bytes;
    }
    ~BlockCache() {
        for (auto& b : blocks_)
            std::free(b.p);
    }
    void* take(size_t n) {
        std::lock_guard<std::mutex> lock(mu_);
        for (size_t i = blocks_.size(); i-- > 0;)
            if (blocks_[i].n == n) {
                void* p = blocks_[i].p;
                blocks_.erase(blocks_.begin() + std::ptrdiff_t(i));
                held_ -= n;
                return p;
            }
        return nullptr;
    }
    bool put(void* p, size_t n) {
        if (n > budget_) return false;
        std::lock_guard<std::mutex> lock(mu_);
        while (held_ + n > budget_ && !blocks_.empty()) {
            std::free(blocks_.front().p);
            held_ -= blocks_.front().n;
            blocks_.erase(blocks_.begin());
        }
        blocks_.push_back({p, n});
        held_ += n;
        return true;
    }

private:
    struct Block {
        void* p;
        size_t n;
    };
    std::mutex mu_;
    std::vector<Block> blocks_;
    size_t held_ = 0, budget_ = 0;
};

// Element (i, j) of a BLAS-layout operand: row-major with leading dimension ld, or transposed.
inline int64_t at(bool trans, int64_t ld, int64_t i, int64_t j) {
    return trans ? j * ld + i : i * ld + j;
}

// One product of a MatmulLoop: BLAS for float32/64 and the complex types, BLAS in float32 for the
// 16-bit floats (converted on the way), own loops (wrapping like NumPy) for integers and bool.
void one_matmul(const backend::MatmulLoop& l, char* c, const char* a, const char* b) {
    const int64_t m = l.m, n = l.n, k = l.k;
    const DType t = l.dtype;
    switch (t) {
        case DType::float32:
        case DType::float64:
        case DType::complex64:
        case DType::complex128:
            gemm(t, l.trans[1], l.trans[2], m, n, k, a, l.ld[1], b, l.ld[2], c, l.ld[0]);
            return;
        default:
            break;
    }
    visit_dtype(t, [&](auto tag) {
        using T = decltype(tag);
        const T* A = reinterpret_cast<const T*>(a);
        const T* B = reinterpret_cast<const T*>(b);
        T* C = reinterpret_cast<T*>(c);
        if constexpr (is_half_v<T>) {
            std::vector<float> fa(size_t(m * k)), fb(size_t(k * n)), fc(size_t(m * n));
            for (int64_t i = 0; i < m; ++i)
                for (int64_t p = 0; p < k; ++p)
                    fa[size_t(i * k + p)] = float(A[at(l.trans[1], l.ld[1], i, p)]);
            for (int64_t p = 0; p < k; ++p)
                for (int64_t j = 0; j < n; ++j)
                    fb[size_t(p * n + j)] = float(B[at(l.trans[2], l.ld[2], p, j)]);
            gemm(DType::float32, false, false, m, n, k, fa.data(), k, fb.data(), n, fc.data(), n);
            for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j)
                    C[i * l.ld[0] + j] = T(fc[size_t(i * n + j)]);
        } else if constexpr (std::is_same_v<T, bool>) {
            parallel_range(m, std::max<int64_t>(1, grain / std::max<int64_t>(1, n * k)),
                           [&](int64_t lo, int64_t hi) {
                               for (int64_t i = lo; i < hi; ++i)
                                   for (int64_t j = 0; j < n; ++j) {
                                       bool v = false;
                                       for (int64_t p = 0; p < k && !v; ++p)
                                           v = A[at(l.trans[1], l.ld[1], i, p)] &&
                                               B[at(l.trans[2], l.ld[2], p, j)];
                                       C[i * l.ld[0] + j] = v;
                                   }
                           });
        } else if constexpr (std::is_integral_v<T>) {
            // Accumulated modulo 2^64, then truncated: NumPy's wrap-around in the dtype.
            parallel_range(
                m, std::max<int64_t>(1, grain / std::max<int64_t>(1, n * k)),
                [&](int64_t lo, int64_t hi) {
                    std::vector<uint64_t> row(static_cast<size_t>(n));
                    for (int64_t i = lo; i < hi; ++i) {
                        std::fill(row.begin(), row.end(), 0);
                        for (int64_t p = 0; p < k; ++p) {
                            const uint64_t x = uint64_t(int64_t(A[at(l.trans[1], l.ld[1], i, p)]));
                            for (int64_t j = 0; j < n; ++j)
                                row[size_t(j)] +=
                                    x * uint64_t(int64_t(B[at(l.trans[2], l.ld[2], p, j)]));
                        }
                        for (int64_t j = 0; j < n; ++j)
                            C[i * l.ld[0] + j] = T(row[size_t(j)]);
                    }
                });
        } else {
            throw TypeError("ember.matmul: no CPU loop for dtype " + std::string(name(t)));
        }
    });
}

class CpuBackend final : public backend::Backend {
public:
    CpuBackend() { init_kernels(); }

    void* allocate(size_t nbytes, int) override {
        // Small blocks come from malloc (16-byte aligned, fast). Large ones are 2 MiB aligned,
        // marked for transparent huge pages and recycled through a bounded cache: the kernel
        // zeroes fresh pages on first touch, which otherwise costs more than an add itself.
        if (nbytes < large_block) return std::malloc(std::max<size_t>(nbytes, 1));
        const size_t n = round_large(nbytes);
        if (void* p = cache_.take(n)) return p;
        void* p = std::aligned_alloc(huge_page, n);
#ifdef MADV_HUGEPAGE
        if (p) madvise(p, n, MADV_HUGEPAGE);
#endif
        return p;
    }
    void deallocate(void* p, size_t nbytes, int) noexcept override {
        if (!p) return;
        if (nbytes < large_block) {
            std::free(p);
            return;
        }
        if (!cache_.put(p, round_large(nbytes))) std::free(p);
    }
    void copy_to_host(void* dst, const void* src, size_t n, int) override {
        std::memcpy(dst, src, n);
    }
    void copy_from_host(void* dst, const void* src, size_t n, int) override {
        std::memcpy(dst, src, n);
    }
    void synchronize(int) override {}

    void copy(const backend::Loop& l) override {
        ByteLoop L(l);
        const int64_t n = l.numel();
        if (n == 0) return;
        if (l.dtype[0] == l.dtype[1]) {
            const int64_t isz = itemsize(l.dtype[0]);
            if (tiled_copy(L, isz)) return;
            parallel_range(n, grain, [&](int64_t b, int64_t e) {
                for_each_run(L, b, e, [&](char** p, int64_t m) {
                    copy_elements(p[1], L.strides[1][0], p[0], L.strides[0][0], m, isz);
                });
            });
            return;
        }
        CastFn f = cast_table[int(l.dtype[1])][int(l.dtype[0])];
        parallel_range(n, grain, [&](int64_t b, int64_t e) {
            for_each_run(L, b, e, [&](char** p, int64_t m) {
                f(p[1], L.strides[1][0], p[0], L.strides[0][0], m);
            });
        });
    }

    void fill(const backend::Loop& l) override {
        ByteLoop L(l);
        const int64_t isz = itemsize(l.dtype[0]);
        const unsigned char* v = l.scalar_value[1];
        bool zero = std::all_of(v, v + isz, [](unsigned char c) { return c == 0; });
        parallel_range(l.numel(), grain, [&](int64_t b, int64_t e) {
            for_each_run(L, b, e, [&](char** p, int64_t m) {
                char* dst = p[0];
                const int64_t ds = L.strides[0][0];
                if (ds == isz && zero) {
                    std::memset(dst, 0, size_t(m * isz));
                    return;
                }
                switch (isz) {
                    case 1:
                        fill_typed<uint8_t>(dst, ds, m, v);
                        break;
                    case 2:
                        fill_typed<uint16_t>(dst, ds, m, v);
                        break;
                    case 4:
                        fill_typed<uint32_t>(dst, ds, m, v);
                        break;
                    case 8:
                        fill_typed<uint64_t>(dst, ds, m, v);
                        break;
                    default:
                        for (int64_t i = 0; i < m; ++i, dst += ds)
                            std::memcpy(dst, v, size_t(isz));
                }
            });
        });
    }

    void iota(const backend::Loop& l, const Scalar& start, const Scalar& step) override {
        const DType t = l.dtype[0];
        char* dst = l.data[0];
        const int64_t n = l.numel(), ds = l.ndim() ? l.strides[0][0] * itemsize(t) : 0;
        visit_dtype(t, [&](auto tag) {
            using T = decltype(tag);
            parallel_range(n, grain, [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) {
                    T v;
                    if constexpr (std::is_same_v<T, bool>) {
                        v = (start.i + i * step.i) != 0;
                    } else if constexpr (std::is_integral_v<T>) {
                        v = T(uint64_t(start.i) + uint64_t(i) * uint64_t(step.i));
                    } else if constexpr (is_cplx<T>::value) {
                        v = convert<T>(start.c + double(i) * step.c);
                    } else {
                        v = convert<T>(start.c.real() + double(i) * step.c.real());
                    }
                    std::memcpy(dst + i * ds, &v, sizeof(T));
                }
            });
        });
    }

    void random(const rng::Params& p, void* out, DType t, int64_t n, int) override {
        if (n <= 0) return;
        char* dst = static_cast<char*>(out);
        visit_dtype(t, [&](auto tag) {
            using T = decltype(tag);
            if constexpr (is_cplx<T>::value) {
                throw TypeError("ember.random: complex dtypes are not supported");
            } else if (rng::is_packed(p.dist)) {
                // Each block yields V consecutive elements (the last block may be cut short).
                const int v = rng::per_block(int(sizeof(T)));
                const int64_t blocks = (n + v - 1) / v;
                parallel_range(blocks, grain / 4, [&](int64_t b, int64_t e) {
                    for (int64_t k = b; k < e; ++k) {
                        T vals[4];
                        if constexpr (std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>) {
                            if (p.dist == rng::Dist::bits) {
                                rng::packed_bits(p, uint64_t(k), vals);
                            } else {
                                throw TypeError("ember.random: integer output for a real draw");
                            }
                        } else if constexpr (std::is_floating_point_v<T> || is_half_v<T>) {
                            using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
                            C c[4];
                            rng::packed_real(p, uint64_t(k), c);
                            for (int j = 0; j < v; ++j)
                                vals[j] = convert<T>(c[j]);
                        } else {
                            throw TypeError("ember.random: unsupported dtype for a packed draw");
                        }
                        const int64_t m = std::min<int64_t>(v, n - k * v);
                        std::memcpy(dst + k * v * int64_t(sizeof(T)), vals, size_t(m) * sizeof(T));
                    }
                });
            } else {
                parallel_range(n, grain / 16, [&](int64_t b, int64_t e) {
                    for (int64_t i = b; i < e; ++i) {
                        T v;
                        if (p.dist == rng::Dist::gamma || p.dist == rng::Dist::beta)
                            v = convert<T>(rng::streamed_real(p, uint64_t(i)));
                        else if constexpr (std::is_same_v<T, bool>)
                            v = rng::streamed_int(p, uint64_t(i)) != 0;
                        else if constexpr (std::is_integral_v<T>)
                            v = T(rng::streamed_int(p, uint64_t(i)));
                        else
                            v = convert<T>(int64_t(rng::streamed_int(p, uint64_t(i))));
                        std::memcpy(dst + i * int64_t(sizeof(T)), &v, sizeof(T));
                    }
                });
            }
        });
    }

    void gather(void* out, const void* src, const int64_t* off, int64_t n, int isz, int) override {
        char* o = static_cast<char*>(out);
        const char* s = static_cast<const char*>(src);
        // A copy of a compile-time size per element (a register move), not a memcpy call.
        auto run = [&]<int W>(std::integral_constant<int, W>) {
            parallel_range(n, grain, [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i)
                    std::memcpy(o + i * W, s + off[i] * W, size_t(W));
            });
        };
        switch (isz) {
            case 1:
                return run(std::integral_constant<int, 1>{});
            case 2:
                return run(std::integral_constant<int, 2>{});
            case 4:
                return run(std::integral_constant<int, 4>{});
            case 8:
                return run(std::integral_constant<int, 8>{});
            case 16:
                return run(std::integral_constant<int, 16>{});
            default:
                parallel_range(n, grain, [&](int64_t b, int64_t e) {
                    for (int64_t i = b; i < e; ++i)
                        std::memcpy(o + i * isz, s + off[i] * isz, size_t(isz));
                });
        }
    }

    void matmul(const backend::MatmulLoop& l) override {
        l.for_each_batch([&](char* c, const char* a, const char* b) { one_matmul(l, c, a, b); });
    }

    void solver(const backend::SolverCall& call) override { lapack_solver(call); }
    void fft(const backend::FftCall& call) override { host::fft(call); }

    void sort(const backend::SortCall& call) override { host::sort(call); }
    void searchsorted(const backend::SearchCall& call) override { host::searchsorted(call); }

    void rows(const backend::RowsCall& call) override { host::rows(call); }

    void optimizer_step(const backend::OptimizerStep& st) override {
        visit_dtype(st.dtype, [&](auto tag) {
            using T = decltype(tag);
            if constexpr (std::is_floating_point_v<T> || is_half_v<T>) {
                using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
                for (size_t t = 0; t < st.n.size(); ++t) {
                    T* p = static_cast<T*>(st.param[t]);
                    const T* g = static_cast<const T*>(st.grad[t]);
                    T* s[3];
                    for (int k = 0; k < 3; ++k)
                        s[k] = static_cast<T*>(st.state[k][t]);
                    optim::Hyper hs = st.hyper;
                    if (hs.flags & optim::f_device_step)
                        optim::at_step(hs, double(*static_cast<const float*>(st.step[t])));
                    parallel_range(st.n[t], grain / 4, [&](int64_t b, int64_t e) {
                        for (int64_t i = b; i < e; ++i) {
                            C pv = convert<C>(p[i]), sv[3];
                            for (int k = 0; k < 3; ++k)
                                sv[k] = s[k] ? convert<C>(s[k][i]) : C(0);
                            optim::update<C>(hs, pv, convert<C>(g[i]), sv[0], sv[1], sv[2]);
                            p[i] = convert<T>(pv);
                            for (int k = 0; k < 3; ++k)
                                if (s[k]) s[k][i] = convert<T>(sv[k]);
                        }
                    });
                }
            } else {
                throw TypeError("ember.optim: parameters must be floating point, got dtype " +
                                std::string(name(st.dtype)));
            }
        });
    }

    void map(ops::OpId op, DType compute, const backend::Loop& l) override {
        LoopFn fn = map_table[int(op)][int(compute)];
        if (!fn)
            throw TypeError("ember." + std::string(ops::info(op).name) +
                            ": no CPU loop for dtype " + std::string(name(compute)));
        const ops::OpInfo& oi = ops::info(op);
        const DType out_t = oi.out == ops::OutRule::boolean ? DType::bool_
                            : oi.out == ops::OutRule::real  ? real_dtype(compute)
                                                            : compute;
        ByteLoop L(l);
        const int64_t n = l.numel();
        if (n == 0) return;
        // NumPy's errstate: each chunk (on whichever thread runs it) collects the flags it
        // raised; the op's union goes to the calling thread's record. Ops with a boolean result
        // (comparisons, isfinite, ...) and the selections (maximum, minimum, clip, where) never
        // report, as in NumPy: their ordered comparisons signal "invalid" on NaN operands.
        const bool quiet = oi.out == ops::OutRule::boolean || op == ops::OpId::maximum ||
                           op == ops::OpId::minimum || op == ops::OpId::clip ||
                           op == ops::OpId::where;
        const unsigned check = quiet ? 0u : fp_check();
        std::atomic<unsigned> raised{0};
        auto checked = [&](auto&& chunk) {
            return [&, chunk](int64_t b, int64_t e) {
                if (!check) return chunk(b, e);
                fp_begin();
                chunk(b, e);
                if (unsigned f = fp_end(check)) raised.fetch_or(f, std::memory_order_relaxed);
            };
        };
        bool direct = l.dtype[0] == out_t;
        for (int k = 1; k < l.nops; ++k)
            direct = direct && l.dtype[k] == compute;
        if (direct) {
            parallel_range(n, grain, checked([&](int64_t b, int64_t e) {
                               int64_t s[backend::max_operands];
                               for (int k = 0; k < L.nops; ++k)
                                   s[k] = L.ndim ? L.strides[k][0] : 0;
                               for_each_run(L, b, e, [&](char** p, int64_t m) { fn(p, s, m); });
                           }));
            if (unsigned f = raised.load())
                ember::detail::add_fp_status(f, oi.name.data());  // a literal: NUL-ended
            return;
        }
        // Buffered: convert inputs to the compute type chunk by chunk (scalars once), run the
        // loop on contiguous buffers, convert the result back. Memory stays O(chunk).
        const int64_t csz = itemsize(compute), osz = itemsize(out_t);
        alignas(16) unsigned char scal[backend::max_operands][16];
        for (int k = 1; k < l.nops; ++k)
            if (l.scalar[k] && l.dtype[k] != compute)
                cast_table[int(l.dtype[k])][int(compute)](
                    static_cast<const char*>(l.operand_data(k)), 0,
                    reinterpret_cast<char*>(scal[k]), 0, 1);
        parallel_range(n, grain, checked([&](int64_t b, int64_t e) {
                           alignas(64) unsigned char buf[backend::max_operands][buf_elems * 16];
                           for_each_run(L, b, e, [&](char** p, int64_t m) {
                               for (int64_t off = 0; off < m; off += buf_elems) {
                                   const int64_t c = std::min(buf_elems, m - off);
                                   char* q[backend::max_operands];
                                   int64_t s[backend::max_operands];
                                   for (int k = 1; k < L.nops; ++k) {
                                       const int64_t st = L.ndim ? L.strides[k][0] : 0;
                                       const char* src = p[k] + off * st;
                                       if (l.dtype[k] == compute) {
                                           q[k] = const_cast<char*>(src);
                                           s[k] = st;
                                       } else if (l.scalar[k]) {
                                           q[k] = reinterpret_cast<char*>(scal[k]);
                                           s[k] = 0;
                                       } else {
                                           cast_table[int(l.dtype[k])][int(compute)](
                                               src, st, reinterpret_cast<char*>(buf[k]), csz, c);
                                           q[k] = reinterpret_cast<char*>(buf[k]);
                                           s[k] = csz;
                                       }
                                   }
                                   const int64_t ost = L.ndim ? L.strides[0][0] : 0;
                                   char* dst = p[0] + off * ost;
                                   if (l.dtype[0] == out_t) {
                                       q[0] = dst;
                                       s[0] = ost;
                                       fn(q, s, c);
                                   } else {
                                       q[0] = reinterpret_cast<char*>(buf[0]);
                                       s[0] = osz;
                                       fn(q, s, c);
                                       cast_table[int(out_t)][int(l.dtype[0])](q[0], osz, dst, ost,
                                                                               c);
                                   }
                               }
                           });
                       }));
        if (unsigned f = raised.load()) ember::detail::add_fp_status(f, oi.name.data());
    }

    void reduce(backend::ReduceOp op, DType acc, const backend::Loop& l) override {
        host::reduce(op, acc, l);
    }

private:
    BlockCache cache_;

    template <class U>
    static void fill_typed(char* dst, int64_t ds, int64_t m, const unsigned char* v) {
        U x;
        std::memcpy(&x, v, sizeof(U));
        if (ds == sizeof(U)) {
            U* d = reinterpret_cast<U*>(dst);
            for (int64_t i = 0; i < m; ++i)
                d[i] = x;
        } else {
            for (int64_t i = 0; i < m; ++i, dst += ds)
                std::memcpy(dst, &x, sizeof(U));
        }
    }
};

}  // namespace

}  // namespace ember::host

namespace ember::backend {

Backend& cpu() {
    static host::CpuBackend b;
    return b;
}

}  // namespace ember::backend
