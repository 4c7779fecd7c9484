// Fused neural-network row ops (softmax, log_softmax, cross_entropy, layer_norm): one backend
// kernel per op over contiguous rows, differentiable through nodes whose backward is the fused
// backward kernel (composed of ember ops under create_graph, so higher derivatives work too).
#pragma once

#include <cstdint>

#include "ember/array.hpp"

namespace ember::nn {

// softmax / log_softmax of a floating-point array along `axis` (any axis; 0-d arrays are one row
// of one element). float16 and bfloat16 compute in float32; the result has x's dtype.
Array softmax(const Array& x, int64_t axis = -1);
Array log_softmax(const Array& x, int64_t axis = -1);

enum class Reduction : uint8_t { none, mean, sum };

// Cross-entropy of logits `x` ((C,) or (N, C, d1, ...): classes along axis 0 for 1-D input,
// else axis 1, as PyTorch) and integer class indices `target` (x's shape without the class
// axis). `weight` (C,) rescales classes (undefined: none; it gets no gradient); targets equal to
// `ignore_index` contribute nothing; `label_smoothing` in [0, 1] mixes the target with the
// uniform distribution. "mean" divides by the sum of the targets' weights. On the CPU an
// out-of-range target raises IndexError; on a GPU its loss is NaN (no host synchronization).
Array cross_entropy(const Array& x, const Array& target, const Array& weight = Array(),
                    int64_t ignore_index = -100, double label_smoothing = 0.0,
                    Reduction reduction = Reduction::mean);

// Layer normalization over the last `normalized_ndim` dims: (x - mean) / sqrt(var + eps) *
// weight + bias with the biased variance; weight and bias (undefined: none) have the shape of
// those dims and are cast to x's dtype.
Array layer_norm(const Array& x, int normalized_ndim, const Array& weight = Array(),
                 const Array& bias = Array(), double eps = 1e-5);

}  // namespace ember::nn
