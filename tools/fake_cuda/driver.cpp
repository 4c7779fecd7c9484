// A do-nothing CUDA driver (libcuda.so.1) for profiling ember's host path where there is no GPU:
// one device that says it is an sm_90 H200, "device" memory from the host heap (copies and fills
// really happen, so the host sees consistent bytes), kernels that load and launch but never run.
// Built and used by tools/host_profile.sh and the host tests of ember.debug
// (tests/python/test_debug_fake_cuda.py); not part of ember.
// EMBER_FAKE_FAULT_AT_LAUNCH=N: the N-th launch "faults" as an illegal address would: from then on
// every synchronizing call returns CUDA_ERROR_ILLEGAL_ADDRESS (700), as the real driver's sticky
// error does.
// Stream capture: work on a capturing stream is recorded, not done (launches count as nodes;
// copies and fills are kept and done at each cuGraphLaunch); a synchronization or a copy to the
// host on a capturing stream fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (900) and ends the
// capture with CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (901), as the real driver does.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "backend/cuda/loader.hpp"

using namespace ember::gpu;

#define FAKE extern "C" __attribute__((visibility("default")))

namespace {
template <class T>
T handle(uintptr_t v) {
    return reinterpret_cast<T>(v);
}
void* host_alloc(size_t n) { return std::aligned_alloc(256, (n + 255) / 256 * 256); }

std::atomic<long> launches{0};
std::atomic<bool> faulted{false};
std::atomic<size_t> pool_reserved{0};
std::mutex pinned_mu;
std::set<uintptr_t> pinned;
long fault_at() {
    static const long n = [] {
        const char* e = std::getenv("EMBER_FAKE_FAULT_AT_LAUNCH");
        return e ? std::atol(e) : 0L;
    }();
    return n;
}
CUresult sticky() { return faulted.load() ? 700 : 0; }

struct FakeGraph {
    std::vector<std::function<void()>> ops;  // copies and fills, done at each launch
    size_t nodes = 0;
    bool invalid = false;
};
std::mutex cap_mu;
std::map<CUstream, FakeGraph*> capturing;  // stream -> the graph it is capturing into

// Records `op` (or a kernel when empty) when `s` is capturing: true; false: do it now.
bool captured(CUstream s, std::function<void()> op = {}) {
    std::lock_guard lk(cap_mu);
    auto it = capturing.find(s);
    if (it == capturing.end()) return false;
    ++it->second->nodes;
    if (op) it->second->ops.push_back(std::move(op));
    return true;
}
// A synchronizing call on stream `s` (nullptr: the context): 900 when it is capturing.
CUresult no_sync_in_capture(CUstream s) {
    std::lock_guard lk(cap_mu);
    bool hit = false;
    for (auto& [cs, g] : capturing)
        if (s == nullptr || cs == s) g->invalid = hit = true;
    return hit ? 900 : 0;
}
}  // namespace

FAKE CUresult cuInit(unsigned) { return 0; }
FAKE CUresult cuDriverGetVersion(int* v) { return *v = 13000, 0; }
FAKE CUresult cuGetErrorName(CUresult r, const char** s) {
    *s = r == 700   ? "CUDA_ERROR_ILLEGAL_ADDRESS"
         : r == 900 ? "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"
         : r == 901 ? "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"
                    : "CUDA_ERROR_FAKE";
    return 0;
}
FAKE CUresult cuGetErrorString(CUresult r, const char** s) {
    *s = r == 700   ? "an illegal memory access was encountered"
         : r == 900 ? "operation not permitted when stream is capturing"
         : r == 901 ? "operation failed due to a previous error during capture"
                    : "fake driver error";
    return 0;
}
FAKE CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream s, void**, void**) {
    if (faulted.load()) return 700;
    if (captured(s)) return 0;
    if (++launches == fault_at()) faulted = true;
    return 0;
}
FAKE CUresult cuStreamSynchronize(CUstream s) {
    if (const CUresult r = no_sync_in_capture(s)) return r;
    return sticky();
}
FAKE CUresult cuCtxSynchronize() {
    if (const CUresult r = no_sync_in_capture(nullptr)) return r;
    return sticky();
}
FAKE CUresult cuEventSynchronize(CUevent) { return sticky(); }
FAKE CUresult cuPointerGetAttribute(void* data, int attribute, CUdeviceptr p) {
    if (attribute != CU_POINTER_ATTRIBUTE_MEMORY_TYPE) return 1;  // CUDA_ERROR_INVALID_VALUE
    std::lock_guard lk(pinned_mu);
    if (!pinned.count(uintptr_t(p))) return 1;
    *static_cast<unsigned*>(data) = CU_MEMORYTYPE_HOST;
    return 0;
}
FAKE CUresult cuDeviceGetCount(int* n) { return *n = 1, 0; }
FAKE CUresult cuDeviceGet(CUdevice* d, int i) { return *d = i, 0; }
FAKE CUresult cuDeviceGetName(char* name, int len, CUdevice) {
    std::strncpy(name, "fake H200 (no GPU)", size_t(len));
    return 0;
}
FAKE CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
    switch (a) {
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
            *v = 9;
            break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
            *v = 0;
            break;
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
            *v = 132;
            break;
        case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
            *v = 50 << 20;
            break;
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
            *v = 2048;
            break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
            *v = 48 << 10;
            break;
        default:
            *v = 1;
    }
    return 0;
}
FAKE CUresult cuDeviceTotalMem_v2(size_t* b, CUdevice) { return *b = size_t(8) << 30, 0; }
FAKE CUresult cuMemGetInfo_v2(size_t* f, size_t* t) {
    *f = size_t(8) << 30;
    *t = size_t(8) << 30;
    return 0;
}
FAKE CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
    return *c = handle<CUcontext>(0x1000 + uintptr_t(d)), 0;
}
FAKE CUresult cuCtxGetCurrent(CUcontext* c) { return *c = nullptr, 0; }
FAKE CUresult cuStreamCreate(CUstream* s, unsigned) {
    static uintptr_t next = 0x2000;
    return *s = handle<CUstream>(next += 16), 0;
}
FAKE CUresult cuEventCreate(CUevent* e, unsigned) {
    static uintptr_t next = 0x3000;
    return *e = handle<CUevent>(next += 16), 0;
}
FAKE CUresult cuEventElapsedTime(float* ms, CUevent, CUevent) { return *ms = 0.001f, 0; }
FAKE CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) {
    void* m = host_alloc(n);
    std::memset(m, 0, n);  // kernels never run: counts read back are 0, not garbage
    return *p = CUdeviceptr(uintptr_t(m)), 0;
}
FAKE CUresult cuMemFree_v2(CUdeviceptr p) { return std::free(reinterpret_cast<void*>(p)), 0; }
FAKE CUresult cuMemAllocAsync(CUdeviceptr* p, size_t n, CUstream) { return cuMemAlloc_v2(p, n); }
FAKE CUresult cuMemAllocFromPoolAsync(CUdeviceptr* p, size_t n, CUmemoryPool, CUstream) {
    pool_reserved += n;  // a pool that never reuses: every allocation grows it
    return cuMemAlloc_v2(p, n);
}
FAKE CUresult cuMemFreeAsync(CUdeviceptr p, CUstream) { return cuMemFree_v2(p); }
FAKE CUresult cuMemPoolCreate(CUmemoryPool* p, const CUmemPoolProps*) {
    static uintptr_t next = 0x4000;
    return *p = handle<CUmemoryPool>(next += 16), 0;
}
FAKE CUresult cuMemPoolGetAttribute(CUmemoryPool, int a, void* v) {
    const uint64_t r = a == CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT ? pool_reserved.load() / 2 : 0;
    return std::memcpy(v, &r, 8), 0;  // two pools share the count
}
FAKE CUresult cuMemHostAlloc(void** p, size_t n, unsigned) {
    *p = host_alloc(n);
    std::lock_guard lk(pinned_mu);
    pinned.insert(uintptr_t(*p));
    return 0;
}
FAKE CUresult cuMemFreeHost(void* p) { return std::free(p), 0; }
FAKE CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void* s, size_t n, CUstream st) {
    auto op = [=] { std::memcpy(reinterpret_cast<void*>(d), s, n); };
    if (!captured(st, op)) op();
    return 0;
}
FAKE CUresult cuMemcpyDtoHAsync_v2(void* d, CUdeviceptr s, size_t n, CUstream st) {
    if (faulted.load()) return 700;
    if (const CUresult r = no_sync_in_capture(st)) return r;  // a host read inside a capture
    return std::memcpy(d, reinterpret_cast<const void*>(s), n), 0;
}
FAKE CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
    auto op = [=] {
        std::memmove(reinterpret_cast<void*>(d), reinterpret_cast<const void*>(s), n);
    };
    if (!captured(st, op)) op();
    return 0;
}
FAKE CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream st) {
    auto op = [=] { std::memset(reinterpret_cast<void*>(d), v, n); };
    if (!captured(st, op)) op();
    return 0;
}
FAKE CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream st) {
    auto op = [=] {
        auto* p = reinterpret_cast<unsigned short*>(d);
        for (size_t i = 0; i < n; ++i)
            p[i] = v;
    };
    if (!captured(st, op)) op();
    return 0;
}
FAKE CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream st) {
    auto op = [=] {
        auto* p = reinterpret_cast<unsigned*>(d);
        for (size_t i = 0; i < n; ++i)
            p[i] = v;
    };
    if (!captured(st, op)) op();
    return 0;
}
FAKE CUresult cuModuleLoadData(CUmodule* m, const void*) {
    static uintptr_t next = 0x5000;
    return *m = handle<CUmodule>(next += 16), 0;
}
FAKE CUresult cuModuleGetFunction(CUfunction* f, CUmodule m, const char*) {
    static uintptr_t next = 0;
    return *f = handle<CUfunction>(uintptr_t(m) * 4096 + (next += 16)), 0;
}
FAKE CUresult cuFuncGetAttribute(int* v, int a, CUfunction) {
    return *v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0, 0;
}
FAKE CUresult cuStreamIsCapturing(CUstream s, int* status) {
    std::lock_guard lk(cap_mu);
    return *status = capturing.count(s) ? 1 : CU_STREAM_CAPTURE_STATUS_NONE, 0;  // 1: ACTIVE
}
FAKE CUresult cuStreamBeginCapture_v2(CUstream s, int) {
    std::lock_guard lk(cap_mu);
    if (capturing.count(s)) return 900;
    capturing[s] = new FakeGraph;
    return 0;
}
FAKE CUresult cuStreamEndCapture(CUstream s, CUgraph* graph) {
    std::lock_guard lk(cap_mu);
    auto it = capturing.find(s);
    if (it == capturing.end()) return 1;  // CUDA_ERROR_INVALID_VALUE: not capturing
    FakeGraph* g = it->second;
    capturing.erase(it);
    if (g->invalid) {
        delete g;
        *graph = nullptr;
        return 901;
    }
    *graph = reinterpret_cast<CUgraph>(g);
    return 0;
}
FAKE CUresult cuGraphInstantiateWithFlags(CUgraphExec* exec, CUgraph g, unsigned long long) {
    return *exec = reinterpret_cast<CUgraphExec>(g), 0;  // the exec is the graph itself
}
FAKE CUresult cuGraphLaunch(CUgraphExec exec, CUstream) {
    if (faulted.load()) return 700;
    for (auto& op : reinterpret_cast<FakeGraph*>(exec)->ops)
        op();
    return 0;
}
FAKE CUresult cuGraphGetNodes(CUgraph g, CUgraphNode* nodes, size_t* count) {
    const size_t n = reinterpret_cast<FakeGraph*>(g)->nodes;
    if (nodes)
        for (size_t i = 0; i < *count && i < n; ++i)
            nodes[i] = reinterpret_cast<CUgraphNode>(i + 1);
    return *count = n, 0;
}
FAKE CUresult cuGraphExecDestroy(CUgraphExec) { return 0; }
FAKE CUresult cuGraphDestroy(CUgraph g) { return delete reinterpret_cast<FakeGraph*>(g), 0; }

// NVRTC too (the same library answers as libnvrtc.so.13): every compile succeeds and yields a
// 16-byte stand-in cubin, so no compiler runs (profiles then show ember's own work only).
FAKE nvrtcResult nvrtcVersion(int* major, int* minor) {
    *major = 13;
    *minor = 0;
    return 0;
}
FAKE nvrtcResult nvrtcCreateProgram(nvrtcProgram* p, const char*, const char*, int,
                                    const char* const*, const char* const*) {
    return *p = handle<nvrtcProgram>(0x6000), 0;
}
FAKE nvrtcResult nvrtcCompileProgram(nvrtcProgram, int, const char* const*) { return 0; }
FAKE nvrtcResult nvrtcGetCUBINSize(nvrtcProgram, size_t* n) { return *n = 16, 0; }
FAKE nvrtcResult nvrtcGetCUBIN(nvrtcProgram, char* c) {
    return std::memcpy(c, "fake cubin 0123", 16), 0;
}
FAKE nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram, size_t* n) { return *n = 1, 0; }
FAKE nvrtcResult nvrtcGetProgramLog(nvrtcProgram, char* log) { return *log = 0, 0; }
FAKE nvrtcResult nvrtcDestroyProgram(nvrtcProgram*) { return 0; }
FAKE const char* nvrtcGetErrorString(nvrtcResult) { return "fake NVRTC error"; }
