// The text every elementwise kernel family (map, copy/cast) shares, and their layout variants.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backend/cuda/codegen.hpp"

namespace ember::gpu {

// The shared text of every elementwise kernel family (map, copy/cast): operands, index types, the
// grid-stride loop over a contiguous or collapsed strided space, an optional 16-byte vector loop
// with a scalar tail. `load(i, at)` spells the value of input i at element `at`; `result` is the
// expression stored to the output, in terms of a0, a1, ...
struct Elementwise {
    std::string name, comment;
    std::string out_t;
    std::vector<std::string> in_t;
    uint8_t scalar_mask = 0;
    bool strided = false;
    int ndim = 1;
    bool index64 = false;
    int vec = 1;
    std::string aliases;                                // type aliases at the top of the body
    std::string value_t;                                // the type inputs are loaded as
    std::function<std::string(int, std::string)> load;  // (input, source expression)
    std::string result;
};

std::string elementwise_text(const Elementwise& e);

// The layout part of a kernel's comment and of its name.
std::string layout_comment(bool strided, int ndim, bool index64, int vec);
std::string layout_suffix(bool strided, int ndim, bool index64, int vec);

template <class K>
std::vector<K> variants_of(const K& k) {
    std::vector<K> v;
    const int vec = natural_vec(k);
    for (int w : {vec, 1}) {
        K c = k;
        c.layout = MapLayout::contiguous;
        c.ndim = 1;
        c.vec = w;
        v.push_back(c);
        if (vec == 1) break;
    }
    for (int nd = 1; nd <= 3; ++nd) {
        K c = k;
        c.layout = MapLayout::strided;
        c.ndim = nd;
        c.vec = 1;
        v.push_back(c);
    }
    return v;
}

}  // namespace ember::gpu
