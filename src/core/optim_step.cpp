// The fused optimizer step's front-end: checks the arrays, groups them by dtype and hands each
// group to its backend in one call.
#include <string>
#include <vector>

#include "core/internal.hpp"
#include "ember/error.hpp"
#include "ember/optim.hpp"
#include "ops/optim.hpp"

namespace ember::optim {

namespace {

[[noreturn]] void bad(const std::string& what) { throw ValueError("ember.optim: " + what); }

std::string shape_text(const Array& a) { return shape_str(a.shape()); }

Kind to_kind(const std::string& s) {
    if (s == "sgd") return Kind::sgd;
    if (s == "adam") return Kind::adam;
    if (s == "rmsprop") return Kind::rmsprop;
    if (s == "adagrad") return Kind::adagrad;
    throw ValueError("ember.optim: unknown optimizer kind '" + s + "'");
}

}  // namespace

void step(const StepOptions& o, std::span<const Array> params, std::span<const Array> grads,
          std::span<const Array> s1, std::span<const Array> s2, std::span<const Array> s3) {
    Hyper h;
    h.kind = uint32_t(to_kind(o.kind));
    h.lr = o.lr;
    h.weight_decay = o.weight_decay;
    h.momentum = o.momentum;
    h.dampening = o.dampening;
    h.beta1 = o.beta1;
    h.beta2 = o.beta2;
    h.eps = o.eps;
    h.bias1 = o.bias1;
    h.bias2_sqrt = o.bias2_sqrt;
    h.flags = (o.maximize ? f_maximize : 0) | (o.nesterov ? f_nesterov : 0) |
              (o.first ? f_first : 0) | (o.amsgrad ? f_amsgrad : 0) |
              (o.decoupled ? f_decoupled : 0) | (o.centered ? f_centered : 0) |
              (o.momentum != 0 ? f_momentum : 0) | (o.device_step ? f_device_step : 0);
    step(h, params, grads, s1, s2, s3, o.steps);
}

void step(const Hyper& h, std::span<const Array> params, std::span<const Array> grads,
          std::span<const Array> s1, std::span<const Array> s2, std::span<const Array> s3,
          std::span<const Array> steps) {
    const std::span<const Array> states[3] = {s1, s2, s3};
    if (h.kind > uint32_t(Kind::adagrad)) bad("unknown optimizer kind " + std::to_string(h.kind));
    const size_t n = params.size();
    if (grads.size() != n)
        bad("got " + std::to_string(n) + " parameters but " + std::to_string(grads.size()) +
            " gradients");
    for (int k = 0; k < 3; ++k)
        if (uses_state(h, k) && states[k].size() != n)
            bad("state " + std::to_string(k + 1) + " has " + std::to_string(states[k].size()) +
                " arrays for " + std::to_string(n) + " parameters");
    const bool device_step = h.flags & f_device_step;
    if (device_step && h.kind != uint32_t(Kind::adam)) bad("step counts in memory are Adam's only");
    if (device_step && steps.size() != n)
        bad("got " + std::to_string(steps.size()) + " step counts for " + std::to_string(n) +
            " parameters");
    if (n == 0) return;
    const Device dev = params[0].device();
    // Contiguous stand-ins for non-contiguous arrays (alive until the step ran), and which ones
    // are written back at the end.
    std::vector<Array> keep;
    std::vector<std::pair<Array, Array>> write_back;
    auto contiguous = [&](const Array& a, bool written) -> void* {
        if (a.is_contiguous()) return a.data();
        keep.push_back(a.copy());
        if (written) write_back.push_back({a, keep.back()});
        return keep.back().data();
    };
    std::vector<backend::OptimizerStep> groups;  // one per dtype
    for (size_t i = 0; i < n; ++i) {
        const Array& p = params[i];
        const std::string which = "parameter " + std::to_string(i);
        if (!p.defined()) bad(which + " is undefined");
        if (!is_floating(p.dtype()))
            throw TypeError("ember.optim: " + which + " has dtype " + std::string(name(p.dtype())) +
                            "; parameters must be floating point");
        if (p.device() != dev)
            bad(which + " is on " + p.device().str() + " but parameter 0 is on " + dev.str());
        auto check = [&](const Array& a, const std::string& what) {
            if (!a.defined()) bad("the " + what + " of " + which + " is undefined");
            if (a.device() != dev)
                bad("the " + what + " of " + which + " is on " + a.device().str() +
                    " but the parameter is on " + dev.str());
            if (!(a.shape() == p.shape()))
                bad("the " + what + " of " + which + " has shape " + shape_text(a) +
                    " but the parameter has shape " + shape_text(p));
            if (a.dtype() != p.dtype())
                throw TypeError("ember.optim: the " + what + " of " + which + " has dtype " +
                                std::string(name(a.dtype())) + " but the parameter has " +
                                std::string(name(p.dtype())));
        };
        check(grads[i], "gradient");
        for (int k = 0; k < 3; ++k)
            if (uses_state(h, k)) check(states[k][i], "state " + std::to_string(k + 1));
        if (device_step) {
            const Array& t = steps[i];
            if (!t.defined() || t.device() != dev || t.dtype() != DType::float32 || t.size() != 1)
                bad("the step count of " + which +
                    " must be a 1-element float32 array on the parameter's device");
        }
        if (p.size() == 0) continue;
        backend::OptimizerStep* g = nullptr;
        for (auto& x : groups)
            if (x.dtype == p.dtype()) g = &x;
        if (!g) {
            groups.emplace_back();
            g = &groups.back();
            g->hyper = h;
            g->dtype = p.dtype();
            g->device = dev.index;
        }
        g->param.push_back(contiguous(p, true));
        g->grad.push_back(contiguous(grads[i], false));
        for (int k = 0; k < 3; ++k)
            g->state[k].push_back(uses_state(h, k) ? contiguous(states[k][i], true) : nullptr);
        if (device_step) g->step.push_back(steps[i].data());
        g->n.push_back(p.size());
    }
    backend::Backend& be = backend::of(dev, "ember.optim");
    for (const auto& g : groups)
        be.optimizer_step(g);
    for (auto& [orig, copy] : write_back)
        orig.assign(copy);
    // In-place writes: arrays saved for a backward see that they changed (autograd's check).
    for (size_t i = 0; i < n; ++i) {
        params[i].storage()->bump_version();
        for (int k = 0; k < 3; ++k)
            if (uses_state(h, k)) states[k][i].storage()->bump_version();
    }
}

}  // namespace ember::optim
