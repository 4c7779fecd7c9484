// The CUDA runtime side of ember's public API: devices, streams, events, memory statistics and the
// kernel cache. No CUDA header is needed: streams and events are opaque handles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ember::cuda {

// True when the CUDA backend can use at least one device in this process.
bool is_available();
int device_count();
// Why CUDA cannot be used, in one line ("" when it can).
std::string unavailable_reason();

// Where the CUDA libraries (NVRTC, cuBLAS, cuFFT, cuSOLVER) and CCCL's headers are looked for
// first: `finder(kind, name)` returns a path ("lib" + a library name as NVIDIA's cuda-pathfinder
// names it, or "include" + "cccl") or "" to fall back to sonames and /usr/local/cuda. ember's
// Python module installs cuda-pathfinder's search; asked once per name, before the first load.
using PathFinder = std::string (*)(const char* kind, const char* name);
void set_path_finder(PathFinder finder);
// (library, the path or soname it was loaded from) of each CUDA library loaded so far, and the
// CCCL include directory NVRTC compiles with ("" when none).
std::vector<std::pair<std::string, std::string>> library_origins();
std::string cccl_include_dir();

// The calling thread's current device (default 0) and its replacement. set_device checks the
// index (ValueError naming it).
int current_device();
void set_device(int device);

struct DeviceProperties {
    std::string name;
    int major = 0, minor = 0;  // compute capability
    size_t total_memory = 0;   // bytes
    int multi_processor_count = 0;
    int l2_cache_size = 0;  // bytes
    int max_threads_per_multi_processor = 0;
    int max_shared_memory_per_block = 0;  // bytes
    int clock_rate_khz = 0;
    int memory_clock_rate_khz = 0;
    int memory_bus_width = 0;  // bits
    int pci_bus_id = 0;
};
DeviceProperties get_device_properties(int device);

// Waits for all work on `device` (-1: the current device).
void synchronize(int device = -1);

// A non-blocking stream of one device. The default stream of each device is ember's own
// non-blocking stream, created with the device's context.
class Stream {
public:
    // Creates a new stream on `device` (-1: the current device).
    static Stream create(int device = -1);
    // The calling thread's current stream for `device` (-1: the current device).
    static Stream current(int device = -1);
    // The stream ember creates per device.
    static Stream default_stream(int device = -1);

    int device() const { return device_; }
    void* handle() const { return handle_; }  // the CUstream
    void synchronize() const;
    bool query() const;  // true when all work queued so far is done
    void wait_event(const class Event& e) const;
    friend bool operator==(const Stream& a, const Stream& b) { return a.handle_ == b.handle_; }

private:
    Stream(int device, void* handle, std::shared_ptr<void> owner)
        : device_(device), handle_(handle), owner_(std::move(owner)) {}
    int device_ = 0;
    void* handle_ = nullptr;
    std::shared_ptr<void> owner_;  // destroys a created stream with its last copy
    friend void set_current_stream(const Stream&);
};
// Makes `s` the calling thread's current stream for its device (ops enqueue there).
void set_current_stream(const Stream& s);

class Event {
public:
    explicit Event(bool enable_timing = true, int device = -1);
    void record(const Stream& s);
    void record();  // on the current stream
    void synchronize() const;
    bool query() const;
    // Milliseconds between this event and `end` (both recorded and complete).
    float elapsed_time(const Event& end) const;
    int device() const;
    void* handle() const;

private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

// A CUDA graph. Between capture_begin and capture_end the ops the calling thread issues on the
// device are recorded on a capture stream, not run; replay() then runs all of them with one
// launch on the current stream, reading and writing the same arrays each time. Memory allocated
// during the capture comes from the graph's own pool, so the addresses the graph uses stay valid
// for its life; memory the thread frees during the capture is kept until the graph goes. A host
// synchronization during the capture (copying to the host, synchronize()) raises CudaError.
class Graph {
public:
    Graph();
    ~Graph();
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;
    // Starts capturing on `stream` (nullptr: a new stream of `device`, -1: the current device),
    // which becomes the thread's current stream until capture_end. Replaces an earlier capture.
    void capture_begin(int device = -1, const Stream* stream = nullptr);
    // Ends the capture and instantiates the graph.
    void capture_end();
    // Ends a capture that failed, discarding it (never throws).
    void capture_abort() noexcept;
    // Runs the captured work on the current stream of the graph's device.
    void replay();
    // Waits for the replays, then frees the graph and its memory pool.
    void reset() noexcept;
    bool capturing() const;
    bool captured() const;  // capture_end succeeded and replay() may be called
    size_t num_nodes() const;
    int device() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Memory pool statistics of one device, in bytes.
struct MemoryStats {
    size_t allocated = 0;       // live bytes in arrays
    size_t peak_allocated = 0;  // since start or reset_peak_memory_stats
    size_t reserved = 0;        // held by the pool (live + cached)
    size_t peak_reserved = 0;
    size_t limit = 0;  // set_memory_limit (0: none)
    uint64_t num_allocs = 0, num_frees = 0;
    uint64_t num_ooms = 0;     // allocations that failed even after trimming the pool
    uint64_t num_retries = 0;  // allocations that succeeded only after trimming
    size_t device_free = 0;    // cuMemGetInfo
    size_t device_total = 0;
};
MemoryStats memory_stats(int device = -1);
// Releases the pool's cached memory back to the driver (after the device's work finishes).
void empty_cache(int device = -1);
// Caps the live bytes ember allocates on `device` (0 removes the cap).
void set_memory_limit(size_t bytes, int device = -1);
void reset_peak_memory_stats(int device = -1);

// Kernel cache counters for this process.
struct KernelCacheStats {
    uint64_t memory_hits = 0;    // launches that found their kernel loaded
    uint64_t disk_hits = 0;      // kernels loaded from the on-disk cubin cache
    uint64_t compiles = 0;       // kernels compiled by NVRTC
    double compile_ms = 0;       // total time in NVRTC
    uint64_t disk_rejects = 0;   // corrupt or truncated disk entries that were recompiled
    uint64_t prefetch_hits = 0;  // kernels compiled ahead on a background thread, then loaded
    uint64_t shipped_hits = 0;   // kernels loaded from the package's shipped kernel packs
    uint64_t launches = 0;       // ember's own kernel launches
    uint64_t library_calls = 0;  // cuBLAS GEMM calls (each launches one or more kernels)
};
KernelCacheStats kernel_cache_stats();
// The on-disk cache directory ("" when the disk cache is off).
std::string kernel_cache_dir();
// Compiles the common kernels (every op-table map kernel on its natural dtypes, all casts,
// copies, fills, arange; each in its usual layouts) into the on-disk cache on all cores, so a new
// machine or installation pays no compile at first use. arch: e.g. 90 for sm_90 (no GPU needed),
// 0 for the current device's. `name_filter` keeps only kernels whose name contains it.
struct PrecompileStats {
    uint64_t kernels = 0, compiled = 0, cached = 0;
    double seconds = 0;
};
PrecompileStats precompile(int arch = 0, int threads = 0, const std::string& name_filter = "");
// The shipped kernels: writes the common kernels compiled for sm_<arch> as one pack file at
// `path` (the package build does this for each architecture it ships; no GPU needed; kernels
// already in the disk cache are taken from it), and sets the directory the packs are read from
// ("sm_<arch>.pack" files; "" for none). `name_filter` as for precompile.
PrecompileStats write_kernel_pack(const std::string& path, int arch, int threads = 0,
                                  const std::string& name_filter = "");
void set_kernel_pack_dir(const std::string& dir);
// The number of kernels in the pack at `path` and its architecture (0, 0 when unreadable).
std::pair<uint64_t, int> kernel_pack_info(const std::string& path);

// ember.profiler's device side: CUDA events around every launch while it runs (not inside a
// graph capture). profiler_start records each device's start; profiler_stop waits for the
// launches and returns their timings, `start_ms` from that start.
struct KernelTiming {
    uint64_t op;      // the profiler's op (ember::debug::detail::prof_op) that launched it
    uint64_t thread;  // a small number per host thread
    int device;
    std::string name;
    double start_ms, ms;
};
void profiler_start();
std::vector<KernelTiming> profiler_stop();
// A timed range on `device`'s current stream while the profiler runs (0 otherwise: then the
// end does nothing): library work enqueued between begin and end (cuDNN called from Python)
// becomes one row named `label`.
uintptr_t profile_range_begin(int device);
void profile_range_end(int device, uintptr_t handle, const std::string& label);

// The live device allocations of every initialized device, with the caller's location token
// (ember::debug::describe_location) while memory history was recorded, else 0.
struct LiveAllocation {
    int device;
    uintptr_t address;
    size_t bytes;
    uintptr_t stream;
    uint64_t where;
};
std::vector<LiveAllocation> live_allocations();

// NVTX ranges and marks for Nsight Systems (libnvtx3interop or libnvToolsExt, loaded on first
// use; no-ops when neither loads).
bool nvtx_available();
void nvtx_range_push(const std::string& name);
void nvtx_range_pop();
void nvtx_mark(const std::string& name);

// Forgets the in-process kernels (modules stay loaded until exit); for tests and benchmarks of
// the compile path.
void clear_kernel_memory_cache();

}  // namespace ember::cuda

namespace ember::cuda::detail {
// Launches a kernel that traps on `device`: the context becomes unusable, so tests run it in a
// child process to check how kernel faults are reported.
void launch_faulting_kernel(int device = -1);
// Host seconds per call of `calls` bare cuLaunchKernel calls of a 1-element add kernel on the
// current stream of `device` (the floor of any op's host overhead), for the benchmark.
double bare_launch_seconds(int calls, int device = -1);
// Host time per call of `ember::add(x, x)` on a 1-element float32 array, in a C++ loop: the op's
// cost without Python, beside bare_launch_seconds in the same process (the benchmark).
double add_loop_seconds(int calls, int device = -1);
// Waits until the layout variants being compiled ahead on background threads are done.
void wait_background_compiles();
}  // namespace ember::cuda::detail
