// ember reduction kernels: the device layout of their by-value geometry (the policies are
// src/ops/reduce.hpp, shared with the CPU loops).
#pragma once

namespace ember::dev {

// The kept and reduced dimensions of a reduction, innermost first: kept dims have an input and
// an output stride, reduced dims an input stride (layout of ember::gpu::ReduceGeometry).
struct ReduceGeometry {
    long long kshape[8], kin[8], kout[8];
    long long rshape[8], rin[8];
};

}  // namespace ember::dev
