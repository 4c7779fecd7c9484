// Bindings of the sort family (ember._core._sort, _argsort, _searchsorted);
// python/ember/_sorting.py builds the NumPy / Array API functions on them.
#include <string>

#include "python/common.hpp"

namespace ember::python {

namespace {

using namespace nb::literals;

const Array& array_arg(nb::handle h, const char* who) {
    if (!is_ndarray(h)) throw TypeError(std::string(who) + ": expected an ember.ndarray");
    return as_array(h);
}

}  // namespace

void bind_sort(nb::module_& m) {
    m.def(
        "_sort",
        [](nb::handle x, int64_t axis, bool descending, bool stable) {
            const Array& a = array_arg(x, "ember.sort");
            return wrap(heavy(a.size(), [&] { return sort(a, axis, descending, stable); }));
        },
        "x"_a, "axis"_a, "descending"_a, "stable"_a,
        "x sorted along axis (stable; NaN last; descending is the reverse order, ties in input "
        "order).");
    m.def(
        "_argsort",
        [](nb::handle x, int64_t axis, bool descending, bool stable) {
            const Array& a = array_arg(x, "ember.argsort");
            return wrap(heavy(a.size(), [&] { return argsort(a, axis, descending, stable); }));
        },
        "x"_a, "axis"_a, "descending"_a, "stable"_a, "The int64 indices that sort x along axis.");
    m.def(
        "_searchsorted",
        [](nb::handle x1, nb::handle x2, bool right) {
            const Array& a = array_arg(x1, "ember.searchsorted");
            const Array& v = array_arg(x2, "ember.searchsorted");
            return wrap(heavy(v.size(), [&] { return searchsorted(a, v, right); }));
        },
        "x1"_a, "x2"_a, "right"_a,
        "Insertion positions of x2's elements in the sorted 1-D x1 (same dtype and device).");
}

}  // namespace ember::python
