// The fused row kernels' generated programs (src/backend/cuda/rows.cpp) compile for sm_90 with
// NVRTC in every variant the host picks (op x dtype x warp/block rows x register chunks x vector
// width), and the host picks the paths it documents; no GPU is needed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/cuda/nvrtc.hpp"
#include "backend/cuda/rows.hpp"

using namespace ember;

namespace {

std::vector<gpu::RowsKernel> variants() {
    std::vector<gpu::RowsKernel> v;
    const DType dts[] = {DType::float16, DType::bfloat16, DType::float32, DType::float64};
    alignas(16) static char buf[64];
    for (int op = 0; op <= int(backend::RowsOp::layer_norm_backward); ++op)
        for (DType t : dts)
            for (int64_t n : {1, 8, 100, 256, 512, 520, 1024, 2048, 4096, 4100, 70000})
                for (bool aligned : {true, false}) {
                    backend::RowsCall c;
                    c.op = backend::RowsOp(op);
                    c.dtype = t;
                    c.n = n;
                    c.x = aligned ? buf : buf + 2;
                    c.out = buf;
                    const gpu::RowsKernel k = gpu::rows_kernel_for(c, op);
                    bool seen = false;
                    for (const auto& o : v)
                        seen = seen || gpu::rows_kernel_name(o) == gpu::rows_kernel_name(k);
                    if (!seen) v.push_back(k);
                }
    for (DType t : dts)
        v.push_back(gpu::RowsKernel{gpu::rows_ln_partials, t, 256, 0, 1});
    return v;
}

}  // namespace

TEST(CudaRows, HostPicksWarpBlockAndStreamedPaths) {
    alignas(16) static char buf[64];
    backend::RowsCall c;
    c.dtype = DType::float32;
    c.x = c.out = buf;
    c.n = 500;
    gpu::RowsKernel k = gpu::rows_kernel_for(c, 0);
    EXPECT_EQ(k.tpr, 32);
    EXPECT_EQ(k.vec, 4);
    EXPECT_EQ(k.k, 4);  // 4 chunks of 4 floats per lane: 512 >= 500
    c.n = 1000;
    k = gpu::rows_kernel_for(c, 0);
    EXPECT_EQ(k.tpr, 256);
    EXPECT_EQ(k.k, 1);
    c.n = 4096;
    k = gpu::rows_kernel_for(c, 0);
    EXPECT_EQ(k.tpr, 256);
    EXPECT_EQ(k.k, 4);
    c.n = 4100;  // longer than the registers hold: streamed, still 4-float vectors
    k = gpu::rows_kernel_for(c, 0);
    EXPECT_EQ(k.tpr, 256);
    EXPECT_EQ(k.k, 0);
    EXPECT_EQ(k.vec, 4);
    c.n = 4099;
    EXPECT_EQ(gpu::rows_kernel_for(c, 0).vec, 1);
    c.n = 16;
    c.x = buf + 4;  // misaligned rows: scalar loads
    EXPECT_EQ(gpu::rows_kernel_for(c, 0).vec, 1);
}

TEST(CudaRows, ProgramsCompileForEveryVariant) {
    if (!gpu::nvrtc()) GTEST_SKIP() << gpu::nvrtc_unavailable_reason();
    const std::vector<gpu::RowsKernel> ks = variants();
    EXPECT_GT(ks.size(), 100u);
    for (const gpu::RowsKernel& k : ks) {
        const gpu::Program p = gpu::rows_program(k);
        ASSERT_NE(p.source.find(gpu::rows_kernel_name(k)), std::string::npos) << p.name;
        try {
            const std::string cubin = gpu::compile_cubin(p, 90);
            EXPECT_EQ(cubin.compare(1, 3, "ELF"), 0) << p.name;
        } catch (const std::exception& e) {
            ADD_FAILURE() << p.name << ": " << std::string(e.what()).substr(0, 4000);
        }
    }
}
