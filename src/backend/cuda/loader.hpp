// Run-time loading of the CUDA driver API (libcuda) and NVRTC with dlopen: one X-macro list of the
// symbols ember uses per library, no link-time dependency, a one-line reason when unavailable.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

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
using CUmemoryPool = struct CUmemPoolHandle_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUgraphNode = struct CUgraphNode_st*;
inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NOT_READY = 600;

// cuda.h's CUmemPoolProps (v1): pinned device memory at a location, no IPC handles.
struct CUmemPoolProps {
    int alloc_type = 1;  // CU_MEM_ALLOCATION_TYPE_PINNED
    int handle_types = 0;
    int location_type = 1;  // CU_MEM_LOCATION_TYPE_DEVICE
    int location_id = 0;
    void* win32_security_attributes = nullptr;
    size_t max_size = 0;
    unsigned short usage = 0;
    unsigned char reserved[54] = {};
};
static_assert(sizeof(CUmemPoolProps) == 88);

// The driver enum values ember uses (from cuda.h).
enum : int {
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
    CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
    CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT = 5,
    CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH = 6,
    CU_MEMPOOL_ATTR_USED_MEM_CURRENT = 7,
    CU_MEMPOOL_ATTR_USED_MEM_HIGH = 8,
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    CU_STREAM_NON_BLOCKING = 1,
    CU_EVENT_DEFAULT = 0,
    CU_EVENT_DISABLE_TIMING = 2,
    CU_MEMHOSTALLOC_PORTABLE = 1,
    CU_STREAM_CAPTURE_MODE_RELAXED = 2,
    CU_STREAM_CAPTURE_STATUS_NONE = 0,
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    CU_MEMORYTYPE_HOST = 1,
};

// cuda.h's CUlaunchAttribute and CUlaunchConfig, for cuLaunchKernelEx (ember sets one attribute:
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, an int in the 64-byte value union).
struct CUlaunchAttribute {
    int id = 0;
    char pad[4] = {};
    union {
        char bytes[64];
        int programmatic_stream_serialization;
    } value = {};
};
static_assert(sizeof(CUlaunchAttribute) == 72);
struct CUlaunchConfig {
    unsigned grid_x = 1, grid_y = 1, grid_z = 1;
    unsigned block_x = 1, block_y = 1, block_z = 1;
    unsigned shared_bytes = 0;
    CUstream stream = nullptr;
    CUlaunchAttribute* attrs = nullptr;
    unsigned num_attrs = 0;
};
static_assert(sizeof(CUlaunchConfig) == 56);
inline constexpr int CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6;

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
    X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", CUresult,                                \
      (CUdeviceptr * ptr, size_t bytes, CUmemoryPool pool, CUstream stream))                       \
    X(cuMemPoolCreate, "cuMemPoolCreate", CUresult,                                                \
      (CUmemoryPool * pool, const CUmemPoolProps* props))                                          \
    X(cuMemPoolDestroy, "cuMemPoolDestroy", CUresult, (CUmemoryPool pool))                         \
    X(cuMemPoolTrimTo, "cuMemPoolTrimTo", CUresult, (CUmemoryPool pool, size_t keep))              \
    X(cuMemPoolSetAttribute, "cuMemPoolSetAttribute", CUresult,                                    \
      (CUmemoryPool pool, int attr, void* value))                                                  \
    X(cuMemPoolGetAttribute, "cuMemPoolGetAttribute", CUresult,                                    \
      (CUmemoryPool pool, int attr, void* value))                                                  \
    X(cuMemHostAlloc, "cuMemHostAlloc", CUresult, (void** p, size_t bytes, unsigned flags))        \
    X(cuMemFreeHost, "cuMemFreeHost", CUresult, (void* p))                                         \
    X(cuMemsetD32Async, "cuMemsetD32Async", CUresult,                                              \
      (CUdeviceptr dst, unsigned value, size_t n, CUstream stream))                                \
    X(cuMemsetD16Async, "cuMemsetD16Async", CUresult,                                              \
      (CUdeviceptr dst, unsigned short value, size_t n, CUstream stream))                          \
    X(cuStreamQuery, "cuStreamQuery", CUresult, (CUstream stream))                                 \
    X(cuStreamWaitEvent, "cuStreamWaitEvent", CUresult,                                            \
      (CUstream stream, CUevent event, unsigned flags))                                            \
    X(cuEventQuery, "cuEventQuery", CUresult, (CUevent event))                                     \
    X(cuPointerGetAttribute, "cuPointerGetAttribute", CUresult,                                    \
      (void* data, int attribute, CUdeviceptr ptr))                                                \
    X(cuFuncGetAttribute, "cuFuncGetAttribute", CUresult, (int* value, int attrib, CUfunction fn)) \
    X(cuStreamBeginCapture, "cuStreamBeginCapture_v2", CUresult, (CUstream stream, int mode))      \
    X(cuStreamEndCapture, "cuStreamEndCapture", CUresult, (CUstream stream, CUgraph * graph))      \
    X(cuStreamIsCapturing, "cuStreamIsCapturing", CUresult, (CUstream stream, int* status))        \
    X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", CUresult,                        \
      (CUgraphExec * exec, CUgraph graph, unsigned long long flags))                               \
    X(cuGraphLaunch, "cuGraphLaunch", CUresult, (CUgraphExec exec, CUstream stream))               \
    X(cuGraphExecDestroy, "cuGraphExecDestroy", CUresult, (CUgraphExec exec))                      \
    X(cuGraphDestroy, "cuGraphDestroy", CUresult, (CUgraph graph))                                 \
    X(cuGraphGetNodes, "cuGraphGetNodes", CUresult,                                                \
      (CUgraph graph, CUgraphNode * nodes, size_t * count))                                        \
    X(cuLaunchKernel, "cuLaunchKernel", CUresult,                                                  \
      (CUfunction fn, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,         \
       unsigned block_y, unsigned block_z, unsigned shared_bytes, CUstream stream, void** params,  \
       void** extra))                                                                              \
    X(cuLaunchKernelEx, "cuLaunchKernelEx", CUresult,                                              \
      (const CUlaunchConfig* config, CUfunction fn, void** params, void** extra))

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

// Where the CUDA libraries and CCCL's headers are. The Python module installs a finder that asks
// NVIDIA's cuda-pathfinder (NVIDIA's wheels in site-packages, conda, CUDA_PATH/CUDA_HOME, the
// system); the C++ library alone has none. `kind` is "lib" (a loadable path for a library named
// as cuda-pathfinder names it: "nvrtc", "cublas", ...) or "include" ("cccl"); "" when unknown.
using PathFinder = std::string (*)(const char* kind, const char* name);
void set_path_finder(PathFinder finder);
// The finder's answer, asked once per (kind, name) and remembered; "" without a finder.
std::string find_path(const char* kind, const char* name);
// dlopen of library `name`: the finder's path first, then each of `fallbacks` (sonames, then
// /usr/local/cuda paths). nullptr and `reason` (every attempt's error) when none loads. Records
// where it came from for library_origins().
void* open_cuda_library(const char* name, std::initializer_list<const char*> fallbacks,
                        std::string& reason);
// (name, the path or soname it was loaded from) of every library opened so far.
std::vector<std::pair<std::string, std::string>> library_origins();

// Loaded on first call (thread-safe); nullptr when the library or one of its symbols is missing,
// and then the *_unavailable_reason() functions say why in one line.
const NvrtcApi* nvrtc();
const std::string& nvrtc_unavailable_reason();
const DriverApi* driver();
const std::string& driver_unavailable_reason();

}  // namespace ember::gpu
