// Loading cuSOLVER and running the solver family's dense factorizations with it (see cusolver.hpp).
#include "backend/cuda/cusolver.hpp"
#include "backend/cuda/loader.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <dlfcn.h>

#include "ember/error.hpp"

namespace ember::gpu {

namespace {

using backend::SolverCall;
using backend::SolverOp;

// The types and enum values of cusolverDn.h, cusolver_common.h, cublas_api.h and library_types.h
// (CUDA 13), declared here so that the build needs no CUDA header.
using Handle = void*;                                   // cusolverDnHandle_t
using Params = void*;                                   // cusolverDnParams_t
using Status = int;                                     // cusolverStatus_t
enum : int { r32f = 0, r64f = 1, c32f = 4, c64f = 5 };  // cudaDataType
enum : int { fill_lower = 0 };                          // cublasFillMode_t
enum : int { op_n = 0 };                                // cublasOperation_t
enum : int { eig_novector = 0, eig_vector = 1 };        // cusolverEigMode_t

struct CusolverApi {
    Status (*create)(Handle*);
    Status (*set_stream)(Handle, CUstream);
    Status (*create_params)(Params*);
    // cusolverDnXgetrf_bufferSize, cusolverDnXgetrf, cusolverDnXgetrs
    Status (*getrf_size)(Handle, Params, int64_t m, int64_t n, int type_a, const void* a,
                         int64_t lda, int compute, size_t* dev_bytes, size_t* host_bytes);
    Status (*getrf)(Handle, Params, int64_t m, int64_t n, int type_a, void* a, int64_t lda,
                    int64_t* ipiv, int compute, void* dev, size_t dev_bytes, void* host,
                    size_t host_bytes, int* info);
    Status (*getrs)(Handle, Params, int trans, int64_t n, int64_t nrhs, int type_a, const void* a,
                    int64_t lda, const int64_t* ipiv, int type_b, void* b, int64_t ldb, int* info);
    // cusolverDnXpotrf_bufferSize, cusolverDnXpotrf
    Status (*potrf_size)(Handle, Params, int uplo, int64_t n, int type_a, const void* a,
                         int64_t lda, int compute, size_t* dev_bytes, size_t* host_bytes);
    Status (*potrf)(Handle, Params, int uplo, int64_t n, int type_a, void* a, int64_t lda,
                    int compute, void* dev, size_t dev_bytes, void* host, size_t host_bytes,
                    int* info);
    // cusolverDnXgeqrf_bufferSize, cusolverDnXgeqrf
    Status (*geqrf_size)(Handle, Params, int64_t m, int64_t n, int type_a, const void* a,
                         int64_t lda, int type_tau, const void* tau, int compute, size_t* dev_bytes,
                         size_t* host_bytes);
    Status (*geqrf)(Handle, Params, int64_t m, int64_t n, int type_a, void* a, int64_t lda,
                    int type_tau, void* tau, int compute, void* dev, size_t dev_bytes, void* host,
                    size_t host_bytes, int* info);
    // cusolverDn{S,D}orgqr / {C,Z}ungqr (+ _bufferSize), indexed by precision_index(): the
    // 32-bit legacy API (there is no 64-bit one); element pointers are passed as void*.
    Status (*orgqr_size[4])(Handle, int m, int n, int k, const void* a, int lda, const void* tau,
                            int* lwork);
    Status (*orgqr[4])(Handle, int m, int n, int k, void* a, int lda, const void* tau, void* work,
                       int lwork, int* info);
    // cusolverDnXsyevd_bufferSize, cusolverDnXsyevd
    Status (*syevd_size)(Handle, Params, int jobz, int uplo, int64_t n, int type_a, const void* a,
                         int64_t lda, int type_w, const void* w, int compute, size_t* dev_bytes,
                         size_t* host_bytes);
    Status (*syevd)(Handle, Params, int jobz, int uplo, int64_t n, int type_a, void* a, int64_t lda,
                    int type_w, void* w, int compute, void* dev, size_t dev_bytes, void* host,
                    size_t host_bytes, int* info);
    // cusolverDnXsyevBatched_bufferSize, cusolverDnXsyevBatched: optional (cuSOLVER 11.7+).
    Status (*syev_batched_size)(Handle, Params, int jobz, int uplo, int64_t n, int type_a,
                                const void* a, int64_t lda, int type_w, const void* w, int compute,
                                size_t* dev_bytes, size_t* host_bytes, int64_t batch);
    Status (*syev_batched)(Handle, Params, int jobz, int uplo, int64_t n, int type_a, void* a,
                           int64_t lda, int type_w, void* w, int compute, void* dev,
                           size_t dev_bytes, void* host, size_t host_bytes, int* info,
                           int64_t batch);
    // cusolverDnXgesvd_bufferSize, cusolverDnXgesvd
    Status (*gesvd_size)(Handle, Params, signed char jobu, signed char jobvt, int64_t m, int64_t n,
                         int type_a, const void* a, int64_t lda, int type_s, const void* s,
                         int type_u, const void* u, int64_t ldu, int type_vt, const void* vt,
                         int64_t ldvt, int compute, size_t* dev_bytes, size_t* host_bytes);
    Status (*gesvd)(Handle, Params, signed char jobu, signed char jobvt, int64_t m, int64_t n,
                    int type_a, void* a, int64_t lda, int type_s, void* s, int type_u, void* u,
                    int64_t ldu, int type_vt, void* vt, int64_t ldvt, int compute, void* dev,
                    size_t dev_bytes, void* host, size_t host_bytes, int* info);
    // cusolverDnXgeev_bufferSize, cusolverDnXgeev
    Status (*geev_size)(Handle, Params, int jobvl, int jobvr, int64_t n, int type_a, const void* a,
                        int64_t lda, int type_w, const void* w, int type_vl, const void* vl,
                        int64_t ldvl, int type_vr, const void* vr, int64_t ldvr, int compute,
                        size_t* dev_bytes, size_t* host_bytes);
    Status (*geev)(Handle, Params, int jobvl, int jobvr, int64_t n, int type_a, void* a,
                   int64_t lda, int type_w, void* w, int type_vl, void* vl, int64_t ldvl,
                   int type_vr, void* vr, int64_t ldvr, int compute, void* dev, size_t dev_bytes,
                   void* host, size_t host_bytes, int* info);
    // cusolverDn{S,D,C,Z}potrfBatched: optional; batches of small Cholesky factorizations in one
    // call (an array of device pointers to the matrices, 32-bit sizes).
    Status (*potrf_batched[4])(Handle, int uplo, int n, void** a, int lda, int* info, int batch);
    std::string reason;
};

template <class F>
void resolve(void* lib, F& f, const char* name, std::string& missing) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    if (!f) missing += (missing.empty() ? "" : ", ") + std::string(name);
}

const CusolverApi& cusolver() {
    static const CusolverApi a = [] {
        CusolverApi r{};
        std::string errors;
        void* h = open_cuda_library(
            "cusolver",
            {"libcusolver.so.12", "libcusolver.so", "/usr/local/cuda/lib64/libcusolver.so.12",
             "/usr/local/cuda/targets/x86_64-linux/lib/libcusolver.so.12"},
            errors);
        if (!h) {
            r.reason = errors;
            return r;
        }
        std::string missing;
        resolve(h, r.set_stream, "cusolverDnSetStream", missing);
        resolve(h, r.create_params, "cusolverDnCreateParams", missing);
        resolve(h, r.getrf_size, "cusolverDnXgetrf_bufferSize", missing);
        resolve(h, r.getrf, "cusolverDnXgetrf", missing);
        resolve(h, r.getrs, "cusolverDnXgetrs", missing);
        resolve(h, r.potrf_size, "cusolverDnXpotrf_bufferSize", missing);
        resolve(h, r.potrf, "cusolverDnXpotrf", missing);
        resolve(h, r.geqrf_size, "cusolverDnXgeqrf_bufferSize", missing);
        resolve(h, r.geqrf, "cusolverDnXgeqrf", missing);
        const char* orgqr_names[4][2] = {{"cusolverDnSorgqr_bufferSize", "cusolverDnSorgqr"},
                                         {"cusolverDnDorgqr_bufferSize", "cusolverDnDorgqr"},
                                         {"cusolverDnCungqr_bufferSize", "cusolverDnCungqr"},
                                         {"cusolverDnZungqr_bufferSize", "cusolverDnZungqr"}};
        for (int i = 0; i < 4; ++i) {
            resolve(h, r.orgqr_size[i], orgqr_names[i][0], missing);
            resolve(h, r.orgqr[i], orgqr_names[i][1], missing);
        }
        resolve(h, r.syevd_size, "cusolverDnXsyevd_bufferSize", missing);
        resolve(h, r.syevd, "cusolverDnXsyevd", missing);
        resolve(h, r.gesvd_size, "cusolverDnXgesvd_bufferSize", missing);
        resolve(h, r.gesvd, "cusolverDnXgesvd", missing);
        resolve(h, r.geev_size, "cusolverDnXgeev_bufferSize", missing);
        resolve(h, r.geev, "cusolverDnXgeev", missing);
        std::string optional;  // the batched eigh and Cholesky are used when present
        const char* potrf_batched_names[4] = {"cusolverDnSpotrfBatched", "cusolverDnDpotrfBatched",
                                              "cusolverDnCpotrfBatched", "cusolverDnZpotrfBatched"};
        for (int i = 0; i < 4; ++i)
            resolve(h, r.potrf_batched[i], potrf_batched_names[i], optional);
        resolve(h, r.syev_batched_size, "cusolverDnXsyevBatched_bufferSize", optional);
        resolve(h, r.syev_batched, "cusolverDnXsyevBatched", optional);
        if (!r.syev_batched_size || !r.syev_batched) r.syev_batched = nullptr;
        if (!missing.empty()) {
            r.reason = "libcusolver lacks " + missing + " (a newer cuSOLVER is needed)";
            return r;  // create stays null
        }
        resolve(h, r.create, "cusolverDnCreate", missing);
        if (!r.create) r.reason = "libcusolver lacks cusolverDnCreate";
        return r;
    }();
    if (!a.create) throw Error("ember.linalg: cuSOLVER could not be loaded: " + a.reason);
    return a;
}

const char* status_name(Status s) {
    switch (s) {
        case 1:
            return "CUSOLVER_STATUS_NOT_INITIALIZED";
        case 2:
            return "CUSOLVER_STATUS_ALLOC_FAILED";
        case 3:
            return "CUSOLVER_STATUS_INVALID_VALUE";
        case 4:
            return "CUSOLVER_STATUS_ARCH_MISMATCH";
        case 5:
            return "CUSOLVER_STATUS_MAPPING_ERROR";
        case 6:
            return "CUSOLVER_STATUS_EXECUTION_FAILED";
        case 7:
            return "CUSOLVER_STATUS_INTERNAL_ERROR";
        case 8:
            return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
        case 9:
            return "CUSOLVER_STATUS_NOT_SUPPORTED";
        case 31:
            return "CUSOLVER_STATUS_INVALID_WORKSPACE";
        default:
            return "unknown status";
    }
}

void cusolver_check(Status s, const char* what) {
    if (s != 0)
        throw CudaError("ember.linalg: " + std::string(what) + " failed with cuSOLVER status " +
                        std::to_string(s) + " (" + status_name(s) + ")");
}

struct HandleEntry {
    Handle handle = nullptr;
    Params params = nullptr;  // default options (ALG_0) for the 64-bit API
};

// One handle per (device, stream), created on first use (with d's context current) and kept for
// the process.
HandleEntry handle_for(const CusolverApi& a, DeviceState& d, CUstream s) {
    static std::mutex mu;
    static std::map<std::pair<int, CUstream>, HandleEntry> handles;
    std::lock_guard lk(mu);
    HandleEntry& e = handles[{d.index, s}];
    if (!e.handle) {
        Handle h = nullptr;
        Params p = nullptr;
        cusolver_check(a.create(&h), "cusolverDnCreate");
        cusolver_check(a.set_stream(h, s), "cusolverDnSetStream");
        cusolver_check(a.create_params(&p), "cusolverDnCreateParams");
        e.params = p;
        e.handle = h;
    }
    return e;
}

// Stream-ordered device memory, released when the call returns: work on the stream that was
// enqueued before the release still sees it.
class DeviceBuffer {
public:
    DeviceBuffer(DeviceState& d, size_t bytes)
        : d_(d), p_(allocate(d, std::max<size_t>(bytes, 16))) {}
    ~DeviceBuffer() { deallocate(d_, p_); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    void* get() const { return p_; }

private:
    DeviceState& d_;
    void* p_;
};

// The device and host work space of one 64-bit API routine, as its _bufferSize reported.
struct Workspace {
    Workspace(DeviceState& d, size_t dev, size_t host)
        : dev_bytes(dev), host_bytes(host), dev_mem(d, dev), host_mem(std::max<size_t>(host, 1)) {}
    size_t dev_bytes, host_bytes;
    DeviceBuffer dev_mem;
    std::vector<char> host_mem;
    void* dev() const { return dev_mem.get(); }
    void* host() { return host_mem.data(); }
};

struct Ctx {
    DeviceState& d;
    const CusolverApi& api;
    Handle h;
    Params p;
};

// The dtype's cudaDataType, its real counterpart's, and its complex counterpart's.
struct Types {
    int type, real, cplx;
    int64_t isz, real_isz, cplx_isz;
    int index;  // 0..3: S, D, C, Z
};

Types types_of(DType t) {
    switch (t) {
        case DType::float32:
            return {r32f, r32f, c32f, 4, 4, 8, 0};
        case DType::float64:
            return {r64f, r64f, c64f, 8, 8, 16, 1};
        case DType::complex64:
            return {c32f, r32f, c32f, 8, 4, 8, 2};
        case DType::complex128:
            return {c64f, r64f, c64f, 16, 8, 16, 3};
        default:
            throw TypeError("ember.linalg: cuSOLVER has no routine for dtype " +
                            std::string(name(t)));
    }
}

// Matrix i of a buffer of matrices of `elems` elements of `isz` bytes each, back to back.
void* at(void* p, int64_t i, int64_t elems, int64_t isz) {
    return static_cast<char*>(p) + i * elems * isz;
}

// ---- helper kernels (NVRTC) -----------------------------------------------------------------

// Keys of the kernels below: family 15 in the low 4 bits (cuda_backend.cpp's families are 1..7)
// and a constant high word, so they cannot meet the keys of other kernel families.
enum class Aux : uint64_t { transpose = 1, eye = 2, eig_vectors = 3 };
constexpr uint64_t aux_key_hi = 0x63'75'73'6f'6c'76'65'72ull;  // "cusolver"

KernelKey aux_key(Aux k, uint64_t param) {
    KernelKey key;
    key.lo = 15u | (uint64_t(k) << 4) | (param << 12);
    key.hi = aux_key_hi;
    return key;
}

const char* real_name(int64_t real_isz) { return real_isz == 4 ? "float" : "double"; }

constexpr const char* grid_loop =
    "    const long long step = (long long)gridDim.x * blockDim.x;\n"
    "    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < count; "
    "e += step) {\n";

// out (cols x rows) <- in (rows x cols)^T, both column-major with leading dimension = rows;
// elements moved as bits.
CUfunction transpose_kernel(DeviceState& d, int64_t isz) {
    return kernel(d, aux_key(Aux::transpose, uint64_t(isz)), [&] {
        const std::string nm = "ember_solver_transpose_b" + std::to_string(isz);
        std::string s = "// out = in^T for column-major matrices of " + std::to_string(isz) +
                        "-byte elements.\n";
        s += "struct alignas(16) b16 { unsigned long long x, y; };\n";
        const char* t = isz == 16 ? "b16" : isz == 8 ? "unsigned long long" : "unsigned int";
        s += "extern \"C\" __global__ void " + nm + "(\n";
        s += "    " + std::string(t) + "* __restrict__ out, const " + t + "* __restrict__ in,\n";
        s += "    const long long rows, const long long cols) {\n";
        s += "    const long long count = rows * cols;\n";
        s += grid_loop;
        s += "        const long long i = e % rows, j = e / rows;\n";
        s += "        out[j + i * cols] = in[e];\n";
        s += "    }\n}\n";
        return KernelSource{Program{nm + ".cu", s, {}}, nm};
    });
}

// `count` elements of batch x (rows x cols) column-major matrices <- the identity's first
// columns; complex elements are (re, im) pairs of the real type.
CUfunction eye_kernel(DeviceState& d, const Types& ty) {
    const bool cplx = ty.isz != ty.real_isz;
    return kernel(d, aux_key(Aux::eye, uint64_t(ty.index)), [&] {
        const std::string r = real_name(ty.real_isz);
        const std::string nm = "ember_solver_eye_" + r + (cplx ? "_complex" : "");
        std::string s = "// Batched identity matrices (column-major).\n";
        s += "extern \"C\" __global__ void " + nm + "(\n";
        s += "    " + r + "* __restrict__ out, const long long rows, const long long cols,\n";
        s += "    const long long count) {\n";
        s += grid_loop;
        s += "        const long long l = e % (rows * cols);\n";
        s += "        const long long i = l % rows, j = l / rows;\n";
        if (cplx) {
            s += "        out[2 * e] = i == j ? " + r + "(1) : " + r + "(0);\n";
            s += "        out[2 * e + 1] = " + r + "(0);\n";
        } else {
            s += "        out[e] = i == j ? " + r + "(1) : " + r + "(0);\n";
        }
        s += "    }\n}\n";
        return KernelSource{Program{nm + ".cu", s, {}}, nm};
    });
}

// The complex right eigenvectors u (n x n, (re, im) pairs) of a real matrix from geev's real VR
// and complex eigenvalues w: a complex pair w[j], w[j+1] = conj(w[j]) (imag(w[j]) > 0) has
// vectors VR[:, j] +- i VR[:, j+1], as LAPACK stores them.
CUfunction eig_vectors_kernel(DeviceState& d, const Types& ty) {
    return kernel(d, aux_key(Aux::eig_vectors, uint64_t(ty.index)), [&] {
        const std::string r = real_name(ty.real_isz);
        const std::string nm = "ember_solver_eig_vectors_" + r;
        std::string s = "// Complex eigenvectors from LAPACK's real packing.\n";
        s += "extern \"C\" __global__ void " + nm + "(\n";
        s += "    " + r + "* __restrict__ u, const " + r + "* __restrict__ vr, const " + r +
             "* __restrict__ w,\n";
        s += "    const long long n) {\n";
        s += "    const long long count = n * n;\n";
        s += grid_loop;
        s += "        const long long j = e / n;\n";
        s += "        const " + r + " im = w[2 * j + 1];\n";
        s += "        " + r + " re, vi;\n";
        s += "        if (im > 0 && j + 1 < n) {\n";
        s += "            re = vr[e];\n";
        s += "            vi = vr[e + n];\n";
        s += "        } else if (im < 0 && j > 0) {\n";
        s += "            re = vr[e - n];\n";
        s += "            vi = -vr[e];\n";
        s += "        } else {\n";
        s += "            re = vr[e];\n";
        s += "            vi = " + r + "(0);\n";
        s += "        }\n";
        s += "        u[2 * e] = re;\n";
        s += "        u[2 * e + 1] = vi;\n";
        s += "    }\n}\n";
        return KernelSource{Program{nm + ".cu", s, {}}, nm};
    });
}

void transpose(DeviceState& d, void* out, const void* in, int64_t rows, int64_t cols, int64_t isz) {
    if (rows == 0 || cols == 0) return;
    CUfunction f = transpose_kernel(d, isz);
    void* o = out;
    const void* i = in;
    long long r = rows, k = cols;
    void* args[] = {&o, &i, &r, &k};
    launch(d, f, grid_for(d, rows * cols), 1, args, "linalg.svd");
}

void eye(DeviceState& d, void* out, int64_t batch, int64_t rows, int64_t cols, const Types& ty) {
    if (batch == 0 || rows == 0 || cols == 0) return;
    CUfunction f = eye_kernel(d, ty);
    void* o = out;
    long long r = rows, k = cols, count = batch * rows * cols;
    void* args[] = {&o, &r, &k, &count};
    launch(d, f, grid_for(d, count), 1, args, "linalg");
}

// ---- the ops ---------------------------------------------------------------------------------

void run_lu(Ctx& c, const SolverCall& call, const Types& ty) {
    const int64_t m = call.m, n = call.n, p = std::min(m, n);
    size_t dev = 0, host = 0;
    cusolver_check(c.api.getrf_size(c.h, c.p, m, n, ty.type, call.a, m, ty.type, &dev, &host),
                   "cusolverDnXgetrf_bufferSize");
    Workspace ws(c.d, dev, host);
    for (int64_t i = 0; i < call.batch; ++i)
        cusolver_check(
            c.api.getrf(c.h, c.p, m, n, ty.type, at(call.a, i, m * n, ty.isz), m, call.ipiv + i * p,
                        ty.type, ws.dev(), ws.dev_bytes, ws.host(), ws.host_bytes, call.info + i),
            "cusolverDnXgetrf");
}

void run_lu_solve(Ctx& c, const SolverCall& call, const Types& ty) {
    const int64_t n = call.n, k = call.k;
    for (int64_t i = 0; i < call.batch; ++i)
        cusolver_check(
            c.api.getrs(c.h, c.p, op_n, n, k, ty.type, at(call.a, i, n * n, ty.isz), n,
                        call.ipiv + i * n, ty.type, at(call.b, i, n * k, ty.isz), n, call.info + i),
            "cusolverDnXgetrs");
}

void run_cholesky(Ctx& c, const SolverCall& call, const Types& ty) {
    const int64_t n = call.n;
    // Many small matrices: one batched call (its documented use) instead of one call each.
    if (call.batch > 1 && n <= 128 && call.batch <= INT_MAX && c.api.potrf_batched[ty.index]) {
        std::vector<void*> ptrs(size_t(call.batch));
        for (int64_t i = 0; i < call.batch; ++i)
            ptrs[size_t(i)] = at(call.a, i, n * n, ty.isz);
        const size_t bytes = ptrs.size() * sizeof(void*);
        DeviceBuffer dptrs(c.d, bytes);
        // From pageable memory the copy is staged before it returns, so `ptrs` may go.
        check(driver()->cuMemcpyHtoDAsync(CUdeviceptr(uintptr_t(dptrs.get())), ptrs.data(), bytes,
                                          current_stream(c.d)),
              "cuMemcpyHtoDAsync (matrix pointers)");
        const char* names[4] = {"cusolverDnSpotrfBatched", "cusolverDnDpotrfBatched",
                                "cusolverDnCpotrfBatched", "cusolverDnZpotrfBatched"};
        cusolver_check(
            c.api.potrf_batched[ty.index](c.h, fill_lower, int(n), static_cast<void**>(dptrs.get()),
                                          int(n), call.info, int(call.batch)),
            names[ty.index]);
        return;
    }
    size_t dev = 0, host = 0;
    cusolver_check(
        c.api.potrf_size(c.h, c.p, fill_lower, n, ty.type, call.a, n, ty.type, &dev, &host),
        "cusolverDnXpotrf_bufferSize");
    Workspace ws(c.d, dev, host);
    for (int64_t i = 0; i < call.batch; ++i)
        cusolver_check(
            c.api.potrf(c.h, c.p, fill_lower, n, ty.type, at(call.a, i, n * n, ty.isz), n, ty.type,
                        ws.dev(), ws.dev_bytes, ws.host(), ws.host_bytes, call.info + i),
            "cusolverDnXpotrf");
}

void run_qr(Ctx& c, const SolverCall& call, const Types& ty) {
    const int64_t m = call.m, n = call.n, p = std::min(m, n);
    size_t dev = 0, host = 0;
    cusolver_check(c.api.geqrf_size(c.h, c.p, m, n, ty.type, call.a, m, ty.type, call.tau, ty.type,
                                    &dev, &host),
                   "cusolverDnXgeqrf_bufferSize");
    Workspace ws(c.d, dev, host);
    for (int64_t i = 0; i < call.batch; ++i)
        cusolver_check(c.api.geqrf(c.h, c.p, m, n, ty.type, at(call.a, i, m * n, ty.isz), m,
                                   ty.type, at(call.tau, i, p, ty.isz), ty.type, ws.dev(),
                                   ws.dev_bytes, ws.host(), ws.host_bytes, call.info + i),
                       "cusolverDnXgeqrf");
}

// tau holds k scalars per matrix.
void run_qr_q(Ctx& c, const SolverCall& call, const Types& ty) {
    const int64_t m = call.m, n = call.n, k = call.k;
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
        throw ValueError("ember.linalg.qr: a " + std::to_string(m) + " x " + std::to_string(n) +
                         " matrix is too large for cuSOLVER's orgqr (32-bit sizes)");
    const char* names[4] = {"cusolverDnSorgqr", "cusolverDnDorgqr", "cusolverDnCungqr",
                            "cusolverDnZungqr"};
    int lwork = 0;
    cusolver_check(
        c.api.orgqr_size[ty.index](c.h, int(m), int(n), int(k), call.a, int(m), call.tau, &lwork),
        (std::string(names[ty.index]) + "_bufferSize").c_str());
    DeviceBuffer work(c.d, size_t(std::max(lwork, 1)) * size_t(ty.isz));
    for (int64_t i = 0; i < call.batch; ++i)
        cusolver_check(
            c.api.orgqr[ty.index](c.h, int(m), int(n), int(k), at(call.a, i, m * n, ty.isz), int(m),
                                  at(call.tau, i, k, ty.isz), work.get(), lwork, call.info + i),
            names[ty.index]);
}

void run_eigh(Ctx& c, const SolverCall& call, const Types& ty) {
    const int64_t n = call.n;
    const int jobz = call.vectors ? eig_vector : eig_novector;
    // The batched routine takes all matrices at once; its documented limit is
    // n * lda * batch <= INT32_MAX. It is kept to small matrices, where one launch per matrix
    // costs most; larger ones go through syevd one by one.
    if (c.api.syev_batched && call.batch > 1 && n <= 256 && n * n * call.batch <= INT32_MAX) {
        size_t dev = 0, host = 0;
        if (c.api.syev_batched_size(c.h, c.p, jobz, fill_lower, n, ty.type, call.a, n, ty.real,
                                    call.w, ty.type, &dev, &host, call.batch) == 0) {
            Workspace ws(c.d, dev, host);
            cusolver_check(c.api.syev_batched(c.h, c.p, jobz, fill_lower, n, ty.type, call.a, n,
                                              ty.real, call.w, ty.type, ws.dev(), ws.dev_bytes,
                                              ws.host(), ws.host_bytes, call.info, call.batch),
                           "cusolverDnXsyevBatched");
            return;
        }
        // Not supported for these arguments: fall through to the per-matrix routine.
    }
    size_t dev = 0, host = 0;
    cusolver_check(c.api.syevd_size(c.h, c.p, jobz, fill_lower, n, ty.type, call.a, n, ty.real,
                                    call.w, ty.type, &dev, &host),
                   "cusolverDnXsyevd_bufferSize");
    Workspace ws(c.d, dev, host);
    for (int64_t i = 0; i < call.batch; ++i)
        cusolver_check(
            c.api.syevd(c.h, c.p, jobz, fill_lower, n, ty.type, at(call.a, i, n * n, ty.isz), n,
                        ty.real, at(call.w, i, n, ty.real_isz), ty.type, ws.dev(), ws.dev_bytes,
                        ws.host(), ws.host_bytes, call.info + i),
            "cusolverDnXsyevd");
}

// gesvd needs m >= n. For m < n it factors A^T (n x m) = U' S V'^H, so A = conj(V') S U'^T:
// U = (V'^H)^T and V^H = U'^T (plain transposes, also for complex dtypes: the transpose of a
// unitary matrix is unitary).
void run_svd(Ctx& c, const SolverCall& call, const Types& ty) {
    const int64_t m = call.m, n = call.n, p = std::min(m, n);
    const bool vec = call.vectors, full = call.full;
    const signed char job = !vec ? 'N' : full ? 'A' : 'S';
    const int64_t ucols = full ? m : p, vtrows = full ? n : p;  // u: m x ucols, vt: vtrows x n
    if (m >= n) {
        const int64_t ldvt = n;  // vt is n x n (p = n)
        size_t dev = 0, host = 0;
        cusolver_check(c.api.gesvd_size(c.h, c.p, job, job, m, n, ty.type, call.a, m, ty.real,
                                        call.w, ty.type, vec ? call.u : nullptr, m, ty.type,
                                        vec ? call.vt : nullptr, ldvt, ty.type, &dev, &host),
                       "cusolverDnXgesvd_bufferSize");
        Workspace ws(c.d, dev, host);
        for (int64_t i = 0; i < call.batch; ++i)
            cusolver_check(
                c.api.gesvd(c.h, c.p, job, job, m, n, ty.type, at(call.a, i, m * n, ty.isz), m,
                            ty.real, at(call.w, i, p, ty.real_isz), ty.type,
                            vec ? at(call.u, i, m * ucols, ty.isz) : nullptr, m, ty.type,
                            vec ? at(call.vt, i, vtrows * n, ty.isz) : nullptr, ldvt, ty.type,
                            ws.dev(), ws.dev_bytes, ws.host(), ws.host_bytes, call.info + i),
                "cusolverDnXgesvd");
        return;
    }
    // A^T is n x m (n > m): its U' is n x (full ? n : m) = n x vtrows, its V'^H is m x m.
    DeviceBuffer at_buf(c.d, size_t(n * m * ty.isz));
    DeviceBuffer u_buf(c.d, vec ? size_t(n * vtrows * ty.isz) : 0);
    DeviceBuffer vt_buf(c.d, vec ? size_t(m * m * ty.isz) : 0);
    void* ut = vec ? u_buf.get() : nullptr;
    void* vtt = vec ? vt_buf.get() : nullptr;
    size_t dev = 0, host = 0;
    cusolver_check(c.api.gesvd_size(c.h, c.p, job, job, n, m, ty.type, at_buf.get(), n, ty.real,
                                    call.w, ty.type, ut, n, ty.type, vtt, m, ty.type, &dev, &host),
                   "cusolverDnXgesvd_bufferSize");
    Workspace ws(c.d, dev, host);
    for (int64_t i = 0; i < call.batch; ++i) {
        transpose(c.d, at_buf.get(), at(call.a, i, m * n, ty.isz), m, n, ty.isz);
        cusolver_check(
            c.api.gesvd(c.h, c.p, job, job, n, m, ty.type, at_buf.get(), n, ty.real,
                        at(call.w, i, p, ty.real_isz), ty.type, ut, n, ty.type, vtt, m, ty.type,
                        ws.dev(), ws.dev_bytes, ws.host(), ws.host_bytes, call.info + i),
            "cusolverDnXgesvd");
        if (vec) {
            transpose(c.d, at(call.u, i, m * ucols, ty.isz), vtt, m, m, ty.isz);  // ucols == m
            transpose(c.d, at(call.vt, i, vtrows * n, ty.isz), ut, n, vtrows, ty.isz);
        }
    }
}

// For real dtypes geev runs in real arithmetic with complex W (one entry per eigenvalue, both
// of each conjugate pair) and real VR in LAPACK's packing, unpacked by eig_vectors_kernel.
void run_eig(Ctx& c, const SolverCall& call, const Types& ty) {
    const int64_t n = call.n;
    const bool vec = call.vectors, real = ty.type == ty.real;
    const int jobvr = vec ? eig_vector : eig_novector;
    DeviceBuffer vr_buf(c.d, vec && real ? size_t(n * n * ty.isz) : 0);
    void* vr0 = !vec ? nullptr : real ? vr_buf.get() : call.u;
    size_t dev = 0, host = 0;
    cusolver_check(
        c.api.geev_size(c.h, c.p, eig_novector, jobvr, n, ty.type, call.a, n, ty.cplx, call.w,
                        ty.type, nullptr, n, ty.type, vr0, n, ty.type, &dev, &host),
        "cusolverDnXgeev_bufferSize");
    Workspace ws(c.d, dev, host);
    CUfunction unpack = vec && real ? eig_vectors_kernel(c.d, ty) : nullptr;
    for (int64_t i = 0; i < call.batch; ++i) {
        void* w = at(call.w, i, n, ty.cplx_isz);
        void* vr = !vec ? nullptr : real ? vr_buf.get() : at(call.u, i, n * n, ty.cplx_isz);
        cusolver_check(
            c.api.geev(c.h, c.p, eig_novector, jobvr, n, ty.type, at(call.a, i, n * n, ty.isz), n,
                       ty.cplx, w, ty.type, nullptr, n, ty.type, vr, n, ty.type, ws.dev(),
                       ws.dev_bytes, ws.host(), ws.host_bytes, call.info + i),
            "cusolverDnXgeev");
        if (unpack) {
            void* u = at(call.u, i, n * n, ty.cplx_isz);
            const void* v = vr;
            const void* wp = w;
            long long nn = n;
            void* args[] = {&u, &v, &wp, &nn};
            launch(c.d, unpack, grid_for(c.d, n * n), 1, args, "linalg.eig");
        }
    }
}

// Empty matrices: cuSOLVER is not called; info is 0 and the outputs LAPACK defines for them
// (identity factors) are written.
void run_empty(DeviceState& d, CUstream s, const SolverCall& call, const Types& ty) {
    if (call.info)
        check(api().cuMemsetD32Async(CUdeviceptr(reinterpret_cast<uintptr_t>(call.info)), 0,
                                     size_t(call.batch), s),
              "cuMemsetD32Async");
    const int64_t m = call.m, n = call.n;
    switch (call.op) {
        case SolverOp::qr_q:  // no reflectors: Q is the identity's first n columns
            if (m > 0 && n > 0) eye(d, call.a, call.batch, m, n, ty);
            break;
        case SolverOp::svd:
            if (call.vectors && call.full) {
                eye(d, call.u, call.batch, m, m, ty);
                eye(d, call.vt, call.batch, n, n, ty);
            }
            break;
        default:
            break;
    }
}

bool is_empty(const SolverCall& call) {
    switch (call.op) {
        case SolverOp::lu:
        case SolverOp::qr:
        case SolverOp::svd:
            return call.m == 0 || call.n == 0;
        case SolverOp::lu_solve:
            return call.n == 0 || call.k == 0;
        case SolverOp::qr_q:
            return call.m == 0 || call.n == 0 || call.k == 0;
        case SolverOp::cholesky:
        case SolverOp::eigh:
        case SolverOp::eig:
            return call.n == 0;
    }
    return false;
}

}  // namespace

void cusolver_solver(DeviceState& d, const backend::SolverCall& call) {
    const Types ty = types_of(call.dtype);
    if (call.batch <= 0) return;
    bind(d);
    const CUstream s = current_stream(d);
    if (is_empty(call)) {
        run_empty(d, s, call, ty);
        return;
    }
    const CusolverApi& a = cusolver();
    const HandleEntry he = handle_for(a, d, s);
    Ctx c{d, a, he.handle, he.params};
    switch (call.op) {
        case SolverOp::lu:
            return run_lu(c, call, ty);
        case SolverOp::lu_solve:
            return run_lu_solve(c, call, ty);
        case SolverOp::cholesky:
            return run_cholesky(c, call, ty);
        case SolverOp::qr:
            return run_qr(c, call, ty);
        case SolverOp::qr_q:
            return run_qr_q(c, call, ty);
        case SolverOp::eigh:
            return run_eigh(c, call, ty);
        case SolverOp::svd:
            return run_svd(c, call, ty);
        case SolverOp::eig:
            return run_eig(c, call, ty);
    }
}

}  // namespace ember::gpu
