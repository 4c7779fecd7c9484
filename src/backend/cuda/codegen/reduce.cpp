// Reduction kernel source generation: one kernel per row of the reduction table, types, threads per
// output, kept and reduced dims and pass. The policy it instantiates is the row's reduce_<name> of
// src/ops/reduce.hpp, the header the CPU loops compile too (its text is embedded at build time).
#include "backend/cuda/codegen/reduce.hpp"

#include "ember/error.hpp"
#include "ember_device_text.hpp"

namespace ember::gpu {

std::string reduce_kernel_name(const ReduceKernel& k) {
    std::string s = "ember_reduce_";
    s += ops::info(k.op).name;
    s += '_';
    s += dtype_code(k.out);
    s += '_';
    s += dtype_code(k.in);
    s += '_';
    s += dtype_code(k.acc);
    s += "__t" + std::to_string(k.tpo) + "_k" + std::to_string(k.nk) + "_r" + std::to_string(k.nr);
    if (k.vec > 1) s += "_v" + std::to_string(k.vec);
    if (k.partial_in) s += "_pin";
    if (k.partial_out) s += "_pout";
    s += k.index64 ? "_i64" : "_i32";
    return s;
}

std::string reduce_kernel_text(const ReduceKernel& k) {
    if (k.nk < 0 || k.nk > max_strided_dims || k.nr < 0 || k.nr > max_strided_dims)
        throw ValueError("reduce kernel: dims outside 0.." + std::to_string(max_strided_dims));
    if (!(k.tpo == 1 || k.tpo == 32 || k.tpo == 256))
        throw ValueError("reduce kernel: threads per output must be 1, 32 or 256");
    if (k.vec > 1 && (k.nr != 1 || k.tpo == 1 || k.partial_in))
        throw ValueError("reduce kernel: vector loads need one unit-stride reduced dim");
    const std::string name = reduce_kernel_name(k);
    const std::string in_t(device_type(k.in)), acc_t(device_type(k.acc)), out_t(device_type(k.out));
    const std::string row(ops::info(k.op).name);
    // The row's policy from src/ops/reduce.hpp.
    std::string policy =
        "ember::ops::reduce_" + row + "<" + in_t + ", " + acc_t + ", " + out_t + ">";
    if (k.partial_in) policy = "ember::ops::reduce_partials<" + policy + ">";
    const std::string P = "P_" + name;
    const std::string Idx = k.index64 ? "long long" : "unsigned int";
    const std::string Off = k.index64 ? "long long" : "int";

    std::string s = "// " + row + ": " + std::string(ember::name(k.out)) + " <- " +
                    std::string(ember::name(k.in)) + ", accumulated in " +
                    std::string(ember::name(k.acc)) + "; ";
    s += k.tpo == 1 ? std::string("one thread per output")
                    : std::to_string(k.tpo) + " threads per output";
    s += ", " + std::to_string(k.nk) + " kept and " + std::to_string(k.nr) + " reduced dims";
    if (k.vec > 1) s += ", " + std::to_string(k.vec) + "-wide loads";
    if (k.partial_in) s += ", combining partials";
    if (k.partial_out) s += ", writing partials";
    s += k.index64 ? ", 64-bit indices.\n" : ", 32-bit indices.\n";
    s += "using " + P + " = " + policy + ";\n";
    s += "extern \"C\" __global__ void __launch_bounds__(256) " + name + "(\n";
    s += "    " + (k.partial_out ? P + "::acc_t" : out_t) + "* __restrict__ out,\n";
    s += "    const " + (k.partial_in ? P + "::acc_t" : in_t) + "* __restrict__ in,\n";
    s += "    const ember::dev::ReduceGeometry g,\n";
    s += "    const " + Idx + " nout,\n    const " + Idx + " nred,\n    const " + Idx +
         " chunk) {\n";
    s += "    using namespace ember::dev;\n";
    s += "    using P = " + P + ";\n    using A = P::acc_t;\n";
    s += "    using Index = " + Idx + ";\n    using Offset = " + Off + ";\n";
    s += "    constexpr unsigned TPO = " + std::to_string(k.tpo) + ";  // threads per output\n";
    s += "    const Index m = Index(blockIdx.x) * (256 / TPO) + threadIdx.x / TPO;\n";
    s += "    const unsigned lane = threadIdx.x % TPO;\n";
    s += "    const Index begin = Index(blockIdx.y) * chunk;\n";
    s += "    const Index end = nred - begin < chunk ? nred : begin + chunk;\n";
    s += "    A acc = P::identity();\n";
    s += "    Offset ib = 0, ob = 0;\n";
    s += "    if (m < nout) {\n";
    if (k.nk > 0) {
        s += "        Index rem = m;\n";
        if (k.nk > 1) {
            s += "#pragma unroll\n";
            s += "        for (int d = 0; d < " + std::to_string(k.nk - 1) + "; ++d) {\n";
            s += "            const Index q = rem / Index(g.kshape[d]);\n";
            s += "            const Offset x = Offset(rem - q * Index(g.kshape[d]));\n";
            s += "            rem = q;\n";
            s += "            ib += x * Offset(g.kin[d]);\n";
            s += "            ob += x * Offset(g.kout[d]);\n";
            s += "        }\n";
        }
        const std::string last = std::to_string(k.nk - 1);
        s += "        ib += Offset(rem) * Offset(g.kin[" + last + "]);\n";
        s += "        ob += Offset(rem) * Offset(g.kout[" + last + "]);\n";
    }
    if (k.vec > 1) {
        const std::string V = std::to_string(k.vec);
        s += "        using VT = vec_t<" + in_t + ", " + V + ">;\n";
        s += "        const VT* vin = reinterpret_cast<const VT*>(in + ib);\n";
        s += "#pragma unroll 2\n";
        s += "        for (Index rv = begin / " + V + " + lane; rv < end / " + V +
             "; rv += TPO) {\n";
        s += "            const VT x = vin[rv];\n";
        s += "#pragma unroll\n";
        s += "            for (int e = 0; e < " + V + "; ++e)\n";
        s += "                acc = P::combine(acc, P::load(x.v[e], (long long)(rv * " + V +
             " + e)));\n";
        s += "        }\n";
    } else {
        s += "#pragma unroll 4\n";
        s += "        for (Index r = begin + lane; r < end; r += TPO) {\n";
        s += "            Offset io = ib;\n";
        if (k.nr > 0) {
            s += "            Index rr = r;\n";
            if (k.nr > 1) {
                s += "#pragma unroll\n";
                s += "            for (int d = 0; d < " + std::to_string(k.nr - 1) + "; ++d) {\n";
                s += "                const Index q = rr / Index(g.rshape[d]);\n";
                s += "                io += Offset(rr - q * Index(g.rshape[d])) * "
                     "Offset(g.rin[d]);\n";
                s += "                rr = q;\n";
                s += "            }\n";
            }
            s +=
                "            io += Offset(rr) * Offset(g.rin[" + std::to_string(k.nr - 1) + "]);\n";
        }
        s += "            acc = P::combine(acc, P::load(in[io], (long long)r));\n";
        s += "        }\n";
    }
    s += "    }\n";
    if (k.tpo > 1) {
        s += "    // Fixed-order tree over the threads of one output: deterministic results.\n";
        s += "    __shared__ alignas(16) unsigned char smem_raw[256 * sizeof(A)];\n";
        s += "    A* smem = reinterpret_cast<A*>(smem_raw);\n";
        s += "    smem[threadIdx.x] = acc;\n";
        s += "    __syncthreads();\n";
        s += "#pragma unroll\n";
        s += "    for (unsigned s = TPO / 2; s > 0; s >>= 1) {\n";
        s += "        if (lane < s) smem[threadIdx.x] = P::combine(smem[threadIdx.x], "
             "smem[threadIdx.x + s]);\n";
        s += "        __syncthreads();\n";
        s += "    }\n";
        s += "    acc = smem[threadIdx.x];\n";
    }
    s += "    if (lane == 0 && m < nout)\n";
    if (k.partial_out)
        s += "        out[Index(blockIdx.y) * nout + m] = acc;\n";
    else
        s += "        out[ob] = P::finish(acc);\n";
    s += "}\n";
    return s;
}

Program reduce_program(const ReduceKernel& k) {
    return single_program(reduce_kernel_name(k), reduce_kernel_text(k),
                          is_complex(k.in) || is_complex(k.acc) || is_complex(k.out),
                          {{"ember/ops/reduce.hpp", generated::reduce_hpp},
                           {"ember/reduce_prelude.cuh", generated::reduce_cuh}});
}

}  // namespace ember::gpu
