// Bindings of the scans (cumsum, cumprod) and of mask compaction (nonzero, flatnonzero).
#include <string>

#include <nanobind/stl/vector.h>

#include "python/common.hpp"

namespace ember::python {

using namespace nb::literals;

void bind_scan(nb::module_& m) {
    auto axis_of = [](nb::handle axis) {
        std::optional<int64_t> ax;
        if (!axis.is_none()) {
            if (!PyLong_Check(axis.ptr()) && !nb::hasattr(axis, "__index__"))
                throw TypeError(std::string("ember.cumsum: axis must be an integer or None, got ") +
                                nb::type_name(axis.type()).c_str());
            ax = (*to_axes(axis, "ember.cumsum"))[0];
        }
        return ax;
    };
    m.def(
        "_cumsum",
        [axis_of](const Array& x, nb::handle axis, nb::handle dtype) {
            return heavy(x.size(), cumsum, x, axis_of(axis), to_opt_dtype(dtype, "ember.cumsum"));
        },
        "x"_a, "axis"_a.none() = nb::none(), "dtype"_a.none() = nb::none(),
        "Inclusive cumulative sum along axis (of the flattened x when axis is None).");
    m.def(
        "_cumprod",
        [axis_of](const Array& x, nb::handle axis, nb::handle dtype) {
            return heavy(x.size(), cumprod, x, axis_of(axis), to_opt_dtype(dtype, "ember.cumprod"));
        },
        "x"_a, "axis"_a.none() = nb::none(), "dtype"_a.none() = nb::none(),
        "Inclusive cumulative product along axis (of the flattened x when axis is None).");
    m.def(
        "_nonzero",
        [](const Array& x) {
            std::vector<Array> r = heavy(x.size(), nonzero, x);
            nb::list l;
            for (Array& a : r)
                l.append(wrap(std::move(a)));
            return nb::tuple(l);
        },
        "x"_a, "Indices of the nonzero elements: one int64 array per dimension.");
    m.def(
        "_flatnonzero", [](const Array& x) { return heavy(x.size(), flatnonzero, x); }, "x"_a,
        "Positions of the nonzero elements of the flattened x (int64).");
}

}  // namespace ember::python
