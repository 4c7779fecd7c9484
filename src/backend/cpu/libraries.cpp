// ember::host_libraries: the BLAS and LAPACK the CPU backend loaded and its thread count.
#include "backend/cpu/blas.hpp"
#include "backend/cpu/lapack.hpp"
#include "ember/build_info.hpp"
#include "ember/error.hpp"
#include "support/thread_pool.hpp"

namespace ember {

HostLibraries host_libraries() {
    HostLibraries h;
    const host::Blas* b = host::blas();
    h.blas = b ? b->path : "none";
    h.blas_ilp64 = b && b->ilp64;
    h.blas_unavailable_reason = b ? "" : host::blas_unavailable_reason();
    try {
        h.lapack = host::lapack_library();
    } catch (const Error& e) {
        h.lapack = std::string("none: ") + e.what();
    }
    h.host_threads = host::num_threads();
    return h;
}

}  // namespace ember
