// The fused optimizer step: SGD, Adam/AdamW, RMSprop and Adagrad updates of many parameters at
// once (on the GPU one kernel launch per 48 tensors), with PyTorch's formulas (src/ops/optim.hpp).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "ember/array.hpp"

namespace ember::optim {

struct Hyper;  // src/ops/optim.hpp: the kind, the hyperparameters and this step's factors

// Updates params[i] (and the optimizer state arrays states[k][i] that the step uses) in place
// from grads[i]. All arrays of one call are on one device; each grads[i] and states[k][i] has
// params[i]'s shape and dtype (floating point). Non-contiguous ones are updated through
// contiguous copies. With f_device_step in h.flags, steps[i] is params[i]'s step count (a 0-d
// float32 array on its device). Throws ValueError/TypeError naming "ember.optim" for anything else.
void step(const Hyper& h, std::span<const Array> params, std::span<const Array> grads,
          std::span<const Array> s1, std::span<const Array> s2, std::span<const Array> s3,
          std::span<const Array> steps = {});

// The same step described by name and plain options (what the Python optimizers pass): `kind` is
// "sgd", "adam", "rmsprop" or "adagrad"; bias1 and bias2_sqrt are Adam's bias corrections of this
// step (1 - beta1^t, sqrt(1 - beta2^t)), lr Adagrad's decayed rate of this step. ValueError for an
// unknown kind.
struct StepOptions {
    std::string kind = "sgd";
    double lr = 0, weight_decay = 0, momentum = 0, dampening = 0, beta1 = 0, beta2 = 0, eps = 0;
    double bias1 = 1, bias2_sqrt = 1;
    bool maximize = false, nesterov = false, first = false, amsgrad = false, decoupled = false,
         centered = false;
    // Adam, capturable: each parameter's step count as a 0-d float32 array on its device, read
    // by the step (bias1 and bias2_sqrt are then ignored). Empty: the host's bias corrections.
    bool device_step = false;
    std::vector<Array> steps;
};
void step(const StepOptions& o, std::span<const Array> params, std::span<const Array> grads,
          std::span<const Array> s1, std::span<const Array> s2, std::span<const Array> s3);

}  // namespace ember::optim
