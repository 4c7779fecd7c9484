// Run-time loading of the CUDA driver API (libcuda) and NVRTC with dlopen: one X-macro list of the
// symbols ember uses per library, no link-time dependency, a one-line reason when unavailable.
#pragma once

#include <cstddef>
#include <string>

namespace ember::gpu {

// The driver API's types, declared here from the documented ABI so that this header needs no
// CUDA header (CUDA headers are a build-time option, never a requirement of the core).
using CUresult = int;
using CUdevice = int;
using CUdevice_attribute = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
inline constexpr CUresult CUDA_SUCCESS = 0;

using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;
inline constexpr nvrtcResult NVRTC_SUCCESS = 0;

// X(member, exported symbol, return type, parameter list)
#define EMBER_NVRTC_SYMBOLS(X)                                                                 \
    X(nvrtcVersion, "nvrtcVersion", nvrtcResult, (int* major, int* minor))                     \
    X(nvrtcCreateProgram, "nvrtcCreateProgram", nvrtcResult,                                   \
      (nvrtcProgram * prog, const char* src, const char* name, int num_headers,                \
       const char* const* headers, const char* const* include_names))                          \
    X(nvrtcCompileProgram, "nvrtcCompileProgram", nvrtcResult,                                 \
      (nvrtcProgram prog, int num_options, const char* const* options))                        \
    X(nvrtcGetCUBINSize, "nvrtcGetCUBINSize", nvrtcResult, (nvrtcProgram prog, size_t * size)) \
    X(nvrtcGetCUBIN, "nvrtcGetCUBIN", nvrtcResult, (nvrtcProgram prog, char* cubin))           \
    X(nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", nvrtcResult,                           \
      (nvrtcProgram prog, size_t * size))                                                      \
    X(nvrtcGetProgramLog, "nvrtcGetProgramLog", nvrtcResult, (nvrtcProgram prog, char* log))   \
    X(nvrtcDestroyProgram, "nvrtcDestroyProgram", nvrtcResult, (nvrtcProgram * prog))          \
    X(nvrtcGetErrorString, "nvrtcGetErrorString", const char*, (nvrtcResult result))

// Versioned exports (the _v2 names) are the ones cuda.h maps the plain names to.
#define EMBER_DRIVER_SYMBOLS(X)                                                                    \
    X(cuInit, "cuInit", CUresult, (unsigned flags))                                                \
    X(cuDriverGetVersion, "cuDriverGetVersion", CUresult, (int* version))                          \
    X(cuGetErrorName, "cuGetErrorName", CUresult, (CUresult error, const char** str))              \
    X(cuGetErrorString, "cuGetErrorString", CUresult, (CUresult error, const char** str))          \
    X(cuDeviceGetCount, "cuDeviceGetCount", CUresult, (int* count))                                \
    X(cuDeviceGet, "cuDeviceGet", CUresult, (CUdevice * device, int ordinal))                      \
    X(cuDeviceGetName, "cuDeviceGetName", CUresult, (char* name, int len, CUdevice dev))           \
    X(cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult,                                      \
      (int* value, CUdevice_attribute attrib, CUdevice dev))                                       \
    X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", CUresult, (size_t * bytes, CUdevice dev))           \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult,                              \
      (CUcontext * ctx, CUdevice dev))                                                             \
    X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", CUresult, (CUdevice dev))         \
    X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext ctx))                               \
    X(cuCtxGetCurrent, "cuCtxGetCurrent", CUresult, (CUcontext * ctx))                             \
    X(cuCtxSynchronize, "cuCtxSynchronize", CUresult, ())                                          \
    X(cuStreamCreate, "cuStreamCreate", CUresult, (CUstream * stream, unsigned flags))             \
    X(cuStreamDestroy, "cuStreamDestroy_v2", CUresult, (CUstream stream))                          \
    X(cuStreamSynchronize, "cuStreamSynchronize", CUresult, (CUstream stream))                     \
    X(cuEventCreate, "cuEventCreate", CUresult, (CUevent * event, unsigned flags))                 \
    X(cuEventDestroy, "cuEventDestroy_v2", CUresult, (CUevent event))                              \
    X(cuEventRecord, "cuEventRecord", CUresult, (CUevent event, CUstream stream))                  \
    X(cuEventSynchronize, "cuEventSynchronize", CUresult, (CUevent event))                         \
    X(cuEventElapsedTime, "cuEventElapsedTime", CUresult, (float* ms, CUevent start, CUevent end)) \
    X(cuMemGetInfo, "cuMemGetInfo_v2", CUresult, (size_t * free, size_t * total))                  \
    X(cuMemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr * ptr, size_t bytes))                    \
    X(cuMemFree, "cuMemFree_v2", CUresult, (CUdeviceptr ptr))                                      \
    X(cuMemAllocAsync, "cuMemAllocAsync", CUresult,                                                \
      (CUdeviceptr * ptr, size_t bytes, CUstream stream))                                          \
    X(cuMemFreeAsync, "cuMemFreeAsync", CUresult, (CUdeviceptr ptr, CUstream stream))              \
    X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", CUresult,                                         \
      (CUdeviceptr dst, const void* src, size_t bytes, CUstream stream))                           \
    X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", CUresult,                                         \
      (void* dst, CUdeviceptr src, size_t bytes, CUstream stream))                                 \
    X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", CUresult,                                         \
      (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream))                           \
    X(cuMemsetD8Async, "cuMemsetD8Async", CUresult,                                                \
      (CUdeviceptr dst, unsigned char value, size_t n, CUstream stream))                           \
    X(cuModuleLoadData, "cuModuleLoadData", CUresult, (CUmodule * module, const void* image))      \
    X(cuModuleUnload, "cuModuleUnload", CUresult, (CUmodule module))                               \
    X(cuModuleGetFunction, "cuModuleGetFunction", CUresult,                                        \
      (CUfunction * fn, CUmodule module, const char* name))                                        \
    X(cuLaunchKernel, "cuLaunchKernel", CUresult,                                                  \
      (CUfunction fn, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,         \
       unsigned block_y, unsigned block_z, unsigned shared_bytes, CUstream stream, void** params,  \
       void** extra))

#define EMBER_DECLARE_SYMBOL(member, symbol, ret, params) ret(*member) params = nullptr;

// The resolved entry points of NVRTC.
struct NvrtcApi {
    EMBER_NVRTC_SYMBOLS(EMBER_DECLARE_SYMBOL)
    int major = 0, minor = 0;  // nvrtcVersion
};

// The resolved entry points of the driver API; cuInit(0) has succeeded.
struct DriverApi {
    EMBER_DRIVER_SYMBOLS(EMBER_DECLARE_SYMBOL)
    int version = 0;  // cuDriverGetVersion, e.g. 13000
};

#undef EMBER_DECLARE_SYMBOL

// Loaded on first call (thread-safe); nullptr when the library or one of its symbols is missing,
// and then the *_unavailable_reason() functions say why in one line.
const NvrtcApi* nvrtc();
const std::string& nvrtc_unavailable_reason();
const DriverApi* driver();
const std::string& driver_unavailable_reason();

}  // namespace ember::gpu
