// The one table of each dtype's CUDA spellings (device storage type, plain C type, short code for
// kernel names), shared by every generator of device source under src/backend/cuda.
#pragma once

#include <string_view>

#include "ember/dtype.hpp"

namespace ember::gpu {

struct CudaType {
    std::string_view device;  // the storage type as kernels name it (the prelude's typedefs)
    std::string_view plain;   // the same type in plain C spelling (no typedefs needed)
    std::string_view code;    // short code in kernel names
};

// Indexed by DType (ember/dtype.hpp's order).
inline constexpr CudaType cuda_types[num_dtypes] = {
    {"bool", "bool", "b1"},
    {"int8_t", "signed char", "i8"},
    {"int16_t", "short", "i16"},
    {"int32_t", "int", "i32"},
    {"int64_t", "long long", "i64"},
    {"uint8_t", "unsigned char", "u8"},
    {"uint16_t", "unsigned short", "u16"},
    {"uint32_t", "unsigned int", "u32"},
    {"uint64_t", "unsigned long long", "u64"},
    {"ember::float16", "ember::float16", "f16"},
    {"ember::bfloat16", "ember::bfloat16", "bf16"},
    {"float", "float", "f32"},
    {"double", "double", "f64"},
    {"ember::dev::complex64", "ember::dev::complex64", "c64"},
    {"ember::dev::complex128", "ember::dev::complex128", "c128"},
};

// Device spelling of a dtype's storage type.
constexpr std::string_view device_type(DType t) { return cuda_types[int(t)].device; }
// The same type without the prelude's typedefs (signed char, short, long long, ...).
constexpr std::string_view plain_type(DType t) { return cuda_types[int(t)].plain; }
// Short dtype code for kernel names (f32, bf16, c128, ...).
constexpr std::string_view dtype_code(DType t) { return cuda_types[int(t)].code; }
// The type a kernel computes a dtype's values in: float for the 16-bit floats.
constexpr std::string_view compute_type(DType t) {
    return t == DType::float16 || t == DType::bfloat16 ? device_type(DType::float32)
                                                       : device_type(t);
}

}  // namespace ember::gpu
