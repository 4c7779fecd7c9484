// Copy/cast and fill kernels (NumPy's unsafe cast on the elementwise template) and the 1-D iota
// kernel of arange and linspace.
#include <algorithm>

#include "backend/cuda/codegen.hpp"
#include "backend/cuda/codegen/elementwise.hpp"
#include "ember/error.hpp"

namespace ember::gpu {

int natural_vec(const CopyKernel& k) {
    const int64_t widest = std::max(itemsize(k.out), k.scalar ? 1 : itemsize(k.in));
    return int(16 / widest);
}

std::vector<CopyKernel> layout_variants(const CopyKernel& k) { return variants_of(k); }

std::string copy_kernel_name(const CopyKernel& k) {
    std::string s = "ember_copy_";
    s += dtype_code(k.out);
    s += '_';
    s += dtype_code(k.in);
    if (k.scalar) s += 's';
    s += layout_suffix(k.layout == MapLayout::strided, k.ndim, k.index64, k.vec);
    return s;
}

std::string copy_kernel_text(const CopyKernel& k) {
    const bool strided = k.layout == MapLayout::strided;
    if (strided && (k.ndim < 1 || k.ndim > max_strided_dims))
        throw ValueError("copy kernel: strided ndim " + std::to_string(k.ndim) + " is outside 1.." +
                         std::to_string(max_strided_dims));
    Elementwise e;
    e.name = copy_kernel_name(k);
    e.out_t = device_type(k.out);
    e.in_t = {std::string(device_type(k.in))};
    e.scalar_mask = k.scalar ? 1 : 0;
    e.strided = strided;
    e.ndim = k.ndim;
    e.index64 = k.index64;
    e.vec = strided ? 1 : k.vec;
    e.comment = std::string("// ") + (k.scalar ? "fill" : "copy") + ": " +
                std::string(name(k.out)) + " <- " + std::string(name(k.in)) +
                (k.scalar ? " scalar" : "") + " (NumPy's unsafe cast); " +
                layout_comment(strided, k.ndim, k.index64, e.vec);
    e.value_t = "Out";
    e.aliases = "    using Out = " + e.out_t + ";\n";
    e.load = [](int, std::string src) { return "convert<Out>(" + src + ")"; };
    e.result = "a0";
    return elementwise_text(e);
}

Program copy_program(const CopyKernel& k) {
    return single_program(copy_kernel_name(k), copy_kernel_text(k),
                          is_complex(k.in) || is_complex(k.out));
}

std::string iota_kernel_name(DType out, bool index64) {
    return "ember_iota_" + std::string(dtype_code(out)) + (index64 ? "_i64" : "_i32");
}

std::string iota_kernel_text(DType out, bool index64) {
    const std::string t(device_type(out));
    const Kind kd = kind(out);
    // start and step come as int64, double or complex<double> by the kind of the output.
    const std::string arg = kd == Kind::complex    ? "ember::dev::complex128"
                            : kd == Kind::floating ? "double"
                                                   : "long long";
    std::string value;
    if (out == DType::bool_)
        value = "(start + i * step) != 0";
    else if (kd == Kind::complex)
        value = "convert<" + t + ">(start + double(i) * step)";
    else if (kd == Kind::floating)
        value = "convert<" + t + ">(start + double(i) * step)";
    else
        value =
            t + "((unsigned long long)start + (unsigned long long)i * (unsigned long long)step)";
    std::string s = "// arange/linspace: out[i * stride] = start + i * step, computed in " + arg +
                    ", stored as " + std::string(name(out)) + ".\n";
    const std::string idx = index64 ? "long long" : "unsigned int";
    s += "extern \"C\" __global__ void " + iota_kernel_name(out, index64) + "(\n";
    s += "    " + t + "* __restrict__ out,\n    const long long stride,\n    const " + arg +
         " start,\n    const " + arg + " step,\n    const " + idx + " n) {\n";
    s += "    using namespace ember::dev;\n";
    s += "    using Index = " + idx + ";\n";
    s += "    const Index gstep = Index(gridDim.x) * blockDim.x;\n";
    s += "    for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += gstep)\n";
    s += "        out[(long long)i * stride] = " + value + ";\n";
    s += "}\n";
    return s;
}

Program iota_program(DType out, bool index64) {
    return single_program(iota_kernel_name(out, index64), iota_kernel_text(out, index64),
                          is_complex(out));
}

}  // namespace ember::gpu
