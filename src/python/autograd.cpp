// Autograd bindings: grad and anomaly modes, graph nodes, ndarray's autograd attributes,
// backward/grad, and nodes whose backward is a Python function (ember.autograd.Function).
#include <string>
#include <unordered_set>
#include <vector>

#include <nanobind/stl/shared_ptr.h>

#include "ember/autograd.hpp"
#include "python/common.hpp"

namespace ember::python {

namespace {

namespace ag = ember::autograd;
using namespace nb::literals;

nb::object opt_array(const Array& a) { return a.defined() ? wrap(Array(a)) : nb::none(); }

// A sequence of ndarrays (or one ndarray); None entries become undefined arrays when allowed.
std::vector<Array> arrays_of(nb::handle h, const char* who, const char* what, bool allow_none) {
    std::vector<Array> r;
    if (h.is_none()) return r;
    auto one = [&](nb::handle x) {
        if (x.is_none() && allow_none) {
            r.emplace_back();
        } else if (is_ndarray(x)) {
            r.push_back(as_array(x));
        } else {
            throw TypeError(std::string(who) + ": " + what + " must be ember arrays, got " +
                            std::string(nb::type_name(x.type()).c_str()));
        }
    };
    if (is_ndarray(h)) {
        one(h);
    } else if (PyTuple_Check(h.ptr()) || PyList_Check(h.ptr())) {
        for (nb::handle x : nb::borrow<nb::sequence>(h))
            one(x);
    } else {
        throw TypeError(std::string(who) + ": " + what +
                        " must be an ember array or a sequence of them, got " +
                        std::string(nb::type_name(h.type()).c_str()));
    }
    return r;
}

std::optional<bool> opt_bool(nb::handle h) {
    if (h.is_none()) return std::nullopt;
    return PyObject_IsTrue(h.ptr()) == 1;
}

// The anomaly-mode context (a Python traceback), from a callable set by ember.autograd.
PyObject* context_fn = nullptr;  // never released: it may be needed until the process ends
std::string python_context() {
    if (!context_fn || !nb::is_alive()) return {};
    nb::gil_scoped_acquire gil;
    try {
        return nb::cast<std::string>(nb::handle(context_fn)());
    } catch (nb::python_error& e) {
        return {};
    } catch (...) {
        return {};
    }
}

// A node whose backward is a Python callable: it takes the output gradients (None for outputs
// that got none) and returns one gradient (or None) per input.
class PyNode;

// The live PyNodes (touched with the GIL held), so that exit can break their cycles.
std::unordered_set<PyNode*>& live_nodes() {
    static auto* s = new std::unordered_set<PyNode*>();  // never destroyed: nodes may outlive it
    return *s;
}

class PyNode final : public ag::Node {
public:
    PyNode(std::string name, nb::object fn, nb::object ctx, bool materialize)
        : name_(std::move(name)),
          fn_(std::move(fn)),
          ctx_(std::move(ctx)),
          materialize_(materialize) {
        live_nodes().insert(this);
    }
    ~PyNode() override {
        // Py_IsInitialized() is already false while the interpreter's finalization clears the
        // modules, which is when nodes held by module globals die: dropping the references then
        // (rather than leaking them, and the arrays the closure and ctx hold) is what lets
        // nanobind find no live instance at exit. Only once nanobind's own state is gone is
        // there no interpreter left to release them to.
        if (!nb::is_alive()) {
            fn_.release();
            ctx_.release();
            return;
        }
        nb::gil_scoped_acquire gil;
        live_nodes().erase(this);
        fn_ = nb::object();
        ctx_ = nb::object();
    }
    std::string name() const override { return name_; }
    bool materialize_grads() const override { return materialize_; }
    std::vector<Array> apply(std::vector<Array>&& grads) override {
        nb::gil_scoped_acquire gil;
        if (!fn_.is_valid())
            throw Error("ember.autograd: " + name_ +
                        " cannot run: the interpreter is exiting and released its Python "
                        "backward");
        nb::list args;
        for (const Array& g : grads)
            args.append(opt_array(g));
        nb::object r = fn_(*nb::tuple(args));
        std::vector<Array> out;
        const size_t want = next.size();
        const std::string who = "ember.autograd: " + name_;
        if (PyTuple_Check(r.ptr()) || PyList_Check(r.ptr())) {
            out = arrays_of(r, who.c_str(), "gradients", true);
        } else {
            out = arrays_of(nb::make_tuple(r), who.c_str(), "gradients", true);
        }
        if (out.size() != want)
            throw Error(who + " returned " + std::to_string(out.size()) + " gradients; expected " +
                        std::to_string(want) + " (one per input)");
        return out;
    }
    void release_saved() override {
        if (!ctx_.is_valid() || ctx_.is_none()) return;
        nb::gil_scoped_acquire gil;
        if (nb::hasattr(ctx_, "_release") && nb::cast<bool>(ctx_.attr("_release")())) freed = true;
    }
    // Moves the Python references out (into `into`), leaving the node unable to run.
    void detach(std::vector<nb::object>& into) {
        into.push_back(std::move(fn_));
        into.push_back(std::move(ctx_));
    }

private:
    std::string name_;
    nb::object fn_, ctx_;
    bool materialize_;
};

// At exit (an atexit hook of ember.autograd): every PyNode drops its backward callable and ctx.
// A node lives in the C++ graph, which Python's cycle collector cannot see, and its callable
// reaches the Function's module globals; an output kept in those globals therefore forms a cycle
// that only this breaks. Until exit such an output is reachable anyway, so nothing leaks earlier.
void release_function_nodes() {
    std::vector<nb::object> refs;
    for (PyNode* n : live_nodes())
        n->detach(refs);
    refs.clear();  // may destroy nodes (and erase them from the set): after the loop
}

// A new handle of each output, without autograd state (so the caller's arrays keep theirs).
std::vector<Array> fresh(const std::vector<Array>& outs) {
    std::vector<Array> r;
    for (const Array& o : outs)
        r.push_back(o.detach());
    return r;
}

nb::list to_list(const std::vector<Array>& v) {
    nb::list l;
    for (const Array& a : v)
        l.append(opt_array(a));
    return l;
}

}  // namespace

void bind_array_autograd(nb::class_<Array>& cls) {
    cls.def_prop_rw(
           "requires_grad", [](const Array& a) { return a.requires_grad(); },
           [](const Array& a, bool v) { a.set_requires_grad(v); },
           "Whether gradients are computed for this array (floating and complex dtypes).")
        .def_prop_rw(
            "grad",
            [](const Array& a) {
                Array g = a.grad();
                if (!g.defined() && !a.is_leaf() && !a.retains_grad() &&
                    PyErr_WarnEx(PyExc_UserWarning,
                                 "ember: the .grad of a non-leaf array is not kept by "
                                 "backward(); call .retain_grad() on it first, or use "
                                 "ember.autograd.grad()",
                                 1) < 0)
                    throw nb::python_error();
                return opt_array(g);
            },
            [](const Array& a, nb::handle g) {
                if (g.is_none()) {
                    a.set_grad(Array());
                } else if (is_ndarray(g)) {
                    a.set_grad(as_array(g));
                } else {
                    throw TypeError("ember: .grad must be an ember array or None, got " +
                                    std::string(nb::type_name(g.type()).c_str()));
                }
            },
            nb::arg("grad").none(), "The accumulated gradient (None when there is none).")
        .def_prop_ro(
            "grad_fn", [](const Array& a) { return a.grad_fn(); },
            "The graph node that made this array (None for leaves).")
        .def_prop_ro("is_leaf", &Array::is_leaf,
                     "True unless the array was made by a recorded op (it has a grad_fn).")
        .def_prop_ro("retains_grad", &Array::retains_grad)
        .def_prop_ro(
            "_version", [](const Array& a) { return a.version(); },
            "In-place writes to the array's memory so far.")
        .def(
            "requires_grad_",
            [](nb::pointer_and_handle<Array> self, bool v) {
                self.p->set_requires_grad(v);
                return nb::borrow(self.h);
            },
            "requires_grad"_a = true, "Sets requires_grad in place and returns the array.")
        .def("detach", &Array::detach, "The same data without autograd history (a view).")
        .def(
            "detach_",
            [](nb::pointer_and_handle<Array> self) {
                if (self.p->grad_meta() && self.p->grad_meta()->is_view)
                    throw Error("ember: detach_() of a view; use detach()");
                self.p->set_grad_meta(nullptr);
                return nb::borrow(self.h);
            },
            "Drops the array's autograd state in place.")
        .def("retain_grad", &Array::retain_grad,
             "Makes backward() keep this non-leaf array's gradient in .grad.")
        .def(
            "_register_hook",
            [](const Array& a, nb::object fn) {
                // The callable lives as long as the graph node (or the leaf) holding the hook;
                // it is released under the GIL, and leaked after the interpreter finalized.
                std::shared_ptr<PyObject> f(fn.release().ptr(), [](PyObject* o) {
                    if (!Py_IsInitialized()) return;
                    nb::gil_scoped_acquire gil;
                    Py_DECREF(o);
                });
                a.register_hook([f](const Array& g) -> Array {
                    nb::gil_scoped_acquire gil;
                    nb::object r = nb::borrow(f.get())(nb::cast(g));
                    if (r.is_none()) return Array();
                    if (!is_ndarray(r))
                        throw TypeError(
                            "ember: a gradient hook must return an array or None, got " +
                            std::string(nb::type_name(r.type()).c_str()));
                    return as_array(r);
                });
            },
            nb::arg("hook"), "register_hook's C++ side (ember/_torch_methods.py).")
        .def(
            "backward",
            [](const Array& a, nb::handle gradient, nb::handle retain_graph, bool create_graph,
               nb::handle inputs) {
                const Array outs[1] = {a};
                std::vector<Array> gs;
                if (!gradient.is_none()) {
                    if (!is_ndarray(gradient))
                        throw TypeError("ember.ndarray.backward: gradient must be an ember array");
                    gs.push_back(as_array(gradient));
                }
                std::vector<Array> ins =
                    arrays_of(inputs, "ember.ndarray.backward", "inputs", false);
                ag::backward(outs, gs, opt_bool(retain_graph), create_graph, ins);
            },
            "gradient"_a.none() = nb::none(), "retain_graph"_a.none() = nb::none(),
            "create_graph"_a = false, "inputs"_a.none() = nb::none(),
            "Accumulates the gradients of this array into the .grad of the leaves.");
}

void bind_autograd(nb::module_& m) {
    nb::class_<ag::Node>(m, "_Node", "A node of the autograd graph: the backward of one op.")
        .def("name", &ag::Node::name)
        .def_prop_ro("next_functions",
                     [](const ag::Node& n) {
                         nb::list l;
                         for (const ag::Edge& e : n.next)
                             l.append(e.valid() ? nb::make_tuple(nb::cast(e.fn), e.input_nr)
                                                : nb::make_tuple(nb::none(), 0));
                         return nb::tuple(l);
                     })
        .def_prop_ro("_sequence_nr", &ag::Node::sequence_nr)
        .def("__repr__", [](const ag::Node& n) { return "<" + n.name() + ">"; });

    m.def("_is_grad_enabled", &ag::is_grad_enabled);
    m.def("_set_grad_enabled", &ag::set_grad_enabled, "enabled"_a);
    m.def("_is_anomaly_enabled", &ag::is_anomaly_enabled);
    m.def("_set_anomaly_enabled", &ag::set_anomaly_enabled, "enabled"_a);
    m.def(
        "_set_anomaly_context",
        [](nb::handle fn) {
            if (fn.is_none()) {
                ag::set_anomaly_context_hook(nullptr);
                return;
            }
            Py_XINCREF(fn.ptr());
            context_fn = fn.ptr();  // the previous one is kept (it may be in use)
            ag::set_anomaly_context_hook(&python_context);
        },
        "fn"_a.none());
    m.def(
        "_backward",
        [](nb::handle outputs, nb::handle grads, nb::handle retain_graph, bool create_graph,
           nb::handle inputs) {
            const char* who = "ember.autograd.backward";
            std::vector<Array> outs = arrays_of(outputs, who, "tensors", false);
            std::vector<Array> gs = arrays_of(grads, who, "grad_tensors", true);
            std::vector<Array> ins = arrays_of(inputs, who, "inputs", false);
            ag::backward(outs, gs, opt_bool(retain_graph), create_graph, ins);
        },
        "outputs"_a, "grads"_a.none(), "retain_graph"_a.none(), "create_graph"_a,
        "inputs"_a.none());
    m.def(
        "_grad",
        [](nb::handle outputs, nb::handle inputs, nb::handle grads, nb::handle retain_graph,
           bool create_graph, bool allow_unused) {
            const char* who = "ember.autograd.grad";
            std::vector<Array> outs = arrays_of(outputs, who, "outputs", false);
            std::vector<Array> ins = arrays_of(inputs, who, "inputs", false);
            std::vector<Array> gs = arrays_of(grads, who, "grad_outputs", true);
            return nb::tuple(to_list(
                ag::grad(outs, ins, gs, opt_bool(retain_graph), create_graph, allow_unused)));
        },
        "outputs"_a, "inputs"_a, "grads"_a.none(), "retain_graph"_a.none(), "create_graph"_a,
        "allow_unused"_a);
    m.def(
        "_record_function",
        [](const std::string& name, nb::object backward, nb::object ctx, nb::handle inputs,
           nb::handle outputs, bool materialize) {
            const char* who = "ember.autograd.Function";
            std::vector<Array> ins = arrays_of(inputs, who, "inputs", true);
            std::vector<Array> outs = fresh(arrays_of(outputs, who, "outputs", false));
            std::vector<const Array*> ip;
            for (const Array& a : ins)
                ip.push_back(&a);
            if (!ag::any_requires_grad(ip)) return to_list(outs);
            auto node =
                std::make_shared<PyNode>(name, std::move(backward), std::move(ctx), materialize);
            ag::collect_next_edges(*node, ip);
            std::vector<Array*> op;
            for (Array& a : outs)
                if (is_inexact(a.dtype())) op.push_back(&a);
            ag::set_history(op, node);
            return to_list(outs);
        },
        "name"_a, "backward"_a, "ctx"_a, "inputs"_a, "outputs"_a, "materialize"_a);
    m.def("_release_function_nodes", &release_function_nodes);
    m.def(
        "_not_implemented",
        [](const std::string& name, nb::handle inputs, nb::handle outputs) {
            const char* who = "ember.autograd";
            std::vector<Array> ins = arrays_of(inputs, who, "inputs", true);
            std::vector<Array> outs = fresh(arrays_of(outputs, who, "outputs", false));
            std::vector<const Array*> ip;
            for (const Array& a : ins)
                ip.push_back(&a);
            std::vector<Array*> op;
            for (Array& a : outs)
                op.push_back(&a);
            ag::not_implemented(name.c_str(), ip, op);
            return to_list(outs);
        },
        "name"_a, "inputs"_a, "outputs"_a);
}

}  // namespace ember::python
