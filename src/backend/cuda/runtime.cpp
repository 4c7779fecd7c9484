// CUDA runtime state: devices and their primary contexts, current streams, the memory pool, the
// kernel cache and launches.
#include "backend/cuda/runtime.hpp"
#include "backend/cuda/interop.hpp"
#include "backend/cuda/observe.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <thread>

#include "ember/error.hpp"

namespace ember::gpu {

const DriverApi& api() {
    const DriverApi* a = driver();
    if (!a) throw ValueError("ember.cuda: CUDA is not available: " + driver_unavailable_reason());
    return *a;
}

bool launch_blocking() {
    static const bool on = [] {
        const char* e = std::getenv("EMBER_LAUNCH_BLOCKING");
        return e && *e && std::strcmp(e, "0") != 0;
    }();
    return on;
}

int device_count() {
    static const int n = [] {
        const DriverApi* a = driver();
        int c = 0;
        if (!a || a->cuDeviceGetCount(&c) != CUDA_SUCCESS) return 0;
        return c < max_devices ? c : max_devices;
    }();
    return n;
}

std::atomic<DeviceState*> device_states[max_devices];

namespace {

std::mutex init_mu;

// The calling thread's CUDA state in one thread_local: in a shared library each thread_local
// access is a __tls_get_addr call, and one struct makes that one call per function.
struct ThreadState {
    CUcontext bound_ctx = nullptr;
    int device = 0;
    CUstream streams[max_devices] = {};
    GraphPool* capture = nullptr;  // the graph this thread captures into
};
thread_local ThreadState tls;
// tls's address, got once per call of the function using it: GCC otherwise recomputes it (one more
// __tls_get_addr call) after every call the function makes; the empty asm hides where it came from.
ThreadState& thread_state() {
    ThreadState* p = &tls;
    asm("" : "+r"(p));
    return *p;
}
void bind(ThreadState& t, const DeviceState& d) {
    if (t.bound_ctx == d.ctx) return;
    check(api().cuCtxSetCurrent(d.ctx), "cuCtxSetCurrent");
    t.bound_ctx = d.ctx;
}
CUstream current_stream(const ThreadState& t, const DeviceState& d) {
    const CUstream s = t.streams[d.index];
    return s ? s : d.stream;
}

int attr(const DriverApi& a, CUdevice dev, int which) {
    int v = 0;
    check(a.cuDeviceGetAttribute(&v, which, dev), "cuDeviceGetAttribute");
    return v;
}

DeviceState* init_device(int i) {
    const DriverApi& a = api();
    auto* d = new DeviceState;  // lives for the process: arrays may outlive any owner
    d->index = i;
    check(a.cuDeviceGet(&d->dev, i), "cuDeviceGet");
    check(a.cuDevicePrimaryCtxRetain(&d->ctx, d->dev), "cuDevicePrimaryCtxRetain");
    check(a.cuCtxSetCurrent(d->ctx), "cuCtxSetCurrent");
    tls.bound_ctx = d->ctx;
    char name[256] = {};
    check(a.cuDeviceGetName(name, sizeof name - 1, d->dev), "cuDeviceGetName");
    cuda::DeviceProperties& p = d->props;
    p.name = name;
    p.major = attr(a, d->dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    p.minor = attr(a, d->dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    check(a.cuDeviceTotalMem(&p.total_memory, d->dev), "cuDeviceTotalMem");
    p.multi_processor_count = attr(a, d->dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    p.l2_cache_size = attr(a, d->dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    p.max_threads_per_multi_processor =
        attr(a, d->dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    p.max_shared_memory_per_block =
        attr(a, d->dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    p.clock_rate_khz = attr(a, d->dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    p.memory_clock_rate_khz = attr(a, d->dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    p.memory_bus_width = attr(a, d->dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    p.pci_bus_id = attr(a, d->dev, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
    d->arch = p.major * 10 + p.minor;
    d->max_blocks =
        unsigned(p.multi_processor_count) * unsigned(p.max_threads_per_multi_processor > 0
                                                         ? p.max_threads_per_multi_processor / 256
                                                         : 4);
    if (d->max_blocks == 0) d->max_blocks = 1;
    check(a.cuStreamCreate(&d->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    if (!attr(a, d->dev, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED))
        throw ValueError("ember.cuda: device " + std::to_string(i) + " (" + p.name +
                         ") does not support stream-ordered memory pools");
    CUmemPoolProps props;
    props.location_id = i;
    for (CUmemoryPool* pool : {&d->small_pool, &d->large_pool}) {
        check(a.cuMemPoolCreate(pool, &props), "cuMemPoolCreate");
        // Keep freed memory in the pool (returned by empty_cache, when fragmented, or under
        // memory pressure).
        uint64_t keep = std::numeric_limits<uint64_t>::max();
        check(a.cuMemPoolSetAttribute(*pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep),
              "cuMemPoolSetAttribute");
    }
    return d;
}

}  // namespace

DeviceState& device_slow(int i) {
    if (i < 0 || i >= device_count()) {
        if (device_count() == 0) api();  // names the reason
        throw ValueError("ember.cuda: device cuda:" + std::to_string(i) + " is out of range (" +
                         std::to_string(device_count()) + " CUDA device" +
                         (device_count() == 1 ? "" : "s") + ")");
    }
    std::lock_guard lk(init_mu);
    if (DeviceState* d = device_states[i].load(std::memory_order_acquire)) return *d;
    DeviceState* d = init_device(i);
    device_states[i].store(d, std::memory_order_release);
    return *d;
}

DeviceState* device_if_initialized(int i) {
    if (i < 0 || i >= max_devices) return nullptr;
    return device_states[i].load(std::memory_order_acquire);
}

void bind(const DeviceState& d) { bind(thread_state(), d); }

int current_device() { return tls.device; }
void set_current_device(int i) {
    device(i);
    tls.device = i;
}

CUstream current_stream(const DeviceState& d) { return current_stream(thread_state(), d); }
void set_current_stream(int dev, CUstream s) {
    device(dev);
    tls.streams[dev] = s;
}

void launch(DeviceState& d, CUfunction f, unsigned grid_x, unsigned grid_y, void** args,
            std::string_view who, bool dependent) {
    ThreadState& t = thread_state();
    bind(t, d);
    const DriverApi& a = *driver();
    const CUstream s = current_stream(t, d);
    const uint64_t seq = note_launch(d.index, f, who);
    CUevent timing = debug::profiling() && !t.capture ? profile_before(d, s) : nullptr;
    CUresult r;
    if (dependent && d.arch >= 90 && t.capture && t.capture->stream == s) {
        // Into a graph being captured, with programmatic dependent launch: the replay starts
        // launching this kernel while the one before it finishes (the kernel waits for it in
        // grid_dependency()): 0.70 us per small node on the H200 instead of 1.1.
        CUlaunchAttribute attr;
        attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr.value.programmatic_stream_serialization = 1;
        CUlaunchConfig c;
        c.grid_x = grid_x;
        c.grid_y = grid_y;
        c.block_x = 256;
        c.stream = s;
        c.attrs = &attr;
        c.num_attrs = 1;
        r = a.cuLaunchKernelEx(&c, f, args, nullptr);
    } else {
        r = a.cuLaunchKernel(f, grid_x, grid_y, 1, 256, 1, 1, 0, s, args, nullptr);
    }
    cache_counters().launches.fetch_add(1, std::memory_order_relaxed);
    if (timing) profile_after(d, s, f, timing);
    if (r != CUDA_SUCCESS) {
        forget_launch(seq);
        raise(r, "launching the kernel of ember." + std::string(who));
    }
    if (launch_blocking() && !t.capture) {
        r = a.cuStreamSynchronize(s);
        if (r != CUDA_SUCCESS) raise(r, "the kernel of ember." + std::string(who));
        note_synced(d.index);
    }
}

// ---- memory -------------------------------------------------------------------------------

size_t reserved_bytes(DeviceState& d) {
    size_t n = d.graph_bytes.load(std::memory_order_relaxed);
    for (CUmemoryPool pool : {d.small_pool, d.large_pool}) {
        uint64_t v = 0;
        if (driver()->cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v) ==
            CUDA_SUCCESS)
            n += size_t(v);
    }
    return n;
}

void trim_pools(DeviceState& d) {
    for (CUmemoryPool pool : {d.small_pool, d.large_pool})
        driver()->cuMemPoolTrimTo(pool, 0);
}

namespace {

std::string bytes_str(size_t n) {
    char buf[64];
    if (n >= (size_t(1) << 30))
        std::snprintf(buf, sizeof buf, "%.2f GiB", double(n) / double(1ull << 30));
    else if (n >= (size_t(1) << 20))
        std::snprintf(buf, sizeof buf, "%.2f MiB", double(n) / double(1ull << 20));
    else
        std::snprintf(buf, sizeof buf, "%zu bytes", n);
    return buf;
}

[[noreturn]] void out_of_memory(DeviceState& d, size_t bytes, const char* why) {
    size_t free_b = 0, total_b = 0;
    driver()->cuMemGetInfo(&free_b, &total_b);
    size_t allocated;
    {
        std::lock_guard lk(d.mem_mu);
        ++d.num_ooms;
        allocated = d.allocated;
    }
    const size_t reserved = reserved_bytes(d);
    const size_t cached = reserved > allocated ? reserved - allocated : 0;
    throw OutOfMemoryError("ember.cuda: out of memory allocating " + bytes_str(bytes) +
                           " on cuda:" + std::to_string(d.index) + " (" + why + "): " +
                           bytes_str(allocated) + " allocated by ember, " + bytes_str(cached) +
                           " cached, " + bytes_str(free_b) + " free of " + bytes_str(total_b));
}

}  // namespace

namespace {

int size_class(size_t bytes) {
    int c = 0;
    while ((size_t(512) << c) < bytes)
        ++c;
    return c;
}

StreamBlocks& blocks_of(DeviceState& d, CUstream s) {
    for (StreamBlocks& b : d.small)
        if (b.stream == s) return b;
    d.small.push_back(StreamBlocks{s, {}});
    return d.small.back();
}

void record(DeviceState& d, uintptr_t p, size_t bytes, CUstream s, size_t class_bytes,
            GraphPool* graph = nullptr) {
    d.live.insert(p, Block{bytes, s, class_bytes, graph,
                           debug::memory_history() ? debug::location() : uint64_t(0)});
    d.allocated += bytes;
    if (d.allocated > d.peak_allocated) d.peak_allocated = d.allocated;
    ++d.num_allocs;
}

}  // namespace

void release_small_blocks(DeviceState& d, CUstream stream) {
    for (StreamBlocks& b : d.small) {
        if (stream && b.stream != stream) continue;
        for (int c = 0; c < small_classes; ++c) {
            for (uintptr_t p : b.free[c]) {
                driver()->cuMemFreeAsync(CUdeviceptr(p), b.stream);
                d.small_cached -= size_t(512) << c;
            }
            b.free[c].clear();
        }
    }
}

// The pools keep freed memory for reuse, but blocks of mixed sizes fragment them. After the
// driver gave the pools more memory, when they hold more than 1.2x the peak of live bytes (since
// the last reset_peak_memory_stats) plus 64 MiB, their unused memory goes back to the driver:
// a loop that reuses its memory (reserve close to its peak) never trims. Frees that the stream
// has finished are retired first (cuStreamQuery), so they can be returned too.
void trim_if_fragmented(DeviceState& d, CUstream s) {
    const size_t reserved = reserved_bytes(d);
    size_t peak;
    {
        std::lock_guard lk(d.mem_mu);
        d.peak_reserved = std::max(d.peak_reserved, reserved);
        peak = d.peak_allocated;
    }
    if (reserved <= peak + peak / 5 + (size_t(64) << 20)) return;
    driver()->cuStreamQuery(s);
    trim_pools(d);
}

namespace {

// An allocation during a graph capture: an idle chunk of the graph's own (the smallest that fits,
// if it wastes no more than half), else a new cuMemAlloc (allowed in relaxed capture mode; a
// stream-ordered allocation would become a node of the graph).
void* graph_allocate(DeviceState& d, GraphPool& g, size_t bytes) {
    const size_t chunk = (bytes + 511) & ~size_t(511);
    {
        std::unique_lock lk(d.mem_mu);
        if (d.limit && d.allocated + bytes > d.limit) {
            lk.unlock();
            out_of_memory(d, bytes, "over the limit set with ember.cuda.set_memory_limit");
        }
        auto it = g.idle.lower_bound(chunk);
        if (it != g.idle.end() && it->first <= 2 * chunk) {
            const size_t have = it->first;
            const uintptr_t p = it->second;
            g.idle.erase(it);
            ++g.live;
            record(d, p, bytes, g.stream, have, &g);
            return reinterpret_cast<void*>(p);
        }
    }
    const DriverApi& a = *driver();
    CUdeviceptr p = 0;
    CUresult r = a.cuMemAlloc(&p, chunk);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
        trim_pools(d);  // the pools' unused memory (no stream work involved)
        r = a.cuMemAlloc(&p, chunk);
    }
    if (r == CUDA_ERROR_OUT_OF_MEMORY) out_of_memory(d, bytes, "for a CUDA graph being captured");
    check(r, "cuMemAlloc (CUDA graph memory)");
    d.graph_bytes.fetch_add(chunk, std::memory_order_relaxed);
    std::lock_guard lk(d.mem_mu);
    ++g.live;
    record(d, uintptr_t(p), bytes, g.stream, chunk, &g);
    return reinterpret_cast<void*>(uintptr_t(p));
}

void free_chunk(DeviceState& d, uintptr_t p, size_t chunk) noexcept {
    d.graph_bytes.fetch_sub(chunk, std::memory_order_relaxed);
    if (bind_noexcept(d)) driver()->cuMemFree(CUdeviceptr(p));
}

}  // namespace

GraphPool* capturing_pool() { return tls.capture; }
void set_capturing_pool(GraphPool* g) { tls.capture = g; }

void forbid_during_capture(const DeviceState& d, CUstream s, std::string_view what) {
    const GraphPool* g = tls.capture;
    if (!g || g->device != d.index || (s && s != g->stream)) return;
    throw CudaError("ember.cuda.graph: " + std::string(what) +
                    " cannot be captured into a CUDA graph: it synchronizes with the host; do "
                    "it before or after the `with ember.cuda.graph()` block");
}

void release_graph_pool(DeviceState& d, GraphPool* g) {
    std::vector<void*> kept;
    std::vector<std::pair<uintptr_t, size_t>> idle;
    bool gone = false;
    {
        std::lock_guard lk(d.mem_mu);
        g->graph_alive = false;
        kept.swap(g->kept);
        for (const auto& [size, p] : g->idle)
            idle.emplace_back(p, size);
        g->idle.clear();
        gone = g->live == 0;
    }
    for (const auto& [p, size] : idle)
        free_chunk(d, p, size);
    for (void* p : kept)
        deallocate(d, p);
    if (gone) delete g;
}

void* allocate(DeviceState& d, size_t bytes) {
    const DriverApi& a = *driver();
    if (bytes == 0) bytes = 1;
    ThreadState& t = thread_state();
    bind(t, d);
    const CUstream s = current_stream(t, d);
    if (GraphPool* g = t.capture; g && g->stream == s) return graph_allocate(d, *g, bytes);
    const bool small = bytes <= small_block_max;
    const int cls = small ? size_class(bytes) : 0;
    const size_t request = small ? size_t(512) << cls : bytes;
    {
        std::unique_lock lk(d.mem_mu);
        if (d.limit && d.allocated + bytes > d.limit) {
            lk.unlock();
            out_of_memory(d, bytes, "over the limit set with ember.cuda.set_memory_limit");
        }
        if (small) {
            std::vector<uintptr_t>& free = blocks_of(d, s).free[cls];
            if (!free.empty()) {
                const uintptr_t p = free.back();
                free.pop_back();
                d.small_cached -= request;
                record(d, p, bytes, s, request);
                return reinterpret_cast<void*>(p);
            }
        }
    }
    const CUmemoryPool pool = small ? d.small_pool : d.large_pool;
    const size_t reserved_before = debug::enabled() ? reserved_bytes(d) : 0;
    CUdeviceptr p = 0;
    CUresult r = a.cuMemAllocFromPoolAsync(&p, request, pool, s);
    bool retried = false;
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
        // Memory freed on other streams becomes reusable once their work is done; give the
        // cached rest back to the driver and try once more.
        {
            std::lock_guard lk(d.mem_mu);
            release_small_blocks(d);
        }
        a.cuCtxSynchronize();
        trim_pools(d);
        r = a.cuMemAllocFromPoolAsync(&p, request, pool, s);
        retried = true;
        if (debug::enabled()) note_oom_retry(d, bytes);
    }
    if (r == CUDA_ERROR_OUT_OF_MEMORY) out_of_memory(d, bytes, "after emptying the cache");
    check(r, "cuMemAllocFromPoolAsync");
    {
        std::lock_guard lk(d.mem_mu);
        record(d, uintptr_t(p), bytes, s, small ? request : 0);
        if (retried) ++d.num_retries;
    }
    trim_if_fragmented(d, s);
    if (debug::enabled()) note_alloc(d, request, reserved_before);
    return reinterpret_cast<void*>(uintptr_t(p));
}

bool bind_noexcept(const DeviceState& d) noexcept {
    if (tls.bound_ctx == d.ctx) return true;
    if (driver()->cuCtxSetCurrent(d.ctx) != CUDA_SUCCESS) return false;
    tls.bound_ctx = d.ctx;
    return true;
}

void deallocate(DeviceState& d, void* p) noexcept {
    CUstream s = nullptr;
    {
        std::unique_lock lk(d.mem_mu);
        Block b;
        if (!d.live.take(uintptr_t(p), b)) return;
        GraphPool* capture = tls.capture;
        if (!b.graph && capture && capture->device == d.index) {
            // A replay of the graph being captured may read it: it stays live until the graph
            // is destroyed (release_graph_pool frees it then).
            d.live.insert(uintptr_t(p), b);
            capture->kept.push_back(p);
            return;
        }
        d.allocated -= b.bytes;
        ++d.num_frees;
        if (GraphPool* g = b.graph) {
            --g->live;
            if (g->graph_alive) {
                g->idle.emplace(b.class_bytes, uintptr_t(p));
                return;
            }
            const bool gone = g->live == 0;
            lk.unlock();
            free_chunk(d, uintptr_t(p), b.class_bytes);
            if (gone) delete g;
            return;
        }
        s = b.stream;
        wait_recorded_streams(d, p, s);  // record_stream: reuse waits for those streams
        if (b.class_bytes && d.small_cached + b.class_bytes <= small_cache_bytes) {
            blocks_of(d, s).free[size_class(b.class_bytes)].push_back(uintptr_t(p));
            d.small_cached += b.class_bytes;
            return;
        }
    }
    // Errors here (a driver already shut down at exit) cannot be reported and are harmless.
    if (bind_noexcept(d)) driver()->cuMemFreeAsync(CUdeviceptr(uintptr_t(p)), s);
}

// ---- kernels ------------------------------------------------------------------------------

CacheCounters& cache_counters() {
    static CacheCounters c;
    return c;
}

const DiskCache& disk_cache() {
    static const DiskCache* c =
        new DiskCache(default_kernel_cache_dir());  // leaked: see Prefetcher
    return *c;
}

namespace {

// Each thread keeps the kernels it found last in a small direct-mapped table, so the common
// lookup takes no lock; forgetting the kernels (forget_kernels) bumps the generation.
std::atomic<uint64_t> kernel_generation{1};
struct ThreadKernels {
    static constexpr size_t slots = 64;
    uint64_t generation = 0;
    const DeviceState* device[slots] = {};
    KernelKey key[slots];
    CUfunction fn[slots] = {};
};
thread_local ThreadKernels thread_kernels;

}  // namespace

void forget_kernels(DeviceState& d) {
    std::lock_guard lk(d.kernel_mu);
    d.kernels.clear();
    kernel_generation.fetch_add(1, std::memory_order_acq_rel);
}

CUfunction find_kernel(DeviceState& d, const KernelKey& key) {
    ThreadKernels* tp = &thread_kernels;
    asm("" : "+r"(tp));  // one __tls_get_addr call (see thread_state)
    ThreadKernels& t = *tp;
    const uint64_t gen = kernel_generation.load(std::memory_order_acquire);
    if (t.generation != gen) {
        t = ThreadKernels{};
        t.generation = gen;
    }
    const size_t slot = KernelKeyHash{}(key) % ThreadKernels::slots;
    if (t.device[slot] == &d && t.key[slot] == key) {
        cache_counters().memory_hits.fetch_add(1, std::memory_order_relaxed);
        return t.fn[slot];
    }
    CUfunction f;
    {
        std::lock_guard lk(d.kernel_mu);
        auto it = d.kernels.find(key);
        if (it == d.kernels.end()) return nullptr;
        f = it->second;
    }
    cache_counters().memory_hits.fetch_add(1, std::memory_order_relaxed);
    t.device[slot] = &d;
    t.key[slot] = key;
    t.fn[slot] = f;
    return f;
}

bool has_kernel(DeviceState& d, const KernelKey& key) {
    std::lock_guard lk(d.kernel_mu);
    return d.kernels.count(key) != 0;
}

namespace {

// Kernels compiled ahead, on background threads, to cubins that wait in memory (and on disk)
// until they are asked for: the layout variants an op is likely to meet next. A caller that asks
// for one still queued compiles it itself; one being compiled is waited for. Leaked on purpose:
// at exit the workers finish the compile in flight (see stop) and nothing is destroyed under them.
class Prefetcher {
public:
    static Prefetcher& get() {
        static Prefetcher* p = new Prefetcher();
        return *p;
    }

    void submit(const Hash128& h, Program program, int arch) {
        std::lock_guard lk(mu_);
        if (stopping_ || entries_.count(h)) return;
        entries_[h].state = State::queued;
        jobs_.push_back({h, std::move(program), arch});
        if (workers_<max_workers&& int(jobs_.size())> idle_) {
            ++workers_;
            std::thread([this] { work(); }).detach();
        }
        cv_.notify_one();
    }

    // The cubin for h when a worker compiled it (waiting for one in flight); nullopt when it was
    // never submitted, is still queued (the caller compiles it: the job is dropped) or failed.
    std::optional<std::string> take(const Hash128& h) {
        std::unique_lock lk(mu_);
        auto it = entries_.find(h);
        if (it == entries_.end()) return std::nullopt;
        if (it->second.state == State::queued) {
            it->second.state = State::claimed;
            return std::nullopt;
        }
        done_cv_.wait(lk, [&] {
            it = entries_.find(h);
            return it == entries_.end() || it->second.state != State::compiling;
        });
        if (it == entries_.end()) return std::nullopt;
        std::optional<std::string> cubin;
        if (it->second.state == State::done) cubin = std::move(it->second.cubin);
        entries_.erase(it);
        return cubin;
    }

    // Returns when every submitted job has finished (tests and benchmarks that count compiles).
    void wait_idle() {
        std::unique_lock lk(mu_);
        done_cv_.wait(lk, [&] { return jobs_.empty() && busy_ == 0; });
    }

private:
    enum class State { queued, claimed, compiling, done, failed };
    struct Entry {
        State state = State::queued;
        std::string cubin;
    };
    struct Job {
        Hash128 h;
        Program program;
        int arch;
    };
    struct HashOf {
        size_t operator()(const Hash128& h) const {
            return size_t(h.lo ^ (h.hi * 0x9E3779B97F4A7C15ull));
        }
    };
    static constexpr int max_workers = 2;

    Prefetcher() {
        disk_cache();  // constructed first, so that it outlives the exit handler below
        std::atexit([] { get().stop(); });
    }

    void stop() {
        std::unique_lock lk(mu_);
        stopping_ = true;
        jobs_.clear();
        cv_.notify_all();
        done_cv_.wait(lk, [&] { return busy_ == 0; });
    }

    void work() {
        std::unique_lock lk(mu_);
        for (;;) {
            ++idle_;
            cv_.wait(lk, [&] { return stopping_ || !jobs_.empty(); });
            --idle_;
            if (stopping_) return;
            Job job = std::move(jobs_.front());
            jobs_.pop_front();
            auto it = entries_.find(job.h);
            if (it == entries_.end() || it->second.state != State::queued) {
                if (it != entries_.end() && it->second.state == State::claimed) entries_.erase(it);
                done_cv_.notify_all();
                continue;
            }
            it->second.state = State::compiling;
            ++busy_;
            lk.unlock();
            std::string cubin;
            bool ok = true;
            try {
                bool rejected = false;
                std::optional<std::string> hit = disk_cache().load(job.h, &rejected);
                CacheCounters& c = cache_counters();
                if (rejected) c.disk_rejects.fetch_add(1);
                if (hit) {
                    cubin = std::move(*hit);
                    c.disk_hits.fetch_add(1);
                } else {
                    const auto t0 = std::chrono::steady_clock::now();
                    cubin = compile_cubin(job.program, job.arch);
                    c.compile_us.fetch_add(
                        uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::steady_clock::now() - t0)
                                     .count()));
                    c.compiles.fetch_add(1);
                    disk_cache().store(job.h, cubin);
                }
            } catch (...) {  // compiled again, and reported, when it is asked for
                ok = false;
            }
            lk.lock();
            --busy_;
            Entry& e = entries_[job.h];
            e.state = ok ? State::done : State::failed;
            e.cubin = std::move(cubin);
            done_cv_.notify_all();
        }
    }

    std::mutex mu_;
    std::condition_variable cv_, done_cv_;
    std::deque<Job> jobs_;
    std::unordered_map<Hash128, Entry, HashOf> entries_;
    int workers_ = 0, idle_ = 0, busy_ = 0;
    bool stopping_ = false;
};

Hash128 source_hash(const DeviceState& d, const Program& p) {
    const NvrtcApi* nv = nvrtc();
    if (!nv) throw Error("ember.cuda: cannot compile kernels: " + nvrtc_unavailable_reason());
    return kernel_cache_key(p, compile_options(d.arch), nv->major, nv->minor, d.arch);
}

}  // namespace

void wait_background_compiles() { Prefetcher::get().wait_idle(); }

CUfunction load_kernels(DeviceState& d, std::vector<std::pair<KernelKey, KernelSource>>& items) {
    for (size_t i = 1; i < items.size(); ++i) {
        if (has_kernel(d, items[i].first)) continue;
        Program& p = items[i].second.program;
        if (is_shipped(d, p)) continue;  // loads from the pack when first used
        Prefetcher::get().submit(source_hash(d, p), std::move(p), d.arch);
    }
    return load_kernel(d, items[0].first, items[0].second);
}

CUfunction load_kernel(DeviceState& d, const KernelKey& key, const KernelSource& src) {
    static const bool dump = [] {
        const char* e = std::getenv("EMBER_DUMP_SOURCE");
        return e && *e && std::strcmp(e, "0") != 0;
    }();
    const auto dump_source = [&](const char* from) {
        std::fprintf(stderr, "--- ember: generated source of %s (%s) ---\n%s\n", src.name.c_str(),
                     from, src.program.source.c_str());
    };
    const auto t_load = std::chrono::steady_clock::now();
    const auto ms_since = [](auto t0) {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
            .count();
    };
    if (CUfunction f = load_shipped(d, key, src)) {  // no NVRTC needed
        if (dump) dump_source("shipped");
        name_kernel(f, src.name);
        note_kernel_load(debug::EventKind::shipped_load, d.index, src.name, ms_since(t_load));
        return f;
    }
    if (dump) dump_source("compiled or from the disk cache");
    const NvrtcApi* nv = nvrtc();
    if (!nv) throw Error("ember.cuda: cannot compile kernels: " + nvrtc_unavailable_reason());
    CacheCounters& c = cache_counters();
    const Hash128 h = source_hash(d, src.program);
    const DriverApi& a = *driver();
    bind(d);
    CUmodule mod = nullptr;
    // A background thread's cubin, else the disk cache's, else compiled here.
    std::optional<std::string> cubin = Prefetcher::get().take(h);
    bool loaded = cubin && a.cuModuleLoadData(&mod, cubin->data()) == CUDA_SUCCESS;
    const bool ahead = loaded;
    bool from_disk = false;
    if (loaded) {
        c.prefetch_hits.fetch_add(1);
    } else {
        bool rejected = false;
        cubin = disk_cache().load(h, &rejected);
        loaded = cubin && a.cuModuleLoadData(&mod, cubin->data()) == CUDA_SUCCESS;
        if (rejected || (cubin && !loaded)) c.disk_rejects.fetch_add(1);
        if (loaded) c.disk_hits.fetch_add(1);
        from_disk = loaded;
    }
    if (!loaded) {
        const auto t0 = std::chrono::steady_clock::now();
        cubin = compile_cubin(src.program, d.arch);
        c.compile_us.fetch_add(uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                                            std::chrono::steady_clock::now() - t0)
                                            .count()));
        c.compiles.fetch_add(1);
        check(a.cuModuleLoadData(&mod, cubin->data()), "cuModuleLoadData");
        disk_cache().store(h, *cubin);
    }
    CUfunction f = nullptr;
    check(a.cuModuleGetFunction(&f, mod, src.name.c_str()), "cuModuleGetFunction");
    name_kernel(f, src.name);
    note_kernel_load(from_disk ? debug::EventKind::disk_load : debug::EventKind::compile, d.index,
                     src.name + (ahead ? " (compiled ahead on a background thread)" : ""),
                     ms_since(t_load));
    std::lock_guard lk(d.kernel_mu);
    d.modules.push_back(mod);
    return d.kernels.emplace(key, f).first->second;  // another thread may have won the race
}

}  // namespace ember::gpu
