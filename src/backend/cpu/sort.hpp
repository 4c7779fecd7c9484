// The CPU backend's sort family (backend.hpp's SortCall and SearchCall) on host memory.
#pragma once

#include "backend/backend.hpp"

namespace ember::host {

// Stable sorts of each row (rows in parallel on the thread pool).
void sort(const backend::SortCall& call);
// Binary searches of each value (values in parallel).
void searchsorted(const backend::SearchCall& call);

}  // namespace ember::host
