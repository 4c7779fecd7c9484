// Loading cuFFT, caching its plans and running batched 1-D transforms (see cufft.hpp).
#include "backend/cuda/cufft.hpp"
#include "backend/cuda/loader.hpp"

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <dlfcn.h>

#include "backend/cuda/runtime.hpp"
#include "ember/error.hpp"

namespace ember::gpu {

namespace {

// cufft.h's types and values, declared from its documented ABI (cufftType is a C enum: an int).
using Handle = int;  // cufftHandle
using Status = int;  // cufftResult
enum : int {
    cufft_r2c = 0x2a,
    cufft_c2r = 0x2c,
    cufft_c2c = 0x29,
    cufft_d2z = 0x6a,
    cufft_z2d = 0x6c,
    cufft_z2z = 0x69,
};
enum : int { cufft_forward = -1, cufft_inverse = 1 };
enum : Status { cufft_success = 0, cufft_alloc_failed = 2 };

// Plans kept at once over all devices; the least recently used one goes first. Each holds device
// memory of its own (twiddle tables, about the size of one transform), never its work area.
constexpr size_t max_plans = 32;

struct CufftApi {
    Status (*create)(Handle*);
    Status (*destroy)(Handle);
    Status (*set_auto_allocation)(Handle, int);
    Status (*make_plan_many64)(Handle, int rank, long long* n, long long* inembed,
                               long long istride, long long idist, long long* onembed,
                               long long ostride, long long odist, int type, long long batch,
                               size_t* work_size);
    Status (*set_work_area)(Handle, void*);
    Status (*set_stream)(Handle, CUstream);
    Status (*exec_c2c)(Handle, void*, void*, int);
    Status (*exec_r2c)(Handle, void*, void*);
    Status (*exec_c2r)(Handle, void*, void*);
    Status (*exec_z2z)(Handle, void*, void*, int);
    Status (*exec_d2z)(Handle, void*, void*);
    Status (*exec_z2d)(Handle, void*, void*);
    std::string reason;  // why cuFFT cannot be used ("" when it can)
};

template <class F>
void load(void* h, F& f, const char* sym, std::string& missing) {
    f = reinterpret_cast<F>(dlsym(h, sym));
    if (!f) missing += (missing.empty() ? "" : ", ") + std::string(sym);
}

const CufftApi& cufft() {
    static const CufftApi a = [] {
        CufftApi r{};
        std::string errors;
        void* h = open_cuda_library("cufft",
                                    {"libcufft.so.12", "libcufft.so.11", "libcufft.so",
                                     "/usr/local/cuda/lib64/libcufft.so.12",
                                     "/usr/local/cuda/targets/x86_64-linux/lib/libcufft.so.12",
                                     "/usr/local/cuda/lib64/libcufft.so"},
                                    errors);
        if (!h) {
            r.reason = "cuFFT could not be loaded: " + errors;
            return r;
        }
        std::string missing;
        load(h, r.create, "cufftCreate", missing);
        load(h, r.destroy, "cufftDestroy", missing);
        load(h, r.set_auto_allocation, "cufftSetAutoAllocation", missing);
        load(h, r.make_plan_many64, "cufftMakePlanMany64", missing);
        load(h, r.set_work_area, "cufftSetWorkArea", missing);
        load(h, r.set_stream, "cufftSetStream", missing);
        load(h, r.exec_c2c, "cufftExecC2C", missing);
        load(h, r.exec_r2c, "cufftExecR2C", missing);
        load(h, r.exec_c2r, "cufftExecC2R", missing);
        load(h, r.exec_z2z, "cufftExecZ2Z", missing);
        load(h, r.exec_d2z, "cufftExecD2Z", missing);
        load(h, r.exec_z2d, "cufftExecZ2D", missing);
        if (!missing.empty())
            r.reason = "libcufft lacks " + missing + " (cuFFT 10 or newer is needed)";
        return r;
    }();
    if (!a.reason.empty()) throw Error("ember.fft: " + a.reason);
    return a;
}

const char* status_name(Status s) {
    switch (s) {
        case 1:
            return "CUFFT_INVALID_PLAN";
        case 2:
            return "CUFFT_ALLOC_FAILED";
        case 3:
            return "CUFFT_INVALID_TYPE";
        case 4:
            return "CUFFT_INVALID_VALUE";
        case 5:
            return "CUFFT_INTERNAL_ERROR";
        case 6:
            return "CUFFT_EXEC_FAILED";
        case 7:
            return "CUFFT_SETUP_FAILED";
        case 8:
            return "CUFFT_INVALID_SIZE";
        case 9:
            return "CUFFT_UNALIGNED_DATA";
        case 0xB:
            return "CUFFT_INVALID_DEVICE";
        case 0xD:
            return "CUFFT_NO_WORKSPACE";
        case 0xE:
            return "CUFFT_NOT_IMPLEMENTED";
        case 0x10:
            return "CUFFT_NOT_SUPPORTED";
        case 0x11:
            return "CUFFT_MISSING_DEPENDENCY";
        default:
            return nullptr;
    }
}

void cufft_check(Status s, const char* what) {
    if (s == cufft_success) return;
    const char* nm = status_name(s);
    throw CudaError("ember.fft: " + std::string(what) + " failed with cuFFT status " +
                    std::to_string(s) + (nm ? " (" + std::string(nm) + ")" : std::string()));
}

int plan_type(FftKind kind, bool dbl) {
    switch (kind) {
        case FftKind::c2c:
            return dbl ? cufft_z2z : cufft_c2c;
        case FftKind::r2c:
            return dbl ? cufft_d2z : cufft_r2c;
        case FftKind::c2r:
            return dbl ? cufft_z2d : cufft_c2r;
    }
    return cufft_c2c;
}

struct Key {
    int device = 0;
    int type = 0;
    int64_t n = 0, batch = 0;
    friend bool operator==(const Key&, const Key&) = default;
};

// One cuFFT plan without a work area of its own (auto allocation is off): each call takes one
// from ember's stream-ordered pool for as long as its stream needs it.
struct Plan {
    Key key;
    Handle handle = 0;
    bool created = false;
    bool used = false;  // executed at least once (guarded by mu)
    size_t work_bytes = 0;
    // A plan is not safe for concurrent use: a call sets its stream and work area, then enqueues
    // the transform, all under this lock. Enqueued work keeps the pointers it was launched with.
    std::mutex mu;

    Plan() = default;
    Plan(const Plan&) = delete;
    Plan& operator=(const Plan&) = delete;
    ~Plan() {
        if (!created) return;
        // Transforms enqueued with this plan may still run and read its device tables: wait for
        // the device before cuFFT frees them. Plans go rarely (LRU eviction, clear), so the wait
        // costs little overall; a plan never executed needs none.
        DeviceState* d = device_if_initialized(key.device);
        if (!d || !bind_noexcept(*d)) return;
        if (used)
            if (const DriverApi* drv = driver()) drv->cuCtxSynchronize();
        cufft().destroy(handle);
    }
};

// The process's plans, most recently used first. Never destroyed: a plan must not outlive the
// driver, and static destructors at exit run after it may be gone.
struct PlanCache {
    std::mutex mu;
    std::list<std::shared_ptr<Plan>> lru;
};
PlanCache& plan_cache() {
    static PlanCache* c = new PlanCache;
    return *c;
}

// Makes a plan for `key`; Status of cufftMakePlanMany64 through `status` (a plan only on success).
std::shared_ptr<Plan> try_make_plan(const CufftApi& a, const Key& key, Status& status) {
    auto p = std::make_shared<Plan>();
    p->key = key;
    cufft_check(a.create(&p->handle), "cufftCreate");
    p->created = true;
    cufft_check(a.set_auto_allocation(p->handle, 0), "cufftSetAutoAllocation");
    const bool r2c = key.type == cufft_r2c || key.type == cufft_d2z;
    const bool c2r = key.type == cufft_c2r || key.type == cufft_z2d;
    long long n = key.n;
    // Explicit layouts (rows of in_len and out_len elements, one after another): with null
    // embeds cuFFT would assume its in-place padded layout for the real side.
    long long in_len = c2r ? key.n / 2 + 1 : key.n;
    long long out_len = r2c ? key.n / 2 + 1 : key.n;
    size_t work = 0;
    status = a.make_plan_many64(p->handle, 1, &n, &in_len, 1, in_len, &out_len, 1, out_len,
                                key.type, key.batch, &work);
    if (status != cufft_success) return nullptr;
    p->work_bytes = work;
    return p;
}

std::shared_ptr<Plan> make_plan(const CufftApi& a, DeviceState& d, const Key& key) {
    bind(d);  // a plan belongs to the device current when it is made
    Status s = cufft_success;
    std::shared_ptr<Plan> p = try_make_plan(a, key, s);
    if (!p && s == cufft_alloc_failed) {
        // Plans allocate their tables with the runtime, outside ember's pool: give the pool's
        // cached memory back to the driver and try once more.
        trim_pools(d);
        p = try_make_plan(a, key, s);
    }
    cufft_check(s, "cufftMakePlanMany64");
    return p;
}

std::shared_ptr<Plan> plan_for(const CufftApi& a, DeviceState& d, const Key& key) {
    PlanCache& c = plan_cache();
    {
        std::lock_guard lk(c.mu);
        for (auto it = c.lru.begin(); it != c.lru.end(); ++it)
            if ((*it)->key == key) {
                c.lru.splice(c.lru.begin(), c.lru, it);
                return c.lru.front();
            }
    }
    // Planning takes milliseconds (and may compile kernels): not under the cache's lock.
    std::shared_ptr<Plan> p = make_plan(a, d, key);
    std::vector<std::shared_ptr<Plan>> evicted;  // destroyed after the lock is released
    std::lock_guard lk(c.mu);
    for (const std::shared_ptr<Plan>& q : c.lru)
        if (q->key == key) {  // another thread made the same plan meanwhile: use the cached one
            evicted.push_back(std::move(p));
            return q;
        }
    c.lru.push_front(p);
    while (c.lru.size() > max_plans) {
        // A plan still in use elsewhere lives on in its shared_ptr until that call returns.
        evicted.push_back(std::move(c.lru.back()));
        c.lru.pop_back();
    }
    return p;
}

// A work area from ember's pool on the current stream, freed stream-ordered after the transform.
struct WorkArea {
    DeviceState& d;
    void* p = nullptr;
    WorkArea(DeviceState& dev, size_t bytes) : d(dev) {
        if (bytes) p = allocate(d, bytes);
    }
    WorkArea(const WorkArea&) = delete;
    WorkArea& operator=(const WorkArea&) = delete;
    ~WorkArea() {
        if (p) deallocate(d, p);
    }
};

}  // namespace

void cufft_execute(int device, FftKind kind, bool dbl, int64_t n, int64_t batch, const void* in,
                   void* out, bool inverse) {
    if (n < 1 || batch < 1)
        throw ValueError("ember.fft: cuFFT needs n >= 1 and batch >= 1, got n=" +
                         std::to_string(n) + ", batch=" + std::to_string(batch));
    const CufftApi& a = cufft();
    DeviceState& d = gpu::device(device);
    bind(d);
    const CUstream s = current_stream(d);
    const Key key{d.index, plan_type(kind, dbl), n, batch};
    const std::shared_ptr<Plan> p = plan_for(a, d, key);
    bind(d);  // destroying an evicted plan of another device made that device current
    // The work area is declared before the lock so that it is freed after it is released; its
    // free is ordered on `s` after the transform, so the memory is not reused while it runs.
    std::unique_ptr<WorkArea> work;
    std::lock_guard lk(p->mu);
    p->used = true;
    cufft_check(a.set_stream(p->handle, s), "cufftSetStream");
    work = std::make_unique<WorkArea>(d, p->work_bytes);
    cufft_check(a.set_work_area(p->handle, work->p), "cufftSetWorkArea");
    void* i = const_cast<void*>(in);  // cuFFT's prototypes are not const; only c2r writes it
    const int dir = inverse ? cufft_inverse : cufft_forward;
    switch (kind) {
        case FftKind::c2c:
            if (dbl)
                cufft_check(a.exec_z2z(p->handle, i, out, dir), "cufftExecZ2Z");
            else
                cufft_check(a.exec_c2c(p->handle, i, out, dir), "cufftExecC2C");
            break;
        case FftKind::r2c:
            if (dbl)
                cufft_check(a.exec_d2z(p->handle, i, out), "cufftExecD2Z");
            else
                cufft_check(a.exec_r2c(p->handle, i, out), "cufftExecR2C");
            break;
        case FftKind::c2r:
            if (dbl)
                cufft_check(a.exec_z2d(p->handle, i, out), "cufftExecZ2D");
            else
                cufft_check(a.exec_c2r(p->handle, i, out), "cufftExecC2R");
            break;
    }
    if (launch_blocking() && !capturing_pool())
        check(api().cuStreamSynchronize(s), "ember.fft (cuFFT transform)");
}

int cufft_cached_plans() {
    PlanCache& c = plan_cache();
    std::lock_guard lk(c.mu);
    return int(c.lru.size());
}

void cufft_clear_plans() {
    std::list<std::shared_ptr<Plan>> gone;
    {
        PlanCache& c = plan_cache();
        std::lock_guard lk(c.mu);
        gone.swap(c.lru);
    }
}

}  // namespace ember::gpu

namespace ember {

// The public plan-cache API (ember/fft.hpp): the plans are the CUDA backend's alone.
int fft_plan_cache_size() { return gpu::cufft_cached_plans(); }
void fft_plan_cache_clear() { gpu::cufft_clear_plans(); }

}  // namespace ember
