// Host-overhead probe for the CUDA backend (run on the GPU machine): where a 1-element x + x
// spends its time.
#include <chrono>
#include <cstdio>

#include "backend/backend.hpp"
#include "backend/cuda/runtime.hpp"
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
    std::printf("ember::add(x, x)          %.2f us\n", per_call_us([&] { Array z = add(x, x); }));
    std::printf("Array::empty              %.2f us\n",
                per_call_us([&] { Array z = Array::empty({1}, DType::float32, g); }));
    std::printf("alloc+free pool           %.2f us\n", per_call_us([&] {
                    gpu::CUdeviceptr p;
                    a.cuMemAllocFromPoolAsync(&p, 4, d.pool, s);
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
