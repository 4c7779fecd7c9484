// Integer and bool matrix products (cuBLAS has none): one thread per output element.
#include "backend/cuda/codegen.hpp"

namespace ember::gpu {

std::string int_matmul_kernel_name(DType t) { return "ember_matmul_" + std::string(dtype_code(t)); }

Program int_matmul_program(DType t) {
    const std::string ty(device_type(t)), nm = int_matmul_kernel_name(t);
    const bool b = t == DType::bool_;
    std::string s = "// C = A @ B for " + std::string(name(t)) +
                    ", one output element per thread; A/B row-major or transposed.\n";
    s += "extern \"C\" __global__ void " + nm + "(\n";
    s += "    " + ty + "* __restrict__ c, const " + ty + "* __restrict__ a, const " + ty +
         "* __restrict__ b,\n";
    s += "    const long long m, const long long n, const long long k, const long long lda,\n";
    s += "    const long long ldb, const long long ldc, const int ta, const int tb) {\n";
    s += "    const long long step = (long long)gridDim.x * blockDim.x;\n";
    s += "    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < m * n; "
         "e += step) {\n";
    s += "        const long long i = e / n, j = e % n;\n";
    s += b ? "        bool acc = false;\n" : "        unsigned long long acc = 0;\n";
    s += "        for (long long p = 0; p < k; ++p) {\n";
    s += "            const " + ty + " x = a[ta ? p * lda + i : i * lda + p];\n";
    s += "            const " + ty + " y = b[tb ? j * ldb + p : p * ldb + j];\n";
    s += b ? "            acc = acc || (x && y);\n"
           : "            acc += (unsigned long long)(long long)x * (unsigned long long)(long "
             "long)y;\n";
    s += "        }\n";
    s += "        c[i * ldc + j] = " + (b ? std::string("acc") : ty + "(acc)") + ";\n";
    s += "    }\n}\n";
    return single_program(nm, s, false);
}

}  // namespace ember::gpu
