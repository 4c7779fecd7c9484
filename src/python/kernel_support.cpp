// Bindings of the launch geometry user kernels share with ember's own (ember/launch.hpp): the
// dimension collapsing and the grid sizes python/ember/_kernels/ plans its launches with.
#include <nanobind/stl/pair.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "ember/launch.hpp"
#include "python/common.hpp"

namespace ember::python {

namespace {

using Rows = std::vector<std::vector<int64_t>>;

// shape and the operands' strides over it, C order (outermost dim first), with size-1 dims
// dropped and neighbours contiguous in every operand merged; the result is in C order too.
std::pair<std::vector<int64_t>, Rows> collapse(const std::vector<int64_t>& shape,
                                               const Rows& strides) {
    const int nops = int(strides.size());
    for (const auto& s : strides)
        if (s.size() != shape.size())
            throw ValueError("collapse_dims: every operand needs one stride per dim");
    std::vector<int64_t> order;  // innermost first, as collapse_dims walks them
    for (size_t d = shape.size(); d-- > 0;)
        if (shape[d] != 1) order.push_back(int64_t(d));
    Shape out_shape;
    std::vector<Strides> out_strides(static_cast<size_t>(nops));
    collapse_dims(
        Shape(shape), order.data(), int(order.size()), nops,
        [&](int k, int64_t d) { return strides[size_t(k)][size_t(d)]; }, out_shape,
        out_strides.data());
    std::vector<int64_t> c_shape(out_shape.rbegin(), out_shape.rend());
    Rows c_strides;
    for (const Strides& s : out_strides)
        c_strides.emplace_back(s.rbegin(), s.rend());
    return {std::move(c_shape), std::move(c_strides)};
}

}  // namespace

void bind_kernel_support(nb::module_& root) {
    nb::module_ m = root.def_submodule(
        "_kernel_support", "Launch geometry of user kernels (private: ember.ElementwiseKernel).");
    m.def("collapse_dims", &collapse, nb::arg("shape"), nb::arg("strides"),
          "(shape, strides) with size-1 dims dropped and dims contiguous in every operand merged "
          "(C order in and out).");
    m.def(
        "grid_size",
        [](int device, int64_t work, int block) {
            if (block < 1) throw ValueError("grid_size: block must be >= 1");
            return cuda::grid_size(device, work, block);
        },
        nb::arg("device"), nb::arg("work"), nb::arg("block"),
        "Blocks for a grid-stride loop over `work` items: at most one wave of resident blocks.");
}

}  // namespace ember::python
