// What the GPU does behind a user's back, for ember.debug (the ledger, the strict modes) and
// ember.profiler: events (device->host synchronizations, host<->device transfers, kernel compiles
// and cache loads, pool misses, out-of-memory retries), the op in effect on each thread, and the
// per-op counters of the profiler. Off, every site costs one relaxed atomic load.
//
// Who does what: the bindings install the sink (Python's ledger) and name the public op a call
// is in (ApiScope: "ember.nonzero", "add"); the core names why an op reads the device (OpScope:
// "the bounds check") and whether the user asked for a copy by name (ExplicitScope: asnumpy,
// to("cpu")); the backends emit. Header-only: every layer may include it (inline variables are
// one per program).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace ember::debug {

enum class EventKind : uint8_t {
    sync,          // the host waited for the device (a device->host read)
    transfer,      // bytes copied between the host and a device
    compile,       // a kernel compiled by NVRTC
    disk_load,     // a kernel loaded from the on-disk cache
    shipped_load,  // a kernel loaded from the package's shipped set
    alloc,         // a device allocation the caching pool could not serve (the pool grew)
    oom_retry,     // an allocation that failed, freed the cache and tried again
};

struct Event {
    EventKind kind{};
    const char* op = "";      // the public op in effect ("ember.nonzero", "add", "item")
    const char* reason = "";  // why that op needed it, where the core says ("the bounds check")
    std::string what;         // the kernel's name and why it was built, or what was copied
    int device = -1;
    uint64_t bytes = 0;
    double ms = 0;             // time taken, where known (compiles, loads)
    int direction = 0;         // transfers: 1 host -> device, 2 device -> host
    bool pinned = false;       // transfers: the host side is page-locked memory
    bool is_explicit = false;  // asked for by name: the strict modes let it pass
};

// Receives each event on the thread that caused it; may throw for sync and transfer events (a
// strict mode's "error"), never for the others.
using Sink = void (*)(Event&);

// What is being watched: a bit set, so one load tells a site whether anything is on.
enum : uint32_t { watch_events = 1, watch_profile = 2, watch_nvtx = 4, watch_memory = 8 };

namespace detail {
inline std::atomic<Sink> sink{nullptr};
inline std::atomic<uint32_t> watching{0};
inline thread_local const char* api_op = nullptr;
inline thread_local const char* reason = nullptr;
inline thread_local int explicit_depth = 0;
// The profiler's op in effect on this thread (0: none) and what it has counted so far.
inline thread_local uint64_t prof_op = 0;
inline thread_local uint64_t prof_bytes = 0;
inline thread_local uint64_t prof_alloc = 0;
}  // namespace detail

inline uint32_t watching() noexcept { return detail::watching.load(std::memory_order_relaxed); }
inline bool enabled() noexcept { return watching() & watch_events; }
inline bool profiling() noexcept { return watching() & watch_profile; }
// Whether device allocations record the caller's location (ember.cuda.memory_snapshot).
inline bool memory_history() noexcept { return watching() & watch_memory; }
inline void set_watch(uint32_t bit, bool on) noexcept {
    if (on)
        detail::watching.fetch_or(bit);
    else
        detail::watching.fetch_and(~bit);
}
inline void set_sink(Sink s) noexcept {
    detail::sink.store(s, std::memory_order_release);
    set_watch(watch_events, s != nullptr);
}

inline void emit(Event& e) {
    const Sink s = detail::sink.load(std::memory_order_acquire);
    if (!s) return;
    if (!*e.op && detail::api_op) e.op = detail::api_op;
    if (!*e.reason && detail::reason) e.reason = detail::reason;
    e.is_explicit = e.is_explicit || detail::explicit_depth > 0;
    s(e);
}

// The profiler's counters of the op in effect: bytes its kernels read and wrote (memory-bound
// ops: elementwise, reductions, copies), bytes it allocated.
inline void count_bytes(uint64_t n) noexcept {
    if (profiling()) detail::prof_bytes += n;
}
inline void count_alloc(uint64_t n) noexcept {
    if (profiling()) detail::prof_alloc += n;
}

namespace detail {
// Sets a thread-local name while it lives; an outer name is kept ("ember.nonzero" stays the op of
// the read its count needs).
class NameScope {
public:
    NameScope(const char*& slot, const char* name) noexcept : slot_(slot), prev_(slot) {
        if (!prev_) slot_ = name;
    }
    ~NameScope() { slot_ = prev_; }
    NameScope(const NameScope&) = delete;
    NameScope& operator=(const NameScope&) = delete;

private:
    const char*& slot_;
    const char* prev_;
};
}  // namespace detail

// The public op a call is in (set by the bindings).
class ApiScope : detail::NameScope {
public:
    explicit ApiScope(const char* op) noexcept : NameScope(detail::api_op, op) {}
};

// Why the core reads the device here ("the bounds check"), or the op itself for C++ callers.
class OpScope : detail::NameScope {
public:
    explicit OpScope(const char* why) noexcept : NameScope(detail::reason, why) {}
};

// Transfers and synchronizations while it lives are the user's explicit request.
class ExplicitScope {
public:
    ExplicitScope() noexcept { ++detail::explicit_depth; }
    ~ExplicitScope() { --detail::explicit_depth; }
    ExplicitScope(const ExplicitScope&) = delete;
    ExplicitScope& operator=(const ExplicitScope&) = delete;
};

// The caller's source location as an opaque token (0: unknown), and its description ("train.py:12
// in step"); installed by the bindings (Python's file:line), used by the ring of recent launches
// that names the op of an asynchronous fault.
using LocationHook = uint64_t (*)();
using DescribeHook = std::string (*)(uint64_t);
namespace detail {
inline std::atomic<LocationHook> location_hook{nullptr};
inline std::atomic<DescribeHook> describe_hook{nullptr};
}  // namespace detail
inline uint64_t location() {
    const LocationHook h = detail::location_hook.load(std::memory_order_relaxed);
    return h ? h() : 0;
}
inline std::string describe_location(uint64_t token) {
    const DescribeHook h = detail::describe_hook.load(std::memory_order_acquire);
    return h && token ? h(token) : std::string();
}
inline void set_location_hooks(LocationHook where, DescribeHook describe) noexcept {
    detail::describe_hook.store(describe, std::memory_order_release);
    detail::location_hook.store(where, std::memory_order_release);
}

}  // namespace ember::debug
