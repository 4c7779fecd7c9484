// The gather kernel: out[i] = src[offsets[i]] on elements moved as bits.
#include "backend/cuda/codegen.hpp"

namespace ember::gpu {

std::string gather_kernel_name(int itemsize) { return "ember_gather_b" + std::to_string(itemsize); }

Program gather_program(int itemsize) {
    const std::string t = itemsize == 16  ? "ember::dev::vec_t<unsigned long long, 2>"
                          : itemsize == 8 ? "unsigned long long"
                          : itemsize == 4 ? "unsigned int"
                          : itemsize == 2 ? "unsigned short"
                                          : "unsigned char";
    const std::string nm = gather_kernel_name(itemsize);
    std::string s = "// out[i] = src[offsets[i]], " + std::to_string(itemsize) +
                    "-byte elements moved as bits.\n";
    s += "extern \"C\" __global__ void " + nm + "(\n";
    s += "    " + t + "* __restrict__ out, const " + t +
         "* src, const long long* __restrict__ offsets,\n";
    s += "    const long long n) {\n";
    s += "    const long long step = (long long)gridDim.x * blockDim.x;\n";
    s += "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += "
         "step)\n";
    s += "        out[i] = src[offsets[i]];\n";
    s += "}\n";
    return single_program(nm, s, false);
}

}  // namespace ember::gpu
