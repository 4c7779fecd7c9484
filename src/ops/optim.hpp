// The optimizers' per-element updates (SGD, Adam/AdamW, RMSprop, Adagrad) with PyTorch's
// formulas, written once for all backends: the CPU backend compiles this header, the CUDA backend
// hands its text to NVRTC (after the device prelude) for the fused multi-tensor step kernel, in
// which one launch updates every parameter of a group.
#pragma once

#ifndef EMBER_HD
#define EMBER_HD
#endif

#ifndef EMBER_DEVICE_PRELUDE
#include <cmath>
#include <cstdint>

#include "ops/scalar.hpp"  // ops::sqrt (the device prelude supplies the math on the GPU)
#endif

namespace ember::optim {

enum class Kind : uint32_t { sgd = 0, adam = 1, rmsprop = 2, adagrad = 3 };

// Flags of Hyper::flags.
enum : uint32_t {
    f_maximize = 1,       // ascend: the gradient is negated
    f_nesterov = 2,       // SGD
    f_first = 4,          // SGD: the momentum buffer starts as the gradient
    f_amsgrad = 8,        // Adam: max of the second moments
    f_decoupled = 16,     // AdamW: weight decay applied to the parameter, not the gradient
    f_centered = 32,      // RMSprop
    f_momentum = 64,      // SGD and RMSprop: momentum != 0 (uses a buffer)
    f_device_step = 128,  // Adam: the step count is read from memory per tensor (capturable)
};

// One group's hyperparameters for one step, with the step-dependent factors computed by the
// host in double (bias corrections, Adagrad's decayed learning rate). Plain fixed-width fields:
// the same layout in g++ and NVRTC, passed to kernels by value.
struct Hyper {
    double lr = 0;            // Adagrad: the decayed lr of this step
    double weight_decay = 0;  //
    double momentum = 0;      // SGD, RMSprop
    double dampening = 0;     // SGD
    double beta1 = 0;         // Adam
    double beta2 = 0;         // Adam; RMSprop's alpha
    double eps = 0;           // Adam, RMSprop, Adagrad
    double bias1 = 1;         // Adam: 1 - beta1^step
    double bias2_sqrt = 1;    // Adam: sqrt(1 - beta2^step)
    uint32_t kind = 0;        // Kind
    uint32_t flags = 0;
};

// The state arrays of each kind, in order (s1, s2, s3); those a step does not use may be null.
//   sgd:     momentum_buffer (f_momentum)
//   adam:    exp_avg, exp_avg_sq, max_exp_avg_sq (f_amsgrad)
//   rmsprop: square_avg, grad_avg (f_centered), momentum_buffer (f_momentum)
//   adagrad: sum

// One element: parameter p, gradient g, states s1..s3, all in the compute type C (float for
// 16- and 32-bit parameters, double for float64). States the kind does not use are ignored.
template <class C>
EMBER_HD inline void update(const Hyper& h, C& p, C g, C& s1, C& s2, C& s3) {
    const uint32_t fl = h.flags;
    if (fl & f_maximize) g = -g;
    const C lr = C(h.lr), wd = C(h.weight_decay);
    switch (Kind(h.kind)) {
        case Kind::sgd: {
            if (wd != C(0)) g = g + wd * p;
            if (fl & f_momentum) {
                const C mom = C(h.momentum);
                s1 = (fl & f_first) ? g : mom * s1 + (C(1) - C(h.dampening)) * g;
                g = (fl & f_nesterov) ? g + mom * s1 : s1;
            }
            p = p - lr * g;
            break;
        }
        case Kind::adam: {
            if (fl & f_decoupled) {
                p = p * (C(1) - lr * wd);
            } else if (wd != C(0)) {
                g = g + wd * p;
            }
            const C b1 = C(h.beta1), b2 = C(h.beta2);
            s1 = s1 + (g - s1) * (C(1) - b1);
            s2 = s2 * b2 + (C(1) - b2) * g * g;
            C second = s2;
            if (fl & f_amsgrad) {
                s3 = s3 > s2 ? s3 : s2;
                second = s3;
            }
            const C denom = ops::sqrt(second) / C(h.bias2_sqrt) + C(h.eps);
            p = p - (lr / C(h.bias1)) * (s1 / denom);
            break;
        }
        case Kind::rmsprop: {
            if (wd != C(0)) g = g + wd * p;
            const C alpha = C(h.beta2);
            s1 = alpha * s1 + (C(1) - alpha) * g * g;
            C avg;
            if (fl & f_centered) {
                s2 = s2 + (g - s2) * (C(1) - alpha);
                avg = ops::sqrt(s1 - s2 * s2) + C(h.eps);
            } else {
                avg = ops::sqrt(s1) + C(h.eps);
            }
            if (fl & f_momentum) {
                s3 = C(h.momentum) * s3 + g / avg;
                p = p - lr * s3;
            } else {
                p = p - lr * (g / avg);
            }
            break;
        }
        case Kind::adagrad: {
            if (wd != C(0)) g = g + wd * p;
            s1 = s1 + g * g;
            p = p - lr * (g / (ops::sqrt(s1) + C(h.eps)));
            break;
        }
    }
}

// Adam with its step count t in memory (capturable=True: a CUDA graph replays the step with the
// count it reads, not the count of the capture): the bias corrections of step t.
EMBER_HD inline void at_step(Hyper& h, double t) {
#ifdef EMBER_DEVICE_PRELUDE
    h.bias1 = 1.0 - ::pow(h.beta1, t);
    h.bias2_sqrt = ::sqrt(1.0 - ::pow(h.beta2, t));
#else
    h.bias1 = 1.0 - std::pow(h.beta1, t);
    h.bias2_sqrt = std::sqrt(1.0 - std::pow(h.beta2, t));
#endif
}

// Whether a step of `h` reads and writes state array i (0..2).
EMBER_HD inline bool uses_state(const Hyper& h, int i) {
    switch (Kind(h.kind)) {
        case Kind::sgd:
            return i == 0 && (h.flags & f_momentum);
        case Kind::adam:
            return i < 2 || (i == 2 && (h.flags & f_amsgrad));
        case Kind::rmsprop:
            return i == 0 || (i == 1 && (h.flags & f_centered)) ||
                   (i == 2 && (h.flags & f_momentum));
        case Kind::adagrad:
            return i == 0;
    }
    return false;
}

}  // namespace ember::optim
