// The CUDA runtime of ember: per-device state (primary context, default stream, properties,
// memory pool, kernel cache), the thread's current device and streams, error checking, launches.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "backend/cuda/disk_cache.hpp"
#include "backend/cuda/loader.hpp"
#include "backend/cuda/nvrtc.hpp"
#include "ember/cuda.hpp"

namespace ember::gpu {

inline constexpr int max_devices = 64;

// The driver's name and description of `r`, e.g. "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
std::string error_text(CUresult r);
// Throws CudaError naming the failing call `what` and the driver's error.
[[noreturn]] void raise(CUresult r, const std::string& what);
inline void check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) raise(r, what);
}

// The loaded driver, or a ValueError naming why CUDA cannot be used.
const DriverApi& api();

// A kernel cache key: the kernel family and its parameters packed into 128 bits.
struct KernelKey {
    uint64_t lo = 0, hi = 0;
    friend bool operator==(const KernelKey&, const KernelKey&) = default;
};
struct KernelKeyHash {
    size_t operator()(const KernelKey& k) const noexcept {
        return size_t(k.lo * 0x9e3779b97f4a7c15ull ^ (k.hi + 0x632be59bd9b4e019ull));
    }
};

struct GraphPool;

struct Block {
    size_t bytes;
    CUstream stream;     // the stream it was allocated on (and is freed on)
    size_t class_bytes;  // small blocks: the size class it came from (0: a plain pool block);
                         // graph blocks: the size of their chunk
    GraphPool* graph = nullptr;  // set when it belongs to a CUDA graph's private memory
    uint64_t where = 0;  // the caller's location (debug::location) while memory history is on
};

// The private memory of a CUDA graph (cuda::Graph). While the graph is captured, allocations on
// its capture stream by the capturing thread come from here: chunks of cuMemAlloc, outside the
// stream-ordered pools, whose addresses the replays keep using. A chunk freed during the capture
// is reused by later allocations of the same capture (the capture stream orders them); once the
// capture ends no chunk is handed out again, and none goes back to the driver before the graph is
// destroyed. Blocks of ordinary memory the capturing thread frees during the capture (the graph
// may read them) are kept until then too. Guarded by the device's mem_mu.
struct GraphPool {
    int device = 0;
    CUstream stream = nullptr;              // the capture stream
    std::multimap<size_t, uintptr_t> idle;  // its chunks no array uses, by size
    size_t live = 0;                        // its chunks in use by arrays
    bool graph_alive = true;                // false once the graph is destroyed
    std::vector<void*> kept;                // ordinary blocks freed during the capture
};
// The graph pool the calling thread is capturing into (nullptr when none), and its replacement.
GraphPool* capturing_pool();
void set_capturing_pool(GraphPool* g);
// Called when the graph of `g` is destroyed (its replays finished): frees its idle chunks and the
// kept blocks; live chunks go back to the driver as their arrays are freed.
void release_graph_pool(struct DeviceState& d, GraphPool* g);
// Throws CudaError when `s` is being captured into a CUDA graph by this thread (s == nullptr:
// when this thread captures on d at all): `what` is a host synchronization, which a graph
// cannot contain.
void forbid_during_capture(const struct DeviceState& d, CUstream s, std::string_view what);

// The live blocks by address: open addressing with linear probing and backward-shift deletion,
// so that an allocation and its free (a few per op) touch one flat array and no heap node.
class LiveBlocks {
public:
    void insert(uintptr_t p, const Block& b) {
        if (2 * (count_ + 1) > slots_.size()) grow();
        size_t i = slot_of(p);
        while (slots_[i].key && slots_[i].key != p)
            i = (i + 1) & mask();
        if (!slots_[i].key) ++count_;
        slots_[i] = {p, b};
    }
    // Removes `p` and returns its block, or returns false when it is not live.
    bool take(uintptr_t p, Block& out) {
        if (slots_.empty()) return false;
        size_t i = slot_of(p);
        while (slots_[i].key != p) {
            if (!slots_[i].key) return false;
            i = (i + 1) & mask();
        }
        out = slots_[i].block;
        // Shift later members of the probe run back so that no lookup stops early.
        for (size_t j = (i + 1) & mask(); slots_[j].key; j = (j + 1) & mask()) {
            const size_t home = slot_of(slots_[j].key);
            if (((j - home) & mask()) >= ((j - i) & mask())) {
                slots_[i] = slots_[j];
                i = j;
            }
        }
        slots_[i].key = 0;
        --count_;
        return true;
    }
    template <class Fn>
    void for_each(Fn&& fn) {
        for (Slot& s : slots_)
            if (s.key) fn(s.key, s.block);
    }
    size_t size() const { return count_; }

private:
    struct Slot {
        uintptr_t key = 0;  // 0: empty (no block lives at address 0)
        Block block{};
    };
    size_t mask() const { return slots_.size() - 1; }
    size_t slot_of(uintptr_t p) const {
        return size_t((uint64_t(p) >> 8) * 0x9E3779B97F4A7C15ull >> 20) & mask();
    }
    void grow() {
        std::vector<Slot> old(slots_.empty() ? 1024 : 2 * slots_.size());
        old.swap(slots_);
        count_ = 0;
        for (const Slot& s : old)
            if (s.key) insert(s.key, s.block);
    }
    std::vector<Slot> slots_;
    size_t count_ = 0;
};

// Small blocks (<= 1 MiB) freed on a stream are kept per stream and size class and handed out
// again on that stream without a driver call (a driver alloc/free pair costs about a microsecond,
// a fifth of a small op); at most small_cache_bytes per device are kept.
inline constexpr size_t small_block_max = size_t(1) << 20;
inline constexpr size_t small_cache_bytes = size_t(64) << 20;
inline constexpr int small_classes = 12;  // 512 B << 0..11
struct StreamBlocks {
    CUstream stream;
    std::vector<uintptr_t> free[small_classes];
};

struct DeviceState {
    int index = 0;
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    cuda::DeviceProperties props;
    int arch = 0;             // 90 for sm_90
    unsigned max_blocks = 0;  // 256-thread blocks resident at once: one wave of a grid-stride loop
    CUstream stream = nullptr;  // ember's default (non-blocking) stream

    // Memory pools and statistics. Small blocks (<= small_block_max) and large ones come from
    // separate pools: a small block left live inside a large block's chunk would keep the whole
    // chunk reserved, so mixing them fragments the pool (see trim_if_fragmented).
    CUmemoryPool small_pool = nullptr, large_pool = nullptr;
    std::mutex mem_mu;
    LiveBlocks live;
    std::vector<StreamBlocks> small;  // cached small blocks per stream
    size_t small_cached = 0;
    size_t allocated = 0, peak_allocated = 0, peak_reserved = 0, limit = 0;
    std::atomic<size_t> graph_bytes{0};  // chunks held by CUDA graphs' private memory
    uint64_t num_allocs = 0, num_frees = 0, num_ooms = 0, num_retries = 0;

    // Loaded kernels.
    std::mutex kernel_mu;
    std::unordered_map<KernelKey, CUfunction, KernelKeyHash> kernels;
    std::vector<CUmodule> modules;  // unloaded never: functions may be cached by callers

    // Pinned staging buffers for large host<->device copies.
    std::mutex staging_mu;
    void* staging[2] = {};
    CUevent staging_done[2] = {};
};

int device_count();  // 0 when CUDA is unavailable
// The state of device `i`, initialized on first use; ValueError for an index out of range.
// Inline: every op looks its device up a few times, and after the first use it is one load.
extern std::atomic<DeviceState*> device_states[max_devices];
DeviceState& device_slow(int i);
inline DeviceState& device(int i) {
    if (unsigned(i) < unsigned(max_devices))
        if (DeviceState* d = device_states[i].load(std::memory_order_acquire)) return *d;
    return device_slow(i);
}
// Device i's state when it has been initialized, else nullptr (never initializes).
DeviceState* device_if_initialized(int i);
// Makes d's context current on the calling thread (cheap when it already is).
void bind(const DeviceState& d);
bool bind_noexcept(const DeviceState& d) noexcept;

int current_device();
void set_current_device(int i);
// The calling thread's current stream on `d` (its default stream unless set).
CUstream current_stream(const DeviceState& d);
void set_current_stream(int device, CUstream s);  // nullptr restores the default

// EMBER_LAUNCH_BLOCKING=1: every launch synchronizes and reports errors naming the op.
bool launch_blocking();

// Launches `f` on the current stream of `d` with 256-thread blocks. `dependent`: f calls
// grid_dependency() before touching memory, so a capture may launch it as a programmatic
// dependent of the kernel before it (DESIGN.md §13).
void launch(DeviceState& d, CUfunction f, unsigned grid_x, unsigned grid_y, void** args,
            std::string_view who, bool dependent = false);
// Grid size for a grid-stride loop over `work` items of 256-thread blocks: at most one wave.
inline unsigned grid_for(const DeviceState& d, int64_t work) {
    const int64_t blocks = (work + 255) / 256;
    return unsigned(blocks < int64_t(d.max_blocks) ? (blocks < 1 ? 1 : blocks) : d.max_blocks);
}

// Stream-ordered device memory from d's pool. Throws OutOfMemoryError after trimming the pool
// and retrying once.
void* allocate(DeviceState& d, size_t bytes);
void deallocate(DeviceState& d, void* p) noexcept;
size_t reserved_bytes(DeviceState& d);
// Returns the unused memory of both pools to the driver (frees the streams have not reached stay).
void trim_pools(DeviceState& d);
// Returns every cached small block to the pool (before trimming it, or when `stream` goes away:
// then only that stream's blocks). Needs d.mem_mu held.
void release_small_blocks(DeviceState& d, CUstream stream = nullptr);

// The kernel for `key`, loaded from memory, the disk cache or compiled from make() (a Program
// and the kernel's name), in that order.
struct KernelSource {
    Program program;
    std::string name;
};
CUfunction find_kernel(DeviceState& d, const KernelKey& key);
// Forgets d's loaded kernels in every thread (modules stay loaded).
void forget_kernels(DeviceState& d);
CUfunction load_kernel(DeviceState& d, const KernelKey& key, const KernelSource& src);
// The kernel of `src` from the package's shipped pack for the device's architecture
// (kernel_pack.hpp), loaded; null when the pack lacks it or there is none. No NVRTC needed.
CUfunction load_shipped(DeviceState& d, const KernelKey& key, const KernelSource& src);
bool is_shipped(const DeviceState& d, const Program& p);
// Loads items[0] and hands those of the rest that are missing (variants of the same kernel the
// caller expects to need soon) to background compiler threads, whose cubins load_kernel takes
// when they are asked for; returns items[0]'s function. Only a failure of items[0] is reported.
CUfunction load_kernels(DeviceState& d, std::vector<std::pair<KernelKey, KernelSource>>& items);
bool has_kernel(DeviceState& d, const KernelKey& key);
// Waits until the background compiles load_kernels started have finished.
void wait_background_compiles();
template <class Make>
CUfunction kernel(DeviceState& d, const KernelKey& key, Make&& make) {
    if (CUfunction f = find_kernel(d, key)) return f;
    return load_kernel(d, key, make());
}

// Process-wide kernel cache counters and the disk cache.
struct CacheCounters {
    std::atomic<uint64_t> memory_hits{0}, disk_hits{0}, compiles{0}, disk_rejects{0};
    std::atomic<uint64_t> prefetch_hits{0};  // compiled ahead by a background thread
    std::atomic<uint64_t> shipped_hits{0};   // loaded from the package's kernel packs
    std::atomic<uint64_t> compile_us{0};
    std::atomic<uint64_t> launches{0}, library_calls{0};
};
CacheCounters& cache_counters();
const DiskCache& disk_cache();

}  // namespace ember::gpu
