// Binding of the fused optimizer step (ember._core._optimizer_step); python/ember/optim's
// optimizers call it once per parameter group and step.
#include "ember/optim.hpp"

#include <string>
#include <vector>

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

}  // namespace

void bind_optim(nb::module_& m) {
    m.def(
        "_optimizer_step",
        [](const std::string& kind, nb::handle params, nb::handle grads, nb::handle s1,
           nb::handle s2, nb::handle s3, double lr, double weight_decay, double momentum,
           double dampening, double beta1, double beta2, double eps, double bias1,
           double bias2_sqrt, bool maximize, bool nesterov, bool first, bool amsgrad,
           bool decoupled, bool centered, nb::handle steps) {
            optim::StepOptions o;
            o.kind = kind;
            o.lr = lr;
            o.weight_decay = weight_decay;
            o.momentum = momentum;
            o.dampening = dampening;
            o.beta1 = beta1;
            o.beta2 = beta2;
            o.eps = eps;
            o.bias1 = bias1;
            o.bias2_sqrt = bias2_sqrt;
            o.maximize = maximize;
            o.nesterov = nesterov;
            o.first = first;
            o.amsgrad = amsgrad;
            o.decoupled = decoupled;
            o.centered = centered;
            o.device_step = !steps.is_none();
            if (o.device_step) o.steps = arrays(steps, "step counts");
            const std::vector<Array> p = arrays(params, "parameters"), g = arrays(grads, "grads");
            const std::vector<Array> a = arrays(s1, "states"), b = arrays(s2, "states"),
                                     c = arrays(s3, "states");
            int64_t total = 0;
            for (const Array& x : p)
                total += x.size();
            heavy(total, [&] {
                optim::step(o, p, g, a, b, c);
                return 0;
            });
        },
        "kind"_a, "params"_a, "grads"_a, "s1"_a.none(), "s2"_a.none(), "s3"_a.none(), "lr"_a,
        "weight_decay"_a = 0.0, "momentum"_a = 0.0, "dampening"_a = 0.0, "beta1"_a = 0.0,
        "beta2"_a = 0.0, "eps"_a = 0.0, "bias1"_a = 1.0, "bias2_sqrt"_a = 1.0, "maximize"_a = false,
        "nesterov"_a = false, "first"_a = false, "amsgrad"_a = false, "decoupled"_a = false,
        "centered"_a = false, "steps"_a.none() = nb::none(),
        "One fused optimizer step over lists of parameters, gradients and states (in place).");
}

}  // namespace ember::python
