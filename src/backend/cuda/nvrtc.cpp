// NVRTC compilation to cubin with diagnostics that show the numbered source and the log.
#include "backend/cuda/nvrtc.hpp"

#include <cstdlib>

#include "backend/cuda/loader.hpp"

#ifndef EMBER_CUDA_CCCL_DIR
#define EMBER_CUDA_CCCL_DIR ""
#endif

namespace ember::gpu {

std::string cccl_include_dir() {
    if (const char* e = std::getenv("EMBER_CUDA_INCLUDE_DIR"); e && *e) return e;
    if (std::string found = find_path("include", "cccl"); !found.empty()) return found;
    return EMBER_CUDA_CCCL_DIR;  // the build machine's toolkit
}

std::vector<std::string> compile_options(int arch) {
    std::vector<std::string> o = code_options(arch);
    if (std::string inc = cccl_include_dir(); !inc.empty()) o.push_back("-I" + inc);
    return o;
}

std::vector<std::string> code_options(int arch) {
    return {
        "--gpu-architecture=sm_" + std::to_string(arch),
        "-std=c++17",
        // No contraction into FMA: the host compiles ISO C++ without contraction, and the CPU and
        // GPU backends should agree bit for bit on plain arithmetic.
        "--fmad=false",
    };
}

std::string number_lines(std::string_view source) {
    std::string out;
    int line = 1;
    size_t pos = 0;
    while (pos < source.size()) {
        size_t end = source.find('\n', pos);
        if (end == std::string_view::npos) end = source.size();
        std::string num = std::to_string(line++);
        out.append(num.size() < 5 ? 5 - num.size() : 0, ' ');
        out += num;
        out += "  ";
        out.append(source.substr(pos, end - pos));
        out += '\n';
        pos = end + 1;
    }
    return out;
}

std::string program_log(const NvrtcApi& api, nvrtcProgram prog) {
    size_t n = 0;
    if (api.nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n == 0) return {};
    std::string log(n, '\0');
    if (api.nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS) return {};
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
        log.pop_back();
    return log;
}

namespace {

struct ProgramGuard {
    const NvrtcApi& api;
    nvrtcProgram prog = nullptr;
    ~ProgramGuard() {
        if (prog) api.nvrtcDestroyProgram(&prog);
    }
};

}  // namespace

std::string compile_cubin(const Program& p, int arch) {
    const NvrtcApi* api = nvrtc();
    if (!api) throw Error("cannot compile CUDA kernels: " + nvrtc_unavailable_reason());
    std::vector<const char*> header_texts, header_names;
    for (const auto& [name, text] : p.headers) {
        header_names.push_back(name.c_str());
        header_texts.push_back(text.c_str());
    }
    ProgramGuard g{*api};
    nvrtcResult r =
        api->nvrtcCreateProgram(&g.prog, p.source.c_str(), p.name.c_str(), int(header_texts.size()),
                                header_texts.data(), header_names.data());
    if (r != NVRTC_SUCCESS)
        throw Error("nvrtcCreateProgram failed for " + p.name + ": " + api->nvrtcGetErrorString(r));
    std::vector<std::string> opts = compile_options(arch);
    // NVRTC's automatic precompiled header (kept in a per-process temporary directory) saves the
    // parse of the prelude and scalar.hpp for every kernel after the first with the same includes:
    // ~15% for real kernels, 0.5 s -> 70 ms for complex ones (CCCL's complex). It does not change
    // the generated code, so it is not part of the cache key.
    opts.push_back("-pch");
    std::vector<const char*> argv;
    for (const auto& o : opts)
        argv.push_back(o.c_str());
    r = api->nvrtcCompileProgram(g.prog, int(argv.size()), argv.data());
    if (r != NVRTC_SUCCESS) {
        std::string msg = "CUDA kernel compilation failed (" + p.name + ", " +
                          api->nvrtcGetErrorString(r) + ")\n--- source ---\n" +
                          number_lines(p.source) + "--- NVRTC log ---\n" +
                          program_log(*api, g.prog);
        throw CompileError(msg);
    }
    size_t n = 0;
    if ((r = api->nvrtcGetCUBINSize(g.prog, &n)) != NVRTC_SUCCESS)
        throw Error(std::string("nvrtcGetCUBINSize failed: ") + api->nvrtcGetErrorString(r));
    std::string cubin(n, '\0');
    if ((r = api->nvrtcGetCUBIN(g.prog, cubin.data())) != NVRTC_SUCCESS)
        throw Error(std::string("nvrtcGetCUBIN failed: ") + api->nvrtcGetErrorString(r));
    return cubin;
}

}  // namespace ember::gpu
