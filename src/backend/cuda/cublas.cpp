// Loading cuBLAS and running batched GEMMs with it (see cublas.hpp).
#include "backend/cuda/cublas.hpp"
#include "backend/cuda/loader.hpp"
#include "backend/cuda/observe.hpp"

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include <dlfcn.h>

#include "ember/error.hpp"
#include "ember/ops.hpp"

namespace ember::gpu {

namespace {

using Handle = void*;
using Status = int;
enum : int { op_n = 0, op_t = 1, gemm_default = -1 };
enum : int { r16f = 2, r16bf = 14, r32f = 0, r64f = 1, c32f = 4, c64f = 5 };
enum : int { compute_32f = 68, compute_32f_tf32 = 77, compute_64f = 70 };

struct CublasApi {
    Status (*create)(Handle*);
    Status (*set_stream)(Handle, CUstream);
    // cublasGemmStridedBatchedEx_64
    Status (*gemm)(Handle, int, int, int64_t, int64_t, int64_t, const void* alpha, const void* A,
                   int, int64_t lda, long long stride_a, const void* B, int, int64_t ldb,
                   long long stride_b, const void* beta, void* C, int, int64_t ldc,
                   long long stride_c, int64_t batch, int compute, int algo);
    std::string reason;
};

const CublasApi& cublas() {
    static const CublasApi a = [] {
        CublasApi r{};
        std::string errors;
        void* h = open_cuda_library(
            "cublas",
            {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
             "/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so"},
            errors);
        if (!h) {
            r.reason = "cuBLAS could not be loaded: " + errors;
            return r;
        }
        r.create = reinterpret_cast<decltype(r.create)>(dlsym(h, "cublasCreate_v2"));
        r.set_stream = reinterpret_cast<decltype(r.set_stream)>(dlsym(h, "cublasSetStream_v2"));
        r.gemm = reinterpret_cast<decltype(r.gemm)>(dlsym(h, "cublasGemmStridedBatchedEx_64"));
        if (!r.create || !r.set_stream || !r.gemm) {
            r.reason =
                "libcublas lacks cublasCreate_v2, cublasSetStream_v2 or "
                "cublasGemmStridedBatchedEx_64 (cuBLAS 12 or newer is needed)";
            r.create = nullptr;
        }
        return r;
    }();
    if (!a.create) throw Error("ember.matmul: " + a.reason);
    return a;
}

void cublas_check(Status s, const char* what) {
    if (s != 0)
        throw CudaError("ember.matmul: " + std::string(what) + " failed with cuBLAS status " +
                        std::to_string(s));
}

// One handle per (device, stream), created on first use and kept for the process.
Handle handle_for(DeviceState& d, CUstream s) {
    static std::mutex mu;
    static std::map<std::pair<int, CUstream>, Handle> handles;
    std::lock_guard lk(mu);
    Handle& h = handles[{d.index, s}];
    if (!h) {
        cublas_check(cublas().create(&h), "cublasCreate");
        cublas_check(cublas().set_stream(h, s), "cublasSetStream");
    }
    return h;
}

int data_type(DType t) {
    switch (t) {
        case DType::float16:
            return r16f;
        case DType::bfloat16:
            return r16bf;
        case DType::float32:
            return r32f;
        case DType::float64:
            return r64f;
        case DType::complex64:
            return c32f;
        case DType::complex128:
            return c64f;
        default:
            throw TypeError("ember.matmul: cuBLAS has no routine for dtype " +
                            std::string(name(t)));
    }
}

}  // namespace

void cublas_matmul(DeviceState& d, const backend::MatmulLoop& l) {
    const CublasApi& a = cublas();
    bind(d);
    const CUstream s = current_stream(d);
    Handle h = handle_for(d, s);
    const DType t = l.dtype;
    const int dt = data_type(t);
    const bool dbl = t == DType::float64 || t == DType::complex128;
    const int compute = dbl ? compute_64f
                        : (t == DType::float32 && matmul_precision() == MatmulPrecision::high)
                            ? compute_32f_tf32
                            : compute_32f;
    // Scale factors in the compute type (complex: a (re, im) pair).
    const double one_d[2] = {1, 0}, zero_d[2] = {0, 0};
    const float one_f[2] = {1, 0}, zero_f[2] = {0, 0};
    const void* one = dbl ? static_cast<const void*>(one_d) : one_f;
    const void* zero = dbl ? static_cast<const void*>(zero_d) : zero_f;
    // Row-major C = A @ B is column-major C^T = B^T @ A^T: B comes first.
    const int opb = l.trans[2] ? op_t : op_n, opa = l.trans[1] ? op_t : op_n;
    // The innermost batch dimension is cuBLAS's strided batch; the others are looped over.
    const int nb = int(l.batch.size());
    const int64_t inner = nb ? l.batch[nb - 1] : 1;
    const long long sc = nb ? l.batch_strides[0][nb - 1] : 0;
    const long long sa = nb ? l.batch_strides[1][nb - 1] : 0;
    const long long sb = nb ? l.batch_strides[2][nb - 1] : 0;
    // the profiler times the library's kernels as one row per GEMM call
    CUevent timing = debug::profiling() && !capturing_pool() ? profile_before(d, s) : nullptr;
    l.for_each_batch(
        [&](char* c, const char* pa, const char* pb) {
            cache_counters().library_calls.fetch_add(1, std::memory_order_relaxed);
            cublas_check(
                a.gemm(h, opb, opa, l.n, l.m, l.k, one, pb, dt, l.ld[2], sb, pa, dt, l.ld[1], sa,
                       zero, c, dt, l.ld[0], sc, inner, compute, gemm_default),
                "cublasGemmStridedBatchedEx");
        },
        nb > 0 ? nb - 1 : 0);
    if (timing)
        profile_after(d, s,
                      "cublas_gemm_" + std::string(name(t)) + "_" + std::to_string(l.m) + "x" +
                          std::to_string(l.n) + "x" + std::to_string(l.k),
                      timing);
}

}  // namespace ember::gpu
