// ember::cuda_libraries: the CUDA driver and NVRTC versions the loader found, or why not.
#include "backend/cuda/loader.hpp"
#include "ember/build_info.hpp"

namespace ember {

CudaLibraries cuda_libraries() {
    CudaLibraries c;
    if (const gpu::DriverApi* drv = gpu::driver())
        c.driver_version = drv->version;
    else
        c.driver_unavailable_reason = gpu::driver_unavailable_reason();
    if (const gpu::NvrtcApi* nv = gpu::nvrtc()) {
        c.nvrtc_major = nv->major;
        c.nvrtc_minor = nv->minor;
    } else {
        c.nvrtc_unavailable_reason = gpu::nvrtc_unavailable_reason();
    }
    return c;
}

}  // namespace ember
