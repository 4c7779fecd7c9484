// dlopen/dlsym of libnvrtc and libcuda from the symbol lists in loader.hpp.
#include "backend/cuda/loader.hpp"

#include <dlfcn.h>

#include <initializer_list>

namespace ember::gpu {
namespace {

// Opens the first library of `names` that loads; on failure returns nullptr and sets `reason`.
void* open_first(std::initializer_list<const char*> names, std::string& reason) {
    std::string errors;
    for (const char* n : names) {
        if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) return h;
        const char* e = dlerror();
        if (!errors.empty()) errors += "; ";
        errors += e ? e : n;
    }
    reason = errors;
    return nullptr;
}

template <class Fn>
bool resolve(void* lib, const char* symbol, Fn& fn, const char* libname, std::string& reason) {
    fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
    if (fn) return true;
    reason = std::string(libname) + " lacks the symbol " + symbol + " (too old a version?)";
    return false;
}

struct NvrtcState {
    NvrtcApi api;
    std::string reason;
    bool ok = false;

    NvrtcState() {
        void* lib = open_first(
            {"libnvrtc.so.13", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"}, reason);
        if (!lib) {
            reason = "NVRTC could not be loaded: " + reason;
            return;
        }
#define EMBER_RESOLVE(member, symbol, ret, params) \
    if (!resolve(lib, symbol, api.member, "libnvrtc", reason)) return;
        EMBER_NVRTC_SYMBOLS(EMBER_RESOLVE)
        if (api.nvrtcVersion(&api.major, &api.minor) != NVRTC_SUCCESS) {
            reason = "nvrtcVersion failed";
            return;
        }
        ok = true;  // the library stays loaded for the life of the process
    }
};

struct DriverState {
    DriverApi api;
    std::string reason;
    bool ok = false;

    DriverState() {
        void* lib = open_first({"libcuda.so.1", "libcuda.so"}, reason);
        if (!lib) {
            reason = "the CUDA driver (libcuda.so.1) could not be loaded: " + reason;
            return;
        }
        EMBER_DRIVER_SYMBOLS(EMBER_RESOLVE)
#undef EMBER_RESOLVE
        if (CUresult r = api.cuInit(0); r != CUDA_SUCCESS) {
            const char* name = nullptr;
            api.cuGetErrorName(r, &name);
            reason = std::string("cuInit failed: ") + (name ? name : std::to_string(r));
            return;
        }
        api.cuDriverGetVersion(&api.version);
        ok = true;
    }
};

const NvrtcState& nvrtc_state() {
    static const NvrtcState s;
    return s;
}
const DriverState& driver_state() {
    static const DriverState s;
    return s;
}

}  // namespace

const NvrtcApi* nvrtc() { return nvrtc_state().ok ? &nvrtc_state().api : nullptr; }
const std::string& nvrtc_unavailable_reason() { return nvrtc_state().reason; }
const DriverApi* driver() {
    static const DriverApi* const api = driver_state().ok ? &driver_state().api : nullptr;
    return api;
}
const std::string& driver_unavailable_reason() { return driver_state().reason; }

}  // namespace ember::gpu
