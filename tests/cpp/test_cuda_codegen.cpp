// CUDA backend code generation, checked without a GPU: every op-table kernel compiles with NVRTC
// for sm_90, the generated source of a fixed kernel matches its snapshot, and compile errors show
// the numbered source and the log.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <vector>

#include <unistd.h>

#include "backend/cuda/codegen.hpp"
#include "backend/cuda/disk_cache.hpp"
#include "backend/cuda/loader.hpp"
#include "backend/cuda/nvrtc.hpp"
#include "backend/cuda/optim_step.hpp"
#include "backend/cuda/precompile.hpp"
#include "backend/cuda/rows.hpp"
#include "backend/cuda/runtime.hpp"
#include "backend/cuda/scan.hpp"

using namespace ember;
using gpu::MapKernel;
using gpu::MapLayout;

namespace {

constexpr int arch = 90;  // H200

// The loop dtypes the CPU backend instantiates for an op (16-bit floats only when exact).
std::vector<DType> cpu_loop_dtypes(ops::OpId op) {
    std::vector<DType> out;
    const ops::OpInfo& oi = ops::info(op);
    for (int t = 0; t < num_dtypes; ++t) {
        const DType d = DType(t);
        const bool half = d == DType::float16 || d == DType::bfloat16;
        if ((oi.loops & ops::bit(d)) && (!half || (oi.flags & ops::F_EXACT_HALF))) out.push_back(d);
    }
    return out;
}

// The source tree, from CMake (not __FILE__, which a compiler cache may make relative).
const std::filesystem::path source_root = EMBER_SOURCE_DIR;

std::filesystem::path snapshot_dir() { return source_root / "tests" / "cpp" / "snapshots"; }

std::string read_file(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

#define SKIP_WITHOUT_NVRTC()                                                \
    do {                                                                    \
        if (!gpu::nvrtc()) GTEST_SKIP() << gpu::nvrtc_unavailable_reason(); \
    } while (0)

}  // namespace

TEST(CudaLoader, FailsWithAReasonNotACrash) {
    // On a machine without a GPU driver this is null with a one-line reason; with one it works.
    const gpu::DriverApi* d = gpu::driver();
    if (!d) {
        const std::string& r = gpu::driver_unavailable_reason();
        EXPECT_FALSE(r.empty());
        EXPECT_EQ(r.find('\n'), std::string::npos) << r;
    } else {
        EXPECT_GT(d->version, 0);
    }
    if (!gpu::nvrtc()) {
        EXPECT_FALSE(gpu::nvrtc_unavailable_reason().empty());
        EXPECT_EQ(gpu::nvrtc_unavailable_reason().find('\n'), std::string::npos);
    } else {
        EXPECT_GE(gpu::nvrtc()->major, 11);
    }
}

TEST(CudaCodegen, NamesAreUniqueAndStable) {
    MapKernel k = gpu::natural_map_kernel(ops::OpId::add, DType::float32);
    EXPECT_EQ(gpu::kernel_name(k), "ember_map_add_f32__f32_f32_f32__contig_i32");
    k.in[0] = DType::float16;
    k.out = DType::bfloat16;
    k.scalar_mask = 2;
    k.layout = MapLayout::strided;
    k.ndim = 3;
    k.index64 = true;
    EXPECT_EQ(gpu::kernel_name(k), "ember_map_add_f32__bf16_f16_f32s__strided3_i64");
}

TEST(CudaCodegen, RejectsKernelsWithoutALoop) {
    // sqrt has no integer loop, and float16 loops compute in float32 unless exact.
    EXPECT_THROW(gpu::kernel_text(gpu::natural_map_kernel(ops::OpId::sqrt, DType::int32)),
                 ValueError);
    EXPECT_THROW(gpu::kernel_text(gpu::natural_map_kernel(ops::OpId::add, DType::float16)),
                 ValueError);
    EXPECT_THROW(gpu::kernel_text(gpu::natural_map_kernel(ops::OpId::add, DType::float32,
                                                          MapLayout::strided, 9)),
                 ValueError);
}

TEST(CudaCodegen, EmbedsTheHostScalarHeader) {
    const std::filesystem::path p = source_root / "src" / "ops" / "scalar.hpp";
    EXPECT_EQ(std::string(gpu::scalar_header_text()), read_file(p));
}

// The device prelude holds src/ops/convert.hpp's text, so host and device convert the same way.
TEST(CudaCodegen, EmbedsTheHostConvertHeader) {
    const std::filesystem::path p = source_root / "src" / "ops" / "convert.hpp";
    const std::string prelude(gpu::device_prelude_text());
    EXPECT_NE(prelude.find(read_file(p)), std::string::npos);
    EXPECT_EQ(prelude.find("#include \"ember/ops/convert.hpp\""), std::string::npos);
}

// NVRTC gets random.hpp with the ziggurat tables' block of ziggurat_tables.hpp in place of its
// include (no header of that name is handed over).
TEST(CudaCodegen, EmbedsTheZigguratTablesInTheRandomHeader) {
    const std::filesystem::path ops = source_root / "src" / "ops";
    const std::string tables = read_file(ops / "ziggurat_tables.hpp");
    const size_t b = tables.find("// BEGIN ziggurat tables");
    const size_t e = tables.find("// END ziggurat tables\n");
    ASSERT_NE(b, std::string::npos);
    ASSERT_NE(e, std::string::npos);
    const std::string block = tables.substr(b, e + 23 - b);
    const gpu::Program p = gpu::random_program(gpu::RandomFamily::real, DType::float32);
    std::string random;
    for (const auto& [name, text] : p.headers)
        if (name == "ember/ops/random.hpp") random = text;
    EXPECT_NE(random.find(block), std::string::npos);
    EXPECT_EQ(random.find("ziggurat_tables.hpp\""), std::string::npos);
}

// (b) The generated source of add float32 (contiguous) is checked in; regenerate it with
// EMBER_UPDATE_SNAPSHOTS=1 after an intended change and review the diff.
TEST(CudaCodegen, SnapshotAddFloat32Contiguous) {
    const MapKernel k = gpu::natural_map_kernel(ops::OpId::add, DType::float32);
    const std::string src = gpu::map_program({&k, 1}).source;
    const std::filesystem::path p = snapshot_dir() / "map_add_f32_contig.cu";
    if (const char* u = std::getenv("EMBER_UPDATE_SNAPSHOTS"); u && std::string(u) == "1") {
        std::ofstream(p, std::ios::binary) << src;
    }
    ASSERT_TRUE(std::filesystem::exists(p)) << p;
    EXPECT_EQ(src, read_file(p)) << "generated source:\n" << src;
}

// More families, checked in the same way: a vectorized map with float16 storage, a strided cast,
// arange, and the two passes of a segmented sum.
TEST(CudaCodegen, SnapshotsOfTheOtherFamilies) {
    MapKernel m = gpu::natural_map_kernel(ops::OpId::multiply, DType::float32);
    m.in[0] = m.in[1] = m.out = DType::float16;
    m.vec = 8;
    gpu::CopyKernel c;
    c.out = DType::float32;
    c.in = DType::int64;
    c.layout = MapLayout::strided;
    c.ndim = 2;
    gpu::ReduceKernel r;
    r.op = ops::ReduceOp::sum;
    r.in = r.acc = r.out = DType::float32;
    r.tpo = 256;
    r.nk = 0;
    r.nr = 1;
    r.vec = 4;
    r.partial_out = true;
    gpu::ReduceKernel f = r;
    f.vec = 1;
    f.partial_out = false;
    f.partial_in = true;
    const std::pair<const char*, std::string> cases[] = {
        {"map_multiply_f16_contig_v8.cu", gpu::map_program({&m, 1}).source},
        {"copy_f32_i64_strided2.cu", gpu::copy_program(c).source},
        {"iota_f64.cu", gpu::iota_program(DType::float64, false).source},
        {"reduce_sum_f32_pass1.cu", gpu::reduce_program(r).source},
        {"reduce_sum_f32_pass2.cu", gpu::reduce_program(f).source},
        {"random_real_f32.cu", gpu::random_program(gpu::RandomFamily::real, DType::float32).source},
    };
    const char* u = std::getenv("EMBER_UPDATE_SNAPSHOTS");
    for (const auto& [file, src] : cases) {
        const std::filesystem::path p = snapshot_dir() / file;
        if (u && std::string(u) == "1") std::ofstream(p, std::ios::binary) << src;
        ASSERT_TRUE(std::filesystem::exists(p)) << p;
        EXPECT_EQ(src, read_file(p)) << file << ":\n" << src;
    }
}

// The families whose device code is pasted from their own .cuh files: a row kernel (every row op
// shares one text, so one variant covers it), the scan, compaction and scatter programs, and the
// fused optimizer step with float16 storage.
TEST(CudaCodegen, SnapshotsOfRowsScanAndOptimizerStep) {
    const gpu::RowsKernel rk{0, DType::float32, 32, 4, 4};  // softmax, a warp per row
    const std::pair<const char*, std::string> cases[] = {
        {"rows_softmax_f32_t32_k4_v4.cu", gpu::rows_program(rk).source},
        {"scan_sum_f32.cu", gpu::scan_program(backend::ScanOp::sum, DType::float32).source},
        {"compact_b8.cu", gpu::compact_program(8).source},
        {"scatter_b4.cu", gpu::scatter_program(4).source},
        {"optim_step_f16.cu", gpu::optimizer_step_program(DType::float16).source},
    };
    const char* u = std::getenv("EMBER_UPDATE_SNAPSHOTS");
    for (const auto& [file, src] : cases) {
        const std::filesystem::path p = snapshot_dir() / file;
        if (u && std::string(u) == "1") std::ofstream(p, std::ios::binary) << src;
        ASSERT_TRUE(std::filesystem::exists(p)) << p;
        EXPECT_EQ(src, read_file(p)) << file << ":\n" << src;
    }
}

// The optimizer step's program compiles for every parameter dtype.
TEST(CudaCodegen, OptimizerStepCompilesForSm90) {
    SKIP_WITHOUT_NVRTC();
    for (DType t : {DType::float16, DType::bfloat16, DType::float32, DType::float64}) {
        const gpu::Program p = gpu::optimizer_step_program(t);
        try {
            EXPECT_EQ(gpu::compile_cubin(p, arch).compare(1, 3, "ELF"), 0) << p.name;
        } catch (const std::exception& e) {
            ADD_FAILURE() << p.name << ": " << std::string(e.what()).substr(0, 4000);
        }
    }
    EXPECT_THROW(gpu::optimizer_step_program(DType::int32), TypeError);
}

TEST(CudaCodegen, SnapshotStridedIsReadable) {
    MapKernel k = gpu::natural_map_kernel(ops::OpId::clip, DType::float64, MapLayout::strided, 3);
    k.scalar_mask = 4;
    const std::string t = gpu::kernel_text(k);
    EXPECT_NE(t.find("const ember::dev::StridedGeometry g"), std::string::npos) << t;
    EXPECT_NE(t.find("const double in2,"), std::string::npos) << t;
    EXPECT_NE(t.find("ember::ops::op_clip::apply(a0, a1, a2)"), std::string::npos) << t;
    EXPECT_EQ(t.find("o3"), std::string::npos) << "a scalar operand needs no offset\n" << t;
}

// (a) Every op-table row, for each loop dtype the CPU has, compiles for sm_90: contiguous and
// strided, 32- and 64-bit indices, plus float16/bfloat16 storage around float32 compute and a
// scalar operand. One program per compute dtype, compiled in parallel.
TEST(CudaCodegen, EveryOpCompilesForSm90) {
    SKIP_WITHOUT_NVRTC();
    std::vector<std::vector<MapKernel>> programs(num_dtypes);
    int count = 0;
    for (int o = 0; o < ops::num_ops; ++o) {
        const ops::OpId op = ops::OpId(o);
        const int arity = ops::info(op).arity;
        for (DType t : cpu_loop_dtypes(op)) {
            auto& v = programs[int(t)];
            v.push_back(gpu::natural_map_kernel(op, t, MapLayout::contiguous, 1, false));
            v.push_back(gpu::natural_map_kernel(op, t, MapLayout::strided, 3, true));
            if (t == DType::float32 && (ops::info(op).loops & ops::bit(DType::float16))) {
                for (DType h : {DType::float16, DType::bfloat16}) {
                    MapKernel k = gpu::natural_map_kernel(op, t, MapLayout::contiguous, 1, true);
                    for (DType& in : k.in)
                        in = h;
                    if (k.out == DType::float32) k.out = h;
                    v.push_back(k);
                }
            }
            if (arity >= 2) {
                MapKernel k = gpu::natural_map_kernel(op, t, MapLayout::strided, 2, false);
                k.scalar_mask = 2;
                v.push_back(k);
            }
        }
    }
    // Casting storage types on load/store: every dtype into and out of a float64 add.
    for (int t = 0; t < num_dtypes; ++t) {
        if (DType(t) == DType::float64) continue;  // already there
        MapKernel k = gpu::natural_map_kernel(ops::OpId::add, DType::float64);
        k.in[0] = DType(t);
        k.out = DType(t);
        programs[int(DType::float64)].push_back(k);
    }
    for (auto& v : programs)
        count += int(v.size());

    std::atomic<int> next{0};
    std::mutex m;
    std::vector<std::string> failures;
    const auto t0 = std::chrono::steady_clock::now();
    auto worker = [&] {
        for (int i = next++; i < num_dtypes; i = next++) {
            if (programs[i].empty()) continue;
            try {
                const std::string cubin = gpu::compile_cubin(gpu::map_program(programs[i]), arch);
                if (cubin.size() < 4 || cubin.compare(1, 3, "ELF") != 0)
                    throw Error("not an ELF cubin");
            } catch (const std::exception& e) {
                std::lock_guard lk(m);
                failures.push_back(std::string(name(DType(i))) + ": " + e.what());
            }
        }
    };
    const unsigned nthreads = std::max(2u, std::thread::hardware_concurrency());
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < std::min<unsigned>(nthreads, num_dtypes); ++i)
        threads.emplace_back(worker);
    for (auto& th : threads)
        th.join();
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("compiled %d map kernels in %.1f s\n", count, secs);
    for (const auto& f : failures)
        ADD_FAILURE() << f;
}

// Copy/cast, fill, arange and reduction kernels compile for sm_90 over every dtype (and every
// dtype pair for casts), in the layouts and modes the backend launches.
TEST(CudaCodegen, OtherFamiliesCompileForSm90) {
    SKIP_WITHOUT_NVRTC();
    std::vector<gpu::Program> programs;
    auto add = [&](gpu::Program p) {
        if (!programs.empty() && programs.back().source.size() < 400000 &&
            programs.back().headers.size() == p.headers.size() &&
            programs.back().headers.back().first == p.headers.back().first &&
            (programs.back().source.find("EMBER_DEVICE_COMPLEX") == std::string::npos) ==
                (p.source.find("EMBER_DEVICE_COMPLEX") == std::string::npos)) {
            programs.back().source += p.source.substr(p.source.find("\n\n"));
        } else {
            programs.push_back(std::move(p));
        }
    };
    int count = 0;
    for (int a = 0; a < num_dtypes; ++a) {
        for (int b = 0; b < num_dtypes; ++b) {
            gpu::CopyKernel k;
            k.out = DType(a);
            k.in = DType(b);
            k.vec = int(16 / std::max(itemsize(k.out), itemsize(k.in)));
            add(gpu::copy_program(k));
            k.vec = 1;
            k.layout = MapLayout::strided;
            k.ndim = 2;
            add(gpu::copy_program(k));
            count += 2;
        }
        gpu::CopyKernel f;
        f.out = f.in = DType(a);
        f.scalar = true;
        f.layout = MapLayout::strided;
        f.ndim = 3;
        f.index64 = true;
        add(gpu::copy_program(f));
        add(gpu::iota_program(DType(a), false));
        count += 2;
    }
    for (int t = 0; t < num_dtypes; ++t) {
        const DType d = DType(t);
        const Kind kd = kind(d);
        using gpu::RandomFamily;
        if (d == DType::uint32 || d == DType::uint64)
            add(gpu::random_program(RandomFamily::bits, d));
        if (kd == Kind::floating) {
            add(gpu::random_program(RandomFamily::real, d));
            add(gpu::random_program(RandomFamily::streamed_real, d));
        }
        if (kd != Kind::floating && kd != Kind::complex) {
            add(gpu::random_program(RandomFamily::streamed_int, d));
            add(gpu::int_matmul_program(d));
        }
        ++count;
    }
    for (int isz : {1, 2, 4, 8, 16}) {
        add(gpu::gather_program(isz));
        ++count;
    }
    // Every row of the reduction table, with the accumulator the front-end picks; rows taking
    // dtype= with a result in the input's own dtype (the narrowing finish), others with their
    // result rule.
    for (int t = 0; t < num_dtypes; ++t) {
        const DType in = DType(t);
        struct Case {
            ops::ReduceOp op;
            DType acc, out;
        };
        std::vector<Case> cases;
        for (int i = 0; i < ops::num_reductions; ++i) {
            const auto op = ops::ReduceOp(i);
            const DType out = (ops::reduce_infos[i].flags & ops::R_DTYPE)
                                  ? in
                                  : ops::reduce_result_dtype(op, in, std::nullopt);
            cases.push_back({op, ops::reduce_acc_dtype(op, in, out), out});
        }
        for (const Case& c : cases) {
            gpu::ReduceKernel k;
            k.op = c.op;
            k.in = in;
            k.acc = c.acc;
            k.out = c.out;
            k.tpo = 256;
            k.nk = 1;
            k.nr = 1;
            k.vec = int(16 / itemsize(in));
            if (k.vec == 1) k.vec = 1;
            k.partial_out = true;
            add(gpu::reduce_program(k));
            gpu::ReduceKernel f = k;
            f.vec = 1;
            f.partial_out = false;
            f.partial_in = true;
            f.tpo = 32;
            f.nk = 2;
            add(gpu::reduce_program(f));
            gpu::ReduceKernel o = k;
            o.vec = 1;
            o.tpo = 1;
            o.nk = 3;
            o.nr = 2;
            o.partial_out = false;
            o.index64 = true;
            add(gpu::reduce_program(o));
            count += 3;
        }
    }
    std::atomic<size_t> next{0};
    std::mutex m;
    std::vector<std::string> failures;
    auto worker = [&] {
        for (size_t i = next++; i < programs.size(); i = next++) {
            try {
                const std::string cubin = gpu::compile_cubin(programs[i], arch);
                if (cubin.size() < 4 || cubin.compare(1, 3, "ELF") != 0)
                    throw Error("not an ELF cubin");
            } catch (const std::exception& e) {
                std::lock_guard lk(m);
                failures.push_back(e.what());
            }
        }
    };
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < std::max(2u, std::thread::hardware_concurrency()); ++i)
        threads.emplace_back(worker);
    for (auto& th : threads)
        th.join();
    std::printf("compiled %d copy/fill/iota/random/matmul/gather/reduce kernels in %zu programs\n",
                count, programs.size());
    for (const auto& f : failures)
        ADD_FAILURE() << f.substr(0, 300) << "\n...\n"
                      << f.substr(f.find("--- NVRTC log ---")).substr(0, 6000);
}

// (c) A compile error names the program and shows the numbered source and NVRTC's log.
TEST(CudaCodegen, CompileErrorShowsNumberedSourceAndLog) {
    SKIP_WITHOUT_NVRTC();
    gpu::Program p;
    p.name = "broken.cu";
    p.source =
        "// line one\nextern \"C\" __global__ void k(float* x) {\n    x[0] = undefined_name;\n}\n";
    try {
        gpu::compile_cubin(p, arch);
        FAIL() << "expected a CompileError";
    } catch (const gpu::CompileError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("broken.cu"), std::string::npos) << msg;
        EXPECT_NE(msg.find("    3      x[0] = undefined_name;"), std::string::npos) << msg;
        EXPECT_NE(msg.find("    1  // line one"), std::string::npos) << msg;
        EXPECT_NE(msg.find("--- NVRTC log ---"), std::string::npos) << msg;
        EXPECT_NE(msg.find("undefined_name"), msg.rfind("undefined_name")) << msg;
        EXPECT_NE(msg.find("identifier \"undefined_name\" is undefined"), std::string::npos) << msg;
    }
}

TEST(CudaCodegen, NumberLines) {
    EXPECT_EQ(gpu::number_lines("a\nb"), "    1  a\n    2  b\n");
    EXPECT_EQ(gpu::number_lines(""), "");
}

// The on-disk kernel cache, without a GPU: keys, round trips, corruption, concurrent writers.
TEST(KernelCache, KeyCoversEverythingThatDeterminesTheCubin) {
    gpu::Program p;
    p.name = "k.cu";
    p.source = "extern \"C\" __global__ void k() {}";
    p.headers = {{"a.h", "int a;"}};
    const std::vector<std::string> o = {"-arch=sm_90", "-std=c++17"};
    const gpu::Hash128 base = gpu::kernel_cache_key(p, o, 13, 0, 90);
    EXPECT_EQ(base, gpu::kernel_cache_key(p, o, 13, 0, 90));
    EXPECT_EQ(base.hex().size(), 32u);
    gpu::Program q = p;
    q.source += " ";
    EXPECT_NE(base, gpu::kernel_cache_key(q, o, 13, 0, 90));
    q = p;
    q.headers[0].second = "int b;";
    EXPECT_NE(base, gpu::kernel_cache_key(q, o, 13, 0, 90));
    EXPECT_NE(base, gpu::kernel_cache_key(p, {"-arch=sm_90"}, 13, 0, 90));
    EXPECT_NE(base, gpu::kernel_cache_key(p, o, 13, 1, 90));
    EXPECT_NE(base, gpu::kernel_cache_key(p, o, 13, 0, 100));
    // Length-prefixed parts: moving text between parts changes the key.
    q = p;
    q.headers = {{"a.hi", "nt a;"}};
    EXPECT_NE(base, gpu::kernel_cache_key(q, o, 13, 0, 90));
}

TEST(KernelCache, StoresLoadsAndRejectsCorruptEntries) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("ember-kcache-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    const gpu::DiskCache cache((dir / "nested").string());
    gpu::Hash128 key{1, 2};
    EXPECT_FALSE(cache.load(key).has_value());
    std::string cubin(10000, '\0');
    for (size_t i = 0; i < cubin.size(); ++i)
        cubin[i] = char(i * 7);
    cache.store(key, cubin);
    ASSERT_EQ(cache.load(key).value(), cubin);
    // Truncated: rejected, removed, then absent.
    const std::string file = cache.path(key);
    std::filesystem::resize_file(file, std::filesystem::file_size(file) / 2);
    bool rejected = false;
    EXPECT_FALSE(cache.load(key, &rejected).has_value());
    EXPECT_TRUE(rejected);
    EXPECT_FALSE(std::filesystem::exists(file));
    // A flipped byte, and an entry stored under another key's name, are rejected too.
    cache.store(key, cubin);
    {
        std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(-3, std::ios::end);
        f.put('x');
    }
    rejected = false;
    EXPECT_FALSE(cache.load(key, &rejected).has_value());
    EXPECT_TRUE(rejected);
    cache.store(key, cubin);
    const gpu::Hash128 other{3, 4};
    std::filesystem::rename(file, cache.path(other));
    EXPECT_FALSE(cache.load(other).has_value());
    // Many writers of the same entry at once: readers see a whole entry, no temporaries remain.
    std::vector<std::thread> writers;
    for (int t = 0; t < 8; ++t)
        writers.emplace_back([&] {
            for (int i = 0; i < 20; ++i) {
                cache.store(key, cubin);
                auto got = cache.load(key);
                if (got) EXPECT_EQ(*got, cubin);
            }
        });
    for (auto& w : writers)
        w.join();
    EXPECT_EQ(cache.load(key).value(), cubin);
    for (const auto& e : std::filesystem::directory_iterator(dir / "nested"))
        EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
    const gpu::DiskCache off("");
    EXPECT_FALSE(off.enabled());
    off.store(key, cubin);
    EXPECT_FALSE(off.load(key).has_value());
    std::filesystem::remove_all(dir);
}

TEST(KernelCache, DefaultDirectoryFollowsTheEnvironment) {
    setenv("EMBER_CACHE_DIR", "/some/where", 1);
    EXPECT_EQ(gpu::default_kernel_cache_dir(), "/some/where");
    setenv("EMBER_DISK_CACHE", "0", 1);
    EXPECT_EQ(gpu::default_kernel_cache_dir(), "");
    unsetenv("EMBER_DISK_CACHE");
    unsetenv("EMBER_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    EXPECT_EQ(gpu::default_kernel_cache_dir(), "/xdg/ember/kernels");
    unsetenv("XDG_CACHE_HOME");
    if (const char* home = std::getenv("HOME"))
        EXPECT_EQ(gpu::default_kernel_cache_dir(), std::string(home) + "/.cache/ember/kernels");
}

// Precompilation writes exactly the entries the backend later looks up: same programs, same keys.
TEST(KernelCache, PrecompileCoversWhatTheBackendBuilds) {
    const std::vector<gpu::KernelSource> all = gpu::common_kernels();
    EXPECT_GT(all.size(), 4000u);
    // The backend's kernel for a + b on aligned contiguous float32 arrays, and for a cast.
    MapKernel k;
    k.op = ops::OpId::add;
    k.compute = k.out = k.in[0] = k.in[1] = DType::float32;
    k.vec = gpu::natural_vec(k);
    EXPECT_EQ(k.vec, 4);
    gpu::CopyKernel c{DType::float16, DType::int32};
    c.layout = MapLayout::strided;
    c.ndim = 2;
    const std::pair<std::string, std::string> wanted[] = {
        {gpu::kernel_name(k), gpu::map_program({&k, 1}).source},
        {gpu::copy_kernel_name(c), gpu::copy_program(c).source}};
    std::vector<gpu::KernelSource> some;
    for (const auto& [name, source] : wanted) {
        bool found = false;
        for (const gpu::KernelSource& s : all) {
            if (s.name != name) continue;
            found = true;
            EXPECT_EQ(s.program.source, source) << name;
            some.push_back(s);
        }
        EXPECT_TRUE(found) << name;
    }
    SKIP_WITHOUT_NVRTC();
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("ember-precompile-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    const gpu::DiskCache cache(dir.string());
    gpu::PrecompileResult r = gpu::precompile_into(cache, arch, 2, some);
    EXPECT_EQ(r.kernels, some.size());
    EXPECT_EQ(r.compiled, some.size());
    for (const gpu::KernelSource& s : some) {
        const gpu::Hash128 key = gpu::kernel_cache_key(
            s.program, gpu::compile_options(arch), gpu::nvrtc()->major, gpu::nvrtc()->minor, arch);
        EXPECT_TRUE(cache.load(key).has_value()) << s.name;
    }
    r = gpu::precompile_into(cache, arch, 2, some);  // a second run finds everything
    EXPECT_EQ(r.compiled, 0u);
    EXPECT_EQ(r.cached, some.size());
    EXPECT_THROW(gpu::precompile_into(gpu::DiskCache(""), arch, 1, some), ValueError);
    std::filesystem::remove_all(dir);
}

// The allocator's table of live blocks against std::unordered_map, through growth and many
// deletions inside probe runs (addresses share their low bits, as pool blocks do).
TEST(CudaLiveBlocks, MatchesAReferenceMap) {
    ember::gpu::LiveBlocks live;
    std::unordered_map<uintptr_t, size_t> ref;
    std::mt19937_64 rng(7);
    std::vector<uintptr_t> keys;
    for (int step = 0; step < 200000; ++step) {
        const bool add = keys.empty() || rng() % 3 != 0;
        if (add) {
            const uintptr_t p = (uintptr_t(rng() % 50000) + 1) << 9;
            const size_t bytes = size_t(rng() % 4096);
            if (!ref.count(p)) keys.push_back(p);
            ref[p] = bytes;
            live.insert(p, ember::gpu::Block{bytes, nullptr, 0});
        } else {
            const size_t k = size_t(rng() % keys.size());
            const uintptr_t p = keys[k];
            keys[k] = keys.back();
            keys.pop_back();
            ember::gpu::Block b{};
            ASSERT_TRUE(live.take(p, b));
            EXPECT_EQ(b.bytes, ref[p]);
            ref.erase(p);
            EXPECT_FALSE(live.take(p, b));
        }
        ASSERT_EQ(live.size(), ref.size());
    }
    size_t seen = 0;
    live.for_each([&](uintptr_t p, ember::gpu::Block& b) {
        ++seen;
        EXPECT_EQ(b.bytes, ref.at(p));
    });
    EXPECT_EQ(seen, ref.size());
}
