// The backend interface: a small, closed set of kernel families that every device implements
// (DESIGN.md §3). The core builds Loop descriptors (broadcast, collapsed iteration spaces) and
// hands them here; everything else is composition above this line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ember/array.hpp"
#include "ember/device.hpp"
#include "ember/dtype.hpp"
#include "ember/fft.hpp"
#include "ember/optable.hpp"
#include "ember/reducetable.hpp"
#include "ember/shape.hpp"
#include "ops/optim.hpp"
#include "ops/random.hpp"
#include "ops/scalar.hpp"

namespace ember::backend {

inline constexpr int max_operands = 4;

// An iteration space over `nops` operands of one shape; ops[0] is the output. Dimension 0 is the
// innermost (fastest varying) one; strides are in elements; broadcast operands have stride 0.
// An operand marked `scalar` is a single host value held in `scalar_value` (stride 0 everywhere):
// the CPU reads it in place, the CUDA backend passes it as a kernel argument.
struct Loop {
    int nops = 0;
    int device = 0;  // the index of the operands' device
    Dims shape;
    Dims strides[max_operands];
    char* data[max_operands] = {};
    DType dtype[max_operands] = {};
    bool scalar[max_operands] = {};
    alignas(16) unsigned char scalar_value[max_operands][16];  // set with the scalar flag

    int ndim() const { return int(shape.size()); }
    int64_t numel() const { return ember::numel(shape); }
    const void* operand_data(int i) const {
        return scalar[i] ? static_cast<const void*>(scalar_value[i]) : data[i];
    }
};

// Bytes a loop reads and writes: each array operand's extent over the dimensions it strides
// (broadcast dimensions read once). The profiler's bytes moved of memory-bound ops.
inline uint64_t footprint_bytes(const Loop& l) {
    uint64_t total = 0;
    for (int i = 0; i < l.nops; ++i) {
        if (l.scalar[i]) continue;
        uint64_t n = uint64_t(itemsize(l.dtype[i]));
        for (int k = 0; k < l.ndim(); ++k)
            if (l.strides[i][k] != 0) n *= uint64_t(l.shape[k]);
        total += n;
    }
    return total;
}

// A batched matrix product C[i] = A[i] @ B[i] over the batch shape, all operands of `dtype`.
// Operand 0 is C (row-major, leading dimension ld[0]), 1 is A (m x k), 2 is B (k x n); A and B
// are row-major with leading dimension ld[], or transposed (column-major) where trans[] is set,
// as BLAS takes them. Batch strides are in elements; 0 broadcasts. k >= 1.
struct MatmulLoop {
    int device = 0;
    DType dtype = DType::float32;
    int64_t m = 0, n = 0, k = 0;
    Dims batch;
    Dims batch_strides[3];
    char* data[3] = {};
    int64_t ld[3] = {};
    bool trans[3] = {};  // trans[0] is always false

    // Calls fn(c, a, b) with the data pointers of each product of the first `dims` batch
    // dimensions (all of them by default), in C order.
    template <class F>
    void for_each_batch(F&& fn, int dims = -1) const {
        const int nb = dims < 0 ? int(batch.size()) : dims;
        const int64_t isz = itemsize(dtype);
        int64_t count = 1;
        for (int d = 0; d < nb; ++d)
            count *= batch[size_t(d)];
        int64_t idx[max_ndim] = {};
        for (int64_t i = 0; i < count; ++i) {
            char* p[3];
            for (int o = 0; o < 3; ++o) {
                int64_t off = 0;
                for (int d = 0; d < nb; ++d)
                    off += idx[d] * batch_strides[o][size_t(d)];
                p[o] = data[o] + off * isz;
            }
            fn(p[0], p[1], p[2]);
            for (int d = nb - 1; d >= 0; --d) {
                if (++idx[d] < batch[size_t(d)]) break;
                idx[d] = 0;
            }
        }
    }
};

// Dense factorizations of `batch` matrices of `dtype` (float32, float64, complex64,
// complex128) in LAPACK's layout: each column-major with leading dimension = its row count,
// stored one after another, every buffer contiguous on `device` (LAPACK on the CPU, cuSOLVER on
// the GPU). Work space is the backend's. `info` (batch int32, on the device) gets LAPACK's info
// of each matrix (> 0: singular / not positive definite / no convergence; the backend throws
// for < 0, which is a bad argument). Per op, with p = min(m, n):
//   lu        getrf: a (m x n) <- L\U, ipiv <- batch x p 1-based row swaps.
//   lu_solve  getrs (no transpose): a holds lu's n x n result and ipiv; b (n x k) <- A^-1 b.
//   cholesky  potrf, lower: a (n x n) <- L in the lower triangle; the upper one is untouched.
//   qr        geqrf: a (m x n) <- R above the diagonal and the reflectors below it; tau <- p.
//   qr_q      orgqr / ungqr: a (m x n, n <= m) holds k <= n reflectors and tau; a <- Q's first
//             n columns.
//   eigh      syevd / heevd, lower: w (batch x n, real) <- ascending eigenvalues; with
//             `vectors`, a (n x n) <- the eigenvectors as columns (otherwise a is destroyed).
//   svd       gesdd / gesvd: w (batch x p, real) <- descending singular values; with `vectors`,
//             u (m x (full ? m : p)) and vt ((full ? n : p) x n) <- U and V^H. a is destroyed.
//             Any m, n (m < n included).
//   eig       geev: w (batch x n, complex of dtype's precision) <- eigenvalues; with `vectors`,
//             u (n x n, complex) <- unit-norm right eigenvectors as columns. a is destroyed.
enum class SolverOp : uint8_t { lu, lu_solve, cholesky, qr, qr_q, eigh, svd, eig };
struct SolverCall {
    SolverOp op = SolverOp::lu;
    int device = 0;
    DType dtype = DType::float64;
    int64_t batch = 1, m = 0, n = 0, k = 0;
    bool vectors = true;
    bool full = false;
    void* a = nullptr;
    void* b = nullptr;
    int64_t* ipiv = nullptr;
    void* tau = nullptr;
    void* w = nullptr;
    void* u = nullptr;
    void* vt = nullptr;
    int32_t* info = nullptr;
};

// One fused optimizer step (src/ops/optim.hpp) over the tensors of one dtype on one device:
// tensor i has n[i] contiguous elements at param[i] and grad[i], and at state[k][i] for each state
// k the step uses (optim::uses_state; null otherwise).
struct OptimizerStep {
    optim::Hyper hyper;
    DType dtype = DType::float32;
    int device = 0;
    std::vector<void*> param, grad, state[3];
    std::vector<int64_t> n;
    std::vector<void*> step;  // with f_device_step: each tensor's float32 step count, else empty
};

// A sort of `rows` contiguous rows of `n` keys of `dtype` (all dtypes) at `keys`, along each row.
// The order is NumPy's: ascending, NaN last, -0.0 equal to 0.0 (complex: real part, then
// imaginary part, those with a NaN after the others in NumPy's classes R+Rj < R+nanj < nan+Rj <
// nan+nanj); `descending` is the exact reverse of that order (NaN first) except that equal keys
// keep their input order. Every sort is stable (`stable` false allows an unstable one; both
// backends sort stably, so their results agree). Outputs, each optional and not aliasing `keys`:
// `sorted` (rows x n of `dtype`) <- the keys in order; `indices` (rows x n int64) <- their
// positions within the row.
struct SortCall {
    int device = 0;
    DType dtype = DType::float32;
    int64_t rows = 1, n = 0;
    bool descending = false;
    bool stable = true;
    const void* keys = nullptr;
    void* sorted = nullptr;
    int64_t* indices = nullptr;
};

// NumPy's searchsorted in `sort`'s ascending order: for each of the `m` contiguous values of
// `dtype` at `values`, out[j] (int64) <- the first position i in the `n` sorted keys at `keys`
// with keys[i] >= value (`right`: keys[i] > value), n when there is none.
struct SearchCall {
    int device = 0;
    DType dtype = DType::float32;
    int64_t n = 0, m = 0;
    bool right = false;
    const void* keys = nullptr;
    const void* values = nullptr;
    int64_t* out = nullptr;
};

// `batch` 1-D FFTs of length `n` on `device`, each row contiguous and the rows one after another
// (the front-end crops, pads and copies): c2c batch x n -> batch x n of `dtype` (complex64,
// complex128; `inverse`: exponent +2*pi*i), r2c batch x n of `dtype` (float32, float64) -> batch x
// (n/2+1) complex, c2r batch x (n/2+1) of `dtype` (complex) -> batch x n real. The results are
// multiplied by `scale` (real and imaginary parts, in the result's precision; 1: unnormalized).
// n >= 2 (a 1-point transform is a copy, done by the front-end). `in` may be overwritten by c2r
// (cuFFT does); a c2r input's imaginary parts of the zero and Nyquist terms are zero.
struct FftCall {
    FftKind kind = FftKind::c2c;
    bool inverse = false;
    int device = 0;
    DType dtype = DType::complex64;
    int64_t n = 0, batch = 0;
    double scale = 1.0;
    const void* in = nullptr;
    void* out = nullptr;
};

// Row-wise normalization ops over `rows` contiguous rows of `n` elements (the last axis), one
// pass over the data where the row fits on chip. Arrays x, y, dy, out, gamma, beta and the class
// weight have `dtype` (float16, bfloat16, float32, float64); per-row values (loss, weight_out,
// row_max, logsum, dloss, mean, rstd) and the dgamma/dbeta partials have acc_dtype(dtype): float32
// for the 16-bit types, else dtype. Everything computes in acc_dtype and is max-subtracted.
//   softmax               out <- exp(x - max) / sum(exp(x - max))
//   log_softmax           out <- (x - max) - log(sum(exp(x - max)))
//   softmax_backward      out <- y * (dy - sum(dy * y))              (y: softmax's output)
//   log_softmax_backward  out <- dy - exp(y) * sum(dy)               (y: log_softmax's output)
//   cross_entropy         with t = target[r] (int64) and lse = max + log(sum(exp(x - max))):
//                         loss[r] <- (1 - ls) w[t] (lse - x[t]) + ls / n * sum_c w[c] (lse -
//                         x[c]), weight_out[r] <- w[t], row_max[r] <- max, logsum[r] <- log(sum)
//                         (w = 1 without `weight`; ls = label_smoothing); rows with t ==
//                         ignore_index get loss 0, weight 0; a t outside [0, n) gets NaN.
//   cross_entropy_backward  out <- dloss[r] * ((1 - ls) w[t] (p - [c == t]) + ls / n (W p -
//                         w[c])) with p = exp((x - row_max[r]) - logsum[r]), W = sum(w); 0 for
//                         ignored rows, NaN for out-of-range targets.
//   layer_norm            mean[r], rstd[r] = 1 / sqrt(biased var + eps) of x's row, out <-
//                         (x - mean) * rstd * gamma + beta (gamma, beta optional).
//   layer_norm_backward   out (dx) <- from x, dy, gamma, mean, rstd; when dgamma/dbeta are set,
//                         part p (of `parts`, rows split evenly in order) of each gets
//                         sum over its rows of dy * xhat (dy) into dgamma[p * n + c] (dbeta[...]).
enum class RowsOp : uint8_t {
    softmax,
    log_softmax,
    softmax_backward,
    log_softmax_backward,
    cross_entropy,
    cross_entropy_backward,
    layer_norm,
    layer_norm_backward
};
struct RowsCall {
    RowsOp op = RowsOp::softmax;
    int device = 0;
    DType dtype = DType::float32;
    int64_t rows = 0, n = 0;
    const void* x = nullptr;
    const void* y = nullptr;
    const void* dy = nullptr;
    void* out = nullptr;
    // cross_entropy
    const int64_t* target = nullptr;
    const void* weight = nullptr;  // n class weights or null
    int64_t ignore_index = -100;
    double label_smoothing = 0.0;
    void* loss = nullptr;
    void* weight_out = nullptr;
    void* row_max = nullptr;
    void* logsum = nullptr;
    const void* dloss = nullptr;
    // layer_norm
    const void* gamma = nullptr;
    const void* beta = nullptr;
    double eps = 1e-5;
    void* mean = nullptr;
    void* rstd = nullptr;
    void* dgamma = nullptr;
    void* dbeta = nullptr;
    int64_t parts = 1;
};
inline DType acc_dtype(DType t) {
    return t == DType::float16 || t == DType::bfloat16 ? DType::float32 : t;
}

using ops::ReduceOp;  // the rows of the reduction table
enum class ScanOp : uint8_t { sum, prod };

class Backend {
public:
    virtual ~Backend() = default;

    // Memory. allocate() returns nullptr when the device is out of memory.
    virtual void* allocate(size_t nbytes, int device) = 0;
    virtual void deallocate(void* p, size_t nbytes, int device) noexcept = 0;
    virtual void copy_to_host(void* dst, const void* src, size_t nbytes, int device) = 0;
    virtual void copy_from_host(void* dst, const void* src, size_t nbytes, int device) = 0;
    virtual void synchronize(int device) = 0;

    // ops[0] <- ops[1], converting between their dtypes (NumPy's unsafe casting).
    virtual void copy(const Loop& loop) = 0;
    // ops[0] <- ops[1], where ops[1] is a scalar of ops[0]'s dtype.
    virtual void fill(const Loop& loop) = 0;
    // 1-D ops[0][i] <- start + i * step, computed in int64, double or complex<double> by the kind
    // of ops[0]'s dtype (start and step are given as that dtype's kind).
    virtual void iota(const Loop& loop, const Scalar& start, const Scalar& step) = 0;
    // ops[0] <- op(ops[1], ...) computed in `compute` (the op table's loop type); operands may
    // have other dtypes, which the backend converts on the fly.
    virtual void map(ops::OpId op, DType compute, const Loop& loop) = 0;
    // ops[0] (stride 0 along reduced dims) <- reduction of ops[1] by the row's policy
    // (src/ops/reduce.hpp), accumulated in `acc` (the row's AccRule). The backend initializes the
    // output; ops[0] and ops[1] may have dtypes other than `acc`. Index rows (argmax, argmin):
    // ops[0] is int64, stride 0 along exactly one dim, and gets the position of the first match
    // along that dim (NaN counts as the extremum, like NumPy).
    virtual void reduce(ReduceOp op, DType acc, const Loop& loop) = 0;
    // `n` contiguous elements of `dtype` at `out` <- draws of `p` (src/ops/random.hpp): the same
    // values on every backend. Real distributions write floating dtypes, integer ones integer
    // dtypes (or bool), raw bits uint32/uint64; the front-end checks the pairing.
    virtual void random(const rng::Params& p, void* out, DType dtype, int64_t n, int device) = 0;
    // Batched matrix products (BLAS on the CPU, cuBLAS on the GPU; integer and bool dtypes by
    // the backend's own loops). Precision: see set_matmul_precision in ember/ops.hpp.
    virtual void matmul(const MatmulLoop& loop) = 0;
    // out[i] <- src[offsets[i]] for i < n: elements of `itemsize` bytes, element offsets
    // (possibly negative) from `src`; out and offsets are contiguous, offsets already checked.
    virtual void gather(void* out, const void* src, const int64_t* offsets, int64_t n, int itemsize,
                        int device) = 0;
    // dst[offsets[i]] += src[i] for i < n, in order (repeated offsets accumulate; the result is
    // deterministic): elements of `dtype`, element offsets (possibly negative) from `dst`; src
    // and offsets are contiguous, offsets already checked. The default (src/backend/scatter.cpp)
    // works on any backend: on the CPU in place, elsewhere through a host copy of the range.
    virtual void scatter_add(void* dst, const void* src, const int64_t* offsets, int64_t n,
                             DType dtype, int device);
    // Sorts rows of keys (see SortCall): on the GPU an LSD radix sort.
    virtual void sort(const SortCall& call) = 0;
    // Binary searches of values in sorted keys (see SearchCall).
    virtual void searchsorted(const SearchCall& call) = 0;
    // Batched 1-D FFTs along contiguous rows (see FftCall): cuFFT on the GPU, the registered host
    // FFT on the CPU (ember::set_host_fft).
    virtual void fft(const FftCall& call) = 0;
    // Inclusive scans of `rows` contiguous rows of `len` elements of `dtype`: out[r, i] <-
    // in[r, 0] op ... op in[r, i], in an order fixed by (rows, len), so results are deterministic.
    // The default (src/backend/scan.cpp) is a host loop, in place on the CPU, elsewhere through a
    // host copy; it takes every dtype but 16-bit floats (integers wrap modulo 2^bits as NumPy's;
    // bool: or / and). A device's override may take fewer (the CUDA one: int32, int64, uint32,
    // uint64, float32, float64; complex through the default); the front-end casts others. out
    // may be in.
    virtual void scan(ScanOp op, DType dtype, void* out, const void* in, int64_t rows, int64_t len,
                      int device);
    // Stream compaction: the k-th i < n (in order) with mask[i] != 0 copies row i of src (`row`
    // contiguous elements of `itemsize` bytes) to row k of out; with src null, out (int64) gets
    // i instead (nonzero). The caller sizes out from the number of set mask bytes.
    virtual void compact(void* out, const void* src, const uint8_t* mask, int64_t n, int64_t row,
                         int itemsize, int device);
    // dst[offsets[i]] <- src[i] for i < n (elements of `itemsize` bytes; src and offsets
    // contiguous, offsets checked and inside [lo, lo + extent)): where offsets repeat the last i
    // wins, as NumPy's assignment; `unique` says the caller knows they do not repeat.
    virtual void scatter(void* dst, const void* src, const int64_t* offsets, int64_t n,
                         int itemsize, int64_t lo, int64_t extent, bool unique, int device);
    // Dense factorizations (see SolverCall).
    virtual void solver(const SolverCall& call) = 0;
    // Updates parameters and optimizer state in place: on the GPU in one launch per 48 tensors.
    virtual void optimizer_step(const OptimizerStep& step) = 0;
    // Row-wise softmax / cross-entropy / layer norm and their backwards (see RowsCall).
    virtual void rows(const RowsCall& call) = 0;
};

// The backend for a device type, or nullptr when it is not available in this process.
Backend* get(DeviceType type);
// The backend for `d`; throws ValueError naming `who` when unavailable.
Backend& of(Device d, const char* who);

// The CPU backend is always present.
Backend& cpu();
// The CUDA backend, or nullptr with a one-line reason when no GPU is usable in this process.
Backend* cuda();
const std::string& cuda_unavailable_reason();
int cuda_device_count();

}  // namespace ember::backend
