// Reductions, bound twice from one list with NumPy's parameters: a module function
// (ember.sum(x, axis, dtype, out, keepdims)) and an ndarray method (x.sum(axis, ...)) for every
// row of the reduction table and for the statistics composed from them (mean, var, std).
#include <deque>
#include <string>
#include <type_traits>

#include "python/common.hpp"

namespace ember::python {

namespace {

using namespace nb::literals;

// The Python signature of an entry.
enum class Sig : uint8_t {
    plain,    // (x, axis=None, out=None, keepdims=False)
    dtype,    // (x, axis=None, dtype=None, out=None, keepdims=False)
    index,    // (x, axis: int | None = None, out=None, *, keepdims=False)
    moments,  // (x, axis, dtype, out, ddof, keepdims, *, correction)
};

using Run = Array (*)(const Array& x, const Axes& axes, bool keepdims, std::optional<DType> dtype,
                      double correction, ops::ReduceOp op);

struct Entry {
    std::string name, who, doc;  // who: "ember.<name>", for error messages
    Sig sig;
    ops::ReduceOp op;  // table rows
    Run run;
};

Array run_row(const Array& x, const Axes& axes, bool keepdims, std::optional<DType> dtype, double,
              ops::ReduceOp op) {
    return reduce(op, x, axes, keepdims, dtype);
}

// The list: every row of the table, then the composed statistics. A deque keeps the strings in
// place (nanobind keeps pointers to names and docs).
const std::deque<Entry>& entries() {
    static const std::deque<Entry> list = [] {
        std::deque<Entry> v;
        for (int i = 0; i < ops::num_reductions; ++i) {
            const ops::ReduceInfo& row = ops::reduce_infos[i];
            const Sig sig = row.index()                  ? Sig::index
                            : (row.flags & ops::R_DTYPE) ? Sig::dtype
                                                         : Sig::plain;
            v.push_back({std::string(row.name), "ember." + std::string(row.name),
                         std::string(row.doc), sig, ops::ReduceOp(i), run_row});
        }
        v.push_back({"mean",
                     "ember.mean",
                     "Arithmetic mean over the given axes (integers give float64).",
                     Sig::dtype,
                     {},
                     [](const Array& x, const Axes& axes, bool keepdims, std::optional<DType> dtype,
                        double, ops::ReduceOp) { return mean(x, axes, keepdims, dtype); }});
        v.push_back({"var",
                     "ember.var",
                     "Variance with `correction` (NumPy's `ddof`) degrees of freedom removed.",
                     Sig::moments,
                     {},
                     [](const Array& x, const Axes& axes, bool keepdims, std::optional<DType> dtype,
                        double correction,
                        ops::ReduceOp) { return var(x, axes, correction, keepdims, dtype); }});
        v.push_back({"std",
                     "ember.std",
                     "Standard deviation with `correction` (NumPy's `ddof`).",
                     Sig::moments,
                     {},
                     [](const Array& x, const Axes& axes, bool keepdims, std::optional<DType> dtype,
                        double correction, ops::ReduceOp) {
                         return ember::std(x, axes, correction, keepdims, dtype);
                     }});
        return v;
    }();
    return list;
}

// Python arguments are converted with the GIL held; the reduction may run without it (heavy).
Array call(const Entry& e, const Array& x, const Axes& axes, bool keepdims,
           std::optional<DType> dtype, double correction) {
    return heavy(x.size(), e.run, x, axes, keepdims, dtype, correction, e.op);
}

// The axes of a reduction of `x`. NumPy takes an int axis 0 or -1 on a 0-d array (see reduce()),
// but a tuple names dimensions, and a 0-d array has none: AxisError.
Axes reduce_axes(nb::handle axis, const Array& x, const char* who) {
    Axes a = to_axes(axis, who);
    if (a && !a->empty() && x.ndim() == 0 &&
        (PyTuple_Check(axis.ptr()) || PyList_Check(axis.ptr())))
        normalize_axis((*a)[0], 0, who);  // throws
    return a;
}

// argmax/argmin: one axis or None.
Axes index_axes(nb::handle axis, const char* who) {
    if (axis.is_none()) return std::nullopt;
    if (PyTuple_Check(axis.ptr()) || PyList_Check(axis.ptr()))
        throw TypeError(std::string(who) + ": axis must be an integer or None, got a " +
                        nb::type_name(axis.type()).c_str());
    return to_axes(axis, who);
}

// var/std: `correction` (the Array API's name), else `ddof` (NumPy's), else 0.
double correction_of(nb::handle correction, nb::handle ddof, const char* who) {
    if (!correction.is_none()) {
        if (!ddof.is_none() && !(PyLong_Check(ddof.ptr()) && PyLong_AsLong(ddof.ptr()) == 0))
            throw ValueError(std::string(who) +
                             ": ddof and correction can't be provided "
                             "simultaneously");
        return to_float(correction, who, "correction");
    }
    if (!ddof.is_none()) return to_float(ddof, who, "ddof");
    return 0.0;
}

// The result, or written into `out` (NumPy's reductions: the shape must match exactly; the value
// is cast unsafely, an index result safely) and `out` returned.
nb::object finish(const Entry& e, Array&& r, nb::handle out) {
    if (out.is_none()) return wrap(std::move(r));
    const char* who = e.who.c_str();
    const Array& o = out_array(out, who);
    if (!(o.shape() == r.shape()))
        throw ValueError(std::string(who) + ": output parameter has shape " + shape_str(o.shape()) +
                         " but the reduction's result has shape " + shape_str(r.shape()));
    if (e.sig == Sig::index && !can_cast(r.dtype(), o.dtype()))
        throw TypeError(std::string(who) + ": cannot cast the result from dtype " +
                        std::string(name(r.dtype())) + " to the output dtype " +
                        std::string(name(o.dtype())) + " according to the rule 'safe'");
    if (o.device() != r.device())
        throw ValueError(std::string(who) + ": output is on " + o.device().str() +
                         " but the array is on " + r.device().str());
    o.assign(r);
    return nb::borrow(out);
}

// NumPy's keyword-only `initial=` and `where=` (rare): composed in Python from the reduction
// itself, where, maximum/minimum and full (ember/_reduce_extra.py); the result goes to finish().
bool plain_call(nb::handle initial, nb::handle where) {
    return initial.is_none() && (where.is_none() || where.ptr() == Py_True);
}
Array extra_call(const Entry& e, nb::handle x, nb::handle axis, nb::handle dtype, nb::handle ddof,
                 bool keepdims, nb::handle correction, nb::handle initial, nb::handle where) {
    static nb::object* helper =  // never destroyed: it outlives the interpreter's teardown
        new nb::object(nb::module_::import_("ember._reduce_extra").attr("reduce"));
    return nb::cast<Array>(
        (*helper)(e.name, x, axis, dtype, ddof, keepdims, correction, initial, where));
}

// NumPy's positional order for every entry, functions and methods alike (x is the array or the
// method's self): sum/prod/mean (x, axis, dtype, out, keepdims, *, initial, where); max/min/any/
// all (x, axis, out, keepdims, *, initial, where); argmax/argmin (x, axis, out, *, keepdims);
// var/std (x, axis, dtype, out, ddof, keepdims, *, correction, where).
template <class C>
void def_entry(C& scope, const Entry& e) {
    const char* name = e.name.c_str();
    const char* doc = e.doc.c_str();
    const Entry* p = &e;
    // A method's self is not annotated; a function's array is `x`.
    auto def = [&](auto f, auto... params) {
        if constexpr (std::is_same_v<C, nb::module_>)
            scope.def(name, f, nb::arg("x"), params..., doc);
        else
            scope.def(name, f, params..., doc);
    };
    // The array: self for a method, anything ember.asarray takes for a function.
    auto array = [](nb::handle x, const char* who) -> Array { return to_array(x, who); };
    switch (e.sig) {
        case Sig::plain:
            def(
                [p, array](nb::handle x, nb::handle axis, nb::handle out, bool keepdims,
                           nb::handle initial, nb::handle where) {
                    const char* who = p->who.c_str();
                    if (!plain_call(initial, where))
                        return finish(*p,
                                      extra_call(*p, x, axis, nb::none(), nb::none(), keepdims,
                                                 nb::none(), initial, where),
                                      out);
                    const Array xa = array(x, who);
                    return finish(
                        *p, call(*p, xa, reduce_axes(axis, xa, who), keepdims, std::nullopt, 0.0),
                        out);
                },
                nb::arg("axis").none() = nb::none(), nb::arg("out").none() = nb::none(),
                nb::arg("keepdims") = false, nb::kw_only(), nb::arg("initial").none() = nb::none(),
                nb::arg("where").none() = nb::none());
            break;
        case Sig::dtype:
            def(
                [p, array](nb::handle x, nb::handle axis, nb::handle dtype, nb::handle out,
                           bool keepdims, nb::handle initial, nb::handle where) {
                    const char* who = p->who.c_str();
                    if (!plain_call(initial, where))
                        return finish(*p,
                                      extra_call(*p, x, axis, dtype, nb::none(), keepdims,
                                                 nb::none(), initial, where),
                                      out);
                    const Array xa = array(x, who);
                    return finish(*p,
                                  call(*p, xa, reduce_axes(axis, xa, who), keepdims,
                                       to_opt_dtype(dtype, who), 0.0),
                                  out);
                },
                nb::arg("axis").none() = nb::none(), nb::arg("dtype").none() = nb::none(),
                nb::arg("out").none() = nb::none(), nb::arg("keepdims") = false, nb::kw_only(),
                nb::arg("initial").none() = nb::none(), nb::arg("where").none() = nb::none());
            break;
        case Sig::index:
            def(
                [p, array](nb::handle x, nb::handle axis, nb::handle out, bool keepdims) {
                    const char* who = p->who.c_str();
                    return finish(
                        *p,
                        call(*p, array(x, who), index_axes(axis, who), keepdims, std::nullopt, 0.0),
                        out);
                },
                nb::arg("axis").none() = nb::none(), nb::arg("out").none() = nb::none(),
                nb::kw_only(), nb::arg("keepdims") = false);
            break;
        case Sig::moments:
            def(
                [p, array](nb::handle x, nb::handle axis, nb::handle dtype, nb::handle out,
                           nb::handle ddof, bool keepdims, nb::handle correction,
                           nb::handle where) {
                    const char* who = p->who.c_str();
                    if (!plain_call(nb::none(), where))
                        return finish(*p,
                                      extra_call(*p, x, axis, dtype, ddof, keepdims, correction,
                                                 nb::none(), where),
                                      out);
                    const Array xa = array(x, who);
                    return finish(
                        *p,
                        call(*p, xa, reduce_axes(axis, xa, who), keepdims, to_opt_dtype(dtype, who),
                             correction_of(correction, ddof, who)),
                        out);
                },
                nb::arg("axis").none() = nb::none(), nb::arg("dtype").none() = nb::none(),
                nb::arg("out").none() = nb::none(), nb::arg("ddof").none() = nb::none(),
                nb::arg("keepdims") = false, nb::kw_only(),
                nb::arg("correction").none() = nb::none(), nb::arg("where").none() = nb::none());
            break;
    }
}

}  // namespace

void bind_reductions(nb::module_& m) {
    for (const Entry& e : entries())
        def_entry(m, e);
    m.def(
        "reductions",
        [] {
            nb::list l;
            for (const ops::ReduceInfo& row : ops::reduce_infos) {
                nb::object identity = nb::none();
                if (row.has_identity()) identity = nb::float_(row.identity);
                l.append(nb::make_tuple(std::string(row.name), row.index(),
                                        bool(row.flags & ops::R_DTYPE), identity,
                                        row.grad != ops::GradRule::none));
            }
            return l;
        },
        "The reduction table: (name, index, takes_dtype, identity or None, differentiable) of "
        "every reduction.");
}

void bind_reduction_methods(nb::class_<Array>& cls) {
    for (const Entry& e : entries())
        def_entry(cls, e);
}

}  // namespace ember::python
