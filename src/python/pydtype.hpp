// The Python-visible dtype object (ember.float32 ...): a thin wrapper of ember::DType.
#pragma once

#include "ember/dtype.hpp"

namespace ember::python {

struct PyDType {
    DType t = DType::float64;
};

}  // namespace ember::python
