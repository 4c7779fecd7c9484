// ember::cuda (include/ember/cuda.hpp): devices, streams, events, memory and kernel-cache
// statistics on top of the CUDA runtime state.
#include <chrono>
#include <cstdlib>

#include "backend/backend.hpp"
#include "backend/cuda/kernel_pack.hpp"
#include "backend/cuda/loader.hpp"
#include "backend/cuda/nvrtc.hpp"
#include "backend/cuda/observe.hpp"
#include "backend/cuda/precompile.hpp"
#include "backend/cuda/runtime.hpp"
#include "ember/cuda.hpp"
#include "ember/error.hpp"
#include "ember/launch.hpp"
#include "ember/ops.hpp"

namespace ember::cuda {

using namespace ember::gpu;

namespace {

// The state of `device` (-1: the current one), after checking that CUDA is usable.
DeviceState& state(int device) {
    if (!backend::cuda())
        throw ValueError("ember.cuda: CUDA is not available: " +
                         backend::cuda_unavailable_reason());
    return gpu::device(device < 0 ? gpu::current_device() : device);
}

}  // namespace

bool is_available() { return backend::cuda() != nullptr; }
int device_count() { return backend::cuda_device_count(); }
std::string unavailable_reason() {
    return backend::cuda() ? "" : backend::cuda_unavailable_reason();
}

void set_path_finder(PathFinder finder) { gpu::set_path_finder(finder); }
std::vector<std::pair<std::string, std::string>> library_origins() {
    return gpu::library_origins();
}
std::string cccl_include_dir() { return gpu::cccl_include_dir(); }

int current_device() {
    state(-1);
    return gpu::current_device();
}
void set_device(int device) {
    state(device);
    gpu::set_current_device(device);
}

DeviceProperties get_device_properties(int device) { return state(device).props; }

unsigned grid_size(int device, int64_t work, int block) {
    const DeviceProperties& p = state(device).props;
    // Resident blocks per multiprocessor; without the attribute, 1024 threads (as max_blocks).
    const int64_t threads =
        p.max_threads_per_multi_processor > 0 ? p.max_threads_per_multi_processor : 1024;
    const int64_t wave = int64_t(p.multi_processor_count) * (threads / block);
    const int64_t blocks = (work + block - 1) / block;
    const int64_t g = blocks < wave ? blocks : wave;
    return unsigned(g < 1 ? 1 : g);
}

void synchronize(int device) {
    DeviceState& d = state(device);
    bind(d);
    forbid_during_capture(d, nullptr, "ember.cuda.synchronize()");
    check(api().cuCtxSynchronize(), "cuCtxSynchronize");
    gpu::note_synced(d.index);
}

// ---- streams --------------------------------------------------------------------------------

Stream Stream::create(int device) {
    DeviceState& d = state(device);
    bind(d);
    CUstream s = nullptr;
    check(api().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    const int dev = d.index;
    std::shared_ptr<void> owner(static_cast<void*>(s), [dev](void* p) {
        // Work queued on the stream finishes first; memory allocated on it moves to the
        // default stream so that its later free has a live stream to be ordered on.
        DeviceState& ds = gpu::device(dev);
        if (!bind_noexcept(ds)) return;
        CUstream st = static_cast<CUstream>(p);
        driver()->cuStreamSynchronize(st);
        {
            std::lock_guard lk(ds.mem_mu);
            ds.live.for_each([&](uintptr_t, Block& b) {
                if (b.stream == st) b.stream = ds.stream;
            });
            release_small_blocks(ds, st);
            for (auto it = ds.small.begin(); it != ds.small.end(); ++it)
                if (it->stream == st) {
                    ds.small.erase(it);
                    break;
                }
        }
        driver()->cuStreamDestroy(st);
    });
    return Stream(dev, s, std::move(owner));
}

Stream Stream::current(int device) {
    DeviceState& d = state(device);
    return Stream(d.index, current_stream(d), nullptr);
}

Stream Stream::default_stream(int device) {
    DeviceState& d = state(device);
    return Stream(d.index, d.stream, nullptr);
}

void Stream::synchronize() const {
    forbid_during_capture(state(device_), static_cast<CUstream>(handle_), "Stream.synchronize()");
    bind(state(device_));
    check(api().cuStreamSynchronize(static_cast<CUstream>(handle_)), "cuStreamSynchronize");
}

bool Stream::query() const {
    bind(state(device_));
    const CUresult r = api().cuStreamQuery(static_cast<CUstream>(handle_));
    if (r == CUDA_ERROR_NOT_READY) return false;
    check(r, "cuStreamQuery");
    return true;
}

void Stream::wait_event(const Event& e) const {
    bind(state(device_));
    check(api().cuStreamWaitEvent(static_cast<CUstream>(handle_), static_cast<CUevent>(e.handle()),
                                  0),
          "cuStreamWaitEvent");
}

void set_current_stream(const Stream& s) {
    DeviceState& d = state(s.device_);
    gpu::set_current_stream(d.index,
                            s.handle_ == d.stream ? nullptr : static_cast<CUstream>(s.handle_));
}

// ---- events ---------------------------------------------------------------------------------

struct Event::Impl {
    int device = 0;
    CUevent ev = nullptr;
    bool timing = true;
    bool recorded = false;
    ~Impl() {
        if (ev && bind_noexcept(gpu::device(device))) driver()->cuEventDestroy(ev);
    }
};

Event::Event(bool enable_timing, int device) : impl_(std::make_shared<Impl>()) {
    DeviceState& d = state(device);
    bind(d);
    impl_->device = d.index;
    impl_->timing = enable_timing;
    check(
        api().cuEventCreate(&impl_->ev, enable_timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING),
        "cuEventCreate");
}

void Event::record(const Stream& s) {
    if (s.device() != impl_->device)
        throw ValueError(
            "ember.cuda.Event.record: the event is on cuda:" + std::to_string(impl_->device) +
            " but the stream is on cuda:" + std::to_string(s.device()));
    bind(state(impl_->device));
    check(api().cuEventRecord(impl_->ev, static_cast<CUstream>(s.handle())), "cuEventRecord");
    impl_->recorded = true;
}
void Event::record() { record(Stream::current(impl_->device)); }

void Event::synchronize() const {
    forbid_during_capture(state(impl_->device), nullptr, "Event.synchronize()");
    bind(state(impl_->device));
    check(api().cuEventSynchronize(impl_->ev), "cuEventSynchronize");
}

bool Event::query() const {
    bind(state(impl_->device));
    const CUresult r = api().cuEventQuery(impl_->ev);
    if (r == CUDA_ERROR_NOT_READY) return false;
    check(r, "cuEventQuery");
    return true;
}

float Event::elapsed_time(const Event& end) const {
    if (!impl_->timing || !end.impl_->timing)
        throw ValueError("ember.cuda.Event.elapsed_time: both events need enable_timing=True");
    if (!impl_->recorded || !end.impl_->recorded)
        throw ValueError("ember.cuda.Event.elapsed_time: both events must be recorded first");
    bind(state(impl_->device));
    float ms = 0;
    check(api().cuEventElapsedTime(&ms, impl_->ev, end.impl_->ev), "cuEventElapsedTime");
    return ms;
}

int Event::device() const { return impl_->device; }
void* Event::handle() const { return impl_->ev; }

// ---- memory ---------------------------------------------------------------------------------

MemoryStats memory_stats(int device) {
    DeviceState& d = state(device);
    bind(d);
    MemoryStats s;
    {
        std::lock_guard lk(d.mem_mu);
        s.allocated = d.allocated;
        s.peak_allocated = d.peak_allocated;
        s.limit = d.limit;
        s.num_allocs = d.num_allocs;
        s.num_frees = d.num_frees;
        s.num_ooms = d.num_ooms;
        s.num_retries = d.num_retries;
    }
    s.reserved = reserved_bytes(d);
    {
        std::lock_guard lk(d.mem_mu);
        d.peak_reserved = std::max(d.peak_reserved, s.reserved);
        s.peak_reserved = d.peak_reserved;
    }
    check(api().cuMemGetInfo(&s.device_free, &s.device_total), "cuMemGetInfo");
    return s;
}

void empty_cache(int device) {
    DeviceState& d = state(device);
    bind(d);
    forbid_during_capture(d, nullptr, "ember.cuda.empty_cache()");
    {
        std::lock_guard lk(d.mem_mu);
        release_small_blocks(d);
    }
    // Frees queued on streams complete first, so their memory is returned too.
    check(api().cuCtxSynchronize(), "cuCtxSynchronize");
    trim_pools(d);
}

void set_memory_limit(size_t bytes, int device) {
    DeviceState& d = state(device);
    std::lock_guard lk(d.mem_mu);
    d.limit = bytes;
}

void reset_peak_memory_stats(int device) {
    DeviceState& d = state(device);
    const size_t reserved = reserved_bytes(d);
    std::lock_guard lk(d.mem_mu);
    d.peak_allocated = d.allocated;
    d.peak_reserved = reserved;
}

// ---- kernel cache ---------------------------------------------------------------------------

KernelCacheStats kernel_cache_stats() {
    CacheCounters& c = cache_counters();
    KernelCacheStats s;
    s.memory_hits = c.memory_hits.load();
    s.disk_hits = c.disk_hits.load();
    s.compiles = c.compiles.load();
    s.compile_ms = double(c.compile_us.load()) / 1000.0;
    s.disk_rejects = c.disk_rejects.load();
    s.prefetch_hits = c.prefetch_hits.load();
    s.shipped_hits = c.shipped_hits.load();
    s.launches = c.launches.load();
    s.library_calls = c.library_calls.load();
    return s;
}

std::string kernel_cache_dir() { return disk_cache().dir(); }

PrecompileStats precompile(int arch, int threads, const std::string& name_filter) {
    if (arch == 0) arch = state(-1).arch;
    std::vector<KernelSource> all = common_kernels(), kept;
    for (KernelSource& k : all)
        if (name_filter.empty() || k.name.find(name_filter) != std::string::npos)
            kept.push_back(std::move(k));
    const PrecompileResult r = precompile_into(disk_cache(), arch, threads, kept);
    PrecompileStats s;
    s.kernels = r.kernels;
    s.compiled = r.compiled;
    s.cached = r.cached;
    s.seconds = r.seconds;
    return s;
}

PrecompileStats write_kernel_pack(const std::string& path, int arch, int threads,
                                  const std::string& name_filter) {
    if (arch == 0) arch = state(-1).arch;
    std::vector<KernelSource> all = common_kernels(), kept;
    for (KernelSource& k : all)
        if (name_filter.empty() || k.name.find(name_filter) != std::string::npos)
            kept.push_back(std::move(k));
    // Through the disk cache when it is on (a rebuild compiles only what changed), then packed.
    PrecompileResult r;
    if (disk_cache().enabled()) r = precompile_into(disk_cache(), arch, threads, kept);
    const NvrtcApi* nv = nvrtc();
    if (!nv) throw Error("ember: cannot build a kernel pack: " + nvrtc_unavailable_reason());
    const std::vector<std::string> options = compile_options(arch);
    std::vector<std::pair<Hash128, std::string>> cubins;
    for (const KernelSource& k : kept) {
        std::optional<std::string> cubin =
            disk_cache().load(kernel_cache_key(k.program, options, nv->major, nv->minor, arch));
        if (!cubin) {
            cubin = compile_cubin(k.program, arch);
            ++r.compiled;
        }
        cubins.emplace_back(ship_key(k.program, arch), std::move(*cubin));
    }
    gpu::write_kernel_pack(path, arch, std::move(cubins));
    PrecompileStats s;
    s.kernels = kept.size();
    s.compiled = r.compiled;
    s.cached = r.cached;
    s.seconds = r.seconds;
    return s;
}

void set_kernel_pack_dir(const std::string& dir) { gpu::set_kernel_pack_dir(dir); }

std::pair<uint64_t, int> kernel_pack_info(const std::string& path) {
    std::unique_ptr<KernelPack> p = KernelPack::open(path);
    return p ? std::pair<uint64_t, int>(p->size(), p->arch()) : std::pair<uint64_t, int>(0, 0);
}

void clear_kernel_memory_cache() {
    for (int i = 0; i < gpu::device_count(); ++i) {
        if (DeviceState* d = gpu::device_if_initialized(i)) gpu::forget_kernels(*d);
    }
}

}  // namespace ember::cuda

namespace ember::cuda::detail {

void launch_faulting_kernel(int device) {
    DeviceState& d = state(device);
    KernelKey key{0xfa017, 0};
    CUfunction f = kernel(d, key, [] {
        KernelSource s;
        s.name = "ember_test_trap";
        s.program.name = "ember_test_trap.cu";
        s.program.source = "extern \"C\" __global__ void ember_test_trap(int* p) { __trap(); }\n";
        return s;
    });
    void* p = nullptr;
    void* args[] = {&p};
    launch(d, f, 1, 1, args, "_launch_faulting_kernel");
}

void wait_background_compiles() { gpu::wait_background_compiles(); }

namespace {
// Host seconds per call of `calls` calls of fn, from an idle current stream of d until the
// work they queued has run.
template <class Fn>
double seconds_per_call(DeviceState& d, int calls, Fn&& fn) {
    const CUstream s = current_stream(d);
    check(api().cuStreamSynchronize(s), "cuStreamSynchronize");
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
        fn();
    check(api().cuStreamSynchronize(s), "cuStreamSynchronize");
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    return calls > 0 ? dt.count() / calls : 0.0;
}
}  // namespace

double bare_launch_seconds(int calls, int device) {
    DeviceState& d = state(device);
    CUfunction f = kernel(d, KernelKey{0xba4e, 0}, [] {
        KernelSource s;
        s.name = "ember_bare_add";
        s.program.name = "ember_bare_add.cu";
        s.program.source =
            "extern \"C\" __global__ void ember_bare_add(float* o, const float* a, unsigned n) {\n"
            "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (i < n) o[i] = a[i] + a[i];\n"
            "}\n";
        return s;
    });
    void* p = gpu::allocate(d, sizeof(float));
    struct Free {
        DeviceState& d;
        void* p;
        ~Free() { gpu::deallocate(d, p); }
    } guard{d, p};
    unsigned n = 1;
    void* args[] = {&p, &p, &n};
    const CUstream s = current_stream(d);
    const DriverApi& a = api();
    return seconds_per_call(d, calls, [&] {
        check(a.cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, s, args, nullptr), "cuLaunchKernel");
    });
}

double add_loop_seconds(int calls, int device) {
    DeviceState& d = state(device);
    Array x = Array::empty({1}, DType::float32, Device(DeviceType::cuda, d.index));
    x.fill(Scalar(1.0));
    add(x, x);  // compiles
    return seconds_per_call(d, calls, [&] { Array z = add(x, x); });
}

}  // namespace ember::cuda::detail
