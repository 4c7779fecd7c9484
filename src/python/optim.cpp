// Binding of the fused optimizer step (ember._core._optimizer_step); python/ember/optim's
// optimizers call it once per parameter group and step.
#include "ember/optim.hpp"

#include <string>
#include <vector>

#include "ops/optim.hpp"
#include "python/common.hpp"

namespace ember::python {

namespace {

using namespace nb::literals;

std::vector<Array> arrays(nb::handle seq, const char* what) {
    std::vector<Array> out;
    if (seq.is_none()) return out;
    for (nb::handle h : seq) {
        if (!is_ndarray(h))
            throw TypeError(std::string("ember.optim: ") + what + " must be ember arrays, got " +
                            std::string(nb::type_name(h.type()).c_str()));
        out.push_back(as_array(h));
    }
    return out;
}

optim::Kind to_kind(const std::string& s) {
    if (s == "sgd") return optim::Kind::sgd;
    if (s == "adam") return optim::Kind::adam;
    if (s == "rmsprop") return optim::Kind::rmsprop;
    if (s == "adagrad") return optim::Kind::adagrad;
    throw ValueError("ember.optim: unknown optimizer kind '" + s + "'");
}

}  // namespace

void bind_optim(nb::module_& m) {
    m.def(
        "_optimizer_step",
        [](const std::string& kind, nb::handle params, nb::handle grads, nb::handle s1,
           nb::handle s2, nb::handle s3, double lr, double weight_decay, double momentum,
           double dampening, double beta1, double beta2, double eps, double bias1,
           double bias2_sqrt, bool maximize, bool nesterov, bool first, bool amsgrad,
           bool decoupled, bool centered) {
            optim::Hyper h;
            h.kind = uint32_t(to_kind(kind));
            h.lr = lr;
            h.weight_decay = weight_decay;
            h.momentum = momentum;
            h.dampening = dampening;
            h.beta1 = beta1;
            h.beta2 = beta2;
            h.eps = eps;
            h.bias1 = bias1;
            h.bias2_sqrt = bias2_sqrt;
            h.flags = (maximize ? optim::f_maximize : 0) | (nesterov ? optim::f_nesterov : 0) |
                      (first ? optim::f_first : 0) | (amsgrad ? optim::f_amsgrad : 0) |
                      (decoupled ? optim::f_decoupled : 0) | (centered ? optim::f_centered : 0) |
                      (momentum != 0 ? optim::f_momentum : 0);
            const std::vector<Array> p = arrays(params, "parameters"), g = arrays(grads, "grads");
            const std::vector<Array> a = arrays(s1, "states"), b = arrays(s2, "states"),
                                     c = arrays(s3, "states");
            int64_t total = 0;
            for (const Array& x : p)
                total += x.size();
            heavy(total, [&] {
                optim::step(h, p, g, a, b, c);
                return 0;
            });
        },
        "kind"_a, "params"_a, "grads"_a, "s1"_a.none(), "s2"_a.none(), "s3"_a.none(), "lr"_a,
        "weight_decay"_a = 0.0, "momentum"_a = 0.0, "dampening"_a = 0.0, "beta1"_a = 0.0,
        "beta2"_a = 0.0, "eps"_a = 0.0, "bias1"_a = 1.0, "bias2_sqrt"_a = 1.0, "maximize"_a = false,
        "nesterov"_a = false, "first"_a = false, "amsgrad"_a = false, "decoupled"_a = false,
        "centered"_a = false,
        "One fused optimizer step over lists of parameters, gradients and states (in place).");
}

}  // namespace ember::python
