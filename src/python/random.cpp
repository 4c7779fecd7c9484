// Bindings of ember::random::Generator (ember._core._random); python/ember/random.py builds
// NumPy's Generator API on it.
#include "ember/random.hpp"

#include "python/common.hpp"

namespace ember::python {

namespace {

using random::Generator;
using namespace nb::literals;

template <class F>
nb::object run(nb::handle shape, nb::handle dtype, DType def, nb::handle device, const char* who,
               F&& f) {
    const Shape s = to_shape(shape, who);
    const DType t = to_opt_dtype(dtype, who).value_or(def);
    const Device d = dev_or_default(device, who);
    return wrap(heavy(numel(s), [&] { return f(s, t, d); }));
}

}  // namespace

void bind_random(nb::module_& parent) {
    nb::module_ m = parent.def_submodule("_random", "ember's Philox4x32-10 generator");
    m.def("key_from_seed", &random::key_from_seed, "seed"_a);
    m.def("draw_count", &random::draw_count,
          "How many draws all generators of the process have made (ember.compile's graphs).");
    nb::class_<Generator>(m, "Generator")
        .def(nb::init<uint64_t>(), "seed"_a)
        .def(nb::init<uint64_t, uint64_t>(), "key"_a, "position"_a)
        .def_prop_ro("key", &Generator::key)
        .def_prop_rw("position", &Generator::position, &Generator::set_position)
        .def(
            "bits",
            [](Generator& g, nb::handle shape, nb::handle dtype, nb::handle device) {
                return run(shape, dtype, DType::uint64, device, "ember.random.Generator.bits",
                           [&](const Shape& s, DType t, Device d) { return g.bits(s, t, d); });
            },
            "shape"_a, "dtype"_a.none(), "device"_a.none())
        .def(
            "uniform",
            [](Generator& g, double lo, double hi, nb::handle shape, nb::handle dtype,
               nb::handle device) {
                return run(
                    shape, dtype, DType::float64, device, "ember.random.Generator.uniform",
                    [&](const Shape& s, DType t, Device d) { return g.uniform(lo, hi, s, t, d); });
            },
            "low"_a, "high"_a, "shape"_a, "dtype"_a.none(), "device"_a.none())
        .def(
            "normal",
            [](Generator& g, double loc, double scale, nb::handle shape, nb::handle dtype,
               nb::handle device) {
                return run(shape, dtype, DType::float64, device, "ember.random.Generator.normal",
                           [&](const Shape& s, DType t, Device d) {
                               return g.normal(loc, scale, s, t, d);
                           });
            },
            "loc"_a, "scale"_a, "shape"_a, "dtype"_a.none(), "device"_a.none())
        .def(
            "exponential",
            [](Generator& g, double scale, nb::handle shape, nb::handle dtype, nb::handle device) {
                return run(shape, dtype, DType::float64, device,
                           "ember.random.Generator.exponential",
                           [&](const Shape& s, DType t, Device d) {
                               return g.exponential(scale, s, t, d);
                           });
            },
            "scale"_a, "shape"_a, "dtype"_a.none(), "device"_a.none())
        .def(
            "integers",
            [](Generator& g, int64_t low, uint64_t range, nb::handle shape, nb::handle dtype,
               nb::handle device) {
                return run(shape, dtype, DType::int64, device, "ember.random.Generator.integers",
                           [&](const Shape& s, DType t, Device d) {
                               return g.integers(low, range, s, t, d);
                           });
            },
            "low"_a, "range"_a, "shape"_a, "dtype"_a.none(), "device"_a.none())
        .def(
            "gamma",
            [](Generator& g, double k, double scale, nb::handle shape, nb::handle dtype,
               nb::handle device) {
                return run(
                    shape, dtype, DType::float64, device, "ember.random.Generator.gamma",
                    [&](const Shape& s, DType t, Device d) { return g.gamma(k, scale, s, t, d); });
            },
            "shape_k"_a, "scale"_a, "shape"_a, "dtype"_a.none(), "device"_a.none())
        .def(
            "beta",
            [](Generator& g, double a, double b, nb::handle shape, nb::handle dtype,
               nb::handle device) {
                return run(
                    shape, dtype, DType::float64, device, "ember.random.Generator.beta",
                    [&](const Shape& s, DType t, Device d) { return g.beta(a, b, s, t, d); });
            },
            "a"_a, "b"_a, "shape"_a, "dtype"_a.none(), "device"_a.none())
        .def(
            "poisson",
            [](Generator& g, double lam, nb::handle shape, nb::handle dtype, nb::handle device) {
                return run(
                    shape, dtype, DType::int64, device, "ember.random.Generator.poisson",
                    [&](const Shape& s, DType t, Device d) { return g.poisson(lam, s, t, d); });
            },
            "lam"_a, "shape"_a, "dtype"_a.none(), "device"_a.none())
        .def(
            "binomial",
            [](Generator& g, int64_t n, double p, nb::handle shape, nb::handle dtype,
               nb::handle device) {
                return run(
                    shape, dtype, DType::int64, device, "ember.random.Generator.binomial",
                    [&](const Shape& s, DType t, Device d) { return g.binomial(n, p, s, t, d); });
            },
            "n"_a, "p"_a, "shape"_a, "dtype"_a.none(), "device"_a.none());
}

}  // namespace ember::python
