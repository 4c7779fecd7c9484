// What the CUDA backend's launch code shares: the kernel-cache key packing (a family in the low 4
// bits, then the family's fields) and the argument list of a launch.
#pragma once

#include <cstdint>

#include "backend/cuda/runtime.hpp"

namespace ember::gpu {

constexpr int64_t i32_limit = int64_t(1) << 31;

// Key packing: 4 bits of family, then the family's fields.
enum Family : uint64_t {
    fam_map = 1,
    fam_copy = 2,
    fam_iota = 3,
    fam_reduce = 4,
    fam_random = 5,
    fam_matmul = 6,
    fam_gather = 7
};

struct KeyBuilder {
    KernelKey k;
    int bits = 0;
    KeyBuilder& put(uint64_t v, int width) {
        if (bits < 64) {
            k.lo |= v << bits;
            if (bits + width > 64) k.hi |= v >> (64 - bits);
        } else {
            k.hi |= v << (bits - 64);
        }
        bits += width;
        return *this;
    }
};

struct Args {
    void* ptrs[16];
    int n = 0;
    void add(void* p) { ptrs[n++] = p; }
};

}  // namespace ember::gpu
