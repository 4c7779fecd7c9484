// LAPACK for the CPU backend, loaded at run time from the library that gives BLAS (blas.hpp):
// NumPy's OpenBLAS when NumPy is loaded, else EMBER_BLAS / EMBER_LAPACK, else the system's.
#pragma once

#include <string>
#include <vector>

#include "backend/backend.hpp"

namespace ember::host {

// Runs one SolverCall (backend.hpp) on host memory, matrix by matrix. Sizes and arguments are
// checked before LAPACK sees them (reference LAPACK's XERBLA stops the process on a bad one);
// throws ValueError for bad arguments, Error when no LAPACK library can be found.
void lapack_solver(const backend::SolverCall& call);

// The LAPACK library in use, as "path (LP64|ILP64, symbols like dgesdd_)"; throws Error when
// there is none.
std::string lapack_library();

namespace detail {
// Tries to resolve LAPACK from `candidates` alone (dlopen names or paths, not the BLAS library):
// "" when one has every routine, else the message lapack_solver would throw. For tests.
std::string lapack_probe(const std::vector<std::string>& candidates);
}  // namespace detail

}  // namespace ember::host
