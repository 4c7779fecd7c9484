// The CPU backend's row-wise normalization ops (backend.hpp's RowsCall): plain loops per row,
// rows spread over the thread pool.
#pragma once

#include "backend/backend.hpp"

namespace ember::host {

void rows(const backend::RowsCall& call);

}  // namespace ember::host
