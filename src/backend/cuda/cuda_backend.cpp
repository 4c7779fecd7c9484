// The CUDA backend: lowers the core's Loop descriptors to generated kernels (map, copy/cast,
// fill, iota, reductions), device memory to the stream-ordered pool, and host transfers to
// pinned staging.
#include <algorithm>
#include <cstring>
#include <mutex>

#include "backend/backend.hpp"
#include "backend/cuda/codegen.hpp"
#include "backend/cuda/cublas.hpp"
#include "backend/cuda/cufft.hpp"
#include "backend/cuda/cusolver.hpp"
#include "backend/cuda/launch.hpp"
#include "backend/cuda/launch_small.hpp"
#include "backend/cuda/observe.hpp"
#include "backend/cuda/optim_step.hpp"
#include "backend/cuda/rows.hpp"
#include "backend/cuda/runtime.hpp"
#include "backend/cuda/scan.hpp"
#include "backend/cuda/sort.hpp"
#include "ember/debug.hpp"
#include "ember/error.hpp"
#include "support/thread_pool.hpp"

namespace ember::gpu {
namespace {

using backend::Loop;

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Largest |offset| + 1 an operand reaches, in elements.
int64_t offset_extent(const Loop& l, int k) {
    int64_t e = 0;
    for (int d = 0; d < l.ndim(); ++d)
        e += (l.shape[d] - 1) * (l.strides[k][d] < 0 ? -l.strides[k][d] : l.strides[k][d]);
    return e + 1;
}

bool is_contiguous(const Loop& l) {
    if (l.ndim() > 1) return false;
    for (int k = 0; k < l.nops; ++k)
        if (!l.scalar[k] && l.ndim() == 1 && l.strides[k][0] != 1) return false;
    return true;
}

bool needs_index64(const Loop& l) {
    if (l.numel() >= i32_limit) return true;
    for (int k = 0; k < l.nops; ++k)
        if (!l.scalar[k] && offset_extent(l, k) >= i32_limit) return true;
    return false;
}

// Storage type of the same size: same-dtype copies and fills move bits, whatever the dtype.
DType bits_type(DType t) {
    switch (itemsize(t)) {
        case 1:
            return DType::uint8;
        case 2:
            return DType::uint16;
        case 4:
            return DType::uint32;
        case 8:
            return DType::uint64;
        default:
            return DType::complex128;
    }
}

DType device_acc(DType t) {
    return (t == DType::float16 || t == DType::bfloat16) ? DType::float32 : t;
}

// Calls fn(sub) for each launch of an elementwise loop: loops deeper than the kernels' strided
// dims are split over their outer dims on the host.
template <class Fn>
void for_each_launch(const Loop& l, Fn&& fn) {
    if (l.ndim() <= max_strided_dims) {
        fn(l);
        return;
    }
    Loop sub = l;
    const int inner = max_strided_dims, outer = l.ndim() - inner;
    sub.shape.resize(size_t(inner));
    for (int k = 0; k < l.nops; ++k)
        sub.strides[k].resize(size_t(inner));
    int64_t idx[max_ndim] = {};
    int64_t count = 1;
    for (int d = inner; d < l.ndim(); ++d)
        count *= l.shape[d];
    for (int64_t c = 0; c < count; ++c) {
        for (int k = 0; k < l.nops; ++k) {
            if (l.scalar[k]) continue;
            int64_t off = 0;
            for (int j = 0; j < outer; ++j)
                off += idx[j] * l.strides[k][inner + j];
            sub.data[k] = l.data[k] + off * itemsize(l.dtype[k]);
        }
        fn(sub);
        for (int j = 0; j < outer; ++j) {
            if (++idx[j] < l.shape[inner + j]) break;
            idx[j] = 0;
        }
    }
}

KernelKey map_key(const MapKernel& k) {
    KeyBuilder kb;
    kb.put(fam_map, 4).put(uint64_t(k.op), 8).put(uint64_t(k.compute), 4);
    kb.put(uint64_t(k.out), 4).put(uint64_t(k.in[0]), 4).put(uint64_t(k.in[1]), 4);
    kb.put(uint64_t(k.in[2]), 4).put(k.scalar_mask, 3).put(k.layout == MapLayout::contiguous, 1);
    kb.put(uint64_t(k.ndim), 4).put(k.index64, 1).put(uint64_t(k.vec), 5);
    return kb.k;
}

KernelKey copy_key(const CopyKernel& k) {
    KeyBuilder kb;
    kb.put(fam_copy, 4).put(uint64_t(k.out), 4).put(uint64_t(k.in), 4).put(k.scalar, 1);
    kb.put(k.layout == MapLayout::contiguous, 1).put(uint64_t(k.ndim), 4).put(k.index64, 1);
    kb.put(uint64_t(k.vec), 5);
    return kb.k;
}

class CudaBackend final : public backend::Backend {
public:
    void* allocate(size_t nbytes, int dev) override { return gpu::allocate(device(dev), nbytes); }
    void deallocate(void* p, size_t, int dev) noexcept override {
        if (DeviceState* d = device_if_initialized(dev)) gpu::deallocate(*d, p);
    }

    void copy_to_host(void* dst, const void* src, size_t n, int dev) override {
        DeviceState& d = device(dev);
        bind(d);
        if (debug::enabled()) note_transfer(dev, dst, n, 2);
        const DriverApi& a = *driver();
        const CUstream s = current_stream(d);
        const CUdeviceptr from = CUdeviceptr(reinterpret_cast<uintptr_t>(src));
        forbid_during_capture(d, s,
                              "copying an array to the host (ember.asnumpy, item(), bool(), "
                              "printing, or an op whose result size depends on the data, such "
                              "as nonzero or x[mask])");
        if (n < staging_threshold) {
            check(a.cuMemcpyDtoHAsync(dst, from, n, s), "cuMemcpyDtoHAsync");
            check(a.cuStreamSynchronize(s), "cuStreamSynchronize (copy to host)");
            note_synced(dev);
            return;
        }
        // Two pinned buffers: the DMA engine fills one while the host drains the other.
        std::lock_guard lk(d.staging_mu);
        ensure_staging(d);
        const size_t chunks = (n + staging_bytes - 1) / staging_bytes;
        auto issue = [&](size_t c) {
            const size_t off = c * staging_bytes, len = std::min(staging_bytes, n - off);
            check(a.cuMemcpyDtoHAsync(d.staging[c % 2], from + off, len, s), "cuMemcpyDtoHAsync");
            check(a.cuEventRecord(d.staging_done[c % 2], s), "cuEventRecord");
        };
        issue(0);
        if (chunks > 1) issue(1);
        for (size_t c = 0; c < chunks; ++c) {
            check(a.cuEventSynchronize(d.staging_done[c % 2]), "copy to host");
            const size_t off = c * staging_bytes, len = std::min(staging_bytes, n - off);
            parallel_memcpy(static_cast<char*>(dst) + off, d.staging[c % 2], len);
            if (c + 2 < chunks) issue(c + 2);
        }
        note_synced(dev);
    }

    void copy_from_host(void* dst, const void* src, size_t n, int dev) override {
        DeviceState& d = device(dev);
        bind(d);
        if (debug::enabled()) note_transfer(dev, src, n, 1);
        const DriverApi& a = *driver();
        const CUstream s = current_stream(d);
        const CUdeviceptr to = CUdeviceptr(reinterpret_cast<uintptr_t>(dst));
        forbid_during_capture(d, s,
                              "copying host data to the GPU (ember.asarray of NumPy data or a "
                              "Python sequence, x.to('cuda'))");
        if (n < staging_threshold) {
            // The source may be pinned by someone else (then the copy is truly asynchronous) and
            // is the caller's to free on return: wait.
            check(a.cuMemcpyHtoDAsync(to, src, n, s), "cuMemcpyHtoDAsync");
            check(a.cuStreamSynchronize(s), "cuStreamSynchronize (copy from host)");
            return;
        }
        std::lock_guard lk(d.staging_mu);
        ensure_staging(d);
        for (size_t off = 0, c = 0; off < n; off += staging_bytes, ++c) {
            const size_t len = std::min(staging_bytes, n - off);
            check(a.cuEventSynchronize(d.staging_done[c % 2]), "copy from host");
            parallel_memcpy(d.staging[c % 2], static_cast<const char*>(src) + off, len);
            check(a.cuMemcpyHtoDAsync(to + off, d.staging[c % 2], len, s), "cuMemcpyHtoDAsync");
            check(a.cuEventRecord(d.staging_done[c % 2], s), "cuEventRecord");
        }
        // The source has been consumed; the last DMA runs on in stream order.
    }

    void synchronize(int dev) override {
        DeviceState& d = device(dev);
        bind(d);
        forbid_during_capture(d, current_stream(d), "synchronizing the stream");
        check(driver()->cuStreamSynchronize(current_stream(d)), "cuStreamSynchronize");
        note_synced(dev);
    }

    void copy(const Loop& l) override {
        if (l.numel() == 0) return;
        DeviceState& d = device(l.device);
        const DType out = l.dtype[0], in = l.dtype[1];
        if (out == in && is_contiguous(l)) {
            bind(d);
            check(driver()->cuMemcpyDtoDAsync(CUdeviceptr(uintptr_t(l.data[0])),
                                              CUdeviceptr(uintptr_t(l.data[1])),
                                              size_t(l.numel() * itemsize(out)), current_stream(d)),
                  "cuMemcpyDtoDAsync");
            after_async(d, "copy");
            return;
        }
        copy_kernel(d, l, out == in ? bits_type(out) : out, out == in ? bits_type(in) : in, false,
                    "copy");
    }

    void fill(const Loop& l) override {
        if (l.numel() == 0) return;
        DeviceState& d = device(l.device);
        const int64_t isz = itemsize(l.dtype[0]);
        const unsigned char* v = l.scalar_value[1];
        if (is_contiguous(l)) {
            // A byte pattern that repeats every 1, 2 or 4 bytes is a memset.
            bool rep4 = true, rep2 = true, rep1 = true;
            for (int64_t i = 0; i < isz; ++i) {
                rep4 = rep4 && v[i] == v[i % 4];
                rep2 = rep2 && v[i] == v[i % 2];
                rep1 = rep1 && v[i] == v[0];
            }
            const CUdeviceptr p = CUdeviceptr(uintptr_t(l.data[0]));
            const size_t bytes = size_t(l.numel() * isz);
            const CUstream s = (bind(d), current_stream(d));
            const DriverApi& a = *driver();
            if (rep1) {
                check(a.cuMemsetD8Async(p, v[0], bytes, s), "cuMemsetD8Async");
                return after_async(d, "fill");
            }
            if (rep2 && isz >= 2 && (p & 1) == 0) {
                uint16_t w;
                std::memcpy(&w, v, 2);
                check(a.cuMemsetD16Async(p, w, bytes / 2, s), "cuMemsetD16Async");
                return after_async(d, "fill");
            }
            if (rep4 && isz >= 4 && (p & 3) == 0) {
                uint32_t w;
                std::memcpy(&w, v, 4);
                check(a.cuMemsetD32Async(p, w, bytes / 4, s), "cuMemsetD32Async");
                return after_async(d, "fill");
            }
        }
        const DType t = bits_type(l.dtype[0]);
        copy_kernel(d, l, t, t, true, "fill");
    }

    void iota(const Loop& l, const Scalar& start, const Scalar& step) override {
        if (l.numel() == 0) return;
        gpu::iota(device(l.device), l, start, step);
    }

    void random(const rng::Params& p, void* out, DType t, int64_t n, int dev) override {
        if (n <= 0) return;
        gpu::random(device(dev), p, out, t, n);
    }

    void gather(void* out, const void* src, const int64_t* off, int64_t n, int isz,
                int dev) override {
        if (n <= 0) return;
        gpu::gather(device(dev), out, src, off, n, isz);
    }

    void sort(const backend::SortCall& call) override {
        DeviceState& d = device(call.device);
        gpu::sort(d, call);
        after_async(d, "sort");
    }

    void scatter_add(void* dst, const void* src, const int64_t* offsets, int64_t n, DType t,
                     int dev) override {
        if (n <= 0) return;
        DeviceState& d = device(dev);
        gpu::scatter_add(d, dst, src, offsets, n, t);
        after_async(d, "add_at");
    }

    void searchsorted(const backend::SearchCall& call) override {
        DeviceState& d = device(call.device);
        gpu::searchsorted(d, call);
        after_async(d, "searchsorted");
    }

    void scan(backend::ScanOp op, DType t, void* out, const void* in, int64_t rows, int64_t len,
              int dev) override {
        DeviceState& d = device(dev);
        if (!gpu::scan(d, op, t, out, in, rows, len))
            return Backend::scan(op, t, out, in, rows, len, dev);  // complex: the host path
        after_async(d, "cumsum");
    }

    void compact(void* out, const void* src, const uint8_t* mask, int64_t n, int64_t row, int isz,
                 int dev) override {
        DeviceState& d = device(dev);
        gpu::compact(d, out, src, mask, n, row, isz);
        after_async(d, "compress");
    }

    void scatter(void* dst, const void* src, const int64_t* off, int64_t n, int isz, int64_t lo,
                 int64_t extent, bool unique, int dev) override {
        DeviceState& d = device(dev);
        gpu::scatter(d, dst, src, off, n, isz, lo, extent, unique);
        after_async(d, "__setitem__");
    }

    void fft(const backend::FftCall& c) override {
        const bool dbl = c.dtype == DType::float64 || c.dtype == DType::complex128;
        gpu::cufft_execute(c.device, c.kind, dbl, c.n, c.batch, c.in, c.out, c.inverse);
        if (c.scale == 1.0) return;
        // cuFFT is unnormalized: one in-place scaling pass over the result's real and imaginary
        // parts, a map kernel with the factor as a scalar of the result's real dtype.
        const DType rt = dbl ? DType::float64 : DType::float32;
        const int64_t len = c.kind == FftKind::r2c ? c.n / 2 + 1 : c.n;
        Loop l;
        l.nops = 3;
        l.device = c.device;
        l.shape = Dims{c.batch * len * (c.kind == FftKind::c2r ? 1 : 2)};
        for (int k = 0; k < 3; ++k) {
            l.dtype[k] = rt;
            l.strides[k] = Dims{k == 2 ? 0 : 1};
        }
        l.data[0] = l.data[1] = static_cast<char*>(c.out);
        l.scalar[2] = true;
        const float f = float(c.scale);
        if (dbl)
            std::memcpy(l.scalar_value[2], &c.scale, sizeof c.scale);
        else
            std::memcpy(l.scalar_value[2], &f, sizeof f);
        map(ops::OpId::multiply, rt, l);
    }

    void solver(const backend::SolverCall& call) override {
        DeviceState& d = device(call.device);
        cusolver_solver(d, call);
        after_async(d, "linalg");
    }

    void optimizer_step(const backend::OptimizerStep& st) override {
        DeviceState& d = device(st.device);
        gpu::optimizer_step(d, st);
        after_async(d, "optim");
    }

    void rows(const backend::RowsCall& call) override {
        DeviceState& d = device(call.device);
        gpu::rows(d, call);
        after_async(d, "nn");
    }

    void matmul(const backend::MatmulLoop& l) override {
        DeviceState& d = device(l.device);
        const Kind kd = kind(l.dtype);
        if (kd == Kind::floating || kd == Kind::complex) {
            cublas_matmul(d, l);
            after_async(d, "matmul");
            return;
        }
        gpu::int_matmul(d, l);
    }

    static bool same_input_dtypes(const MapKernel& k, int arity) {
        int first = -1;
        for (int i = 0; i < arity; ++i) {
            if (k.scalar_mask & (1u << i)) continue;
            if (first < 0) first = i;
            if (k.in[i] != k.in[first]) return false;
        }
        return true;
    }

    void map(ops::OpId op, DType compute, const Loop& l) override {
        const int64_t n = l.numel();
        if (n == 0) return;
        DeviceState& d = device(l.device);
        const ops::OpInfo& oi = ops::info(op);
        const std::string_view who = oi.name;
        for_each_launch(l, [&](const Loop& s) {
            MapKernel k;
            k.op = op;
            k.compute = compute;
            k.out = s.dtype[0];
            bool aligned = aligned16(s.data[0]);
            for (int i = 0; i < oi.arity; ++i) {
                k.in[i] = s.dtype[i + 1];
                if (s.scalar[i + 1]) {
                    k.scalar_mask |= uint8_t(1u << i);
                } else {
                    aligned = aligned && aligned16(s.data[i + 1]);
                }
            }
            const bool contiguous = is_contiguous(s);
            k.layout = contiguous ? MapLayout::contiguous : MapLayout::strided;
            k.ndim = contiguous ? 1 : std::max(1, s.ndim());
            // A contiguous loop reaches exactly numel elements of each operand.
            k.index64 = contiguous ? s.numel() >= i32_limit : needs_index64(s);
            k.vec = contiguous && aligned ? natural_vec(k) : 1;
            const KernelKey key = map_key(k);
            CUfunction f = find_kernel(d, key);
            if (!f) {
                // Compile the layouts this op is likely to meet next alongside, in parallel, when
                // its array operands share one dtype; a mixed-dtype kernel (rarer, and there are
                // many) compiles only the layout asked for.
                std::vector<std::pair<KernelKey, KernelSource>> items;
                items.push_back({key, {map_program({&k, 1}), kernel_name(k)}});
                if (same_input_dtypes(k, oi.arity)) {
                    for (MapKernel v : layout_variants(k)) {
                        if (map_key(v) == key) continue;
                        items.push_back({map_key(v), {map_program({&v, 1}), kernel_name(v)}});
                    }
                }
                f = load_kernels(d, items);
            }
            launch_elementwise(d, f, s, k.index64, contiguous, k.vec, who);
        });
    }

    void reduce(backend::ReduceOp op, DType acc, const Loop& l) override {
        run_reduce(op, device_acc(acc), l);
    }

private:
    static constexpr size_t staging_bytes = size_t(32) << 20;
    static constexpr size_t staging_threshold = size_t(8) << 20;

    static void ensure_staging(DeviceState& d) {
        const DriverApi& a = *driver();
        for (int i = 0; i < 2; ++i) {
            if (d.staging[i]) continue;
            check(a.cuMemHostAlloc(&d.staging[i], staging_bytes, CU_MEMHOSTALLOC_PORTABLE),
                  "cuMemHostAlloc (pinned staging buffer)");
            check(a.cuEventCreate(&d.staging_done[i], CU_EVENT_DISABLE_TIMING), "cuEventCreate");
        }
    }

    static void parallel_memcpy(void* dst, const void* src, size_t n) {
        constexpr int64_t grain = int64_t(2) << 20;
        host::parallel_range(int64_t(n), grain, [&](int64_t b, int64_t e) {
            std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b,
                        size_t(e - b));
        });
    }

    static void after_async(DeviceState& d, const char* who) {
        if (!launch_blocking() || capturing_pool()) return;
        const CUresult r = driver()->cuStreamSynchronize(current_stream(d));
        if (r != CUDA_SUCCESS) raise(r, std::string("ember.") + who);
    }

    // Arguments of an elementwise kernel: out, inputs (pointers or by-value scalars), the strided
    // geometry, n.
    static void launch_elementwise(DeviceState& d, CUfunction f, const Loop& s, bool i64,
                                   bool contiguous, int vec, std::string_view who) {
        void* ptrs[backend::max_operands];
        Args a;
        for (int k = 0; k < s.nops; ++k) {
            if (s.scalar[k]) {
                a.add(const_cast<unsigned char*>(s.scalar_value[k]));
            } else {
                ptrs[k] = s.data[k];
                a.add(&ptrs[k]);
            }
        }
        StridedGeometry g;
        if (!contiguous) {
            std::memset(&g, 0, sizeof g);
            for (int dd = 0; dd < s.ndim(); ++dd) {
                g.shape[dd] = s.shape[dd];
                for (int k = 0; k < s.nops; ++k)
                    g.strides[k][dd] = s.strides[k][dd];
            }
            a.add(&g);
        }
        const int64_t n = s.numel();
        unsigned n32 = unsigned(n);
        long long n64 = n;
        a.add(i64 ? static_cast<void*>(&n64) : static_cast<void*>(&n32));
        launch(d, f, grid_for(d, (n + vec - 1) / vec), 1, a.ptrs, who, true);
    }

    static void copy_kernel(DeviceState& d, const Loop& l, DType out, DType in, bool scalar,
                            std::string_view who) {
        for_each_launch(l, [&](const Loop& s) {
            CopyKernel k;
            k.out = out;
            k.in = in;
            k.scalar = scalar;
            const bool contiguous = is_contiguous(s);
            k.layout = contiguous ? MapLayout::contiguous : MapLayout::strided;
            k.ndim = contiguous ? 1 : std::max(1, s.ndim());
            k.index64 = needs_index64(s);
            const bool aligned = aligned16(s.data[0]) && (scalar || aligned16(s.data[1]));
            k.vec = contiguous && aligned ? natural_vec(k) : 1;
            const KernelKey key = copy_key(k);
            CUfunction f = find_kernel(d, key);
            if (!f) {
                std::vector<std::pair<KernelKey, KernelSource>> items;
                items.push_back({key, {copy_program(k), copy_kernel_name(k)}});
                for (CopyKernel v : layout_variants(k)) {
                    if (copy_key(v) == key) continue;
                    items.push_back({copy_key(v), {copy_program(v), copy_kernel_name(v)}});
                }
                f = load_kernels(d, items);
            }
            launch_elementwise(d, f, s, k.index64, contiguous, k.vec, who);
        });
    }

    static KernelKey reduce_key(const ReduceKernel& k) {
        KeyBuilder kb;
        kb.put(fam_reduce, 4).put(uint64_t(k.op), 4).put(uint64_t(k.in), 4);
        kb.put(uint64_t(k.acc), 4).put(uint64_t(k.out), 4);
        kb.put(k.tpo == 1 ? 0 : k.tpo == 32 ? 1 : 2, 2).put(uint64_t(k.nk), 4);
        kb.put(uint64_t(k.nr), 4).put(uint64_t(k.vec), 5).put(k.partial_in, 1);
        kb.put(k.partial_out, 1).put(k.index64, 1);
        return kb.k;
    }

    static CUfunction reduce_fn(DeviceState& d, const ReduceKernel& k) {
        return kernel(d, reduce_key(k), [&] {
            return KernelSource{reduce_program(k), reduce_kernel_name(k)};
        });
    }

    // The first pass of a two-pass reduction, with its second pass `next` compiled alongside
    // (on a background thread) when neither is loaded yet.
    static CUfunction reduce_fn(DeviceState& d, const ReduceKernel& k, const ReduceKernel& next) {
        const KernelKey key = reduce_key(k);
        if (CUfunction f = find_kernel(d, key)) return f;
        std::vector<std::pair<KernelKey, KernelSource>> items;
        items.push_back({key, {reduce_program(k), reduce_kernel_name(k)}});
        items.push_back({reduce_key(next), {reduce_program(next), reduce_kernel_name(next)}});
        return load_kernels(d, items);
    }

    static void run_reduce(backend::ReduceOp op, DType acc, const Loop& l) {
        DeviceState& d = device(l.device);
        const bool arg = ops::info(op).index();
        const std::string who_name = arg ? "ember." + std::string(ops::info(op).name) : "reduce";
        const char* who = who_name.c_str();
        // Split the loop's dims into kept (output stride != 0) and reduced ones.
        std::vector<int> kept, red;
        int64_t M = 1, R = 1;
        for (int dd = 0; dd < l.ndim(); ++dd) {
            if (l.strides[0][dd] != 0) {
                kept.push_back(dd);
                M *= l.shape[dd];
            } else {
                red.push_back(dd);
                R *= l.shape[dd];
            }
        }
        if (M == 0) return;
        if (int(kept.size()) > max_strided_dims || int(red.size()) > max_strided_dims)
            return reduce_via_copy(op, acc, l);
        ReduceGeometry g;
        std::memset(&g, 0, sizeof g);
        int64_t in_extent = 1, out_extent = 1;
        for (size_t i = 0; i < kept.size(); ++i) {
            g.kshape[i] = l.shape[kept[i]];
            g.kin[i] = l.strides[1][kept[i]];
            g.kout[i] = l.strides[0][kept[i]];
            in_extent += (g.kshape[i] - 1) * std::abs(g.kin[i]);
            out_extent += (g.kshape[i] - 1) * std::abs(g.kout[i]);
        }
        for (size_t i = 0; i < red.size(); ++i) {
            g.rshape[i] = l.shape[red[i]];
            g.rin[i] = l.strides[1][red[i]];
            in_extent += (g.rshape[i] - 1) * std::abs(g.rin[i]);
        }
        ReduceKernel k;
        k.op = op;
        k.in = l.dtype[1];
        k.acc = acc;
        k.out = l.dtype[0];
        k.nk = int(kept.size());
        k.nr = int(red.size());
        const bool inner = !red.empty() && red[0] == 0 && R > 16;
        k.tpo = inner ? (R >= 4096 ? 256 : 32) : 1;
        const int64_t isz = itemsize(k.in);
        if (inner && k.nr == 1 && g.rin[0] == 1 && isz < 16 && aligned16(l.data[1])) {
            const int64_t V = 16 / isz;
            bool ok = R % V == 0;
            for (int i = 0; i < k.nk; ++i)
                ok = ok && g.kin[i] % V == 0;
            if (ok) k.vec = int(V);
        }
        // Segments of the reduced extent, so that small outputs still fill the GPU.
        const int64_t workers = M * k.tpo, target = int64_t(d.max_blocks) * 256;
        int64_t S = 1, chunk = std::max<int64_t>(R, 1);
        if (workers < target && R > 0) {
            const int64_t min_seg = k.tpo > 1 ? int64_t(k.tpo) * 16 : 64;
            S = std::min((target + workers - 1) / workers, (R + min_seg - 1) / min_seg);
            S = std::clamp<int64_t>(S, 1, 65535);
            chunk = (R + S - 1) / S;
            chunk = (chunk + k.vec - 1) / k.vec * k.vec;
            S = (R + chunk - 1) / chunk;
        }
        k.index64 = M >= i32_limit || R >= i32_limit || in_extent >= i32_limit ||
                    out_extent >= i32_limit || S * M >= i32_limit;
        const int64_t per_block = 256 / k.tpo;
        const int64_t gx = (M + per_block - 1) / per_block;
        if (gx >= i32_limit) throw ValueError("ember." + std::string(who) + ": too many outputs");
        void* out = l.data[0];
        void* in = l.data[1];
        unsigned m32 = unsigned(M), r32 = unsigned(R), c32 = unsigned(chunk);
        long long m64 = M, r64 = R, c64 = chunk;
        auto idx = [&](unsigned& a, long long& b) -> void* {
            return k.index64 ? static_cast<void*>(&b) : static_cast<void*>(&a);
        };
        if (S == 1) {
            void* args[] = {&out, &in, &g, idx(m32, m64), idx(r32, r64), idx(c32, c64)};
            launch(d, reduce_fn(d, k), unsigned(gx), 1, args, who);
            return;
        }
        // Two passes: S partial accumulators per output, combined in segment order.
        const size_t acc_bytes = arg ? 32 : size_t(itemsize(acc));
        void* partial = gpu::allocate(d, size_t(S * M) * acc_bytes);
        struct Free {
            DeviceState& d;
            void* p;
            ~Free() { gpu::deallocate(d, p); }
        } guard{d, partial};
        k.partial_out = true;
        ReduceKernel f = k;
        f.partial_out = false;
        f.partial_in = true;
        f.vec = 1;
        f.nr = 1;
        f.tpo = S >= 1024 ? 256 : S >= 64 && M < target / 32 ? 32 : 1;
        {
            void* args[] = {&partial, &in, &g, idx(m32, m64), idx(r32, r64), idx(c32, c64)};
            launch(d, reduce_fn(d, k, f), unsigned(gx), unsigned(S), args, who);
        }
        ReduceGeometry g2 = g;
        int64_t stride = 1;
        for (int i = 0; i < k.nk; ++i) {
            g2.kin[i] = stride;
            stride *= g.kshape[i];
        }
        std::memset(g2.rshape, 0, sizeof g2.rshape);
        std::memset(g2.rin, 0, sizeof g2.rin);
        g2.rshape[0] = S;
        g2.rin[0] = M;
        unsigned s32 = unsigned(S);
        long long s64 = S;
        const int64_t per2 = 256 / f.tpo;
        void* args[] = {&out, &partial, &g2, idx(m32, m64), idx(s32, s64), idx(s32, s64)};
        launch(d, reduce_fn(d, f), unsigned((M + per2 - 1) / per2), 1, args, who);
    }

    // Reductions over more than max_strided_dims kept or reduced dims: copy the input into a
    // buffer with the reduced dims innermost (one contiguous reduced run), then reduce that, with
    // kept dims merged where the output allows.
    static void reduce_via_copy(backend::ReduceOp op, DType acc, const Loop& l) {
        DeviceState& d = device(l.device);
        const DType t = l.dtype[1];
        std::vector<int> order;  // new dim order, innermost first: reduced, then kept
        for (int dd = 0; dd < l.ndim(); ++dd)
            if (l.strides[0][dd] == 0) order.push_back(dd);
        const size_t nred = order.size();
        for (int dd = 0; dd < l.ndim(); ++dd)
            if (l.strides[0][dd] != 0) order.push_back(dd);
        void* buf = gpu::allocate(d, size_t(l.numel() * itemsize(t)));
        struct Free {
            DeviceState& d;
            void* p;
            ~Free() { gpu::deallocate(d, p); }
        } guard{d, buf};
        // Copy loop: output = contiguous buffer in `order`, input = the original operand.
        Loop c;
        c.nops = 2;
        c.device = l.device;
        c.dtype[0] = c.dtype[1] = t;
        c.data[0] = static_cast<char*>(buf);
        c.data[1] = l.data[1];
        int64_t stride = 1;
        Dims bstride(size_t(l.ndim()), 0);
        for (int dd : order) {
            bstride[size_t(dd)] = stride;
            stride *= l.shape[dd];
        }
        for (int dd = 0; dd < l.ndim(); ++dd) {
            c.shape.push_back(l.shape[dd]);
            c.strides[0].push_back(bstride[size_t(dd)]);
            c.strides[1].push_back(l.strides[1][dd]);
        }
        copy_kernel(d, c, bits_type(t), bits_type(t), false, "reduce");
        // Reduction over the buffer: one reduced dim (all reduced extents) innermost, and the
        // kept dims with their output strides.
        Loop r;
        r.nops = 2;
        r.device = l.device;
        r.dtype[0] = l.dtype[0];
        r.dtype[1] = t;
        r.data[0] = l.data[0];
        r.data[1] = static_cast<char*>(buf);
        int64_t red = 1;
        for (size_t i = 0; i < nred; ++i)
            red *= l.shape[order[i]];
        r.shape.push_back(red);
        r.strides[0].push_back(0);
        r.strides[1].push_back(1);
        int64_t bs = red;
        for (size_t i = nred; i < order.size(); ++i) {
            const int dd = order[i];
            const int64_t os = l.strides[0][dd];
            // Merge with the previous kept dim when the output is contiguous across them.
            if (r.shape.size() > 1 && os == r.strides[0].back() * r.shape.back() &&
                bs == r.strides[1].back() * r.shape.back()) {
                r.shape.back() *= l.shape[dd];
            } else {
                r.shape.push_back(l.shape[dd]);
                r.strides[0].push_back(os);
                r.strides[1].push_back(bs);
            }
            bs *= l.shape[dd];
        }
        if (int(r.shape.size()) - 1 > max_strided_dims)
            throw ValueError("ember: reductions keep at most " + std::to_string(max_strided_dims) +
                             " non-mergeable output dims on CUDA");
        run_reduce(op, acc, r);
    }
};

}  // namespace
}  // namespace ember::gpu

namespace ember::backend {

namespace {
struct CudaAvailability {
    Backend* backend = nullptr;
    std::string reason;
    CudaAvailability() {
        if (!gpu::driver()) {
            reason = gpu::driver_unavailable_reason();
            return;
        }
        if (gpu::device_count() == 0) {
            reason = "the CUDA driver reports no devices";
            return;
        }
        // NVRTC is not asked for here: it loads on the first kernel that is neither shipped nor
        // cached (that kernel's call names it when it is missing), so a process that only runs
        // shipped kernels never loads it.
        if (const char* e = std::getenv("EMBER_DISABLE_CUDA"); e && *e && std::strcmp(e, "0")) {
            reason = "disabled by EMBER_DISABLE_CUDA";
            return;
        }
        backend = new gpu::CudaBackend;  // lives for the process
    }
};
const CudaAvailability& availability() {
    static const CudaAvailability a;
    return a;
}
}  // namespace

Backend* cuda() { return availability().backend; }
const std::string& cuda_unavailable_reason() { return availability().reason; }
int cuda_device_count() { return cuda() ? gpu::device_count() : 0; }

}  // namespace ember::backend
