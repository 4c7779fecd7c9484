// dlopen/dlsym of libnvrtc and libcuda from the symbol lists in loader.hpp.
#include "backend/cuda/loader.hpp"

#include <dlfcn.h>

#include <initializer_list>
#include <map>
#include <mutex>

namespace ember::gpu {
namespace {

std::mutex paths_mutex;
PathFinder path_finder = nullptr;
std::map<std::string, std::string>& found_paths() {  // "kind:name" -> path
    static std::map<std::string, std::string> m;
    return m;
}
std::vector<std::pair<std::string, std::string>>& origins() {
    static std::vector<std::pair<std::string, std::string>> v;
    return v;
}

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
        void* lib = open_cuda_library(
            "nvrtc", {"libnvrtc.so.13", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"},
            reason);
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

void set_path_finder(PathFinder finder) {
    std::lock_guard<std::mutex> lock(paths_mutex);
    path_finder = finder;
    found_paths().clear();
}

std::string find_path(const char* kind, const char* name) {
    PathFinder f;
    const std::string key = std::string(kind) + ":" + name;
    {
        std::lock_guard<std::mutex> lock(paths_mutex);
        if (auto it = found_paths().find(key); it != found_paths().end()) return it->second;
        f = path_finder;
    }
    std::string path = f ? f(kind, name) : std::string();  // outside the lock: it may take ms
    std::lock_guard<std::mutex> lock(paths_mutex);
    return found_paths().emplace(key, path).first->second;
}

void* open_cuda_library(const char* name, std::initializer_list<const char*> fallbacks,
                        std::string& reason) {
    std::string errors;
    auto attempt = [&](const char* n) -> void* {
        if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) {
            std::lock_guard<std::mutex> lock(paths_mutex);
            origins().emplace_back(name, n);
            return h;
        }
        const char* e = dlerror();
        if (!errors.empty()) errors += "; ";
        errors += e ? e : n;
        return nullptr;
    };
    if (const std::string p = find_path("lib", name); !p.empty())
        if (void* h = attempt(p.c_str())) return h;
    for (const char* n : fallbacks)
        if (void* h = attempt(n)) return h;
    reason = errors;
    return nullptr;
}

std::vector<std::pair<std::string, std::string>> library_origins() {
    std::lock_guard<std::mutex> lock(paths_mutex);
    return origins();
}

const NvrtcApi* nvrtc() { return nvrtc_state().ok ? &nvrtc_state().api : nullptr; }
const std::string& nvrtc_unavailable_reason() { return nvrtc_state().reason; }
const DriverApi* driver() {
    static const DriverApi* const api = driver_state().ok ? &driver_state().api : nullptr;
    return api;
}
const std::string& driver_unavailable_reason() { return driver_state().reason; }

}  // namespace ember::gpu
