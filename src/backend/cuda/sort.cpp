// The GPU sort family: an LSD radix sort of order-preserving key bits (the CPU backend's mapping,
// src/backend/cpu/sort.cpp), 8 bits per pass, onesweep style, and binary searches. One kernel
// counts every pass's digits first (key passes from the keys, row passes from the row count).
// Then each pass is one launch: a block takes the next tile (a counter hands them out in order),
// ranks its keys within their digit with warp ballots, publishes its digit counts, reads the
// counts of the tiles before it (decoupled look-back: it stops at the first tile that has
// published its inclusive prefix), reorders the tile in shared memory by digit and writes each
// digit's run with consecutive threads (coalesced). Rows are sorted together: the key passes
// first, then stable passes on the row number (carried as the global position). Short rows
// (n <= 8192, many rows or one small one) skip all that: one block sorts each row through every
// pass in a single launch.
#include "backend/cuda/sort.hpp"

#include <string>

#include "backend/cuda/codegen.hpp"

#include "ember/error.hpp"
#include "ember_device_text.hpp"

namespace ember::gpu {
namespace {

// Keys per thread of a pass's tile: the scatter's shared buffer holds a tile of keys or of int64
// positions, TILE * max(sizeof(K), 8) = 32 KB.
int items_per_thread(DType t) { return itemsize(t) > 8 ? 8 : 16; }
int64_t tile_of(DType t) { return 256 * int64_t(items_per_thread(t)); }
constexpr int64_t short_row = 8192;    // rows up to this long: one block per row
constexpr int64_t short_count = 4096;  // or one row up to this long

struct KeyText {
    const char* storage;  // a plain type of the key's size, moved as bits
    std::string code;
};

KeyText key_text(DType t) {
    switch (itemsize(t)) {
        case 1:
            return {"unsigned char", std::string(name(t))};
        case 2:
            return {"unsigned short", std::string(name(t))};
        case 4:
            return {"unsigned int", std::string(name(t))};
        case 8:
            return {"unsigned long long", std::string(name(t))};
        default:
            return {"ember_u128", std::string(name(t))};
    }
}

// Device code mapping a key to order-preserving unsigned bits: key_byte(v, pass) (the digit of
// pass `pass`, least significant first), key_passes, and key_less(a, b).
std::string key_functions(DType t) {
    std::string s;
    // Branch-free: negative values flip every bit, others only the sign; then -0.0 joins +0.0
    // and every NaN goes last (selects, no divergence in the counting and scatter kernels).
    s += "template <class U>\n"
         "__device__ __forceinline__ U map_float_bits(U u, U inf_bits) {\n"
         "    const U sign = U(U(1) << (sizeof(U) * 8 - 1));\n"
         "    const U mag = U(u & U(~sign));\n"
         "    const U flip = U(U(U(0) - U(u >> (sizeof(U) * 8 - 1))) | sign);\n"
         "    const U m = mag == 0 ? sign : U(u ^ flip);\n"
         "    return mag > inf_bits ? U(~U(0)) : m;\n"
         "}\n";
    // mapped(v): the order-preserving bits of a real key, as wide as the key (narrower shifts
    // than 64-bit ones in every pass's digit).
    auto real_map = [&](const std::string& fn, const std::string& arg, DType r) {
        const bool b = r == DType::bool_;
        const char* u = b || itemsize(r) == 1 ? "unsigned char"
                        : itemsize(r) == 2    ? "unsigned short"
                        : itemsize(r) == 4    ? "unsigned int"
                                              : "unsigned long long";
        std::string body;
        switch (r) {
            case DType::bool_:
                body = "return " + arg + " != 0;";
                break;
            case DType::float16:
                body = "return map_float_bits<unsigned short>(" + arg + ", 0x7c00u);";
                break;
            case DType::bfloat16:
                body = "return map_float_bits<unsigned short>(" + arg + ", 0x7f80u);";
                break;
            case DType::float32:
                body = "return map_float_bits<unsigned int>(" + arg + ", 0x7f800000u);";
                break;
            case DType::float64:
                body = "return map_float_bits<unsigned long long>(" + arg +
                       ", 0x7ff0000000000000ull);";
                break;
            default:
                if (kind(r) == Kind::signed_int)
                    body = "return (" + std::string(u) + ")(" + arg + " ^ ((" + u + ")1 << " +
                           std::to_string(itemsize(r) * 8 - 1) + "));";
                else
                    body = "return " + arg + ";";
        }
        return "__device__ __forceinline__ " + std::string(u) + " " + fn + " {\n    " + body +
               "\n}\n";
    };
    if (!is_complex(t)) {
        const int bytes = t == DType::bool_ ? 1 : int(itemsize(t));
        const char* u = itemsize(t) == 1   ? "unsigned char"
                        : itemsize(t) == 2 ? "unsigned short"
                        : itemsize(t) == 4 ? "unsigned int"
                                           : "unsigned long long";
        s += real_map(std::string("mapped(") + u + " v)", "v", t);
        s += "constexpr int key_passes = " + std::to_string(bytes) + ";\n";
        s += "__device__ __forceinline__ unsigned key_byte(K v, int pass) {\n"
             "    return unsigned(mapped(v) >> (8 * pass)) & 255u;\n"
             "}\n"
             "__device__ __forceinline__ bool key_less(K a, K b) { return mapped(a) < mapped(b); "
             "}\n";
        return s;
    }
    // Complex: NumPy's NaN classes, then the real part, then the imaginary part; the LSD passes
    // take the imaginary bytes, the real bytes, then the class.
    const bool c64 = t == DType::complex64;
    const DType r = c64 ? DType::float32 : DType::float64;
    const int w = int(itemsize(r));
    if (c64) {
        s += "__device__ __forceinline__ unsigned re_bits(K v) { return unsigned(v); }\n"
             "__device__ __forceinline__ unsigned im_bits(K v) { return unsigned(v >> 32); }\n";
        s += real_map("mapped(unsigned v)", "v", r);
        s += "__device__ __forceinline__ bool is_nan_bits(unsigned u) {\n"
             "    return (u & 0x7fffffffu) > 0x7f800000u;\n}\n";
    } else {
        s += "__device__ __forceinline__ unsigned long long re_bits(K v) { return v.a; }\n"
             "__device__ __forceinline__ unsigned long long im_bits(K v) { return v.b; }\n";
        s += real_map("mapped(unsigned long long v)", "v", r);
        s += "__device__ __forceinline__ bool is_nan_bits(unsigned long long u) {\n"
             "    return (u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;\n}\n";
    }
    s += "__device__ __forceinline__ unsigned key_class(K v) {\n"
         "    return (is_nan_bits(re_bits(v)) ? 2u : 0u) + (is_nan_bits(im_bits(v)) ? 1u : 0u);\n"
         "}\n";
    s += "constexpr int key_passes = " + std::to_string(2 * w + 1) + ";\n";
    s += "__device__ __forceinline__ unsigned key_byte(K v, int pass) {\n"
         "    if (pass < " +
         std::to_string(w) +
         ") return unsigned(mapped(im_bits(v)) >> (8 * pass)) & 255u;\n"
         "    if (pass < " +
         std::to_string(2 * w) + ") return unsigned(mapped(re_bits(v)) >> (8 * (pass - " +
         std::to_string(w) +
         "))) & 255u;\n"
         "    return key_class(v);\n"
         "}\n";
    s += "__device__ __forceinline__ bool key_less(K a, K b) {\n"
         "    const unsigned ca = key_class(a), cb = key_class(b);\n"
         "    if (ca != cb) return ca < cb;\n"
         "    const unsigned long long ra = mapped(re_bits(a)), rb = mapped(re_bits(b));\n"
         "    if (ra != rb) return ra < rb;\n"
         "    return mapped(im_bits(a)) < mapped(im_bits(b));\n"
         "}\n";
    return s;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
        s.replace(p, from.size(), to);
    return s;
}

int key_passes(DType t) {
    if (t == DType::bool_) return 1;
    if (is_complex(t)) return int(itemsize(t)) + 1;
    return int(itemsize(t));
}

constexpr uint64_t key_tag = 0x736f7274ull;  // "sort": the high word of every key of this family

CUfunction sort_kernel(DeviceState& d, DType t, int which, const char* kernel_name) {
    // Family 15 in the low 4 bits (unused by cuda_backend.cpp's families).
    const KernelKey key{0xfull | (uint64_t(t) << 4) | (uint64_t(which) << 12), key_tag};
    return kernel(d, key, [&] {
        return KernelSource{sort_program(t), sort_kernel_name(t, kernel_name)};
    });
}

// Scratch memory from the device pool, returned on the stream when the sort is done.
struct Scratch {
    DeviceState& d;
    void* p = nullptr;
    Scratch(DeviceState& dev, size_t bytes) : d(dev), p(bytes ? allocate(dev, bytes) : nullptr) {}
    ~Scratch() {
        if (p) deallocate(d, p);
    }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
};

}  // namespace

std::string sort_kernel_name(DType t, const char* kernel) {
    return std::string("ember_sort_") + key_text(t).code + "_" + kernel;
}

Program sort_program(DType t) {
    const KeyText kt = key_text(t);
    const std::string prefix = std::string("ember_sort_") + kt.code;
    Program p;
    p.name = prefix + ".cu";
    p.source =
        "// Generated by ember (src/backend/cuda/sort.cpp): radix sort and binary search of " +
        std::string(name(t)) + " keys.\n";
    p.source += "struct __align__(16) ember_u128 { unsigned long long a, b; };\n";
    p.source += std::string("typedef ") + kt.storage + " K;\n";
    p.source += key_functions(t);
    // sort.cuh's text from its first newline on: the kernels, without the line that names the file.
    const std::string_view kernels = generated::sort_cuh;
    std::string body =
        replace_all(std::string(kernels.substr(kernels.find('\n'))), "NAME_", prefix + "_");
    p.source += replace_all(body, "@ITEMS@", std::to_string(items_per_thread(t)));
    return p;
}

void sort(DeviceState& d, const backend::SortCall& c) {
    const int64_t count = c.rows * c.n;
    if (count <= 0) return;
    const size_t isz = size_t(itemsize(c.dtype));
    const int kp = key_passes(c.dtype);
    // Short rows (many of them, or one that fits a tile): one block per row, one launch.
    if (c.n <= short_row && (c.rows >= 64 || count <= short_count) && c.rows < (int64_t(1) << 31)) {
        const size_t kbytes = size_t(count) * isz, ibytes = size_t(count) * sizeof(int64_t);
        Scratch kfinal(d, c.sorted ? 0 : kbytes), kother(d, kp > 1 ? kbytes : 0);
        Scratch iother(d, c.indices && kp > 1 ? ibytes : 0);
        CUfunction f = sort_kernel(d, c.dtype, 6, "rows");
        const void* kin = c.keys;
        void* ka = c.sorted ? c.sorted : kfinal.p;
        void* kb = kother.p;
        void* ia = c.indices;
        void* ib = iother.p;
        long long n = c.n;
        int desc = c.descending ? 1 : 0;
        void* args[] = {&kin, &ka, &kb, &ia, &ib, &n, &desc};
        launch(d, f, unsigned(c.rows), 1, args, "sort");
        return;
    }
    const int64_t tile = tile_of(c.dtype);
    const int64_t tiles = (count + tile - 1) / tile;
    if (tiles >= (int64_t(1) << 31))
        throw ValueError("ember.sort: too many elements for the GPU sort (" +
                         std::to_string(count) + ")");
    int row_passes = 0;
    for (int64_t r = c.rows - 1; r > 0; r >>= 8)
        ++row_passes;
    const int passes = kp + row_passes;
    const bool carry_idx = c.indices || row_passes > 0;

    CUfunction fc = sort_kernel(d, c.dtype, 0, "counts");
    CUfunction fx = sort_kernel(d, c.dtype, 2, "scatter");
    CUfunction fxr = row_passes > 0 ? sort_kernel(d, c.dtype, 7, "scatter_rows") : nullptr;

    // Pass p writes buffer A when passes - 1 - p is even, so the last pass writes the outputs.
    const size_t kbytes = size_t(count) * isz, ibytes = size_t(count) * sizeof(int64_t);
    Scratch kfinal(d, c.sorted ? 0 : kbytes), kother(d, passes > 1 ? kbytes : 0);
    Scratch ifinal(d, carry_idx && !c.indices ? ibytes : 0);
    Scratch iother(d, carry_idx && passes > 1 ? ibytes : 0);
    // One zeroed block: the look-back words (tiles x 256, shared by the passes through their
    // epochs), each pass's digit counts and each pass's tile counter.
    const size_t status_words = size_t(tiles) * 256, count_words = size_t(passes) * 256;
    const size_t meta_bytes = (status_words + count_words) * 8 + size_t(passes) * 4;
    Scratch meta(d, (meta_bytes + 7) / 8 * 8);
    check(api().cuMemsetD32Async(CUdeviceptr(reinterpret_cast<uintptr_t>(meta.p)), 0,
                                 (meta_bytes + 7) / 8 * 2, current_stream(d)),
          "cuMemsetD32Async");
    unsigned long long* status = static_cast<unsigned long long*>(meta.p);
    unsigned long long* counts = status + status_words;
    unsigned* next_tile = reinterpret_cast<unsigned*>(counts + count_words);
    void* ka = c.sorted ? c.sorted : kfinal.p;
    void* kb = kother.p;
    void* ia = carry_idx ? (c.indices ? static_cast<void*>(c.indices) : ifinal.p) : nullptr;
    void* ib = carry_idx ? iother.p : nullptr;

    const void* kin = c.keys;
    const void* iin = nullptr;
    long long cnt = count, n = c.n;
    int np = passes, desc = c.descending ? 1 : 0;
    {
        void* args[] = {&kin, &cnt, &n, &np, &desc, &counts};
        launch(d, fc, grid_for(d, tiles * 256), 1, args, "sort");
    }
    for (int p = 0; p < passes; ++p) {
        void* kout = (passes - 1 - p) % 2 == 0 ? ka : kb;
        void* iout = (passes - 1 - p) % 2 == 0 ? ia : ib;
        int pass = p;
        unsigned long long* pc = counts + size_t(p) * 256;
        unsigned* pt = next_tile + p;
        void* args[] = {&kin, &kout, &iin, &iout, &cnt, &n, &pass, &desc, &pc, &status, &pt};
        launch(d, p < kp ? fx : fxr, unsigned(tiles), 1, args, "sort");
        kin = kout;
        iin = iout;
    }
    if (c.indices && c.rows > 1) {
        CUfunction fr = sort_kernel(d, c.dtype, 3, "rowpos");
        void* ip = c.indices;
        void* args[] = {&ip, &cnt, &n};
        launch(d, fr, grid_for(d, count), 1, args, "sort");
    }
}

void searchsorted(DeviceState& d, const backend::SearchCall& c) {
    if (c.m <= 0) return;
    CUfunction f = sort_kernel(d, c.dtype, 4, "search");
    const void* keys = c.keys;
    const void* values = c.values;
    void* out = c.out;
    long long n = c.n, m = c.m;
    int right = c.right ? 1 : 0;
    void* args[] = {&keys, &n, &values, &m, &right, &out};
    launch(d, f, grid_for(d, c.m), 1, args, "searchsorted");
}

// ---- deterministic scatter-add ---------------------------------------------------------------

namespace {

std::string scatter_add_kernel_name(DType t) {
    return std::string("ember_scatter_add_") + std::string(name(t));
}

}  // namespace

Program scatter_add_program(DType t) {
    const std::string nm = scatter_add_kernel_name(t);
    Program p;
    p.name = nm + ".cu";
    p.source = "// Generated by ember (src/backend/cuda/sort.cpp): scatter-add of " +
               std::string(name(t)) + " values over offsets sorted stably.\n";
    if (is_complex(t)) p.source += "#define EMBER_DEVICE_COMPLEX 1\n";
    p.source +=
        "#include \"ember/device_prelude.cuh\"\n"
        "#include \"ember/ops/scalar.hpp\"\n\n";
    p.source += "typedef " + std::string(plain_type(t)) + " T;\n";
    std::string add;
    if (t == DType::bool_)
        add = "acc = acc || v;";
    else if (t == DType::float16 || t == DType::bfloat16)
        add = "acc = convert<T>(convert<float>(acc) + convert<float>(v));";
    else if (kind(t) == Kind::floating || kind(t) == Kind::complex)
        add = "acc = acc + v;";
    else
        add = "acc = T(acc + v);";
    p.source +=
        "// The thread of the first of each run of equal sorted offsets adds the run's values to\n"
        "// its destination one after another, in input order (the sort was stable): the same "
        "sums\n"
        "// as the CPU's sequential loop, bit for bit.\n"
        "extern \"C\" __global__ void " +
        nm +
        "(T* dst, const T* __restrict__ src,\n"
        "    const long long* __restrict__ sorted, const long long* __restrict__ perm, long long "
        "n) "
        "{\n"
        "    using namespace ember::dev;\n"
        "    const long long step = (long long)gridDim.x * blockDim.x;\n"
        "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += "
        "step) "
        "{\n"
        "        const long long o = sorted[i];\n"
        "        if (i > 0 && sorted[i - 1] == o) continue;\n"
        "        T acc = dst[o];\n"
        "        for (long long j = i; j < n && sorted[j] == o; ++j) {\n"
        "            const T v = src[perm[j]];\n"
        "            " +
        add +
        "\n"
        "        }\n"
        "        dst[o] = acc;\n"
        "    }\n"
        "}\n";
    p.headers = {{"ember/device_prelude.cuh", std::string(device_prelude_text())},
                 {"ember/ops/scalar.hpp", std::string(scalar_header_text())}};
    return p;
}

void scatter_add(DeviceState& d, void* dst, const void* src, const int64_t* offsets, int64_t n,
                 DType t) {
    if (n <= 0) return;
    Scratch so(d, size_t(n) * 8), perm(d, size_t(n) * 8);
    backend::SortCall c;
    c.device = d.index;
    c.dtype = DType::int64;
    c.rows = 1;
    c.n = n;
    c.keys = offsets;
    c.sorted = so.p;
    c.indices = static_cast<int64_t*>(perm.p);
    sort(d, c);
    const KernelKey key{0xfull | (uint64_t(t) << 4) | (uint64_t(5) << 12), key_tag};
    CUfunction f = kernel(d, key, [&] {
        return KernelSource{scatter_add_program(t), scatter_add_kernel_name(t)};
    });
    void* dp = dst;
    const void* sp = src;
    void* op = so.p;
    void* pp = perm.p;
    long long count = n;
    void* args[] = {&dp, &sp, &op, &pp, &count};
    launch(d, f, grid_for(d, n), 1, args, "add_at");
}

}  // namespace ember::gpu
