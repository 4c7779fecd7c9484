// The GPU sort family's generated programs (src/backend/cuda/sort.cpp: onesweep radix sort,
// binary search, scatter-add) compile for sm_90 with NVRTC, for every dtype; no GPU is needed.
#include <gtest/gtest.h>

#include <string>

#include "backend/cuda/loader.hpp"
#include "backend/cuda/nvrtc.hpp"
#include "backend/cuda/sort.hpp"

using namespace ember;

TEST(CudaSort, ProgramsCompileForEveryDtype) {
    if (!gpu::nvrtc()) GTEST_SKIP() << gpu::nvrtc_unavailable_reason();
    for (int i = 0; i < num_dtypes; ++i) {
        const gpu::Program p = gpu::sort_program(DType(i));
        for (const char* k : {"counts", "scatter", "scatter_rows", "rowpos", "search", "rows"})
            EXPECT_NE(p.source.find(gpu::sort_kernel_name(DType(i), k)), std::string::npos)
                << p.name << " lacks " << k;
        try {
            const std::string cubin = gpu::compile_cubin(p, 90);
            EXPECT_EQ(cubin.compare(1, 3, "ELF"), 0) << p.name;
        } catch (const std::exception& e) {
            ADD_FAILURE() << p.name << ": " << std::string(e.what()).substr(0, 4000);
        }
        const gpu::Program q = gpu::scatter_add_program(DType(i));
        try {
            EXPECT_EQ(gpu::compile_cubin(q, 90).compare(1, 3, "ELF"), 0) << q.name;
        } catch (const std::exception& e) {
            ADD_FAILURE() << q.name << ": " << std::string(e.what()).substr(0, 4000);
        }
    }
}
