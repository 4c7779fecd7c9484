// Runs the generated map kernel of every op-table row (each loop dtype, contiguous and 2-d
// strided) on GPU 0 and compares it with the CPU backend. Exits 77 (CTest: skipped) without a
// usable CUDA driver.
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cuda/codegen.hpp"
#include "backend/cuda/loader.hpp"
#include "backend/cuda/nvrtc.hpp"
#include "ember/ember.hpp"

using namespace ember;
namespace gpu = ember::gpu;

namespace {

const gpu::DriverApi* D = nullptr;

void check(gpu::CUresult r, const char* what) {
    if (r == gpu::CUDA_SUCCESS) return;
    const char* name = "?";
    D->cuGetErrorName(r, &name);
    throw Error(std::string(what) + ": " + name);
}

// Deterministic inputs in each op's comfortable domain (0.1..0.9 for floats, small ints).
Array input(DType t, int64_t n, int which) {
    if (t == DType::bool_) {
        Array a = arange(Scalar(int64_t(0)), Scalar(n), Scalar(int64_t(1)), DType::int64);
        return equal(remainder(a, int64_t(2 + which)), int64_t(0));
    }
    if (is_integer(t)) {
        Array a = arange(Scalar(int64_t(0)), Scalar(n), Scalar(int64_t(1)), DType::int64);
        return add(remainder(multiply(a, int64_t(7 + which)), int64_t(13)), int64_t(1 + which))
            .astype(t);
    }
    Array r = linspace(Scalar(0.1 + 0.05 * which), Scalar(0.9), n, DType::float64);
    if (is_complex(t)) return add(r, multiply(r, std::complex<double>(0, 0.5))).astype(t);
    return r.astype(t);
}

// Element i of a host array as complex<double> (exact for every dtype ember has but uint64
// and int64 beyond 2^53, which these inputs never reach).
std::complex<double> at(const Array& a, int64_t i) {
    Index idx[] = {Index(i)};
    Scalar s = index(a, idx).item();
    return s.c;
}

bool close(std::complex<double> x, std::complex<double> y, DType t) {
    auto one = [&](double a, double b) {
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
        if (a == b) return true;
        const double tol = (real_dtype(t) == DType::float32) ? 2e-6 : 1e-13;
        return std::abs(a - b) <= tol * std::max(1.0, std::max(std::abs(a), std::abs(b)));
    };
    return one(x.real(), y.real()) && one(x.imag(), y.imag());
}

}  // namespace

int main() {
    D = gpu::driver();
    if (!D) {
        std::printf("skipped: %s\n", gpu::driver_unavailable_reason().c_str());
        return 77;
    }
    int count = 0;
    if (D->cuDeviceGetCount(&count) != gpu::CUDA_SUCCESS || count == 0) {
        std::printf("skipped: no CUDA device\n");
        return 77;
    }
    try {
        gpu::CUdevice dev;
        check(D->cuDeviceGet(&dev, 0), "cuDeviceGet");
        gpu::CUcontext ctx;
        check(D->cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
        check(D->cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
        int major = 0, minor = 0;
        check(D->cuDeviceGetAttribute(&major, 75, dev), "compute capability");  // ..._MAJOR
        check(D->cuDeviceGetAttribute(&minor, 76, dev), "compute capability");  // ..._MINOR
        const int arch = major * 10 + minor;

        // Kernels: every row x loop dtype, contiguous; and 2-d strided with a transposed input.
        std::vector<gpu::MapKernel> kernels;
        for (int o = 0; o < ops::num_ops; ++o) {
            const ops::OpId op = ops::OpId(o);
            for (int d = 0; d < num_dtypes; ++d) {
                const DType t = DType(d);
                if (!(ops::op_infos[o].loops & ops::bit(t))) continue;
                if (ops::compute_dtype(op, t) != t) continue;
                kernels.push_back(gpu::natural_map_kernel(op, t));
                kernels.push_back(gpu::natural_map_kernel(op, t, gpu::MapLayout::strided, 2));
            }
        }
        gpu::Program prog = gpu::map_program(kernels);
        std::string cubin = gpu::compile_cubin(prog, arch);
        gpu::CUmodule mod;
        check(D->cuModuleLoadData(&mod, cubin.data()), "cuModuleLoadData");

        const int64_t rows = 37, cols = 29, n = rows * cols;
        int failures = 0, checked = 0;
        for (const gpu::MapKernel& k : kernels) {
            const int arity = ops::info(k.op).arity;
            const bool strided = k.layout == gpu::MapLayout::strided;
            std::vector<Array> ins;
            for (int i = 0; i < arity; ++i)
                ins.push_back(input(k.in[i], n, i).reshape({rows, cols}));
            // Strided: input 0 is read through a transposed view of a (cols, rows) array.
            std::vector<Array> views = ins;
            if (strided) views[0] = ins[0].transpose().copy().transpose();
            std::vector<Operand> xs(views.begin(), views.end());
            Array ref = map(k.op, xs);

            gpu::CUdeviceptr dout, din[3] = {0, 0, 0};
            check(D->cuMemAlloc(&dout, size_t(n * itemsize(k.out))), "cuMemAlloc");
            for (int i = 0; i < arity; ++i) {
                Array host = views[size_t(i)];
                // Device copy of the input's storage in its own (possibly transposed) layout.
                Array base = strided && i == 0 ? host.transpose().contiguous() : host.contiguous();
                check(D->cuMemAlloc(&din[i], size_t(n * itemsize(k.in[i]))), "cuMemAlloc");
                check(D->cuMemcpyHtoDAsync(din[i], base.data(), size_t(base.nbytes()), nullptr),
                      "HtoD");
            }
            gpu::CUfunction fn;
            check(D->cuModuleGetFunction(&fn, mod, gpu::kernel_name(k).c_str()), "GetFunction");
            gpu::StridedGeometry g{};
            if (strided) {  // dims innermost first: (cols, rows)
                g.shape[0] = cols;
                g.shape[1] = rows;
                g.strides[0][0] = 1;
                g.strides[0][1] = cols;
                for (int i = 0; i < arity; ++i) {
                    g.strides[i + 1][0] = i == 0 ? rows : 1;
                    g.strides[i + 1][1] = i == 0 ? 1 : cols;
                }
            }
            unsigned int n32 = unsigned(n);
            std::vector<void*> params = {&dout};
            for (int i = 0; i < arity; ++i)
                params.push_back(&din[i]);
            if (strided) params.push_back(&g);
            params.push_back(&n32);
            check(D->cuLaunchKernel(fn, unsigned((n + 255) / 256), 1, 1, 256, 1, 1, 0, nullptr,
                                    params.data(), nullptr),
                  "cuLaunchKernel");
            Array got = empty({rows, cols}, k.out, cpu);
            check(D->cuMemcpyDtoHAsync(got.data(), dout, size_t(got.nbytes()), nullptr), "DtoH");
            check(D->cuCtxSynchronize(), "kernel");
            D->cuMemFree(dout);
            for (int i = 0; i < arity; ++i)
                D->cuMemFree(din[i]);

            Array r = ref.reshape({n}), q = got.reshape({n});
            int bad = 0;
            for (int64_t i = 0; i < n && bad < 3; ++i)
                if (!close(at(r, i), at(q, i), k.out)) {
                    if (!bad)
                        std::printf("MISMATCH %s at %lld: cpu %.17g%+.17gj gpu %.17g%+.17gj\n",
                                    gpu::kernel_name(k).c_str(), (long long)i, at(r, i).real(),
                                    at(r, i).imag(), at(q, i).real(), at(q, i).imag());
                    ++bad;
                }
            failures += bad != 0;
            ++checked;
        }
        std::printf("%d kernels checked on sm_%d, %d mismatched\n", checked, arch, failures);
        return failures ? 1 : 0;
    } catch (const std::exception& e) {
        std::printf("error: %s\n", e.what());
        return 2;
    }
}
