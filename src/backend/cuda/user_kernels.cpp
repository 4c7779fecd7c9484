// User kernels: NVRTC with name expressions, the memory and disk caches for whole modules,
// module loading, function attributes and launches with the user's grid, block and stream.
#include "ember/user_kernels.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "backend/backend.hpp"
#include "backend/cuda/codegen.hpp"
#include "backend/cuda/disk_cache.hpp"
#include "backend/cuda/observe.hpp"
#include "backend/cuda/runtime.hpp"
#include "ember/error.hpp"

namespace ember::cuda::user {

using namespace ember::gpu;

namespace {

// Entry points only user kernels need, resolved from the libraries loader.cpp opened (found
// through one of their symbols' addresses). cuFuncGetParamInfo (driver 12.4+) is optional.
struct ExtraApi {
    nvrtcResult (*nvrtcAddNameExpression)(nvrtcProgram, const char*) = nullptr;
    nvrtcResult (*nvrtcGetLoweredName)(nvrtcProgram, const char*, const char**) = nullptr;
    nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t*) = nullptr;
    nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char*) = nullptr;
    CUresult (*cuFuncSetAttribute)(CUfunction, int, int) = nullptr;
    CUresult (*cuFuncGetParamInfo)(CUfunction, size_t, size_t*, size_t*) = nullptr;
    CUresult (*cuLaunchCooperativeKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                          unsigned, unsigned, unsigned, CUstream, void**) = nullptr;
    CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int*, CUfunction, int,
                                                            size_t) = nullptr;
    CUresult (*cuModuleGetGlobal)(CUdeviceptr*, size_t*, CUmodule, const char*) = nullptr;
};

void* library_of(const void* symbol) {
    Dl_info info{};
    if (!symbol || !dladdr(symbol, &info) || !info.dli_fname) return nullptr;
    return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
}

const ExtraApi& extra() {
    static const ExtraApi a = [] {
        ExtraApi e;
        if (const NvrtcApi* nv = nvrtc()) {
            if (void* lib = library_of(reinterpret_cast<const void*>(nv->nvrtcVersion))) {
                e.nvrtcAddNameExpression = reinterpret_cast<decltype(e.nvrtcAddNameExpression)>(
                    dlsym(lib, "nvrtcAddNameExpression"));
                e.nvrtcGetLoweredName = reinterpret_cast<decltype(e.nvrtcGetLoweredName)>(
                    dlsym(lib, "nvrtcGetLoweredName"));
                e.nvrtcGetPTXSize =
                    reinterpret_cast<decltype(e.nvrtcGetPTXSize)>(dlsym(lib, "nvrtcGetPTXSize"));
                e.nvrtcGetPTX =
                    reinterpret_cast<decltype(e.nvrtcGetPTX)>(dlsym(lib, "nvrtcGetPTX"));
            }
        }
        if (const DriverApi* dr = driver()) {
            if (void* lib = library_of(reinterpret_cast<const void*>(dr->cuInit))) {
                e.cuFuncSetAttribute = reinterpret_cast<decltype(e.cuFuncSetAttribute)>(
                    dlsym(lib, "cuFuncSetAttribute"));
                e.cuFuncGetParamInfo = reinterpret_cast<decltype(e.cuFuncGetParamInfo)>(
                    dlsym(lib, "cuFuncGetParamInfo"));
                e.cuLaunchCooperativeKernel =
                    reinterpret_cast<decltype(e.cuLaunchCooperativeKernel)>(
                        dlsym(lib, "cuLaunchCooperativeKernel"));
                e.cuOccupancyMaxActiveBlocksPerMultiprocessor =
                    reinterpret_cast<decltype(e.cuOccupancyMaxActiveBlocksPerMultiprocessor)>(
                        dlsym(lib, "cuOccupancyMaxActiveBlocksPerMultiprocessor"));
                e.cuModuleGetGlobal = reinterpret_cast<decltype(e.cuModuleGetGlobal)>(
                    dlsym(lib, "cuModuleGetGlobal_v2"));
            }
        }
        return e;
    }();
    return a;
}

DeviceState& state(int device) {
    if (!backend::cuda())
        throw ValueError(
            "ember: custom CUDA kernels need a CUDA device, and CUDA is not available: " +
            backend::cuda_unavailable_reason());
    return gpu::device(device < 0 ? gpu::current_device() : device);
}

bool is_dir(const std::string& p) {
    struct stat st {};
    return !p.empty() && stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool names_arch(const std::vector<std::string>& options) {
    for (const std::string& o : options)
        if (o.starts_with("-arch") || o.starts_with("--gpu-architecture")) return true;
    return false;
}

// Disk entry: "EMBRUSR1", the count of lowered names, (length, text) pairs, then the image.
constexpr char blob_magic[8] = {'E', 'M', 'B', 'R', 'U', 'S', 'R', '1'};

void put_u32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
bool get_u32(const std::string& s, size_t& pos, uint32_t& v) {
    if (pos + 4 > s.size()) return false;
    std::memcpy(&v, s.data() + pos, 4);
    pos += 4;
    return true;
}
bool get_str(const std::string& s, size_t& pos, std::string& out) {
    uint32_t n = 0;
    if (!get_u32(s, pos, n) || pos + n > s.size()) return false;
    out.assign(s, pos, n);
    pos += n;
    return true;
}

std::string to_blob(const CompiledModule& m) {
    std::string s(blob_magic, 8);
    put_u32(s, uint32_t(m.lowered.size()));
    for (const auto& [e, l] : m.lowered) {
        put_u32(s, uint32_t(e.size()));
        s += e;
        put_u32(s, uint32_t(l.size()));
        s += l;
    }
    s += m.image;
    return s;
}

std::optional<CompiledModule> from_blob(const std::string& s) {
    if (s.size() < 12 || std::memcmp(s.data(), blob_magic, 8) != 0) return std::nullopt;
    size_t pos = 8;
    uint32_t n = 0;
    if (!get_u32(s, pos, n)) return std::nullopt;
    CompiledModule m;
    for (uint32_t i = 0; i < n; ++i) {
        std::string e, l;
        if (!get_str(s, pos, e) || !get_str(s, pos, l)) return std::nullopt;
        m.lowered.emplace_back(std::move(e), std::move(l));
    }
    if (pos >= s.size()) return std::nullopt;
    m.image.assign(s, pos, std::string::npos);
    return m;
}

// The header ElementwiseKernel and ReductionKernel sources include (`#include <ember/kernels.cuh>`;
// RawKernel code may include it too): ember's device prelude, then CuPy's names for the types
// the generated code uses. float16/bfloat16 hold their bits and convert through float with
// ember's rounding, so arithmetic on them happens in float, as CuPy's float16 does.
constexpr std::string_view user_prelude = R"EMBER_USER(// ember user-kernel prelude.
#pragma once
#include "ember/device_prelude.cuh"

#ifdef EMBER_DEVICE_COMPLEX
template <class T>
using complex = cuda::std::complex<T>;
#endif

template <class H>
struct _ember_half16 {
    unsigned short bits;
    _ember_half16() = default;
#define EMBER_HALF_FROM(T) \
    __device__ _ember_half16(T v) : bits(ember::dev::convert<H>(v).bits) {}
    EMBER_HALF_FROM(float)
    EMBER_HALF_FROM(double)
    EMBER_HALF_FROM(bool)
    EMBER_HALF_FROM(signed char)
    EMBER_HALF_FROM(unsigned char)
    EMBER_HALF_FROM(short)
    EMBER_HALF_FROM(unsigned short)
    EMBER_HALF_FROM(int)
    EMBER_HALF_FROM(unsigned int)
    EMBER_HALF_FROM(long)
    EMBER_HALF_FROM(unsigned long)
    EMBER_HALF_FROM(long long)
    EMBER_HALF_FROM(unsigned long long)
#undef EMBER_HALF_FROM
    __device__ operator float() const { return ember::dev::to_float(H{bits}); }
    __device__ _ember_half16& operator+=(float v) { return *this = float(*this) + v; }
    __device__ _ember_half16& operator-=(float v) { return *this = float(*this) - v; }
    __device__ _ember_half16& operator*=(float v) { return *this = float(*this) * v; }
    __device__ _ember_half16& operator/=(float v) { return *this = float(*this) / v; }
};
typedef _ember_half16<ember::float16> float16;
typedef _ember_half16<ember::bfloat16> bfloat16;

// `raw` parameters: the whole array, indexed by a C-order linear index (or N indices) through
// its strides (in elements).
template <class T, int N>
struct _ember_raw {
    T* data_;
    long long size_;
    long long contiguous_;
    long long shape_[N];
    long long strides_[N];
    __device__ T& operator[](long long i) const {
        if (contiguous_) return data_[i];
        long long off = 0;
        for (int d = N - 1; d >= 0; --d) {
            const long long c = i % shape_[d];
            i /= shape_[d];
            off += c * strides_[d];
        }
        return data_[off];
    }
    template <class I>
    __device__ T& operator[](const I (&idx)[N]) const {
        long long off = 0;
        for (int d = 0; d < N; ++d)
            off += (long long)idx[d] * strides_[d];
        return data_[off];
    }
    __device__ long long size() const { return size_; }
    __device__ const long long* shape() const { return shape_; }
    __device__ int ndim() const { return N; }
    __device__ T* data() const { return data_; }
};

// `_ind` in elementwise operations: the size of the iteration space.
struct _ember_index {
    long long size_;
    __device__ long long size() const { return size_; }
};
)EMBER_USER";

struct HashOf {
    size_t operator()(const Hash128& h) const {
        return size_t(h.lo ^ (h.hi * 0x9E3779B97F4A7C15ull));
    }
};

std::mutex compiled_mu;
std::unordered_map<Hash128, std::shared_ptr<const CompiledModule>, HashOf> compiled;

struct ProgramGuard {
    const NvrtcApi& api;
    nvrtcProgram prog = nullptr;
    ~ProgramGuard() {
        if (prog) api.nvrtcDestroyProgram(&prog);
    }
};

CompiledModule run_nvrtc(const NvrtcApi& api, const std::string& source, const std::string& name,
                         const std::vector<std::string>& opts,
                         const std::vector<std::string>& name_expressions, bool ptx = false) {
    const ExtraApi& ex = extra();
    if (!name_expressions.empty() && (!ex.nvrtcAddNameExpression || !ex.nvrtcGetLoweredName))
        throw Error("ember.RawModule: this NVRTC lacks nvrtcAddNameExpression");
    ProgramGuard g{api};
    const std::string file = name + ".cu";
    const std::string prelude_text(device_prelude_text());
    const std::string user_text(user_prelude);
    const std::string scalar_text(scalar_header_text());
    const char* header_texts[3] = {prelude_text.c_str(), user_text.c_str(), scalar_text.c_str()};
    const char* header_names[3] = {"ember/device_prelude.cuh", "ember/kernels.cuh",
                                   "ember/ops/scalar.hpp"};
    nvrtcResult r = api.nvrtcCreateProgram(&g.prog, source.c_str(), file.c_str(), 3, header_texts,
                                           header_names);
    if (r != NVRTC_SUCCESS)
        throw Error("nvrtcCreateProgram failed for " + file + ": " + api.nvrtcGetErrorString(r));
    for (const std::string& e : name_expressions)
        if ((r = ex.nvrtcAddNameExpression(g.prog, e.c_str())) != NVRTC_SUCCESS)
            throw ValueError("ember.RawModule: bad name expression '" + e +
                             "': " + api.nvrtcGetErrorString(r));
    std::vector<const char*> argv;
    for (const std::string& o : opts)
        argv.push_back(o.c_str());
    r = api.nvrtcCompileProgram(g.prog, int(argv.size()), argv.data());
    if (r != NVRTC_SUCCESS)
        throw CompileError("CUDA kernel compilation failed (" + file + ", " +
                           api.nvrtcGetErrorString(r) + ")\n--- source ---\n" +
                           number_lines(source) + "--- NVRTC log ---\n" + program_log(api, g.prog));
    CompiledModule m;
    size_t n = 0;
    if (ptx) {
        if (!ex.nvrtcGetPTXSize || !ex.nvrtcGetPTX) throw Error("this NVRTC lacks nvrtcGetPTX");
        if ((r = ex.nvrtcGetPTXSize(g.prog, &n)) != NVRTC_SUCCESS)
            throw Error(std::string("nvrtcGetPTXSize failed: ") + api.nvrtcGetErrorString(r));
        m.image.assign(n, '\0');
        if ((r = ex.nvrtcGetPTX(g.prog, m.image.data())) != NVRTC_SUCCESS)
            throw Error(std::string("nvrtcGetPTX failed: ") + api.nvrtcGetErrorString(r));
        while (!m.image.empty() && m.image.back() == '\0')
            m.image.pop_back();
        return m;
    }
    if ((r = api.nvrtcGetCUBINSize(g.prog, &n)) != NVRTC_SUCCESS || n == 0)
        throw Error(std::string("nvrtcGetCUBINSize failed (a virtual architecture such as "
                                "compute_XX gives no cubin; use sm_XX): ") +
                    api.nvrtcGetErrorString(r));
    m.image.assign(n, '\0');
    if ((r = api.nvrtcGetCUBIN(g.prog, m.image.data())) != NVRTC_SUCCESS)
        throw Error(std::string("nvrtcGetCUBIN failed: ") + api.nvrtcGetErrorString(r));
    for (const std::string& e : name_expressions) {
        const char* lowered = nullptr;
        if ((r = ex.nvrtcGetLoweredName(g.prog, e.c_str(), &lowered)) != NVRTC_SUCCESS || !lowered)
            throw ValueError("ember.RawModule: no lowered name for '" + e +
                             "': " + api.nvrtcGetErrorString(r));
        m.lowered.emplace_back(e, lowered);
    }
    return m;
}

}  // namespace

std::vector<std::string> include_dirs() {
    std::vector<std::string> dirs;
    const std::string cccl = cccl_include_dir();
    if (cccl.ends_with("/cccl")) {
        const std::string toolkit = cccl.substr(0, cccl.size() - 5);
        if (is_dir(toolkit)) dirs.push_back(toolkit);
    }
    if (is_dir(cccl)) dirs.push_back(cccl);
    return dirs;
}

int device_arch(int device) { return state(device).arch; }

std::string compile_ptx(const std::string& source, const std::string& name, int arch) {
    const NvrtcApi* nv = nvrtc();
    if (!nv) throw Error("ember: cannot compile CUDA kernels: " + nvrtc_unavailable_reason());
    std::vector<std::string> opts = {"--gpu-architecture=compute_" + std::to_string(arch)};
    for (const std::string& d : include_dirs())
        opts.push_back("-I" + d);
    return run_nvrtc(*nv, source, name, opts, {}, true).image;
}

int multiprocessor_count(int device) { return state(device).props.multi_processor_count; }

std::shared_ptr<const CompiledModule> compile(const std::string& source, const std::string& name,
                                              const std::vector<std::string>& options,
                                              const std::vector<std::string>& name_expressions,
                                              int arch) {
    const NvrtcApi* nv = nvrtc();
    if (!nv) throw Error("ember: cannot compile CUDA kernels: " + nvrtc_unavailable_reason());
    // Compiles for an explicit architecture need no device (tests, tools) and stay out of the
    // process's kernel cache counters, which count the work done for this process's devices.
    const bool counted = arch <= 0;
    if (arch <= 0) arch = device_arch(-1);
    std::vector<std::string> opts;
    if (!names_arch(options)) opts.push_back("--gpu-architecture=sm_" + std::to_string(arch));
    for (const std::string& d : include_dirs())
        opts.push_back("-I" + d);
    opts.insert(opts.end(), options.begin(), options.end());

    Hasher h;
    h.add("ember-user-module-v1").add(name).add(source);
    h.add(device_prelude_text()).add(user_prelude);
    h.add(int64_t(opts.size()));
    for (const std::string& o : opts)
        h.add(o);
    h.add(int64_t(name_expressions.size()));
    for (const std::string& e : name_expressions)
        h.add(e);
    h.add(nv->major).add(nv->minor).add(arch);
    const Hash128 key = h.digest();

    CacheCounters& c = cache_counters();
    {
        std::lock_guard lk(compiled_mu);
        if (auto it = compiled.find(key); it != compiled.end()) {
            if (counted) c.memory_hits.fetch_add(1, std::memory_order_relaxed);
            return it->second;
        }
    }
    std::shared_ptr<const CompiledModule> m;
    bool rejected = false;
    if (std::optional<std::string> blob = disk_cache().load(key, &rejected)) {
        if (std::optional<CompiledModule> got = from_blob(*blob)) {
            m = std::make_shared<const CompiledModule>(std::move(*got));
            if (counted) c.disk_hits.fetch_add(1);
        } else {
            rejected = true;
        }
    }
    if (rejected && counted) c.disk_rejects.fetch_add(1);
    if (!m) {
        static const bool dump = [] {
            const char* e = std::getenv("EMBER_DUMP_SOURCE");
            return e && *e && std::strcmp(e, "0") != 0;
        }();
        if (dump)
            std::fprintf(stderr, "--- ember: source of %s ---\n%s\n", name.c_str(), source.c_str());
        const auto t0 = std::chrono::steady_clock::now();
        m = std::make_shared<const CompiledModule>(
            run_nvrtc(*nv, source, name, opts, name_expressions));
        if (counted) {
            c.compile_us.fetch_add(uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                                                std::chrono::steady_clock::now() - t0)
                                                .count()));
            c.compiles.fetch_add(1);
        }
        disk_cache().store(key, to_blob(*m));
    }
    std::lock_guard lk(compiled_mu);
    return compiled.emplace(key, m).first->second;
}

namespace {
std::mutex modules_mu;
std::unordered_map<Hash128, CUmodule, HashOf> modules;  // by (image, device); never unloaded
}  // namespace

void* load_module(const std::string& image, int device) {
    DeviceState& d = state(device);
    const Hash128 key = Hasher().add("module").add(image).add(d.index).digest();
    {
        std::lock_guard lk(modules_mu);
        if (auto it = modules.find(key); it != modules.end()) return it->second;
    }
    bind(d);
    // PTX must end in a NUL byte: std::string's data() has one past the end.
    CUmodule mod = nullptr;
    check(api().cuModuleLoadData(&mod, image.data()), "cuModuleLoadData");
    std::lock_guard lk(modules_mu);
    return modules.emplace(key, mod).first->second;
}

std::pair<uintptr_t, size_t> module_global(void* module, int device, const std::string& name) {
    DeviceState& d = state(device);
    bind(d);
    const auto get = extra().cuModuleGetGlobal;
    if (!get) throw Error("ember.RawModule.get_global: the CUDA driver has no cuModuleGetGlobal");
    CUdeviceptr ptr = 0;
    size_t bytes = 0;
    const CUresult r = get(&ptr, &bytes, static_cast<CUmodule>(module), name.c_str());
    if (r != CUDA_SUCCESS)
        throw ValueError("ember.RawModule.get_global: no global named '" + name +
                         "' in the module (" + error_text(r) +
                         "); C++ globals need extern \"C\" or a name expression");
    return {uintptr_t(ptr), bytes};
}

Function get_function(void* module, int device, const std::string& name) {
    DeviceState& d = state(device);
    bind(d);
    Function f;
    f.device = d.index;
    f.name = name;
    CUfunction fn = nullptr;
    const CUresult r = api().cuModuleGetFunction(&fn, static_cast<CUmodule>(module), name.c_str());
    if (r != CUDA_SUCCESS)
        throw ValueError("ember.RawModule.get_function: no kernel named '" + name +
                         "' in the module (" + error_text(r) +
                         "); C++ kernels need extern \"C\" or a name expression");
    f.fn = fn;
    name_kernel(fn, name);
    if (const auto info = extra().cuFuncGetParamInfo) {
        f.known = true;
        for (size_t i = 0;; ++i) {
            size_t offset = 0, size = 0;
            if (info(fn, i, &offset, &size) != CUDA_SUCCESS) break;
            f.param_sizes.push_back(uint32_t(size));
        }
    }
    return f;
}

int function_attribute(const Function& f, int attribute) {
    DeviceState& d = state(f.device);
    bind(d);
    int v = 0;
    check(api().cuFuncGetAttribute(&v, attribute, static_cast<CUfunction>(f.fn)),
          "cuFuncGetAttribute");
    return v;
}

void set_function_attribute(const Function& f, int attribute, int value) {
    DeviceState& d = state(f.device);
    bind(d);
    if (!extra().cuFuncSetAttribute) throw Error("ember: the CUDA driver lacks cuFuncSetAttribute");
    check(extra().cuFuncSetAttribute(static_cast<CUfunction>(f.fn), attribute, value),
          "cuFuncSetAttribute");
}

std::string embedded_header(const std::string& name) {
    if (name == "ember/ops/scalar.hpp") return std::string(scalar_header_text());
    if (name == "ember/half.hpp") return std::string(half_header_text());
    return {};
}

// A grid that synchronizes as a whole must fit on the device at once.
void check_cooperative(DeviceState& d, const Function& f, const unsigned grid[3],
                       const unsigned block[3], unsigned shared_mem) {
    const ExtraApi& e = extra();
    if (!e.cuLaunchCooperativeKernel || !e.cuOccupancyMaxActiveBlocksPerMultiprocessor)
        throw Error("ember: this CUDA driver lacks cooperative launches (grid sync)");
    int per_sm = 0;
    const int threads = int(block[0] * block[1] * block[2]);
    check(e.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, static_cast<CUfunction>(f.fn),
                                                        threads, shared_mem),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    const unsigned long long most =
        (unsigned long long)per_sm * (unsigned long long)d.props.multi_processor_count;
    const unsigned long long blocks =
        (unsigned long long)grid[0] * grid[1] * (unsigned long long)grid[2];
    if (blocks > most)
        throw ValueError(f.label + ": a kernel that synchronizes the grid needs all its blocks " +
                         "on the device at once: at most " + std::to_string(most) + " blocks of " +
                         std::to_string(threads) + " threads here (" + std::to_string(per_sm) +
                         " per multiprocessor), got " + std::to_string(blocks));
}

int current_device_or_none() noexcept { return backend::cuda() ? gpu::current_device() : -1; }

void launch(const Function& f, const unsigned grid[3], const unsigned block[3], unsigned shared_mem,
            void* stream, void** args, bool cooperative) {
    DeviceState& d = gpu::device(f.device);
    bind(d);
    const DriverApi& a = *driver();
    const CUstream s = stream ? static_cast<CUstream>(stream) : current_stream(d);
    const auto fn = static_cast<CUfunction>(f.fn);
    if (cooperative) check_cooperative(d, f, grid, block, shared_mem);
    const uint64_t seq = note_launch(d.index, fn, f.name);
    CUevent timing = debug::profiling() && !gpu::capturing_pool() ? profile_before(d, s) : nullptr;
    CUresult r = cooperative
                     ? extra().cuLaunchCooperativeKernel(fn, grid[0], grid[1], grid[2], block[0],
                                                         block[1], block[2], shared_mem, s, args)
                     : a.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                        shared_mem, s, args, nullptr);
    if (timing) profile_after(d, s, fn, timing);
    if (r != CUDA_SUCCESS) {
        forget_launch(seq);
        raise(r, "launching the custom kernel " + f.name);
    }
    if (launch_blocking() && !gpu::capturing_pool()) {
        r = a.cuStreamSynchronize(s);
        if (r != CUDA_SUCCESS) raise(r, "the custom kernel " + f.name);
        note_synced(d.index);
    }
}

}  // namespace ember::cuda::user
