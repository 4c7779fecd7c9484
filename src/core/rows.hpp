// The fused row ops' shared pieces (src/core/rows.cpp): the move of the reduced axis to a
// contiguous last axis, and the front-ends of the backward kernels that autograd's nodes
// (src/autograd/rows.cpp) call.
#pragma once

#include <cstdint>
#include <vector>

#include "ember/array.hpp"

namespace ember::nn::detail {

// An array viewed as contiguous rows along `axis`: the permutation that moves it last and back.
struct Rows {
    int axis = 0, ndim = 0;
    std::vector<int64_t> perm, inv;
    int64_t rows = 0, n = 0;

    Rows(const Shape& shape, int ax);
    bool last() const { return axis == ndim - 1; }
    // a's elements as a C-contiguous (..., n) array with the axis last (a copy only when needed).
    Array to_rows(const Array& a) const {
        return last() ? a.contiguous() : a.permute(perm).contiguous();
    }
    // The inverse of to_rows: a view in the original layout.
    Array from_rows(const Array& r) const { return last() ? r : r.permute(inv); }
};

// The dtype the row kernels accumulate in: float32 for the 16-bit floats, else `t`.
DType acc_dtype(DType t);

// What cross_entropy's forward kernel leaves for its backward: contiguous per-row arrays in the
// accumulation dtype (target int64, weight of x's dtype or undefined), not differentiated.
struct CrossEntropySaved {
    Array target, weight, row_max, logsum, wt;
    int64_t ignore_index = -100;
    double label_smoothing = 0.0;
};

// dx of softmax (log_softmax when `log`) from its output y and the gradient g (y's dtype).
Array softmax_backward(const Array& y, const Array& g, const Rows& L, bool log);
// dx of cross_entropy's per-row loss from x and the loss gradient g (acc dtype).
Array cross_entropy_backward(const Array& x, const Array& g, const Rows& L,
                             const CrossEntropySaved& s);
// dx, dgamma, dbeta of layer_norm over the last k dims of x (shape xshape), those asked for by
// `want` (the others undefined); gamma may be undefined.
std::vector<Array> layer_norm_backward(const Array& x, const Array& gamma, const Array& g,
                                       const Array& mean, const Array& rstd, int k,
                                       const bool want[3]);

}  // namespace ember::nn::detail
