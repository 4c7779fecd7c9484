// BLAS for the CPU backend, loaded at run time: the OpenBLAS that NumPy brings when it is loaded
// in the process (the same library, so the same speed as NumPy's matmul), else EMBER_BLAS, else
// the system's libopenblas / libblas. 32- and 64-bit integer interfaces are both handled.
#pragma once

#include <cstdint>
#include <string>

#include "ember/dtype.hpp"

namespace ember::host {

struct Blas {
    std::string path;
    bool ilp64 = false;
    // The dlopen handle and the symbol-name variant found (e.g. "scipy_" and "64_" for NumPy's
    // OpenBLAS), so LAPACK (lapack.cpp) can be resolved from the same library.
    void* handle = nullptr;
    const char* prefix = "";
    const char* suffix = "";
    void* gemm[4] = {};  // cblas_{s,d,c,z}gemm
};

// The library in use, or nullptr; blas_unavailable_reason() says why.
const Blas* blas();
const std::string& blas_unavailable_reason();

// Row-major C (m x n, leading dimension ldc) = op(A) @ op(B) in float32, float64, complex64 or
// complex128; op transposes when the flag is set; lda/ldb as BLAS defines them.
void gemm(DType t, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
          int64_t lda, const void* b, int64_t ldb, void* c, int64_t ldc);

}  // namespace ember::host
