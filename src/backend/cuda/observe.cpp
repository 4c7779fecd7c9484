// The CUDA backend's side of ember.debug and ember.profiler (observe.hpp).
#include "backend/cuda/observe.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "backend/cuda/runtime.hpp"
#include "ember/cuda.hpp"
#include "ember/error.hpp"

namespace ember::gpu {

namespace {

std::string mib(size_t n) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.2f MiB", double(n) / double(1 << 20));
    return buf;
}

// ---- kernel names ----------------------------------------------------------------------------

std::mutex names_mu;
std::unordered_map<CUfunction, std::string>& names() {
    static auto* m = new std::unordered_map<CUfunction, std::string>();  // outlives exit
    return *m;
}
// The kernels loaded so far, by family (the name up to the op: "ember_map_add").
std::unordered_map<std::string, std::vector<std::string>>& loaded_by_family() {
    static auto* m = new std::unordered_map<std::string, std::vector<std::string>>();
    return *m;
}

std::string family_of(const std::string& name) {
    size_t op_end = name.find('_');
    for (int i = 0; i < 2 && op_end != std::string::npos; ++i)
        op_end = name.find('_', op_end + 1);
    return name.substr(0, op_end);
}

// Kernel names read <family>_<dtypes>__<layout>: why a kernel was needed, from the ones of its
// family loaded before it (names must be locked).
std::string why_needed(const std::string& name) {
    const size_t cut = name.rfind("__");
    const std::string head = cut == std::string::npos ? name : name.substr(0, cut);
    const std::string tail = cut == std::string::npos ? "" : name.substr(cut + 2);
    auto it = loaded_by_family().find(family_of(name));
    if (it == loaded_by_family().end()) return "the first use of this op in this process";
    bool same_head = false, same_tail = false;
    for (const std::string& n : it->second) {
        const size_t c = n.rfind("__");
        if (c == cut && n.compare(0, c, head) == 0) same_head = true;
        if (c != std::string::npos && n.compare(c + 2, std::string::npos, tail) == 0)
            same_tail = true;
    }
    if (same_head) return "a new layout class (" + tail + ") of an op and dtypes seen before";
    if (same_tail) return "a new dtype combination of an op seen before";
    return "a new dtype combination and layout of an op seen before";
}

// ---- the ring of recent launches --------------------------------------------------------------

constexpr int ring_size = 64;
struct LaunchRecord {
    uint64_t seq = 0;
    int dev = 0;
    CUfunction f = nullptr;
    uint64_t where = 0;
    char who[56] = {};
};
struct Ring {
    std::atomic_flag busy = ATOMIC_FLAG_INIT;
    uint64_t next = 1;  // the sequence number of the next launch
    LaunchRecord slots[ring_size];
    uint64_t synced[max_devices] = {};  // launches up to this one finished without error

    void lock() {
        while (busy.test_and_set(std::memory_order_acquire))
            std::this_thread::yield();
    }
    void unlock() { busy.clear(std::memory_order_release); }
};
Ring ring;

std::mutex lost_mu;
std::string* lost = nullptr;  // the description of the fault that destroyed the context

bool destroys_context(CUresult r) {
    switch (r) {
        case 700:  // CUDA_ERROR_ILLEGAL_ADDRESS
        case 702:  // CUDA_ERROR_LAUNCH_TIMEOUT
        case 710:  // CUDA_ERROR_ASSERT
        case 714:  // CUDA_ERROR_HARDWARE_STACK_ERROR
        case 715:  // CUDA_ERROR_ILLEGAL_INSTRUCTION
        case 716:  // CUDA_ERROR_MISALIGNED_ADDRESS
        case 717:  // CUDA_ERROR_INVALID_ADDRESS_SPACE
        case 718:  // CUDA_ERROR_INVALID_PC
        case 719:  // CUDA_ERROR_LAUNCH_FAILED
            return true;
        default:
            return false;
    }
}

// ---- profiler timing ----------------------------------------------------------------------------

struct Timed {
    uint64_t op;
    uint64_t thread;
    int dev;
    CUfunction f;
    CUevent before, after;
    std::string label;  // a library call's row name (cuBLAS, cuDNN...) when f is null
};
std::mutex prof_mu;
std::vector<Timed> timed;
CUevent base_events[max_devices] = {};
std::vector<CUevent> spare_events[max_devices];

CUevent new_event(int dev) {
    if (!spare_events[dev].empty()) {
        CUevent e = spare_events[dev].back();
        spare_events[dev].pop_back();
        return e;
    }
    CUevent e = nullptr;
    check(driver()->cuEventCreate(&e, 0), "cuEventCreate (profiler)");
    return e;
}

uint64_t thread_number() {
    static std::atomic<uint64_t> next{1};
    thread_local const uint64_t n = next.fetch_add(1);
    return n;
}

// ---- NVTX ---------------------------------------------------------------------------------------

struct Nvtx {
    int (*push)(const char*) = nullptr;
    int (*pop)() = nullptr;
    void (*mark)(const char*) = nullptr;
};
const Nvtx* nvtx() {
    static const Nvtx* n = [] {
        std::string reason;
        void* h = open_cuda_library("nvtx",
                                    {"libnvtx3interop.so.1", "libnvToolsExt.so.1",
                                     "/usr/local/cuda/lib64/libnvtx3interop.so.1"},
                                    reason);
        if (!h) return static_cast<Nvtx*>(nullptr);
        auto* t = new Nvtx();
        t->push = reinterpret_cast<int (*)(const char*)>(dlsym(h, "nvtxRangePushA"));
        t->pop = reinterpret_cast<int (*)()>(dlsym(h, "nvtxRangePop"));
        t->mark = reinterpret_cast<void (*)(const char*)>(dlsym(h, "nvtxMarkA"));
        if (!t->push || !t->pop || !t->mark) return static_cast<Nvtx*>(nullptr);
        return t;
    }();
    return n;
}

}  // namespace

// ---- errors -------------------------------------------------------------------------------------

std::string error_text(CUresult r) {
    const DriverApi* a = driver();
    const char* name = nullptr;
    const char* desc = nullptr;
    if (a) {
        a->cuGetErrorName(r, &name);
        a->cuGetErrorString(r, &desc);
    }
    std::string s = name ? name : "CUDA error " + std::to_string(r);
    if (desc) s += std::string(" (") + desc + ")";
    return s;
}

void raise(CUresult r, const std::string& what) {
    std::string msg = "ember.cuda: " + what + " failed: " + error_text(r);
    const std::string fault = describe_fault(r);
    if (!fault.empty())
        msg += fault;
    else if (!launch_blocking() && r != CUDA_ERROR_OUT_OF_MEMORY)
        msg +=
            "; errors of earlier kernels surface at the next synchronizing call, set "
            "EMBER_LAUNCH_BLOCKING=1 to report them at the op that caused them";
    if (r == CUDA_ERROR_OUT_OF_MEMORY) throw OutOfMemoryError(msg);
    throw CudaError(msg);
}

// ---- events -------------------------------------------------------------------------------------

void note_transfer(int dev, const void* host, size_t n, int direction) {
    unsigned int type = 0;
    const CUdeviceptr h = CUdeviceptr(reinterpret_cast<uintptr_t>(host));
    const bool pinned = driver()->cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                                        h) == CUDA_SUCCESS &&
                        type == CU_MEMORYTYPE_HOST;
    if (direction == 2) {
        debug::Event e;
        e.kind = debug::EventKind::sync;
        e.device = dev;
        e.bytes = n;
        e.what = "the host waits for the device's queued work to read its result";
        debug::emit(e);
    }
    debug::Event e;
    e.kind = debug::EventKind::transfer;
    e.device = dev;
    e.bytes = n;
    e.direction = direction;
    e.pinned = pinned;
    e.what = pinned ? "pinned host memory" : "pageable host memory";
    debug::emit(e);
}

void note_kernel_load(debug::EventKind kind, int dev, const std::string& name, double ms) {
    std::string why;
    {
        std::lock_guard lk(names_mu);
        why = why_needed(name);
        loaded_by_family()[family_of(name)].push_back(name);
    }
    if (!debug::enabled()) return;
    debug::Event e;
    e.kind = kind;
    e.device = dev;
    e.ms = ms;
    e.what = name + ": " + why;
    try {
        debug::emit(e);
    } catch (...) {  // the kernel is loaded: a failing ledger must not lose it
    }
}

void note_alloc(DeviceState& d, size_t bytes, size_t reserved_before) {
    const size_t after = reserved_bytes(d);
    if (after <= reserved_before) return;
    debug::Event e;
    e.kind = debug::EventKind::alloc;
    e.device = d.index;
    e.bytes = after - reserved_before;
    e.what = "the pool grew by " + mib(after - reserved_before) + " for " + mib(bytes) +
             " (reserved now " + mib(after) + ")";
    try {
        debug::emit(e);
    } catch (...) {  // the memory is the caller's: a failing ledger must not leak it
    }
}

void note_oom_retry(DeviceState& d, size_t bytes) {
    debug::Event e;
    e.kind = debug::EventKind::oom_retry;
    e.device = d.index;
    e.bytes = bytes;
    e.what = "out of memory for " + mib(bytes) +
             ": waited for the device, emptied the cache, tried again";
    try {
        debug::emit(e);
    } catch (...) {
    }
}

void name_kernel(CUfunction f, const std::string& name) {
    std::lock_guard lk(names_mu);
    names().emplace(f, name);
}

std::string kernel_name(CUfunction f) {
    std::lock_guard lk(names_mu);
    auto it = names().find(f);
    return it == names().end() ? std::string("?") : it->second;
}

// ---- the ring -----------------------------------------------------------------------------------

uint64_t note_launch(int dev, CUfunction f, std::string_view who) {
    const uint64_t where = debug::location();
    ring.lock();
    LaunchRecord& r = ring.slots[ring.next % ring_size];
    const uint64_t seq = r.seq = ring.next++;
    r.dev = dev;
    r.f = f;
    r.where = where;
    const size_t n = std::min(who.size(), sizeof r.who - 1);
    std::memcpy(r.who, who.data(), n);
    r.who[n] = 0;
    ring.unlock();
    return seq;
}

void forget_launch(uint64_t seq) {
    ring.lock();
    if (ring.slots[seq % ring_size].seq == seq) ring.slots[seq % ring_size].seq = 0;
    ring.unlock();
}

void note_synced(int dev) {
    ring.lock();
    ring.synced[dev] = ring.next - 1;
    ring.unlock();
}

const std::string* lost_context() {
    std::lock_guard lk(lost_mu);
    return lost;
}

std::string describe_fault(CUresult r) {
    if (const std::string* l = lost_context())
        return ". The CUDA context of this process was lost to an earlier fault (" + *l +
               "): every GPU call fails from then on; restart the Python process";
    if (!destroys_context(r)) return "";
    std::vector<LaunchRecord> since;
    uint64_t dropped = 0;
    ring.lock();
    const uint64_t first = ring.next > ring_size ? ring.next - ring_size : 1;
    for (uint64_t s = first; s < ring.next; ++s) {
        const LaunchRecord& x = ring.slots[s % ring_size];
        if (x.seq == s && s > ring.synced[x.dev]) since.push_back(x);
    }
    for (const LaunchRecord& x : since)
        if (x.seq == first && ring.synced[x.dev] + 1 < first) dropped = first;
    ring.unlock();
    const auto one = [](const LaunchRecord& x) {
        std::string s = "`";
        s.append(x.who, strnlen(x.who, sizeof x.who));
        s.append("` (kernel ").append(kernel_name(x.f)).append(" on cuda:");
        s.append(std::to_string(x.dev));
        const std::string where = debug::describe_location(x.where);
        if (!where.empty()) s.append(", launched at ").append(where);
        return s.append(")");
    };
    std::string msg;
    if (since.size() == 1) {
        msg = ". The fault is in " + one(since[0]);
    } else if (!since.empty()) {
        const size_t shown = std::min<size_t>(since.size(), 8);
        msg = ". The fault is in one of the " + std::to_string(since.size()) +
              " launches since the device last synchronized without error (the latest " +
              std::to_string(shown) + ", newest last): ";
        for (size_t i = since.size() - shown; i < since.size(); ++i)
            msg += (i + shown == since.size() ? "" : "; ") + one(since[i]);
        if (dropped) msg += " (older launches are out of the ring)";
    }
    {
        std::lock_guard lk(lost_mu);
        if (!lost) lost = new std::string(error_text(r) + msg.substr(msg.empty() ? 0 : 2));
    }
    return msg +
           ". The CUDA context is lost: every later GPU call in this process fails. Copy out "
           "nothing more from the GPU; restart the Python process (EMBER_LAUNCH_BLOCKING=1 "
           "reports a fault at the op that caused it)";
}

// ---- profiler -----------------------------------------------------------------------------------

CUevent profile_before(DeviceState& d, CUstream s) {
    std::lock_guard lk(prof_mu);
    const DriverApi& a = *driver();
    if (!base_events[d.index]) {  // a device first used after the profiler started
        base_events[d.index] = new_event(d.index);
        a.cuEventRecord(base_events[d.index], s);
    }
    CUevent e = new_event(d.index);
    a.cuEventRecord(e, s);
    return e;
}

void profile_after(DeviceState& d, CUstream s, CUfunction f, CUevent before) {
    std::lock_guard lk(prof_mu);
    CUevent e = new_event(d.index);
    driver()->cuEventRecord(e, s);
    timed.push_back({debug::detail::prof_op, thread_number(), d.index, f, before, e, {}});
}

void profile_after(DeviceState& d, CUstream s, std::string label, CUevent before) {
    std::lock_guard lk(prof_mu);
    CUevent e = new_event(d.index);
    driver()->cuEventRecord(e, s);
    timed.push_back(
        {debug::detail::prof_op, thread_number(), d.index, nullptr, before, e, std::move(label)});
}

bool nvtx_available() { return nvtx() != nullptr; }
void nvtx_push(const char* name) {
    if (const Nvtx* n = nvtx()) n->push(name);
}
void nvtx_pop() {
    if (const Nvtx* n = nvtx()) n->pop();
}
void nvtx_mark(const char* name) {
    if (const Nvtx* n = nvtx()) n->mark(name);
}

}  // namespace ember::gpu

namespace ember::cuda {

void profiler_start() {
    if (!gpu::driver()) return;
    std::lock_guard lk(gpu::prof_mu);
    gpu::timed.clear();
    for (int i = 0; i < gpu::max_devices; ++i) {
        gpu::DeviceState* d = gpu::device_if_initialized(i);
        if (!d) continue;
        gpu::bind(*d);
        if (!gpu::base_events[i]) gpu::base_events[i] = gpu::new_event(i);
        gpu::check(gpu::driver()->cuEventRecord(gpu::base_events[i], gpu::current_stream(*d)),
                   "cuEventRecord (profiler)");
    }
}

std::vector<KernelTiming> profiler_stop() {
    std::vector<KernelTiming> out;
    if (!gpu::driver()) return out;
    std::vector<gpu::Timed> recs;
    gpu::CUevent bases[gpu::max_devices];
    {
        std::lock_guard lk(gpu::prof_mu);
        recs.swap(gpu::timed);
        std::copy(std::begin(gpu::base_events), std::end(gpu::base_events), bases);
        std::fill(std::begin(gpu::base_events), std::end(gpu::base_events), nullptr);
    }
    const gpu::DriverApi& a = *gpu::driver();
    for (const gpu::Timed& t : recs) {
        gpu::bind(gpu::device(t.dev));
        gpu::check(a.cuEventSynchronize(t.after), "cuEventSynchronize (profiler)");
        float start = 0, ms = 0;
        if (bases[t.dev]) a.cuEventElapsedTime(&start, bases[t.dev], t.before);
        a.cuEventElapsedTime(&ms, t.before, t.after);
        out.push_back({t.op, t.thread, t.dev, t.f ? gpu::kernel_name(t.f) : t.label, double(start),
                       double(ms)});
    }
    std::lock_guard lk(gpu::prof_mu);
    for (const gpu::Timed& t : recs) {
        gpu::spare_events[t.dev].push_back(t.before);
        gpu::spare_events[t.dev].push_back(t.after);
    }
    for (int i = 0; i < gpu::max_devices; ++i)
        if (bases[i]) gpu::spare_events[i].push_back(bases[i]);
    return out;
}

uintptr_t profile_range_begin(int device) {
    if (!gpu::driver() || !debug::profiling() || gpu::capturing_pool()) return 0;
    gpu::DeviceState& d = gpu::device(device);
    gpu::bind(d);
    return reinterpret_cast<uintptr_t>(gpu::profile_before(d, gpu::current_stream(d)));
}

void profile_range_end(int device, uintptr_t handle, const std::string& label) {
    if (!handle) return;
    gpu::DeviceState& d = gpu::device(device);
    gpu::bind(d);
    gpu::profile_after(d, gpu::current_stream(d), label, reinterpret_cast<gpu::CUevent>(handle));
}

std::vector<LiveAllocation> live_allocations() {
    std::vector<LiveAllocation> out;
    for (int i = 0; i < gpu::max_devices; ++i) {
        gpu::DeviceState* d = gpu::device_if_initialized(i);
        if (!d) continue;
        std::lock_guard lk(d->mem_mu);
        d->live.for_each([&](uintptr_t p, const gpu::Block& b) {
            out.push_back({i, p, b.bytes, reinterpret_cast<uintptr_t>(b.stream), b.where});
        });
    }
    std::sort(out.begin(), out.end(), [](const LiveAllocation& x, const LiveAllocation& y) {
        return x.device != y.device ? x.device < y.device : x.address < y.address;
    });
    return out;
}

bool nvtx_available() { return gpu::nvtx_available(); }
void nvtx_range_push(const std::string& name) { gpu::nvtx_push(name.c_str()); }
void nvtx_range_pop() { gpu::nvtx_pop(); }
void nvtx_mark(const std::string& name) { gpu::nvtx_mark(name.c_str()); }

}  // namespace ember::cuda
