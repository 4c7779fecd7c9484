// ember's public C++ API: arrays on the CPU and (with the CUDA backend) NVIDIA GPUs.
#pragma once

#include "ember/array.hpp"
#include "ember/autograd.hpp"
#include "ember/cuda.hpp"
#include "ember/device.hpp"
#include "ember/dtype.hpp"
#include "ember/error.hpp"
#include "ember/fp_status.hpp"
#include "ember/half.hpp"
#include "ember/interop.hpp"
#include "ember/linalg.hpp"
#include "ember/nn.hpp"
#include "ember/ops.hpp"
#include "ember/optable.hpp"
#include "ember/random.hpp"
#include "ember/shape.hpp"
#include "ember/storage.hpp"

namespace ember {
inline constexpr const char* version = "0.1.0";
}
