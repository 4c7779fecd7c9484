// CUDA C++ source generation for elementwise map kernels of the op table (DESIGN.md §2, §4).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/cuda/codegen/common.hpp"
#include "backend/cuda/codegen/reduce.hpp"
#include "backend/cuda/nvrtc.hpp"
#include "ember/dtype.hpp"
#include "ember/optable.hpp"
#include "ops/random.hpp"

namespace ember::gpu {

// The by-value kernel argument describing a strided iteration space: dims innermost first,
// strides in elements per operand (operand 0 is the output). The device prelude declares the
// same layout.
struct StridedGeometry {
    int64_t shape[max_strided_dims];
    int64_t strides[max_map_operands][max_strided_dims];
};

enum class MapLayout : uint8_t { contiguous, strided };

// One map kernel: op, compute type, operand storage types and layout.
struct MapKernel {
    ops::OpId op{};
    DType compute{};          // the op table's loop type (float32 for float16 inputs)
    DType out{};              // storage type of the output
    DType in[3] = {};         // storage types of the inputs (arity of them are used)
    uint8_t scalar_mask = 0;  // bit k: input k is a by-value argument, not an array
    MapLayout layout = MapLayout::contiguous;
    int ndim = 1;          // strided: number of collapsed dims, 1..max_strided_dims
    bool index64 = false;  // 64-bit index arithmetic (sizes or offsets >= 2^31)
    int vec = 1;           // contiguous: elements per 16-byte vector access (1: scalar only)
};

// A strided copy with NumPy's unsafe cast (out <- in); with `scalar`, a fill from a by-value
// argument.
struct CopyKernel {
    DType out{}, in{};
    bool scalar = false;
    MapLayout layout = MapLayout::contiguous;
    int ndim = 1;
    bool index64 = false;
    int vec = 1;
};

// The dtype an op's scalar body returns for compute type `compute` (its output rule).
DType result_dtype(ops::OpId op, DType compute);
// The kernel whose operands are stored in the types the body sees (bool for logical ops).
MapKernel natural_map_kernel(ops::OpId op, DType compute, MapLayout layout = MapLayout::contiguous,
                             int ndim = 1, bool index64 = false);

// A unique C identifier, e.g. ember_map_add_f32__f32_f32_f32__contig_i32.
std::string kernel_name(const MapKernel& k);
// The __global__ function of one kernel (extern "C", named kernel_name(k)).
std::string kernel_text(const MapKernel& k);
// A whole translation unit: the two includes, then the kernels. Throws ValueError for a kernel
// that the op table has no loop for, or with an out-of-range ndim.
std::string program_text(std::span<const MapKernel> kernels);
// program_text plus the in-memory headers (device prelude, the host's scalar.hpp).
Program map_program(std::span<const MapKernel> kernels);

// Elements per 16-byte access of the widest array operand (1 when it is 16 bytes wide).
int natural_vec(const MapKernel& k);
int natural_vec(const CopyKernel& k);
// The layouts an elementwise kernel is launched in most, compiled together on first use:
// contiguous with natural_vec() vectors and without (unaligned views), strided over 1-3 dims.
std::vector<MapKernel> layout_variants(const MapKernel& k);
std::vector<CopyKernel> layout_variants(const CopyKernel& k);

std::string copy_kernel_name(const CopyKernel& k);
std::string copy_kernel_text(const CopyKernel& k);
Program copy_program(const CopyKernel& k);
// 1-D out[i * stride] = start + i * step (arange, linspace).
std::string iota_kernel_name(DType out, bool index64);
std::string iota_kernel_text(DType out, bool index64);
Program iota_program(DType out, bool index64);

// Random fills (src/ops/random.hpp): one kernel per family and output dtype, the distribution and
// its parameters are arguments. Packed families write one Philox block per thread and loop.
enum class RandomFamily : uint8_t { bits, real, streamed_real, streamed_int };
RandomFamily random_family(rng::Dist d);
std::string random_kernel_name(RandomFamily f, DType out);
std::string random_kernel_text(RandomFamily f, DType out);
Program random_program(RandomFamily f, DType out);

// Integer and bool matrix products (cuBLAS has none): one thread per output element, sums
// modulo 2^64 then truncated (NumPy's wrap-around), bool as OR of ANDs.
std::string int_matmul_kernel_name(DType t);
// out[i] = src[offsets[i]] on elements of 1, 2, 4, 8 or 16 bytes (moved as bits).
std::string gather_kernel_name(int itemsize);
Program gather_program(int itemsize);
Program int_matmul_program(DType t);

// The device prelude (what scalar.hpp's host includes give it, plus conversions and float16 /
// bfloat16) and the text of src/ops/scalar.hpp embedded at build time.
std::string_view device_prelude_text();
std::string_view scalar_header_text();
std::string_view half_header_text();  // include/ember/half.hpp (ember.cuda.jit's host mode)

}  // namespace ember::gpu
