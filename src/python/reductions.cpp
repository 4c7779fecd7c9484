// Reductions, bound twice from one list: a module function (ember.sum(x, *, axis=...)) and an
// ndarray method (x.sum(axis, ...)) for every row of the reduction table and for the statistics
// composed from them (mean, var, std).
#include <deque>
#include <string>

#include "python/common.hpp"

namespace ember::python {

namespace {

using namespace nb::literals;

// The Python signature of an entry.
enum class Sig : uint8_t {
    plain,    // (x, *, axis=None, keepdims=False); method (axis=None, keepdims=False)
    dtype,    // (x, *, axis=None, dtype=None, keepdims=False); method (axis, dtype, keepdims)
    index,    // (x, *, axis: int | None = None, keepdims=False); method (axis, keepdims)
    moments,  // (x, *, axis, correction, keepdims, dtype, ddof); method (axis, dtype, ddof=0,
              // keepdims, *, correction)
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

Axes index_axes(std::optional<int64_t> axis) {
    return axis ? Axes(std::vector<int64_t>{*axis}) : std::nullopt;
}

// var/std: `correction`, else `ddof`, else 0.
double correction_of(nb::handle correction, nb::handle ddof) {
    if (!correction.is_none()) return nb::cast<double>(correction);
    if (!ddof.is_none()) return nb::cast<double>(ddof);
    return 0.0;
}

void def_function(nb::module_& m, const Entry& e) {
    const char* name = e.name.c_str();
    const char* doc = e.doc.c_str();
    const Entry* p = &e;
    switch (e.sig) {
        case Sig::plain:
            m.def(
                name,
                [p](const Array& x, nb::handle axis, bool keepdims) {
                    return call(*p, x, to_axes(axis, p->who.c_str()), keepdims, std::nullopt, 0.0);
                },
                "x"_a, nb::kw_only(), "axis"_a.none() = nb::none(), "keepdims"_a = false, doc);
            break;
        case Sig::dtype:
            m.def(
                name,
                [p](const Array& x, nb::handle axis, nb::handle dtype, bool keepdims) {
                    return call(*p, x, to_axes(axis, p->who.c_str()), keepdims,
                                to_opt_dtype(dtype, p->who.c_str()), 0.0);
                },
                "x"_a, nb::kw_only(), "axis"_a.none() = nb::none(), "dtype"_a.none() = nb::none(),
                "keepdims"_a = false, doc);
            break;
        case Sig::index:
            m.def(
                name,
                [p](const Array& x, std::optional<int64_t> axis, bool keepdims) {
                    return call(*p, x, index_axes(axis), keepdims, std::nullopt, 0.0);
                },
                "x"_a, nb::kw_only(), "axis"_a.none() = nb::none(), "keepdims"_a = false, doc);
            break;
        case Sig::moments:
            m.def(
                name,
                [p](const Array& x, nb::handle axis, nb::handle correction, bool keepdims,
                    nb::handle dtype, nb::handle ddof) {
                    return call(*p, x, to_axes(axis, p->who.c_str()), keepdims,
                                to_opt_dtype(dtype, p->who.c_str()),
                                correction_of(correction, ddof));
                },
                "x"_a, nb::kw_only(), "axis"_a.none() = nb::none(),
                "correction"_a.none() = nb::none(), "keepdims"_a = false,
                "dtype"_a.none() = nb::none(), "ddof"_a.none() = nb::none(), doc);
            break;
    }
}

// Methods name "ember.ndarray" when the axis is wrong (NumPy's methods take positional axes).
void def_method(nb::class_<Array>& cls, const Entry& e) {
    const char* name = e.name.c_str();
    const Entry* p = &e;
    switch (e.sig) {
        case Sig::plain:
            cls.def(
                name,
                [p](const Array& a, nb::handle axis, bool keepdims) {
                    return call(*p, a, to_axes(axis, "ember.ndarray"), keepdims, std::nullopt, 0.0);
                },
                nb::arg("axis").none() = nb::none(), nb::arg("keepdims") = false);
            break;
        case Sig::dtype:
            cls.def(
                name,
                [p](const Array& a, nb::handle axis, nb::handle dtype, bool keepdims) {
                    return call(*p, a, to_axes(axis, "ember.ndarray"), keepdims,
                                to_opt_dtype(dtype, p->who.c_str()), 0.0);
                },
                nb::arg("axis").none() = nb::none(), nb::arg("dtype").none() = nb::none(),
                nb::arg("keepdims") = false);
            break;
        case Sig::index:
            cls.def(
                name,
                [p](const Array& a, std::optional<int64_t> axis, bool keepdims) {
                    return call(*p, a, index_axes(axis), keepdims, std::nullopt, 0.0);
                },
                nb::arg("axis").none() = nb::none(), nb::arg("keepdims") = false);
            break;
        case Sig::moments:
            cls.def(
                name,
                [p](const Array& a, nb::handle axis, nb::handle dtype, double ddof, bool keepdims,
                    nb::handle correction) {
                    const double c = correction.is_none() ? ddof : nb::cast<double>(correction);
                    return call(*p, a, to_axes(axis, "ember.ndarray"), keepdims,
                                to_opt_dtype(dtype, p->who.c_str()), c);
                },
                nb::arg("axis").none() = nb::none(), nb::arg("dtype").none() = nb::none(),
                nb::arg("ddof") = 0.0, nb::arg("keepdims") = false, nb::kw_only(),
                nb::arg("correction").none() = nb::none());
            break;
    }
}

}  // namespace

void bind_reductions(nb::module_& m) {
    for (const Entry& e : entries())
        def_function(m, e);
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
        def_method(cls, e);
}

}  // namespace ember::python
