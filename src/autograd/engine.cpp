// The autograd engine: grad mode, the autograd state of arrays, saved arrays with their versions,
// leaf accumulation, and backward()/grad() over the recorded graph (dependency counts, then
// nodes in topological order, latest-recorded first among the ready ones).
#include <algorithm>
#include <atomic>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "autograd/internal.hpp"
#include "ember/debug.hpp"
#include "ember/error.hpp"
#include "ember/ops.hpp"

namespace ember::autograd {

namespace {

thread_local bool grad_mode = true;
std::atomic<bool> anomaly{false};
std::atomic<std::string (*)()> context_hook{nullptr};
std::atomic<uint64_t> next_seq{0};

std::string info_str(const Array& a) {
    return std::string(name(a.dtype())) + " array of shape " + shape_str(a.shape());
}

// Whether `a` has the layout `want` (strides in elements; an axis of length 1 may have any
// stride), so a gradient in the layout of its leaf is kept as it is.
bool same_layout(const Array& a, const Strides& want) {
    const auto& sh = a.shape();
    const auto& st = a.strides();
    if (st.size() != want.size()) return false;
    for (size_t i = 0; i < st.size(); ++i)
        if (sh[i] != 1 && st[i] != want[i]) return false;
    return true;
}

// Gradients of a leaf (or of a non-leaf that retains its gradient) add up in `dst`: a fresh
// array the first time (the incoming one when nothing else holds it and it is C-ordered or in
// the leaf's own layout `leaf`, so a channels_last leaf keeps a channels_last gradient without
// a copy, as in PyTorch; else a C-ordered copy), then in place (out of place, keeping the
// history, under create_graph).
void accumulate_grad(Array& dst, Array g, const Strides* leaf = nullptr) {
    if (!g.defined()) return;
    if (!dst.defined()) {
        const bool layout = g.is_contiguous() || (leaf && same_layout(g, *leaf));
        if (is_grad_enabled()) {
            dst = g.storage().use_count() == 1 && layout ? g : g.copy();
            return;
        }
        const bool own = g.storage().use_count() == 1 && layout && g.offset() == 0 &&
                         size_t(g.nbytes()) == g.storage()->nbytes();
        dst = own ? g.detach() : g.detach().copy();
        return;
    }
    if (is_grad_enabled())
        dst = add(dst, g);
    else
        dst += g;
}

// The leaf's gradient sink.
class AccumulateGrad final : public Node {
public:
    AccumulateGrad(MetaPtr meta, Strides leaf_strides)
        : meta_(std::move(meta)), leaf_strides_(std::move(leaf_strides)) {}
    std::string name() const override { return "AccumulateGrad"; }
    std::vector<Array> apply(std::vector<Array>&& grads) override {
        if (grads.empty()) return {};
        Array g = std::move(grads[0]);
        for (const auto& hook : meta_->hooks)
            if (Array r = hook(g); r.defined()) g = std::move(r);
        accumulate_grad(meta_->grad, std::move(g), &leaf_strides_);
        return {};
    }
    const MetaPtr& meta() const { return meta_; }

private:
    MetaPtr meta_;
    Strides leaf_strides_;  // the leaf's layout: a gradient in it is kept without a copy
};

std::shared_ptr<Node> accumulator(const MetaPtr& m, const Array& leaf) {
    if (auto p = m->accumulator.lock()) return p;
    auto p = std::make_shared<AccumulateGrad>(m, leaf.strides());
    p->outputs.push_back({leaf.shape(), leaf.dtype(), leaf.device()});
    m->accumulator = p;
    return p;
}

TensorInfo info_of(const Array& a) { return {a.shape(), a.dtype(), a.device()}; }

void check_finite(const Array& a, const std::string& what, const std::string& context = "") {
    if (!a.defined() || a.size() == 0 || !is_inexact(a.dtype())) return;
    NoGradGuard g;
    debug::OpScope op("anomaly detection (the finiteness check)");
    if (any(logical_not(isfinite(a))).item<bool>())
        throw Error("ember.autograd.detect_anomaly: " + what + " (a " + info_str(a) + ")" +
                    context);
}

// The recorded op's name for messages: "MultiplyBackward" -> "multiply".
std::string context_of(const Node& n) {
    return n.context.empty() ? std::string()
                             : "\nThe op was recorded here (anomaly mode):\n" + n.context;
}

}  // namespace

void retain(Meta* m) noexcept { m->refs.fetch_add(1, std::memory_order_relaxed); }
void release(Meta* m) noexcept {
    if (m->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete m;
}

bool is_grad_enabled() { return grad_mode; }
void set_grad_enabled(bool enabled) { grad_mode = enabled; }
bool is_anomaly_enabled() { return anomaly.load(std::memory_order_relaxed); }
void set_anomaly_enabled(bool enabled) { anomaly.store(enabled); }
void set_anomaly_context_hook(std::string (*hook)()) { context_hook.store(hook); }

Node::Node() : seq_(next_seq.fetch_add(1, std::memory_order_relaxed)) {}

Node::~Node() {
    // A long chain would be destroyed recursively (one stack frame per node): the last
    // references to the inputs' nodes are moved to a per-thread list and released in a loop.
    thread_local bool draining = false;
    thread_local std::vector<std::shared_ptr<Node>> pending;
    for (Edge& e : next)
        if (e.fn && e.fn.use_count() == 1) pending.push_back(std::move(e.fn));
    next.clear();
    if (draining) return;
    draining = true;
    while (!pending.empty()) {
        std::shared_ptr<Node> n = std::move(pending.back());
        pending.pop_back();
        n.reset();
    }
    draining = false;
}

// ---- saved arrays ---------------------------------------------------------------------------

SavedArray::SavedArray(const Array& a, bool is_output, uint32_t output_nr)
    : data_(a.detach()), version_(a.version()), output_(is_output), output_nr_(output_nr) {
    if (is_output) return;
    const MetaPtr& m = a.grad_meta();
    if (m && m->requires_grad) {
        requires_grad_ = true;
        if (m->grad_fn) {
            grad_fn_ = m->grad_fn;
            output_nr_ = m->output_nr;
        } else {
            leaf_acc_ = accumulator(m, a);
        }
    }
}

Array SavedArray::unpack(const Node& owner) const {
    if (!data_.defined()) {
        if (owner.freed)
            throw Error("ember.autograd: the arrays saved by " + owner.name() +
                        " were freed by a previous backward; pass retain_graph=True to it to "
                        "backward through the graph a second time");
        return data_;
    }
    if (data_.version() != version_)
        throw Error(
            "ember.autograd: one of the arrays needed for gradient computation has been "
            "modified by an in-place operation: the " +
            info_str(data_) + " saved by " + owner.name() + " is at version " +
            std::to_string(data_.version()) + "; expected version " + std::to_string(version_) +
            ". Use an out-of-place op (or .copy()) instead of the in-place one" +
            context_of(owner));
    if (!is_grad_enabled()) return data_;
    // create_graph: the unpacked array carries its history, for higher-order gradients.
    Array a = data_.detach();
    MetaPtr m = Meta::make();
    m->requires_grad = true;
    if (output_) {
        m->grad_fn = std::const_pointer_cast<Node>(owner.shared_from_this());
        m->output_nr = output_nr_;
    } else if (!requires_grad_) {
        return a;
    } else if (leaf_acc_) {
        a.set_grad_meta(static_cast<AccumulateGrad&>(*leaf_acc_).meta());
        return a;
    } else if (auto fn = grad_fn_.lock()) {
        m->grad_fn = std::move(fn);
        m->output_nr = output_nr_;
    } else {
        return a;
    }
    a.set_grad_meta(std::move(m));
    return a;
}

void SavedArray::reset() {
    data_ = Array();
    grad_fn_.reset();
    leaf_acc_.reset();
}

// ---- recording ------------------------------------------------------------------------------

Edge gradient_edge(const Array& a) {
    if (!a.defined()) return {};
    const MetaPtr& m = a.grad_meta();
    if (!m || !m->requires_grad) return {};
    if (m->is_view && a.storage()->rebases() != m->view_rebases) detail::refresh_view(a);
    if (m->grad_fn) return {m->grad_fn, m->output_nr};
    return {accumulator(m, a), 0};
}

void collect_next_edges(Node& node, std::span<const Array* const> inputs) {
    node.next.reserve(inputs.size());
    node.inputs.reserve(inputs.size());
    for (const Array* a : inputs) {
        if (!a || !a->defined()) {
            node.next.emplace_back();
            node.inputs.emplace_back();
            continue;
        }
        node.next.push_back(gradient_edge(*a));
        node.inputs.push_back(info_of(*a));
    }
}

void set_history(std::span<Array* const> outputs, const std::shared_ptr<Node>& node) {
    if (is_anomaly_enabled()) {
        for (Array* o : outputs)
            check_finite(*o, node->op_name() + " (recorded as " + node->name() +
                                 ") produced NaN or inf values in its forward output");
        if (auto hook = context_hook.load()) node->context = hook();
    }
    node->outputs.clear();
    for (size_t k = 0; k < outputs.size(); ++k) {
        MetaPtr m = Meta::make();
        m->requires_grad = true;
        m->grad_fn = node;
        m->output_nr = uint32_t(k);
        outputs[k]->set_grad_meta(std::move(m));
        node->outputs.push_back(info_of(*outputs[k]));
    }
}

bool any_requires_grad(std::span<const Array* const> inputs) {
    if (!is_grad_enabled()) return false;
    for (const Array* a : inputs)
        if (a && a->defined() && a->requires_grad()) return true;
    return false;
}

namespace detail {

bool should_record(const Array& a) { return a.requires_grad() && is_grad_enabled(); }
bool should_record(const Array& a, const Array& b) {
    return (a.requires_grad() || b.requires_grad()) && is_grad_enabled();
}
bool should_record_map(std::span<const Operand> xs, const Array* out) {
    if (!is_grad_enabled()) return false;
    for (const Operand& x : xs)
        if (!x.is_scalar && x.array().requires_grad()) return true;
    return out && out->requires_grad();
}
bool should_record_assign(const Array& x, const Operand& value) {
    return is_grad_enabled() &&
           (x.requires_grad() || (!value.is_scalar && value.array().requires_grad()));
}

void check_inplace(const Array& out, const std::string& who) {
    const MetaPtr& m = out.grad_meta();
    if (!m || !m->requires_grad || !is_grad_enabled()) return;
    if (!m->grad_fn)
        throw Error(who +
                    ": a leaf array that requires grad is being used in an in-place operation; "
                    "do it under ember.no_grad() (or on x.detach())");
    if (m->is_view && !m->view_fn)
        throw Error(who + ": in-place operation on a view (made by " + m->grad_fn->name() +
                    ") of an array that requires grad that cannot be written through (a "
                    "broadcast or strided view); use an out-of-place op");
    if (m->is_view && m->view_base.is_leaf())
        throw Error(who +
                    ": a view of a leaf array that requires grad is being used in an in-place "
                    "operation; do it under ember.no_grad() (or on x.detach())");
}

// An in-place op gave `out` a new history (its own node, output 0).
void rebase_history(const Array& out, const std::shared_ptr<Node>& node) {
    if (is_anomaly_enabled()) {
        check_finite(out, node->op_name() + " (recorded as " + node->name() +
                              ") produced NaN or inf values in place");
        if (auto hook = context_hook.load()) node->context = hook();
    }
    node->outputs.assign(1, info_of(out));
    MetaPtr m = out.grad_meta();
    if (!m) {
        m = Meta::make();
        out.set_grad_meta(m);
    }
    if (m->retains_grad && m->grad_fn) {
        auto& r = m->grad_fn->retained;
        r.erase(std::remove_if(r.begin(), r.end(),
                               [&](const auto& p) { return p.second == m->retained; }),
                r.end());
        node->retained.emplace_back(0, m->retained);
    }
    m->requires_grad = true;
    m->grad_fn = node;
    m->output_nr = 0;
    out.storage()->bump_rebases();
}

}  // namespace detail

// ---- the engine -----------------------------------------------------------------------------

namespace {

Array sum_to(const Array& g, const Shape& shape, const Node& n) {
    auto fail = [&] {
        return Error("ember.autograd: " + n.name() + " returned a gradient of shape " +
                     shape_str(g.shape()) + " for an input of shape " + shape_str(shape));
    };
    const int gd = g.ndim(), sd = int(shape.size());
    if (gd < sd) {
        try {
            return g.broadcast_to(shape);
        } catch (const ValueError&) {
            throw fail();
        }
    }
    const int lead = gd - sd;
    std::vector<int64_t> axes;
    for (int i = 0; i < lead; ++i)
        axes.push_back(i);
    bool expand = false;
    for (int i = 0; i < sd; ++i) {
        const int64_t gi = g.shape()[size_t(lead + i)], si = shape[size_t(i)];
        if (gi == si) continue;
        if (si == 1)
            axes.push_back(lead + i);
        else if (gi == 1)
            expand = true;
        else
            throw fail();
    }
    Array r = axes.empty() ? g : sum(g, axes, true);
    Shape rs(static_cast<size_t>(sd));
    for (int i = 0; i < sd; ++i)
        rs[size_t(i)] = r.shape()[size_t(lead + i)];
    if (!(r.shape() == rs)) r = r.reshape(rs);
    return expand ? r.broadcast_to(shape) : r;
}

// A node's gradient for one input, made to fit it: broadcast dims summed, cast to its dtype
// (the real part for a real input), on its device.
Array fit(Array g, const TensorInfo& in, const Node& n) {
    if (g.device() != in.device)
        throw Error("ember.autograd: " + n.name() + " returned a gradient on " + g.device().str() +
                    " for an input on " + in.device.str());
    if (!(g.shape() == in.shape)) g = sum_to(g, in.shape, n);
    if (g.dtype() != in.dtype) {
        if (is_complex(g.dtype()) && !is_complex(in.dtype)) g = real(g);
        if (g.dtype() != in.dtype) g = g.astype(in.dtype);
    }
    return g;
}

}  // namespace

Array detail::fit_gradient(Array g, const TensorInfo& in, const Node& n) {
    return fit(std::move(g), in, n);
}

namespace {

void add_into(std::vector<Array>& buf, uint32_t slot, Array g) {
    if (buf.size() <= slot) buf.resize(slot + 1);
    Array& s = buf[slot];
    if (!s.defined())
        s = std::move(g);
    else
        s = add(s, g);
}

struct Task {
    std::shared_ptr<Node> node;
    std::vector<Array> buf;
    int deps = 0;
    bool needed = true;
};

struct Ready {
    bool operator()(const Node* a, const Node* b) const {
        return a->sequence_nr() < b->sequence_nr();
    }
};

// Runs the graph from `roots` (seeded with `root_grads`). With `captures`, records the gradient
// arriving at each capture edge into `captured`, runs only the nodes that lead to them and never
// accumulates into leaves; otherwise accumulates into every leaf reached.
void run(const std::vector<Edge>& roots, std::vector<Array> root_grads, bool keep_graph,
         bool create_graph, const std::vector<Edge>* captures, std::vector<Array>* captured) {
    GradModeGuard mode(create_graph);
    std::unordered_map<Node*, Task> tasks;
    std::vector<Node*> stack;
    for (const Edge& e : roots) {
        auto [it, fresh] = tasks.try_emplace(e.fn.get());
        if (fresh) {
            it->second.node = e.fn;
            stack.push_back(e.fn.get());
        }
    }
    while (!stack.empty()) {
        Node* n = stack.back();
        stack.pop_back();
        for (const Edge& e : n->next) {
            if (!e.valid()) continue;
            auto [it, fresh] = tasks.try_emplace(e.fn.get());
            ++it->second.deps;
            if (fresh) {
                it->second.node = e.fn;
                stack.push_back(e.fn.get());
            }
        }
    }
    std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> capture_at;
    if (captures) {
        for (size_t i = 0; i < captures->size(); ++i)
            capture_at[(*captures)[i].fn.get()].emplace_back((*captures)[i].input_nr, i);
        // needed: the node leads to a capture. Post-order over the DAG.
        for (auto& [n, t] : tasks)
            t.needed = false;
        std::unordered_set<Node*> done;
        std::vector<std::pair<Node*, size_t>> st;
        for (const Edge& e : roots) {
            if (done.count(e.fn.get())) continue;
            st.emplace_back(e.fn.get(), 0);
            done.insert(e.fn.get());
            while (!st.empty()) {
                auto& [n, i] = st.back();
                if (i < n->next.size()) {
                    const Edge& c = n->next[i++];
                    if (c.valid() && done.insert(c.fn.get()).second) st.emplace_back(c.fn.get(), 0);
                    continue;
                }
                bool need = capture_at.count(n) > 0;
                for (const Edge& c : n->next)
                    if (c.valid() && tasks[c.fn.get()].needed) need = true;
                tasks[n].needed = need;
                st.pop_back();
            }
        }
    }
    for (size_t i = 0; i < roots.size(); ++i)
        add_into(tasks[roots[i].fn.get()].buf, roots[i].input_nr, std::move(root_grads[i]));

    std::priority_queue<Node*, std::vector<Node*>, Ready> ready;
    for (auto& [n, t] : tasks)
        if (t.deps == 0) ready.push(n);
    while (!ready.empty()) {
        Node* n = ready.top();
        ready.pop();
        Task& t = tasks[n];
        std::vector<Array> buf = std::move(t.buf);
        buf.resize(size_t(std::max(n->num_outputs(), 1)));
        if (captures) {
            auto it = capture_at.find(n);
            if (it != capture_at.end())
                for (auto [slot, idx] : it->second)
                    (*captured)[idx] = slot < buf.size() ? buf[slot] : Array();
        }
        for (auto& [out_nr, hook] : n->hooks)
            if (out_nr < buf.size() && buf[out_nr].defined())
                if (Array r = hook(buf[out_nr]); r.defined()) buf[out_nr] = std::move(r);
        for (auto& [out_nr, slot] : n->retained)
            if (out_nr < buf.size()) accumulate_grad(*slot, buf[out_nr]);
        std::vector<Array> grads;
        const bool is_leaf_sink = dynamic_cast<AccumulateGrad*>(n) != nullptr;
        if (t.needed && !(captures && is_leaf_sink)) {
            bool any_grad = false;
            for (const Array& b : buf)
                any_grad |= b.defined();
            if (n->materialize_grads()) {
                for (size_t k = 0; k < buf.size() && k < n->outputs.size(); ++k)
                    if (!buf[k].defined()) {
                        const TensorInfo& o = n->outputs[k];
                        buf[k] = zeros(o.shape, o.dtype, o.device);
                    }
                any_grad = true;
            }
            if (any_grad) {
                if (n->freed)
                    throw Error(
                        "ember.autograd: trying to backward through the graph a second time: "
                        "the arrays saved by " +
                        n->name() +
                        " were freed by the previous backward() or autograd.grad(); pass "
                        "retain_graph=True to that call to backward through the graph again");
                grads = n->apply(std::move(buf));
                if (is_anomaly_enabled())
                    for (size_t k = 0; k < grads.size(); ++k)
                        check_finite(grads[k],
                                     n->name() + " returned NaN or inf values in its " +
                                         std::to_string(k) + "th output",
                                     context_of(*n));
            }
            if (!keep_graph) n->release_saved();
        }
        for (size_t i = 0; i < n->next.size(); ++i) {
            const Edge& e = n->next[i];
            if (!e.valid()) continue;
            Task& c = tasks[e.fn.get()];
            if (i < grads.size() && grads[i].defined())
                add_into(c.buf, e.input_nr, fit(std::move(grads[i]), n->inputs[i], *n));
            if (--c.deps == 0) ready.push(e.fn.get());
        }
    }
}

std::vector<Edge> root_edges(std::span<const Array> outputs) {
    std::vector<Edge> roots;
    for (size_t i = 0; i < outputs.size(); ++i) {
        Edge e = gradient_edge(outputs[i]);
        if (!e.valid())
            throw Error("ember.autograd: element " + std::to_string(i) +
                        " of the outputs does not require grad and has no grad_fn");
        roots.push_back(std::move(e));
    }
    return roots;
}

std::vector<Array> root_grads(std::span<const Array> outputs, std::span<const Array> grads) {
    if (!grads.empty() && grads.size() != outputs.size())
        throw ValueError("ember.autograd: got " + std::to_string(grads.size()) + " gradients for " +
                         std::to_string(outputs.size()) + " outputs");
    std::vector<Array> r;
    for (size_t i = 0; i < outputs.size(); ++i) {
        const Array& o = outputs[i];
        if (grads.empty() || !grads[i].defined()) {
            if (o.size() != 1)
                throw Error(
                    "ember.autograd: grad can be implicitly created only for scalar outputs "
                    "(output " +
                    std::to_string(i) + " has shape " + shape_str(o.shape()) + "); pass gradient=");
            if (is_complex(o.dtype()))
                throw Error(
                    "ember.autograd: grad can be implicitly created only for real scalar "
                    "outputs (output " +
                    std::to_string(i) + " is " + std::string(name(o.dtype())) + ")");
            r.push_back(ones(o.shape(), o.dtype(), o.device()));
            continue;
        }
        Array g = grads[i];
        if (!(g.shape() == o.shape()))
            throw Error("ember.autograd: mismatch in shape: grad_output[" + std::to_string(i) +
                        "] has shape " + shape_str(g.shape()) + " and output[" + std::to_string(i) +
                        "] has shape " + shape_str(o.shape()));
        if (g.device() != o.device())
            throw Error("ember.autograd: grad_output[" + std::to_string(i) + "] is on " +
                        g.device().str() + " and output[" + std::to_string(i) + "] on " +
                        o.device().str());
        if (g.dtype() != o.dtype()) {
            if (is_complex(o.dtype()) != is_complex(g.dtype()))
                throw Error("ember.autograd: grad_output[" + std::to_string(i) + "] is " +
                            std::string(name(g.dtype())) + " but output[" + std::to_string(i) +
                            "] is " + std::string(name(o.dtype())));
            NoGradGuard ng;
            g = g.astype(o.dtype());
        }
        r.push_back(std::move(g));
    }
    return r;
}

}  // namespace

void backward(std::span<const Array> outputs, std::span<const Array> grad_outputs,
              std::optional<bool> retain_graph, bool create_graph, std::span<const Array> inputs) {
    std::vector<Edge> roots = root_edges(outputs);
    std::vector<Array> rg = root_grads(outputs, grad_outputs);
    const bool keep = retain_graph.value_or(create_graph);
    if (inputs.empty()) {
        run(roots, std::move(rg), keep, create_graph, nullptr, nullptr);
        return;
    }
    std::vector<Edge> caps;
    for (size_t i = 0; i < inputs.size(); ++i) {
        Edge e = gradient_edge(inputs[i]);
        if (!e.valid())
            throw Error("ember.autograd.backward: input " + std::to_string(i) +
                        " does not require grad");
        caps.push_back(std::move(e));
    }
    std::vector<Array> got(inputs.size());
    run(roots, std::move(rg), keep, create_graph, &caps, &got);
    GradModeGuard mode(create_graph);
    for (size_t i = 0; i < inputs.size(); ++i)
        accumulate_grad(inputs[i].grad_meta()->grad, std::move(got[i]));
}

std::vector<Array> grad(std::span<const Array> outputs, std::span<const Array> inputs,
                        std::span<const Array> grad_outputs, std::optional<bool> retain_graph,
                        bool create_graph, bool allow_unused) {
    std::vector<Edge> roots = root_edges(outputs);
    std::vector<Array> rg = root_grads(outputs, grad_outputs);
    std::vector<Edge> caps;
    for (size_t i = 0; i < inputs.size(); ++i) {
        Edge e = gradient_edge(inputs[i]);
        if (!e.valid())
            throw Error("ember.autograd.grad: input " + std::to_string(i) +
                        " does not require grad");
        caps.push_back(std::move(e));
    }
    std::vector<Array> got(inputs.size());
    run(roots, std::move(rg), retain_graph.value_or(create_graph), create_graph, &caps, &got);
    for (size_t i = 0; i < got.size(); ++i) {
        if (!got[i].defined()) {
            if (!allow_unused)
                throw Error("ember.autograd.grad: input " + std::to_string(i) +
                            " was not used in the graph of the outputs; pass allow_unused=True "
                            "if that is intended");
            continue;
        }
        if (!create_graph) got[i] = got[i].detach();
    }
    return got;
}

}  // namespace ember::autograd

// ---- Array's autograd members -----------------------------------------------------------------

namespace ember {

using autograd::Meta;

bool Array::requires_grad() const { return grad_meta_ && grad_meta_->requires_grad; }

const Array& Array::set_requires_grad(bool requires_grad) const {
    if (requires_grad && !is_inexact(dtype_))
        throw Error(
            "ember: only arrays of floating point or complex dtype can require gradients (got "
            "dtype " +
            std::string(name(dtype_)) + ")");
    if (grad_meta_ && grad_meta_->grad_fn) {
        if (!requires_grad)
            throw Error(
                "ember: requires_grad can only be changed on leaf arrays; this one was made by " +
                grad_meta_->grad_fn->name() + " (use .detach() for a copy without history)");
        return *this;
    }
    if (!grad_meta_) {
        if (!requires_grad) return *this;
        grad_meta_ = Meta::make();
    }
    grad_meta_->requires_grad = requires_grad;
    return *this;
}

bool Array::is_leaf() const { return !grad_meta_ || !grad_meta_->grad_fn; }

Array Array::grad() const {
    if (!grad_meta_) return Array();
    if (grad_meta_->retained && grad_meta_->retained->defined()) return *grad_meta_->retained;
    return grad_meta_->grad;
}

void Array::set_grad(const Array& g) const {
    if (!g.defined()) {
        if (grad_meta_) {
            grad_meta_->grad = Array();
            if (grad_meta_->retained) *grad_meta_->retained = Array();
        }
        return;
    }
    if (!(g.shape() == shape_))
        throw Error("ember: the assigned grad has shape " + shape_str(g.shape()) +
                    " but the array has shape " + shape_str(shape_));
    if (g.dtype() != dtype_)
        throw Error("ember: the assigned grad has dtype " + std::string(name(g.dtype())) +
                    " but the array has dtype " + std::string(name(dtype_)));
    if (g.device() != device())
        throw Error("ember: the assigned grad is on " + g.device().str() + " but the array is on " +
                    device().str());
    if (!grad_meta_) grad_meta_ = Meta::make();
    if (grad_meta_->retained)
        *grad_meta_->retained = g;
    else
        grad_meta_->grad = g;
}

std::shared_ptr<autograd::Node> Array::grad_fn() const {
    return grad_meta_ ? grad_meta_->grad_fn : nullptr;
}

void Array::retain_grad() const {
    if (!requires_grad())
        throw Error("ember: retain_grad() on an array that does not require grad");
    if (!grad_meta_->grad_fn || grad_meta_->retains_grad) return;
    grad_meta_->retains_grad = true;
    grad_meta_->retained = std::make_shared<Array>();
    grad_meta_->grad_fn->retained.emplace_back(grad_meta_->output_nr, grad_meta_->retained);
}

void Array::register_hook(std::function<Array(const Array&)> hook) const {
    if (!requires_grad())
        throw Error("ember: register_hook() on an array that does not require grad");
    if (grad_meta_->grad_fn)
        grad_meta_->grad_fn->hooks.emplace_back(grad_meta_->output_nr, std::move(hook));
    else
        grad_meta_->hooks.push_back(std::move(hook));
}

bool Array::retains_grad() const { return grad_meta_ && grad_meta_->retains_grad; }

Array Array::detach() const { return raw_view(shape_, strides_); }

void Array::backward() const { backward(Array()); }

void Array::backward(const Array& gradient, std::optional<bool> retain_graph,
                     bool create_graph) const {
    const Array outs[1] = {*this};
    if (gradient.defined()) {
        const Array gs[1] = {gradient};
        autograd::backward(outs, gs, retain_graph, create_graph);
    } else {
        autograd::backward(outs, {}, retain_graph, create_graph);
    }
}

}  // namespace ember
