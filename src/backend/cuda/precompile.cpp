// Ahead-of-time compilation of the common kernels into the on-disk cache, on all cores and
// without a GPU (NVRTC only): the programs are exactly those the backend builds at first use.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "backend/cuda/codegen.hpp"
#include "backend/cuda/codegen/reduce.hpp"
#include "backend/cuda/optim_step.hpp"
#include "backend/cuda/precompile.hpp"
#include "backend/cuda/rows.hpp"
#include "backend/cuda/scan.hpp"
#include "backend/cuda/sort.hpp"
#include "ember/error.hpp"
#include "ember/reducetable.hpp"

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

// Array-with-Python-scalar kernels (x * 3, 1 - x, x > 0: the scalar is a by-value argument of
// the compute type) of the ops such scalars usually meet, on the common dtypes.
void add_scalar_maps(std::vector<KernelSource>& out) {
    using ops::OpId;
    constexpr OpId scalar_ops[] = {
        OpId::add,       OpId::subtract, OpId::multiply,   OpId::divide,  OpId::floor_divide,
        OpId::remainder, OpId::pow,      OpId::maximum,    OpId::minimum, OpId::equal,
        OpId::not_equal, OpId::less,     OpId::less_equal, OpId::greater, OpId::greater_equal};
    for (OpId op : scalar_ops)
        for (DType t : {DType::int32, DType::int64, DType::float16, DType::bfloat16, DType::float32,
                        DType::float64}) {
            if (!has_loop(op, t)) continue;
            const ops::OpInfo& oi = ops::info(op);
            const bool half_in_f32 =
                (oi.loops & ops::bit(DType::float16)) && !(oi.flags & ops::F_EXACT_HALF);
            for (uint8_t mask : {1, 2}) {
                MapKernel k = natural_map_kernel(op, t);
                k.scalar_mask = mask;
                add_map(out, k);
                if (t != DType::float32 || !half_in_f32) continue;
                for (DType h : {DType::float16, DType::bfloat16}) {  // computed in float32
                    MapKernel kh = k;
                    kh.in[mask == 1 ? 1 : 0] = h;
                    if (kh.out == DType::float32) kh.out = h;
                    add_map(out, kh);
                }
            }
        }
}

// where(cond, x, y) with a Python scalar for x, y or both (relu's backward: where(m, g, 0)).
void add_scalar_wheres(std::vector<KernelSource>& out) {
    for (DType t : {DType::bool_, DType::int32, DType::int64, DType::float16, DType::bfloat16,
                    DType::float32, DType::float64}) {
        if (!has_loop(ops::OpId::where, t)) continue;
        for (uint8_t mask : {2, 4, 6}) {
            MapKernel k = natural_map_kernel(ops::OpId::where, t);
            k.scalar_mask = mask;
            add_map(out, k);
        }
    }
}

// The dtypes whose reductions, sorts and scatters ship (the rest compile on first use).
constexpr DType common_dtypes[] = {DType::bool_,     DType::int8,      DType::int32,
                                   DType::int64,     DType::uint8,     DType::float16,
                                   DType::bfloat16,  DType::float32,   DType::float64,
                                   DType::complex64, DType::complex128};
constexpr DType float_dtypes[] = {DType::float16, DType::bfloat16, DType::float32, DType::float64};

// The kernels run_reduce (cuda_backend.cpp) picks for one reduction over one or two kept dims
// and one reduced dim (whole arrays and single axes of contiguous arrays, in every branch of its
// choice: threads per output, vector loads, one or two passes).
void add_reduce(std::vector<KernelSource>& out, ops::ReduceOp op, DType in, DType res) {
    ReduceKernel k;
    k.op = op;
    k.in = in;
    k.out = res;
    k.acc = ops::reduce_acc_dtype(op, in, res);
    k.nr = 1;
    auto push = [&](const ReduceKernel& r) {
        out.push_back({reduce_program(r), reduce_kernel_name(r)});
    };
    const int V = itemsize(in) < 16 ? int(16 / itemsize(in)) : 1;
    // No reduced dim left after collapsing (a reduction over length-1 axes): one pass, a thread
    // per output.
    for (int nk = 0; nk <= 2; ++nk) {
        ReduceKernel z = k;
        z.nk = nk;
        z.nr = 0;
        z.tpo = 1;
        push(z);
    }
    for (int nk = 0; nk <= 2; ++nk) {
        k.nk = nk;
        for (int tpo : {1, 32, 256}) {
            if (tpo > 1 && nk == 2) continue;
            k.tpo = tpo;
            for (int vec : {1, V}) {
                if (vec > 1 && (tpo == 1 || V == 1)) continue;
                k.vec = vec;
                for (bool partial : {false, true}) {
                    k.partial_out = partial;
                    k.partial_in = false;
                    push(k);
                }
            }
            // The second pass over the partial accumulators.
            ReduceKernel f = k;
            f.vec = 1;
            f.partial_out = false;
            f.partial_in = true;
            push(f);
        }
    }
}

void add_reductions(std::vector<KernelSource>& out) {
    for (int o = 0; o < ops::num_reductions; ++o) {
        const ops::ReduceOp op = ops::ReduceOp(o);
        for (DType t : common_dtypes) {
            add_reduce(out, op, t, ops::reduce_result_dtype(op, t, std::nullopt));
            // mean: integer and bool inputs sum into float64, 16-bit floats into float32.
            if (op != ops::ReduceOp::sum) continue;
            if (kind(t) != Kind::floating && kind(t) != Kind::complex)
                add_reduce(out, op, t, DType::float64);
            else if (t == DType::float16 || t == DType::bfloat16)
                add_reduce(out, op, t, DType::float32);
        }
    }
}

// The row kernels (softmax, cross-entropy, layer norm and their backwards) of every row length,
// as rows_kernel_for picks them, aligned or not.
void add_rows(std::vector<KernelSource>& out) {
    std::vector<std::string> seen;
    auto add = [&](const RowsKernel& k) {
        std::string nm = rows_kernel_name(k);
        for (const std::string& s : seen)
            if (s == nm) return;
        seen.push_back(nm);
        out.push_back({rows_program(k), std::move(nm)});
    };
    for (DType t : float_dtypes) {
        backend::RowsCall c;
        c.dtype = t;
        for (int op = 0; op <= int(backend::RowsOp::layer_norm_backward); ++op)
            for (uintptr_t base : {uintptr_t(256), uintptr_t(258)})
                for (int64_t n = 1; n <= 4097; ++n) {
                    c.n = n;
                    c.x = c.y = c.dy = reinterpret_cast<const void*>(base);
                    c.out = reinterpret_cast<void*>(base);
                    add(rows_kernel_for(c, op));
                }
        RowsKernel p;
        p.op = rows_ln_partials;
        p.dtype = t;
        add(p);
    }
}

// Sorts and searches, scans, compaction, scatters, gathers, integer matmul, the optimizer step:
// one program per dtype or item size, named after its file.
void add_other_families(std::vector<KernelSource>& out) {
    auto add = [&](Program p) {
        std::string nm = p.name.substr(0, p.name.size() - 3);  // without ".cu"
        out.push_back({std::move(p), std::move(nm)});
    };
    for (DType t : common_dtypes) {
        add(sort_program(t));
        add(scatter_add_program(t));
    }
    for (DType t : {DType::int64, DType::float32, DType::float64})
        for (backend::ScanOp op : {backend::ScanOp::sum, backend::ScanOp::prod})
            add(scan_program(op, t));
    for (int isz : {1, 2, 4, 8, 16}) {
        add(compact_program(isz));
        add(scatter_program(isz));
        add(gather_program(isz));
    }
    for (DType t : {DType::bool_, DType::int32, DType::int64})
        add(int_matmul_program(t));
    for (DType t : float_dtypes)
        add(optimizer_step_program(t));
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
    add_scalar_maps(out);
    add_scalar_wheres(out);
    add_reductions(out);
    add_rows(out);
    add_other_families(out);
    // Each program once (the families above never repeat one; this keeps it so).
    std::sort(out.begin(), out.end(), [](const KernelSource& a, const KernelSource& b) {
        return a.program.name < b.program.name;
    });
    out.erase(std::unique(out.begin(), out.end(),
                          [](const KernelSource& a, const KernelSource& b) {
                              return a.program.name == b.program.name;
                          }),
              out.end());
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
