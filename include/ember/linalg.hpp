// Dense factorizations of batched matrices (..., m, n) on either device: LAPACK on the CPU,
// cuSOLVER on the GPU. These are the building blocks; Python's ember.linalg composes NumPy's
// functions (inv, solve, det, svd, ...) from them.
#pragma once

#include <cstdint>

#include "ember/array.hpp"

namespace ember::linalg {

enum class Factorization : uint8_t { lu, lu_solve, cholesky, qr, qr_q, eigh, svd, eig };

// What a factorization returns; arrays it does not produce are left undefined. Matrix results
// have NumPy's shapes (..., rows, cols) and are views of column-major buffers (LAPACK's layout).
// `info` (..., int32) holds LAPACK's info per matrix: > 0 means singular (lu), not positive
// definite (cholesky) or no convergence (eigh, svd, eig). Nothing here synchronizes.
struct Factors {
    Array a;      // lu: L\U; cholesky: L in the lower triangle (the upper one is not cleared);
                  // qr: R above the diagonal, reflectors below; qr_q: Q; lu_solve: the solution;
                  // eigh / eig: the eigenvectors as columns
    Array ipiv;   // lu: (..., min(m, n)) int64, 1-based row swaps
    Array tau;    // qr: (..., min(m, n))
    Array w;      // eigh (real, ascending), svd (real, descending), eig (complex)
    Array u, vt;  // svd: U (..., m, m or p) and V^H (..., n or p, n)
    Array info;
};

// Runs one factorization. `a` is float32, float64, complex64 or complex128 (other dtypes raise
// TypeError) with at least two dimensions; it is copied, never modified. Per kind:
//   lu (a);  lu_solve (a and ipiv: lu's results, b: (..., n, k) right-hand sides, same batch);
//   cholesky (square a);  qr (a);  qr_q (a and tau: qr's results; Q is m x m when `full`,
//   else m x min(m, n));  eigh (square a; `vectors`);  svd (`vectors`, `full`);
//   eig (square a; `vectors`).
Factors factorize(Factorization kind, const Array& a, const Array* b = nullptr,
                  const Array* ipiv = nullptr, const Array* tau = nullptr, bool vectors = true,
                  bool full = false);

}  // namespace ember::linalg
