// The bindings' side of ember.debug and ember.profiler: every public call (calls.cpp's wrappers,
// the ndarray operator slots) runs inside an Observed scope, which costs one relaxed load while
// nothing watches. While something does, it names the op for the ledger's events, records the
// op's host time and counters for the profiler, and opens an NVTX range for Nsight Systems.
#pragma once

#include <cstdint>

#include "ember/debug.hpp"

namespace ember::python {

class Observed {
public:
    explicit Observed(const char* op) noexcept {
        if (debug::watching()) [[unlikely]]
            begin(op);
    }
    ~Observed() {
        if (watched_) [[unlikely]]
            end();
    }
    Observed(const Observed&) = delete;
    Observed& operator=(const Observed&) = delete;

private:
    void begin(const char* op) noexcept;
    void end() noexcept;

    bool watched_ = false;
    uint32_t what_ = 0;  // the watch bits in effect at begin
    const char* op_ = nullptr;
    const char* prev_op_ = nullptr;
    uint64_t id_ = 0, parent_ = 0;
    int64_t t0_ = 0;
    uint64_t bytes0_ = 0, alloc0_ = 0;
};

}  // namespace ember::python
