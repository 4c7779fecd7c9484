// Ahead-of-time compilation of the common kernels into the on-disk cache, on all cores and
// without a GPU (NVRTC only): the programs are exactly those the backend builds at first use.
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "backend/cuda/codegen.hpp"
#include "backend/cuda/precompile.hpp"
#include "ember/error.hpp"

namespace ember::gpu {

namespace {

bool has_loop(ops::OpId op, DType t) {
    const ops::OpInfo& oi = ops::info(op);
    if (!(oi.loops & ops::bit(t))) return false;
    const bool half = t == DType::float16 || t == DType::bfloat16;
    return !half || (oi.flags & ops::F_EXACT_HALF);
}

void add_map(std::vector<KernelSource>& out, const MapKernel& base) {
    for (const MapKernel& k : layout_variants(base))
        out.push_back({map_program({&k, 1}), kernel_name(k)});
}

void add_copy(std::vector<KernelSource>& out, const CopyKernel& base) {
    for (const CopyKernel& k : layout_variants(base))
        out.push_back({copy_program(k), copy_kernel_name(k)});
}

}  // namespace

std::vector<KernelSource> common_kernels() {
    std::vector<KernelSource> out;
    for (int o = 0; o < ops::num_ops; ++o) {
        const ops::OpId op = ops::OpId(o);
        const ops::OpInfo& oi = ops::info(op);
        for (int t = 0; t < num_dtypes; ++t) {
            if (!has_loop(op, DType(t))) continue;
            add_map(out, natural_map_kernel(op, DType(t)));
        }
        // float16/bfloat16 operands of ops computed in float32 (the core's compute type).
        if ((oi.loops & ops::bit(DType::float16)) && !(oi.flags & ops::F_EXACT_HALF) &&
            has_loop(op, DType::float32)) {
            for (DType h : {DType::float16, DType::bfloat16}) {
                MapKernel k = natural_map_kernel(op, DType::float32);
                for (int i = 0; i < oi.arity; ++i)
                    k.in[i] = h;
                if (k.out == DType::float32) k.out = h;
                add_map(out, k);
            }
        }
    }
    // Casts between every pair of dtypes; same-dtype copies and fills move bits.
    for (int a = 0; a < num_dtypes; ++a)
        for (int b = 0; b < num_dtypes; ++b)
            if (a != b) add_copy(out, CopyKernel{DType(a), DType(b)});
    for (DType t : {DType::uint8, DType::uint16, DType::uint32, DType::uint64, DType::complex128}) {
        add_copy(out, CopyKernel{t, t});
        CopyKernel f{t, t};
        f.scalar = true;
        add_copy(out, f);
    }
    for (int t = 0; t < num_dtypes; ++t)
        out.push_back({iota_program(DType(t), false), iota_kernel_name(DType(t), false)});
    // Random draws: raw words, and uniform/normal floats (the rest compile on first use).
    for (DType t : {DType::uint32, DType::uint64})
        out.push_back(
            {random_program(RandomFamily::bits, t), random_kernel_name(RandomFamily::bits, t)});
    for (DType t : {DType::float16, DType::bfloat16, DType::float32, DType::float64})
        out.push_back(
            {random_program(RandomFamily::real, t), random_kernel_name(RandomFamily::real, t)});
    out.push_back({random_program(RandomFamily::streamed_int, DType::int64),
                   random_kernel_name(RandomFamily::streamed_int, DType::int64)});
    return out;
}

PrecompileResult precompile_into(const DiskCache& cache, int arch, int threads,
                                 const std::vector<KernelSource>& kernels) {
    if (!cache.enabled())
        throw ValueError(
            "ember.cuda.precompile: the disk kernel cache is off (EMBER_DISK_CACHE=0)");
    const NvrtcApi* nv = nvrtc();
    if (!nv) throw Error("ember.cuda.precompile: " + nvrtc_unavailable_reason());
    if (arch < 30 || arch > 1000)
        throw ValueError("ember.cuda.precompile: arch must be like 90 (sm_90), got " +
                         std::to_string(arch));
    if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
    const std::vector<std::string> options = compile_options(arch);
    std::atomic<size_t> next{0};
    std::atomic<uint64_t> compiled{0}, cached{0}, failed{0};
    std::string first_error;
    std::mutex err_mu;
    const auto t0 = std::chrono::steady_clock::now();
    auto work = [&] {
        for (size_t i = next++; i < kernels.size(); i = next++) {
            const Program& p = kernels[i].program;
            const Hash128 key = kernel_cache_key(p, options, nv->major, nv->minor, arch);
            if (cache.load(key)) {
                ++cached;
                continue;
            }
            try {
                cache.store(key, compile_cubin(p, arch));
                ++compiled;
            } catch (const std::exception& e) {
                ++failed;
                std::lock_guard lk(err_mu);
                if (first_error.empty()) first_error = kernels[i].name + ": " + e.what();
            }
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t)
        pool.emplace_back(work);
    work();
    for (std::thread& th : pool)
        th.join();
    if (failed)
        throw CompileError("ember.cuda.precompile: " + std::to_string(failed.load()) +
                           " kernels failed to compile; the first: " + first_error);
    PrecompileResult r;
    r.kernels = kernels.size();
    r.compiled = compiled;
    r.cached = cached;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

}  // namespace ember::gpu
