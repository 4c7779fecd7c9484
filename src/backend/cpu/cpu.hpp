// Internals shared by the CPU backend's translation units: kernel tables and strided iteration.
#pragma once

#include <complex>
#include <cstdint>

#include "backend/backend.hpp"
#include "ember/half.hpp"
#include "ops/convert.hpp"

namespace ember::host {

using ops::convert;
using ops::is_cplx;
using ops::is_half_v;
using ops::widen;

// Hot loops get an x86-64-v3 (AVX2) clone next to the baseline one, picked at load time by the
// CPU it runs on. Floating-point contraction stays off (ISO mode), so both clones give
// bit-identical results.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(EMBER_NO_CLONES)
#define EMBER_CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define EMBER_CPU_CLONES
#endif

// NumPy-style inner loop: ptrs[0] is the output, byte strides per operand, n elements.
using LoopFn = void (*)(char** ptrs, const int64_t* strides, int64_t n);
// Strided conversion of n elements.
using CastFn = void (*)(const char* src, int64_t src_stride, char* dst, int64_t dst_stride,
                        int64_t n);

template <DType D>
struct host_type;
#define EMBER_HOST_TYPE(D, T)    \
    template <>                  \
    struct host_type<DType::D> { \
        using type = T;          \
    };
EMBER_HOST_TYPE(bool_, bool)
EMBER_HOST_TYPE(int8, int8_t)
EMBER_HOST_TYPE(int16, int16_t)
EMBER_HOST_TYPE(int32, int32_t)
EMBER_HOST_TYPE(int64, int64_t)
EMBER_HOST_TYPE(uint8, uint8_t)
EMBER_HOST_TYPE(uint16, uint16_t)
EMBER_HOST_TYPE(uint32, uint32_t)
EMBER_HOST_TYPE(uint64, uint64_t)
EMBER_HOST_TYPE(float16, float16)
EMBER_HOST_TYPE(bfloat16, bfloat16)
EMBER_HOST_TYPE(float32, float)
EMBER_HOST_TYPE(float64, double)
EMBER_HOST_TYPE(complex64, std::complex<float>)
EMBER_HOST_TYPE(complex128, std::complex<double>)
#undef EMBER_HOST_TYPE
template <DType D>
using host_t = typename host_type<D>::type;

// Kernel tables, filled once by init_kernels().
extern LoopFn map_table[ops::num_ops][num_dtypes];
extern CastFn cast_table[num_dtypes][num_dtypes];
void init_kernels();
// Each registers the map kernels of the ops whose index is congruent to `part` modulo 4.
void register_map_kernels_0();
void register_map_kernels_1();
void register_map_kernels_2();
void register_map_kernels_3();
void register_cast_kernels();

// Per-operand byte strides of a Loop, plus the element count.
struct ByteLoop {
    int ndim = 0, nops = 0;
    int64_t shape[max_ndim];
    int64_t strides[backend::max_operands][max_ndim];
    char* base[backend::max_operands];
    ByteLoop() = default;
    explicit ByteLoop(const backend::Loop& l);
};

// Calls f(ptrs, n) for each run along dimension 0 that lies in the linear range [begin, end) of
// the iteration space (C order with dimension 0 fastest).
template <class F>
void for_each_run(const ByteLoop& L, int64_t begin, int64_t end, F&& f) {
    if (begin >= end) return;
    const int nd = L.ndim, nops = L.nops;
    if (nd == 0) {
        char* p[backend::max_operands];
        for (int k = 0; k < nops; ++k)
            p[k] = L.base[k];
        f(p, int64_t(1));
        return;
    }
    int64_t idx[max_ndim];
    int64_t rem = begin;
    for (int d = 0; d < nd; ++d) {
        idx[d] = rem % L.shape[d];
        rem /= L.shape[d];
    }
    char* p[backend::max_operands];
    for (int k = 0; k < nops; ++k) {
        p[k] = L.base[k];
        for (int d = 0; d < nd; ++d)
            p[k] += idx[d] * L.strides[k][d];
    }
    int64_t pos = begin;
    while (pos < end) {
        int64_t n = L.shape[0] - idx[0];
        if (n > end - pos) n = end - pos;
        f(p, n);
        pos += n;
        if (pos >= end) break;
        // Advance to the start of the next run.
        for (int k = 0; k < nops; ++k)
            p[k] += n * L.strides[k][0];
        idx[0] += n;
        int d = 0;
        while (d < nd && idx[d] == L.shape[d]) {
            for (int k = 0; k < nops; ++k)
                p[k] -= idx[d] * L.strides[k][d];
            idx[d] = 0;
            if (d + 1 < nd) {
                ++idx[d + 1];
                for (int k = 0; k < nops; ++k)
                    p[k] += L.strides[k][d + 1];
            }
            ++d;
        }
    }
}

}  // namespace ember::host
