// What ember was built with and what it found at run time (Python's ember.show_config): the
// compiler, the CPU backend's BLAS, LAPACK and host threads, the CUDA driver and NVRTC.
#pragma once

#include <string>

namespace ember {

// The libraries the CPU backend loaded (src/backend/cpu): the BLAS path ("none" when there is
// none, and why), the LAPACK library ("none: " and why) and the threads of the host pool.
struct HostLibraries {
    std::string blas;
    bool blas_ilp64 = false;
    std::string blas_unavailable_reason;
    std::string lapack;
    int host_threads = 0;
};
HostLibraries host_libraries();

// The CUDA libraries the CUDA backend loaded (src/backend/cuda): -1 and the reason for a library
// that could not be loaded. Loading them is tried once per process; no GPU is needed.
struct CudaLibraries {
    int driver_version = -1;  // cuDriverGetVersion, e.g. 13000
    std::string driver_unavailable_reason;
    int nvrtc_major = -1, nvrtc_minor = -1;
    std::string nvrtc_unavailable_reason;
};
CudaLibraries cuda_libraries();

struct BuildInfo {
    std::string compiler;   // e.g. "gcc 12.2.0"
    long cxx_standard = 0;  // __cplusplus of the build
    HostLibraries host;
    CudaLibraries cuda;
};
BuildInfo build_info();

}  // namespace ember
