// The shared elementwise kernel text: operands, index types, the grid-stride loop over a
// contiguous or collapsed strided space, the optional vector loop.
#include "backend/cuda/codegen/elementwise.hpp"

namespace ember::gpu {

std::string layout_comment(bool strided, int ndim, bool index64, int vec) {
    std::string s = strided ? std::to_string(ndim) + "-d strided" : "contiguous";
    if (vec > 1) s += ", " + std::to_string(vec) + "-wide vectors";
    s += index64 ? ", 64-bit indices.\n" : ", 32-bit indices.\n";
    return s;
}

std::string layout_suffix(bool strided, int ndim, bool index64, int vec) {
    std::string s = strided ? "__strided" + std::to_string(ndim) : "__contig";
    if (vec > 1) s += "_v" + std::to_string(vec);
    s += index64 ? "_i64" : "_i32";
    return s;
}

std::string elementwise_text(const Elementwise& e) {
    const int arity = int(e.in_t.size());
    const auto is_scalar = [&](int i) { return (e.scalar_mask & (1u << i)) != 0; };
    const std::string iu = "Index", is = "Offset";
    std::string s = e.comment;
    s += "extern \"C\" __global__ void " + e.name + "(\n";
    s += "    " + e.out_t + "* __restrict__ out";
    for (int i = 0; i < arity; ++i) {
        s += ",\n    ";
        s += is_scalar(i) ? "const " + e.in_t[i] + " in" + std::to_string(i)
                          : "const " + e.in_t[i] + "* __restrict__ in" + std::to_string(i);
    }
    if (e.strided) s += ",\n    const ember::dev::StridedGeometry g";
    s += e.index64 ? ",\n    const long long n) {\n" : ",\n    const unsigned int n) {\n";
    s += "    using namespace ember::dev;\n";
    s += "    grid_dependency();\n";
    s += e.aliases;
    if (e.index64) {
        s += "    using Index = long long;  // linear index\n";
        if (e.strided) s += "    using Offset = long long;  // element offset\n";
    } else {
        // The host keeps n and gridDim.x * blockDim.x below 2^31, so i + step cannot wrap.
        s += "    using Index = unsigned int;  // linear index (n < 2^31)\n";
        if (e.strided) s += "    using Offset = int;  // element offset\n";
    }
    for (int i = 0; i < arity; ++i)
        if (is_scalar(i))
            s += "    const " + e.value_t + " a" + std::to_string(i) + " = " +
                 e.load(i, "in" + std::to_string(i)) + ";\n";
    s += "    const Index step = Index(gridDim.x) * blockDim.x;\n";
    std::string first = "Index(blockIdx.x) * blockDim.x + threadIdx.x";
    if (e.vec > 1) {
        const std::string V = std::to_string(e.vec);
        s += "    // " + V + " elements per 16-byte access, then the scalar tail.\n";
        s += "    const Index nv = n / " + V + ";\n";
        s += "    for (Index j = " + first + "; j < nv; j += step) {\n";
        for (int i = 0; i < arity; ++i)
            if (!is_scalar(i))
                s += "        const vec_t<" + e.in_t[i] + ", " + V + "> x" + std::to_string(i) +
                     " = reinterpret_cast<const vec_t<" + e.in_t[i] + ", " + V + ">*>(in" +
                     std::to_string(i) + ")[j];\n";
        s += "        vec_t<" + e.out_t + ", " + V + "> y;\n";
        s += "#pragma unroll\n";
        s += "        for (int k = 0; k < " + V + "; ++k) {\n";
        for (int i = 0; i < arity; ++i)
            if (!is_scalar(i))
                s += "            const " + e.value_t + " a" + std::to_string(i) + " = " +
                     e.load(i, "x" + std::to_string(i) + ".v[k]") + ";\n";
        s += "            y.v[k] = " + e.result + ";\n";
        s += "        }\n";
        s += "        reinterpret_cast<vec_t<" + e.out_t + ", " + V + ">*>(out)[j] = y;\n";
        s += "    }\n";
        first = "nv * " + V + " + " + first;
    }
    s += "    for (Index i = " + first + "; i < n; i += step) {\n";
    // Operand element offsets: the output is operand 0, input i is operand i + 1.
    std::vector<std::string> at(arity + 1, std::string("i"));
    if (e.strided) {
        std::vector<int> arrays;  // operand indices that need an offset
        arrays.push_back(0);
        for (int i = 0; i < arity; ++i)
            if (!is_scalar(i)) arrays.push_back(i + 1);
        s += "        " + iu + " rem = i;\n";
        s += "        " + is;
        for (size_t j = 0; j < arrays.size(); ++j)
            s += (j ? ", o" : " o") + std::to_string(arrays[j]) + " = 0";
        s += ";\n";
        if (e.ndim > 1) {
            s += "#pragma unroll\n";
            s += "        for (int d = 0; d < " + std::to_string(e.ndim - 1) + "; ++d) {\n";
            s += "            const " + iu + " q = rem / " + iu + "(g.shape[d]);\n";
            s += "            const " + is + " x = " + is + "(rem - q * " + iu + "(g.shape[d]));\n";
            s += "            rem = q;\n";
            for (int op : arrays)
                s += "            o" + std::to_string(op) + " += x * " + is + "(g.strides[" +
                     std::to_string(op) + "][d]);\n";
            s += "        }\n";
        }
        for (int op : arrays)
            s += "        o" + std::to_string(op) + " += " + is + "(rem) * " + is + "(g.strides[" +
                 std::to_string(op) + "][" + std::to_string(e.ndim - 1) + "]);\n";
        for (int op : arrays)
            at[op].assign(1, 'o').append(std::to_string(op));
    }
    for (int i = 0; i < arity; ++i)
        if (!is_scalar(i))
            s += "        const " + e.value_t + " a" + std::to_string(i) + " = " +
                 e.load(i, "in" + std::to_string(i) + "[" + at[i + 1] + "]") + ";\n";
    s += "        out[" + at[0] + "] = " + e.result + ";\n";
    s += "    }\n}\n";
    return s;
}

}  // namespace ember::gpu
