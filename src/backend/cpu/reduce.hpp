// CPU reductions of the reduction table (include/ember/reducetable.hpp): value reductions and the
// index-returning ones, with the policies of src/ops/reduce.hpp.
#pragma once

#include "backend/backend.hpp"

namespace ember::host {

void reduce(backend::ReduceOp op, DType acc, const backend::Loop& l);

}  // namespace ember::host
