// CUDA C++ source generation for elementwise map kernels of the op table (DESIGN.md §2, §4).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "backend/cuda/nvrtc.hpp"
#include "ember/dtype.hpp"
#include "ember/optable.hpp"

namespace ember::gpu {

// Most collapsed dimensions a strided kernel handles; the host splits deeper loops into
// launches over the outer dimensions.
inline constexpr int max_strided_dims = 8;
inline constexpr int max_map_operands = 4;  // output + up to three inputs

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

// The device prelude (what scalar.hpp's host includes give it, plus conversions and float16 /
// bfloat16) and the text of src/ops/scalar.hpp embedded at build time.
std::string_view device_prelude_text();
std::string_view scalar_header_text();

}  // namespace ember::gpu
