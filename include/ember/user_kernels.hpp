// User-written CUDA kernels (ember.RawKernel, RawModule, ElementwiseKernel, ReductionKernel):
// NVRTC compilation with name expressions through ember's kernel caches, modules, launches.
// No CUDA type appears here (modules and functions are opaque handles), so it is public API; the
// CUDA backend implements it (src/backend/cuda/user_kernels.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ember::cuda::user {

// A compiled module image (cubin) and the lowered (mangled) names of its name expressions.
struct CompiledModule {
    std::string image;
    std::vector<std::pair<std::string, std::string>> lowered;  // (name expression, lowered name)
};

// Compiles `source` with NVRTC for sm_<arch> (arch 0: the current device's, which needs CUDA).
// `options` are the user's NVRTC options; --gpu-architecture is added unless they name one, and
// the CUDA include directory is on the include path. Results are cached in memory and on disk
// (ember's kernel cache, keyed by source, name expressions, options, NVRTC version and arch).
// CompileError with the numbered source and the NVRTC log on failure; Error when NVRTC is missing.
std::shared_ptr<const CompiledModule> compile(const std::string& source, const std::string& name,
                                              const std::vector<std::string>& options,
                                              const std::vector<std::string>& name_expressions,
                                              int arch);

// The PTX of `source` for compute_<arch>, uncached (tests read kernel parameters from it).
std::string compile_ptx(const std::string& source, const std::string& name, int arch);

// The compute capability of `device` as major*10+minor (ValueError without CUDA).
int device_arch(int device);
// -I directories handed to NVRTC for user code (the CUDA toolkit's include and CCCL's).
std::vector<std::string> include_dirs();
// The text of a header ember embeds ("ember/ops/scalar.hpp": the op-table scalar bodies;
// "ember/half.hpp": the host's float16), for kernels compiled outside ember's own code paths
// (ember.cuda.jit's host mode); empty for any other name. No CUDA needed.
std::string embedded_header(const std::string& name);

struct Function {
    void* fn = nullptr;  // CUfunction
    int device = 0;
    std::string name;
    std::string label;  // names the kernel in error messages
    // Parameter sizes in bytes from cuFuncGetParamInfo (driver 12.4+); `known` false when the
    // driver cannot tell, and then arguments are not counted.
    bool known = false;
    std::vector<uint32_t> param_sizes;
};

// Loads a module image (cubin, PTX or fatbin) on `device`; modules stay loaded for the process
// (functions taken from them may be cached anywhere). Loading the same image twice on one device
// returns the first module.
void* load_module(const std::string& image, int device);
Function get_function(void* module, int device, const std::string& name);
// The device address and size in bytes of the __device__/__constant__ variable `name`.
std::pair<uintptr_t, size_t> module_global(void* module, int device, const std::string& name);

// cuFuncGetAttribute / cuFuncSetAttribute (CU_FUNC_ATTRIBUTE_* values).
int function_attribute(const Function& f, int attribute);
void set_function_attribute(const Function& f, int attribute, int value);

// Launches `f` on `stream` (nullptr: the current stream of f.device); args as cuLaunchKernel's
// kernelParams. Honors EMBER_LAUNCH_BLOCKING.
// cooperative: cuLaunchCooperativeKernel (every block resident at once, so the grid can
// synchronize); a ValueError before launching when the grid does not fit the device.
void launch(const Function& f, const unsigned grid[3], const unsigned block[3], unsigned shared_mem,
            void* stream, void** args, bool cooperative = false);

// The calling thread's current CUDA device, or -1 when CUDA is unavailable (never throws).
int current_device_or_none() noexcept;

// The number of multiprocessors of `device`.
int multiprocessor_count(int device);

}  // namespace ember::cuda::user
