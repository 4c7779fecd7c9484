// Shipped kernel packs (src/backend/cuda/kernel_pack.hpp), checked without a GPU: every cubin
// written is found again byte for byte, across chunks; absent keys and damaged files are refused;
// the ship key ignores where CCCL was on the build machine.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "backend/cuda/kernel_pack.hpp"
#include "backend/cuda/precompile.hpp"

using namespace ember::gpu;

namespace {

std::string temp_path(const char* name) {
    return (std::filesystem::temp_directory_path() /
            (std::string("ember_pack_test_") + std::to_string(::getpid()) + "_" + name))
        .string();
}

std::vector<std::pair<Hash128, std::string>> fake_cubins(int n) {
    std::mt19937_64 rng(42);
    std::vector<std::pair<Hash128, std::string>> v;
    for (int i = 0; i < n; ++i) {
        Hash128 k{rng(), rng()};
        // sizes up to 300 KB: several 1 MiB chunks; repetitive bytes, as cubins are
        std::string body(size_t(rng() % 300000) + 1, '\0');
        for (size_t j = 0; j < body.size(); ++j)
            body[j] = char((j % 64 < 48) ? 'A' + (j % 7) : char(rng()));
        v.emplace_back(k, std::move(body));
    }
    return v;
}

}  // namespace

TEST(KernelPack, RoundTripsEveryCubin) {
    const std::string path = temp_path("rt.pack");
    auto cubins = fake_cubins(40);
    write_kernel_pack(path, 90, cubins);
    std::string err;
    auto pack = KernelPack::open(path, &err);
    ASSERT_TRUE(pack) << err;
    EXPECT_EQ(pack->arch(), 90);
    EXPECT_EQ(pack->size(), cubins.size());
    for (const auto& [key, body] : cubins) {
        std::optional<std::string> got = pack->find(key);
        ASSERT_TRUE(got);
        EXPECT_EQ(*got, body);
    }
    EXPECT_FALSE(pack->find(Hash128{1, 2}));
    std::size_t total = 0;
    for (const auto& c : cubins)
        total += c.second.size();
#ifdef EMBER_HAVE_ZLIB
    EXPECT_LT(std::filesystem::file_size(path), total / 2);  // compressed
#endif
    std::filesystem::remove(path);
}

TEST(KernelPack, RefusesDamagedFiles) {
    const std::string path = temp_path("bad.pack");
    std::string err;
    EXPECT_FALSE(KernelPack::open(path + ".absent", &err));
    EXPECT_NE(err.find("cannot open"), std::string::npos);
    auto cubins = fake_cubins(3);
    write_kernel_pack(path, 80, cubins);
    std::filesystem::resize_file(path, 30);  // truncated inside the index
    EXPECT_FALSE(KernelPack::open(path, &err));
    FILE* f = std::fopen(path.c_str(), "wb");
    std::fputs("not a pack at all, but long enough to have a header", f);
    std::fclose(f);
    EXPECT_FALSE(KernelPack::open(path, &err));
    std::filesystem::remove(path);
}

TEST(KernelPack, ShipKeyIgnoresTheIncludeDirectory) {
    Program p{"k.cu", "extern \"C\" __global__ void k() {}", {{"a.h", "int a;"}}};
    ::setenv("EMBER_CUDA_INCLUDE_DIR", "/somewhere/cccl", 1);
    const Hash128 a = ship_key(p, 90);
    ::setenv("EMBER_CUDA_INCLUDE_DIR", "/elsewhere/include", 1);
    const Hash128 b = ship_key(p, 90);
    ::unsetenv("EMBER_CUDA_INCLUDE_DIR");
    EXPECT_EQ(a, b);
    EXPECT_NE(ship_key(p, 90), ship_key(p, 80));
    p.headers[0].second = "int b;";
    EXPECT_NE(ship_key(p, 90), a);
}

// The shipped set: each program once, and every family whose first call should load machine code
// (maps, scalar maps, casts, reductions, rows, sort, scan, optimizer) in it.
TEST(KernelPack, CommonKernelsCoverTheFamiliesOnce) {
    const std::vector<KernelSource> all = common_kernels();
    std::set<std::string> names;
    for (const KernelSource& k : all)
        EXPECT_TRUE(names.insert(k.program.name).second) << k.program.name;
    auto has = [&](const std::string& part) {
        for (const std::string& n : names)
            if (n.find(part) != std::string::npos) return true;
        return false;
    };
    for (const char* part :
         {"ember_map_add_f32__f32_f32_f32s", "ember_map_where_",
          "ember_reduce_sum_f32_f32_f32__t32", "_r0_", "_pin", "ember_rows_softmax_",
          "ember_rows_ln_partials", "ember_sort_float32", "ember_scan_", "ember_compact_b8",
          "ember_optim", "ember_copy_f64_f32"})
        EXPECT_TRUE(has(part)) << part;
}
