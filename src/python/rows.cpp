// Bindings of the fused row ops of ember/nn.hpp (ember._core._softmax, _cross_entropy,
// _layer_norm); python/ember/nn/functional.py calls them where the input suits the kernels.
#include "ember/nn.hpp"

#include <string>

#include "python/common.hpp"

namespace ember::python {

namespace {

using namespace nb::literals;

const Array& arg(nb::handle h, const char* who, const char* what) {
    if (!is_ndarray(h))
        throw TypeError(std::string(who) + ": " + what + " must be an ember.ndarray, got " +
                        std::string(nb::type_name(h.type()).c_str()));
    return as_array(h);
}

Array opt_arg(nb::handle h, const char* who, const char* what) {
    return h.is_none() ? Array() : arg(h, who, what);
}

nn::Reduction to_reduction(const std::string& s) {
    if (s == "none") return nn::Reduction::none;
    if (s == "mean") return nn::Reduction::mean;
    if (s == "sum") return nn::Reduction::sum;
    throw ValueError("ember.nn.cross_entropy: reduction must be 'none', 'mean' or 'sum', got '" +
                     s + "'");
}

}  // namespace

void bind_rows(nb::module_& m) {
    m.def(
        "_softmax",
        [](nb::handle x, int64_t axis, bool log) {
            const Array& a = arg(x, log ? "ember.nn.log_softmax" : "ember.nn.softmax", "input");
            return wrap(heavy(a.size(), log ? nn::log_softmax : nn::softmax, a, axis));
        },
        "x"_a, "axis"_a, "log"_a,
        "Fused softmax (log=False) or log_softmax (log=True) of a floating array along axis.");
    m.def(
        "_cross_entropy",
        [](nb::handle x, nb::handle target, nb::handle weight, int64_t ignore_index,
           double label_smoothing, const std::string& reduction) {
            const char* who = "ember.nn.cross_entropy";
            const Array& a = arg(x, who, "input");
            const Array& t = arg(target, who, "target");
            const Array w = opt_arg(weight, who, "weight");
            const nn::Reduction r = to_reduction(reduction);
            return wrap(
                heavy(a.size(), nn::cross_entropy, a, t, w, ignore_index, label_smoothing, r));
        },
        "x"_a, "target"_a, "weight"_a.none(), "ignore_index"_a, "label_smoothing"_a, "reduction"_a,
        "Fused cross-entropy of logits (C,) or (N, C, *) and integer class targets.");
    m.def(
        "_layer_norm",
        [](nb::handle x, int normalized_ndim, nb::handle weight, nb::handle bias, double eps) {
            const char* who = "ember.nn.layer_norm";
            const Array& a = arg(x, who, "input");
            const Array w = opt_arg(weight, who, "weight"), b = opt_arg(bias, who, "bias");
            return wrap(heavy(a.size(), nn::layer_norm, a, normalized_ndim, w, b, eps));
        },
        "x"_a, "normalized_ndim"_a, "weight"_a.none(), "bias"_a.none(), "eps"_a,
        "Fused layer norm over the last normalized_ndim dims.");
}

}  // namespace ember::python
