// The launches of the small kernel families (iota, random, gather, integer matmul): the kernel of
// the call's key, its arguments, one launch (a launch per batch for matmul).
#include "backend/cuda/launch_small.hpp"

#include "backend/cuda/codegen.hpp"
#include "backend/cuda/launch.hpp"

namespace ember::gpu {

using backend::Loop;

void iota(DeviceState& d, const Loop& l, const Scalar& start, const Scalar& step) {
    const int64_t n = l.numel();
    const DType t = l.dtype[0];
    const bool i64 = n >= i32_limit;
    KernelKey key = KeyBuilder().put(fam_iota, 4).put(uint64_t(t), 4).put(i64, 1).k;
    CUfunction f = kernel(d, key, [&] {
        return KernelSource{iota_program(t, i64), iota_kernel_name(t, i64)};
    });
    void* out = l.data[0];
    long long stride = l.ndim() ? l.strides[0][0] : 1;
    long long istart = start.i, istep = step.i;
    double fstart = start.c.real(), fstep = step.c.real();
    alignas(16) double cstart[2] = {start.c.real(), start.c.imag()};
    alignas(16) double cstep[2] = {step.c.real(), step.c.imag()};
    unsigned n32 = unsigned(n);
    long long n64 = n;
    Args a;
    a.add(&out);
    a.add(&stride);
    switch (kind(t)) {
        case Kind::complex:
            a.add(cstart);
            a.add(cstep);
            break;
        case Kind::floating:
            a.add(&fstart);
            a.add(&fstep);
            break;
        default:
            a.add(&istart);
            a.add(&istep);
    }
    a.add(i64 ? static_cast<void*>(&n64) : static_cast<void*>(&n32));
    launch(d, f, grid_for(d, n), 1, a.ptrs, "arange");
}

void random(DeviceState& d, const rng::Params& p, void* out, DType t, int64_t n) {
    const RandomFamily fam = random_family(p.dist);
    const KernelKey key =
        KeyBuilder().put(fam_random, 4).put(uint64_t(fam), 4).put(uint64_t(t), 4).k;
    CUfunction f = kernel(d, key, [&] {
        return KernelSource{random_program(fam, t), random_kernel_name(fam, t)};
    });
    const bool packed = fam == RandomFamily::bits || fam == RandomFamily::real;
    const int64_t items =
        packed ? (n + rng::per_block(int(itemsize(t))) - 1) / rng::per_block(int(itemsize(t))) : n;
    rng::Params params = p;
    unsigned long long count = (unsigned long long)n;
    void* ptr = out;
    void* args[] = {&ptr, &params, &count};
    launch(d, f, grid_for(d, items), 1, args, "random");
}

void gather(DeviceState& d, void* out, const void* src, const int64_t* off, int64_t n, int isz) {
    const KernelKey key = KeyBuilder().put(fam_gather, 4).put(uint64_t(isz), 5).k;
    CUfunction f = kernel(d, key, [&] {
        return KernelSource{gather_program(isz), gather_kernel_name(isz)};
    });
    void* o = out;
    const void* sp = src;
    const int64_t* op = off;
    long long count = n;
    void* args[] = {&o, &sp, &op, &count};
    launch(d, f, grid_for(d, n), 1, args, "take");
}

void int_matmul(DeviceState& d, const backend::MatmulLoop& l) {
    const DType t = l.dtype;
    const KernelKey key = KeyBuilder().put(fam_matmul, 4).put(uint64_t(t), 4).k;
    CUfunction f = kernel(d, key, [&] {
        return KernelSource{int_matmul_program(t), int_matmul_kernel_name(t)};
    });
    long long m = l.m, n = l.n, k = l.k, lda = l.ld[1], ldb = l.ld[2], ldc = l.ld[0];
    int ta = l.trans[1], tb = l.trans[2];
    l.for_each_batch([&](char* c, const char* a, const char* b) {
        void* pc = c;
        const void* pa = a;
        const void* pb = b;
        void* args[] = {&pc, &pa, &pb, &m, &n, &k, &lda, &ldb, &ldc, &ta, &tb};
        launch(d, f, grid_for(d, m * n), 1, args, "matmul");
    });
}

}  // namespace ember::gpu
