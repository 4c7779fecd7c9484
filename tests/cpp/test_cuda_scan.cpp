// The GPU scan, compaction and scatter programs (src/backend/cuda/scan.cpp) compile for sm_90
// with NVRTC for every dtype / element size they are generated for; no GPU is needed.
#include <gtest/gtest.h>

#include <string>

#include "backend/cuda/loader.hpp"
#include "backend/cuda/nvrtc.hpp"
#include "backend/cuda/scan.hpp"

using namespace ember;

namespace {

void compiles(const gpu::Program& p, std::initializer_list<std::string> kernels) {
    for (const std::string& k : kernels)
        EXPECT_NE(p.source.find("void " + k + "("), std::string::npos) << p.name << " lacks " << k;
    try {
        const std::string cubin = gpu::compile_cubin(p, 90);
        EXPECT_EQ(cubin.compare(1, 3, "ELF"), 0) << p.name;
    } catch (const std::exception& e) {
        ADD_FAILURE() << p.name << ": " << std::string(e.what()).substr(0, 4000);
    }
}

}  // namespace

TEST(CudaScan, ScanProgramsCompile) {
    if (!gpu::nvrtc()) GTEST_SKIP() << gpu::nvrtc_unavailable_reason();
    for (auto op : {backend::ScanOp::sum, backend::ScanOp::prod})
        for (DType t : {DType::int64, DType::float32, DType::float64}) {
            const std::string pre = std::string("ember_scan_") +
                                    (op == backend::ScanOp::sum ? "sum_" : "prod_") +
                                    std::string(name(t)) + "_";
            compiles(gpu::scan_program(op, t),
                     {pre + "serial", pre + "rows", pre + "totals", pre + "tiles"});
        }
    EXPECT_THROW(gpu::scan_program(backend::ScanOp::sum, DType::complex64), TypeError);
}

TEST(CudaScan, CompactAndScatterProgramsCompile) {
    if (!gpu::nvrtc()) GTEST_SKIP() << gpu::nvrtc_unavailable_reason();
    for (int isz : {1, 2, 4, 8, 16}) {
        const std::string b = std::to_string(isz);
        compiles(gpu::compact_program(isz),
                 {"ember_compact_count", "ember_compact_b" + b, "ember_compact_index"});
        compiles(gpu::scatter_program(isz),
                 {"ember_scatter_mark32", "ember_scatter_mark64", "ember_scatter_b" + b + "_w0",
                  "ember_scatter_b" + b + "_w8", "ember_scatter_b" + b + "_w32",
                  "ember_scatter_b" + b + "_w64"});
    }
}
