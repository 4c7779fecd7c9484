// ember::cuda interop (include/ember/interop.hpp): pinned host arrays, non-blocking copies that
// keep their operands alive until they have run, stream handshakes and record_stream.
#include "ember/interop.hpp"

#include <algorithm>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cuda/interop.hpp"
#include "backend/cuda/runtime.hpp"
#include "ember/error.hpp"

namespace ember::cuda {

using namespace ember::gpu;

namespace {

constexpr unsigned event_disable_timing = 0x2;  // CU_EVENT_DISABLE_TIMING
constexpr unsigned host_alloc_portable = 0x1;   // CU_MEMHOSTALLOC_PORTABLE

DeviceState& state(int device, const char* who) {
    if (!backend::cuda())
        throw ValueError(std::string(who) +
                         ": CUDA is not available: " + backend::cuda_unavailable_reason());
    return gpu::device(device < 0 ? gpu::current_device() : device);
}

// Base addresses of live pinned allocations.
std::mutex pinned_mu;
std::unordered_set<uintptr_t>& pinned_set() {
    static auto* s = new std::unordered_set<uintptr_t>;  // leaked: frees may run at exit
    return *s;
}

// Work in flight, oldest first: the event recorded after it, its device, and what must live
// until it has run (the storages a copy reads and writes, the owner of foreign memory ember's
// kernels may still be using).
struct InFlight {
    CUevent done;
    int device;
    std::shared_ptr<void> a, b;
};
std::mutex inflight_mu;
std::deque<InFlight>& inflight() {
    static auto* v = new std::deque<InFlight>;  // leaked: see pinned_set
    return *v;
}
// Events whose work has run, by device, for the next park (creating and destroying an event costs
// more than recording one; each park would otherwise pay both). The caller holds inflight_mu.
constexpr size_t max_spare_events = 64;
std::vector<CUevent>& spare_events(int device) {
    static auto* v = new std::vector<CUevent>[max_devices];
    return v[device];
}
void recycle(const DriverApi& a, InFlight& f) {
    auto& spare = spare_events(f.device);
    if (spare.size() < max_spare_events)
        spare.push_back(f.done);
    else
        a.cuEventDestroy(f.done);
}

// Takes entries whose work has finished out of the list: every one (`all`), or those at its front
// up to the first still running (a park's amortized O(1) share; the rest wait for a later call).
// The caller holds inflight_mu and drops the entries after unlocking: their release may free
// memory or take the GIL.
std::vector<InFlight> take_finished(bool all) {
    std::vector<InFlight> done;
    const DriverApi* a = driver();
    if (!a) return done;
    auto& v = inflight();
    if (!all) {
        while (!v.empty() && a->cuEventQuery(v.front().done) != CUDA_ERROR_NOT_READY) {
            recycle(*a, v.front());
            done.push_back(std::move(v.front()));
            v.pop_front();
        }
        return done;
    }
    std::erase_if(v, [&](InFlight& f) {
        if (a->cuEventQuery(f.done) == CUDA_ERROR_NOT_READY) return false;
        recycle(*a, f);
        done.push_back(std::move(f));
        return true;
    });
    return done;
}

// Keeps x and y alive until the work queued so far on `s` (a stream of d, whose context is bound)
// has run.
void park(const DeviceState& d, CUstream s, std::shared_ptr<void> x, std::shared_ptr<void> y) {
    const DriverApi& a = api();
    std::vector<InFlight> done;
    std::unique_lock lk(inflight_mu);
    CUevent ev = nullptr;
    CUresult r = CUDA_SUCCESS;
    if (auto& spare = spare_events(d.index); !spare.empty()) {
        ev = spare.back();
        spare.pop_back();
    } else {
        r = a.cuEventCreate(&ev, event_disable_timing);
    }
    if (r == CUDA_SUCCESS) {
        r = a.cuEventRecord(ev, s);
        if (r != CUDA_SUCCESS) a.cuEventDestroy(ev);
    }
    if (r != CUDA_SUCCESS) {
        lk.unlock();
        // The work's completion cannot be tracked: wait for it instead.
        check(a.cuStreamSynchronize(s), "cuStreamSynchronize (keeping memory alive)");
        return;
    }
    // Now and then a whole scan, so that work stuck on one stream does not hold back the release
    // of what queued behind it on others (amortized: the next scan waits for twice the length).
    static size_t scan_at = 256;
    const bool all = inflight().size() >= scan_at;
    done = take_finished(all);
    if (all) scan_at = std::max<size_t>(256, 2 * inflight().size());
    inflight().push_back({ev, d.index, std::move(x), std::move(y)});
}

void keep_until_done(DeviceState& d, CUstream s, std::shared_ptr<Storage> x,
                     std::shared_ptr<Storage> y) {
    bind(d);
    park(d, s, std::move(x), std::move(y));
}

// Makes `waiter` wait for the work queued so far on `signaller` (both on d's context, bound).
// The event is the calling thread's one for d, created once and reused: a queued wait keeps the
// state the event captured before it, so the next record may overwrite it at once (cuEventRecord's
// rule), and a handshake costs no event creation or destruction.
CUresult try_stream_wait(const DeviceState& d, CUstream waiter, CUstream signaller) noexcept {
    thread_local CUevent events[max_devices] = {};
    const DriverApi& a = *driver();
    CUevent& ev = events[d.index];
    CUresult r = CUDA_SUCCESS;
    if (!ev && (r = a.cuEventCreate(&ev, event_disable_timing)) != CUDA_SUCCESS) ev = nullptr;
    if (r == CUDA_SUCCESS) r = a.cuEventRecord(ev, signaller);
    if (r == CUDA_SUCCESS) r = a.cuStreamWaitEvent(waiter, ev, 0);
    return r;
}

void stream_wait(DeviceState& d, CUstream waiter, CUstream signaller) {
    if (waiter == signaller) return;
    bind(d);
    check(try_stream_wait(d, waiter, signaller), "cuStreamWaitEvent (stream handshake)");
}

// Recorded streams of ember-allocated blocks, by device and base address.
std::mutex recorded_mu;
std::unordered_map<uintptr_t, std::vector<CUstream>>& recorded(int device) {
    static auto* m = new std::unordered_map<uintptr_t, std::vector<CUstream>>[max_devices];
    return m[device];
}
std::atomic<int64_t> recorded_count{0};

}  // namespace

Array pinned_empty(const Shape& shape, DType dtype) {
    const char* who = "ember.cuda.pinned_empty";
    DeviceState& d = state(-1, who);
    int64_t n = 1;
    for (int64_t s : shape) {
        if (s < 0) throw ValueError(std::string(who) + ": negative dimension " + std::to_string(s));
        if (s && n > INT64_MAX / s) throw ValueError(std::string(who) + ": the shape is too large");
        n *= s;
    }
    if (n > INT64_MAX / int64_t(itemsize(dtype)))
        throw ValueError(std::string(who) + ": the shape is too large");
    const size_t nbytes = size_t(n) * itemsize(dtype);
    retire_finished_work();
    bind(d);
    void* p = nullptr;
    const CUresult r = api().cuMemHostAlloc(&p, std::max<size_t>(nbytes, 1), host_alloc_portable);
    if (r != CUDA_SUCCESS)
        throw MemoryError(std::string(who) + ": cannot pin " + std::to_string(nbytes) +
                          " bytes of host memory: " + error_text(r));
    {
        std::lock_guard lk(pinned_mu);
        pinned_set().insert(uintptr_t(p));
    }
    std::shared_ptr<void> owner(p, [index = d.index](void* q) {
        {
            std::lock_guard lk(pinned_mu);
            pinned_set().erase(uintptr_t(q));
        }
        // At exit the driver may be gone; nothing can be reported then.
        DeviceState* ds = device_if_initialized(index);
        if (const DriverApi* a = driver(); a && ds && bind_noexcept(*ds)) a->cuMemFreeHost(q);
    });
    auto storage = Storage::wrap(p, nbytes, Device(DeviceType::cpu, 0), std::move(owner));
    return Array(std::move(storage), 0, shape, contiguous_strides(shape), dtype);
}

bool is_pinned(const Array& a) {
    if (!a.device().is_cpu() || !a.storage() || !a.storage()->data()) return false;
    std::lock_guard lk(pinned_mu);
    return pinned_set().count(uintptr_t(a.storage()->data())) != 0;
}

Array to_non_blocking(const Array& a, Device device) {
    if (device == a.device() || a.requires_grad() || !a.is_contiguous() || a.size() == 0)
        return a.to(device);
    const size_t n = size_t(a.nbytes());
    if (a.device().is_cpu() && device.type == DeviceType::cuda && is_pinned(a)) {
        DeviceState& d = state(device.index, "ember.ndarray.to");
        forbid_during_capture(d, current_stream(d), "x.to(non_blocking=True)");
        Array out = Array::empty(a.shape(), a.dtype(), device);
        bind(d);
        const CUstream s = current_stream(d);
        check(api().cuMemcpyHtoDAsync(CUdeviceptr(uintptr_t(out.data())), a.data(), n, s),
              "cuMemcpyHtoDAsync");
        keep_until_done(d, s, a.storage(), out.storage());
        return out;
    }
    if (a.device().type == DeviceType::cuda && device.is_cpu()) {
        DeviceState& d = state(a.device().index, "ember.ndarray.to");
        forbid_during_capture(d, current_stream(d), "x.to(non_blocking=True)");
        Array out = pinned_empty(a.shape(), a.dtype());
        bind(d);
        const CUstream s = current_stream(d);
        check(api().cuMemcpyDtoHAsync(out.data(), CUdeviceptr(uintptr_t(a.data())), n, s),
              "cuMemcpyDtoHAsync");
        keep_until_done(d, s, a.storage(), out.storage());
        return out;
    }
    return a.to(device);
}

void release_after_current_work(int device, std::shared_ptr<void> owner) noexcept {
    try {
        DeviceState* d = device_if_initialized(device);
        if (!d || !driver()) return;  // nothing of ember's can be using the memory
        bind(*d);
        park(*d, current_stream(*d), std::move(owner), nullptr);
    } catch (...) {
        // Could neither track nor wait: release now (owner goes out of scope).
    }
}

void retire_finished_work() {
    std::vector<InFlight> done;
    {
        std::lock_guard lk(inflight_mu);
        done = take_finished(true);
    }
}

uintptr_t current_stream_handle(int device) {
    DeviceState& d = state(device, "ember.cuda");
    return uintptr_t(current_stream(d));
}

void consumer_wait_current(int device, uintptr_t consumer) {
    DeviceState& d = state(device, "ember.ndarray.__dlpack__");
    stream_wait(d, reinterpret_cast<CUstream>(consumer), current_stream(d));
}

void current_wait_producer(int device, uintptr_t producer) {
    DeviceState& d = state(device, "ember.asarray");
    stream_wait(d, current_stream(d), reinterpret_cast<CUstream>(producer));
}

int pointer_device(uintptr_t ptr) {
    state(-1, "ember.asarray");
    constexpr int attribute_device_ordinal = 9;  // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
    int ordinal = -1;
    if (api().cuPointerGetAttribute(&ordinal, attribute_device_ordinal, CUdeviceptr(ptr)) !=
        CUDA_SUCCESS)
        return -1;
    return ordinal;
}

void record_stream(const Array& a, const Stream& s) {
    if (a.device().type != DeviceType::cuda || !a.storage() || !a.storage()->owned()) return;
    if (s.device() != a.device().index)
        throw ValueError("ember.ndarray.record_stream: the array is on " + a.device().str() +
                         " but the stream is on cuda:" + std::to_string(s.device()));
    record_stream_handle(a, uintptr_t(s.handle()));
}

void record_stream_handle(const Array& a, uintptr_t stream) {
    if (a.device().type != DeviceType::cuda || !a.storage() || !a.storage()->owned()) return;
    const auto st = reinterpret_cast<CUstream>(stream);
    std::lock_guard lk(recorded_mu);
    auto [it, added] = recorded(a.device().index).try_emplace(uintptr_t(a.storage()->data()));
    if (added) recorded_count.fetch_add(1, std::memory_order_relaxed);
    if (std::find(it->second.begin(), it->second.end(), st) == it->second.end())
        it->second.push_back(st);
}

}  // namespace ember::cuda

namespace ember::gpu {

void wait_recorded_streams(DeviceState& d, void* p, CUstream alloc_stream) noexcept try {
    using namespace ember::cuda;
    if (recorded_count.load(std::memory_order_relaxed) == 0) return;
    std::vector<CUstream> streams;
    {
        std::lock_guard lk(recorded_mu);
        auto& m = recorded(d.index);
        auto it = m.find(uintptr_t(p));
        if (it == m.end()) return;
        streams = std::move(it->second);
        m.erase(it);
        recorded_count.fetch_sub(1, std::memory_order_relaxed);
    }
    // The block is reused (or freed) only in alloc_stream's order, so making that stream wait for
    // the recorded streams' work queued so far keeps every later user behind it.
    if (!bind_noexcept(d)) return;
    for (CUstream s : streams)
        if (s != alloc_stream) try_stream_wait(d, alloc_stream, s);
} catch (...) {
    // Out of memory for the stream list: nothing better can be done from a deallocation.
}

}  // namespace ember::gpu
