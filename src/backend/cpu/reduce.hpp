// CPU reductions (sum, prod, max, min, any, all) and index reductions (argmax, argmin).
#pragma once

#include "backend/backend.hpp"

namespace ember::host {

void reduce(backend::ReduceOp op, DType acc, const backend::Loop& l);
void arg_reduce(backend::ArgReduceOp op, const backend::Loop& l);

}  // namespace ember::host
