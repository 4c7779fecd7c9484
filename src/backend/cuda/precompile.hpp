// Ahead-of-time compilation of the common kernels into the on-disk kernel cache.
#pragma once

#include <string>
#include <vector>

#include "backend/cuda/disk_cache.hpp"
#include "backend/cuda/runtime.hpp"

namespace ember::gpu {

// The programs of the kernels most code meets: every op-table map kernel on its natural dtypes
// (and float16/bfloat16 storage around float32), casts between all dtype pairs, copies and fills,
// arange; each in its layout_variants(). Identical to what the backend compiles on first use.
std::vector<KernelSource> common_kernels();

struct PrecompileResult {
    uint64_t kernels = 0, compiled = 0, cached = 0;
    double seconds = 0;
};
// Compiles those of `kernels` missing from `cache` for sm_<arch> on `threads` threads (0: one
// per core). Throws CompileError naming the first failure.
PrecompileResult precompile_into(const DiskCache& cache, int arch, int threads,
                                 const std::vector<KernelSource>& kernels);

}  // namespace ember::gpu
