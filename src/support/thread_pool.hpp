// A fixed pool of worker threads for splitting large host loops over the cores; shared by the
// layers (the CPU backend's loops, the CUDA backend's host-side packing), so it belongs to none.
#pragma once

#include <cstdint>
#include <functional>

namespace ember::host {

// Number of threads parallel_for uses (EMBER_NUM_THREADS, else the hardware concurrency).
int num_threads();

// Runs fn(task) for task in [0, ntasks), spread over the pool; the calling thread takes part.
// Calls from inside a task run serially on the caller. Exceptions from tasks are rethrown.
void parallel_for(int64_t ntasks, const std::function<void(int64_t)>& fn);

// Splits [0, n) into contiguous ranges of at least `grain` elements (a few per thread, so a
// busy core does not hold the others up) and runs fn(begin, end) on each; small ranges stay on
// the calling thread.
template <class F>
void parallel_range(int64_t n, int64_t grain, F&& fn) {
    int64_t parts = num_threads() == 1 ? 1 : int64_t(num_threads()) * 4;
    if (grain < 1) grain = 1;
    if (n / grain < parts) parts = n / grain;
    if (parts <= 1) {
        if (n > 0) fn(int64_t(0), n);
        return;
    }
    const int64_t chunk = (n + parts - 1) / parts;
    parallel_for(parts, [&](int64_t t) {
        int64_t b = t * chunk, e = b + chunk < n ? b + chunk : n;
        if (b < e) fn(b, e);
    });
}

}  // namespace ember::host
