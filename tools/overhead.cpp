// Host-overhead probe for the CUDA backend (run on the GPU machine): where a 1-element x + x
// spends its time.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>

#include "backend/backend.hpp"
#include "backend/cuda/codegen.hpp"
#include "backend/cuda/runtime.hpp"
#include "core/internal.hpp"
#include "ember/ember.hpp"

using namespace ember;
using clk = std::chrono::steady_clock;

template <class F>
double per_call_us(F&& f, int n = 20000) {
    double best = 1e9;
    for (int r = 0; r < 5; ++r) {
        auto t0 = clk::now();
        for (int i = 0; i < n; ++i)
            f();
        double us = std::chrono::duration<double, std::micro>(clk::now() - t0).count() / n;
        best = std::min(best, us);
        cuda::synchronize();
    }
    return best;
}

int main() {
    Device g(DeviceType::cuda, 0);
    Array x = Array::empty({1}, DType::float32, g);
    x.fill(Scalar(1.0));
    Array y = add(x, x);  // compiles
    gpu::DeviceState& d = gpu::device(0);
    const gpu::DriverApi& a = *gpu::driver();
    gpu::CUstream s = gpu::current_stream(d);
    // The floor: the same kind of kernel launched bare on the same stream.
    gpu::KernelSource src{
        {"probe.cu",
         "extern \"C\" __global__ void probe_add(float* o, const float* a, const float* b, "
         "unsigned n) { unsigned i = blockIdx.x * 256 + threadIdx.x; if (i < n) o[i] = a[i] + "
         "b[i]; }",
         {}},
        "probe_add"};
    gpu::CUfunction f = gpu::load_kernel(d, gpu::KernelKey{0x9e37, 0x79b9}, src);
    void* px = x.data();
    void* py = y.data();
    unsigned n1 = 1;
    void* args[] = {&py, &px, &px, &n1};
    std::printf("bare cuLaunchKernel       %.2f us\n",
                per_call_us([&] { a.cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, s, args, nullptr); }));
    // The same launch through cuLaunchKernelEx: is it cheaper for the driver? (Checked once first:
    // its return code and that it really wrote 1 + 1.)
    auto checked = [&](const char* name, auto&& launch_once) {
        y.fill(Scalar(0.0));
        const int rc = int(launch_once());
        cuda::synchronize();
        const double v = y.item<double>();
        std::printf("%-26s rc %d, wrote %g: %s\n", name, rc, v,
                    rc == 0 && v == 2 ? "ok" : "BROKEN");
    };
    gpu::CUlaunchConfig cfg;
    cfg.block_x = 256;
    cfg.stream = s;
    checked("cuLaunchKernelEx, no attr",
            [&] { return a.cuLaunchKernelEx(&cfg, f, args, nullptr); });
    std::printf("cuLaunchKernelEx, no attr %.2f us\n",
                per_call_us([&] { a.cuLaunchKernelEx(&cfg, f, args, nullptr); }));
    // ember's own add kernel, launched bare.
    gpu::MapKernel k = gpu::natural_map_kernel(ops::OpId::add, DType::float32);
    k.vec = gpu::natural_vec(k);
    gpu::CUfunction fe = gpu::load_kernel(d, gpu::KernelKey{0x1234, 0x5678},
                                          {gpu::map_program({&k, 1}), gpu::kernel_name(k)});
    const Array* lp[3] = {&y, &x, &x};
    backend::Loop loop = detail::make_loop(lp, 3, 0);
    backend::Backend& be = backend::of(g, "probe");
    for (int round = 0; round < 2; ++round) {
        std::printf("bare launch, probe kernel %.2f us\n", per_call_us([&] {
                        a.cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, s, args, nullptr);
                    }));
        std::printf("bare launch, ember kernel %.2f us\n", per_call_us([&] {
                        a.cuLaunchKernel(fe, 1, 1, 1, 256, 1, 1, 0, s, args, nullptr);
                    }));
        std::printf("backend map, built loop   %.2f us\n",
                    per_call_us([&] { be.map(ops::OpId::add, DType::float32, loop); }));
        std::printf("ember::add(x, x)          %.2f us\n",
                    per_call_us([&] { Array z = add(x, x); }));
    }
    // What a launch does to the host work after it: a locked instruction (an atomic add, a mutex)
    // waits for the stores before it, the driver's doorbell write among them; plain work does not.
    static std::atomic<uint64_t> counter{0};
    static std::mutex mu;
    auto spin = [](int n) {
        uint64_t v = 1;
        for (int i = 0; i < n; ++i)
            asm volatile("imul $3, %0, %0" : "+r"(v));
    };
    auto launch = [&] { a.cuLaunchKernel(fe, 1, 1, 1, 256, 1, 1, 0, s, args, nullptr); };
    for (int round = 0; round < 2; ++round) {
        std::printf("launch                    %.3f us\n", per_call_us(launch));
        std::printf("launch + atomic add       %.3f us\n", per_call_us([&] {
                        launch();
                        counter.fetch_add(1, std::memory_order_relaxed);
                    }));
        std::printf("launch + mutex            %.3f us\n", per_call_us([&] {
                        launch();
                        std::lock_guard lk(mu);
                    }));
        std::printf("launch + 300 imul, atomic %.3f us\n", per_call_us([&] {
                        launch();
                        spin(300);
                        counter.fetch_add(1, std::memory_order_relaxed);
                    }));
        std::printf("launch + 300 imul         %.3f us\n", per_call_us([&] {
                        launch();
                        spin(300);
                    }));
        std::printf("300 imul alone            %.3f us\n", per_call_us([&] { spin(300); }));
        std::printf("atomic add alone          %.3f us\n",
                    per_call_us([&] { counter.fetch_add(1, std::memory_order_relaxed); }));
        std::printf("launch + alloc/free       %.3f us\n", per_call_us([&] {
                        launch();
                        gpu::deallocate(d, gpu::allocate(d, 4));
                    }));
        std::printf("alloc/free alone          %.3f us\n",
                    per_call_us([&] { gpu::deallocate(d, gpu::allocate(d, 4)); }));
        std::printf("launch + Array::empty     %.3f us\n", per_call_us([&] {
                        launch();
                        Array z = Array::empty({1}, DType::float32, g);
                    }));
        std::printf("Array::empty alone        %.3f us\n",
                    per_call_us([&] { Array z = Array::empty({1}, DType::float32, g); }));
    }
    std::printf("Array::empty              %.2f us\n",
                per_call_us([&] { Array z = Array::empty({1}, DType::float32, g); }));
    std::printf("alloc+free pool           %.2f us\n", per_call_us([&] {
                    gpu::CUdeviceptr p;
                    a.cuMemAllocFromPoolAsync(&p, 4, d.large_pool, s);
                    a.cuMemFreeAsync(p, s);
                }));
    std::printf("gpu::allocate+deallocate  %.2f us\n", per_call_us([&] {
                    void* p = gpu::allocate(d, 4);
                    gpu::deallocate(d, p);
                }));
    std::printf("fill (memset)             %.2f us\n", per_call_us([&] { y.fill(Scalar(2.0)); }));
    std::printf("CPU add                   %.2f us\n", per_call_us([&] {
                    static Array c = Array::empty({1}, DType::float32, cpu);
                    Array z = add(c, c);
                }));
    return 0;
}
