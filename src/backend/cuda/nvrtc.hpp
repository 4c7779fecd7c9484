// Compiling generated CUDA C++ to cubin with NVRTC (loaded at run time).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/cuda/loader.hpp"
#include "ember/error.hpp"

namespace ember::gpu {

using ember::CompileError;

// One translation unit for NVRTC: its source and the headers it includes by name (handed to NVRTC
// in memory, so the same text the host compiled is what the device compiles).
struct Program {
    std::string name;  // shown in diagnostics, e.g. "ember_map.cu"
    std::string source;
    std::vector<std::pair<std::string, std::string>> headers;  // (include name, text)
};

// The options NVRTC gets for `arch` (90 = sm_90): part of the kernel-cache key.
std::vector<std::string> compile_options(int arch);
// Those of them that shape the code (all but the -I of CCCL's directory): the shipped packs' key.
std::vector<std::string> code_options(int arch);
// The CCCL include directory recorded at configure time (EMBER_CUDA_INCLUDE_DIR overrides it).
std::string cccl_include_dir();

// Compiles `p` to a cubin for sm_<arch>. Throws CompileError on a compile failure and Error when
// NVRTC cannot be loaded (naming the reason).
std::string compile_cubin(const Program& p, int arch);

// NVRTC's log for `prog`, trailing NULs and newlines removed (empty when there is none).
std::string program_log(const NvrtcApi& api, nvrtcProgram prog);

// `source` with a right-aligned line number before every line.
std::string number_lines(std::string_view source);

}  // namespace ember::gpu
